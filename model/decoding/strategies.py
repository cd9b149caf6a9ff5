"""Token-by-token decoding that records everything a person may want to see.

Greedy decoding (the Annotated Transformer's ``greedy_decode``): start the decoder with
``<s>``, and at step t feed ``<s> y1 .. yt``, take the most probable next token, stop at
``</s>`` or after ``max_new_tokens``. Every step records the decoder input so far, the chosen
token, the top-k next-token probabilities and the new rows of the decoder self-attention and
cross-attention, so the trace holds the same maps that one teacher-forced pass over the final
output would give (a test checks this).

Shape letters: B batch, S source length, T decoder steps, L layers, H heads, V target
vocabulary size, K top-k.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from ..core.config import end_ids
from ..core.transformer import Transformer
from .processors import LogitsProcessor, apply, for_settings
from .settings import GenerationSettings, check
from .trace import BeamCandidate, BeamTrace, DecodeStep, DecodeTrace, Hypothesis


def _stack_layers(per_layer: tuple[torch.Tensor, ...]) -> np.ndarray:
    """Per-layer (1, H, Tq, Tk) tensors -> (L, H, Tq, Tk) float32 numpy."""
    return torch.stack([a[0] for a in per_layer]).float().cpu().numpy()


def sampling_distribution(probs: torch.Tensor, temperature: float = 1.0, top_k: int = 0,
                          top_p: float = 1.0) -> torch.Tensor:
    """The distribution a sampler draws from, as in Hugging Face ``generate()``.

    p_T(i) proportional to p(i)^(1/T) (softmax of logits / T); then only the ``top_k`` most
    probable tokens (0 = all) and the smallest set whose probability reaches ``top_p``
    (nucleus sampling, Holtzman et al., 2020) are kept, and the rest renormalised. A
    temperature at or below 1e-5 is greedy: all mass on the argmax.

    Args:
        probs: (V,) or (B, V) probabilities.

    Returns:
        The same shape, each row summing to 1.

    Raises:
        ValueError: ``temperature``, ``top_k`` or ``top_p`` outside ``settings.BOUNDS``.
    """
    for name, value in (("temperature", temperature), ("top_k", top_k), ("top_p", top_p)):
        check(name, value, ValueError)
    p = probs.float()
    if temperature <= 1e-5:
        return torch.nn.functional.one_hot(p.argmax(-1), p.size(-1)).to(p.dtype)
    logp = torch.log(p.clamp_min(1e-30)) / temperature
    p = logp.softmax(-1)
    if 0 < top_k < p.size(-1):
        kth = p.topk(top_k, dim=-1).values[..., -1:]  # (..., 1)
        p = torch.where(p >= kth, p, torch.zeros_like(p))
    if top_p < 1.0:
        sorted_p, order = p.sort(-1, descending=True)
        before = sorted_p.cumsum(-1) - sorted_p  # mass strictly before each token
        keep_sorted = before < top_p * sorted_p.sum(-1, keepdim=True)  # the first always kept
        keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
        p = torch.where(keep, p, torch.zeros_like(p))
    return p / p.sum(-1, keepdim=True)


Chooser = Callable[[torch.Tensor, int], int]
PETables = tuple[torch.Tensor | None, torch.Tensor | None]  # (source, target) pe_table
NORMAL_POSITIONS: PETables = (None, None)  # the model's own sinusoidal table on both sides


def check_arguments(model: Transformer, src_ids: torch.Tensor, settings: GenerationSettings,
                    forced: Sequence[int] = (), *, batch: bool = False) -> int:
    """The one argument check of every strategy (``run_decoder``, ``greedy_decode``,
    ``sample_decode``, ``beam_search``, ``batch.greedy_batch``); the settings' own fields
    were checked when they were made (``GenerationSettings``).

    Args:
        src_ids: (1, S) int64 source ids, or (B, S) where ``batch``.
        settings: how to decode; its ``max_new_tokens`` None means the model's positions
            allow: max_len - 1.
        forced: the tokens to take first.

    Returns:
        max_new_tokens, the most tokens to produce (``</s>`` included).

    Raises:
        TypeError: ``settings`` not a ``GenerationSettings``.
        ValueError: ``src_ids`` not (1, S) (not 2-D where ``batch``), ``max_new_tokens``
            above max_len - 1, or more forced tokens than ``max_new_tokens``.
    """
    if not isinstance(settings, GenerationSettings):
        raise TypeError(f"settings must be a GenerationSettings, got {type(settings).__name__}")
    if src_ids.dim() != 2 or (src_ids.size(0) != 1 and not batch):
        raise ValueError(f"src_ids must be {'(B, S)' if batch else '(1, S)'}, "
                         f"got {tuple(src_ids.shape)}")
    limit = model.config.max_len - 1
    max_new_tokens = limit if settings.max_new_tokens is None else settings.max_new_tokens
    check("max_new_tokens", max_new_tokens, ValueError, high=limit)
    if len(forced) > max_new_tokens:
        raise ValueError(f"{len(forced)} forced tokens exceed max_new_tokens={max_new_tokens}")
    return max_new_tokens


@dataclass
class _Record:
    """What ``run_decoder`` records as it goes: the decoder inputs ``ids`` (the start token
    first), each step's own distribution (V,), the attention rows (L, H, T, T) and
    (L, H, T, S) filled one row per step, the leading steps that were forced, and whether
    ``</s>`` came."""

    ids: list[int]
    vocab_size: int
    dec_attn: np.ndarray
    cross_attn: np.ndarray
    probs: list[np.ndarray] = field(default_factory=list)
    n_forced: int = 0
    finished: bool = False

    @classmethod
    def start(cls, config, max_new_tokens: int, src_len: int, start_id: int) -> _Record:
        """An empty record for at most ``max_new_tokens`` steps over ``src_len`` (S) source
        tokens of a model of ``config``: the start token ``start_id``, zero maps."""
        L, H, T = config.num_decoder_layers, config.nhead, max_new_tokens
        return cls([start_id], config.tgt_vocab_size, np.zeros((L, H, T, T), np.float32),
                   np.zeros((L, H, T, src_len), np.float32))


@torch.inference_mode()
def run_decoder(model: Transformer, src_ids: torch.Tensor, settings: GenerationSettings,
                processors: Sequence[LogitsProcessor] = (), *, choose: Chooser | None = None,
                forced: Sequence[int] = (), pe_tables: PETables = NORMAL_POSITIONS,
                tgt_itos: Sequence[str] | None = None, num_candidates: int = 10,
                start_id: int | None = None) -> DecodeTrace:
    """Decode one sentence token by token with a key/value cache, recording every step.

    The first ``len(forced)`` tokens are taken from ``forced`` (a prefix, or a whole
    reference for teacher forcing); after that ``choose(probs (V,), t) -> id`` picks each
    token until ``</s>`` or ``settings.max_new_tokens``. ``choose=None`` stops after the
    forced tokens. Each step feeds only the newest token and reuses the cached keys and
    values, so the recorded rows equal one teacher-forced pass over the result (tests check
    1e-5).

    Args:
        model, src_ids: a Transformer in eval mode; (1, S) int64 source ids ending with
            ``</s>``, no padding.
        settings: how to decode (``GenerationSettings``); here its ``max_new_tokens`` (the
            most tokens to produce, ``</s>`` included; None: max_len - 1),
            ``repetition_penalty`` and ``no_repeat_ngram_size`` count.
        processors: ``LogitsProcessor``s applied in order after the settings' own
            (``processors.for_settings``) to each step's log-probabilities (1, V) before the
            token is chosen (``step_probs`` keep the model's own distribution); a step where
            they leave one token possible counts as forced.
        choose: the strategy's choice of a token, or None; forced: the tokens to take first.
        pe_tables: (source, target) positional encodings replacing the sinusoidal table for
            this call (``layers.positional_tables``); (None, None) = the normal table.
        tgt_itos: the target token string of every id (default: the ids as strings).
        num_candidates: K, the next-token candidates each ``DecodeStep`` keeps.
        start_id: the decoder's first input; None = ``config.bos_id``. A decoder-only
            model's is the prompt's last token (the source: the prompt before it).

    Returns:
        DecodeTrace of the target side: ``src_tokens`` are the source ids as strings and
        ``src_text`` is empty until the caller (``Translator``) fills in the sentence's.

    Raises:
        TypeError, ValueError: see ``check_arguments``.
    """
    c = model.config
    max_new_tokens = check_arguments(model, src_ids, settings, forced)
    todo = [*for_settings(settings), *processors]
    enc = model.encode(src_ids, pe_table=pe_tables[0])
    start = c.bos_id if start_id is None else start_id
    rec, cache, ends = _Record.start(c, max_new_tokens, src_ids.size(1), start), None, end_ids(c)
    for t in range(max_new_tokens):
        if t >= len(forced) and choose is None:
            break
        out = model.decode(torch.tensor([[rec.ids[-1]]]), enc.memory, enc.key_padding_mask,
                           past_key_values=cache, pe_table=pe_tables[1])
        cache = out.past_key_values
        probs = _record_step(rec, t, out, todo)  # (V,) what the strategy chooses from
        if t == rec.n_forced and (t < len(forced) or int(probs.gt(0).sum()) == 1):
            rec.n_forced += 1  # a prefix token, or one a processor forces (forced_bos)
        rec.ids.append(int(forced[t]) if t < len(forced) else int(choose(probs, t)))
        if rec.ids[-1] in ends:
            rec.finished = True
            break
    itos = tgt_itos if tgt_itos is not None else [str(i) for i in range(c.tgt_vocab_size)]
    return _decode_trace(rec, src_ids, enc, itos=itos, num_candidates=num_candidates)


def _record_step(rec: _Record, t: int, out, processors: Sequence[LogitsProcessor]
                 ) -> torch.Tensor:
    """Record step ``t`` of ``run_decoder`` from the decoder's ``out`` (one new position):
    the model's own distribution and row t of every layer's maps (query = position t; keys
    = positions 0..t, or the source). Returns the (V,) distribution after ``processors``."""
    logp = out.logits[:, -1].float().log_softmax(-1)  # (1, V)
    rec.probs.append(logp[0].exp().numpy())  # the model's own distribution
    logp = apply(processors, t, logp, torch.tensor([rec.ids]))  # (1, V)
    rec.dec_attn[:, :, t, : t + 1] = _stack_layers(out.decoder_attentions)[:, :, 0, :]
    rec.cross_attn[:, :, t, :] = _stack_layers(out.cross_attentions)[:, :, 0, :]
    return logp[0].softmax(-1)


def _decode_trace(rec: _Record, src_ids: torch.Tensor, enc, *, itos: Sequence[str],
                  num_candidates: int) -> DecodeTrace:
    """``run_decoder``'s ``DecodeTrace`` of what ``rec`` holds, each step with its
    ``num_candidates`` most probable next tokens (``top_k_step``); ``enc`` is the
    source's ``EncoderOutput``."""
    ids, T = rec.ids, len(rec.ids) - 1
    tgt_tokens = tuple(itos[i] for i in ids)
    step_probs = np.array(rec.probs, np.float32).reshape(T, rec.vocab_size)
    steps = []
    for t, probs in enumerate(step_probs):
        top_ids, top_probs, entropy = top_k_step(probs, num_candidates)
        steps.append(DecodeStep(
            index=t, input_tokens=tgt_tokens[: t + 1], token=tgt_tokens[t + 1],
            token_id=int(ids[t + 1]), prob=float(probs[ids[t + 1]]),
            top_tokens=tuple(itos[i] for i in top_ids), top_ids=top_ids,
            top_probs=top_probs, entropy=entropy, forced=t < rec.n_forced,
        ))
    return DecodeTrace(
        src_text="",
        src_tokens=tuple(str(i) for i in src_ids[0].tolist()),
        src_ids=src_ids[0].numpy().copy(),
        tgt_tokens=tgt_tokens,
        tgt_ids=np.array(ids, dtype=np.int64),
        steps=tuple(steps),
        encoder_attentions=_stack_layers(enc.attentions),
        decoder_attentions=rec.dec_attn[:, :, :T, :T].copy(),
        cross_attentions=rec.cross_attn[:, :, :T].copy(),
        step_probs=step_probs,
        finished=rec.finished,
        n_forced=min(rec.n_forced, T),
    )


def greedy_decode(model: Transformer, src_ids: torch.Tensor, settings: GenerationSettings,
                  processors: Sequence[LogitsProcessor] = (), **options) -> DecodeTrace:
    """Greedy decoding (the Annotated Transformer's ``greedy_decode``): at every step the
    most probable token. See ``run_decoder`` for the arguments (``options``: its
    ``forced``, ``pe_tables``, ``tgt_itos`` and ``num_candidates``), result and errors."""
    return run_decoder(model, src_ids, settings, processors,
                       choose=lambda p, t: int(p.argmax()), **options)


def sample_decode(model: Transformer, src_ids: torch.Tensor, settings: GenerationSettings,
                  processors: Sequence[LogitsProcessor] = (), **options) -> DecodeTrace:
    """Ancestral sampling from ``sampling_distribution`` with the settings' ``temperature``,
    ``top_k`` and ``top_p`` at every step; the same ``seed`` (None: 0) gives the same
    output. See ``run_decoder`` for the rest."""
    s = settings
    gen = torch.Generator().manual_seed(0 if s.seed is None else int(s.seed))

    def choose(probs: torch.Tensor, t: int) -> int:
        dist = sampling_distribution(probs, s.temperature, s.top_k, s.top_p)
        return int(torch.multinomial(dist, 1, generator=gen))

    return run_decoder(model, src_ids, settings, processors, choose=choose, **options)


def _worst(finished: list[Hypothesis], n: int) -> float:
    """The score of the n-th best finished hypothesis (the worst that would be returned)."""
    return sorted(h.score for h in finished)[-n]


Ranked = list[tuple[int, int, float]]  # (parent beam, token id, cumulative logprob), best first


@dataclass
class _Beams:
    """The state of ``beam_search``: the live beams (token ids, cumulative logprob), where
    each was ranked (step, rank), the hypotheses finished so far and every step's
    candidates."""

    end_ids: frozenset[int]  # where a hypothesis finishes (``core.config.end_ids``)
    itos: Sequence[str]
    length_penalty: float
    live: list[tuple[list[int], float]] = field(default_factory=lambda: [([], 0.0)])
    ends: list[tuple[int, int]] = field(default_factory=list)
    finished: list[Hypothesis] = field(default_factory=list)
    steps: list[tuple[BeamCandidate, ...]] = field(default_factory=list)

    def hypothesis(self, ids: list[int], logprob: float, done: bool, end: tuple[int, int]
                   ) -> Hypothesis:
        """A hypothesis scored logprob / length ** length_penalty."""
        score = logprob / len(ids) ** self.length_penalty
        return Hypothesis(tuple(ids), tuple(self.itos[i] for i in ids), logprob, score, done,
                          end)

    def advance(self, t: int, ranked: Ranked, width: int
                ) -> list[tuple[list[int], float, int, int]]:
        """Sort step ``t``'s ranked continuations: a ``</s>`` among the first ``width``
        finishes a hypothesis, the best ``width`` others stay live, the rest are pruned.
        Returns the live ones as (ids, logprob, parent, rank)."""
        kept: list[tuple[list[int], float, int, int]] = []
        records = []
        for rank, (parent, tok, lp) in enumerate(ranked):
            ids = self.live[parent][0] + [tok]
            if tok in self.end_ids and rank < width:
                status = "finished"
                self.finished.append(self.hypothesis(ids, lp, True, (t, rank)))
            elif tok not in self.end_ids and len(kept) < width:
                status = "kept"
                kept.append((ids, lp, parent, rank))
            else:
                status = "pruned"
            records.append(BeamCandidate(t, parent, tok, self.itos[tok], lp, status))
        self.steps.append(tuple(records))
        return kept

    def close(self, width: int) -> None:
        """At the length limit: the live beams among the top ``width`` join the list
        unfinished."""
        self.finished.extend(self.hypothesis(ids, lp, False, end) for (ids, lp), end
                             in zip(self.live, self.ends, strict=True) if end[1] < width)


def _rank(live: list[tuple[list[int], float]], logp: torch.Tensor, forced_id: int | None,
          num_beams: int) -> tuple[int, Ranked]:
    """The width and the ranked continuations of one beam-search step from its (n, V)
    log-probabilities: the forced token on the single beam, or the 2 x num_beams best by
    cumulative log-probability."""
    if forced_id is not None:
        return 1, [(0, forced_id, live[0][1] + float(logp[0, forced_id]))]
    total = torch.tensor([lp for _, lp in live])[:, None] + logp  # (n, V)
    top = total.flatten().topk(min(2 * num_beams, total.numel()))
    V = total.size(1)
    return num_beams, [(int(i) // V, int(i) % V, float(v))
                       for v, i in zip(top.values, top.indices, strict=True)]


@torch.inference_mode()
def beam_search(model: Transformer, src_ids: torch.Tensor, settings: GenerationSettings,
                processors: Sequence[LogitsProcessor] = (), *, forced: Sequence[int] = (),
                pe_tables: PETables = NORMAL_POSITIONS, tgt_itos: Sequence[str] | None = None,
                start_id: int | None = None) -> BeamTrace:
    """Beam search with a key/value cache, as Hugging Face ``generate(num_beams=…)``.

    At each step every live beam is extended by every token; the 2 x num_beams best
    continuations by cumulative log-probability are ranked. A ``</s>`` continuation among
    the first num_beams finishes a hypothesis, scored logprob / length ** length_penalty;
    the best other continuations (up to num_beams) stay live; the rest are pruned. Search
    stops once num_beams hypotheses have finished (``early_stopping=True``), or, with
    ``early_stopping=False``, once moreover the best live beam's logprob / t ** length_penalty
    (t tokens so far) cannot beat the worst of them (Hugging Face's heuristic); or at
    ``max_new_tokens`` (the live beams among the top num_beams then join the list
    unfinished). ``forced`` tokens are taken first, on a single beam. With num_beams = 1 this
    is greedy decoding.

    Args:
        src_ids: (1, S) source ids ending with ``</s>``, no padding.
        settings: its ``num_beams``, ``length_penalty``, ``early_stopping`` (None: True),
            ``max_new_tokens`` and processors count, as in ``run_decoder``.
        processors: applied to each step's (n, V) log-probabilities after the settings'
            own, as in ``run_decoder`` (not renormalised: as in ``generate()``).
        forced, pe_tables, tgt_itos, start_id: as in ``run_decoder``.

    Returns:
        BeamTrace with every step's candidates and the n-best hypotheses.

    Raises:
        TypeError, ValueError: see ``check_arguments``.
    """
    c, s = model.config, settings
    max_new_tokens = check_arguments(model, src_ids, s, forced)
    early_stopping = True if s.early_stopping is None else s.early_stopping
    todo = [*for_settings(s), *processors]
    enc = model.encode(src_ids, pe_table=pe_tables[0])
    itos = tgt_itos if tgt_itos is not None else [str(i) for i in range(c.tgt_vocab_size)]
    beams, cache = _Beams(end_ids(c), itos, s.length_penalty), None
    start = c.bos_id if start_id is None else start_id
    for t in range(max_new_tokens):
        live = beams.live
        last = torch.tensor([[ids[-1] if ids else start] for ids, _ in live])  # (n, 1)
        out = model.decode(last, enc.memory.expand(len(live), -1, -1),
                           enc.key_padding_mask.expand(len(live), -1), past_key_values=cache,
                           pe_table=pe_tables[1])
        logp = apply(todo, t, out.logits[:, -1].float().log_softmax(-1),  # (n, V)
                     torch.tensor([[start, *ids] for ids, _ in live]))
        width, ranked = _rank(live, logp, int(forced[t]) if t < len(forced) else None,
                              s.num_beams)
        kept = beams.advance(t, ranked, width)
        if not kept or (len(beams.finished) >= s.num_beams and (early_stopping or kept[0][1] / (
                t + 1) ** s.length_penalty <= _worst(beams.finished, s.num_beams))):
            break
        cache = model.reorder_cache(out.past_key_values, torch.tensor([k[2] for k in kept]))
        beams.live = [(ids, lp) for ids, lp, _, _ in kept]
        beams.ends = [(t, rank) for _, _, _, rank in kept]
    else:  # length limit
        beams.close(width)
    best = sorted(beams.finished, key=lambda h: h.score, reverse=True)[:s.num_beams]
    return BeamTrace(tuple(beams.steps), tuple(best), s.num_beams, s.length_penalty)


def top_k_step(probs: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, float]:
    """The k most probable ids of a (V,) distribution, their probabilities, and its entropy
    H = -sum p log p in nats."""
    k = max(1, min(k, probs.shape[0]))
    kth = np.partition(probs, -k)[-k]  # the k-th largest: O(V), not a full sort
    cand = np.flatnonzero(probs >= kth)  # ties included, in id order
    ids = cand[np.argsort(-probs[cand], kind="stable")][:k]  # = a stable full argsort's top k
    p = probs[probs > 0]
    entropy = float(-(p * np.log(p)).sum())
    return ids.astype(np.int64), probs[ids].astype(np.float32), entropy
