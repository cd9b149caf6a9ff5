"""The lexicon of the en_zh grammar: reading the data files in `data/` (described in its
README.md) and building the word tables (nouns, places, verbs, adjectives, pronouns, time words,
numbers) that the realisation, the parser and the generator share."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import NamedTuple

# --------------------------------------------------------------------------------------------
# Lexicon data files (data/, described in its README.md).  In the tables "-" means
# "none"; row order matters, since it drives sampling.
# --------------------------------------------------------------------------------------------

_DATA_DIR = Path(__file__).with_name("data")


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


_PUNCT = frozenset({"?", "."})
_FUNCTION_WORDS = _lexicon("function_words").split()
_PARTICLES_ZH = _lexicon("particles_zh")
