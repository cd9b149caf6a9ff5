"""Generator, part 1: candidate word tables per verb and adjective, and sampling of noun
phrases, subjects and objects."""

from __future__ import annotations

import random

from .grammar import _diet_ok, _obj_ok, _obj_tags, _subject_class, _what_ok, _who_ok
from .lexicon import (
    _ADJ_KEYS,
    _ADJS,
    _ATTR_ADJS,
    _NOUN_KEYS,
    _NOUNS,
    _PLACE_KEYS,
    _VERB_KEYS,
    _VERBS,
    _applies,
    _Noun,
    _poss_options,
    _Verb,
)
from .realise import _NP, _Rel

_PERSON_SUBJ_PRONS = ["i", "you", "he", "she", "we", "they"]
_PERSON_OBJ_PRONS = ["me", "you", "him", "her", "us", "them"]


def _subject_nouns(v: _Verb, cls: str) -> list[str]:
    if cls == "person":
        return [k for k in _NOUN_KEYS if _NOUNS[k].person] if v.person_subj else []
    return [k for k in _NOUN_KEYS if _NOUNS[k].animal and v.animal_subj & _NOUNS[k].tags]


_SUBJ_NOUNS = {
    (k, c): _subject_nouns(v, c) for k, v in _VERBS.items() for c in ("person", "animal")
}
_OBJ_NOUNS = {
    (k, c): [n for n in _NOUN_KEYS if _obj_tags(v, c) & _NOUNS[n].tags]
    for k, v in _VERBS.items()
    for c in ("person", "animal")
}
_REL_OBJ_NOUNS = {k: [n for n in v if not _NOUNS[n].kin] for k, v in _OBJ_NOUNS.items()}
_OBJ_PRONS = {
    (k, c): [p for p in _PERSON_OBJ_PRONS + ["it"] if _obj_ok(v, c, _NP(pron=p))]
    for k, v in _VERBS.items()
    for c in ("person", "animal")
}
_OBJ_PLACES = {
    (k, c): [p for p in _PLACE_KEYS if _obj_ok(v, c, _NP(place=p))]
    for k, v in _VERBS.items()
    for c in ("person", "animal")
}
_REL_VERBS = {
    key: [v for v in _VERB_KEYS if _subject_class(_VERBS[v], _NP(noun=key))]
    for key in _NOUN_KEYS
    if _NOUNS[key].person or _NOUNS[key].animal
}
_OWNER_THE = [k for k in _NOUN_KEYS if _NOUNS[k].person and _NOUNS[k].sg and not _NOUNS[k].close]
_OWNER_POSS = [k for k in _NOUN_KEYS if _NOUNS[k].person and _NOUNS[k].sg and _NOUNS[k].close]
_PRED_ADJS = _ADJ_KEYS
_PRED_NOUNS = {a: [k for k in _NOUN_KEYS if _applies(_ADJS[a], _NOUNS[k])] for a in _ADJ_KEYS}
_PRED_PRONS = {
    a: (_PERSON_SUBJ_PRONS if "person" in _ADJS[a].tags else [])
    + (["it"] if "animal" in _ADJS[a].tags else [])
    for a in _ADJ_KEYS
}

_ALL_VERBS = _VERB_KEYS
_DYNAMIC_VERBS = [k for k in _VERB_KEYS if not _VERBS[k].stative]
_LOC_VERBS = [k for k in _VERB_KEYS if _VERBS[k].locs]
_DYNAMIC_LOC_VERBS = [k for k in _LOC_VERBS if not _VERBS[k].stative]
_MODAL_VERBS = [k for k in _VERB_KEYS if not _VERBS[k].stative or k == "live"]
_WHAT_VERBS = [k for k in _VERB_KEYS if _what_ok(_VERBS[k], "person")]
_WHO_O_VERBS = [k for k in _VERB_KEYS if _who_ok(_VERBS[k], "person")]
_WHERE_VERBS = [k for k in _VERB_KEYS if _VERBS[k].locs or _VERBS[k].dest_kind in ("go", "live")]
_LIGHT = ("adj", "poss", "num")


def _supports(key: str, feature: str, role: str) -> bool:
    n = _NOUNS[key]
    if feature == "adj":
        return bool(_ATTR_ADJS.get(key))
    if feature == "num":
        return n.countable
    if feature == "rel":
        return role in ("subj", "obj") and key in _REL_VERBS and not n.kin
    if feature == "owner":
        return role in ("subj", "obj") and "ownable" in n.tags
    return bool(_poss_options(n))  # poss


_SUPPORT_CACHE: dict[tuple[int, str, str], list[str]] = {}


def _heads_with(heads: list[str], feature: str, role: str) -> list[str]:
    cache_key = (id(heads), feature, role)
    found = _SUPPORT_CACHE.get(cache_key)
    if found is None:
        found = _SUPPORT_CACHE[cache_key] = [k for k in heads if _supports(k, feature, role)]
    return found


def _pick_number(rng: random.Random, n: _Noun, p_plural: float = 0.4) -> bool:
    if n.sg is None:
        return True
    if n.pl is None:
        return False
    return rng.random() < p_plural


def _plain_det(rng: random.Random, n: _Noun, plural: bool, role: str) -> str | None:
    if "noart" in n.tags:
        return None
    if plural or n.mass:
        return "the" if rng.random() < 0.5 else None
    if role == "subj":
        return "the"
    return "the" if rng.random() < 0.55 else "a"


def _owner_np(rng: random.Random) -> _NP:
    if rng.random() < 0.5:
        return _NP(noun=rng.choice(_OWNER_THE), det="the")
    key = rng.choice(_OWNER_POSS)
    return _NP(noun=key, poss=rng.choice(_poss_options(_NOUNS[key])))


def _noun_np(rng: random.Random, key: str, role: str, feature: str | None) -> _NP:
    n = _NOUNS[key]
    if n.kin and feature not in ("poss", "owner"):
        feature = "poss"  # kin nouns always have a possessor
    if feature == "num":
        num = rng.randint(1, 10) if n.sg else rng.randint(2, 10)
        if n.pl is None:
            num = 1
        adj = rng.choice(_ATTR_ADJS[key]) if _ATTR_ADJS.get(key) and rng.random() < 0.15 else None
        return _NP(noun=key, plural=num > 1, num=num, adj=adj)
    plural = _pick_number(rng, n)
    if feature == "poss":
        return _NP(noun=key, plural=plural, poss=rng.choice(_poss_options(n)))
    if feature == "owner":
        return _NP(noun=key, plural=plural, owner=_owner_np(rng))
    if feature == "rel":
        return _NP(noun=key, plural=plural, det="the", rel=_rel_clause(rng, key))
    det = _plain_det(rng, n, plural, role)
    if feature == "adj":
        adj = rng.choice(_ATTR_ADJS[key])
        if n.countable and rng.random() < 0.1:
            num = rng.randint(1, 10) if n.sg else rng.randint(2, 10)
            return _NP(noun=key, plural=num > 1, num=num, adj=adj)
        return _NP(noun=key, plural=plural, det=det, adj=adj)
    return _NP(noun=key, plural=plural, det=det)


def _np(
    rng: random.Random,
    role: str,
    nouns: list[str],
    prons: list[str] = (),
    *,
    places: list[str] = (),
    force: str | None = None,
    light: float = 0.0,
    p_pron: float = 0.15,
) -> _NP | None:
    """Sample a noun phrase; ``force`` names a feature the phrase must have."""
    if force is not None:
        heads = _heads_with(nouns, force, role)
        return _noun_np(rng, rng.choice(heads), role, force) if heads else None
    if prons and (not nouns or rng.random() < p_pron):
        return _NP(pron=rng.choice(prons))
    if places and (not nouns or rng.random() < 0.4):
        return _NP(place=rng.choice(places))
    if not nouns:
        return None
    key = rng.choice(nouns)
    feature = None
    if light and rng.random() < light:
        feature = rng.choice(_LIGHT)
        if not _supports(key, feature, role):
            feature = None
    return _noun_np(rng, key, role, feature)


def _rel_clause(rng: random.Random, head: str) -> _Rel:
    key = rng.choice(_REL_VERBS[head])
    v = _VERBS[key]
    cls = _subject_class(v, _NP(noun=head))
    if v.dest_kind:
        return _Rel(key, dest=rng.choice(v.dest_places))
    if v.obj_person and not (v.intr and rng.random() < 0.4):
        obj = _np(rng, "rel_obj", _REL_OBJ_NOUNS[key, cls], _OBJ_PRONS[key, cls],
                  places=_OBJ_PLACES[key, cls], p_pron=0.2)
        if obj is not None and _diet_ok(_NP(noun=head), obj):
            return _Rel(key, obj=obj)
    if v.intr:
        return _Rel(key)
    return _rel_clause(rng, head)


def _subject_cls(rng: random.Random, v: _Verb) -> str:
    if v.animal_subj and (not v.person_subj or rng.random() < 0.25):
        return "animal"
    return "person"


def _subject(rng: random.Random, v: _Verb, cls: str, *, force: str | None,
             light: float) -> _NP | None:
    prons = _PERSON_SUBJ_PRONS if cls == "person" else ["it"]
    return _np(rng, "subj", _SUBJ_NOUNS[v.key, cls], prons, force=force, light=light,
               p_pron=0.45)


def _object(rng: random.Random, v: _Verb, cls: str, *, force: str | None,
            light: float) -> _NP | None:
    key = (v.key, cls)
    return _np(rng, "obj", _OBJ_NOUNS[key], _OBJ_PRONS[key], places=_OBJ_PLACES[key],
               force=force, light=light)
