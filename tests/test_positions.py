"""One numbering rule for positions (issue 54): every count a person reads starts at 1, the
first token is position 1, and only the positional-encoding formula keeps its own pos, which
starts at 0 and is said beside the position ("Position 1: <s> (pos = 0 in the formula)").

Every figure builder's hovers are written out as Plotly writes them (``test_viz_hover``) in
both interface languages: none names a query, key or position 0, and the first token's
reads 1. Then the real app, one model per direction (en→zh in English, zh→en in Chinese):
the Positional encoding view's heatmap and table, the Masks view's tables and batch grids,
and the inside-one-head query picker all start at 1.
"""

from __future__ import annotations

import re
from dataclasses import fields

import numpy as np
import pytest
from apptest_helpers import array_of, charts, enter, run_app
from test_viz_hover import KEYS, QUERIES, _figures, _hovers
from viz_helpers import sinusoid, softmax_rows

import viz
from ui.i18n import STRINGS, VIZ_LABELS
from viz import VizText
from viz.convention import (
    FIRST_NUMBER,
    formula_pos,
    position_label,
    position_number,
    position_numbers,
    rank_number,
    step_number,
)
from viz.text import bare

STEPS = [[(0, "a", -0.1, "kept"), (0, "b", -0.9, "kept"), (0, "c", -2.0, "pruned")],
         [(1, "d", -0.5, "finished"), (0, "e", -0.7, "kept")]]


def _text(code: str) -> VizText:
    """The builders' own text in interface language ``code``, as ``ui.i18n.viz_labels``
    builds it for a session in that language."""
    return VizText(**{f.name: VIZ_LABELS.get(f.name, {}).get(code, f.default)
                      for f in fields(VizText)})


def test_the_convention_counts_positions_from_1_and_the_formulas_pos_from_0():
    assert FIRST_NUMBER == 1
    assert [position_number(i) for i in range(3)] == [1, 2, 3] == list(position_numbers(3))
    assert position_label(0, "<s>") == "1: <s>" and rank_number(0) == step_number(0) == 1
    assert [formula_pos(i) for i in range(3)] == [0, 1, 2]  # PE(pos, ·): the row index
    for number in (position_number, formula_pos, rank_number, step_number):
        with pytest.raises(ValueError):
            number(-1)


@pytest.mark.parametrize("code", ["en", "zh"])
def test_no_hover_or_tick_names_a_position_0_and_the_first_token_is_position_1(code):
    text = _text(code)
    query, key, position = (bare(p) for p in (text.hover_query, text.hover_key,
                                              text.hover_position_y))
    figures = _figures(text) | {
        "lines": viz.attention_lines(softmax_rows((2, 3, 3)), QUERIES, KEYS, text=text),
        "pe": viz.positional_heatmap(sinusoid(3, 6), text=text),
        "curves": viz.positional_curves(sinusoid(3, 6), [0, 1], text=text),
        "learned": viz.positional_curves(sinusoid(3, 6), [0], layout="learned", text=text),
    }
    zero = re.compile(rf"(?:{re.escape(query)}|{re.escape(key)}|{re.escape(position)}) 0\b")
    hovers = {name: _hovers(fig) for name, fig in figures.items()}
    for name, written in hovers.items():
        assert not [h for h in written if zero.search(h)], (name, written[:3])
    first_q, first_k = f"{query} 1: {QUERIES[0]}", f"{key} 1: {KEYS[0]}"
    assert first_q in hovers["grid"][0] and first_k in hovers["grid"][0]
    assert any(f"{first_k}<br>" in h for h in hovers["step"])  # the step chart's first key
    lines = hovers["lines"]  # the query column's points, then the key column's
    assert lines[0].startswith(first_q) and lines[len(QUERIES)].startswith(first_k)
    assert f"{QUERIES[0]}{text.hover_row.replace('%{y}', '1')}" in hovers["matrix"][0]
    said = text.formula_pos.format(n=0)  # the first position is the formula's pos = 0
    assert hovers["pe_tokens"][0].startswith(f"{position} 1: {QUERIES[0]}{said}<br>")
    assert hovers["pe"][0].startswith(f"{position} 1{said}<br>")
    x_position = bare(text.hover_position_x)
    assert f"<br>{x_position} 1{said}<br>" in hovers["curves"][0]
    assert f"<br>{x_position} 1<br>" in hovers["learned"][0]  # a learned table: no formula
    ticks = figures["pe_tokens"].layout.yaxis.ticktext
    assert ticks[0] == f"1: {QUERIES[0]}" and figures["pe"].layout.yaxis.ticktext[0] == "1"
    beams = viz.beam_tree(STEPS, text=text).layout
    assert list(beams.xaxis.tickvals) == [1, 2]  # steps 1 and 2; <s> at 0 has no number
    assert list(beams.yaxis.ticktext) == ["1", "2", "3"]  # the best candidate: rank 1


#: One model per direction, in the interface language of its readers, and a sentence.
DIRECTIONS = [("en-zh-everyday", "English", "Why do we work?"),
              ("zh-en-everyday", "简体中文", "我们明天有数学考试。")]


def _tables(at, name: str) -> list:
    """The tables of the view's expander ``name``, opened."""
    at.session_state[f"{name}_tables"] = True
    at.run()
    assert not at.exception, at.exception
    return [d.value for d in at.dataframe]


@pytest.mark.parametrize(("model", "language", "sentence"), DIRECTIONS,
                         ids=["en-zh", "zh-en"])
def test_the_apps_positions_views_and_tables_start_at_1(model, language, sentence):
    at = run_app(model)
    at.radio(key="lang").set_value(language).run()
    enter(at, sentence)
    code = "en" if language == "English" else "zh"
    formula = _text(code).formula_pos.format(n="%{customdata}")  # "(pos = … in the formula)"

    at.session_state["view"] = "positional"
    (table,) = _tables(at, "pe")
    first = table.iloc[0, 0]
    assert first.startswith("1: ") and table.iloc[1, 0].startswith("2: "), list(table.iloc[:, 0])
    pe = next(f for f in charts(at) if formula in f["data"][0].get("hovertemplate", ""))
    assert pe["layout"]["yaxis"]["ticktext"][0].startswith("1: ")
    assert array_of(pe["data"][0]["customdata"])[0, 0] == 0  # position 1 is pos = 0
    assert pe["data"][0]["text"][0][0] == pe["layout"]["yaxis"]["ticktext"][0]  # "1: …"

    at.session_state["view"] = "masks"
    tables = _tables(at, "masks")
    masks = [d for d in tables if set(np.unique(d.iloc[:, 1:].to_numpy().astype(str)))
             <= {STRINGS["mask_cell_blocked"][code], STRINGS["mask_cell_open"][code]}]
    assert len(masks) == 5
    for mask in masks:  # rows and columns named "1: token", "2: token", ...
        assert mask.iloc[0, 0].startswith("1: ") and mask.columns[1].startswith("1: ")
    batch = [d for d in tables if list(d.columns[:2]) == ["", "1"]]  # ids: a column a position
    assert batch and all("0" not in d.columns for d in batch)

    at.session_state["view"] = "inside"
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="ih_query").options[0].startswith("1: ")
