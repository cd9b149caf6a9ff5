"""Taking what a view shows out of the app: its attention weights as CSV or NPZ with their
token labels, and a figure as a standalone interactive HTML page (plotly.js inside, so it
opens offline). The download buttons build their file only when clicked.

Shape letters: L layers, H heads, Tq queries, Tk keys.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import streamlit as st

from .charts import PLOTLY_CONFIG
from .i18n import t

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet may run as a formula
CSV_COLUMNS = ("layer", "head", "query_position", "query_token", "key_position", "key_token",
               "weight")


def _cell(token: str) -> str:
    """A token as a CSV cell a spreadsheet shows as text: one that starts like a formula
    gets a leading apostrophe (OWASP, "CSV Injection")."""
    return "'" + token if token.startswith(FORMULA_START) else token


def attention_csv(weights: np.ndarray, queries, keys) -> str:
    """(L, H, Tq, Tk) weights as CSV, one row per (layer, head, query, key) cell, with
    ``CSV_COLUMNS``: positions from 0 and the tokens of ``queries`` (Tq) and ``keys`` (Tk).

    Raises:
        ValueError: weights not (L, H, Tq, Tk) for these tokens.
    """
    w = np.asarray(weights, dtype=np.float32)
    if w.ndim != 4 or w.shape[2:] != (len(queries), len(keys)):
        raise ValueError(f"weights must be (L, H, {len(queries)}, {len(keys)}), got {w.shape}")
    L, H, Tq, Tk = w.shape
    layer, head, q, k = np.indices(w.shape).reshape(4, -1)  # (4, L*H*Tq*Tk), C order
    table = pd.DataFrame({
        "layer": layer, "head": head, "query_position": q,
        "query_token": np.array([_cell(x) for x in queries], dtype=object)[q],
        "key_position": k, "key_token": np.array([_cell(x) for x in keys], dtype=object)[k],
        "weight": w.reshape(-1),
    })
    return table.to_csv(index=False, float_format="%.9g")


def attention_npz(weights: np.ndarray, queries, keys) -> bytes:
    """(L, H, Tq, Tk) weights and their tokens as a compressed NumPy archive: ``weights``
    (float32), ``query_tokens`` (Tq,) and ``key_tokens`` (Tk,) as unicode arrays, so
    ``np.load(..., allow_pickle=False)`` reads it. (NumPy's fixed-width strings drop trailing
    NUL characters, which no token has: the models' input is normalised first.)"""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, weights=np.asarray(weights, dtype=np.float32),
                        query_tokens=np.array(list(queries), dtype=str),
                        key_tokens=np.array(list(keys), dtype=str))
    return buffer.getvalue()


def figure_html(fig) -> str:
    """A figure as a standalone HTML page with plotly.js inside (about 5 MB; opens offline)
    and the app's chart settings."""
    return fig.to_html(include_plotlyjs=True, full_html=True, config=PLOTLY_CONFIG)


def download_row(name: str, weights: np.ndarray, queries, keys, fig) -> None:
    """CSV, NPZ and HTML download buttons for a view showing ``weights`` (L, H, Tq, Tk) with
    ``queries`` and ``keys`` and the figure ``fig``; ``name`` keys the widgets and names the
    files. They sit in an expander whose content is built only while it is open; a file
    is made only when its button is clicked, and clicking reruns nothing."""
    box = st.expander(t("download_expander"), key=f"{name}_downloads", on_change="rerun",
                      icon=":material/download:")
    if not box.open:  # built only while open: a step click then redraws none of it
        return
    queries, keys = list(queries), list(keys)
    stem = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")
    cols = box.columns(3)
    for col, kind, make, mime in (
            (cols[0], "csv", lambda: attention_csv(weights, queries, keys), "text/csv"),
            (cols[1], "npz", lambda: attention_npz(weights, queries, keys),
             "application/octet-stream"),
            (cols[2], "html", lambda: figure_html(fig), "text/html")):
        col.download_button(t(f"download_{kind}"), make, file_name=f"{stem}.{kind}",
                            mime=mime, key=f"{name}_{kind}", on_click="ignore",
                            help=t(f"download_{kind}_help"), icon=":material/download:",
                            width="stretch")
