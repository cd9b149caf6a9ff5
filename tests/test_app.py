"""The Streamlit app, driven by AppTest with the real shipped model (no mocks)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from apptest_helpers import (
    DEFAULT_CHARTS,
    GRAMMAR_MODEL,
    chart_text,
    charts,
    enter,
    grid_heads,
    heading,
    heatmaps,
    messages,
    run_app,
    z_array,
)

from ui.i18n import DEFAULT_VIEW
from viz.axes import DATA_REVISION


def test_default_sentence_is_decoded_with_step_panel_and_the_cross_attention_view():
    at = run_app()
    assert at.text_input(key="sentence").value == "why do we work ?"
    assert heading(at) == "我们为什么工作？"
    assert at.session_state["view"] == DEFAULT_VIEW == "cross"  # a class came for attention
    figs = charts(at)
    assert len(figs) == DEFAULT_CHARTS
    titles = json.dumps([f["layout"].get("title") for f in figs], ensure_ascii=False)
    assert "Step 1, layer 1: the next token" in titles
    assert "Cross-attention, layer 1, all heads" in titles
    step = figs[0]["layout"]["annotations"]
    assert [a["text"] for a in step][:2] == ["Top-10 next tokens",
                                              "Query &lt;s&gt; over the source"]
    assert not at.error


def test_sentence_step_tab_layer_head_walkthrough():
    at = run_app()
    enter(at, "where does she live ?")
    assert at.session_state["step"] == 1
    at.button(key="next_step").click().run()
    at.button(key="next_step").click().run()
    assert at.session_state["step"] == 3
    at.button(key="prev_step").click().run()
    assert at.session_state["step"] == 2
    for view, label in (("masks", "Masks"), ("encoder", "Encoder self-attention"),
                        ("decoder", "Decoder self-attention"), ("cross", "Cross-attention")):
        at.session_state["view"] = view
        at.run()
        assert not at.exception, at.exception
        text = chart_text(at)
        if view != "masks":
            # One grid (all heads) by default: every head's rows are distributions.
            heads = grid_heads(at, label)
            assert len(heads) == 8
            for z in heads:
                np.testing.assert_allclose(z.sum(-1), 1.0, atol=1e-5)
        assert "live" in text or view == "decoder"
    # Pick layer index 2, head index 5 of the cross-attention: one heatmap, rows up to step
    # 2, titled as people count (from 1): layer 3, head 6.
    at.selectbox(key="cross_layer").select(2).run()
    at.selectbox(key="cross_head").select(5).run()
    assert not at.exception
    (hm,) = heatmaps(at, "Cross-attention, layer 3, head 6")
    z = z_array(hm)
    assert z.shape == (2, 6)  # 2 decoder rows at step 2; where does she live ? </s>
    np.testing.assert_allclose(z.sum(-1), 1.0, atol=1e-5)


def test_a_figure_with_other_data_is_a_new_chart_in_the_page():
    """Every figure has the same ``layout.datarevision`` (``viz.axes.figure``), which tells
    plotly.js not to compare data arrays when it draws a chart again. That is right only
    while a figure with other data becomes a new chart element: Streamlit hashes the figure
    into the chart's element id, and a new id mounts a new chart. A Streamlit that kept the
    id across figures would draw the old data; then this fails."""
    at = run_app()

    def step_chart() -> tuple[str, str]:
        (el,) = [el for el in at.get("plotly_chart") if el.key == "step_chart"]
        return el.proto.id, el.proto.spec

    first_id, first_spec = step_chart()
    at.button(key="next_step").click().run()
    second_id, second_spec = step_chart()
    assert second_spec != first_spec and second_id != first_id
    assert json.loads(second_spec)["layout"]["datarevision"] == DATA_REVISION
    at.button(key="prev_step").click().run()
    assert step_chart() == (first_id, first_spec)  # the same figure: the same chart


BAD_INPUTS = {  # name: (text, message, model: None = the default)
    "empty": ("", "empty", None),
    "spaces": ("     ", "empty", None),
    "10,000 characters": ("why do we work ? " * 589 + "a", "characters long", None),
    "emoji": ("🙂🙂🙂", "no words", None),
    "emoji, grammar model": ("🙂🙂🙂", "no words", GRAMMAR_MODEL),
    "only unknown words": ("zxq blorf wibble", "vocabulary", GRAMMAR_MODEL),
    "HTML tags": ("<b>bold</b> <script>alert(1)</script>", "vocabulary", GRAMMAR_MODEL),
}


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_bad_input_gets_a_clear_message_and_the_next_sentence_works(name):
    text, expected, model = BAD_INPUTS[name]
    at = run_app(model)
    enter(at, text)
    assert expected in messages(at), messages(at)
    assert not at.error and not at.get("plotly_chart")
    # Nothing the user typed is echoed raw into Markdown.
    for el in [*at.markdown, *at.warning, *at.info]:
        assert "<script>" not in el.value and "<b>" not in el.value
    enter(at, "why do we work ?")
    assert len(charts(at)) == DEFAULT_CHARTS and not messages(at)


def test_unknown_words_are_flagged_with_suggestions_and_decoding_goes_on():
    at = run_app(GRAMMAR_MODEL)
    enter(at, "why do we wrok ?")
    warning = messages(at)
    assert "`wrok`" in warning and "`work`" in warning
    assert len(charts(at)) == DEFAULT_CHARTS
