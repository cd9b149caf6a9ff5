"""What each attention head does, in a few numbers per head.

A head's map is hard to read one sentence at a time; averaged over many query rows, simple
numbers show its habit. Low entropy and high confidence mean a head looks at one key, high
entropy that it spreads out (Clark et al. 2019, section 3.3; Voita et al. 2019, section
4.1). A head that puts most weight on the previous, the same or the next position is a
*positional* head (Voita et al. 2019, section 5.1). Heads that park their weight on ``</s>``
or on punctuation often have "nothing to do" for that query (Clark et al. 2019, section
3.2). In cross-attention, weight near the proportional diagonal marks a head that aligns
source and target words in order, like a monotonic word alignment.

Voita, Talbot, Moiseev, Sennrich, Titov, "Analyzing Multi-Head Self-Attention: Specialized
Heads Do the Heavy Lifting, the Rest Can Be Pruned", ACL 2019. Clark, Khandelwal, Levy,
Manning, "What Does BERT Look At? An Analysis of BERT's Attention", BlackboxNLP 2019.

Shape letters: L layers, H heads, S source tokens, T decoder inputs, Tq query rows, Tk keys.
Every statistic is a mean over query rows (each row of each sentence counts once), float64.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..decoding.trace import one_map

# kind -> the statistics defined for it, in display order. "next" is left out for the
# decoder: under the look-ahead mask a query never sees key i + 1, so it is always 0.
STATISTICS: dict[str, tuple[str, ...]] = {
    "encoder": ("entropy", "confidence", "previous", "same", "next", "eos", "punctuation"),
    "decoder": ("entropy", "confidence", "previous", "same", "eos", "punctuation"),
    "cross": ("entropy", "confidence", "diagonal", "eos", "punctuation"),
}
# A decoder-only model's one kind ("decoder": self-attention over its one sequence, the
# prompt then the decoder inputs), with "first": the weight on the sequence's first token,
# the attention sink of Xiao et al. 2023.
ONE_STACK_STATISTICS = ("entropy", "confidence", "previous", "same", "first", "eos",
                        "punctuation")


def statistics_for(kind: str, architecture: str = "encoder-decoder") -> tuple[str, ...]:
    """The statistics of ``kind`` for a model of ``architecture``, in display order: a
    decoder-only model's ``"decoder"`` kind has ``ONE_STACK_STATISTICS``, else
    ``STATISTICS[kind]``.

    Raises:
        ValueError: an unknown kind, or a decoder-only model's other than ``"decoder"``.
    """
    _check_kind(kind)
    if architecture == "decoder-only":
        if kind != "decoder":
            raise ValueError(f"a decoder-only model has only 'decoder' attention, got {kind!r}")
        return ONE_STACK_STATISTICS
    return STATISTICS[kind]


def kinds_of(trace) -> tuple[str, ...]:
    """The attention kinds a trace has: all three for an encoder-decoder, ``"decoder"``
    alone for a decoder-only model."""
    return ("decoder",) if trace.architecture == "decoder-only" else tuple(STATISTICS)
WORD_MARKS = ("Ġ", "▁")  # byte-level BPE's and sentencepiece's "a space before me" marks


@dataclass(frozen=True, eq=False)  # eq=False: == on dicts of arrays has no single truth value
class HeadStats:
    """Per-head statistics of one attention kind, averaged over query rows.

    Attributes:
        kind: ``"encoder"``, ``"decoder"`` or ``"cross"``.
        rows: query rows averaged over (all sentences together).
        sentences: sentences those rows came from.
        values: statistic name (``STATISTICS[kind]``, in that order) -> (L, H) float64 array,
            read-only. ``entropy`` is in nats; every other statistic is a share in [0, 1].
    """

    kind: str
    rows: int
    sentences: int
    values: Mapping[str, np.ndarray]

    @property
    def shape(self) -> tuple[int, int]:
        """(L, H)."""
        return next(iter(self.values.values())).shape


def _check_kind(kind: str) -> None:
    if kind not in STATISTICS:
        raise ValueError(f"kind must be one of {', '.join(STATISTICS)}; got {kind!r}")


def _strip_mark(label: str) -> str:
    """``Ġ,`` -> ``,`` and ``▁。`` -> ``。``: one leading word mark removed."""
    return label[1:] if label[:1] in WORD_MARKS else label


def is_punctuation(label: str) -> bool:
    """True for a non-empty label (after one leading word mark is removed) whose every
    character is Unicode punctuation (category P*: ``,`` ``?`` ``。`` ``，`` ``？`` ``…``).
    Special tokens (``</s>``: ``<`` and ``>`` are math symbols) and ``$`` are not."""
    text = _strip_mark(label)
    return bool(text) and all(unicodedata.category(c).startswith("P") for c in text)


def _inputs(trace, kind: str) -> tuple[np.ndarray, Sequence[str], Sequence[str]]:
    """(L, H, Tq, Tk) float64 weights of ``kind``, the Tk key tokens and their Tk labels; a
    decoder-only trace's one map over its N = S + T tokens (``decoding.one_map``).

    Raises:
        ValueError: an array that is not (L, H, Tq, Tk) with Tq, Tk matching the tokens.
    """
    src, dec = tuple(trace.src_tokens), tuple(trace.decoder_input_tokens)
    src_labels = tuple(trace.src_labels) or src
    if trace.architecture == "decoder-only":
        statistics_for(kind, "decoder-only")  # "decoder" only
        return (np.asarray(one_map(trace), dtype=np.float64), src + dec,
                src_labels + tuple(trace.decoder_input_labels))
    weights, (Tq, Tk), keys, labels = {
        "encoder": (trace.encoder_attentions, (len(src), len(src)), src, src_labels),
        "decoder": (trace.decoder_attentions, (len(dec), len(dec)), dec, dec),
        "cross": (trace.cross_attentions, (len(dec), len(src)), src, src_labels),
    }[kind]
    A = np.asarray(weights, dtype=np.float64)  # (L, H, Tq, Tk)
    if A.ndim != 4 or A.shape[2:] != (Tq, Tk):
        raise ValueError(f"{kind} attentions must be (L, H, {Tq}, {Tk}) to match the trace's "
                         f"tokens; got shape {A.shape}")
    if len(labels) != Tk:
        raise ValueError(f"{len(labels)} source labels for {Tk} source tokens: src_labels must "
                         f"have one label per token")
    return A, keys, labels


def _shifted_diagonal(A: np.ndarray, offset: int) -> np.ndarray:
    """(L, H, N) weight of query row i on key i + offset; 0 where that key does not exist."""
    out = np.zeros(A.shape[:-1])  # (L, H, N)
    d = np.diagonal(A, offset=offset, axis1=-2, axis2=-1)  # (L, H, N - |offset|)
    if offset >= 0:
        out[..., : d.shape[-1]] = d  # rows 0 .. N-1-offset have key i + offset
    else:
        out[..., -offset:] = d  # rows -offset .. N-1 have key i + offset
    return out


def diagonal_band(T: int, S: int) -> np.ndarray:
    """(T, S) bool: key j is within one position of row t's proportional diagonal key
    round(t * (S - 1) / max(T - 1, 1)) (rounded half to even, as Python's ``round``)."""
    centre = np.rint(np.arange(T) * (S - 1) / max(T - 1, 1)).astype(int)  # (T,)
    return np.abs(np.arange(S)[None, :] - centre[:, None]) <= 1  # (T, S)


def _row_values(A: np.ndarray, names: Sequence[str], keys: Sequence[str],
                labels: Sequence[str], *, eos: str) -> dict[str, np.ndarray]:
    """Statistic -> (L, H, Tq) per-query-row values of (L, H, Tq, Tk) weights ``A``, for
    the statistics ``names``."""
    plogp = np.where(A > 0, A * np.log(np.where(A > 0, A, 1.0)), 0.0)  # 0 log 0 = 0
    rows = {"entropy": -plogp.sum(-1), "confidence": A.max(-1)}
    if "diagonal" in names:  # cross-attention
        rows["diagonal"] = (A * diagonal_band(*A.shape[2:])).sum(-1)
    else:
        rows["previous"] = _shifted_diagonal(A, -1)
        rows["same"] = _shifted_diagonal(A, 0)
        rows["next"] = _shifted_diagonal(A, +1)
        rows["first"] = A[..., 0]  # the sink: weight on the first key
    is_eos = np.array([k == eos for k in keys], dtype=np.float64)  # (Tk,)
    is_punct = np.array([is_punctuation(x) for x in labels], dtype=np.float64)  # (Tk,)
    rows["eos"] = A @ is_eos  # (L, H, Tq)
    rows["punctuation"] = A @ is_punct  # (L, H, Tq)
    return {name: rows[name] for name in names}


def _frozen(values: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    out = {}
    for name, v in values.items():
        v = np.array(v, dtype=np.float64)  # a copy the caller cannot reach
        v.flags.writeable = False
        out[name] = v
    return out


def head_stats(trace, kind: str, eos: str = "</s>") -> HeadStats:
    """Per-head statistics of one sentence's ``kind`` attention (a ``DecodeTrace``).

    For query row i with weights p over the keys j (each row sums to 1), the row values are

    - ``entropy``: -sum_j p_j log p_j in nats, 0 log 0 = 0 (Clark et al. 2019, section 3.3);
      0 for a one-hot row, log Tk for a uniform one.
    - ``confidence``: max_j p_j (Voita et al. 2019, section 4.1; they leave out the
      end-of-sentence symbol, here every row counts).
    - ``previous`` / ``same`` / ``next`` (encoder; decoder without ``next``): p_{i-1}, p_i,
      p_{i+1}, 0 where that key does not exist. Voita et al. (2019, section 5.1) call a head
      positional when its maximum weight is on one relative position in at least 90% of
      rows; this mean weight is the soft version of that.
    - ``diagonal`` (cross): sum of p_j over |j - c_i| <= 1, c_i = round(i * (S - 1) /
      max(T - 1, 1)) the proportional diagonal; a monotonic-alignment head scores high.
    - ``first`` (a decoder-only model's one sequence): p_0, the weight on the first token,
      an attention sink (Xiao et al. 2023, "Efficient Streaming Language Models with
      Attention Sinks"); row 0 (the first token itself, 1) counts as every row.
    - ``eos``: sum of p_j over keys whose token equals ``eos`` (Clark et al. 2019, 3.2).
    - ``punctuation``: sum of p_j over keys whose label is punctuation (``is_punctuation``;
      source keys use ``trace.src_labels``, decoder keys the decoder input tokens; Clark et
      al. 2019, 3.2).

    Args:
        trace: a ``DecodeTrace`` (its tokens and ``*_attentions`` arrays are read).
        kind: ``"encoder"`` (S rows over S keys), ``"decoder"`` (T over T) or ``"cross"``
            (T over S); a decoder-only trace's only kind is ``"decoder"`` (N over N).
        eos: the end-of-sentence token.

    Returns:
        HeadStats with one (L, H) float64 array per statistic: the mean over the Tq rows.

    Raises:
        ValueError: an unknown kind, arrays that do not match the tokens, no query rows.
    """
    names = statistics_for(kind, trace.architecture)
    A, keys, labels = _inputs(trace, kind)
    if A.shape[2] == 0:
        raise ValueError(f"the trace has no {kind} query rows: there is nothing to average")
    rows = _row_values(A, names, keys, labels, eos=eos)
    return HeadStats(kind, A.shape[2], 1, _frozen({k: v.mean(-1) for k, v in rows.items()}))


def pool(stats: Sequence[HeadStats]) -> HeadStats:
    """Statistics of several sentences together: the row-weighted mean
    sum_s rows_s * value_s / sum_s rows_s, equal to averaging over all their rows at once.

    Raises:
        ValueError: no statistics, or statistics of different kinds or (L, H) shapes.
    """
    stats = list(stats)
    if not stats:
        raise ValueError("pool needs at least one HeadStats")
    first = stats[0]
    for s in stats[1:]:
        if s.kind != first.kind:
            raise ValueError(f"cannot pool {first.kind} with {s.kind} statistics: pool one "
                             f"attention kind at a time")
        if s.shape != first.shape or set(s.values) != set(first.values):
            raise ValueError(f"cannot pool statistics of shape {first.shape} with shape "
                             f"{s.shape}: pool traces of one model only")
    rows = sum(s.rows for s in stats)
    values = {name: sum(s.rows * s.values[name] for s in stats) / rows for name in first.values}
    return HeadStats(first.kind, rows, sum(s.sentences for s in stats), _frozen(values))


def head_stats_over(traces: Iterable, eos: str = "</s>",
                    progress: Callable[[int, int], None] | None = None) -> dict[str, HeadStats]:
    """{kind: pooled HeadStats} over every kind the traces have (``kinds_of``) for several
    traces.

    Args:
        traces: ``DecodeTrace`` objects of one model.
        eos: the end-of-sentence token.
        progress: called as ``progress(i, n)`` after trace i of n (1-based: i = n at the end).

    Raises:
        ValueError: no traces, or what ``head_stats`` and ``pool`` raise.
    """
    traces = list(traces)
    if not traces:
        raise ValueError("head_stats_over needs at least one trace")
    per_kind: dict[str, list[HeadStats]] = {kind: [] for kind in kinds_of(traces[0])}
    for i, trace in enumerate(traces, start=1):
        for kind, acc in per_kind.items():
            acc.append(head_stats(trace, kind, eos))
        if progress is not None:
            progress(i, len(traces))
    return {kind: pool(acc) for kind, acc in per_kind.items()}


def rank_heads(stats: HeadStats, statistic: str,
               descending: bool = True) -> list[tuple[int, int, float]]:
    """All L * H heads as (layer, head, value), sorted by ``statistic`` (highest first
    when ``descending``), ties in (layer, head) order either way.

    Raises:
        ValueError: a statistic not defined for ``stats.kind``.
    """
    if statistic not in stats.values:
        why = " (the look-ahead mask keeps it at 0)" if statistic == "next" else ""
        raise ValueError(f"statistic {statistic!r} is not defined for {stats.kind} attention"
                         f"{why}; choose one of {', '.join(stats.values)}")
    V = stats.values[statistic]  # (L, H)
    heads = [(layer, head, float(V[layer, head]))
             for layer in range(V.shape[0]) for head in range(V.shape[1])]
    sign = -1.0 if descending else 1.0
    return sorted(heads, key=lambda x: (sign * x[2], x[0], x[1]))
