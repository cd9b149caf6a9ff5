"""Derivations (sentence and noun-phrase records) of the en_zh grammar and their realisation
as an English/Chinese `Pair` with its word alignment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .lexicon import (
    _ADJS,
    _MODAL_ZH,
    _NOUNS,
    _NUM_EN,
    _NUM_ZH,
    _PAST_TIME_SET,
    _PLACES,
    _POSS_ZH,
    _PRON_ZH,
    _TIMES,
    _VERBS,
    _WH_ZH,
    _Verb,
)

# Length limits of a sample, in source and target tokens.
MAX_SRC_LEN = 20
MAX_TGT_LEN = 30


class _Rel(NamedTuple):
    """Relative clause "who/that VERB [object | destination]" (present tense)."""

    verb: str
    obj: _NP | None = None
    dest: str | None = None


class _NP(NamedTuple):
    """Noun phrase: a pronoun, a place name, or a noun with at most one determiner."""

    pron: str | None = None
    noun: str | None = None
    place: str | None = None
    plural: bool = False
    det: str | None = None  # "the" | "a" (realised as a/an) | None
    poss: str | None = None  # possessive pronoun
    owner: _NP | None = None  # "OWNER 's NOUN"
    num: int | None = None
    adj: str | None = None
    rel: _Rel | None = None


class _Sent(NamedTuple):
    """Sentence. form: stmt | yn | wh | pred | pred_yn."""

    form: str
    subj: _NP | None = None
    verb: str | None = None
    obj: _NP | None = None
    dest: str | None = None
    loc: str | None = None
    time: str | None = None
    neg: bool = False
    modal: str | None = None
    wh: str | None = None
    adj: str | None = None
    very: bool = False


# A unit is [english tokens, chinese text, aligned-to unit or None].  Units that appear in both
# the English and the Chinese sequence align their tokens; Chinese-only units may point to an
# English unit through the third field.


def _u(en: tuple[str, ...] = (), zh: str = "", ref: list | None = None) -> list:
    return [en, zh, ref]


def _third(np: _NP) -> bool:
    if np.pron is not None:
        return np.pron in ("he", "she", "it")
    return not np.plural


def _place_units(key: str) -> tuple[list, list]:
    p = _PLACES[key]
    unit = _u((key,), p.zh)
    return ([_u(("the",)), unit] if p.article else [unit]), [unit]


def _np_units(np: _NP) -> tuple[list, list]:
    if np.pron is not None:
        unit = _u((np.pron,), _PRON_ZH[np.pron])
        return [unit], [unit]
    if np.place is not None:
        return _place_units(np.place)
    n = _NOUNS[np.noun]
    word = n.pl if np.plural else n.sg
    head = _u((word,), n.zh)
    en: list = []
    zh: list = []
    if np.det == "the":
        en.append(_u(("the",)))
    elif np.det == "a":
        first = np.adj or word
        en.append(_u(("an" if first[0] in "aeiou" else "a",)))
    elif np.poss is not None:
        unit = _u((np.poss,), _POSS_ZH[np.poss] + ("" if n.close else "的"))
        en.append(unit)
        zh.append(unit)
    elif np.owner is not None:
        owner_en, owner_zh = _np_units(np.owner)
        unit = _u(("'s",), "的")
        en += [*owner_en, unit]
        zh += [*owner_zh, unit]
    elif np.num is not None:
        unit = _u((_NUM_EN[np.num],), _NUM_ZH[np.num] + n.mw)
        en.append(unit)
        zh.append(unit)
    rel_en: list = []
    if np.rel is not None:
        who = _u(("who" if n.person else "that",), "的")
        clause_en, clause_zh = _rel_units(np.rel, np.plural)
        rel_en = [who, *clause_en]
        zh += [*clause_zh, who]
    if np.adj is not None:
        adj = _ADJS[np.adj]
        unit = _u((np.adj,), adj.zh)
        en.append(unit)
        zh.append(unit)
        if adj.attr == "de":
            zh.append(_u((), "的", unit))
    en.append(head)
    zh.append(head)
    return en + rel_en, zh


def _verb_unit(v: _Verb, form: str) -> list:
    return _u((form, v.particle) if v.particle else (form,), v.zh)


def _dest_units(v: _Verb, key: str) -> tuple[list, list]:
    place_en, place_zh = _place_units(key)
    if v.dest_kind == "live":  # live in beijing -> 住在北京
        prep = _u((_PLACES[key].prep,), "在")
        return [prep, *place_en], [prep, *place_zh]
    return [_u(("to",)), *place_en], place_zh  # go to school -> 去学校


def _loc_units(key: str) -> tuple[list, list]:
    place_en, place_zh = _place_units(key)
    prep = _u((_PLACES[key].prep,), "在")
    return [prep, *place_en], [prep, *place_zh]


def _rel_units(rel: _Rel, plural: bool) -> tuple[list, list]:
    v = _VERBS[rel.verb]
    vu = _verb_unit(v, v.base if plural else v.s3)
    if rel.dest is not None:
        dest_en, dest_zh = _dest_units(v, rel.dest)
        return [vu, *dest_en], [vu, *dest_zh]
    if rel.obj is not None:
        obj_en, obj_zh = _np_units(rel.obj)
        return [vu, *obj_en], [vu, *obj_zh]
    return [vu], [vu]


def _is_heavy(np: _NP | None) -> bool:
    """Objects with a number, possessor or relative clause take 了 right after the verb."""
    return np is not None and (
        np.num is not None or np.poss is not None or np.owner is not None or np.rel is not None
    )


def _realize_pred(s: _Sent) -> tuple[list, list]:
    subj_en, subj_zh = _np_units(s.subj)
    adj = _ADJS[s.adj]
    shi = adj.pred == "shi"
    be_word = "am" if s.subj.pron == "i" else ("is" if _third(s.subj) else "are")
    be = _u((be_word,), "是" if shi else "")
    adj_u = _u((s.adj,), adj.zh)
    if s.form == "pred_yn":  # is the cat happy ? -> 猫高兴吗？ / 车是红色的吗？
        q = _u(("?",), "？")
        core = [be, adj_u, _u((), "的", be)] if shi else [adj_u]
        return [be, *subj_en, adj_u, q], [*subj_zh, *core, _u((), "吗"), q]
    dot = _u((".",), "。")
    en = [*subj_en, be]
    zh = list(subj_zh)
    no = _u(("not",), "没" if adj.zh.startswith("有") else "不") if s.neg else None
    if no:
        en.append(no)
    if shi:  # the car is (not) red -> 车(不)是红色的
        zh += [*([no] if no else []), be, adj_u, _u((), "的", be)]
    elif no:  # the cat is not happy -> 猫不高兴
        zh += [no, adj_u]
    elif s.very:  # the cat is very happy -> 猫非常高兴
        very = _u(("very",), "非常")
        en.append(very)
        zh += [very, adj_u]
    else:  # the cat is happy -> 猫很高兴
        zh += [_u((), "很", be), adj_u]
    return [*en, adj_u, dot], [*zh, dot]


class _Frame(NamedTuple):
    """The units a clause's form, negation and modal put around its subject and verb."""

    front: list  # English before the subject (questions)
    mid: list  # English between subject and verb
    pre: list  # Chinese between time word and location: negation / modal
    wh: list | None  # the question word's unit
    form: str  # the verb's English form


def _statement_frame(s: _Sent, v: _Verb, past: bool, third: bool) -> _Frame:
    """A statement's modal or negation: "cannot" 不能, "should not" 不应该, "does not want
    to" 不想, "did not" 没; else the verb's past / third-person form."""
    do_word = "did" if past else ("does" if third else "do")
    mid: list = []
    pre: list = []
    form = v.base
    if s.modal == "can":
        unit = _u(("cannot",), "不能") if s.neg else _u(("can",), "能")
        mid, pre = [unit], [unit]
    elif s.modal == "should":
        unit = _u(("should",), "应该")
        no = _u(("not",), "不")
        mid, pre = ([unit, no], [no, unit]) if s.neg else ([unit], [unit])
    elif s.modal == "want":
        if s.neg:
            want, no = _u(("want", "to"), "想"), _u(("not",), "不")
            mid, pre = [_u((do_word,)), no, want], [no, want]
        else:
            want = _u(("wants" if third else "want", "to"), "想")
            mid, pre = [want], [want]
    elif s.neg:
        no = _u(("not",), "没" if (past or v.mei) else "不")
        mid, pre = [_u((do_word,)), no], [no]
    else:
        form = v.past if past else (v.s3 if third else v.base)
    return _Frame([], mid, pre, None, form)


def _question_frame(s: _Sent, v: _Verb, past: bool, third: bool) -> _Frame:
    """A question's fronted auxiliary or modal ("do", "can", "should") or question word
    ("what do", "who" + the third-person verb)."""
    do_word = "did" if past else ("does" if third else "do")
    if s.form == "yn":
        if s.modal in ("can", "should"):
            unit = _u((s.modal,), _MODAL_ZH[s.modal])
            return _Frame([unit], [], [unit], None, v.base)
        if s.modal == "want":
            want = _u(("want", "to"), "想")
            return _Frame([_u((do_word,))], [want], [want], None, v.base)
        return _Frame([_u((do_word,))], [], [], None, v.base)
    word = "who" if s.wh in ("who_s", "who_o") else s.wh
    zh = "哪里" if (s.wh == "where" and v.dest_kind == "go") else _WH_ZH[s.wh]
    wh = _u((word,), zh)
    if s.wh == "who_s":
        return _Frame([wh], [], [], wh, v.s3)
    return _Frame([wh, _u((do_word,))], [], [], wh, v.base)


def _chinese_core(s: _Sent, v: _Verb, vu: list, arg_zh: list, *, wh: list | None) -> list:
    """The Chinese from the verb on: VERB (了) OBJ (了), with the question word in the
    object's place (你吃什么) or before the verb (你在哪里吃米饭)."""
    if s.time in _PAST_TIME_SET and not s.neg:
        le = _u((), "了", vu)
        if s.obj is not None and _is_heavy(s.obj):
            core = [vu, le, *arg_zh]  # 我昨天买了三本书
        else:
            core = [vu, *arg_zh, le]  # 他昨天喝茶了 / 我们昨天工作了
    else:
        core = [vu, *arg_zh]
    if s.wh in ("what", "who_o") or (s.wh == "where" and v.dest_kind):
        return [vu, wh]  # 你吃什么 / 她住在哪里 / 他去哪里
    if s.wh == "where":
        return [wh, *core]  # 你在哪里吃米饭
    return core


def _realize_clause(s: _Sent) -> tuple[list, list]:
    v = _VERBS[s.verb]
    past = s.time in _PAST_TIME_SET
    third = True if s.subj is None else _third(s.subj)
    subj_en, subj_zh = _np_units(s.subj) if s.subj is not None else ([], [])
    if s.form == "stmt":
        frame = _statement_frame(s, v, past, third)
    else:
        frame = _question_frame(s, v, past, third)
    wh = frame.wh
    vu = _verb_unit(v, frame.form)
    if s.obj is not None:
        arg_en, arg_zh = _np_units(s.obj)
    elif s.dest is not None:
        arg_en, arg_zh = _dest_units(v, s.dest)
    else:
        arg_en, arg_zh = [], []
    loc_en, loc_zh = _loc_units(s.loc) if s.loc is not None else ([], [])
    time_en: list = []
    if s.time is not None:
        tokens, time_zh, _ = _TIMES[s.time]
        time_en = [_u(tokens, time_zh)]
    punct = _u(("?",), "？") if s.form != "stmt" else _u((".",), "。")
    en = [*frame.front, *subj_en, *frame.mid, vu, *arg_en, *loc_en, *time_en, punct]

    # Chinese: SUBJ TIME NEG/MODAL 在LOC VERB (了) OBJ (了) (吗)
    zh = [wh] if s.wh == "who_s" else []
    zh += subj_zh
    if s.wh in ("when", "why"):
        zh.append(wh)
    zh += [*time_en, *frame.pre, *loc_zh, *_chinese_core(s, v, vu, arg_zh, wh=wh)]
    if s.form == "yn":
        zh.append(_u((), "吗"))
    zh.append(punct)
    return en, zh


@dataclass(frozen=True)
class Pair:
    """One sample: English tokens, Chinese tokens, word alignment and construction name.

    Attributes:
        src: English tokens; ``" ".join(src)`` is the sentence.
        tgt: Chinese tokens (one character or punctuation mark each); ``"".join(tgt)``.
        alignment: sorted ``(src_index, tgt_index)`` pairs linking English tokens to the Chinese
            characters that translate them.
        construction: the name (a key of `CONSTRUCTIONS`) of the construction it was sampled for.
    """

    src: tuple[str, ...]
    tgt: tuple[str, ...]
    alignment: tuple[tuple[int, int], ...]
    construction: str


def _pair(s: _Sent, construction: str) -> Pair:
    en_units, zh_units = _realize_pred(s) if s.form in ("pred", "pred_yn") else _realize_clause(s)
    src: list[str] = []
    span: dict[int, tuple[int, int]] = {}
    for unit in en_units:
        start = len(src)
        src.extend(unit[0])
        span[id(unit)] = (start, len(src))
    tgt: list[str] = []
    alignment = []
    for unit in zh_units:
        start = len(tgt)
        tgt.extend(unit[1])
        where = span.get(id(unit))
        if where is None and unit[2] is not None:
            where = span.get(id(unit[2]))
        if where is not None:
            alignment += [(i, j) for i in range(*where) for j in range(start, len(tgt))]
    alignment.sort()
    return Pair(tuple(src), tuple(tgt), tuple(alignment), construction)
