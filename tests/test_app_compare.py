"""The Side by side view (ui.side_by_side) in AppTest, on the shipped models: both
translations are the models' own, every map and every number of its text is computed from
the two decodings, a second model works, the link keeps both, and a hostile second sentence
or model gets a message, in English and Chinese."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import APP, heatmaps, markdown_sources, messages, unescape, z_array
from streamlit.testing.v1 import AppTest

from model import load_pretrained
from model.analysis.compare import changed_tokens, difference, first_difference, shared_tokens
from ui import side_by_side as S
from ui.i18n import STRINGS

A, B = S.EXAMPLE
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


def test_a_minimal_pair_side_by_side_is_the_models_own():
    at = _open(sentence=A, compare=B)
    m = load_pretrained(MODEL)
    ta, tb = m.generate(A), m.generate(B)
    text = "\n".join(unescape(s) for s in markdown_sources(at))
    assert f"### {ta.output_text}" in text and f"### {tb.output_text}" in text
    out_a, out_b = list(ta.tgt_tokens[1:]), list(tb.tgt_tokens[1:])
    i = first_difference(out_a, out_b)
    assert i is not None  # the pair parts somewhere
    assert STRINGS["compare_first_diff"]["en"].split("{k}")[0] + str(i) in text
    enc = heatmaps(at, "Encoder self-attention, Layer 0")
    np.testing.assert_allclose(z_array(enc[0]), ta.encoder_attentions[0].mean(0), atol=1e-6)
    np.testing.assert_allclose(z_array(enc[1]), tb.encoder_attentions[0].mean(0), atol=1e-6)
    cross = heatmaps(at, "Cross-attention, Layer 0")
    np.testing.assert_allclose(z_array(cross[1]), tb.cross_attentions[0].mean(0), atol=1e-6)
    pairs = shared_tokens(ta.src_labels, tb.src_labels)
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
    enc = heatmaps(at, "Encoder self-attention, Layer 0")
    np.testing.assert_allclose(z_array(enc[1]), tb.encoder_attentions[0, 3], atol=1e-6)


def test_one_sentence_on_a_second_model():
    sentence = "why do we work ?"
    at = _open(sentence=sentence, model="en-zh", compare_model="en-zh-small")
    text = "\n".join(unescape(s) for s in markdown_sources(at))
    for name in ("en-zh", "en-zh-small"):
        assert f"### {load_pretrained(name).generate(sentence).output_text}" in text
        assert f"· {name}: {sentence}" in text
    assert not at.dataframe  # the teacher-forced table is for one model only


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_without_a_second_sentence_a_hint_and_an_example_that_fills_both(lang):
    at = _open(lang=lang)
    assert STRINGS["compare_hint"][lang] in messages(at)
    at.button(key="compare_example").click().run()
    assert not at.exception
    assert (at.text_input(key="sentence").value, at.text_input(key=S.SENTENCE_KEY).value) == (A, B)
    assert len(heatmaps(at, STRINGS["tab_encoder"][lang])) >= 2


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
