"""English lemmas for the verdict's dictionary check (``lexicon``): ``lemminflect``'s own
lookup table and overrides, read with its own readers and kept as one ``PackedMap``.

``lemminflect.getAllLemmas`` keeps its table as a dict of dicts of tuples: about 80,000
words and 33 MB of the server's memory for what is 1.8 MB of text, and building that dict
anew leaves 20 MB behind. ``all_lemmas`` gives the same answers (the tests compare every
word of the table) from a ``PackedMap`` of a prebuilt file (``LEMMAS_FILE``, written by
``python -m model.analysis.lemmas`` from the installed lemminflect; a test checks that it
still matches): a line ``word<TAB>UPOS=lemma/lemma<SEP>UPOS=lemma...`` per word.
"""

from __future__ import annotations

from pathlib import Path

from model.core.packed import PackedMap, join, lines, once, read_gz, split, to_gz

LEMMAS_FILE = Path(__file__).with_name("resources") / "lemmas.tsv.gz"

_POS_SEP, _FORM_SEP = "=", "/"


def _decode(value: str) -> dict[str, tuple[str, ...]]:
    """A packed value back as ``getAllLemmas`` gives it: part of speech -> lemmas."""
    out = {}
    for item in split(value):
        pos, forms = item.split(_POS_SEP, 1)
        out[pos] = tuple(forms.split(_FORM_SEP))
    return out


def _encode(lemmas: dict[str, tuple[str, ...]]) -> str:
    """``_decode``'s inverse. Raises ``ValueError`` on a part of speech or lemma that holds
    a separator (lemminflect's never do: its own reader splits lemmas on "/")."""
    items = []
    for pos, forms in lemmas.items():
        if _POS_SEP in pos or any(_FORM_SEP in f or _POS_SEP in f for f in forms):
            raise ValueError(f"a separator in {pos!r}: {forms!r}")
        items.append(pos + _POS_SEP + _FORM_SEP.join(forms))
    return join(items)


def build_text() -> str:
    """``packed.lines`` text of every word of lemminflect's lookup table
    (``lemma_lu.csv.gz``, read by its ``LemmaLUCodec``) with its overrides
    (``lemma_overrides.csv``, ``OverridesCodec``) laid over it per part of speech, lemmas in
    lower case, as ``getAllLemmas`` answers a word in lower case (it looks words up in lower
    case: its capitalised entries are never found, and are left out).

    Raises:
        OSError: lemminflect's files cannot be read.
    """
    from lemminflect import config
    from lemminflect.codecs.LemmaLUCodec import LemmaLUCodec
    from lemminflect.codecs.OverridesCodec import OverridesCodec

    table = LemmaLUCodec.load(config.lemma_lu_fn)  # word -> {UPOS: lemmas}
    for word, override in OverridesCodec.load(config.lemma_overrides_fn).items():
        table.setdefault(word, {}).update(override)
    return lines(
        (word, _encode({pos: tuple(f.lower() for f in forms) for pos, forms in found.items()}))
        for word, found in table.items() if word == word.lower())


def write_table() -> None:
    """Write ``LEMMAS_FILE`` from ``build_text`` (``packed.to_gz``: the same table always
    gives the same bytes)."""
    LEMMAS_FILE.write_bytes(to_gz(build_text()))


@once
def lemma_table() -> PackedMap[dict[str, tuple[str, ...]]]:
    """The shipped table (``LEMMAS_FILE``, ``build_text``'s text), read once per process.

    Raises:
        OSError: the file cannot be read; ValueError: it is not ``packed.lines`` text.
    """
    return PackedMap(read_gz(LEMMAS_FILE), _decode)


def all_lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """``lemminflect.getAllLemmas(word.lower())``: the lemmas of ``word`` by universal part
    of speech (``{"NOUN": ("book",), "VERB": ("book",)}``), ``{}`` for a word the table
    lacks (no guess for unknown words: lemminflect's OOV rules are not used)."""
    return lemma_table().get(word.lower(), {})


if __name__ == "__main__":
    write_table()
    print("wrote", LEMMAS_FILE)
