"""The app in a real browser: a user's whole walkthrough, the model picker and hostile input.

Assertions hold for any trained or untrained model: they check which tokens the charts'
axes show (the sentence's source tokens, the decoder input the step panel shows), that the
Chinese characters really draw, how many charts are drawn, and that no error is shown;
never what the translation is.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from testkit.harness import CJK, GLYPH_JS, INJECTION_JS, ROOT, chart
from tests.hostile_inputs import GOOD, HOSTILE_INPUTS, for_model
from viz.convention import head_number, layer_number

SENTENCE = "i go to school tomorrow ."
SOURCE = ["i", "go", "to", "school", "tomorrow", ".", "</s>"]
PADS = ["<pad>", "<pad>"]  # the Masks tab pads both sides with 2 by default
PE = "Positional encoding added to the source sentence"
ATTENTION_TABS = ("Encoder self-attention", "Decoder self-attention", "Cross-attention")
#: Charts each tab must draw (title prefixes) inside its panel; an attention tab draws
#: exactly one figure, another tab at least these. A tab not listed here (a new one) must
#: draw at least one chart.
TAB_CHARTS = {
    "Positional encoding": [PE, "Positional encoding by dimension"],
    "Masks": ["Source padding mask (key_padding_mask)", "Encoder self-attention mask",
              "Cross-attention (memory) mask", "Look-ahead mask", "Decoder mask = padding"],
    **{tab: [f"{tab}, layer 1, all heads"] for tab in ATTENTION_TABS},
}
#: The view a first visit opens (``ui.i18n.DEFAULT_VIEW``) and its chart.
FIRST_TAB = "Cross-attention"
FIRST = TAB_CHARTS[FIRST_TAB][0]


def tab_ready(tab: str) -> dict:
    """``READY_JS`` expectations for tab ``tab`` with its default pickers."""
    titles = TAB_CHARTS.get(tab, [])
    if tab in ATTENTION_TABS:
        return {"tab": tab, "titles": titles, "panelCharts": 1}
    return {"tab": tab, "titles": titles, "panelMin": max(len(titles), 1)}


def models_root() -> Path:
    """Where the app looks for models: ``$ATTENTION_PRETRAINED_DIR`` if set, else
    ``pretrained/``."""
    return Path(os.environ.get("ATTENTION_PRETRAINED_DIR", "").strip() or ROOT / "pretrained")


def model_folders() -> list[str]:
    """What the Model picker must offer: the folders in the models' root, sorted, hidden
    ones excluded."""
    root = models_root()
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def model_config(name: str) -> dict:
    """Model ``name``'s ``config.json`` (layers, heads, d_model)."""
    return json.loads((models_root() / name / "config.json").read_text(encoding="utf-8"))


def reads_english(name: str) -> bool:
    """Whether encoder-decoder ``name`` reads English (its card's ``languages``, en -> zh when
    it names none): the English sentence below is its kind of input; a Chinese -> English
    model is walked through by tests/test_directions.py and tests/browser/test_pinyin_source.py,
    a decoder-only model (its own views) by tests/browser/test_one_stack_page.py."""
    card = json.loads((models_root() / name / "card.json").read_text(encoding="utf-8"))
    one_stack = model_config(name).get("architecture") == "decoder-only"
    return (card.get("languages") or ["en"])[0] == "en" and not one_stack


def test_glyph_and_injection_checks_catch_what_they_look_for(browser):
    """The checks used below are not vacuous: a character no installed font has draws as the
    missing-glyph box, and live markup planted in a page is reported."""
    page = browser.new_page()
    try:
        font = "40px 'Noto Sans SC', Arial, sans-serif"
        assert not page.evaluate(GLYPH_JS, ["我", font])["isTofu"]
        assert page.evaluate(GLYPH_JS, ["\U0003134f", font])["isTofu"]  # CJK ext. G
        page.set_content(
            "<div data-testid='stMarkdownContainer'><strong>why</strong>"
            "<a href='javascript:alert(1)'>click</a><span class='katex'>x</span>"
            "<img src='x'><span class='stMarkdownColoredText'>we</span></div>"
        )
        found = " ".join(page.evaluate(INJECTION_JS))
        for kind in ("emphasis", "link", "katex", "element with handler", "ColoredText"):
            assert kind in found, (kind, found)
    finally:
        page.close()


def test_walkthrough_sentence_steps_tabs_layers_heads(app):
    """Type a sentence, step to the end and back, open every tab, pick layers and heads."""
    config = model_config(app.combobox("Model").input_value())
    snap = app.snapshot()
    assert snap["sentence"] and snap["sourceTokens"], snap
    assert snap["tab"] == FIRST_TAB  # a first visit opens on attention
    x, y = app.ticks(FIRST)
    assert set(x) == set(snap["sourceTokens"])

    # The sentence: source tokens in the caption and on the cross-attention axis.
    snap = app.enter_sentence(SENTENCE, source=SOURCE, stepOf="Step 1 of ",
                              **tab_ready(FIRST_TAB))
    app.wait_ticks(FIRST, lambda x, y: set(x) == set(SOURCE) and y[0].startswith("<s> → "))
    total = int(snap["step"].split()[-1])
    assert snap["step"] == f"Step 1 of {total}" and total >= 2, snap["step"]
    assert snap["decoderInput"] == ["<s>"]
    bars = chart(app.snapshot(), "Step 1, layer")["axes"]["y"]  # the overview's first panel
    app.assert_cjk_renders(bars, "next-token probability")
    prev = app.page.get_by_role("button", name="◀ Previous", exact=True)
    nxt = app.page.get_by_role("button", name="Next ▶", exact=True)
    assert prev.is_disabled() and nxt.is_enabled()

    # Step to the last step with Next, one back with Previous, to the end with the slider.
    for k in range(2, total + 1):
        snap = app.click_button("Next ▶", step=f"Step {k} of {total}", slider=k,
                                titles=[f"Step {k}, layer", FIRST])
        assert snap["slider"]["value"] == k and len(snap["decoderInput"]) == k
    assert nxt.is_disabled() and prev.is_enabled()
    snap = app.click_button("◀ Previous", step=f"Step {total - 1} of {total}",
                            slider=total - 1, titles=[f"Step {total - 1}, layer", FIRST])
    assert snap["slider"]["value"] == total - 1
    snap = app.slider_key("End", step=f"Step {total} of {total}", slider=total,
                          titles=[f"Step {total}, layer", FIRST])
    dec = snap["decoderInput"]  # <s> and every output token but the last
    assert len(dec) == total and dec[0] == "<s>", dec
    assert any(CJK.search(t) for t in dec), f"no Chinese token in the decoder input {dec}"

    tabs = app.views()
    assert set(TAB_CHARTS) <= set(tabs), f"tabs gone from the app: {set(TAB_CHARTS) - set(tabs)}"
    for tab in tabs:  # every tab the page has, the ones not in TAB_CHARTS too
        snap = app.open_view(tab, **tab_ready(tab))
        assert app.chart_count() == len(snap["charts"]) >= snap["panelCharts"] + 1
        assert snap["step"] == f"Step {total} of {total}"  # the tab keeps the step
        check_tab(app, tab, dec)
        app.screenshot(tab)
        if tab in ATTENTION_TABS:
            check_layer_and_head(app, tab, dec, config)


def check_tab(app, tab: str, dec: list[str]) -> None:
    """The open tab's charts show the right tokens on the right axes (default pickers)."""
    if tab == "Positional encoding":
        app.wait_ticks(PE, lambda x, y: y == [f"{i}: {t}" for i, t in enumerate(SOURCE, start=1)])
    elif tab == "Masks":
        app.wait_ticks("Source padding mask (key_padding_mask)", lambda x, y: x == SOURCE + PADS)
        app.wait_ticks("Encoder self-attention mask",
                       lambda x, y: x == y == SOURCE + PADS)
        app.wait_ticks("Cross-attention (memory) mask",
                       lambda x, y: x == SOURCE + PADS and y == dec + PADS)
        app.wait_ticks("Look-ahead mask", lambda x, y: x == y == dec + PADS)
        app.wait_ticks("Decoder mask = padding", lambda x, y: x == y == dec + PADS)
    elif tab in ATTENTION_TABS:
        keys = dec if tab == "Decoder self-attention" else SOURCE
        x, y = app.wait_ticks(f"{tab}, layer 1, all heads",
                              lambda x, y: set(x) == set(keys) and queries_shown(tab, y, dec))
        rows = chart(app.snapshot(), tab)["firstPanelY"]  # each row of panels: the queries
        n = len(SOURCE) if tab == "Encoder self-attention" else len(dec)  # one panel's rows
        assert rows and queries_shown(tab, rows[:n], dec, in_order=True)
        if tab != "Encoder self-attention":
            app.assert_cjk_renders(y, tab)
        if tab != "Decoder self-attention":
            assert {"school", "tomorrow"} <= set(x)


def pickers_match(app, tab: str, config: dict) -> tuple[list[str], list[str]]:
    """Assert the open tab's Layer and Head pickers offer the model's layers and heads;
    returns their options."""
    n_layers = config["num_encoder_layers" if tab.startswith("Encoder") else "num_decoder_layers"]
    layers = app.options("Layer", in_tab=True)
    heads = app.options("Head", in_tab=True)
    assert layers == [f"Layer {layer_number(i)}" for i in range(n_layers)], layers  # from 1
    assert heads == ["All heads", *(f"Head {head_number(h)}" for h in range(config["nhead"]))], (
        heads)
    return layers, heads


def check_layer_and_head(app, tab: str, dec: list[str], config: dict) -> None:
    """Pick the last layer and the last head in the open tab: one heatmap whose axes show
    the keys and queries in order."""
    layers, heads = pickers_match(app, tab, config)
    layer, head = layers[-1], heads[-1]
    app.select("Layer", layer, in_tab=True, panelCharts=1,
               titles=[f"{tab}, {layer.lower()}, all heads"])
    app.select("Head", head, in_tab=True, panelCharts=1,
               titles=[f"{tab}, {layer.lower()}, {head.lower()}"])
    keys = dec if tab == "Decoder self-attention" else SOURCE
    app.wait_ticks(f"{tab}, {layer.lower()}, {head.lower()}",
                   lambda x, y: x == keys and queries_shown(tab, y, dec, in_order=True))


def queries_shown(tab: str, rows: list[str], dec: list[str], in_order: bool = False) -> bool:
    """Whether ``rows`` are the tab's query labels: the source tokens in the encoder's view;
    on the decoder side each row reads ``input → output`` (``DecodeTrace.step_labels``),
    the decoder input ``dec`` and each input's next one. ``in_order``: all of them, in
    order; else the same set."""
    if tab == "Encoder self-attention":
        return rows == SOURCE if in_order else set(rows) == set(SOURCE)
    pairs = [r.split(" → ") for r in rows]
    if not all(len(p) == 2 for p in pairs):
        return False
    inputs, outputs = [a for a, _ in pairs], [b for _, b in pairs]
    if not in_order:
        return set(inputs) == set(dec)
    return inputs == dec and outputs[:-1] == dec[1:]


def test_model_picker_lists_every_folder_and_switches(app):
    """The Model picker offers exactly the folders of ``pretrained/`` (the tests' Hugging
    Face cache is empty), the default first, then "open a folder"; switching to each other
    model that reads English (``reads_english``) redraws the page for the same sentence from
    step 1, without errors."""
    expected = model_folders()
    assert expected, "no model folders"
    current = app.combobox("Model").input_value()
    defaults = [m for m in ("en-zh-everyday", "en-zh") if m in expected]  # app.DEFAULT_MODELS
    assert current == (defaults[0] if defaults else expected[0])
    assert app.options("Model") == [current, *(m for m in expected if m != current),
                                    "📂 Open a folder…"]
    snap = app.enter_sentence(SENTENCE, source=SOURCE, stepOf="Step 1 of ",
                              titles=["Step 1, layer", FIRST])
    english = [n for n in expected if n != current and reads_english(n)]
    for name in [*english, current] if english else []:
        # Step forward first: a model switch must start the sentence again at step 1.
        app.click_button("Next ▶", step=f"Step 2 of {snap['step'].split()[-1]}")
        config = model_config(name)
        snap = app.select("Model", name, stepOf="Step 1 of ", source=SOURCE,
                          titles=["Step 1, layer", FIRST])
        assert snap["sentence"] == SENTENCE
        bars = chart(app.snapshot(), "Step 1, layer")["axes"]["y"]
        assert any(CJK.search(t) for t in bars), bars
        pickers_match(app, FIRST_TAB, config)  # this model's layers and heads
        app.wait_ticks(FIRST, lambda x, y: set(x) == set(SOURCE) and y[0].startswith("<s> → "))
        app.open_view("Positional encoding",
                      **{**tab_ready("Positional encoding"),
                         "titles": [f"{PE} (d_model = {config['d_model']})"]})
        app.wait_ticks(PE, lambda x, y: y == [f"{i}: {t}" for i, t in enumerate(SOURCE, start=1)])
        app.open_view(FIRST_TAB, **tab_ready(FIRST_TAB))


HOSTILE = {name: (text, outcome, expected) for name, text, outcome, expected in HOSTILE_INPUTS}
PICKED = ("script tag", "img onerror", "markdown link", "markdown emphasis",
          "streamlit directives", "latex", "right-to-left text", "bold tag around words",
          "1,000,000 characters")
EXTRA = ("html entity", "emoji shortcode and icon", "autolink", "markdown heading and quote")


def test_hostile_input_stays_text_and_the_next_sentence_works(app):
    """Hostile sentences open no dialog, create no script, handler, link, LaTeX, colour or
    emphasis from the user's text, give the table's outcome (a message and no chart, or a
    decoding), and the good sentence typed next decodes and draws again."""
    missing = [name for name in PICKED if name not in HOSTILE]
    assert not missing, f"tests/hostile_inputs.py no longer has {missing}"
    model = app.combobox("Model").input_value()
    subword = (models_root() / model / "src_tokenizer.json").exists()
    assert app.injected_markup() == []  # the clean page passes the check
    for name in [*PICKED, *(n for n in EXTRA if n in HOSTILE)]:
        text, outcome, expected = HOSTILE[name]
        outcome, expected = for_model(text, outcome, expected, subword)
        if outcome == "message":  # an explanation instead of charts
            snap = app.enter_sentence(text, charts=0, alert=expected)
            assert snap["step"] is None and snap["sourceTokens"] is None, name
        else:
            snap = app.enter_sentence(text, stepOf="Step 1 of ", titles=["Step 1, layer", FIRST])
            assert snap["sourceTokens"], (name, snap["alerts"])
        assert app.dialogs == [], (name, app.dialogs)
        assert app.injected_markup() == [], name
        snap = app.enter_sentence(GOOD, source=[*GOOD.split(), "</s>"],
                                  titles=["Step 1, layer", FIRST])
        assert snap["alerts"] == [], (name, snap["alerts"])
        app.wait_ticks(FIRST, lambda x, y: set(x) == {*GOOD.split(), "</s>"})
