"""How well each cross-attention head aligns English words with Chinese characters.

A word alignment is a set of links (source word i, target character j): "character j
translates word i". The en_zh grammar knows the true (gold) links of each of its sentences.
A head's *predicted* links come from its cross-attention: each character is linked to the
word the head looked at most while producing it. The alignment error rate (Och & Ney 2003,
*A Systematic Comparison of Various Statistical Alignment Models*, section 4) compares a
predicted set A with sure gold links S and possible gold links P (S is a subset of P):

    AER(A; S, P) = 1 - (|A ∩ S| + |A ∩ P|) / (|A| + |S|)

It is 0 when A finds every sure link and nothing outside P, 1 when A shares nothing with P;
it mixes recall (|A ∩ S| / |S|) and precision (|A ∩ P| / |A|) like an F-score. The grammar
marks no link as optional, so here S = P = gold. Over many sentences the counts are summed
before the formula (corpus AER: Och & Ney's sets hold the links of the whole test corpus).

Shape letters (DESIGN.md): L layers, H heads, T decoder steps, S source tokens (pieces),
W source words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..core.vocab import tokenize_en
from ..tasks.en_zh import Pair, parse
from .words import group_matrix

Link = tuple[int, int]  # (source word index, target character index)
Links = frozenset[Link]


def gold_pair(sentence: str) -> Pair | None:
    """The grammar's `Pair` for ``sentence`` (tokenised with ``vocab.tokenize_en``, as
    ``Translator.grammar_translation`` does), or None outside the grammar (or ambiguous)."""
    try:
        return parse(" ".join(tokenize_en(sentence)))
    except ValueError:
        return None


def gold_links(sentence: str) -> Links | None:
    """The gold word alignment of a sentence of the en_zh grammar.

    A link (i, j) says that English token i (0-based over the grammar's tokens, ``Pair.src``:
    the words and punctuation as ``tokenize_en`` splits them, ``friend 's`` as two) is
    translated by Chinese character j (0-based over the translation's characters,
    ``Pair.tgt``; ``<s>`` not counted). They are the `Pair`'s ``alignment``:

    - every character of a word's rendering links to every token of that word or fixed
      phrase (``work`` -> 工 and 作; ``want to`` -> 想 from both tokens; ``two`` -> 两本);
    - characters with no English counterpart link to the word they belong with
      (了 -> the verb, 很 and the 是..的 of an adjective predicate -> ``is``, attributive
      的 -> the adjective, relative 的 -> ``who``), except the question particle 吗, which
      has no link;
    - punctuation links to punctuation (``?`` -> ？);
    - dropped words (``the``, ``a``, auxiliary ``do/does/did``, ``to`` of ``go to``) have
      no link, and neither has the model's ``</s>`` (not a grammar token).

    All links are sure links: the grammar marks none as optional.

    >>> sorted(gold_links("why do we work ?"))  # 我们为什么工作？ ; "do" has no link
    [(0, 2), (0, 3), (0, 4), (2, 0), (2, 1), (3, 5), (3, 6), (4, 7)]

    Returns:
        The frozenset of (word index, character index) links, or None when the grammar
        cannot parse the sentence (or finds it ambiguous).
    """
    pair = gold_pair(sentence)
    return None if pair is None else frozenset(pair.alignment)


def head_links(cross_attentions: np.ndarray, src_words: Sequence[int] | None = None,
               ends_with_eos: bool = True) -> dict[tuple[int, int], Links]:
    """Every cross-attention head's predicted alignment: each target character is linked to
    the source word with the largest attention while it is produced.

    Row t of ``cross_attentions`` is decoder input position t (``<s> y1 ..``), the step that
    *outputs* ``tgt_tokens[t + 1]``, i.e. character t. We use that row, as Garg et al. 2019
    (*Jointly Learning to Align and Translate with Transformer Models*, section 3) take the
    attention of the step that predicts the output token; the row whose *input* is character
    t (row t + 1) has already seen it. The last key (the source's ``</s>``) is left out of the
    argmax: many heads park their weight there, and it is no word. With ``ends_with_eos`` the
    last row (which produces ``</s>``) is left out too. For subword sources the pieces'
    weights are first summed into words (``src_words``), as Garg et al. turn subword links
    into word links and as Clark et al. 2019 sum attention *to* a word's pieces
    (``words.group_attention``). Ties go to the first (leftmost) word.

    Args:
        cross_attentions: (L, H, T, S) weights of one sentence (``DecodeTrace``).
        src_words: S word indices of the source tokens, ``</s>`` included (as
            ``DecodeTrace.src_words``; the last one, ``</s>``'s, is ignored); None: every
            token is its own word.
        ends_with_eos: the last row produces ``</s>`` (always so for ``teacher_force``; for
            ``generate`` pass ``trace.finished``).

    Returns:
        ``{(layer, head): links}`` for every layer and head in order, each links a
        frozenset of (word index, character index) with one link per character t in
        0..T-1 (0..T-2 with ``ends_with_eos``).

    Raises:
        ValueError: an array that is not 4-dimensional or has fewer than two keys (no word
            besides ``</s>``), ``src_words`` not S long or not runs of consecutive tokens
            from 0.
    """
    A = np.asarray(cross_attentions)
    if A.ndim != 4 or A.shape[-1] < 2:
        raise ValueError(f"cross_attentions must be (L, H, T, S) with S >= 2 (words, then "
                         f"</s>), got shape {A.shape}")
    L, H, T, S = A.shape
    if src_words is None:
        src_words = range(S)
    src_words = list(src_words)
    if len(src_words) != S:
        raise ValueError(f"src_words has {len(src_words)} entries but the attention has "
                         f"S = {S} source tokens; give one word index per token, </s> included")
    G = group_matrix(src_words[:-1]).astype(np.float64)  # (W, S-1): pieces -> words
    rows = A[:, :, : T - 1 if ends_with_eos else T, : S - 1].astype(np.float64)
    per_word = rows @ G.T  # (L, H, T', S-1) @ (S-1, W) -> (L, H, T', W)
    best = per_word.argmax(-1)  # (L, H, T'): first maximum
    return {(l, h): frozenset((int(w), t) for t, w in enumerate(best[l, h]))
            for l in range(L) for h in range(H)}


def link_counts(predicted: Links, sure: Links, possible: Links) -> np.ndarray:
    """(4,) int64 [|A|, |S|, |A ∩ S|, |A ∩ P|], the numbers AER is made of."""
    return np.array([len(predicted), len(sure), len(predicted & sure),
                     len(predicted & possible)], np.int64)


def corpus_aer(counts: np.ndarray) -> np.ndarray:
    """AER from ``(..., 4)`` counts; 0.0 where |A| + |S| = 0 (nothing to find, none made)."""
    a, s, a_s, a_p = np.moveaxis(np.asarray(counts, np.float64), -1, 0)
    total = a + s
    return np.where(total > 0, 1.0 - (a_s + a_p) / np.maximum(total, 1.0), 0.0)


def alignment_error_rate(predicted: Iterable[Link], sure: Iterable[Link],
                         possible: Iterable[Link] | None = None) -> float:
    """Och & Ney's (2003, section 4) alignment error rate of one predicted alignment.

    AER(A; S, P) = 1 - (|A ∩ S| + |A ∩ P|) / (|A| + |S|), in [0, 1]: 0 for A = S (= P),
    1 when A and P share no link. When there are no predicted and no sure links (|A| + |S| =
    0) the formula is 0/0; we return 0.0: nothing was to be found and nothing wrong was
    proposed. No predicted links against some sure ones gives 1.0.

    Args:
        predicted: the links A (e.g. one entry of `head_links`).
        sure: the sure gold links S.
        possible: the possible gold links P, a superset of S; None: P = S.

    Returns:
        The AER as a float.

    Raises:
        ValueError: a sure link missing from ``possible`` (S must be a subset of P; add the
            sure links to the possible ones).
    """
    A, S = frozenset(predicted), frozenset(sure)
    P = S if possible is None else frozenset(possible)
    if not S <= P:
        raise ValueError(f"sure links must be a subset of the possible links; "
                         f"{sorted(S - P)} are sure but not possible")
    return float(corpus_aer(link_counts(A, S, P)))


@dataclass(frozen=True)
class HeadAER:
    """Corpus alignment error rate of every cross-attention head (`head_aer`).

    Attributes:
        aer: (L, H) float64 AER of each head, counts summed over the sentences scored.
        best_heads: L head indices, the head with the lowest AER in each layer (the first
            one on a tie).
        n_sentences: how many sentences were scored (inside the grammar).
        n_skipped: how many were skipped (outside the grammar: no gold alignment).
    """

    aer: np.ndarray
    best_heads: tuple[int, ...]
    n_sentences: int
    n_skipped: int


def grammar_word_ids(src_labels: Sequence[str], words: Sequence[str]) -> tuple[int, ...]:
    """The grammar word index of every source token, by spelling.

    The model's own word grouping (``DecodeTrace.src_words``) need not match the grammar's
    tokens: byte-level BPE makes one word of ``friend's`` where the grammar has ``friend`` and
    ``'s``, and two of ``Ġ'`` ``s``. So the pieces are laid over the grammar's tokens
    character by character (spaces and case ignored): a piece belongs to the token its
    characters fall in, a lone space piece (``␣``) to the token after it.

    Args:
        src_labels: S readable labels of the source tokens (``DecodeTrace.src_labels``), the
            last one ``</s>``.
        words: the grammar's W tokens (``Pair.src``).

    Returns:
        S word indices, ``</s>`` getting W (a word of its own), for `head_links`.

    Raises:
        ValueError: pieces that do not spell the grammar's tokens, or a piece that spans two
            of them (the scores would be wrong; tokenise as the grammar does).
    """
    text = "".join(words).lower()
    owner = [w for w, word in enumerate(words) for _ in word]  # character -> word
    out: list[int] = []
    pos = 0
    for label in src_labels[:-1]:
        piece = "" if label == "␣" else label.lower()
        if text[pos : pos + len(piece)] != piece:
            raise ValueError(f"source pieces {list(src_labels)} do not spell the grammar's "
                             f"tokens {list(words)}")
        if len(set(owner[pos : pos + len(piece)])) > 1:
            raise ValueError(f"piece {label!r} spans two of the grammar's tokens {list(words)}")
        out.append(owner[pos] if pos < len(text) else len(words) - 1)
        pos += len(piece)
    if pos != len(text):
        raise ValueError(f"source pieces {list(src_labels)} do not spell the grammar's "
                         f"tokens {list(words)}")
    return (*out, len(words))


def head_aer(translator, sentences: Iterable[str]) -> HeadAER:
    """Corpus AER of every cross-attention head against the grammar's gold alignments.

    For each sentence inside the model's grammar (``translator.grammar_translation`` is not
    None; the gold links are `gold_links`'), the grammar's own translation is fed to the
    decoder (``translator.teacher_force``), so the target characters are exactly the gold
    ones whatever the model would output; each head's links come from `head_links`, with
    subword pieces merged into the grammar's words (`grammar_word_ids`). The counts |A|,
    |S|, |A ∩ S|, |A ∩ P| are summed over sentences and put into Och & Ney's formula once
    (corpus AER; Garg et al. 2019 report it so), with S = P = the gold links. Sentences
    outside the grammar are skipped, never scored.

    Args:
        translator: a ``Translator`` (``load_pretrained``).
        sentences: English sentences, as typed (each is decoded as given).

    Returns:
        HeadAER with (L, H) float64 ``aer`` (L decoder layers, H heads).

    Raises:
        ValueError: no sentence has a gold alignment (the model has no grammar, or every
            sentence is outside it), or a model whose source pieces or target tokens do not
            match the grammar's tokens and characters.
        InputError: a grammar sentence the model refuses (``teacher_force``).
    """
    total: np.ndarray | None = None  # (L, H, 4) summed counts
    n_used = n_skipped = 0
    for sentence in sentences:
        pair = gold_pair(sentence)
        reference = translator.grammar_translation(sentence)
        if pair is None or reference is None:
            n_skipped += 1
            continue
        if reference != "".join(pair.tgt):
            raise ValueError(f"the model's grammar translates {sentence!r} as {reference!r}, "
                             f"the en_zh grammar as {''.join(pair.tgt)!r}")
        trace = translator.teacher_force(sentence, reference)
        if tuple(trace.tgt_tokens[1:-1]) != pair.tgt:
            raise ValueError(f"target tokens {list(trace.tgt_tokens)} are not one per "
                             f"character of {reference!r}; AER needs character tokens")
        links = head_links(trace.cross_attentions,
                           grammar_word_ids(trace.src_labels, pair.src))
        gold = frozenset(pair.alignment)
        L, H = trace.cross_attentions.shape[:2]
        counts = np.stack([np.stack([link_counts(links[l, h], gold, gold) for h in range(H)])
                           for l in range(L)])  # (L, H, 4)
        total = counts if total is None else total + counts
        n_used += 1
    if total is None:
        raise ValueError(f"no gold alignments: none of the {n_skipped} sentences is inside "
                         f"the model's grammar (or the model has none), so head AER cannot "
                         f"be computed")
    aer = corpus_aer(total)  # (L, H)
    return HeadAER(aer=aer, best_heads=tuple(int(h) for h in aer.argmin(-1)),
                   n_sentences=n_used, n_skipped=n_skipped)



def gold_cells(sentence: str, src_labels: Sequence[str]) -> tuple[tuple[int, int], ...] | None:
    """The gold links of ``sentence`` as cells (row, column) of its cross-attention map
    when the grammar's translation is teacher-forced: row j is the decoder input that
    produces character j (`head_links`), and a link to a word covers every source piece of
    that word (``src_labels``: the trace's S labels, ``</s>`` last; `grammar_word_ids`).

    Returns:
        The sorted cells, or None outside the grammar.

    Raises:
        ValueError: as `grammar_word_ids`.
    """
    pair = gold_pair(sentence)
    if pair is None:
        return None
    owner = grammar_word_ids(src_labels, pair.src)
    return tuple(sorted({(j, p) for i, j in pair.alignment
                         for p, w in enumerate(owner) if w == i}))
