"""Well-formedness of derivations: which sentences belong to the en_zh language (shared by the
generator and the parser)."""

from __future__ import annotations

from .lexicon import (
    _ADJS,
    _ANIMAL_PLACES,
    _ATTR_ADJS,
    _FIRST_PERSON,
    _MODAL_ZH,
    _NOUNS,
    _NUM_EN,
    _OBJ_PRON_ZH,
    _PAST_TIME_SET,
    _PLACES,
    _PRON_KIND,
    _SUBJ_PRON_ZH,
    _TIMES,
    _VERBS,
    _WH_ZH,
    _Adj,
    _applies,
    _Noun,
    _poss_options,
    _Verb,
)
from .realise import _NP, _Rel, _Sent


def _obj_tags(v: _Verb, cls: str) -> frozenset[str]:
    return v.obj_person if cls == "person" else v.obj_animal


def _subject_class(v: _Verb, np: _NP) -> str | None:
    """Return "person"/"animal" if ``np`` can be the subject of ``v``, else None."""
    if np.pron is not None:
        kind = _PRON_KIND[np.pron]
        if kind == "person":
            return "person" if v.person_subj else None
        return "animal" if v.animal_subj else None
    n = _NOUNS[np.noun]
    if n.person:
        return "person" if v.person_subj else None
    if n.animal and v.animal_subj & n.tags:
        return "animal"
    return None


def _obj_ok(v: _Verb, cls: str, np: _NP) -> bool:
    tags = _obj_tags(v, cls)
    if np.pron is not None:
        return _PRON_KIND[np.pron] in tags or "any" in tags
    if np.place is not None:
        return any("@" + use in tags for use in _PLACES[np.place].uses)
    return bool(tags & _NOUNS[np.noun].tags)


def _who_ok(v: _Verb, cls: str) -> bool:
    """Can "who" be the object of ``v`` ("who do you like ?")?"""
    return bool({"person", "any"} & _obj_tags(v, cls))


def _what_ok(v: _Verb, cls: str) -> bool:
    return any(t != "person" and not t.startswith("@") for t in _obj_tags(v, cls))


def _diet_ok(subj: _NP | None, obj: _NP | None) -> bool:
    """Carnivores do not eat or like plant food, herbivores not meat ("the cat eats fish")."""
    if subj is None or obj is None or subj.noun is None or obj.noun is None:
        return True
    eater, food = _NOUNS[subj.noun].tags, _NOUNS[obj.noun].tags
    return not (
        ("carnivore" in eater and "plant_food" in food)
        or ("herbivore" in eater and "meat_food" in food)
    )


def _rel_ok(head: _Noun, rel: _Rel) -> bool:
    v = _VERBS.get(rel.verb)
    if v is None:
        return False
    cls = _subject_class(v, _NP(noun=head.key))
    if cls is None:
        return False
    if v.dest_kind:
        return rel.obj is None and rel.dest in v.dest_places
    if rel.dest is not None:
        return False
    if rel.obj is None:
        return v.intr
    return (
        _np_ok(rel.obj, "rel_obj")
        and _obj_ok(v, cls, rel.obj)
        and _diet_ok(_NP(noun=head.key), rel.obj)
    )


def _np_ok(np: _NP, role: str) -> bool:
    """Is ``np`` a well-formed noun phrase for role subj | obj | rel_obj | owner?"""
    if np.pron is not None:
        if np.noun is not None or np.place is not None or role == "owner":
            return False
        return np.pron in (_SUBJ_PRON_ZH if role == "subj" else _OBJ_PRON_ZH)
    if np.place is not None:
        return role in ("obj", "rel_obj") and np.place in _PLACES and np.noun is None
    n = _NOUNS.get(np.noun)
    if n is None or (n.pl if np.plural else n.sg) is None:
        return False
    marks = sum(x is not None for x in (np.det, np.poss, np.owner, np.num))
    if marks > 1:
        return False
    if role == "owner":
        return (
            n.person
            and not np.plural
            and np.adj is None
            and np.rel is None
            and ((np.det == "the" and not n.close) or (n.close and np.poss in _poss_options(n)))
        )
    if n.kin and np.poss is None and np.owner is None:
        return False
    if role == "rel_obj" and (marks and np.det is None or np.adj is not None or np.rel is not None):
        return False
    if np.det is not None:
        if np.det == "a":
            if not (n.countable and not np.plural and role != "subj"):
                return False
        elif np.det != "the":
            return False
    elif marks == 0 and not (np.plural or n.mass):
        return False
    if np.num is not None:
        if not n.countable or np.num not in _NUM_EN or (np.num == 1) == np.plural:
            return False
    if np.poss is not None and np.poss not in _poss_options(n):
        return False
    if np.det == "the" and "noart" in n.tags:
        return False
    if np.owner is not None and not ("ownable" in n.tags and _np_ok(np.owner, "owner")):
        return False
    if np.adj is not None:
        if np.poss is not None or np.owner is not None:
            return False
        if np.adj not in _ATTR_ADJS.get(n.key, ()):
            return False
    if np.rel is not None:
        if role not in ("subj", "obj") or np.det != "the" or np.adj is not None:
            return False
        if not (n.person or n.animal) or not _rel_ok(n, np.rel):
            return False
    return True


def _odd_pred(subj: _NP, adj: _Adj) -> bool:
    """Reject "the big dog is big" and "the white cars are red"."""
    if subj.adj is None:
        return False
    return subj.adj == adj.key or (adj.pred == "shi" and _ADJS[subj.adj].pred == "shi")


def _reflexive(subj: _NP | None, obj: _NP | None) -> bool:
    """i/me, we/us and you/you as subject and object are not generated."""
    if subj is None or obj is None or subj.pron is None or obj.pron is None:
        return False
    if subj.pron == "you" and obj.pron == "you":
        return True
    return subj.pron in _FIRST_PERSON and obj.pron in _FIRST_PERSON


def _pred_ok(s: _Sent) -> bool:
    """Is the adjective-predicate sentence ``s`` ("the car is red", "is the car red ?")
    well formed: an adjective that applies to its subject and no verb, object or adverbial?"""
    adj = _ADJS.get(s.adj)
    if adj is None or s.subj is None or not _np_ok(s.subj, "subj") or _odd_pred(s.subj, adj):
        return False
    if any(x is not None for x in (s.verb, s.obj, s.dest, s.loc, s.time, s.modal, s.wh)):
        return False
    if s.subj.pron is not None:
        if _PRON_KIND[s.subj.pron] not in adj.tags:
            return False
    elif not _applies(adj, _NOUNS[s.subj.noun]):
        return False
    if s.form == "pred_yn":
        return not s.neg and not s.very
    return not (s.very and (s.neg or adj.pred != "hen"))


def _sent_class(s: _Sent, v: _Verb) -> str | None:
    """The subject's class ("person" or "animal") of the clause ``s`` with verb ``v``;
    None when its subject (or its absence in a who-subject question) does not fit ``v``."""
    if s.wh == "who_s":
        return "person" if s.subj is None and v.person_subj else None
    if s.subj is None or not _np_ok(s.subj, "subj"):
        return None
    return _subject_class(v, s.subj)


def _arguments_ok(s: _Sent, v: _Verb, cls: str) -> bool:
    """Do the clause's object and destination fit ``v`` (subject class ``cls``), with the
    question word's slot left empty?"""
    if v.dest_kind:
        if s.obj is not None:
            return False
        if s.wh == "where":
            return s.dest is None and v.dest_kind != "come"
        return s.dest in v.dest_places
    if s.dest is not None:
        return False
    if s.wh in ("what", "who_o"):
        if s.obj is not None:
            return False
        if s.wh == "what" and not _what_ok(v, cls):
            return False
        if s.wh == "who_o" and not _who_ok(v, cls):
            return False
    elif s.obj is None:
        if not v.intr:
            return False
    elif not (_np_ok(s.obj, "obj") and _obj_ok(v, cls, s.obj)) or _reflexive(s.subj, s.obj):
        return False
    elif not _diet_ok(s.subj, s.obj):
        return False
    return not (s.wh == "where" and not v.locs)


def _adverbials_ok(s: _Sent, v: _Verb, cls: str) -> bool:
    """Do the clause's location, modal and time word fit ``v`` (subject class ``cls``) and
    each other (a stative verb or a modal only "now"; no past time in a wh-question)?"""
    if s.loc is not None:
        if s.wh == "where" or s.loc not in v.locs:
            return False
        if cls == "animal" and s.loc not in _ANIMAL_PLACES:
            return False
    if s.modal is not None:
        if s.modal not in _MODAL_ZH or s.form == "wh" or (v.stative and v.key != "live"):
            return False
    if s.time is not None:
        if s.time not in _TIMES or s.wh == "when":
            return False
        if s.modal is not None or v.stative:
            if s.time != "now":
                return False
        elif s.time == "now":
            return False
        if s.time in _PAST_TIME_SET and s.form == "wh":
            return False
    return True


def _sent_ok(s: _Sent) -> bool:
    """Is ``s`` a sentence of the language (ignoring the length limits)?"""
    nps = [np for np in (s.subj, s.obj) if np is not None]
    if sum(np.owner is not None or np.rel is not None for np in nps) > 1:
        return False
    if s.form in ("pred", "pred_yn"):
        return _pred_ok(s)
    if s.form not in ("stmt", "yn", "wh") or s.adj is not None or s.very:
        return False
    v = _VERBS.get(s.verb)
    if v is None or (s.form == "wh") != (s.wh in _WH_ZH):
        return False
    if s.form != "stmt" and s.neg:
        return False
    cls = _sent_class(s, v)
    return cls is not None and _arguments_ok(s, v, cls) and _adverbials_ok(s, v, cls)
