"""The Side by side view (ui.views.side_by_side) in AppTest, on the shipped models: both
translations are the models' own, every map and every number of its text is computed from
the two decodings, a second model works, the link keeps both, and a hostile second sentence
or model gets a message, in English and Chinese."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import APP, heatmaps, markdown_sources, messages, unescape, z_array
from pair_checks import first_pair, where_they_part
from shipped import model_of, trace_of
from streamlit.testing.v1 import AppTest

from model import DecodeTrace
from model.analysis.compare import changed_tokens, difference, first_difference, shared_tokens
from ui import pairs
from ui.i18n import STRINGS
from ui.text import md_literal
from ui.views import side_by_side as S

# A minimal pair the Illustrated Transformer made famous (which noun does "it" attend to?):
# two sentences typed into the boxes, whether or not the model translates them right.
A, B = ("The animal didn't cross the street because it was too tired.",
        "The animal didn't cross the street because it was too wide.")
MODEL = "en-zh-everyday"


def _open(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for name, value in {"view": "compare", **params}.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, at.exception
    return at


def test_pure_helpers_on_constructed_input():
    assert shared_tokens("a b c d".split(), "a x c d".split()) == [(0, 0), (2, 2), (3, 3)]
    assert changed_tokens("a b c d".split(), "a x c d e".split()) == [1, 4]
    assert first_difference(["我", "们"], ["我", "们"]) is None
    assert first_difference(["我", "们"], ["我", "你"]) == 1
    assert first_difference(["我"], ["我", "们"]) == 1
    a, b = np.arange(9.0).reshape(3, 3), np.arange(16.0).reshape(4, 4)
    diff = difference(a, b, [(0, 0), (2, 3)])
    assert diff.tolist() == [[b[0, 0] - a[0, 0], b[0, 3] - a[0, 2]],
                             [b[3, 0] - a[2, 0], b[3, 3] - a[2, 2]]]


def _trace(ids: list[int], labels: list[str], tokens: list[str] | None = None) -> DecodeTrace:
    """A decoding of the given target ids and labels (``<s>`` first), no attention."""
    z = np.zeros((1, 1, len(ids) - 1, 1), np.float32)
    return DecodeTrace(src_text="x", src_tokens=("x",), tgt_tokens=tuple(tokens or labels),
                       tgt_ids=np.array(ids, np.int64), steps=(), encoder_attentions=z,
                       decoder_attentions=z, cross_attentions=z, step_probs=z[0, 0],
                       finished=True, tgt_labels=tuple(labels))


def test_where_two_decodings_part_is_decided_by_ids_never_by_labels():
    # The review's case: one model, both write 都 (id 17) at step 7, its label read dū in
    # one sentence and dōu in the other; they part at step 8 (去 or 来).
    ids_a, ids_b = [0, 11, 12, 13, 14, 15, 16, 17, 18, 3], [0, 11, 12, 13, 14, 15, 16, 17, 28, 3]
    a = _trace(ids_a, ["<s>", *"我们每天早上", "都\ndū", "去", "</s>"])
    b = _trace(ids_b, ["<s>", *"我们每天早上", "都\ndōu", "来", "</s>"])
    assert first_difference(list(a.tgt_labels[1:]), list(b.tgt_labels[1:])) == 6  # labels: 7
    assert S.parting_step(a, b, same_model=True) == 7  # step 8
    # Equal labels, different ids (two pieces read alike): they part there.
    c = _trace([0, 11, 12, 99, 3], ["<s>", "我", "们", "都", "</s>"])
    d = _trace([0, 11, 12, 13, 3], ["<s>", "我", "们", "都", "</s>"])
    assert S.parting_step(c, d, same_model=True) == 2
    assert S.parting_step(c, c, same_model=True) is None
    assert S.parting_step(c, _trace([0, 11, 12], ["<s>", "我", "们"]), same_model=True) == 2
    # Two models: ids of two vocabularies say nothing; their tokens are compared.
    e = _trace([5, 7, 9, 1], ["<s>", "我", "都\ndū", "</s>"], ["<s>", "▁我", "都", "</s>"])
    f = _trace([0, 7, 9, 3], ["<s>", "我", "都\ndōu", "</s>"], ["<s>", "▁我", "都", "</s>"])
    assert S.parting_step(e, f, same_model=False) is None
    assert S.parting_step(e, f, same_model=True) == 2  # the end tokens' ids differ


def _source(labels: list[str], words: list[int]) -> DecodeTrace:
    """A decoding of a source with the given labels and word indices, nothing generated."""
    z = np.zeros((1, 1, 1, len(labels)), np.float32)
    return DecodeTrace(src_text="x", src_tokens=tuple(labels), tgt_tokens=("<s>",),
                       tgt_ids=np.array([0], np.int64), steps=(), encoder_attentions=z,
                       decoder_attentions=z, cross_attentions=z, step_probs=z[0, 0],
                       finished=True, src_words=tuple(words))


def test_the_changed_word_is_found_by_the_words_text_never_by_a_reading():
    # 我们都去 / 我们都来 with the pinyin switch on: 都 is read dū in one and dōu in the other.
    a = _source(["我\nwǒ", "们\nmen", "都\ndū", "去\nqù", "。"], [0, 0, 1, 2, 3])
    b = _source(["我\nwǒ", "们\nmen", "都\ndōu", "来\nlái", "。"], [0, 0, 1, 2, 3])
    assert pairs.changed_word(a, b) == 2
    assert pairs.source_words(b)[2] == "来\nlái" and pairs.word_text("来\nlái") == "来"
    assert pairs.changed_word(a, a) is None  # nothing changed
    two = _source(["我", "们", "也", "来", "。"], [0, 0, 1, 2, 3])  # 都 -> 也 and 去 -> 来
    assert pairs.changed_word(a, two) is None
    longer = _source(["我", "们", "都", "去", "吗", "。"], [0, 0, 1, 2, 3, 4])
    assert pairs.changed_word(a, longer) is None
    stop = _source(["我", "们", "都", "去", "！"], [0, 0, 1, 2, 3])  # only the punctuation
    assert pairs.changed_word(a, stop) is None


def _page_of_a_model_reading_german() -> None:
    """The Side by side view's offer for a model that reads German, a language the app has
    no minimal pairs in (a stand-in with the one field the offer reads: no model runs)."""
    from types import SimpleNamespace

    from model import GenerationSettings
    from ui.views import side_by_side

    reads_german = SimpleNamespace(info=SimpleNamespace(source_language="de"))
    side_by_side.offer_pair(reads_german, (), GenerationSettings())


def test_a_model_with_no_pair_gets_a_short_caption_and_no_button():
    at = AppTest.from_function(_page_of_a_model_reading_german).run()
    assert not at.exception and not at.button
    assert [c.value for c in at.caption] == [STRINGS["compare_no_pair"]["en"]]
    assert STRINGS["compare_no_pair"]["zh"]


def test_a_minimal_pair_side_by_side_is_the_models_own():
    at = _open(sentence=A, compare=B)
    m = model_of(MODEL)
    ta, tb = m.generate(A), m.generate(B)
    text = "\n".join(unescape(s) for s in markdown_sources(at))
    assert f"### {ta.output_text}" in text and f"### {tb.output_text}" in text
    out_a, out_b = ta.tgt_ids[1:].tolist(), tb.tgt_ids[1:].tolist()
    i = first_difference(out_a, out_b)
    assert i is not None  # the pair parts somewhere
    assert STRINGS["compare_first_diff"]["en"].split("{k}")[0] + str(i) in text
    enc = heatmaps(at, "Encoder self-attention, Layer 1")
    np.testing.assert_allclose(z_array(enc[0]), ta.encoder_attentions[0].mean(0), atol=1e-6)
    np.testing.assert_allclose(z_array(enc[1]), tb.encoder_attentions[0].mean(0), atol=1e-6)
    cross = heatmaps(at, "Cross-attention, Layer 1")
    np.testing.assert_allclose(z_array(cross[1]), tb.cross_attentions[0].mean(0), atol=1e-6)
    pairs = shared_tokens(ta.src_ids.tolist(), tb.src_ids.tolist())  # by ids, one model
    diff = difference(ta.encoder_attentions[0].mean(0), tb.encoder_attentions[0].mean(0), pairs)
    (shown,) = heatmaps(at, "Encoder self-attention on the tokens both")
    np.testing.assert_allclose(z_array(shown), diff, atol=1e-6)
    p, q = np.unravel_index(int(np.abs(diff).argmax()), diff.shape)
    (ia, ib), (ja, jb) = pairs[p], pairs[q]
    claim = next(c.value for c in at.caption if c.value.startswith("The largest change"))
    assert f"{ta.encoder_attentions[0].mean(0)[ia, ja]:.2f} in A" in claim
    assert f"{tb.encoder_attentions[0].mean(0)[ib, jb]:.2f} in B" in claim
    forced = m.teacher_force(B, tuple(ta.tgt_tokens[1:]))
    (table,) = at.dataframe
    np.testing.assert_allclose(table.value.iloc[:, 1], [s.prob for s in ta.steps], atol=1e-6)
    np.testing.assert_allclose(table.value.iloc[:, 2],
                               [s.prob for s in forced.steps][:len(ta.steps)], atol=1e-6)
    at.selectbox(key=S.HEAD_KEY).select(3).run()  # one head: its own maps
    assert not at.exception
    enc = heatmaps(at, "Encoder self-attention, Layer 1")
    np.testing.assert_allclose(z_array(enc[1]), tb.encoder_attentions[0, 3], atol=1e-6)


def test_one_sentence_on_a_second_model():
    sentence = "why do we work ?"
    at = _open(sentence=sentence, model="en-zh", compare_model="en-zh-small")
    text = "\n".join(unescape(s) for s in markdown_sources(at))
    for name in ("en-zh", "en-zh-small"):
        assert f"### {trace_of(name, sentence).output_text}" in text
        assert f"· {name}: {sentence}" in text
    assert not at.dataframe  # the teacher-forced table is for one model only


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_without_a_second_sentence_the_lessons_pair_opens_as_a_and_b_and_says_where_they_part(
        lang):
    at = _open(lang=lang, sentence="Why do we work?", pinyin="false")  # one's own sentence
    assert STRINGS["compare_hint"][lang] in messages(at)
    pair = first_pair(model_of(MODEL), lambda x: trace_of(MODEL, x))
    assert pair is not None and pair != (A, B)  # the model translates "…too wide." wrong
    button = at.button(key="compare_example")
    assert md_literal(pair[0]) in button.label and md_literal(pair[1]) in button.label
    button.click().run()
    assert not at.exception
    assert (at.text_input(key="sentence").value, at.text_input(key=S.SENTENCE_KEY).value) == pair
    assert len(heatmaps(at, STRINGS["tab_encoder"][lang])) >= 2
    said = where_they_part(*(trace_of(MODEL, x) for x in pair), lang)
    assert said in [unescape(s) for s in markdown_sources(at)]


@pytest.mark.parametrize("second", ["x" * (S.MAX_CHARS + 1), "<b>bold</b> <script>1</script>",
                                    "   ", "???"])
def test_a_hostile_second_sentence_gets_a_message_never_a_traceback(second):
    at = _open(sentence="why do we work ?", compare=second)
    assert not at.exception
    if len(second) > S.MAX_CHARS:
        assert "characters" in messages(at)
    assert not any("<b>" in s and "\\<b" not in s for s in markdown_sources(at)
                   if "bold" in s)  # the markup is escaped, shown as text


def test_a_links_unknown_second_model_falls_back_to_the_same_model():
    at = _open(compare="why do we work ?", compare_model="no-such-model")
    assert at.selectbox(key=S.MODEL_KEY).value == S.SAME
