"""The Heads view in the app (AppTest, the shipped models): statistics for the sentence and
over held-out sentences, switching heads off, importance and pruning, rollout and flow, and
heads against gold alignments."""

from __future__ import annotations

import gc
import sys

import numpy as np
import pytest
from apptest_helpers import chart_title, charts, enter, run_app, z_array
from shipped import model_of, trace_of

from model.analysis.aggregate import attention_flow
from model.analysis.headstats import head_stats, head_stats_over, rank_heads
from model.backends.load import pretrained_root
from model.core.heldout import HELDOUT_SIZE, heldout_pairs
from ui.cache import load_model, model_key
from ui.views.heads import FLOW_AUTO_TOKENS
from viz.convention import head_number, layer_number

SENTENCE = "why do we work ?"


def _heads_view(model: str = "en-zh-small"):
    at = run_app(model)
    enter(at, SENTENCE)
    at.session_state["view"] = "heads"
    at.run()
    assert not at.exception, at.exception
    return at


def test_the_grid_and_the_table_show_this_sentences_statistics():
    at = _heads_view()
    trace = trace_of("en-zh-small", SENTENCE)
    expected = head_stats(trace, "encoder")
    grid = next(c for c in charts(at) if "confidence" in chart_title(c).lower()
                or "entropy" in chart_title(c).lower())
    np.testing.assert_allclose(z_array(grid["data"][0]), expected.values["entropy"], atol=1e-5)
    at.selectbox(key="heads_stat").select("confidence").run()
    table = at.dataframe[0].value
    ranking = rank_heads(expected, "confidence")
    assert list(zip(table.iloc[:, 0], table.iloc[:, 1], strict=True)) == [
        (layer_number(layer), head_number(head)) for layer, head, _ in ranking]  # from 1


def test_switching_a_head_off_decodes_again_and_shows_the_difference():
    at = _heads_view()
    small = model_of("en-zh-small")
    heads = [f"cross:{layer}:{h}" for layer in range(2) for h in range(4)]
    at.multiselect(key="heads_off").set_value(heads).run()
    assert not at.exception, at.exception
    ablated = small.generate(SENTENCE, heads_off=[tuple([k, int(x), int(y)]) for k, x, y in
                                                  (h.split(":") for h in heads)])
    assert ablated.output_text != small.generate(SENTENCE).output_text
    shown = [m.value for m in at.markdown]
    assert any(ablated.output_text in text for text in shown)
    assert at.warning  # where the two translations first differ
    change = [c for c in charts(at) if len(c.get("data", [])) == 2
              and all(d.get("type") == "bar" for d in c["data"])]
    assert change, "the before/after probability chart"


@pytest.mark.slow
def test_layers_and_alignment_sections_draw_for_a_grammar_model():
    at = _heads_view()
    titles = [chart_title(c) for c in charts(at)]
    assert any("rollout" in x.lower() for x in titles) and any("flow" in x.lower()
                                                                for x in titles)
    assert any(x.startswith("AER of every cross-attention head, this sentence") for x in titles)
    assert any("gold" in x.lower() for x in titles)  # this sentence with its gold links
    assert not at.error
    at.button(key="alignment_go").click().run()
    assert not at.exception, at.exception
    assert any("held-out grammar sentences" in chart_title(c) for c in charts(at))
    # the gold links outlined on this sentence's map: rows are the produced tokens
    gold = next(c for c in charts(at) if "gold links" in chart_title(c))
    assert gold["data"][1]["type"] == "scatter" and len(gold["data"][1]["x"]) > 0


@pytest.mark.slow
def test_importance_is_computed_when_asked(tmp_path, monkeypatch):
    """A folder that keeps no held-out figures (``heldout_heads``) computes them on a click."""
    import shutil

    from model.analysis.heldout_heads import HEADS_FILE
    from model.backends.load import PRETRAINED_DIR

    shutil.copytree(PRETRAINED_DIR / "en-zh-small", tmp_path / "en-zh-small",
                    ignore=shutil.ignore_patterns(HEADS_FILE))
    monkeypatch.setenv("ATTENTION_PRETRAINED_DIR", str(tmp_path))
    at = _heads_view()
    at.button(key="importance_go").click().run()
    assert not at.exception, at.exception
    titles = [chart_title(c).lower() for c in charts(at)]
    assert any("importance" in x for x in titles) and any("bleu" in x for x in titles)


@pytest.mark.slow
def test_held_out_statistics_are_pooled_over_the_models_held_out_sentences():
    at = _heads_view()
    at.radio(key="heads_scope").set_value("heldout").run()
    assert not at.exception, at.exception
    at.selectbox(key="heads_kind").select("cross").run()
    at.selectbox(key="heads_stat").select("diagonal").run()
    small = model_of("en-zh-small")
    pooled = head_stats_over(small.generate(src)
                             for src, _ in heldout_pairs(small.card, HELDOUT_SIZE))["cross"]
    grid = next(c for c in charts(at) if "diagonal" in chart_title(c))
    np.testing.assert_allclose(z_array(grid["data"][0]), pooled.values["diagonal"], atol=1e-5)
    assert f"{HELDOUT_SIZE} held-out sentences" in chart_title(grid)


@pytest.mark.slow
def test_flow_of_a_long_sentence_waits_for_a_click():
    at = run_app()  # the everyday model: any English
    long = ("My little brother wants to read three new books about old trains before he "
            "goes to bed tonight, and my sister wants to watch a film.")
    enter(at, long)
    at.session_state["view"] = "heads"
    at.run()
    assert not at.exception, at.exception
    flow = [c for c in charts(at) if "attention flow" in chart_title(c)]
    assert not flow and at.button(key="flow_go")
    trace = trace_of("en-zh-everyday", long)
    assert len(trace.src_tokens) > FLOW_AUTO_TOKENS
    at.button(key="flow_go").click().run()
    assert not at.exception, at.exception
    (flow,) = [c for c in charts(at) if "attention flow" in chart_title(c)]
    np.testing.assert_allclose(z_array(flow["data"][0]),
                               np.clip(attention_flow(trace.encoder_attentions), 0, 1),
                               atol=1e-5)


def test_the_lines_view_draws_one_line_per_weight_of_the_layer():
    from viz.lines import MIN_WEIGHT

    at = _heads_view()
    at.selectbox(key="lines_kind").select("cross").run()
    at.selectbox(key="lines_layer").select(1).run()
    assert not at.exception, at.exception
    (fig,) = [c for c in charts(at) if "as lines" in chart_title(c)]
    trace = trace_of("en-zh-small", SENTENCE)
    k = at.session_state["step"]  # decoder-side rows up to the current step
    drawn = sum(len(z_array({"z": t["x"]})) // 3 for t in fig["data"][2:])  # x0, x1, gap
    assert drawn == int((trace.cross_attentions[1, :, :k] >= MIN_WEIGHT).sum())


def test_a_loaded_model_and_the_imports_before_it_are_left_out_of_the_collection():
    """Streamlit collects garbage after every run (runner.postScriptGC), walking every object
    not frozen: loading a model freezes the heap (``ui.cache.load_model``), so the model and
    the modules imported before it (torch, the app's) are not walked again."""
    _heads_view()
    tracked = {id(obj) for obj in gc.get_objects()}  # the objects the collector still walks
    model = load_model(*model_key(pretrained_root() / "en-zh-small"))
    walked = [name for name in ("torch", "model", "ui.cache") if id(sys.modules[name]) in tracked]
    assert gc.get_freeze_count() > 0 and walked == [], walked
    assert id(model) not in tracked and id(model.model) not in tracked
