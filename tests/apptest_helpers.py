"""Shared helpers for driving the Streamlit app with AppTest (the real app and model)."""

from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from viz.convention import FIRST_NUMBER

APP = str(Path(__file__).resolve().parents[1] / "app.py")

# Every element whose text Streamlit renders as Markdown.
MARKDOWN_KINDS = ("markdown", "caption", "info", "warning", "error", "success", "title",
                  "header", "subheader")


GRAMMAR_MODEL = "en-zh"  # the word-level model whose exact outputs the grammar defines


def run_app(model: str | None = None) -> AppTest:
    """A fresh AppTest of ``app.py`` after its first run, which must not raise; with
    ``model``, that model is then picked in the sidebar (the default sentence stays)."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    if model is not None:
        at.selectbox(key="model").select(model).run()
        assert not at.exception, at.exception
    return at


def charts(at: AppTest) -> list[dict]:
    """The Plotly figures on the page, as dicts."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def array_of(value) -> np.ndarray:
    """A figure array as sent to the page, decoding Plotly's base64 typed-array form (1-D
    when it names no shape)."""
    if isinstance(value, dict):
        shape = tuple(int(n) for n in value["shape"].split(",")) if "shape" in value else (-1,)
        return np.frombuffer(base64.b64decode(value["bdata"]),
                             dtype=value["dtype"]).reshape(shape)
    return np.asarray(value)


def z_array(trace: dict) -> np.ndarray:
    """A heatmap trace's z (``array_of``)."""
    return array_of(trace["z"])


# Charts on every decoded page before a view is picked: the step's overview (top-10 bars and
# this step's cross- and self-attention rows for every head) and the default view's grid of
# every cross-attention head of layer 1 (ui.i18n.DEFAULT_VIEW).
DEFAULT_CHARTS = 2


def chart_title(fig: dict) -> str:
    """A figure's title text ('' if none), its lines joined (``viz.axes.title_lines``)."""
    title = fig["layout"].get("title") or {}
    return (title.get("text", "") if isinstance(title, dict) else str(title)).replace("<br>", "")


def heatmaps(at: AppTest, title_starts: str = "") -> list[dict]:
    """Heatmap traces of the charts whose title starts with ``title_starts``."""
    return [t for f in charts(at) if chart_title(f).startswith(title_starts)
            for t in f["data"] if t["type"] == "heatmap"]


def grid_heads(at: AppTest, title_starts: str) -> list[np.ndarray]:
    """Each head's (Tq, Tk) weights in the one grid of heads (``viz.attention_grid``, a mosaic
    of panels in one heatmap) whose title starts with ``title_starts``, read back through
    the cells' own head and positions (``customdata``: the head, the query and the key
    position as people number them, from ``viz.convention.FIRST_NUMBER``); index 0 is the
    first head, and the first query and key."""
    (trace,) = heatmaps(at, title_starts)
    z, cells = z_array(trace), array_of(trace["customdata"])
    heads = {}
    for r, c in zip(*np.nonzero(~np.isnan(z)), strict=True):
        h, i, j = (int(v) - FIRST_NUMBER for v in cells[r, c])
        heads.setdefault(h, {})[i, j] = z[r, c]
    out = []
    for h in range(len(heads)):
        rows, cols = (max(ij[n] for ij in heads[h]) + 1 for n in (0, 1))
        block = np.full((rows, cols), np.nan)
        for (i, j), v in heads[h].items():
            block[i, j] = v
        out.append(block)
    return out


def chart_text(at: AppTest) -> str:
    return json.dumps(charts(at), ensure_ascii=False)


def messages(at: AppTest) -> str:
    return " ".join(e.value for kind in ("info", "warning", "error") for e in getattr(at, kind))


def message_list(at: AppTest) -> list[str]:
    """The Markdown source of every info, warning and error box, in page order per kind."""
    return [e.value for kind in ("info", "warning", "error") for e in getattr(at, kind)]


def unescape(markdown: str) -> str:
    r"""What a reader sees of Markdown backslash escapes: ``\.`` -> ``.``."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


def heading(at: AppTest) -> str | None:
    """The translation heading as the reader sees it, or None: the Markdown ``### …``, or
    with pinyin on the glossed ``<h3>`` (``ui.gloss``) without its pinyin."""
    for el in at.markdown:
        if el.value.startswith("### "):
            return unescape(el.value[4:])
    for el in at.html:
        if el.value.startswith("<h3"):
            return html.unescape(re.sub(r"<rt>.*?</rt>|<[^>]+>", "", el.value))
    return None


def split_code_spans(md: str) -> tuple[list[str], str]:
    """CommonMark code spans of ``md``: (their contents, the source with each span and each
    backslash escape replaced by NUL). A run of n backticks closes only on a run of exactly
    n; one space is stripped from both ends of a span's content when both are spaces."""
    spans, rest, i = [], [], 0
    while i < len(md):
        if md[i] == "\\" and i + 1 < len(md) and md[i + 1] in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~":
            rest.append("\0")
            i += 2
            continue
        if md[i] != "`":
            rest.append(md[i])
            i += 1
            continue
        j = i
        while j < len(md) and md[j] == "`":
            j += 1
        n, k = j - i, j
        while (m := md.find("`" * n, k)) != -1 and m + n < len(md) and md[m + n] == "`":
            k = m + n
            while k < len(md) and md[k] == "`":
                k += 1
        if m == -1:  # no closing run: the backticks are literal
            rest.append(md[i:j])
            i = j
            continue
        content = md[j:m].replace("\n", " ")
        if content.startswith(" ") and content.endswith(" ") and content.strip():
            content = content[1:-1]
        spans.append(content)
        rest.append("\0")
        i = m + n
    return spans, "".join(rest)


def markdown_sources(at: AppTest) -> list[str]:
    """The source of every element on the page (sidebar included) rendered as Markdown."""
    return [el.value for kind in MARKDOWN_KINDS for el in at.get(kind)]


def enter(at: AppTest, sentence: str) -> AppTest:
    """Type ``sentence`` into the sentence box and rerun; the run must not raise."""
    at.text_input(key="sentence").input(sentence).run()
    assert not at.exception, at.exception
    return at
