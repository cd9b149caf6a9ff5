"""Tests of what every ``viz`` figure shares: the package's exports and imports, margins,
the text a builder writes itself (``VizText``), axis titles, the cheap-to-redraw form
(``viz.axes.figure``) and room for a title."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from dataclasses import fields

import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import given
from hypothesis import strategies as st
from viz_helpers import (
    BEAM_STEPS,
    ROOT,
    notes_of,
    roundtrip,
    sinusoid,
    softmax_rows,
    title_of,
)

import viz
from viz import (
    ENGLISH,
    VizText,
    attention_grid,
    attention_heatmap,
    mask_heatmap,
    positional_curves,
    positional_heatmap,
    probability_bars,
)

# --- package hygiene --------------------------------------------------------------------


def test_package_exports_and_no_heavy_imports() -> None:
    for name in (
        "attention_heatmap",
        "attention_grid",
        "positional_heatmap",
        "positional_curves",
        "mask_heatmap",
        "probability_bars",
        "check_matrix",
        "check_heads",
        "escape_html",
    ):
        assert name in viz.__all__ and callable(getattr(viz, name))
    code = (
        "import sys, viz; "
        "bad = [m for m in ('torch', 'streamlit') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_margins_hold_the_labels():
    from viz.axes import label_px, margins
    assert label_px(["猫猫"]) > label_px(["ab"])  # a wide character takes more room
    assert label_px(["&lt;s&gt;"]) == label_px(["<s>"])  # escaped as shown
    assert label_px(["x" * 500]) == 200
    m = margins(["a", "longer token"], ["猫"], colorbar=True)
    assert m["l"] > label_px(["longer token"]) and m["b"] > label_px(["猫"])
    assert m["r"] > margins(["a"])["r"]


# --- the builders' own text ----------------------------------------------------------------


def _shout(s: str) -> str:
    """``s`` upper-cased outside its placeholders ("{n}", Plotly's "%{y}")."""
    parts = re.split(r"(%?\{[^}]*\})", s)
    return "".join(p if i % 2 else p.upper() for i, p in enumerate(parts))


SHOUT = VizText(**{f.name: _shout(getattr(ENGLISH, f.name)) for f in fields(VizText)})
MASK = np.array([[False, True, True], [False, False, True], [False, False, False]])


def _every_figure(text: VizText | None) -> dict[str, go.Figure]:
    """One figure of every builder, each branch that writes text of its own, with ``text``
    (None: the builders' default)."""
    kw = {} if text is None else {"text": text}
    w = softmax_rows((3, 3))
    return {
        "heatmap": attention_heatmap(w, ["a", "b", "c"], ["x", "y", "z"], **kw),
        "grid": attention_grid(softmax_rows((3, 3, 3)), ["a", "b", "c"], ["x", "y", "z"],
                               ncols=2, **kw),
        "mask": mask_heatmap(MASK, ["a", "b", "c"], ["a", "b", "c"], **kw),
        "bars": probability_bars(["a", "b"], np.array([0.3, 0.7]), chosen=1, **kw),
        "beam": viz.beam_tree(BEAM_STEPS, highlight=(2, 0), **kw),
        "sequence": viz.sequence_probabilities(["a", "b"], np.array([0.3, 0.7]), **kw),
        "matrix": viz.matrix_heatmap(w, ["a", "b", "c"], **kw),
        "scores": viz.score_heatmap(w, ["a", "b", "c"], ["x", "y", "z"], MASK, **kw),
        "weights": viz.score_heatmap(w, ["a", "b", "c"], ["x", "y", "z"], MASK,
                                     probabilities=True, **kw),
        "pe": positional_heatmap(sinusoid(4, 6), **kw),
        "pe_tokens": positional_heatmap(sinusoid(4, 6), ["a", "b", "c", "d"], **kw),
        "curves": positional_curves(sinusoid(4, 6), [0, 1, 4], **kw),
        "halves": positional_curves(sinusoid(4, 6), [0, 3], layout="halves", **kw),
        "learned": positional_curves(sinusoid(4, 6), [2], layout="learned", **kw),
        "step": viz.step_overview(["a", "b"], np.array([0.3, 0.7]), 1, softmax_rows((2, 3)),
                                  source_tokens=["x", "y", "z"], self_rows=softmax_rows((2, 1)),
                                  decoder_tokens=["a"], head_labels=["h0", "h1"], **kw),
    }


def _own_text(fig: go.Figure) -> list[str]:
    """The text in a figure that is not a token: titles (figure, axes, colour bars, legend),
    subplot titles, colour-bar ticks, trace names, hover templates, and the string cells of
    the mask's states."""
    data = roundtrip(fig)
    layout = data["layout"]
    out = [(layout.get("title") or {}).get("text", "")]
    for value in layout.values():
        if isinstance(value, dict):
            out.append((value.get("title") or {}).get("text", ""))
            out.append(((value.get("colorbar") or {}).get("title") or {}).get("text", ""))
    out += [a["text"] for a in layout.get("annotations", [])]
    for trace in data["data"]:
        out += [trace.get("name") or "", trace.get("hovertemplate") or ""]
        bar = trace.get("colorbar") or {}
        out += [(bar.get("title") or {}).get("text", ""), *bar.get("ticktext", [])]
    if fig.data and fig.data[0].type == "heatmap" and fig.data[0].customdata is not None:
        cells = np.asarray(fig.data[0].customdata)
        if cells.ndim == 3 and cells.shape[-1] == 3 and cells.dtype == object:
            out += sorted(set(cells[..., 2].ravel().tolist()))  # the mask's per-cell state
    return [t for t in out if t]


def test_a_builder_writes_exactly_the_labels_it_is_given():
    figs = _every_figure(SHOUT)
    f = figs["heatmap"]
    assert (title_of(f, "y"), title_of(f, "x")) == ("QUERY", "KEY")
    assert f.data[0].colorbar.title.text == "WEIGHT"
    assert f.data[0].hovertemplate == ("QUERY: %{customdata[0]}<br>KEY: "  # the token once
                                       "%{customdata[1]}<br>WEIGHT: %{z:.3f}<extra></extra>")
    f = figs["grid"]
    assert [a.text for a in notes_of(f)] == ["HEAD 1", "HEAD 2", "HEAD 3"]  # from 1
    assert f.data[0].hovertemplate.startswith("HEAD %{customdata[0]}<br>QUERY %{customdata[1]}: ")
    assert "<br>KEY %{customdata[2]}: %{hovertext}<br>" in f.data[0].hovertemplate
    assert f.data[0].colorbar.title.text == "WEIGHT"
    assert (title_of(f, "y"), title_of(f, "x")) == ("QUERY", "KEY")
    f = figs["mask"]
    assert f.data[0].colorbar.title.text == "MASK"
    assert list(f.data[0].colorbar.ticktext) == ["ALLOWED (FALSE)", "BLOCKED (TRUE)"]
    assert f.data[0].customdata[0, 1, 2] == "BLOCKED" and f.data[0].customdata[1, 0, 2] == "ALLOWED"
    assert f.data[0].hovertemplate.endswith("<br>%{customdata[2]}<extra></extra>")
    f = figs["bars"]
    assert (title_of(f, "x"), title_of(f, "y")) == ("PROBABILITY", "TOKEN")
    assert f.data[0].hovertemplate == "%{customdata}<br>PROBABILITY: %{x:.1%}<extra></extra>"
    f = figs["beam"]
    by_name = {t.name: t for t in f.data if t.name}
    assert set(by_name) == {"KEPT", "FINISHED", "PRUNED", "SELECTED HYPOTHESIS"}
    for status in ("KEPT", "FINISHED", "PRUNED"):  # each status's hover names it
        assert by_name[status].hovertemplate == (
            f"%{{customdata[0]}}<br>log p = %{{customdata[1]:.3f}}<br>{status}<extra></extra>")
    assert title_of(f, "x") == "DECODING STEP"
    assert title_of(f, "y") == "RANK WITHIN THE STEP"
    f = figs["sequence"]
    assert (title_of(f, "x"), title_of(f, "y")) == ("TOKEN", "PROBABILITY")
    assert f.data[0].hovertemplate == "%{customdata}<br>PROBABILITY: %{y:.1%}<extra></extra>"
    f = figs["matrix"]
    assert (title_of(f, "y"), title_of(f, "x")) == ("TOKEN", "DIMENSION")
    assert f.data[0].hovertemplate == ("%{customdata[0]} (ROW %{customdata[2]})<br>"  # numbers
                                       "%{customdata[1]} (COLUMN %{customdata[3]})<br>"
                                       "VALUE: %{z:.4f}<extra></extra>")
    f = figs["scores"]
    assert (title_of(f, "y"), title_of(f, "x")) == ("QUERY", "KEY")
    assert f.data[0].hovertemplate.endswith("<br>VALUE: %{z:.4f}<extra></extra>")
    assert f.data[1].name == "BLOCKED (−∞)"
    assert f.data[1].hovertemplate == (
        "BLOCKED BY THE MASK: −∞ BEFORE THE SOFTMAX, WEIGHT 0<extra></extra>")
    assert figs["weights"].data[0].hovertemplate.endswith("<br>WEIGHT: %{z:.4f}<extra></extra>")
    f = figs["pe"]
    assert f.layout.title.text == "POSITIONAL ENCODING"
    assert (title_of(f, "x"), title_of(f, "y")) == ("DIMENSION I", "POSITION")
    assert f.data[0].colorbar.title.text == "VALUE"
    assert f.data[0].hovertemplate == (  # the position from 1, the formula's pos beside it
        "POSITION %{text} (POS = %{customdata} IN THE FORMULA)<br>DIMENSION %{x}"
        "<br>VALUE: %{z:.3f}<extra></extra>")
    assert figs["pe_tokens"].data[0].hovertemplate == f.data[0].hovertemplate  # "5: you"
    f = figs["curves"]
    assert f.layout.title.text == "POSITIONAL ENCODING BY DIMENSION"
    assert [t.name for t in f.data] == ["DIM 0 (SIN)", "DIM 1 (COS)", "DIM 4 (SIN)"]
    assert f.data[1].hovertemplate == (
        "DIM 1 (COS)<br>POSITION %{x} (POS = %{customdata} IN THE FORMULA)<br>"
        "VALUE: %{y:.3f}<extra></extra>")
    assert "POS =" not in figs["learned"].data[0].hovertemplate  # a learned table: no formula
    assert (title_of(f, "x"), title_of(f, "y")) == ("POSITION", "VALUE")
    assert f.layout.legend.title.text == "DIMENSION"
    assert [t.name for t in figs["halves"].data] == ["DIM 0 (SIN)", "DIM 3 (COS)"]
    assert [t.name for t in figs["learned"].data] == ["DIM 2"]
    # ...and nothing of the English is left anywhere in any of them
    english = {p.strip(" :()") for f in fields(VizText)
               for p in re.split(r"%?\{[^}]*\}", getattr(ENGLISH, f.name))}
    english = sorted((p for p in english if re.search(r"[A-Za-z]{3,}", p)), key=len,
                     reverse=True)
    for name, fig in figs.items():
        for text in _own_text(fig):
            left = [p for p in english if re.search(rf"(?<![A-Za-z]){re.escape(p)}"
                                                    rf"(?![A-Za-z])", text)]
            assert not left, (name, text, left)


def test_labels_in_another_language_and_callers_labels_win():
    chinese = dataclasses.replace(ENGLISH, query="查询", key="键", weight="权重",
                                  hover_query="查询 %{y}", hover_key="键 %{x}",
                                  hover_weight="权重：", head="第 {n} 个头")
    f = attention_heatmap(softmax_rows((2, 2)), ["a", "b"], ["x", "y"], text=chinese)
    assert (title_of(f, "y"), title_of(f, "x")) == ("查询", "键")
    assert f.data[0].colorbar.title.text == "权重"
    assert f.data[0].hovertemplate == ("查询: %{customdata[0]}<br>键: "
                                       "%{customdata[1]}<br>权重：%{z:.3f}<extra></extra>")
    g = attention_grid(softmax_rows((2, 2, 2)), ["a", "b"], ["x", "y"], text=chinese)
    assert [a.text for a in notes_of(g)] == ["第 1 个头", "第 2 个头"]  # heads counted from 1
    assert g.data[0].hovertemplate.startswith("第 %{customdata[0]} 个头<br>查询 %{customdata[1]}: ")
    assert "<br>键 %{customdata[2]}: %{hovertext}<br>" in g.data[0].hovertemplate
    # a caller's own titles and axis labels are used as they are
    f = mask_heatmap(MASK, ["a", "b", "c"], ["a", "b", "c"], title="T", query_label="Rows",
                     key_label="Cols", text=SHOUT)
    assert (f.layout.title.text, title_of(f, "y"), title_of(f, "x")) == (
        "T", "Rows", "Cols")
    f = viz.matrix_heatmap(np.eye(2), ["a", "b"], row_label="R", col_label="C", text=SHOUT)
    assert (title_of(f, "y"), title_of(f, "x")) == ("R", "C")
    assert positional_heatmap(sinusoid(2, 2), title="PE", text=SHOUT).layout.title.text == "PE"


def test_the_default_text_is_english():
    assert VizText() == ENGLISH and viz.ENGLISH is ENGLISH and "VizText" in viz.__all__
    default, english = _every_figure(None), _every_figure(ENGLISH)
    for name, fig in default.items():
        assert fig.to_json() == english[name].to_json(), name
    f = default["heatmap"]
    assert (title_of(f, "y"), title_of(f, "x")) == ("Query", "Key")
    assert f.data[0].colorbar.title.text == "Weight"
    assert f.data[0].hovertemplate == ("Query: %{customdata[0]}<br>Key: "
                                       "%{customdata[1]}<br>Weight: %{z:.3f}<extra></extra>")
    assert {t.name for t in default["beam"].data if t.name} == {
        "kept", "finished", "pruned", "selected hypothesis"}
    assert list(default["mask"].data[0].colorbar.ticktext) == ["allowed (False)",
                                                               "blocked (True)"]
    assert [t.name for t in default["curves"].data] == ["dim 0 (sin)", "dim 1 (cos)",
                                                        "dim 4 (sin)"]
    assert default["pe"].layout.title.text == "Positional encoding"
    with pytest.raises(ValueError, match="VizText"):
        attention_heatmap(softmax_rows((2, 2)), ["a", "b"], ["x", "y"], text={"query": "Q"})
    with pytest.raises(ValueError, match="str"):
        VizText(query=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ENGLISH.query = "Q"


def test_every_axis_title_sits_in_the_margin_kept_for_it():
    """viz.axes.axis_title: past the tick labels' room, inside the figure's margin."""
    for name, fig in _every_figure(None).items():
        for note in fig.layout.annotations:
            if not str(note.xref).endswith(" domain"):
                continue  # a head or panel title
            if note.textangle == -90:  # a y title: left of the row labels
                assert -note.xshift + 20 <= fig.layout.margin.l, name
            else:
                assert -note.yshift + 20 <= fig.layout.margin.b, name


def _typed_1d(node) -> list:
    """Every 1-D base64 typed-array spec (``{"bdata": ..., no 2-D "shape"}``) in a figure's
    JSON."""
    if isinstance(node, dict):
        if "bdata" in node:
            return [node] if "," not in str(node.get("shape", "")) else []
        return [spec for value in node.values() for spec in _typed_1d(value)]
    if isinstance(node, list):
        return [spec for value in node for spec in _typed_1d(value)]
    return []


def test_every_figure_is_cheap_to_draw_again():
    """What plotly.js needs to skip redrawing a deep copy of a figure (viz.axes.figure): no
    template, a data revision, and no 1-D array sent as base64 (which it decodes anew)."""
    from viz.axes import DATA_REVISION

    figs = _every_figure(None) | {
        "lines": viz.attention_lines(softmax_rows((2, 3, 3)), ["a", "b", "c"], ["x", "y", "z"]),
        "head grid": viz.head_grid(np.random.default_rng(0).random((2, 3)), row_label="L",
                                   col_label="H", value_label="V"),
        "change": viz.probability_change(["a", "b"], np.array([0.2, 0.9], np.float32),
                                         np.array([0.5, 0.1], np.float32), names=("on", "off"),
                                         step_label="step"),
        "pruning": viz.pruning_plot(np.array([0, 2, 4]), np.array([30.0, 20.5, 0.25],
                                                                  np.float32), 4,
                                    x_label="pruned", y_label="BLEU"),
    }
    for name, fig in figs.items():
        sent = roundtrip(fig)
        assert "template" not in sent["layout"], name
        assert sent["layout"]["datarevision"] == DATA_REVISION, name
        assert not _typed_1d(sent["data"]), (name, _typed_1d(sent["data"]))
    # the lists carry the float32 values exactly (shortest decimals read back as float32)
    bars = roundtrip(figs["bars"])["data"][0]["x"]
    assert np.float32(bars).tolist() == np.float32([0.7, 0.3]).tolist()
    assert roundtrip(figs["pruning"])["data"][0]["y"] == [30.0, 20.5, 0.25]


def test_a_figure_with_its_own_width_has_room_for_its_title():
    """The page draws a figure that sets its width at that width (ui.charts.chart), so a
    long title must not be cut off by a narrow figure (two tokens, a one-row head grid):
    each of its lines fits."""
    from viz.axes import title_px

    long = "Decoder self-attention: entropy of every head (this sentence); outlined: the highest"
    for fig in (attention_heatmap(softmax_rows((2, 2)), ["a", "b"], ["x", "y"], title=long),
                viz.head_grid(np.ones((1, 2)), long, row_label="L", col_label="H",
                              value_label="V"),
                attention_heatmap(softmax_rows((2, 2)), ["a", "b"], ["x", "y"], title="注意" * 30)):
        lines = fig.layout.title.text.split("<br>")  # a long title: on several lines
        assert fig.layout.width >= max(map(title_px, lines)) > 80
    short = attention_heatmap(softmax_rows((2, 2)), ["a", "b"], ["x", "y"], title="T")
    assert short.layout.width == 2 * 44 + 8 + 200  # a short title leaves the width alone
    assert title_px("注意") > title_px("ab") and title_px("&lt;") == title_px("<")


@given(st.lists(st.sampled_from(["attention", "head", "注意力", "（层 3）", "：", "&lt;s&gt;",
                                 "a"]), min_size=1, max_size=60).map(" ".join))
def test_a_long_title_is_broken_into_lines_that_fit_and_keep_every_word(title):
    from viz.axes import TITLE_LINE_PX, title_lines, title_px

    lines = title_lines(title)
    assert "".join(lines) == title  # nothing lost or added
    assert all(title_px(line.rstrip()) <= TITLE_LINE_PX for line in lines)  # pieces are short
    assert len(lines) == 1 or title_px(title) > TITLE_LINE_PX
    assert all("&lt;s&gt;" in line or "&" not in line for line in lines)  # entities whole


def test_a_figure_writes_a_long_title_on_lines_and_makes_room_above_for_them():
    from viz.axes import MODEBAR_PX, TITLE_LINE_HEIGHT, TITLE_ROOM_PX, title_lines

    long = ("Decoder: how much each source token contributes to each decoder position "
            "(rollout through cross-attention)")
    short = attention_heatmap(softmax_rows((2, 2)), ["a", "b"], ["x", "y"], title="T")
    fig = attention_heatmap(softmax_rows((2, 2)), ["a", "b"], ["x", "y"], title=long)
    n = len(title_lines(long))
    assert n > 1 and fig.layout.title.text == "<br>".join(title_lines(long))
    # the lines start under the toolbar (as a one-line title does), the room grown for them
    more = TITLE_LINE_HEIGHT * (n - 1) + MODEBAR_PX
    assert fig.layout.margin.t == short.layout.margin.t + more
    assert fig.layout.height == short.layout.height + more
    for f in (short, fig):  # every title from the top, under the toolbar
        assert f.layout.title.yref == "container" and f.layout.title.yanchor == "top"
        assert f.layout.title.pad.t > MODEBAR_PX and f.layout.margin.t >= TITLE_ROOM_PX
    low = viz.sequence_probabilities(["a", "b"], np.array([0.3, 0.7]), title="T")
    assert low.layout.margin.t >= TITLE_ROOM_PX  # built with 50 px: grown, the plot kept
