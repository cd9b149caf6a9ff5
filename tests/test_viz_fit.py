"""Tests of ``viz.fit.fit_layout``: the layout changes that keep token labels apart and make
Present mode's type large. Chromium's own measurement of the labels is
tests/browser/test_labels.py; these check the changes themselves."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from viz_helpers import softmax_rows

from viz import attention_grid, attention_heatmap, sequence_probabilities, step_overview
from viz.fit import (
    LINE_EM,
    PAGE_PX,
    PRESENT_FONT_PX,
    PRESENT_PAGE_PX,
    fit_layout,
)


def _words(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return ["w" * int(rng.integers(1, 9)) + str(i) for i in range(n)]


def _figures(n: int):
    toks = _words(n)
    w = softmax_rows((4, n, n))
    probs = np.linspace(0.9, 0.1, n)
    yield attention_heatmap(w[0], toks, toks)
    yield attention_grid(w, toks, toks, ncols=2)
    yield sequence_probabilities(toks, probs)
    yield step_overview(toks[:5], probs[:5], 0, w[:, 0], source_tokens=toks,
                        self_rows=w[:, 1, :3], decoder_tokens=toks[:3],
                        head_labels=[f"head {h}" for h in range(4)], titles=("a", "b", "c"),
                        width=1000, height=380)


def _token_axes(layout: dict) -> dict[str, dict]:
    return {k: v for k, v in layout.items() if k[1:5] == "axis" and v.get("tickvals")}


@pytest.mark.parametrize("n", [6, 20, 40, 90])
def test_the_figure_is_not_changed_and_kept_ticks_are_every_kth(n) -> None:
    for fig in _figures(n):
        before = fig.to_json()
        layout = fig.layout.to_plotly_json()
        for font_px in (None, PRESENT_FONT_PX):
            changes = fit_layout(fig, font_px=font_px)
            assert fig.to_json() == before
            axes = _token_axes(layout)
            for name, change in changes.items():
                if name in axes and "tickvals" in change:
                    vals, text = axes[name]["tickvals"], axes[name]["ticktext"]
                    k = vals.index(change["tickvals"][1]) if len(change["tickvals"]) > 1 \
                        else len(vals)
                    assert k > 1
                    assert change["tickvals"] == vals[::k]
                    assert change["ticktext"] == text[::k]


@pytest.mark.parametrize("n", [6, 20, 40, 90])
def test_present_mode_type_is_large_and_figures_fit_the_page(n) -> None:
    for fig in _figures(n):
        changes = fit_layout(fig, font_px=PRESENT_FONT_PX)
        fig.update_layout(changes)
        lay = fig.layout.to_plotly_json()
        assert lay["font"]["size"] >= PRESENT_FONT_PX
        for name, axis in lay.items():
            if name[1:5] == "axis":
                assert axis["tickfont"]["size"] >= PRESENT_FONT_PX, name
        assert lay.get("width") is None or lay["width"] <= PAGE_PX


def test_a_short_sentence_keeps_its_figure_as_built() -> None:
    w = softmax_rows((6, 6))
    # every label kept; only the x labels' angle set (Plotly's own turning is never used)
    assert fit_layout(attention_heatmap(w, _words(6), _words(6))) == {
        "xaxis": {"tickangle": -90}}


@given(st.integers(2, 120))
def test_longer_sentences_never_show_more_labels_per_pixel(n) -> None:
    """In a heatmap of fixed size, the labels kept are never closer than a line apart."""
    toks = _words(n, seed=n)
    fig = attention_heatmap(softmax_rows((n, n), seed=n), toks, toks)
    fig.update_layout(width=900, height=900)
    changes = fit_layout(fig, font_px=PRESENT_FONT_PX)
    lay = fig.layout.to_plotly_json()
    kept = changes["yaxis"].get("tickvals", lay["yaxis"]["tickvals"])
    assert changes["width"] is None  # Present mode: the column's width
    plot_h = changes["height"] - changes["margin"]["t"] - changes["margin"]["b"]
    plot_w = PAGE_PX - changes["margin"]["l"] - changes["margin"]["r"]
    cell = min(plot_h, plot_w) / n  # square cells
    gaps = np.diff(kept) if len(kept) > 1 else [n]
    assert min(gaps) * cell >= LINE_EM * PRESENT_FONT_PX - 0.5  # heights are whole px


@pytest.mark.parametrize("n", [6, 20, 33, 40])
def test_present_mode_labels_every_token_of_a_heatmap_up_to_40(n) -> None:
    """In a projector's column, one head's heatmap keeps every label (no thinning), its
    rows at least a line apart and its columns as far apart as their labels need."""
    toks = _words(n, seed=n)
    for queries in (toks, toks[: max(2, n // 2)]):  # square, and fewer queries than keys
        fig = attention_heatmap(softmax_rows((len(queries), n), seed=n), queries, toks)
        changes = fit_layout(fig, font_px=PRESENT_FONT_PX, page_px=PRESENT_PAGE_PX)
        assert "tickvals" not in changes.get("xaxis", {})
        assert "tickvals" not in changes.get("yaxis", {})
        m = changes["margin"]
        cell = min((changes["height"] - m["t"] - m["b"]) / len(queries),
                   (PRESENT_PAGE_PX - m["l"] - m["r"]) / n)  # square cells
        assert cell >= LINE_EM * PRESENT_FONT_PX - 0.5


@pytest.mark.parametrize("bad", [{"font_px": 0}, {"page_px": -5}])
def test_bad_sizes_are_refused(bad) -> None:
    fig = attention_heatmap(softmax_rows((3, 3)), _words(3), _words(3))
    with pytest.raises(ValueError, match="positive number of pixels"):
        fit_layout(fig, **bad)


def test_present_mode_writes_a_broken_title_on_as_few_lines_as_the_column_needs():
    from viz.axes import TITLE_LINE_HEIGHT, title_px

    long = "Encoder self-attention on the tokens both sentences share: B minus A (layer 0)"
    fig = attention_heatmap(np.full((2, 2), 0.5), ["a", "b"], ["x", "y"], title=long)
    assert fig.layout.title.text.count("<br>") == 1  # broken for a laptop's half page
    scale = PRESENT_FONT_PX / fig.layout.font.size
    assert title_px(long) * scale < PRESENT_PAGE_PX
    wide = fit_layout(fig, font_px=PRESENT_FONT_PX, page_px=PRESENT_PAGE_PX)
    assert wide["title"]["text"] == long  # one line fits the projector's column
    kept = fit_layout(fig, font_px=PRESENT_FONT_PX, page_px=700)
    assert kept["title"]["text"] == fig.layout.title.text  # two lines still needed
    assert abs(kept["margin"]["t"] - wide["margin"]["t"] - TITLE_LINE_HEIGHT * scale) <= 1


@pytest.mark.parametrize("n, page_px", [(20, 1100), (33, 1200), (40, PRESENT_PAGE_PX),
                                        (60, PRESENT_PAGE_PX)])
def test_present_mode_turns_two_line_labels_into_one_upright_line(n, page_px) -> None:
    """Chinese keys with their pinyin ("我\\nwǒ", drawn on two lines) that do not fit side by
    side are turned
    upright with their two lines joined: a column with a line of room per token keeps
    every one (33 in a 1280-px projector's column, the sidebar folded; 40 in a 1920-px
    one's); a narrower one keeps every k-th, still one line each and a line apart."""
    keys = [f"{ch}\n{py}" for ch, py in zip("我们为什么工作学校老师今天明天书" * 4,
                                              ["wǒ", "men", "wèi", "shén", "me", "gōng", "zuò",
                                               "xué", "xiào", "lǎo", "shī", "jīn", "tiān", "míng",
                                               "tiān", "shū"] * 4, strict=True)][:n]
    heads = [f"head {h}" for h in range(1, 9)]
    fig = attention_heatmap(softmax_rows((8, n), seed=n), heads, keys)
    changes = fit_layout(fig, font_px=PRESENT_FONT_PX, page_px=page_px)
    x, m = changes["xaxis"], changes["margin"]
    room = (page_px - m["l"] - m["r"]) / n  # px a token
    kept = x.get("tickvals", list(range(n)))
    assert x["tickangle"] == -90
    assert x["ticktext"] == [keys[i].replace("\n", " ") for i in kept]  # one line each
    assert (kept == list(range(n))) == (room >= LINE_EM * PRESENT_FONT_PX - 0.5)
    assert min(np.diff(kept)) * room >= LINE_EM * PRESENT_FONT_PX - 0.5
    assert n > 40 or kept == list(range(n))  # up to 40 in these columns: every one
