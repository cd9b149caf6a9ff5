"""The teaching views in the app (AppTest, real model): inside one head, the padded batch,
and the positional-encoding experiment."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import chart_title, charts, run_app, z_array
from shipped import trace_of


def figure(at, title_starts: str) -> dict:
    (fig,) = [f for f in charts(at) if chart_title(f).startswith(title_starts)]
    return fig


@pytest.mark.parametrize(("kind", "layer", "head"), [("encoder", 0, 3), ("decoder", 1, 2),
                                                      ("cross", 2, 7)])
def test_inside_one_head_shows_the_models_own_weights(kind, layer, head):
    at = run_app()
    at.slider(key="step").set_value(5).run()
    at.session_state["view"] = "inside"
    at.run()
    at.selectbox(key="ih_kind").select(kind).run()
    at.selectbox(key="ih_layer").select(layer).run()
    at.selectbox(key="ih_head").select(head).run()
    assert not at.exception
    shown = z_array(figure(at, "Attention weights A")["data"][0])
    trace = trace_of(at.selectbox(key="model").value, "why do we work ?")
    expected = {"encoder": trace.encoder_attentions[layer, head],
                "decoder": trace.decoder_attentions[layer, head, :5, :5],
                "cross": trace.cross_attentions[layer, head, :5]}[kind]
    blocked = np.isnan(shown)
    np.testing.assert_allclose(np.where(blocked, 0.0, shown), expected, atol=1e-6)
    assert blocked.any() == (kind == "decoder")  # look-ahead cells drawn apart as −∞
    assert len(at.latex) == 6  # a formula beside each step
    (table,) = at.dataframe
    np.testing.assert_allclose(table.value["weight"], np.round(expected[-1], 4), atol=1e-4)


def test_padded_batch_zero_weight_on_pad_and_same_as_alone():
    at = run_app()
    at.session_state["view"] = "masks"
    at.run()
    assert not at.exception
    assert any("decodes as it does alone" in s.value for s in at.success)
    cross = figure(at, "Cross-attention in the batch")
    ticks = cross["layout"]["xaxis"]["ticktext"]
    z = z_array(cross["data"][0])
    pad = [i for i, t in enumerate(ticks) if t == "&lt;pad&gt;"]
    assert pad and np.all(z[:, pad] == 0)  # "i have three cats ." is padded
    at.selectbox(key="batch_sentence").select(1).run()
    at.text_area(key="batch_text").input("only one sentence .").run()
    assert any("2" in i.value and "4" in i.value for i in at.info) and not at.exception


def test_positional_encoding_experiment_changes_the_output():
    at = run_app()
    at.session_state["view"] = "positional"
    at.run()
    at.radio(key="pe_mode").set_value("shuffled").run()
    assert not at.exception
    (line,) = [m.value for m in at.markdown if "Shuffled:" in m.value]
    trained, shuffled = line.split("Shuffled:")
    assert trained.replace("`", "").split() != shuffled.replace("`", "").split()
    assert any(chart_title(f).endswith("(shuffled)") for f in charts(at))
