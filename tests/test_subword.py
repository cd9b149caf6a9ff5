"""Byte-level BPE source tokens: never unknown, readable labels, word grouping."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.core.subword import bytes_label, piece_label, pieces, train_bpe, word_ids
from model.core.vocab import SPECIALS, normalize_text
from model.tasks import en_zh


@pytest.fixture(scope="module")
def bpe():
    splits = en_zh.build_splits(seed=0, n_train=2000)
    texts = [" ".join(p.src) for p in splits.train] + ["Learning machines don't sleep!"] * 3
    return train_bpe(texts, vocab_size=400)


def test_specials_keep_their_ids(bpe):
    assert [bpe.token_to_id(t) for t in SPECIALS] == [0, 1, 2, 3]


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=60) | st.sampled_from(["<unk>", "a </s> b", "<s><pad>"]))
def test_any_typed_text_has_no_unknown_token_and_decodes_back(bpe, text):
    text = normalize_text(text)
    tokens = pieces(bpe, text)
    enc = bpe.encode(text) if not any(s in text for s in SPECIALS) else None
    if enc is not None:
        assert enc.tokens == tokens  # the same pieces as the library's own encode
    ids = [bpe.token_to_id(t) for t in tokens]
    assert None not in ids and not set(ids) & {0, 1, 2, 3}  # no <unk>, no special token
    # The pieces hold every byte of the text: decoding gives it back (NFKC-normalised,
    # curly quotes straightened, the added leading space removed).
    want = normalize_text(text).replace("\u2019", "'").replace("\u2018", "'")
    want = want.replace("\u201c", '"').replace("\u201d", '"')
    import unicodedata

    assert bpe.decode(ids).lstrip(" ") == unicodedata.normalize("NFKC", want).lstrip(" ")


def test_labels_are_readable(bpe):
    tokens = bpe.encode("Learning machines don't sleep!").tokens
    labels = [piece_label(t) for t in tokens]
    # A word the vocabulary lacks with its space may start with a lone space piece ("␣").
    assert "".join(labels).replace("␣", "") == "Learningmachinesdon'tsleep!"
    assert not any("Ġ" in label for label in labels)
    assert piece_label("Ġ") == "␣" and piece_label("</s>") == "</s>"
    assert piece_label("我") == "我"  # not a byte-level token: unchanged


def test_a_lone_byte_of_a_character_is_shown_as_its_bytes():
    # "é" is the bytes C3 A9; GPT-2's table maps them to "Ã" and "©".
    assert piece_label("Ã©") == "é"
    assert piece_label("Ã") == "⟨c3⟩"


@given(st.text(st.characters(blacklist_characters="⟨⟩", blacklist_categories=("Cs",)),
               min_size=1, max_size=12),
       st.integers(0, 40), st.integers(0, 40))
def test_bytes_label_shows_whole_characters_and_the_bytes_of_the_rest(text, a, b):
    """Any slice of a text's UTF-8 bytes reads as its whole characters, with the bytes of
    a character cut at either end shown in hex between ⟨ ⟩: nothing is lost (the label
    gives the bytes back) and a whole text shows no bytes."""
    raw = text.encode()
    a, b = sorted((min(a, len(raw)), min(b, len(raw))))
    label = bytes_label(raw[a:b])
    back = b"".join(bytes.fromhex(part[1:-1]) if part.startswith("⟨") else part.encode()
                    for part in re.split("(⟨[0-9a-f ]+⟩)", label) if part)
    assert back == raw[a:b]
    assert bytes_label(raw) == text  # the whole text: its characters, no bytes shown


def test_word_ids_group_pieces_and_split_punctuation(bpe):
    tokens = bpe.encode("Learning machines don't sleep!").tokens + ["</s>"]
    ids = word_ids(tokens)
    words: dict[int, str] = {}
    for tok, w in zip(tokens, ids, strict=True):
        words[w] = words.get(w, "") + piece_label(tok).replace("␣", "")
    assert list(words.values()) == ["Learning", "machines", "don't", "sleep", "!", "</s>"]


def test_word_level_tokens_are_each_a_word():
    assert word_ids(["why", "do", "we", "work", "?", "</s>"]) == (0, 1, 2, 3, 4, 5)


def test_a_lone_space_piece_joins_the_next_word():
    assert word_ids(["Ġlearn", "ing", "Ġmachines", "?", "Ġ", "Why", "</s>"]) == (
        0, 0, 1, 2, 3, 3, 4)
