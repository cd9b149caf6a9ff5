"""Hugging Face encoder-decoder models in a real browser.

Tiny random-weight models (``testkit/hf_tiny.py``): a T5 and a Marian model put into a
Hugging Face cache of this module's own (the server's ``HF_HUB_CACHE``) and picked in the
sidebar by their hub name ("org/name", also their id in links), and a BART folder opened
by typing its path into the "Model folder" box. Each draws every view with no error in
English and in 简体中文, steps through its decoding, and shows its positions as its family
encodes them (T5: the learned relative-position bias; Marian: a sinusoidal table, sines in
the first half of the dimensions and cosines in the second).

The expected source tokens come from the model's own tokenizer, never from a run; nothing is
asserted about what the random weights translate to.
"""

from __future__ import annotations

import re
from contextlib import ExitStack

import pytest

from model import load_pretrained
from testkit.harness import CJK, chart, streamlit_server, tick_labels
from testkit.hf_tiny import tiny_folder, to_hf_cache
from tests.browser.test_browser import ATTENTION_TABS, PE
from ui.i18n import STRINGS, VIEW_KEYS, VIEWS

SENTENCE = "My mother is a doctor."
HUB = {"t5": "tiny-org/t5-tiny", "marian": "tiny-org/marian-tiny"}  # family -> repo id
FOLDER_OPTION = "📂 Open a folder…"
# The sentence box's label for a model whose name says no languages (the tiny models' names
# don't; an OPUS-MT name does: ``hf.pair_of``).
BOX = STRINGS["sentence_other"]["en"]
BIAS = "Relative-position bias added to the scores, head"
CURVES = "Positional encoding by dimension"

#: ``(title) => the z matrix (rows of numbers) of the Plotly chart whose title starts with
#: title``, or null. Plotly keeps a NumPy array as ``{dtype, bdata (base64), shape}``.
Z_JS = """
(title) => {
  const types = {f4: Float32Array, f8: Float64Array, i1: Int8Array, u1: Uint8Array,
                 i2: Int16Array, u2: Uint16Array, i4: Int32Array, u4: Uint32Array};
  for (const c of document.querySelectorAll("[data-testid='stPlotlyChart']")) {
    const t = c.querySelector('.gtitle');
    const plot = c.querySelector('.js-plotly-plot');
    if (!(t && t.textContent.startsWith(title) && plot && plot.data)) continue;
    const z = plot.data[0].z;
    if (Array.isArray(z)) return z.map((row) => Array.from(row));
    const bytes = Uint8Array.from(atob(z.bdata), (ch) => ch.charCodeAt(0));
    const flat = Array.from(new types[z.dtype](bytes.buffer));
    const [rows, cols] = String(z.shape).split(',').map(Number);
    return Array.from({length: rows}, (_, i) => flat.slice(i * cols, (i + 1) * cols));
  }
  return null;
}
"""


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict:
    """The tiny T5, Marian, BART, Chinese byte-level BART and mBART folders (built once per
    test session)."""
    return {family: tiny_folder(family, tmp_path_factory)
            for family in ("t5", "marian", "bart", "bart-zh", "mbart-zh")}


@pytest.fixture(scope="module")
def app_server(folders, tmp_path_factory):
    """Overrides conftest's server for this module: a ``streamlit run app.py`` whose Hugging
    Face cache (``HF_HUB_CACHE``) holds the tiny T5 and Marian models as ``HUB`` names."""
    cache = tmp_path_factory.mktemp("hf-hub-browser")
    for family, repo in HUB.items():
        to_hf_cache(folders[family], cache, repo)
    with ExitStack() as stack:
        with pytest.MonkeyPatch.context() as env:  # the server inherits it; we don't keep it
            env.setenv("HF_HUB_CACHE", str(cache))
            try:
                server = stack.enter_context(streamlit_server(timeout=60))
            except RuntimeError as exc:
                pytest.fail(str(exc), pytrace=False)
        yield server


@pytest.fixture(scope="module")
def source_labels(folders) -> dict:
    """family -> the sentence's source-token labels, from the model's own tokenizer."""
    return {family: list(load_pretrained(folder).generate(SENTENCE, max_new_tokens=1).src_labels)
            for family, folder in folders.items()}


def z_matrix(app, title: str) -> list[list[float]]:
    z = app.page.evaluate(Z_JS, title)
    assert z, f"no chart titled {title!r} with data"
    return z


def pick_hub_model(app, family: str, source: list[str]) -> dict:
    """Pick the family's cached model by its hub name and type the sentence."""
    label = HUB[family]
    options = app.options("Model")
    assert label in options and options[-1] == FOLDER_OPTION, options
    app.select("Model", label, stepOf="Step 1 of ", titles=["Step 1, layer"])
    return app.enter_sentence(SENTENCE, box_label=BOX, source=source, stepOf="Step 1 of ",
                              titles=["Step 1, layer"])


def switch_to_chinese(app) -> dict:
    radio = app.page.locator("[data-testid='stSidebar']").get_by_text("简体中文", exact=True)
    snap = app.act(radio.click, minCharts=2)
    tabs = app.views()
    assert len(tabs) == len(VIEWS) and all(CJK.search(t) for t in tabs), tabs
    return snap


@pytest.mark.parametrize("family", ["t5", "marian"])
def test_cached_model_draws_every_view_in_english_and_chinese(app, family, source_labels):
    """Picked from the Hugging Face cache by its hub name, the model decodes the sentence as
    its own tokenizer splits it; every view draws its figures with no error, the attention
    maps over this sentence's tokens; after switching to 简体中文 the same model stays picked
    and every view draws again."""
    source = source_labels[family]
    snap = pick_hub_model(app, family, source)
    start = snap["decoderInput"]
    assert start and len(start) == 1, start
    seen = []
    for name, _snap in app.each_view():
        seen.append(name)
        if name in ATTENTION_TABS:
            keys = start if name == "Decoder self-attention" else source
            queries = source if name == "Encoder self-attention" else start
            inputs = (lambda y: set(y)) if name == "Encoder self-attention" else (
                lambda y: {r.split(" → ")[0] for r in y})  # a decoder-side row: input → output
            app.wait_ticks(f"{name}, layer 1, all heads",
                           lambda x, y, k=keys, q=queries, read=inputs:
                           set(x) == set(k) and read(y) == set(q))
    assert seen == [STRINGS[VIEW_KEYS[v]]["en"] for v in VIEWS], seen  # labels, in order

    switch_to_chinese(app)
    assert app.combobox("模型").input_value() == HUB[family]
    sentence = app.page.get_by_role("textbox", name=STRINGS["sentence_other"]["zh"], exact=True)
    assert sentence.input_value() == SENTENCE
    for name, _ in app.each_view():
        panel = app.panel()
        assert CJK.search(panel.inner_text()), f"{name}: no Chinese text in the panel"
    app.screenshot(f"hf-{family}-zh")


def test_t5_positions_are_a_relative_bias_whose_head_survives_a_language_switch(
        app, source_labels):
    """T5 adds no position vectors: the Positional encoding view shows the learned bias one
    head adds to the scores, over the sentence's tokens, the same on every diagonal (it
    depends only on the distance j - i). The head picked for it stays picked, shown in the
    new language, after switching to 简体中文 and stepping on."""
    source = source_labels["t5"]
    pick_hub_model(app, "t5", source)
    snap = app.open_view("Positional encoding", titles=[BIAS], panelMin=1)
    assert not [c for c in snap["charts"] if c["title"].startswith(PE)], "T5 has no PE table"
    x, y = app.wait_ticks(BIAS, lambda x, y: set(x) == set(y) == set(source))
    z = z_matrix(app, BIAS)
    n = len(source)
    assert len(z) == n and all(len(row) == n for row in z)
    for d in range(-(n - 1), n):
        diagonal = [z[i][i + d] for i in range(n) if 0 <= i + d < n]
        assert max(diagonal) - min(diagonal) < 1e-5, (d, diagonal)
    assert len({round(v, 5) for row in z for v in row}) > 1, "the bias is one constant"
    app.select("Head", "Head 2", in_tab=True, titles=[f"{BIAS} 2"])
    switch_to_chinese(app)
    app.screenshot("hf-t5-relative-bias")
    app.click_button("下一步 ▶", minCharts=2)
    assert app.combobox("注意力头", in_tab=True).input_value() == "第 2 个头"
    assert chart(app.snapshot(), "加到注意力分数上的相对位置偏置")["title"].endswith("第 2 个头")


def test_marian_positions_are_a_sinusoidal_table(app, source_labels):
    """Marian adds a sinusoidal table: the heatmap shows one row per source token (sines in
    the first half of the dimensions, cosines in the second: position 1, pos = 0 in the
    formula, is 0 ... 0 1 ... 1)
    and the curves of chosen dimensions are drawn; no relative bias."""
    source = source_labels["marian"]
    pick_hub_model(app, "marian", source)
    snap = app.open_view("Positional encoding", titles=[PE, CURVES], panelMin=2)
    assert not [c for c in snap["charts"] if c["title"].startswith(BIAS)]
    assert chart(snap, PE)["title"].endswith("(d_model = 32)")
    app.wait_ticks(PE, lambda x, y: y == [f"{i}: {t}" for i, t in enumerate(source, start=1)])
    z = z_matrix(app, PE)
    assert len(z) == len(source)
    half = len(z[0]) // 2
    assert z[0] == pytest.approx([0.0] * half + [1.0] * half, abs=1e-5), z[0]
    assert z[1][:half] != pytest.approx(z[0][:half], abs=1e-3)  # positions differ
    app.screenshot("hf-marian-positional")


def test_bart_folder_by_path_decodes_and_steps(app, folders, source_labels):
    """"Open a folder…" and typing the BART folder's path decodes the sentence; Next, the
    step slider and Previous move the step, and the cross-attention map redraws with one
    query row per decoder input token so far."""
    source = source_labels["bart"]
    open_folder(app, folders["bart"])
    snap = app.enter_sentence(SENTENCE, box_label=BOX, source=source, stepOf="Step 1 of ",
                              titles=["Step 1, layer"])
    total = int(snap["step"].split()[-1])
    assert total >= 3, snap["step"]
    start = snap["decoderInput"]
    assert start == ["</s>"], start  # BART starts decoding from </s>
    cross = "Cross-attention, layer 1, all heads"
    app.open_view("Cross-attention", titles=[cross], panelCharts=1, rows={"title": cross, "n": 1})

    snap = app.click_button("Next ▶", step=f"Step 2 of {total}", slider=2,
                            rows={"title": cross, "n": 2})
    assert snap["slider"]["value"] == 2 and snap["decoderInput"][:1] == start
    assert len(snap["decoderInput"]) == 2
    app.wait_ticks(cross, lambda x, y: set(x) == set(source)
                   and y[0].split(" → ")[0] == start[0])  # a row reads input → output

    snap = app.slider_key("End", step=f"Step {total} of {total}", slider=total,
                          rows={"title": cross, "n": total})
    assert snap["slider"]["value"] == total and len(snap["decoderInput"]) == total
    assert app.page.get_by_role("button", name="Next ▶", exact=True).is_disabled()
    snap = app.click_button("◀ Previous", step=f"Step {total - 1} of {total}",
                            slider=total - 1, rows={"title": cross, "n": total - 1})
    assert snap["slider"]["value"] == total - 1
    app.screenshot("hf-bart-folder")


# What a raw tokenizer piece shows and a reader's label never does: SentencePiece's word
# start, and GPT-2's byte alphabet (bytes 0x80-0xff drawn as Latin-1 and Latin Extended-A
# letters: 今 is "ä»Ĭ").
RAW_PIECE = re.compile("[\u2581\u00a1-\u017f]")


def open_folder(app, folder) -> None:
    app.select("Model", FOLDER_OPTION, charts=0)
    box = app.page.get_by_role("textbox", name="Model folder", exact=True)

    def type_path():
        box.fill(str(folder))
        box.press("Enter")

    app.act(type_path, stepOf="Step 1 of ", titles=["Step 1, layer"])


@pytest.mark.parametrize("family", ["bart-zh", "mbart-zh", "marian"])
def test_target_tokens_read_as_text_on_every_axis(app, folders, source_labels, family):
    """At the last step, every view's axes and the step panel show the decoder inputs as
    the model's labels (``Target.labels``, equal to the tokenizer's own text of each token:
    tests/test_hf.py): Chinese characters, bytes of a partial character as ⟨e4 bb⟩, never
    a raw piece (``▁`` or byte-level letters)."""
    trace = load_pretrained(folders[family]).generate(SENTENCE)
    if family == "marian":
        pick_hub_model(app, "marian", source_labels["marian"])
    else:
        open_folder(app, folders[family])
        app.enter_sentence(SENTENCE, box_label=BOX, stepOf="Step 1 of ",
                           titles=["Step 1, layer"])
    shown = [*trace.tgt_tokens, *trace.steps[-1].top_tokens]  # the last step's page: raw
    assert any(RAW_PIECE.search(tok) for tok in shown), shown  # pieces that need a label
    total = len(trace.steps)
    snap = app.click_button("Last", step=f"Step {total} of {total}")
    assert snap["decoderInput"] == list(trace.decoder_input_labels)
    seen = set(snap["decoderInput"])
    for name, _ in app.each_view():
        labels = tick_labels(app.snapshot())
        seen |= labels
        raw = sorted(x for x in labels if RAW_PIECE.search(x))
        assert not raw, (name, raw)
    assert set(trace.decoder_input_labels) <= seen  # the decoder side was drawn
    app.screenshot(f"hf-{family}-labels")
