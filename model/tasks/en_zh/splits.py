"""Deterministic train/valid/test splits with held-out word combinations: `Splits` and
`build_splits`."""

from __future__ import annotations

import random
from dataclasses import dataclass

from .generate import sample_pair
from .lexicon import _ADJ_KEYS, _ATTR_ADJS, _NOUN_KEYS, _NOUNS, _VERB_KEYS, EXAMPLES
from .parse import tokenize
from .phrases import _OBJ_NOUNS, _SUBJ_NOUNS
from .realise import Pair
from .vocabulary import content_words


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


def _draw(
    rng: random.Random, held: tuple[tuple[str, str], ...], want_plain: int, want_novel: int
) -> tuple[list[Pair], list[Pair]]:
    """Sample distinct English sentences until there are ``want_plain`` without a held-out
    pair ("plain") and ``want_novel`` with one ("novel", none of them an `EXAMPLES` sentence).

    Raises:
        RuntimeError: if 50 draws per wanted sentence (plus 100,000) do not give them.
    """
    partners: dict[str, set[str]] = {}
    for a, b in held:
        partners.setdefault(a, set()).add(b)
        partners.setdefault(b, set()).add(a)
    examples = {tokenize(e) for e in EXAMPLES}
    seen: set[tuple[str, ...]] = set()
    plain: list[Pair] = []
    novel: list[Pair] = []
    max_samples = 50 * (want_plain + want_novel) + 100_000
    for _ in range(max_samples):
        if len(plain) >= want_plain and len(novel) >= want_novel:
            return plain, novel
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
    raise RuntimeError("could not generate enough distinct sentences")


def build_splits(
    seed: int = 0,
    *,
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
    n_ordinary = n_test - n_novel
    # Reserves cover sentences dropped because a token is not in the training vocabulary.
    want_plain = n_train + n_valid + n_ordinary + (n_valid + n_ordinary) // 10 + 20
    want_novel = n_novel + n_novel // 5 + 10
    plain, novel = _draw(rng, held, want_plain, want_novel)

    examples = {tokenize(e) for e in EXAMPLES}
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
