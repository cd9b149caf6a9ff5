"""The Heads view in a real browser, with the grammar model en-zh: the head table over the
held-out sentences (its time printed, never asserted), a row opening that head in its own
view, switching off the top cross-attention head of the last layer, rollout and flow, and
the alignment error rates against the grammar's gold links.

Expected values come from the model (``model.analysis.headstats``,
``generate(heads_off=...)``), never from a run.
"""

from __future__ import annotations

import time

from shipped import model_of

from model.analysis.alignment import head_aer
from model.analysis.headstats import head_stats_over, rank_heads
from model.core.heldout import HELDOUT_SIZE, heldout_pairs
from testkit.harness import chart
from viz.convention import head_number, layer_number

MODEL = "en-zh"
SENTENCE = "why do we work ?"


def _scope_radio(app, label: str):
    return app.panel().get_by_text(label, exact=True)


def test_heads_view_ranks_switches_off_rolls_out_and_aligns(app):
    m = model_of(MODEL)
    app.select("Model", MODEL, stepOf="Step 1 of ")
    assert app.page.get_by_role("textbox", name="English sentence").input_value() == SENTENCE
    snap = app.open_view("Heads", panelMin=3)
    titles = [c["title"] for c in snap["charts"]]
    assert any(t.startswith("Encoder: attention rollout") for t in titles), titles
    assert any(t.startswith("Encoder: attention flow") for t in titles), titles
    assert any(t.startswith("AER of every cross-attention head, this sentence")
               for t in titles), titles

    # The table over the held-out sentences: cross-attention heads ranked by confidence.
    start = time.monotonic()
    app.act(_scope_radio(app, f"{HELDOUT_SIZE} held-out sentences").click, panelMin=3)
    print(f"head table over {HELDOUT_SIZE} held-out sentences: "
          f"{time.monotonic() - start:.1f} s after the click")
    app.select("Attention", "Cross-attention", in_tab=True, panelMin=3)
    app.select("Statistic", "confidence", in_tab=True, panelMin=3)
    traces = [m.generate(src) for src, _ in heldout_pairs(m.card, HELDOUT_SIZE)]
    ranking = rank_heads(head_stats_over(traces, m.info.eos_token)["cross"], "confidence")
    grid = app.panel().locator("[data-testid='stDataFrame']")
    grid.wait_for()
    app.screenshot("heads-statistics")

    # Switch off the top cross-attention head of the last layer: decoded again, compared.
    last = m.config.num_decoder_layers - 1
    top = next(head for layer, head, _ in ranking if layer == last)
    label = f"Cross-attention · layer {layer_number(last)} · head {head_number(top)}"
    box = app.page.get_by_role("combobox", name="Heads to switch off", exact=True)

    def pick():  # the list is long (and virtualised): type to filter it, as a user would
        box.click()
        box.fill(label)
        app.page.get_by_role("option", name=label, exact=True).click()
        box.press("Escape")  # the list stays open after a pick and hides the page

    snap = app.act(pick, panelMin=4, titles=["Probability of each token of the original"])
    ablated = m.generate(SENTENCE, heads_off=[("cross", last, top)])
    panel = app.panel().inner_text()
    assert ablated.output_text in panel and m.generate(SENTENCE).output_text in panel
    change = chart(snap, "Probability of each token of the original")
    assert change["x"] == list(m.generate(SENTENCE).tgt_tokens[1:])
    app.screenshot("heads-switched-off")

    # Alignment error rates over the held-out grammar sentences: the best head per layer.
    snap = app.click_button(f"Compute alignment error rates over {HELDOUT_SIZE} held-out "
                            "grammar sentences", panelMin=5,
                            titles=["AER of every cross-attention head over"])
    result = head_aer(m, [src for src, _ in heldout_pairs(m.card, HELDOUT_SIZE)])
    text = app.panel().inner_text()
    best = result.best_heads[-1]
    assert (f"layer {layer_number(last)}: head {head_number(best)} "
            f"(AER {result.aer[last, best]:.2f})") in text
    app.screenshot("heads-alignment")
    # A row of the table opens its head in the head's own view (the top cross head here).
    layer, head, _ = ranking[0]
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    app.act(lambda: app.page.mouse.click(box["x"] + 18, box["y"] + 35 + 17),
            tab="Cross-attention",
            titles=[f"Cross-attention, layer {layer_number(layer)}, head {head_number(head)}"])
