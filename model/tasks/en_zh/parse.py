"""Parsing English sentences of the en_zh language into derivations: `tokenize`, `parse` and
`translate`."""

from __future__ import annotations

from collections.abc import Sequence

from .grammar import _sent_ok
from .lexicon import (
    _ADJS,
    _NOUNS,
    _NUMBERS,
    _OBJ_PRON_ZH,
    _PLACES,
    _POSS_ZH,
    _PUNCT,
    _SUBJ_PRON_ZH,
    _TIMES,
    _VERBS,
)
from .realise import _NP, MAX_SRC_LEN, MAX_TGT_LEN, Pair, _pair, _Rel, _Sent

_NOUN_FORMS: dict[str, list[tuple[str, bool]]] = {}
for _n in _NOUNS.values():
    if _n.sg:
        _NOUN_FORMS.setdefault(_n.sg, []).append((_n.key, False))
    if _n.pl:
        _NOUN_FORMS.setdefault(_n.pl, []).append((_n.key, True))
_VERB_FORMS: dict[str, list[str]] = {}
for _v in _VERBS.values():
    for _form in {_v.base, _v.s3, _v.past}:
        _VERB_FORMS.setdefault(_form, []).append(_v.key)
_TIME_SEQS = [(tokens, key) for key, (tokens, _, _) in _TIMES.items()]
_BE = ("am", "is", "are")
_DO = ("do", "does", "did")


def _parse_place(t: Sequence[str], i: int):
    if i < len(t) and t[i] == "the" and i + 1 < len(t) and t[i + 1] in _PLACES:
        yield t[i + 1], i + 2
    if i < len(t) and t[i] in _PLACES:
        yield t[i], i + 1


def _parse_np(t: Sequence[str], i: int, role: str):
    n = len(t)
    if i >= n:
        return
    w = t[i]
    if role == "subj" and w in _SUBJ_PRON_ZH:
        yield _NP(pron=w), i + 1
    if role in ("obj", "rel_obj"):
        if w in _OBJ_PRON_ZH:
            yield _NP(pron=w), i + 1
        for place, j in _parse_place(t, i):
            yield _NP(place=place), j
    starts: list[tuple[dict, int]] = [({}, i)]
    if w == "the":
        starts.append(({"det": "the"}, i + 1))
    elif w in ("a", "an"):
        starts.append(({"det": "a"}, i + 1))
    elif w in _POSS_ZH:
        starts.append(({"poss": w}, i + 1))
    elif w in _NUMBERS:
        starts.append(({"num": _NUMBERS[w][1]}, i + 1))
    if role in ("subj", "obj"):
        for owner, j in _parse_np(t, i, "owner"):
            if j < n and t[j] == "'s":
                starts.append(({"owner": owner}, j + 1))
    for fields, k in starts:
        if role == "owner" and not ("det" in fields or "poss" in fields):
            continue
        heads = [(None, k)]
        if k < n and t[k] in _ADJS:
            heads.append((t[k], k + 1))
        for adj, m in heads:
            if m >= n:
                continue
            for key, plural in _NOUN_FORMS.get(t[m], ()):
                np = _NP(noun=key, plural=plural, adj=adj, **fields)
                yield np, m + 1
                if role in ("subj", "obj") and m + 1 < n and t[m + 1] in ("who", "that"):
                    for rel, end in _parse_rel(t, m + 2):
                        yield np._replace(rel=rel), end


def _parse_verb(t: Sequence[str], i: int):
    """Yield (verb key, position after verb and particle)."""
    if i >= len(t):
        return
    for key in _VERB_FORMS.get(t[i], ()):
        particle = _VERBS[key].particle
        if particle is None:
            yield key, i + 1
        elif i + 1 < len(t) and t[i + 1] == particle:
            yield key, i + 2


def _parse_args(t: Sequence[str], i: int, key: str, role: str):
    """Yield (object, destination, end) after verb ``key``."""
    v = _VERBS[key]
    yield None, None, i
    if v.dest_kind:
        if v.dest_kind == "live":
            if i < len(t) and t[i] in ("in", "at", "on"):
                for place, j in _parse_place(t, i + 1):
                    yield None, place, j
        elif i < len(t) and t[i] == "to":
            for place, j in _parse_place(t, i + 1):
                yield None, place, j
    elif v.obj_person:
        for obj, j in _parse_np(t, i, role):
            yield obj, None, j


def _parse_rel(t: Sequence[str], i: int):
    for key, j in _parse_verb(t, i):
        for obj, dest, k in _parse_args(t, j, key, "rel_obj"):
            yield _Rel(key, obj, dest), k


def _parse_tail(t: Sequence[str], i: int, key: str):
    """Yield (object, destination, location, time) covering t[i:] exactly."""
    n = len(t)
    for obj, dest, j in _parse_args(t, i, key, "obj"):
        locs = [(None, j)]
        if j < n and t[j] in ("in", "at", "on"):
            locs += [(place, k) for place, k in _parse_place(t, j + 1)]
        for loc, k in locs:
            if k == n:
                yield obj, dest, loc, None
            for tokens, time in _TIME_SEQS:
                if tuple(t[k:]) == tokens:
                    yield obj, dest, loc, time


def _parse_predicate(t: Sequence[str], i: int, key_hint: dict):
    """Yield sentences for 'VERB tail' starting at i (verb in any form)."""
    for key, j in _parse_verb(t, i):
        for obj, dest, loc, time in _parse_tail(t, j, key):
            yield _Sent(verb=key, obj=obj, dest=dest, loc=loc, time=time, **key_hint)


def _parse_sentence(tokens: Sequence[str]):
    if len(tokens) < 2 or tokens[-1] not in _PUNCT:
        return
    t = tuple(tokens[:-1])
    n = len(t)
    if tokens[-1] == ".":
        for subj, i in _parse_np(t, 0, "subj"):
            if i >= n:
                continue
            w = t[i]
            if w in _BE:
                rest = t[i + 1 :]
                neg = bool(rest) and rest[0] == "not"
                rest = rest[1:] if neg else rest
                very = bool(rest) and rest[0] == "very"
                rest = rest[1:] if very else rest
                if len(rest) == 1:
                    yield _Sent("pred", subj, adj=rest[0], neg=neg, very=very)
                continue
            options = [(False, None, i)]
            nxt = t[i + 1] if i + 1 < n else None
            if w in _DO and nxt == "not":
                if t[i + 2 : i + 4] == ("want", "to"):
                    options.append((True, "want", i + 4))
                options.append((True, None, i + 2))
            elif w in ("can", "cannot"):
                options.append((w == "cannot", "can", i + 1))
            elif w == "should":
                options.append((nxt == "not", "should", i + 2 if nxt == "not" else i + 1))
            elif w in ("want", "wants") and nxt == "to":
                options.append((False, "want", i + 2))
            for neg, modal, k in options:
                yield from _parse_predicate(
                    t, k, {"form": "stmt", "subj": subj, "neg": neg, "modal": modal}
                )
        return
    w = t[0]
    if w in _BE:
        for subj, i in _parse_np(t, 1, "subj"):
            if i == n - 1:
                yield _Sent("pred_yn", subj, adj=t[i])
    elif w in _DO or w in ("can", "should"):
        modal = None if w in _DO else w
        for subj, i in _parse_np(t, 1, "subj"):
            hint = {"form": "yn", "subj": subj, "modal": modal}
            yield from _parse_predicate(t, i, hint)
            if modal is None and t[i : i + 2] == ("want", "to"):
                yield from _parse_predicate(t, i + 2, {**hint, "modal": "want"})
    elif w in ("what", "who", "when", "where", "why"):
        if w == "who":
            yield from _parse_predicate(t, 1, {"form": "wh", "wh": "who_s"})
        if n > 1 and t[1] in _DO:
            wh = "who_o" if w == "who" else w
            for subj, i in _parse_np(t, 2, "subj"):
                yield from _parse_predicate(t, i, {"form": "wh", "wh": wh, "subj": subj})


def tokenize(text: str) -> tuple[str, ...]:
    """Split an English sentence into source tokens.

    Lower-cases the text and separates ``?``, ``.`` and the possessive ``'s``, so
    ``"Why do we work?"`` becomes ``("why", "do", "we", "work", "?")``.

    Returns:
        The tuple of tokens (possibly empty).
    """
    text = text.lower().replace("\u2019", "'").replace("'s", " 's")
    for mark in "?.":
        text = text.replace(mark, f" {mark} ")
    return tuple(text.split())


def _classify(s: _Sent) -> str:
    """The most specific construction a derivation shows (for parsed sentences)."""
    nps = [np for np in (s.subj, s.obj) if np is not None]
    if any(np.rel is not None for np in nps):
        return "relative_clause"
    if any(np.poss is not None or np.owner is not None for np in nps):
        return "possessive"
    if any(np.num is not None for np in nps):
        return "number"
    if any(np.adj is not None for np in nps):
        return "adjective_attributive"
    if s.modal is not None:
        return "modal"
    if s.form == "wh":
        return "wh_question"
    if s.form in ("yn", "pred_yn"):
        return "yes_no_question"
    if s.form == "pred":
        return "adjective_predicate"
    if s.neg:
        return "negation"
    if s.loc is not None:
        return "location"
    if s.time is not None:
        return "time"
    return "svo"


def parse(src: str) -> Pair:
    """Analyse an English sentence of the language into a `Pair`.

    Args:
        src: an English sentence (normalised with `tokenize`).

    Returns:
        The `Pair` with the Chinese translation and the word alignment; its ``construction`` is
        the most specific construction the sentence shows (relative_clause, possessive, number,
        adjective_attributive, modal, wh_question, yes_no_question, adjective_predicate,
        negation, location, time, svo - in that order of precedence).

    Raises:
        ValueError: if the sentence is not in the language or is ambiguous (see `translate`).
    """
    tokens = tokenize(src)
    found = {}
    for s in _parse_sentence(tokens):
        if _sent_ok(s):
            pair = _pair(s, _classify(s))
            if pair.src == tokens and len(pair.src) <= MAX_SRC_LEN and len(pair.tgt) <= MAX_TGT_LEN:
                found.setdefault(pair.tgt, pair)
    if not found:
        raise ValueError(f"not a sentence of the en_zh language: {src!r}")
    if len(found) > 1:
        options = sorted("".join(t) for t in found)
        raise ValueError(f"ambiguous sentence {src!r}: {options}")
    return next(iter(found.values()))


def translate(src: str) -> str:
    """Translate an English sentence of the language into Chinese.

    Args:
        src: an English sentence, e.g. ``"why do we work ?"`` (case and spacing around
            punctuation are normalised with `tokenize`).

    Returns:
        The Chinese sentence as a string without spaces, e.g. ``"我们为什么工作？"``.

    Raises:
        ValueError: if the sentence is not in the language (unknown word, ungrammatical,
            semantically excluded combination, or longer than the length limits), or if it
            had two different translations (which the grammar is designed to rule out).
    """
    return "".join(parse(src).tgt)
