"""Every view's numbers as tables (ui.export.tables_expander), in the real app with the
default model: the step panel's tables hold the step's top-k probabilities and its attention
rows, the Masks view's say "blocked" exactly where each mask is True, the Positional encoding
view's hold the table the heatmap draws."""

from __future__ import annotations

import numpy as np
from apptest_helpers import enter, run_app
from shipped import model_of, trace_of

SENTENCE = "Why do we work?"


def _tables(at, name: str) -> list:
    at.session_state[f"{name}_tables"] = True  # the expander, opened
    at.run()
    assert not at.exception
    return [d.value for d in at.dataframe]


def test_the_step_tables_hold_the_steps_numbers():
    at = enter(run_app(), SENTENCE)
    trace = trace_of(at.selectbox(key="model").value, SENTENCE)
    step = trace.steps[0]
    top, cross, own = _tables(at, "step")
    np.testing.assert_allclose(top.iloc[:, 1].to_numpy(), step.top_probs, atol=1e-4)
    assert list(top.iloc[:, 0]) == list(step.top_labels)
    cross, own = cross.iloc[:, 1:], own.iloc[:, 1:]  # the first column: the heads
    np.testing.assert_allclose(cross.to_numpy(dtype=float), trace.cross_attentions[0, :, 0],
                               atol=1e-3)
    np.testing.assert_allclose(own.to_numpy(dtype=float), trace.decoder_attentions[0, :, 0, :1],
                               atol=1e-3)
    assert list(cross.columns) == [f"{j}: {s}" for j, s in enumerate(trace.src_labels, start=1)]


def test_the_mask_tables_say_blocked_where_the_masks_are_true():
    at = enter(run_app(), SENTENCE)
    translator = model_of(at.selectbox(key="model").value)
    trace = translator.generate(SENTENCE)
    at.session_state["view"] = "masks"
    shown = [d.iloc[:, 1:] for d in _tables(at, "masks")  # first column: the queries
             if set(np.unique(d.iloc[:, 1:].to_numpy().astype(str))) <= {"blocked", "open"}]
    m = translator.mask_views(list(trace.src_tokens), list(trace.decoder_input_tokens[:1]), 2)
    masks = [m["source_padding"][None, :], m["encoder"], m["cross"], m["subsequent"],
             m["decoder"]]
    assert len(shown) == len(masks)
    for table, mask in zip(shown, masks, strict=True):
        assert ((table.to_numpy() == "blocked") == mask).all()
        assert ((table.to_numpy() == "open") == ~mask).all()


def test_the_positional_table_is_the_heatmaps_table():
    at = enter(run_app(), SENTENCE)
    translator = model_of(at.selectbox(key="model").value)
    trace = translator.generate(SENTENCE)
    at.session_state["view"] = "positional"
    (table,) = _tables(at, "pe")
    pe = translator.positional_encoding(len(trace.src_tokens), "source")
    np.testing.assert_allclose(table.iloc[:, 1:].to_numpy(dtype=float), pe, atol=1e-3)
    assert list(table.iloc[:, 0]) == [f"{i}: {s}" for i, s in enumerate(trace.src_labels, start=1)]
