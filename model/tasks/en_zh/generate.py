"""Generator, part 2: sampling clauses and predicates for each construction, and
`sample_pair` (construction weights in `CONSTRUCTIONS`)."""

from __future__ import annotations

import random

from .grammar import _diet_ok, _odd_pred, _reflexive, _what_ok, _who_ok
from .lexicon import _ADJS, _ANIMAL_PLACES, _MODAL_ZH, _PAST_TIMES, _PRES_TIMES, _VERBS, _Verb
from .phrases import (
    _ALL_VERBS,
    _DYNAMIC_LOC_VERBS,
    _DYNAMIC_VERBS,
    _LOC_VERBS,
    _MODAL_VERBS,
    _OBJ_NOUNS,
    _PRED_ADJS,
    _PRED_NOUNS,
    _PRED_PRONS,
    _SUBJ_NOUNS,
    _WHAT_VERBS,
    _WHERE_VERBS,
    _WHO_O_VERBS,
    _heads_with,
    _np,
    _object,
    _subject,
    _subject_cls,
)
from .realise import _NP, MAX_SRC_LEN, MAX_TGT_LEN, Pair, _pair, _Sent

# Construction names and their sampling weights.
CONSTRUCTIONS: dict[str, float] = {
    "svo": 0.09,
    "negation": 0.10,
    "time": 0.09,
    "location": 0.09,
    "wh_question": 0.12,
    "yes_no_question": 0.09,
    "adjective_predicate": 0.07,
    "adjective_attributive": 0.07,
    "possessive": 0.07,
    "number": 0.07,
    "relative_clause": 0.07,
    "modal": 0.07,
}


def _force_slot(
    rng: random.Random, v: _Verb, cls: str, force: str | None, *, subj_ok: bool, obj_ok: bool
) -> str | None:
    """Choose "subj" or "obj" for the forced NP feature; "" if neither can carry it."""
    if force is None:
        return None
    slots = []
    if subj_ok and _heads_with(_SUBJ_NOUNS[v.key, cls], force, "subj"):
        slots.append("subj")
    if obj_ok and _heads_with(_OBJ_NOUNS[v.key, cls], force, "obj"):
        slots.append("obj")
    return rng.choice(slots) if slots else ""


def _clause_verbs(wh: str | None, modal: str | None, loc: float, past: bool) -> list[str]:
    """The verbs a clause of this question word, modal, location probability and tense may
    take (a required location needs a verb that takes one)."""
    if wh == "what":
        return _WHAT_VERBS
    if wh == "who_o":
        return _WHO_O_VERBS
    if wh == "where":
        return _WHERE_VERBS
    if modal is not None:
        return _MODAL_VERBS
    if loc >= 1.0:
        return _DYNAMIC_LOC_VERBS if past else _LOC_VERBS
    return _DYNAMIC_VERBS if past else _ALL_VERBS


def _clause_class(rng: random.Random, v: _Verb, wh: str | None) -> str:
    """The subject's class ("person" or "animal"): a person for who-subject questions and
    where the question word does not fit an animal subject of ``v``."""
    cls = "person" if wh == "who_s" else _subject_cls(rng, v)
    if wh == "what" and not _what_ok(v, cls):
        cls = "person"
    if wh == "who_o" and not _who_ok(v, cls):
        cls = "person"
    return cls


def _arguments(
    rng: random.Random, v: _Verb, cls: str, wh: str | None, *, force: str | None, light: float
) -> tuple[_NP | None, _NP | None, str | None] | None:
    """The clause's (subject, object, destination), the forced NP feature on one of them;
    the question word's slot stays empty. None when the feature fits neither slot or the
    pair is odd (a reflexive pair, an animal eating what it does not eat)."""
    obj_slot = not v.dest_kind and wh not in ("what", "who_o") and bool(v.obj_person)
    slot = _force_slot(rng, v, cls, force, subj_ok=wh != "who_s", obj_ok=obj_slot)
    if slot == "":
        return None
    subj = None
    if wh != "who_s":
        subj = _subject(rng, v, cls, force=force if slot == "subj" else None, light=light)
        if subj is None:
            return None
    obj = dest = None
    if v.dest_kind:
        if wh != "where":
            dest = rng.choice(v.dest_places)
    elif wh not in ("what", "who_o") and v.obj_person:
        if slot == "obj" or not v.intr or rng.random() < 0.5:
            obj = _object(rng, v, cls, force=force if slot == "obj" else None, light=light)
            if obj is None or _reflexive(subj, obj) or not _diet_ok(subj, obj):
                return None
    return subj, obj, dest


def _when(
    rng: random.Random, v: _Verb, *, wh: str | None, modal: str | None, past: bool, time: float
) -> str | None:
    """The clause's time word, drawn with probability ``time`` (always in the past, which
    needs a past time word); "now" for modals and stative verbs; None for when-questions."""
    if wh == "when" or not (time >= 1.0 or past or rng.random() < time):
        return None
    if past:
        return rng.choice(_PAST_TIMES)
    if modal is not None or v.stative:
        return "now"
    return rng.choice(_PRES_TIMES)


def _clause(
    rng: random.Random,
    form: str,
    *,
    neg: bool = False,
    modal: str | None = None,
    p_past: float = 0.0,
    time: float = 0.0,
    loc: float = 0.0,
    force: str | None = None,
    light: float = 0.1,
    wh: str | None = None,
) -> _Sent | None:
    """Sample a statement / yes-no question / wh-question.

    time and loc are probabilities (1.0 = required).
    """
    past = modal is None and wh is None and rng.random() < p_past
    v = _VERBS[rng.choice(_clause_verbs(wh, modal, loc, past))]
    if modal is not None and loc >= 1.0 and not v.locs:
        return None
    cls = _clause_class(rng, v, wh)
    args = _arguments(rng, v, cls, wh, force=force, light=light)
    if args is None:
        return None
    subj, obj, dest = args
    location = None
    if v.locs and not v.dest_kind and wh != "where" and (loc >= 1.0 or rng.random() < loc):
        places = v.locs if cls == "person" else [p for p in v.locs if p in _ANIMAL_PLACES]
        if not places:
            return None
        location = rng.choice(places)
    if loc >= 1.0 and location is None:
        return None
    when = _when(rng, v, wh=wh, modal=modal, past=past, time=time)
    return _Sent(form, subj, v.key, obj, dest, location, when, neg, modal, wh)


def _pred(rng: random.Random, form: str, force: str | None = None, light: float = 0.1):
    adj = rng.choice(_PRED_ADJS)
    nouns, prons = _PRED_NOUNS[adj], _PRED_PRONS[adj]
    subj = _np(rng, "subj", nouns, prons, force=force, light=light, p_pron=0.35)
    if subj is None or _odd_pred(subj, _ADJS[adj]):
        return None
    if form == "pred_yn":
        return _Sent("pred_yn", subj, adj=adj)
    neg = rng.random() < 0.25
    very = not neg and _ADJS[adj].pred == "hen" and rng.random() < 0.2
    return _Sent("pred", subj, adj=adj, neg=neg, very=very)


_WH_WEIGHTS = {"what": 0.22, "who_s": 0.13, "who_o": 0.1, "when": 0.15, "where": 0.2, "why": 0.2}


def _wh(rng: random.Random, force: str | None = None, light: float = 0.1) -> _Sent | None:
    wh = rng.choices(list(_WH_WEIGHTS), list(_WH_WEIGHTS.values()))[0]
    return _clause(rng, "wh", wh=wh, time=0.2, loc=0.2, force=force, light=light)


def _yn(rng: random.Random, force: str | None = None, light: float = 0.1) -> _Sent | None:
    return _clause(rng, "yn", p_past=0.2, time=0.2, loc=0.2, force=force, light=light)


def _with_feature(rng: random.Random, feature: str) -> _Sent | None:
    r = rng.random()
    if r < 0.55:
        return _clause(
            rng,
            "stmt",
            neg=rng.random() < 0.15,
            p_past=0.15,
            time=0.15,
            loc=0.15,
            modal=rng.choice(list(_MODAL_ZH)) if rng.random() < 0.08 else None,
            force=feature,
        )
    if r < 0.75:
        return _pred(rng, "pred", force=feature)
    if r < 0.82:
        return _pred(rng, "pred_yn", force=feature)
    if r < 0.91:
        return _yn(rng, force=feature)
    return _wh(rng, force=feature)


def _modal(rng: random.Random) -> _Sent | None:
    modal = rng.choice(list(_MODAL_ZH))
    if rng.random() < 0.2:
        return _clause(rng, "yn", modal=modal, time=0.1, loc=0.2)
    return _clause(rng, "stmt", modal=modal, neg=rng.random() < 0.35, time=0.1, loc=0.2)


_SAMPLERS = {
    "svo": lambda rng: _clause(rng, "stmt", light=0.0),
    "negation": lambda rng: _clause(rng, "stmt", neg=True, p_past=0.4, time=0.25, loc=0.2),
    "time": lambda rng: _clause(
        rng, "stmt", neg=rng.random() < 0.15, p_past=0.35, time=1.0, loc=0.25
    ),
    "location": lambda rng: _clause(
        rng, "stmt", neg=rng.random() < 0.15, p_past=0.2, time=0.3, loc=1.0
    ),
    "wh_question": _wh,
    "yes_no_question": lambda rng: _yn(rng) if rng.random() < 0.75 else _pred(rng, "pred_yn"),
    "adjective_predicate": lambda rng: _pred(rng, "pred"),
    "adjective_attributive": lambda rng: _with_feature(rng, "adj"),
    "possessive": lambda rng: _with_feature(rng, "owner" if rng.random() < 0.4 else "poss"),
    "number": lambda rng: _with_feature(rng, "num"),
    "relative_clause": lambda rng: _with_feature(rng, "rel"),
    "modal": _modal,
}
_CONSTRUCTION_NAMES = list(CONSTRUCTIONS)
_CONSTRUCTION_WEIGHTS = list(CONSTRUCTIONS.values())


def _sample_sentence(rng: random.Random) -> tuple[_Sent, Pair]:
    construction = rng.choices(_CONSTRUCTION_NAMES, _CONSTRUCTION_WEIGHTS)[0]
    sampler = _SAMPLERS[construction]
    while True:
        s = sampler(rng)
        if s is None:
            continue
        pair = _pair(s, construction)
        if len(pair.src) <= MAX_SRC_LEN and len(pair.tgt) <= MAX_TGT_LEN:
            return s, pair


def sample_pair(rng: random.Random) -> Pair:
    """Sample one (English, Chinese, alignment, construction) example.

    Args:
        rng: the random source; only its methods are used (never the global `random`).

    Returns:
        A `Pair` whose construction is drawn with the weights in `CONSTRUCTIONS`.
    """
    return _sample_sentence(rng)[1]
