"""Taking what a view shows out of the app: the heatmap's numbers as a table (for screen
readers and for copying), its attention weights as CSV or NPZ with their token labels, and
a figure as a standalone interactive HTML page (plotly.js inside, so it opens offline).
The download buttons build their file only when clicked. pyarrow (24 MiB resident) is
imported by the functions that build a table, when a table is first opened: most pages
show none, and the server stays that much smaller.

Shape letters: L layers, H heads, Tq queries, Tk keys.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from viz.convention import head_number, layer_number, position_label, position_number

from .charts import PLOTLY_CONFIG
from .i18n import t

if TYPE_CHECKING:
    import pyarrow as pa

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet may run as a formula
CSV_COLUMNS = ("layer", "head", "query_position", "query_token", "query_label",
               "key_position", "key_token", "key_label", "weight")


def _cell(token: str) -> str:
    """A token as a CSV cell a spreadsheet shows as text: one that starts like a formula
    gets a leading apostrophe (OWASP, "CSV Injection")."""
    return "'" + token if token.startswith(FORMULA_START) else token


def _check(w: np.ndarray, queries, keys, query_tokens, *, key_tokens) -> None:
    if w.ndim != 4 or w.shape[2:] != (len(queries), len(keys)):
        raise ValueError(f"weights must be (L, H, {len(queries)}, {len(keys)}), got {w.shape}")
    if len(query_tokens) != len(queries) or len(key_tokens) != len(keys):
        raise ValueError("each label needs its token")


def attention_csv(weights: np.ndarray, queries, keys, query_tokens=None, *, key_tokens=None
                  ) -> str:
    """(L, H, Tq, Tk) weights as CSV, one row per (layer, head, query, key) cell, with
    ``CSV_COLUMNS``: layers, heads and positions numbered as the views number them (from
    1, ``viz.convention``), the labels a person reads (``queries`` (Tq),
    ``keys`` (Tk)) and the model's own tokens (``query_tokens``, ``key_tokens``; the
    labels when not given).

    Raises:
        ValueError: weights not (L, H, Tq, Tk) for these labels, or tokens and labels of
            different lengths.
    """
    w = np.asarray(weights, dtype=np.float32)
    query_tokens = queries if query_tokens is None else query_tokens
    key_tokens = keys if key_tokens is None else key_tokens
    _check(w, queries, keys, query_tokens, key_tokens=key_tokens)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    qt, ql = [_cell(x) for x in query_tokens], [_cell(x) for x in queries]
    kt, kl = [_cell(x) for x in key_tokens], [_cell(x) for x in keys]
    for (layer, head, q, k), weight in np.ndenumerate(w):  # C order: layer, head, query, key
        writer.writerow((layer_number(layer), head_number(head), position_number(q), qt[q],
                         ql[q], position_number(k), kt[k], kl[k], f"{weight:.9g}"))
    return out.getvalue()


def _validity(valid: np.ndarray) -> pa.Buffer | None:
    """Arrow's validity bitmap of (N,) booleans (True = a value), None when all are."""
    import pyarrow as pa

    return None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))


def _column(values) -> pa.Array:
    """N values as an Arrow array, built from its buffers (``pa.Array.from_buffers``):
    strings -> string, bools -> bool, ints -> int64, other real numbers -> float64 (NaN
    stays NaN; NumPy float32 ones -> float32), None -> null in any of them: the types
    ``pa.array`` gives them.

    Raises:
        TypeError: the values mix kinds (strings with numbers...) or are none of these.
    """
    import pyarrow as pa

    if isinstance(values, np.ndarray) and values.dtype in (np.float32, np.float64):
        kind = pa.float32() if values.dtype == np.float32 else pa.float64()
        return pa.Array.from_buffers(kind, len(values),
                                     [None, pa.py_buffer(np.ascontiguousarray(values))])
    raw = values.tolist() if isinstance(values, np.ndarray) else list(values)
    items = [v.item() if isinstance(v, np.generic) else v for v in raw]
    n, present = len(items), [v for v in items if v is not None]
    valid = _validity(np.array([v is not None for v in items], dtype=bool))  # (N,)
    if all(isinstance(v, str) for v in present):
        encoded = [b"" if v is None else v.encode("utf-8", "surrogatepass") for v in items]
        offsets = np.zeros(n + 1, dtype=np.int32)  # (N + 1,) where each string starts
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
        return pa.Array.from_buffers(pa.string(), n, [valid, pa.py_buffer(offsets),
                                                      pa.py_buffer(b"".join(encoded))])
    if all(isinstance(v, bool) for v in present):
        bits = np.packbits(np.array([v is True for v in items], dtype=bool), bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), n, [valid, pa.py_buffer(bits)])
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        raise TypeError("a table's column holds strings, bools or numbers, one kind each")
    kind, dtype = ((pa.int64(), np.int64) if all(isinstance(v, int) for v in present) else
                   (pa.float32(), np.float32) if present and all(
                       isinstance(v, np.float32) for v in raw if v is not None) else
                   (pa.float64(), np.float64))
    data = np.array([0 if v is None else v for v in items], dtype=dtype)  # (N,)
    return pa.Array.from_buffers(kind, n, [valid, pa.py_buffer(data)])


def table(columns: Mapping[str, Sequence | np.ndarray]) -> pa.Table:
    """Columns (name -> N values each, ``_column``'s kinds) as the ``pyarrow.Table`` that
    ``show`` draws. Built from Arrow buffers, not ``pa.array``: pyarrow imports pandas
    (43 MB in the server) on its first ``pa.array``, which this app otherwise never needs.

    Raises:
        TypeError: as ``_column``; ValueError: the columns differ in length.
    """
    import pyarrow as pa

    arrays = [_column(values) for values in columns.values()]
    if len({len(a) for a in arrays}) > 1:
        raise ValueError("a table's columns have one length")
    return pa.Table.from_arrays(arrays, names=list(columns))


def show(data: pa.Table, box=st, **kwargs):
    """``box.dataframe(data, **kwargs)`` drawn at once (``lazy=False``): Streamlit's lazy
    loading check imports pandas; these tables are small. Returns what ``dataframe``
    returns (the selection, with ``on_select``)."""
    return box.dataframe(data, lazy=False, **kwargs)


def columns_table(rows, names) -> pa.Table:
    """Rows (tuples, one value per name) as a ``table`` with the column ``names`` (a
    table of no rows has the columns and no values)."""
    rows = list(rows)
    return table({name: [row[i] for row in rows] for i, name in enumerate(names)})


def weights_table(weights: np.ndarray, queries, keys) -> pa.Table:
    """The numbers of a heatmap as a table: one row per query (per head and query for a
    grid of heads, whose first column is the head's number, from 1), one column per key,
    each labelled with its position and token ("1: why": labels of a sentence repeat),
    weights rounded to 3 decimals.

    Args:
        weights: (Tq, Tk) one head's weights, or (H, Tq, Tk) a layer's heads.
        queries: Tq query labels; keys: Tk key labels.

    Raises:
        ValueError: weights not (Tq, Tk) or (H, Tq, Tk) for these labels.
    """
    w = np.asarray(weights, dtype=np.float32)
    if w.ndim not in (2, 3) or w.shape[-2:] != (len(queries), len(keys)):
        raise ValueError(f"weights must be (Tq, Tk) or (H, Tq, Tk) with Tq = {len(queries)} "
                         f"and Tk = {len(keys)}, got {w.shape}")
    if w.ndim == 2:
        return grid_table(w.round(3), queries, keys, t("table_query"))
    H = w.shape[0]
    grid = grid_table(w.reshape(-1, w.shape[-1]).round(3), _numbered(queries) * H, keys,
                      t("table_query"), numbered_rows=False)
    numbers = np.repeat([head_number(h) for h in range(H)], len(queries))
    return grid.add_column(0, t("table_head"), _column(numbers))


def _numbered(labels) -> list[str]:
    """Labels with their positions as a person reads them ("1: why",
    ``viz.convention.position_label``): the labels of a sentence repeat."""
    return [position_label(i, label) for i, label in enumerate(labels)]


def grid_table(values: np.ndarray, rows, columns, row_name: str,
               *, column_name: str | None = None, numbered_rows: bool = True) -> pa.Table:
    """A heatmap's (R, C) cells as a ``table``: a first column ``row_name`` of the row
    labels, then a column per column label, each numbered with its position, from 1 (rows
    as given when not ``numbered_rows``). ``columns`` None: the columns are a table's
    dimensions, headed "``column_name`` j" with j = 0..C-1 as the formulas index them
    (PE(pos, 2i)); with no ``column_name``, positions headed 1..C.

    Raises:
        ValueError: values not (R, C) for these labels.
    """
    values = np.asarray(values)
    cols = ([f"{column_name} {j}" if column_name else str(position_number(j))
             for j in range(values.shape[-1])] if columns is None else _numbered(columns))
    if values.shape != (len(rows), len(cols)):
        raise ValueError(f"values must be ({len(rows)}, {len(cols)}), got {values.shape}")
    labels = _numbered(rows) if numbered_rows else [str(r) for r in rows]
    return table({row_name: labels, **{c: values[:, j] for j, c in enumerate(cols)}})


def mask_table(mask: np.ndarray, queries, keys) -> pa.Table:
    """A boolean (Tq, Tk) mask (True = blocked) as a table of words: "blocked" or "open" in
    the interface's language, a row per query, a column per key (``grid_table``).

    Raises:
        ValueError: as ``grid_table``.
    """
    words = np.where(np.asarray(mask, dtype=bool), t("mask_cell_blocked"), t("mask_cell_open"))
    return grid_table(words, queries, keys, t("table_query"))


def tables_expander(name: str, tables) -> None:
    """The numbers of a view's heatmaps as tables, in a collapsed expander keyed by
    ``name``, built only while open; ``tables``: a callable returning (title, table) pairs,
    called only then."""
    box = st.expander(t("tables_expander"), key=f"{name}_tables", on_change="rerun",
                      icon=":material/table:")
    if not box.open:
        return
    for title, data in tables():
        box.caption(title)
        show(data, box, hide_index=True)


def attention_npz(weights: np.ndarray, queries, keys, query_tokens=None, *, key_tokens=None
                  ) -> bytes:
    """(L, H, Tq, Tk) weights with their tokens and labels as a compressed NumPy archive:
    ``weights`` (float32), ``query_tokens`` and ``query_labels`` (Tq,), ``key_tokens`` and
    ``key_labels`` (Tk,) as unicode arrays (tokens: the model's own, the labels when not
    given), so ``np.load(..., allow_pickle=False)`` reads it. (NumPy's fixed-width strings
    drop trailing NUL characters, which no token has: the models' input is normalised
    first.)

    Raises:
        ValueError: as ``attention_csv``.
    """
    w = np.asarray(weights, dtype=np.float32)
    query_tokens = queries if query_tokens is None else query_tokens
    key_tokens = keys if key_tokens is None else key_tokens
    _check(w, queries, keys, query_tokens, key_tokens=key_tokens)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, weights=w,
                        query_tokens=np.array(list(query_tokens), dtype=str),
                        query_labels=np.array(list(queries), dtype=str),
                        key_tokens=np.array(list(key_tokens), dtype=str),
                        key_labels=np.array(list(keys), dtype=str))
    return buffer.getvalue()


def figure_html(fig) -> str:
    """A figure as a standalone HTML page with plotly.js inside (about 5 MB; opens offline)
    and the app's chart settings."""
    return fig.to_html(include_plotlyjs=True, full_html=True,
                       config=dict(PLOTLY_CONFIG))  # a copy: to_html adds "responsive"


def download_row(name: str, weights: np.ndarray, queries, keys, *, fig, tokens=(None, None),
                 shown: np.ndarray | None = None) -> None:
    """The numbers of the figure as a table (``weights_table`` of ``shown``: (Tq, Tk) or
    (H, Tq, Tk), the weights the figure draws), then CSV, NPZ and HTML download buttons for
    a view showing ``weights`` (L, H, Tq, Tk) with the labels ``queries`` and ``keys`` (and
    the model's (query, key) ``tokens``, the labels when None) and the figure ``fig``;
    ``name`` keys the widgets and names the files. They sit in an expander whose content is
    built only while it is open; a file is made only when its button is clicked, and
    clicking reruns nothing."""
    box = st.expander(t("download_expander"), key=f"{name}_downloads", on_change="rerun",
                      icon=":material/download:")
    if not box.open:  # built only while open: a step click then redraws none of it
        return
    queries, keys = list(queries), list(keys)
    if shown is not None:
        show(weights_table(shown, queries, keys), box, hide_index=True)
    stem = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")
    cols = box.columns(3)
    for col, kind, make, mime in (
            (cols[0], "csv", lambda: attention_csv(weights, queries, keys, query_tokens=tokens[0],
                                                 key_tokens=tokens[1]), "text/csv"),
            (cols[1], "npz", lambda: attention_npz(weights, queries, keys, query_tokens=tokens[0],
                                                 key_tokens=tokens[1]),
             "application/octet-stream"),
            (cols[2], "html", lambda: figure_html(fig), "text/html")):
        col.download_button(t(f"download_{kind}"), make, file_name=f"{stem}.{kind}",
                            mime=mime, key=f"{name}_{kind}", on_click="ignore",
                            help=t(f"download_{kind}_help"), icon=":material/download:",
                            width="stretch")
