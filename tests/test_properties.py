"""Property tests (Hypothesis, derandomized so CI is reproducible): whatever text reaches the
shipped model's ``decode``, it either refuses it with ``InputError`` or returns a trace whose
attention maps are proper distributions. These hold for any weights, trained or not.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model import InputError
from model.backends.translator import MAX_INPUT_CHARS
from model.core.vocab import SPECIALS

# Every Unicode category, lone surrogates (Cs) included, which Hypothesis leaves out unless
# asked; short texts, and texts around the 300-character limit.
_ANY_CHAR = st.characters(codec=None, exclude_categories=())
ANY_TEXT = st.one_of(st.text(_ANY_CHAR, max_size=40),
                     st.text(_ANY_CHAR, min_size=MAX_INPUT_CHARS - 20,
                             max_size=MAX_INPUT_CHARS + 20))
JUNK = st.sampled_from(["", " ", "\u200b", "\u202e", "\x00", "\x1b[31m", "🙂", "ｗｈｙ", "é",
                        "<script>", "**", "`", "</s>", "<unk>", "$x$", ":red[", "我们", "\ud800"])
SETTINGS = settings(deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def mixed_text(words: list[str]) -> st.SearchStrategy[str]:
    """Vocabulary words mixed with junk: mostly sentences the model can read, some too long
    (more than 63 tokens), some with nothing but junk."""
    piece = st.one_of(st.sampled_from(words), st.sampled_from(words), JUNK,
                      st.text(max_size=4))
    return st.one_of(st.lists(piece, max_size=15),
                     st.lists(piece, min_size=55, max_size=70)).map(" ".join)


def check_trace_or_input_error(m, text: str) -> None:
    """The properties of one ``decode``: only InputError may escape (with a short message);
    otherwise no NaN, every attention row sums to 1 within 1e-5, the decoder's look-ahead
    upper triangle is exactly 0, and the source ends with the one real ``</s>`` (typed
    ``</s>`` or ``<unk>`` never becomes a special token)."""
    try:
        trace = m.generate(text)
    except InputError as exc:
        assert 0 < len(str(exc)) < 300
        return
    enc, dec, cross = trace.encoder_attentions, trace.decoder_attentions, trace.cross_attentions
    for arr in (enc, dec, cross, trace.step_probs):
        assert arr.dtype == np.float32 and np.isfinite(arr).all()
        np.testing.assert_allclose(arr.sum(-1), 1.0, atol=1e-5)
    T = dec.shape[-1]
    above = np.triu_indices(T, k=1)
    assert (dec[:, :, above[0], above[1]] == 0).all()
    assert trace.src_tokens[-1] == "</s>"
    assert not set(trace.src_tokens[:-1]) & set(SPECIALS)
    S = len(trace.src_tokens)
    assert enc.shape[-2:] == (S, S) and cross.shape[-2:] == (T, S)
    assert len(trace.steps) == T


@pytest.fixture(scope="module")
def words(en_zh) -> list[str]:
    """The model's source words (no specials)."""
    return [w for w in en_zh._source_side.vocab.itos if w not in SPECIALS]


@settings(SETTINGS, max_examples=40)
@given(text=ANY_TEXT)
def test_any_unicode_text_decodes_or_is_refused(en_zh, text):
    """Arbitrary Unicode (all categories, lone surrogates): InputError or a sound trace."""
    check_trace_or_input_error(en_zh, text)


@settings(SETTINGS, max_examples=40)
@given(data=st.data())
def test_vocabulary_words_mixed_with_junk_decode_or_are_refused(en_zh, words, data):
    """Sentences of real words with junk in between: InputError or a sound trace."""
    check_trace_or_input_error(en_zh, data.draw(mixed_text(words)))


@settings(SETTINGS, max_examples=300)
@given(text=ANY_TEXT)
def test_validation_and_tokens_are_safe_for_any_text(en_zh, text):
    """The cheap front half, many more examples: ``source`` raises only InputError,
    and the pieces it reads are non-empty, free of whitespace and control characters,
    never special tokens, and no more than the model takes; the encoder input is the
    pieces and ``</s>``, with one label and one word index each."""
    try:
        src = en_zh.source(text)
    except InputError:
        return
    tokens = src.pieces
    assert src.tokens == (*tokens, "</s>") and len(src.ids) == len(src.tokens)
    assert len(src.labels) == len(src.words) == len(src.tokens)
    assert 0 < len(tokens) <= en_zh.info.max_source_words
    assert any(t.isalnum() for t in tokens)
    for t in tokens:
        assert t and not any(ch.isspace() or ord(ch) < 32 or 0xD800 <= ord(ch) < 0xE000
                             for ch in t), repr(t)
        assert t not in SPECIALS
