"""Every view on both shipped directions (issue 46): English -> Chinese (``en-zh-everyday``)
and Chinese -> English (``zh-en-everyday``), each on one typed sentence, driven by AppTest
with the real app and model. Each view runs without an exception or an error box, and the
tokens its figures label are the decoding's own (``DecodeTrace.src_labels``, the decoder
inputs and the steps' labels), with or without a pinyin second line; the sentences a view
offers (the padded batch, the Side by side pair) are in the model's source language; a link
keeps a Chinese model and sentence in either interface language.

Nothing here expects a translation or copies a number: every expected label comes from the
model itself (``load_pretrained(...).generate``), so the tests hold for any model of each
direction. One AppTest per model is shared by the view tests (``opened``)."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

import pytest
from apptest_helpers import (
    APP,
    chart_title,
    charts,
    heading,
    markdown_sources,
    message_list,
    unescape,
)
from pair_checks import first_pair, where_they_part
from shipped import model_of, trace_of
from streamlit.testing.v1 import AppTest

from model import DecodeTrace, Translator, decode_batch
from model.analysis.words import group_labels
from ui.charts import PRESENT_KEY
from ui.i18n import KIND_VIEWS, STRINGS, VIEWS
from ui.stepper import GROUP_KEY
from ui.text import md_literal
from ui.views import teaching

# (model, a sentence typed in its source language)
DIRECTIONS = [("en-zh-everyday", "Why do we work?"), ("zh-en-everyday", "我们为什么工作？")]
SECOND = {"en": "Why do we study?", "zh": "我们为什么学习？"}  # Side by side's sentence B
STEP = 2  # the step the views are opened at (the last one for a shorter decoding)
PAD = 2  # the Masks view's padding by hand (its slider's default)

HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
# A pinyin second line as an axis shows it: under a Chinese token on an x axis ("<br>"),
# beside it on a y axis (" "), syllables apart by spaces (``viz.axes.token_axis``).
PINYIN = re.compile(r"(?<=[\u3400-\u4dbf\u4e00-\u9fff])(?:<br>| )"
                    r"[a-zA-Zāáǎàēéěèīíǐìōóǒòūúǔùǖǘǚǜüêńňǹḿ]+"
                    r"(?: [a-zA-Zāáǎàēéěèīíǐìōóǒòūúǔùǖǘǚǜüêńňǹḿ]+)*")


@dataclass(frozen=True)
class Opened:
    """One model's page and what the model itself gives for the same sentence."""

    at: AppTest
    translator: Translator
    trace: DecodeTrace
    k: int  # the step the page shows

    @property
    def src(self) -> list[str]:
        return list(self.trace.src_labels)

    @property
    def inputs(self) -> list[str]:  # the decoder inputs up to step k
        return list(self.trace.decoder_input_labels[: self.k])

    @property
    def steps(self) -> list[str]:  # the steps up to k, as rows read ("<s> → We")
        return list(self.trace.step_labels[: self.k])


def _open(**params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    _ok(at)
    return at


def _ok(at: AppTest, what: object = "") -> None:
    assert not at.exception, (what, at.exception)
    assert not at.error, (what, [e.value for e in at.error])


@pytest.fixture(scope="module", params=DIRECTIONS, ids=[name for name, _ in DIRECTIONS])
def opened(request) -> Opened:
    name, sentence = request.param
    at = _open(model=name, sentence=sentence)
    translator = model_of(name)
    trace = trace_of(name, sentence)  # the app's default settings: greedy
    assert heading(at) == trace.output_text  # the page decodes what the model decodes
    k = min(STEP, len(trace.steps))
    at.session_state["step"] = k
    return Opened(at, translator, trace, k)


def _show(o: Opened, view: str, **state) -> list[dict]:
    """Open ``view`` (with ``state``: session-state values) and return its charts."""
    o.at.session_state["view"] = view
    for key, value in state.items():
        o.at.session_state[key] = value
    o.at.run()
    _ok(o.at, view)
    return charts(o.at)


def _read(tick: str) -> str:
    """A tick label as the trace's label: unescaped, its pinyin second line left out."""
    return html.unescape(PINYIN.sub("", tick))


def _ticks(fig: dict, axis: str) -> list[str]:
    return [_read(t) for t in fig["layout"][axis]["ticktext"]]


def _figure(figs: list[dict], title_starts: str) -> dict:
    found = [f for f in figs if chart_title(f).startswith(title_starts)]
    assert found, (title_starts, [chart_title(f) for f in figs])
    return found[0]


def _labels(figs: list[dict], title_starts: str, *, x: list[str], y: list[str] | None = None
            ) -> None:
    """The figure titled ``title_starts...`` labels its x axis ``x`` and its y axis ``y``
    (a grid of heads repeats them under each column and beside each row of panels)."""
    fig = _figure(figs, title_starts)
    for axis, want in (("xaxis", x), ("yaxis", y)):
        if want is None:
            continue
        got = _ticks(fig, axis)
        assert got and len(got) % len(want) == 0, (title_starts, axis, got, want)
        assert got == want * (len(got) // len(want)), (title_starts, axis, got, want)


def _step_figure(o: Opened, figs: list[dict], source: list[str]) -> None:
    """The step's overview: the top candidates, then [source tokens | decoder inputs]."""
    fig = _figure(figs, f"Step {o.k}, layer 1")
    assert _ticks(fig, "xaxis2") == source + o.inputs
    assert _ticks(fig, "yaxis") == list(o.trace.steps[o.k - 1].top_labels)


# -- every view ------------------------------------------------------------------------------


def test_every_view_is_listed_here():
    assert set(VIEWS) == {"positional", "masks", "encoder", "decoder", "cross", "inside",
                          "heads", "attribution", "compare"}


def test_positional_encoding(opened):
    figs = _show(opened, "positional")
    _step_figure(opened, figs, opened.src)
    fig = _figure(figs, "Positional encoding added to the source sentence")
    assert [re.sub(r"^\d+: ", "", t) for t in _ticks(fig, "yaxis")] == opened.src
    _labels(figs, "PE(i) · PE(j)", x=opened.src, y=opened.src)
    assert _ticks(_figure(figs, "Token embedding"), "yaxis") == opened.src


def test_masks_and_the_padded_batch(opened):
    figs = _show(opened, "masks")
    pads = ["<pad>"] * PAD
    src, dec = opened.src + pads, opened.inputs + pads
    _labels(figs, "Source padding mask (key_padding_mask)", x=src)
    _labels(figs, "Encoder self-attention mask", x=src, y=src)
    _labels(figs, "Cross-attention (memory) mask", x=src, y=dec)
    _labels(figs, "Look-ahead mask", x=dec, y=dec)
    lang = opened.translator.info.source_language
    texts = teaching.DEFAULT_BATCHES[lang].splitlines()
    assert all(_script(text) == lang for text in texts)  # sentences the model reads
    batch = decode_batch(opened.translator, texts)
    first_src, first_tgt = list(batch.src_labels[0]), list(batch.tgt_labels[0])
    _labels(figs, "Source padding mask (encoder)", x=first_src, y=first_src)
    _labels(figs, "Cross-attention in the batch", x=first_src, y=first_tgt)
    assert not any("differ" in m for m in message_list(opened.at))  # batch = alone


def test_the_three_attention_views_on_all_heads_and_on_one(opened):
    o = opened
    for view, x, y in (("encoder", o.src, o.src), ("decoder", o.inputs, o.steps),
                       ("cross", o.src, o.steps)):
        label = {"encoder": "Encoder self-attention", "decoder": "Decoder self-attention",
                 "cross": "Cross-attention"}[view]
        figs = _show(o, view, **{f"{view}_head": "all"})
        _step_figure(o, figs, o.src)
        _labels(figs, f"{label}, layer 1, all heads", x=x, y=y)
        figs = _show(o, view, **{f"{view}_head": 1})
        _labels(figs, f"{label}, layer 1, head 2", x=x, y=y)
        o.at.session_state[f"{view}_head"] = "all"


def test_inside_one_head(opened):
    o = opened
    figs = _show(o, "inside", ih_kind="encoder")
    for title in ("Q Kᵀ", "Masked scores", "Attention weights A"):
        _labels(figs, title, x=o.src, y=o.src)
    assert _ticks(_figure(figs, "Q ("), "yaxis") == o.src
    figs = _show(o, "inside", ih_kind="cross")
    _labels(figs, "Attention weights A", x=o.src, y=o.inputs)
    o.at.session_state["ih_kind"] = "encoder"


def test_heads(opened):
    o = opened
    figs = _show(o, "heads", lines_kind="cross")
    _labels(figs, "Encoder: attention rollout", x=o.src, y=o.src)
    _labels(figs, "Decoder: how much each source token", x=o.src, y=o.inputs)
    lines = _figure(figs, "Cross-attention, layer 1: every head's attention as lines")
    assert [_read(t) for t in lines["data"][0]["text"]] == o.inputs  # queries, left
    assert [_read(t) for t in lines["data"][1]["text"]] == o.src  # keys, right
    assert _figure(figs, "Encoder self-attention: entropy of every head")


def test_attribution(opened):
    o = opened
    figs = _show(o, "attribution")
    steps = list(o.trace.step_labels)  # every step, the current one outlined
    last = o.trace.cross_attentions.shape[0]
    for title in (f"Cross-attention, Layer {last}, mean", f"Value zeroing, Layer {last}",
                  f"Cross-attention, Layer {last}, Head 1", "Gradient × input"):
        _labels(figs, title, x=o.src, y=steps)


def test_side_by_side_alone_opens_the_lessons_pair_as_a_and_b_and_says_where_they_part(opened):
    o = opened
    figs = _show(o, "compare")
    _labels(figs, "Cross-attention, Layer 1, mean", x=o.src, y=list(o.trace.step_labels))
    _labels(figs, "Encoder self-attention, Layer 1, mean", x=o.src, y=o.src)
    name, lang = o.translator.name, o.translator.info.source_language
    pair = first_pair(o.translator, lambda x: trace_of(name, x))  # chapter 10's, found again
    assert pair is not None and [_script(s) for s in pair] == [lang, lang]
    button = o.at.button(key="compare_example")
    assert md_literal(pair[0]) in button.label and md_literal(pair[1]) in button.label
    try:
        button.click().run()  # with one's own sentence loaded
        _ok(o.at)
        assert (o.at.text_input(key="sentence").value,
                o.at.text_input(key="compare").value) == pair
        a, b = (trace_of(name, x) for x in pair)
        assert heading_texts(o.at) >= {a.output_text, b.output_text}
        said = where_they_part(a, b, "en")
        assert said in [_read(unescape(m)) for m in markdown_sources(o.at)]  # readings dropped
    finally:
        o.at.text_input(key="sentence").input(o.trace.src_text)
        o.at.text_input(key="compare").input("").run()
        _ok(o.at)
        o.at.session_state["step"] = o.k  # the new sentence started at step 1


def test_side_by_side_with_a_second_sentence(opened):
    o = opened
    second = SECOND[o.translator.info.source_language]
    b = o.translator.generate(second)
    o.at.text_input(key="compare").input(second)
    try:
        figs = _show(o, "compare")
        for title, rows in (("Cross-attention, Layer 1, mean", "step_labels"),
                            ("Encoder self-attention, Layer 1, mean", "src_labels")):
            a_fig, b_fig = [f for f in figs if chart_title(f).startswith(title)]
            for fig, tr in ((a_fig, o.trace), (b_fig, b)):
                assert _ticks(fig, "xaxis") == list(tr.src_labels)
                assert _ticks(fig, "yaxis") == list(getattr(tr, rows))
        assert heading_texts(o.at) >= {o.trace.output_text, b.output_text}
    finally:
        o.at.text_input(key="compare").input("").run()
        _ok(o.at)


def heading_texts(at: AppTest) -> set[str]:
    """The translations the page writes as ``### ...`` headings (the header's and each Side
    by side column's), as a reader sees them."""
    return {html.unescape(re.sub(r"\\(.)", r"\1", el.value[4:])) for el in at.markdown
            if el.value.startswith("### ")}


def test_grouping_a_words_tokens_on_every_source_axis(opened):
    o = opened
    words = group_labels(o.trace.src_labels, o.trace.src_words)
    o.at.toggle(key=GROUP_KEY).set_value(True)
    try:
        figs = _show(o, "encoder", encoder_head=0)
        _labels(figs, "Encoder self-attention, layer 1, head 1", x=words, y=words)
        _step_figure(o, figs, words)
        figs = _show(o, "cross", cross_head=0)
        _labels(figs, "Cross-attention, layer 1, head 1", x=words, y=o.steps)
    finally:
        o.at.toggle(key=GROUP_KEY).set_value(False)
        o.at.session_state["encoder_head"] = o.at.session_state["cross_head"] = "all"
        o.at.run()
        _ok(o.at)


def test_present_mode_on_every_view(opened):
    o = opened
    o.at.toggle(key=PRESENT_KEY).set_value(True)
    try:
        for view in VIEWS:
            figs = _show(o, view)
            cross = _figure(figs, f"Step {o.k}, layer 1")  # the step's rows, a chart each
            assert _ticks(cross, "xaxis") == o.src, view
            own = _figure(figs, STRINGS["step_self_title"]["en"])
            assert _ticks(own, "xaxis") == o.inputs, view
            if view in KIND_VIEWS:  # the head picked (one head when none was), or the grid
                x = o.inputs if view == "decoder" else o.src
                y = o.src if view == "encoder" else o.steps
                _labels(figs, f"{_view_title(view)}, layer 1, ", x=x, y=y)
    finally:
        o.at.toggle(key=PRESENT_KEY).set_value(False).run()
        for view in KIND_VIEWS:
            o.at.session_state[f"{view}_head"] = "all"
        _ok(o.at)


@pytest.mark.parametrize("name, sentence", DIRECTIONS, ids=[name for name, _ in DIRECTIONS])
def test_every_view_runs_in_the_chinese_interface(name, sentence):
    at = _open(model=name, sentence=sentence, lang="zh")
    for view in VIEWS:
        at.session_state["view"] = view
        at.run()
        _ok(at, view)
        assert charts(at), view


def _view_title(view: str) -> str:
    return {"encoder": "Encoder self-attention", "decoder": "Decoder self-attention",
            "cross": "Cross-attention"}[view]


# -- the model side of what the views show -----------------------------------------------------


def _script(text: str) -> str:
    """"zh" for Chinese text (Han characters, no Latin letters), "en" for Latin letters
    without Han, else "" (both, or neither)."""
    han, latin = bool(HAN.search(text)), bool(re.search(r"[A-Za-z]", text))
    return "zh" if han and not latin else "en" if latin and not han else ""


@pytest.mark.parametrize("name", [name for name, _ in DIRECTIONS])
def test_a_batch_writes_each_sentence_as_the_model_alone_does(name):
    translator = model_of(name)
    texts = teaching.DEFAULT_BATCHES[translator.info.source_language].splitlines()
    batch = decode_batch(translator, texts)
    alone = [translator.generate(text, max_new_tokens=batch.max_new_tokens) for text in texts]
    assert list(batch.output_texts) == [tr.output_text for tr in alone]
    assert [tuple(labels[: len(tr.src_labels)]) for labels, tr in
            zip(batch.src_labels, alone, strict=True)] == [tr.src_labels for tr in alone]


# -- links ------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", [None, "zh"])
def test_a_link_keeps_a_chinese_model_and_sentence_in_either_language(lang):
    name, sentence = DIRECTIONS[1]
    params = {"model": name, "sentence": sentence, **({"lang": lang} if lang else {})}
    at = _open(**params)
    assert at.session_state["lang"] == ("简体中文" if lang else "English")
    assert at.selectbox(key="model").value == name
    assert at.text_input(key="sentence").value == sentence
    trace = trace_of(name, sentence)
    assert heading(at) == trace.output_text
    dropped = STRINGS["link_dropped"]["zh" if lang else "en"].split("{")[0]
    assert not any(w.value.startswith(dropped) for w in at.warning)  # nothing left out
    steps = len(trace.steps)
    for click in range(min(2, steps)):  # as opened, then after a step click (which writes
        if click:  # the link from the stepper's fragment)
            at.button(key="next_step").click().run()
            _ok(at)
        assert at.query_params["model"] in (name, [name]), click
        assert at.query_params["sentence"] in (sentence, [sentence]), click
    reopened = _open(**{k: v if isinstance(v, str) else v[0]
                        for k, v in dict(at.query_params).items()})
    assert reopened.selectbox(key="model").value == name
    assert reopened.text_input(key="sentence").value == sentence
    assert reopened.session_state["step"] == min(2, len(trace.steps))
    assert heading(reopened) == trace.output_text


# -- what a box asks for follows the target language ------------------------------------------


def _reference_box(target_language: str):
    from ui.views import compare

    compare.reference_view(None, None, target_language=target_language)  # empty: no decoding


@pytest.mark.parametrize("target_language, key", [("zh", "reference"), ("en", "reference_en")])
def test_the_reference_box_names_the_target_language(target_language, key):
    """``compare.reference_view`` asks for a reference in the model's target language (the
    page passes ``ModelInfo.target_language``)."""
    at = AppTest.from_function(_reference_box, args=(target_language,))
    at.run()
    _ok(at)
    box = at.text_input(key="reference")
    assert box.label == STRINGS[key]["en"]
    assert box.placeholder == STRINGS[f"reference_placeholder{key[9:]}"]["en"]
    example = box.placeholder.removeprefix("e.g. ")
    assert _script(example) == target_language
