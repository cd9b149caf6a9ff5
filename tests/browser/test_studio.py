"""The decoding studio in a real browser: play "why do we work ?" to the end, branch at
step 2 with another token, compare with a reference translation, switch to beam search and
see the beams. Assertions are about what the page shows, not about timing."""

from __future__ import annotations

from testkit.harness import chart

REFERENCE = "我们为什么学习？"


def test_play_branch_reference_and_beams(app):
    page = app.page
    snap = app.snapshot()
    total = int(snap["step"].split()[-1])
    assert snap["step"] == f"Step 1 of {total}" and total >= 3

    # Play runs the step-through fragment on a timer until the last step, then stops.
    page.locator(".st-key-play button").click()
    snap = app.wait_ready(None, step=f"Step {total} of {total}")
    page.wait_for_function(
        "() => document.querySelector('.st-key-play button').innerText.includes('Play')")
    for _ in range(100):  # the last tick's slider and step panel may land just after the label
        snap = app.wait_ready(None, step=f"Step {total} of {total}")
        if snap["slider"]["value"] == total and len(snap["decoderInput"]) == total:
            break
        page.wait_for_timeout(100)
    assert snap["slider"]["value"] == total and len(snap["decoderInput"]) == total, (
        snap["slider"], snap["decoderInput"])

    # Branch at step 2: another top candidate, then decoding continues from it.
    app.slider_key("Home", step=f"Step 1 of {total}")
    snap = app.slider_key("ArrowRight", step=f"Step 2 of {total}")
    chosen = snap["decoderInput"]  # <s> and the first token
    page.get_by_text("Branch at step 2", exact=False).first.click()
    alternative = "他"  # any target token can be typed instead of picking a candidate
    typed = page.get_by_role("textbox", name="…or type any target token", exact=True)
    typed.fill(alternative)
    app.act(lambda: typed.press("Enter"))
    snap = app.click_button("Continue from here", titles=["Probability of each token"])
    for _ in range(100):  # Plotly draws the ticks just after the run ends
        branch_charts = [c for c in app.snapshot()["charts"]
                         if c["title"].startswith("Probability of each")]
        if len(branch_charts) == 2 and len(branch_charts[1]["x"]) >= 2:
            break
        page.wait_for_timeout(100)
    assert len(branch_charts) == 2, [c["title"] for c in snap["charts"]]
    assert branch_charts[1]["x"][:2] == [chosen[1], alternative], branch_charts[1]["x"]

    # A reference translation under teacher forcing: the first difference is named.
    ref = page.get_by_role("textbox", name="Reference translation (Chinese)", exact=True)
    ref.fill(REFERENCE)
    snap = app.act(lambda: ref.press("Enter"), alert="First difference")
    assert any("学" in a["text"] and "工" in a["text"] for a in snap["alerts"]), snap["alerts"]

    # Beam search: the tree of candidates and the n-best list.
    sidebar = page.locator("[data-testid='stSidebar']")
    snap = app.act(lambda: sidebar.get_by_text("Beam search", exact=True).click(),
                   titles=["Candidates at each step"])
    tree = chart(snap, "Candidates at each step")
    assert tree["drawn"]
    picker = page.get_by_role("combobox", name="Show the maps of hypothesis", exact=True)
    assert picker.is_visible() and picker.input_value().startswith("1. ")
    app.screenshot("studio-beam-search")
