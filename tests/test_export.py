"""Downloads (ui.export): CSV and NPZ of a view's weights load back equal to the arrays, with
their tokens; a token that a spreadsheet would run as a formula stays text; the HTML page
carries plotly.js and the figure; the table of a heatmap's numbers holds its weights, a mask's
table says which cells are blocked, and a positional table numbers its dimensions."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shipped import model_of, trace_of

import viz
from testkit.harness import fresh_python
from ui.export import (
    CSV_COLUMNS,
    attention_csv,
    attention_npz,
    figure_html,
    grid_table,
    mask_table,
    table,
    weights_table,
)

# Tokens as the models make them: no control characters (the input is normalised first).
TOKENS = st.lists(st.text(st.characters(exclude_categories=("Cc", "Cs")), min_size=1,
                          max_size=6), min_size=1, max_size=4)


@pytest.fixture(scope="module")
def trace():
    return trace_of("en-zh-small", "why do we work ?")


def test_csv_loads_back_equal_to_the_weights(trace):
    q, k = trace.decoder_input_labels, trace.src_labels
    table = pd.read_csv(io.StringIO(attention_csv(trace.cross_attentions, q, k,
                                                  trace.decoder_input_tokens,
                                                  key_tokens=trace.src_tokens)),
                        keep_default_na=False)
    assert tuple(table.columns) == CSV_COLUMNS
    L, H, Tq, Tk = trace.cross_attentions.shape
    back = np.zeros((L, H, Tq, Tk), np.float32)
    back[table.layer - 1, table["head"] - 1, table.query_position - 1,
         table.key_position - 1] = table.weight  # every number as the views read it: from 1
    np.testing.assert_array_equal(back, trace.cross_attentions)
    assert len(table) == L * H * Tq * Tk
    assert table.query_position.min() == table.key_position.min() == 1  # never a 0
    assert list(table.query_label[table.key_position == 1][:Tq]) == list(q)
    assert list(table.key_label[:Tk]) == list(k)
    assert list(table.query_token[table.key_position == 1][:Tq]) == list(
        trace.decoder_input_tokens)
    assert list(table.key_token[:Tk]) == list(trace.src_tokens)


@settings(max_examples=30, deadline=None)
@given(queries=TOKENS, keys=TOKENS, seed=st.integers(0, 2**16))
def test_npz_loads_back_equal_without_pickle(queries, keys, seed):
    w = np.random.default_rng(seed).random((2, 3, len(queries), len(keys)), dtype=np.float32)
    raw_q, raw_k = [f"▁{x}" for x in queries], [f"Ġ{x}" for x in keys]
    with np.load(io.BytesIO(attention_npz(w, queries, keys, raw_q, key_tokens=raw_k)),
                 allow_pickle=False) as f:
        np.testing.assert_array_equal(f["weights"], w)
        assert list(f["query_labels"]) == queries and list(f["key_labels"]) == keys
        assert list(f["query_tokens"]) == raw_q and list(f["key_tokens"]) == raw_k
    with np.load(io.BytesIO(attention_npz(w, queries, keys)), allow_pickle=False) as f:
        assert list(f["query_tokens"]) == queries  # no tokens given: the labels


def test_a_formula_like_token_stays_text_in_the_csv():
    w = np.full((1, 1, 1, 2), 0.5, np.float32)
    text = attention_csv(w, ["=SUM(A1)"], ["@x", "ok"])
    table = pd.read_csv(io.StringIO(text))
    assert set(table.query_token) == {"'=SUM(A1)"} and list(table.key_token) == ["'@x", "ok"]
    with pytest.raises(ValueError, match="weights must be"):
        attention_csv(w, ["a", "b"], ["c"])


def test_the_html_page_holds_plotly_and_the_figure(trace):
    fig = viz.attention_heatmap(trace.cross_attentions[0, 0], trace.decoder_input_tokens,
                                trace.src_labels, title="Cross-attention, layer 0, head 0")
    page = figure_html(fig)
    assert page.startswith("<html>") and "Cross-attention, layer 0, head 0" in page
    assert "plotly.js v" in page and "<script src=" not in page  # opens offline


def test_an_html_page_leaves_every_sessions_chart_settings_as_they_were(trace):
    # plotly's to_html adds "responsive" to the config it gets; the app's charts share it.
    from ui.charts import PLOTLY_CONFIG

    before = dict(PLOTLY_CONFIG)
    figure_html(viz.attention_heatmap(trace.cross_attentions[0, 0],
                                      trace.decoder_input_tokens, trace.src_labels))
    assert dict(PLOTLY_CONFIG) == before


def _cells(table, labels: int = 1):
    """(the cells, the label columns) of a table, as pandas frames."""
    frame = table.to_pandas()
    return frame.iloc[:, labels:], frame.iloc[:, :labels]


def test_the_table_holds_the_heatmaps_numbers(trace):
    """One head: rows are queries, columns keys, each labelled "position: token" (unique
    although tokens repeat; positions from 1, as every view reads them); a grid of heads: a
    (head, query) row per head and query."""
    w = trace.cross_attentions[0]  # (H, Tq, S)
    q, k = list(trace.decoder_input_labels), list(trace.src_labels)
    one, rows = _cells(weights_table(w[1], q, k))
    np.testing.assert_allclose(one.to_numpy(dtype=float), w[1], atol=5e-4)
    assert list(one.columns) == [f"{j}: {tok}" for j, tok in enumerate(k, start=1)]
    assert list(rows.iloc[:, 0]) == [f"{i}: {tok}" for i, tok in enumerate(q, start=1)]
    grid, rows = _cells(weights_table(w, q, k), labels=2)
    np.testing.assert_allclose(grid.to_numpy(dtype=float), w.reshape(-1, len(k)), atol=5e-4)
    assert tuple(rows.iloc[0]) == (1, f"1: {q[0]}")  # heads and positions: from 1
    assert tuple(rows.iloc[len(q)]) == (2, f"1: {q[0]}")  # the second head's first query
    with pytest.raises(ValueError, match="Tq"):
        weights_table(w[1], q[:-1], k)


def test_a_mask_table_says_blocked_exactly_where_the_mask_is_true():
    m = model_of("en-zh-small")
    src, tgt = ["why", "do", "</s>"], ["<s>", "我们", "为"]
    masks = m.mask_views(src, tgt, 2)
    keys, queries = [*src, "<pad>", "<pad>"], [*tgt, "<pad>", "<pad>"]
    for name, rows in (("decoder", queries), ("subsequent", queries)):
        cells, _ = _cells(mask_table(masks[name], rows, queries))
        assert ((cells.to_numpy() == "blocked") == masks[name]).all(), name
        assert ((cells.to_numpy() == "open") == ~masks[name]).all(), name
    cells, _ = _cells(mask_table(masks["cross"], queries, keys))
    assert list(cells.columns) == [f"{j}: {tok}" for j, tok in enumerate(keys, start=1)]
    with pytest.raises(ValueError):
        mask_table(masks["cross"], queries, keys[:-1])


def test_a_positional_table_has_a_row_per_token_and_a_column_per_dimension():
    pe = model_of("en-zh-small").positional_encoding(4)  # (T, D)
    cells, rows = _cells(grid_table(pe, ["a", "b", "a", "c"], None, "position",
                                    column_name="dimension"))
    np.testing.assert_array_equal(cells.to_numpy(), pe)
    assert list(cells.columns) == [f"dimension {j}" for j in range(pe.shape[1])]  # the i of
    # PE(pos, 2i): the formula's own index, from 0; the rows are positions, from 1
    assert list(rows.columns) == ["position"]
    assert list(rows.iloc[:, 0]) == ["1: a", "2: b", "3: a", "4: c"]
    ids, rows = _cells(grid_table(np.array([[5, 6, 7]]), ["sentence 1"], None, "",
                                  numbered_rows=False))  # a batch's ids, as the Masks view
    assert list(ids.columns) == ["1", "2", "3"] and list(rows.iloc[:, 0]) == ["sentence 1"]


def _same(a: list, b: list) -> bool:
    """Equal lists, NaN equal to NaN."""
    return len(a) == len(b) and all(
        x == y or (isinstance(x, float) and isinstance(y, float) and x != x and y != y)
        for x, y in zip(a, b, strict=True))


COLUMN = st.one_of(
    st.lists(st.one_of(st.none(), st.text(st.characters(exclude_categories=("Cs",)))),
             min_size=1),
    st.lists(st.one_of(st.none(), st.integers(-2**63, 2**63 - 1)), min_size=1),
    st.lists(st.one_of(st.none(), st.floats(), st.integers(-2**53, 2**53)), min_size=1),
    st.lists(st.one_of(st.none(), st.booleans()), min_size=1),
    st.lists(st.floats(width=32).map(np.float32), min_size=1),
    st.lists(st.floats(), min_size=1).map(np.array),
    st.lists(st.floats(width=32), min_size=1).map(lambda v: np.array(v, dtype=np.float32)),
    st.lists(st.integers(-2**63, 2**63 - 1), min_size=1).map(np.array),
    st.lists(st.booleans(), min_size=1).map(np.array))


@given(st.lists(COLUMN, min_size=1, max_size=4))
def test_a_table_built_from_buffers_equals_pyarrows_own(columns):
    n = min(len(c) for c in columns)
    data = {f"c{i}": c[:n] for i, c in enumerate(columns)}
    ours, reference = table(data), pa.table(data)
    assert ours.column_names == reference.column_names
    for name in data:
        if reference.column(name).null_count < n:  # all None: pyarrow's null type
            assert ours.schema.field(name).type == reference.schema.field(name).type
        assert _same(ours.column(name).to_pylist(), reference.column(name).to_pylist())
    ours.validate(full=True)


def test_a_table_refuses_mixed_kinds_and_columns_of_different_lengths():
    with pytest.raises(TypeError):
        table({"a": ["x", 1]})
    with pytest.raises(TypeError):
        table({"a": [True, 2]})
    with pytest.raises(ValueError):
        table({"a": [1, 2], "b": [1]})
    assert table({"a": [], "b": []}).num_rows == 0


def test_drawing_every_kind_of_table_imports_no_pandas():
    # pyarrow's pa.array and Streamlit's lazy-loading check each import pandas (43 MB in
    # the server); a fresh process that builds and draws tables of every kind must not.
    code = ("import sys, numpy as np; from ui import export;"
            "w = np.full((2, 3, 4), 0.25, dtype=np.float32);"
            "export.show(export.weights_table(w, list('abc'), list('wxyz')), hide_index=True);"
            "export.show(export.mask_table(np.eye(2, dtype=bool), ['a', 'b'], ['c', 'd']));"
            "export.show(export.columns_table([(1, 'x', 0.5, True, None)], list('abcde')));"
            "print('pandas' in sys.modules)")
    out = fresh_python(code)
    assert out.split()[-1] == "False"


@pytest.mark.slow  # over ~5 s: run in CI, not in the quick tier
def test_the_app_modules_leave_pyarrow_until_a_table_is_built():
    # pyarrow is 24 MiB resident: importing every module the warm-up imports (serve.py)
    # must not load it; building the first table does.
    code = ("import sys; import app, ui.views.panels, ui.views.teaching, ui.stepper;"
            "from ui import export; before = 'pyarrow' in sys.modules;"
            "export.table({'a': [1]}); print(before, 'pyarrow' in sys.modules)")
    out = fresh_python(code)
    assert out.split()[-2:] == ["False", "True"]
