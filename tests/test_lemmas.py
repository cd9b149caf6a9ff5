"""model.analysis.lemmas: lemminflect's lemmas kept as one packed text answer as lemminflect
does, for every word of its table and for words it lacks."""

from __future__ import annotations

import gzip

import lemminflect
from lemminflect.core.Lemmatizer import Lemmatizer

from model.analysis.lemmas import LEMMAS_FILE, _decode, _encode, all_lemmas, build_text, lemma_table


def test_every_word_of_lemminflects_table_gets_its_lemmas():
    lemmatizer = Lemmatizer()
    words = set(lemmatizer._getLemmaDict()) | set(lemmatizer._getOverridesDict())
    assert len(words) > 50_000
    for word in words:
        assert all_lemmas(word) == lemminflect.getAllLemmas(word.lower()), word
    assert set(lemma_table()) == {w for w in words if w == w.lower()}


def test_capitals_and_unknown_words():
    for word in ("Books", "WENT", "Hangzhou", "zzzq", "", "children's"):
        assert all_lemmas(word) == lemminflect.getAllLemmas(word.lower()), word
    assert "NOUN" in all_lemmas("Books") and "go" in all_lemmas("went")["VERB"]


def test_a_value_packs_and_unpacks():
    value = {"NOUN": ("book",), "VERB": ("book", "booke")}
    assert _decode(_encode(value)) == value


def test_the_shipped_file_is_what_the_installed_lemminflect_gives():
    assert gzip.decompress(LEMMAS_FILE.read_bytes()).decode("utf-8") == build_text()
