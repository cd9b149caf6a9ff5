"""Token inventories and lemmas of the en_zh grammar: `lexicon_summary`, `source_words`,
`target_tokens` and `content_words`."""

from __future__ import annotations

from collections.abc import Sequence

from .lexicon import (
    _ADJS,
    _FUNCTION_WORDS,
    _MODAL_ZH,
    _NOUNS,
    _NUM_EN,
    _NUM_ZH,
    _NUMBERS,
    _OBJ_PRON_ZH,
    _PARTICLES_ZH,
    _PLACES,
    _POSS_ZH,
    _PRON_ZH,
    _PUNCT,
    _SUBJ_PRON_ZH,
    _TIMES,
    _VERBS,
    _WH_ZH,
)


def lexicon_summary() -> dict[str, int]:
    """Return the lexicon sizes.

    Returns:
        A dict with the number of ``nouns`` (excluding place names), ``places``, ``verbs``,
        ``adjectives``, ``pronouns`` (distinct pronoun forms), ``time_words``, ``numbers`` and
        ``english_word_types`` (distinct English tokens the generator can emit, punctuation
        excluded).
    """
    return {
        "nouns": len(_NOUNS),
        "places": len(_PLACES),
        "verbs": len(_VERBS),
        "adjectives": len(_ADJS),
        "pronouns": len(set(_SUBJ_PRON_ZH) | set(_OBJ_PRON_ZH) | set(_POSS_ZH)),
        "time_words": len(_TIMES),
        "numbers": len(_NUMBERS),
        "english_word_types": len([w for w in source_words() if w not in _PUNCT]),
    }


def source_words() -> list[str]:
    """Return every token the grammar can emit on the English side, sorted.

    Returns:
        A sorted list of lower-case words and the punctuation tokens ``?`` and ``.``.
    """
    words = set(_FUNCTION_WORDS) | _PUNCT
    words |= set(_PRON_ZH) | set(_POSS_ZH) | set(_NUM_EN.values()) | set(_ADJS)
    for n in _NOUNS.values():
        words |= {w for w in (n.sg, n.pl) if w}
    words |= set(_PLACES)
    for v in _VERBS.values():
        words |= {v.base, v.s3} | ({v.particle} if v.particle else set())
        if not v.stative:
            words.add(v.past)
    for tokens, _, _ in _TIMES.values():
        words |= set(tokens)
    return sorted(words)


def target_tokens() -> list[str]:
    """Return every token the grammar can emit on the Chinese side, sorted.

    Returns:
        A sorted list of single Chinese characters and the full-width punctuation ``？`` ``。``.
    """
    chars = set(_PARTICLES_ZH) | {"？", "。"}
    texts = [*_PRON_ZH.values(), *_NUM_ZH.values(), *_MODAL_ZH.values(), *_WH_ZH.values()]
    texts += [n.zh + (n.mw or "") for n in _NOUNS.values()]
    texts += [p.zh for p in _PLACES.values()] + [v.zh for v in _VERBS.values()]
    texts += [a.zh for a in _ADJS.values()] + [t[1] for t in _TIMES.values()]
    for text in texts:
        chars |= set(text)
    return sorted(chars)


# Lemmas of content words (nouns, place names, verbs, adjectives), keyed by surface form.
_LEMMA: dict[str, str] = {}


def _add_lemma(form: str, lemma: str) -> None:
    if _LEMMA.setdefault(form, lemma) != lemma:
        raise AssertionError(f"surface form {form!r} has two lemmas")


for _n in _NOUNS.values():
    for _form in (_n.sg, _n.pl):
        if _form:
            _add_lemma(_form, _n.key)
for _p in _PLACES:
    _add_lemma(_p, _p)
for _v in _VERBS.values():
    for _form in (_v.base, _v.s3, _v.past):
        _add_lemma(_form, _v.key)
for _a in _ADJS:
    _add_lemma(_a, _a)


def content_words(src: Sequence[str]) -> frozenset[str]:
    """Return the lemmas of the content words (nouns, places, verbs, adjectives) in ``src``.

    Args:
        src: English tokens, e.g. ``Pair.src``.

    Returns:
        A frozenset of lemmas: noun singulars (``mice`` -> ``mouse``), verb base forms (``ate``
        -> ``eat``, ``looks`` -> ``look``), adjectives and place names.  Pronouns, numbers,
        time words and function words are not included.
    """
    return frozenset(_LEMMA[w] for w in src if w in _LEMMA)
