"""The app with its default everyday model (subword English), driven by AppTest: the pieces
in the sidebar, nothing flagged as unknown, and the word-grouping switch in every view."""

from __future__ import annotations

import numpy as np
from apptest_helpers import (
    charts,
    enter,
    grid_heads,
    heatmaps,
    markdown_sources,
    messages,
    run_app,
    z_array,
)
from shipped import trace_of

from model.analysis.words import group_labels

SENTENCE = "Unbelievably, astronauts don't sleep."


def expected() -> tuple[list[str], list[str]]:
    """(piece labels, word labels) of SENTENCE from the model itself."""
    trace = trace_of("en-zh-everyday", SENTENCE, max_new_tokens=2)
    return list(trace.src_labels), group_labels(trace.src_labels, trace.src_words)


def test_the_everyday_model_is_the_default_and_shows_the_pieces():
    at = run_app()
    assert at.selectbox(key="model").value == "en-zh-everyday"
    enter(at, SENTENCE)
    pieces, words = expected()
    assert len(words) < len(pieces)
    sidebar = " ".join(markdown_sources(at))
    assert "subword pieces" in sidebar and "`Un · " in sidebar
    assert not messages(at)  # nothing is unknown to byte-level BPE
    assert charts(at)


def test_gibberish_is_not_flagged_as_unknown_words():
    at = run_app()
    enter(at, "zxq blorf wibble")
    assert "vocabulary" not in messages(at) and charts(at)


def test_grouping_switch_merges_pieces_in_every_source_axis():
    at = run_app()
    enter(at, SENTENCE)
    pieces, words = expected()
    for grouped, labels in ((False, pieces), (True, words)):
        at.toggle(key="group_words").set_value(grouped).run()
        assert not at.exception, at.exception
        at.session_state["view"] = "encoder"
        at.run()
        for z in grid_heads(at, "Encoder self-attention"):
            assert z.shape == (len(labels), len(labels))
            np.testing.assert_allclose(z.sum(-1), 1.0, atol=1e-4)
        at.session_state["view"] = "cross"
        at.run()
        for z in grid_heads(at, "Cross-attention"):
            assert z.shape[1] == len(labels)
            np.testing.assert_allclose(z.sum(-1), 1.0, atol=1e-4)
        (rows,) = heatmaps(at, "Step 1, layer 1")  # the step overview: [cross | gap | self]
        assert z_array(rows).shape[1] == len(labels) + 1 + 1  # source keys, gap, <s>
