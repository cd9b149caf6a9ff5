"""A synthetic English -> Chinese translation task with word alignments.

The language
------------
A small grammar generates English sentences together with their Mandarin translation and a
word alignment.  Examples (English tokens are joined by spaces, Chinese characters are not)::

    why do we work ?                    ->  我们为什么工作？
    he did not drink tea yesterday .    ->  他昨天没喝茶。
    i go to school tomorrow .           ->  我明天去学校。
    he reads books in the library .     ->  他在图书馆看书。
    do you like cats ?                  ->  你喜欢猫吗？
    the cat is very happy .             ->  猫非常高兴。
    she has a beautiful house .         ->  她有漂亮的房子。
    i like my friend 's house .         ->  我喜欢我朋友的房子。
    i bought two books yesterday .      ->  我昨天买了两本书。
    i know the man who reads books .    ->  我认识看书的男人。
    you should not drink beer .         ->  你不应该喝啤酒。

The lexicon has about 110 nouns with measure words, 28 places, 63 verbs, 43 adjectives, all
personal pronouns, 23 time words and the numbers one to ten: over 500 English word types.  Its
tables are data files in `en_zh_data/` next to this module (tab-separated tables, small mappings
and flag sets in `lexicon.toml`; columns are explained in its README.md), read at import.
Every sample is tagged with the construction it was sampled for (`CONSTRUCTIONS`):

    svo                    we eat rice .                   我们吃米饭。
    negation               he does not drink tea .         他不喝茶。  (past: 没, 有 -> 没有)
    time                   i go to school tomorrow .       我明天去学校。
    location               we study in the library .       我们在图书馆学习。
    wh_question            where does she live ?           她住在哪里？  (what/who/when/where/why)
    yes_no_question        do you like cats ?              你喜欢猫吗？
    adjective_predicate    the car is red .                车是红色的。
    adjective_attributive  she has a big dog .             她有大狗。  (beautiful -> 漂亮的)
    possessive             i read my friend 's books .     我看我朋友的书。  (his cat -> 他的猫)
    number                 i have three cats .             我有三只猫。  (两 before measure words)
    relative_clause        i know the girl who swims .     我认识游泳的女孩。
    modal                  she cannot swim .               她不能游泳。  (want to 想, should 应该)

A sentence may combine several of these (a negated question is not generated, but a negated
statement with a time word, a location and a possessive is).  Word order follows Mandarin:
SUBJECT TIME NEGATION/MODAL 在PLACE VERB OBJECT.  In the past tense 了 follows the object
(他昨天喝茶了), or directly the verb when the object has a number, possessor or relative clause
(我昨天买了三本书).

The translation is a *function* of the English sentence: every English word or fixed phrase has
exactly one Chinese rendering for its construction (`you` is always 你, `they` 他们, `read` 看,
`can` 能; `the` and `a` are dropped, `book` and `books` are both 书).  The past tense is only used
together with a past time word (yesterday, last night, ...), so `read` (present) and `read`
(past) are never confused.  `parse` and `translate` analyse an English sentence of the language;
the generator and the parser share the same realisation code, and the tests check that they
agree and that no English sentence is ever generated with two different translations.

Tokens
------
Source tokens are lower-case English words and punctuation (`?`, `.` and the possessive `'s` are
separate tokens); multi-word items such as `every day` or `listen to` are several tokens.
Target tokens are single Chinese characters or full-width punctuation (`？`, `。`).  Sentences have
at most 20 source and 30 target tokens.  `source_words()` and `target_tokens()` list every token
the grammar can emit.  The alignment of a `Pair` links source token indices to the target
character indices that translate them; words that are dropped (the, a, do) are unaligned.

Splits
------
`build_splits(seed)` draws samples from `sample_pair` with `random.Random(seed)` and keeps the
first occurrence of every English sentence.  Before sampling it chooses about 40 held-out pairs
of content words (adjective + noun, verb + object noun, subject noun + verb) whose words never
appear together in a training or validation sentence; each word of a pair still occurs in many
other training sentences.  The test set consists of ordinary unseen sentences plus `n_novel`
sentences that contain both words of a held-out pair (indices in `novel_test_indices`), so it
measures compositional generalisation.  Train, valid and test are disjoint as English sentences,
and every token of every valid/test sentence occurs in the training set.  Content words are
compared by lemma (`content_words`): `ate` and `eats` both count as `eat`.
"""

from __future__ import annotations

import random
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

__all__ = [
    "CONSTRUCTIONS",
    "EXAMPLES",
    "EXAMPLE_CONSTRUCTIONS",
    "GENERATOR_SETTINGS",
    "MAX_SRC_LEN",
    "MAX_TGT_LEN",
    "VERSION",
    "Pair",
    "Splits",
    "build_splits",
    "content_words",
    "lexicon_summary",
    "parse",
    "sample_pair",
    "source_words",
    "target_tokens",
    "tokenize",
    "translate",
]

VERSION = "en_zh-1.0"
MAX_SRC_LEN = 20
MAX_TGT_LEN = 30

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

# --------------------------------------------------------------------------------------------
# Lexicon data files (en_zh_data/, described in its README.md).  In the tables "-" means
# "none"; row order matters, since it drives sampling.
# --------------------------------------------------------------------------------------------

_DATA_DIR = Path(__file__).with_name("en_zh_data")


def _read_tsv(name: str, header: str) -> list[list[str]]:
    """Return the rows of the tab-separated file ``name``; its first line must be ``header``.

    Raises:
        ValueError: naming the file and line, for a wrong header, a row with the wrong number
            of fields or an empty or space-padded field, or a repeated first field (not "-").
    """
    path = _DATA_DIR / name
    columns = header.split()
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].split("\t") != columns:
        raise ValueError(f"{path}, line 1: the header must be the tab-separated {columns}")
    rows: list[list[str]] = []
    seen: set[str] = set()
    for number, line in enumerate(lines[1:], start=2):
        if not line:
            continue
        cells = line.split("\t")
        if len(cells) != len(columns) or any(not c or c != c.strip() for c in cells):
            raise ValueError(
                f"{path}, line {number}: expected {len(columns)} tab-separated fields, "
                "none empty or padded with spaces"
            )
        if cells[0] in seen:
            raise ValueError(f"{path}, line {number}: {cells[0]!r} is listed twice")
        if cells[0] != "-":
            seen.add(cells[0])
        rows.append(cells)
    return rows


def _read_toml(name: str) -> dict:
    path = _DATA_DIR / name
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:  # its message gives the line
        raise ValueError(f"{path}: {error}") from error


_LEXICON = _read_toml("lexicon.toml")


def _lexicon(key: str, value_type: type | None = None):
    """Entry ``key`` of lexicon.toml: a string, or a table of ``value_type`` values."""
    value = _LEXICON.get(key)
    if value_type is None:
        ok = isinstance(value, str)
    else:
        ok = isinstance(value, dict) and all(isinstance(v, value_type) for v in value.values())
    if not ok:
        kind = "a string" if value_type is None else f"a table of {value_type.__name__} values"
        raise ValueError(f"{_DATA_DIR / 'lexicon.toml'}: {key!r} must be {kind}")
    return value


def _number_entry(word: str, entry: list) -> tuple[str, int]:
    if len(entry) != 2 or not isinstance(entry[0], str) or type(entry[1]) is not int:
        raise ValueError(f"{_DATA_DIR / 'lexicon.toml'}: numbers.{word} must be [chinese, value]")
    return entry[0], entry[1]


_ANIMAL_PLACES = frozenset(_lexicon("animal_places").split())
_VERB_FLAGS: dict[str, str] = _lexicon("verb_flags", str)
_VERB_PLACES: dict[str, str] = _lexicon("verb_places", str)
_NUMBERS = {word: _number_entry(word, e) for word, e in _lexicon("numbers", list).items()}
_MODAL_ZH: dict[str, str] = _lexicon("modal_zh", str)
_WH_ZH: dict[str, str] = _lexicon("wh_zh", str)

# One example sentence per construction, for the app's example picker.
EXAMPLE_CONSTRUCTIONS: tuple[tuple[str, str], ...] = tuple(
    (sentence, construction)
    for sentence, construction in _read_tsv("examples.tsv", "sentence construction")
)
EXAMPLES: list[str] = [sentence for sentence, _ in EXAMPLE_CONSTRUCTIONS]


# --------------------------------------------------------------------------------------------
# Parsed lexicon
# --------------------------------------------------------------------------------------------


class _Noun(NamedTuple):
    key: str
    sg: str | None
    pl: str | None
    zh: str
    mw: str | None
    tags: frozenset[str]
    countable: bool
    mass: bool
    kin: bool
    close: bool
    person: bool
    animal: bool


class _Place(NamedTuple):
    key: str
    zh: str
    prep: str
    article: bool
    uses: frozenset[str]


class _Verb(NamedTuple):
    key: str
    base: str
    s3: str
    past: str
    particle: str | None
    zh: str
    person_subj: bool
    animal_subj: frozenset[str]
    obj_person: frozenset[str]
    obj_animal: frozenset[str]
    stative: bool
    mei: bool
    intr: bool
    dest_kind: str | None
    dest_places: tuple[str, ...]
    locs: tuple[str, ...]


class _Adj(NamedTuple):
    key: str
    zh: str
    attr: str | None
    pred: str
    tags: frozenset[str]


def _opt(field: str) -> str | None:
    return None if field == "-" else field


def _items(field: str, sep: str | None = None) -> list[str]:
    return [] if field == "-" else field.split(sep)


_SUBJ_PRON_ZH: dict[str, str] = {}
_OBJ_PRON_ZH: dict[str, str] = {}
_POSS_ZH: dict[str, str] = {}
_PRON_KIND: dict[str, str] = {}
for _subj, _obj, _poss, _zh, _kind in _read_tsv(
    "pronouns.tsv", "subject object possessive chinese kind"
):
    _SUBJ_PRON_ZH[_subj] = _zh
    _OBJ_PRON_ZH[_obj] = _zh
    _POSS_ZH[_poss] = _zh
    _PRON_KIND[_subj] = _PRON_KIND[_obj] = _kind
_PRON_ZH = {**_SUBJ_PRON_ZH, **_OBJ_PRON_ZH}
_FIRST_PERSON = frozenset({"i", "me", "we", "us"})


def _build_nouns() -> dict[str, _Noun]:
    nouns = {}
    header = "singular plural chinese measure_word tags"
    for sg, pl, zh, mw, tag_field in _read_tsv("nouns.tsv", header):
        key = sg if sg != "-" else pl
        tags = set(tag_field.split()) | {key}
        if tags & {"object", "plant", "landscape", "building"}:
            tags.add("thing")  # physical things: "see", "have"
        if "kin" not in tags:
            tags.add("any")  # anything one can like
        if ("close" in tags or "person" not in tags) and "noposs" not in tags:
            tags.add("ownable")
        if tags & {"pet_food", "pet_drink"}:
            tags.add("treat")  # what animals like
        nouns[key] = _Noun(
            key,
            _opt(sg),
            _opt(pl),
            zh,
            _opt(mw),
            frozenset(tags),
            mw != "-",
            "mass" in tags,
            "kin" in tags,
            "close" in tags,
            "person" in tags,
            "animal" in tags,
        )
    return nouns


_NOUNS = _build_nouns()
_NOUN_KEYS = list(_NOUNS)

_PLACES = {
    name: _Place(name, zh, prep, article == "the", frozenset(_items(uses)))
    for name, zh, prep, article, uses in _read_tsv(
        "places.tsv", "name chinese preposition article uses"
    )
}
_PLACE_KEYS = list(_PLACES)


def _build_verbs() -> dict[str, _Verb]:
    verbs = {}
    header = (
        "base third_singular past particle chinese subjects objects_of_person objects_of_animal"
    )
    for base, s3, past, particle, zh, subj, obj_p, obj_a in _read_tsv("verbs.tsv", header):
        flags = set(_VERB_FLAGS.get(base, "").split(","))
        subj_tags = subj.split(",")
        dest_kind = next((f[5:] for f in flags if f.startswith("dest:")), None)
        dest_places = tuple(p for p in _PLACE_KEYS if dest_kind in _PLACES[p].uses)
        verbs[base] = _Verb(
            base,
            base,
            s3,
            past,
            _opt(particle),
            zh,
            "person" in subj_tags,
            frozenset(t for t in subj_tags if t != "person"),
            frozenset(_items(obj_p, ",")),
            frozenset(_items(obj_a, ",")),
            "stative" in flags,
            "mei" in flags,
            "intr" in flags or (obj_p == "-" and not dest_kind),
            dest_kind,
            dest_places if dest_kind else (),
            tuple(_VERB_PLACES.get(base, "").split()),
        )
    return verbs


_VERBS = _build_verbs()
_VERB_KEYS = list(_VERBS)

_ADJS = {
    en: _Adj(en, zh, _opt(attr), pred, frozenset(tags.split(",")))
    for en, zh, attr, pred, tags in _read_tsv(
        "adjectives.tsv", "english chinese attributive predicative applies_to"
    )
}
_ADJ_KEYS = list(_ADJS)

_TIMES: dict[str, tuple[tuple[str, ...], str, str]] = {
    en: (tuple(en.split()), zh, use)
    for en, zh, use in _read_tsv("times.tsv", "english chinese use")
}
_PRES_TIMES = [t for t, v in _TIMES.items() if v[2] == "pres"]
_PAST_TIMES = [t for t, v in _TIMES.items() if v[2] == "past"]
_PAST_TIME_SET = frozenset(_PAST_TIMES)

_NUM_EN = {value: word for word, (_, value) in _NUMBERS.items()}
_NUM_ZH = {value: zh for _, (zh, value) in _NUMBERS.items()}


def _applies(adj: _Adj, noun: _Noun) -> bool:
    return bool(adj.tags & noun.tags)


# Attributive adjectives per noun (kin nouns always carry a possessor and take no adjective).
_ATTR_ADJS: dict[str, list[str]] = {
    key: [a for a in _ADJ_KEYS if _ADJS[a].attr and _applies(_ADJS[a], n)]
    for key, n in _NOUNS.items()
    if not (n.kin or "noart" in n.tags)
}


def _poss_options(n: _Noun) -> list[str]:
    """Possessive pronouns that may precede noun ``n`` ("its" only for what animals like)."""
    if "ownable" not in n.tags:
        return []
    if "spouse" in n.tags:
        return ["my", "your", "his", "her"]
    persons = [p for p in _POSS_ZH if p != "its"]
    return persons + ["its"] if "treat" in n.tags else persons


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


_PUNCT = frozenset({"?", "."})
_FUNCTION_WORDS = _lexicon("function_words").split()
_PARTICLES_ZH = _lexicon("particles_zh")


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


# --------------------------------------------------------------------------------------------
# Derivations and their realisation
# --------------------------------------------------------------------------------------------


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


def _realize_clause(s: _Sent) -> tuple[list, list]:
    v = _VERBS[s.verb]
    past = s.time in _PAST_TIME_SET
    third = True if s.subj is None else _third(s.subj)
    do_word = "did" if past else ("does" if third else "do")
    subj_en, subj_zh = _np_units(s.subj) if s.subj is not None else ([], [])
    front: list = []  # English before the subject (questions)
    mid: list = []  # English between subject and verb
    pre: list = []  # Chinese between time word and location: negation / modal
    wh = None
    form = v.base
    if s.form == "stmt":
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
    elif s.form == "yn":
        if s.modal in ("can", "should"):
            unit = _u((s.modal,), _MODAL_ZH[s.modal])
            front, pre = [unit], [unit]
        elif s.modal == "want":
            want = _u(("want", "to"), "想")
            front, mid, pre = [_u((do_word,))], [want], [want]
        else:
            front = [_u((do_word,))]
    else:  # wh
        word = "who" if s.wh in ("who_s", "who_o") else s.wh
        zh = "哪里" if (s.wh == "where" and v.dest_kind == "go") else _WH_ZH[s.wh]
        wh = _u((word,), zh)
        if s.wh == "who_s":
            front, form = [wh], v.s3
        else:
            front = [wh, _u((do_word,))]
    vu = _verb_unit(v, form)
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
    en = [*front, *subj_en, *mid, vu, *arg_en, *loc_en, *time_en, punct]

    # Chinese: SUBJ TIME NEG/MODAL 在LOC VERB (了) OBJ (了) (吗)
    if past and not s.neg:
        le = _u((), "了", vu)
        if s.obj is not None and _is_heavy(s.obj):
            core = [vu, le, *arg_zh]  # 我昨天买了三本书
        else:
            core = [vu, *arg_zh, le]  # 他昨天喝茶了 / 我们昨天工作了
    else:
        core = [vu, *arg_zh]
    if s.wh in ("what", "who_o") or (s.wh == "where" and v.dest_kind):
        core = [vu, wh]  # 你吃什么 / 她住在哪里 / 他去哪里
    elif s.wh == "where":
        core = [wh, *core]  # 你在哪里吃米饭
    zh = [wh] if s.wh == "who_s" else []
    zh += subj_zh
    if s.wh in ("when", "why"):
        zh.append(wh)
    zh += [*time_en, *pre, *loc_zh, *core]
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


# --------------------------------------------------------------------------------------------
# The language: which derivations are well formed (shared by generator checks and the parser)
# --------------------------------------------------------------------------------------------


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


def _sent_ok(s: _Sent) -> bool:
    """Is ``s`` a sentence of the language (ignoring the length limits)?"""
    nps = [np for np in (s.subj, s.obj) if np is not None]
    if sum(np.owner is not None or np.rel is not None for np in nps) > 1:
        return False
    if s.form in ("pred", "pred_yn"):
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
    if s.form not in ("stmt", "yn", "wh") or s.adj is not None or s.very:
        return False
    v = _VERBS.get(s.verb)
    if v is None or (s.form == "wh") != (s.wh in _WH_ZH):
        return False
    if s.form != "stmt" and s.neg:
        return False
    if s.wh == "who_s":
        if s.subj is not None or not v.person_subj:
            return False
        cls = "person"
    else:
        if s.subj is None or not _np_ok(s.subj, "subj"):
            return False
        cls = _subject_class(v, s.subj)
        if cls is None:
            return False
    # arguments
    if v.dest_kind:
        if s.obj is not None:
            return False
        if s.wh == "where":
            if s.dest is not None or v.dest_kind == "come":
                return False
        elif s.dest not in v.dest_places:
            return False
    else:
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
        if s.wh == "where" and not v.locs:
            return False
    # location
    if s.loc is not None:
        if s.wh == "where" or s.loc not in v.locs:
            return False
        if cls == "animal" and s.loc not in _ANIMAL_PLACES:
            return False
    # modal, time and tense
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


# --------------------------------------------------------------------------------------------
# Parser (English tokens -> derivations) and translate()
# --------------------------------------------------------------------------------------------

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


# --------------------------------------------------------------------------------------------
# Generator
# --------------------------------------------------------------------------------------------

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
        args = (_REL_OBJ_NOUNS[key, cls], _OBJ_PRONS[key, cls], _OBJ_PLACES[key, cls])
        obj = _np(rng, "rel_obj", *args, p_pron=0.2)
        if obj is not None and _diet_ok(_NP(noun=head), obj):
            return _Rel(key, obj=obj)
    if v.intr:
        return _Rel(key)
    return _rel_clause(rng, head)


def _subject_cls(rng: random.Random, v: _Verb) -> str:
    if v.animal_subj and (not v.person_subj or rng.random() < 0.25):
        return "animal"
    return "person"


def _subject(rng: random.Random, v: _Verb, cls: str, force: str | None, light: float) -> _NP | None:
    prons = _PERSON_SUBJ_PRONS if cls == "person" else ["it"]
    return _np(rng, "subj", _SUBJ_NOUNS[v.key, cls], prons, (), force, light, p_pron=0.45)


def _object(rng: random.Random, v: _Verb, cls: str, force: str | None, light: float) -> _NP | None:
    key = (v.key, cls)
    return _np(rng, "obj", _OBJ_NOUNS[key], _OBJ_PRONS[key], _OBJ_PLACES[key], force, light)


def _force_slot(
    rng: random.Random, v: _Verb, cls: str, force: str | None, subj_ok: bool, obj_ok: bool
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
    if wh == "what":
        verbs = _WHAT_VERBS
    elif wh == "who_o":
        verbs = _WHO_O_VERBS
    elif wh == "where":
        verbs = _WHERE_VERBS
    elif modal is not None:
        verbs = _MODAL_VERBS
    elif loc >= 1.0:
        verbs = _DYNAMIC_LOC_VERBS if past else _LOC_VERBS
    else:
        verbs = _DYNAMIC_VERBS if past else _ALL_VERBS
    v = _VERBS[rng.choice(verbs)]
    if modal is not None and loc >= 1.0 and not v.locs:
        return None
    cls = "person" if wh == "who_s" else _subject_cls(rng, v)
    if wh == "what" and not _what_ok(v, cls):
        cls = "person"
    if wh == "who_o" and not _who_ok(v, cls):
        cls = "person"
    obj_slot = not v.dest_kind and wh not in ("what", "who_o") and bool(v.obj_person)
    slot = _force_slot(rng, v, cls, force, wh != "who_s", obj_slot)
    if slot == "":
        return None
    subj = None
    if wh != "who_s":
        subj = _subject(rng, v, cls, force if slot == "subj" else None, light)
        if subj is None:
            return None
    obj = dest = None
    if v.dest_kind:
        if wh != "where":
            dest = rng.choice(v.dest_places)
    elif wh not in ("what", "who_o") and v.obj_person:
        if slot == "obj" or not v.intr or rng.random() < 0.5:
            obj = _object(rng, v, cls, force if slot == "obj" else None, light)
            if obj is None or _reflexive(subj, obj) or not _diet_ok(subj, obj):
                return None
    location = None
    if v.locs and not v.dest_kind and wh != "where" and (loc >= 1.0 or rng.random() < loc):
        places = v.locs if cls == "person" else [p for p in v.locs if p in _ANIMAL_PLACES]
        if not places:
            return None
        location = rng.choice(places)
    if loc >= 1.0 and location is None:
        return None
    when = None
    if wh != "when" and (time >= 1.0 or past or rng.random() < time):
        if past:
            when = rng.choice(_PAST_TIMES)
        elif modal is not None or v.stative:
            when = "now"
        else:
            when = rng.choice(_PRES_TIMES)
    return _Sent(form, subj, v.key, obj, dest, location, when, neg, modal, wh)


def _pred(rng: random.Random, form: str, force: str | None = None, light: float = 0.1):
    adj = rng.choice(_PRED_ADJS)
    nouns, prons = _PRED_NOUNS[adj], _PRED_PRONS[adj]
    subj = _np(rng, "subj", nouns, prons, (), force, light, p_pron=0.35)
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


# --------------------------------------------------------------------------------------------
# Splits
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Splits:
    """Train / valid / test data with a compositional-generalisation test subset.

    Attributes:
        train, valid, test: tuples of `Pair`, pairwise disjoint as English sentences.
        novel_test_indices: sorted indices into ``test`` of the sentences that contain both
            words (lemmas) of a held-out pair.
        held_out_pairs: the held-out (word, word) lemma pairs; no training or validation
            sentence contains both words of any of them.
    """

    train: tuple[Pair, ...]
    valid: tuple[Pair, ...]
    test: tuple[Pair, ...]
    novel_test_indices: tuple[int, ...]
    held_out_pairs: tuple[tuple[str, str], ...]


_N_HELD_OUT = {"adjective+noun": 14, "verb+object": 13, "subject+verb": 13}


def _held_out_candidates() -> dict[str, list[tuple[str, str]]]:
    adj_nouns = {a: [n for n in _NOUN_KEYS if a in _ATTR_ADJS.get(n, ())] for a in _ADJ_KEYS}
    noun_adjs = {n: len(adjs) for n, adjs in _ATTR_ADJS.items()}
    obj_verbs: dict[str, int] = {}
    subj_verbs: dict[str, int] = {}
    for v in _VERB_KEYS:
        for n in _OBJ_NOUNS[v, "person"]:
            obj_verbs[n] = obj_verbs.get(n, 0) + 1
        for n in _SUBJ_NOUNS[v, "person"] + _SUBJ_NOUNS[v, "animal"]:
            subj_verbs[n] = subj_verbs.get(n, 0) + 1
    out: dict[str, list[tuple[str, str]]] = {
        "adjective+noun": [
            (a, n)
            for a in _ADJ_KEYS
            for n in adj_nouns[a]
            if len(adj_nouns[a]) >= 5 and noun_adjs[n] >= 3
        ],
        "verb+object": [
            (v, n)
            for v in _VERB_KEYS
            for n in _OBJ_NOUNS[v, "person"]
            if len(_OBJ_NOUNS[v, "person"]) >= 5 and obj_verbs[n] >= 3 and not _NOUNS[n].kin
        ],
        "subject+verb": [
            (n, v)
            for v in _VERB_KEYS
            for n in _SUBJ_NOUNS[v, "person"] + _SUBJ_NOUNS[v, "animal"]
            if subj_verbs[n] >= 8 and not _NOUNS[n].kin
        ],
    }
    return out


def _choose_held_out(rng: random.Random) -> tuple[tuple[str, str], ...]:
    example_words = [content_words(tokenize(e)) for e in EXAMPLES]
    used: set[str] = set()
    chosen: list[tuple[str, str]] = []
    for kind, candidates in _held_out_candidates().items():
        candidates = list(candidates)
        rng.shuffle(candidates)
        count = 0
        for a, b in candidates:
            if count == _N_HELD_OUT[kind]:
                break
            if a in used or b in used or any(a in ws and b in ws for ws in example_words):
                continue
            used |= {a, b}
            chosen.append((a, b))
            count += 1
    return tuple(chosen)


def build_splits(
    seed: int = 0,
    n_train: int = 200_000,
    n_valid: int = 1_000,
    n_test: int = 2_000,
    n_novel: int = 400,
) -> Splits:
    """Build deterministic train/valid/test splits with held-out word combinations.

    Args:
        seed: seed of the `random.Random` that drives everything; equal seeds give equal splits.
        n_train, n_valid, n_test: number of pairs in each split.
        n_novel: how many of the ``n_test`` test pairs contain a held-out word pair.

    Returns:
        A `Splits`.  Train has no duplicate English sentences; the three splits are disjoint;
        every token of a valid or test sentence occurs in train; the sentences of `EXAMPLES`
        are never put into valid or test.

    Raises:
        ValueError: if a size is negative or ``n_novel > n_test``.
        RuntimeError: if the generator cannot produce enough distinct sentences (sizes far
            beyond the defaults).
    """
    if min(n_train, n_valid, n_test, n_novel) < 0 or n_novel > n_test:
        raise ValueError("sizes must be non-negative and n_novel <= n_test")
    rng = random.Random(seed)
    held = _choose_held_out(rng)
    partners: dict[str, set[str]] = {}
    for a, b in held:
        partners.setdefault(a, set()).add(b)
        partners.setdefault(b, set()).add(a)
    examples = {tokenize(e) for e in EXAMPLES}
    n_ordinary = n_test - n_novel
    # Reserves cover sentences dropped because a token is not in the training vocabulary.
    want_plain = n_train + n_valid + n_ordinary + (n_valid + n_ordinary) // 10 + 20
    want_novel = n_novel + n_novel // 5 + 10
    seen: set[tuple[str, ...]] = set()
    plain: list[Pair] = []
    novel: list[Pair] = []
    max_samples = 50 * (want_plain + want_novel) + 100_000
    for _ in range(max_samples):
        if len(plain) >= want_plain and len(novel) >= want_novel:
            break
        pair = sample_pair(rng)
        if pair.src in seen:
            continue
        seen.add(pair.src)
        words = content_words(pair.src)
        if any(partners.get(w, set()) & words for w in words):
            if len(novel) < want_novel and pair.src not in examples:
                novel.append(pair)
        elif len(plain) < want_plain:
            plain.append(pair)
    else:
        raise RuntimeError("could not generate enough distinct sentences")

    first = [p for p in plain if p.src in examples]
    rest = [p for p in plain if p.src not in examples]
    train = first + rest[: n_train - len(first)]
    rng.shuffle(train)
    vocab = {w for p in train for w in p.src}
    eligible = [p for p in rest[n_train - len(first) :] if vocab.issuperset(p.src)]
    novel = [p for p in novel if vocab.issuperset(p.src)]
    if len(eligible) < n_valid + n_ordinary or len(novel) < n_novel:
        raise RuntimeError("not enough held-out sentences whose words occur in training")
    valid = eligible[:n_valid]
    test = eligible[n_valid : n_valid + n_ordinary] + novel[:n_novel]
    order = list(range(len(test)))
    rng.shuffle(order)
    test = [test[i] for i in order]
    novel_indices = tuple(sorted(pos for pos, i in enumerate(order) if i >= n_ordinary))
    return Splits(tuple(train), tuple(valid), tuple(test), novel_indices, held)


GENERATOR_SETTINGS: dict = {
    "name": "en_zh",
    "version": VERSION,
    "lexicon": lexicon_summary(),
    "constructions": dict(CONSTRUCTIONS),
    "max_src_len": MAX_SRC_LEN,
    "max_tgt_len": MAX_TGT_LEN,
    "source_vocab_size": len(source_words()),
    "target_vocab_size": len(target_tokens()),
    "held_out_pairs": dict(_N_HELD_OUT),
    "conventions": {
        "articles": "the/a/an are dropped; singular and plural nouns translate alike",
        "pronouns": "you -> 你, they/them -> 他们, it -> 它 (animals)",
        "modals": "can -> 能, want to -> 想, should -> 应该",
        "negation": "不 (present), 没 (past and 有), 没 before adjectives in 有...",
        "past": "only with a past time word; VO了, or V了O for quantified/possessed objects",
        "numbers": "number + measure word of the noun; two -> 两",
        "possessive": "my X -> 我的X, but 我X for relation nouns (friend, mother, ...)",
    },
    "split_defaults": {"n_train": 200_000, "n_valid": 1_000, "n_test": 2_000, "n_novel": 400},
}
