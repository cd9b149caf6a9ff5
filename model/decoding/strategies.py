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

import numpy as np
import torch

from ..core.transformer import Transformer
from .processors import LogitsProcessor
from .settings import check
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


@torch.inference_mode()
def run_decoder(
    model: Transformer,
    src_ids: torch.Tensor,
    max_new_tokens: int,
    choose: Chooser | None = None,
    forced: Sequence[int] = (),
    pe_tables: PETables = NORMAL_POSITIONS,
    logits_processor: LogitsProcessor | None = None,
    *,
    tgt_itos: Sequence[str] | None = None,
    num_candidates: int = 10,
) -> DecodeTrace:
    """Decode one sentence token by token with a key/value cache, recording every step.

    The first ``len(forced)`` tokens are taken from ``forced`` (a prefix, or a whole
    reference for teacher forcing); after that ``choose(probs (V,), t) -> id`` picks each
    token until ``</s>`` or ``max_new_tokens``. ``choose=None`` stops after the forced tokens.
    Each step feeds only the newest token and reuses the cached keys and values, so the
    recorded rows equal one teacher-forced pass over the result (tests check 1e-5).

    Args:
        model: a Transformer in eval mode.
        src_ids: (1, S) int64 source ids ending with ``</s>``, no padding.
        max_new_tokens: the most tokens to produce (``</s>`` included).
        pe_tables: (source, target) positional encodings replacing the sinusoidal table for
            this call (``layers.positional_tables``); (None, None) = the normal table.
        logits_processor: (t, logp (1, V), input_ids (1, t + 1)) -> logp
            (``processors.LogitsProcessor``), applied to each step's log-probabilities before
            the token is chosen (``step_probs`` keep the model's own distribution); a step where it
            leaves one token possible counts as forced. None = none.
        tgt_itos: the target token string of every id (default: the ids as strings).
        num_candidates: K, the next-token candidates each ``DecodeStep`` keeps.

    Returns:
        DecodeTrace of the target side: ``src_tokens`` are the source ids as strings and
        ``src_text`` is empty until the caller (``Translator``) fills in the sentence's.

    Raises:
        ValueError: a batch of more than one sentence, ``max_new_tokens`` out of
            [1, max_len - 1], or more forced tokens than ``max_new_tokens``.
    """
    c = model.config
    if src_ids.dim() != 2 or src_ids.size(0) != 1:
        raise ValueError(f"src_ids must be (1, S), got {tuple(src_ids.shape)}")
    check("max_new_tokens", max_new_tokens, ValueError, high=c.max_len - 1)
    if len(forced) > max_new_tokens:
        raise ValueError(f"{len(forced)} forced tokens exceed max_new_tokens={max_new_tokens}")
    src_pe, tgt_pe = pe_tables
    enc = model.encode(src_ids, pe_table=src_pe)
    L, H, S = c.num_decoder_layers, c.nhead, src_ids.size(1)
    dec_attn = np.zeros((L, H, max_new_tokens, max_new_tokens), np.float32)
    cross_attn = np.zeros((L, H, max_new_tokens, S), np.float32)
    probs_rows, ids = [], [c.bos_id]
    cache, finished, n_forced = None, False, 0
    for t in range(max_new_tokens):
        if t >= len(forced) and choose is None:
            break
        out = model.decode(torch.tensor([[ids[-1]]]), enc.memory, enc.key_padding_mask,
                           past_key_values=cache, pe_table=tgt_pe)
        cache = out.past_key_values
        logp = out.logits[:, -1].float().log_softmax(-1)  # (1, V)
        probs_rows.append(logp[0].exp().numpy())  # the model's own distribution
        if logits_processor is not None:
            logp = logits_processor(t, logp, torch.tensor([ids]))  # (1, V)
        probs = logp[0].softmax(-1)  # (V,) what the strategy chooses from
        if t == n_forced and (t < len(forced) or int(probs.gt(0).sum()) == 1):
            n_forced += 1  # a prefix token, or one the processor forces (forced_bos)
        # Row t of every layer: query = position t; keys = positions 0..t, or the source.
        dec_attn[:, :, t, : t + 1] = _stack_layers(out.decoder_attentions)[:, :, 0, :]
        cross_attn[:, :, t, :] = _stack_layers(out.cross_attentions)[:, :, 0, :]
        next_id = int(forced[t]) if t < len(forced) else int(choose(probs, t))
        ids.append(next_id)
        if next_id == c.eos_id:
            finished = True
            break
    T = len(ids) - 1
    itos = tgt_itos if tgt_itos is not None else [str(i) for i in range(c.tgt_vocab_size)]
    tgt_ids = np.array(ids, dtype=np.int64)
    tgt_tokens = tuple(itos[i] for i in ids)
    step_probs = np.array(probs_rows, np.float32).reshape(T, c.tgt_vocab_size)
    steps = []
    for t, probs in enumerate(step_probs):
        top_ids, top_probs, entropy = top_k_step(probs, num_candidates)
        steps.append(DecodeStep(
            index=t, input_tokens=tgt_tokens[: t + 1], token=tgt_tokens[t + 1],
            token_id=int(ids[t + 1]), prob=float(probs[ids[t + 1]]),
            top_tokens=tuple(itos[i] for i in top_ids), top_ids=top_ids,
            top_probs=top_probs, entropy=entropy, forced=t < n_forced,
        ))
    return DecodeTrace(
        src_text="",
        src_tokens=tuple(str(i) for i in src_ids[0].tolist()),
        src_ids=src_ids[0].numpy().copy(),
        tgt_tokens=tgt_tokens,
        tgt_ids=tgt_ids,
        steps=tuple(steps),
        encoder_attentions=_stack_layers(enc.attentions),
        decoder_attentions=dec_attn[:, :, :T, :T].copy(),
        cross_attentions=cross_attn[:, :, :T].copy(),
        step_probs=step_probs,
        finished=finished,
        n_forced=min(n_forced, T),
    )


def greedy_decode(model: Transformer, src_ids: torch.Tensor, max_new_tokens: int,
                  forced: Sequence[int] = (), pe_tables: PETables = NORMAL_POSITIONS,
                  logits_processor: LogitsProcessor | None = None, **labels) -> DecodeTrace:
    """Greedy decoding (the Annotated Transformer's ``greedy_decode``): at every step the
    most probable token. See ``run_decoder`` for the arguments (``labels``: its
    ``tgt_itos`` and ``num_candidates``), result and errors."""
    return run_decoder(model, src_ids, max_new_tokens, lambda p, t: int(p.argmax()), forced,
                       pe_tables, logits_processor, **labels)


def sample_decode(model: Transformer, src_ids: torch.Tensor, max_new_tokens: int,
                  temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0,
                  seed: int | None = None, forced: Sequence[int] = (),
                  pe_tables: PETables = NORMAL_POSITIONS,
                  logits_processor: LogitsProcessor | None = None, **labels) -> DecodeTrace:
    """Ancestral sampling from ``sampling_distribution`` at every step; the same ``seed``
    gives the same output. See ``run_decoder`` for the rest."""
    sampling_distribution(torch.ones(2) / 2, temperature, top_k, top_p)  # validate early
    gen = torch.Generator().manual_seed(0 if seed is None else int(seed))

    def choose(probs: torch.Tensor, t: int) -> int:
        dist = sampling_distribution(probs, temperature, top_k, top_p)
        return int(torch.multinomial(dist, 1, generator=gen))

    return run_decoder(model, src_ids, max_new_tokens, choose, forced, pe_tables,
                       logits_processor, **labels)


def _worst(finished: list[Hypothesis], n: int) -> float:
    """The score of the n-th best finished hypothesis (the worst that would be returned)."""
    return sorted(h.score for h in finished)[-n]


@torch.inference_mode()
def beam_search(
    model: Transformer,
    src_ids: torch.Tensor,
    num_beams: int,
    max_new_tokens: int,
    length_penalty: float = 1.0,
    forced: Sequence[int] = (),
    pe_tables: PETables = NORMAL_POSITIONS,
    logits_processor: LogitsProcessor | None = None,
    early_stopping: bool = True,
    *,
    tgt_itos: Sequence[str] | None = None,
) -> BeamTrace:
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
        num_beams: within ``settings.BOUNDS["num_beams"]``.
        pe_tables: (source, target) positional encodings, as in ``run_decoder``.
        logits_processor: applied to each step's (n, V) log-probabilities, as in
            ``run_decoder`` (not renormalised: as in ``generate()``).
        tgt_itos: the target token string of every id (default: the ids as strings).

    Returns:
        BeamTrace with every step's candidates and the n-best hypotheses.

    Raises:
        ValueError: num_beams outside ``settings.BOUNDS``, a bad ``src_ids`` shape or
            ``max_new_tokens``.
    """
    c = model.config
    check("num_beams", num_beams, ValueError)
    if src_ids.dim() != 2 or src_ids.size(0) != 1:
        raise ValueError(f"src_ids must be (1, S), got {tuple(src_ids.shape)}")
    check("max_new_tokens", max_new_tokens, ValueError, high=c.max_len - 1)
    if len(forced) > max_new_tokens:
        raise ValueError(f"{len(forced)} forced tokens exceed max_new_tokens={max_new_tokens}")
    src_pe, tgt_pe = pe_tables
    enc = model.encode(src_ids, pe_table=src_pe)
    live: list[tuple[list[int], float]] = [([], 0.0)]
    ends: list[tuple[int, int]] = []
    finished: list[Hypothesis] = []
    steps: list[tuple[BeamCandidate, ...]] = []
    cache = None
    itos = tgt_itos if tgt_itos is not None else [str(i) for i in range(c.tgt_vocab_size)]

    def hypothesis(ids: list[int], logprob: float, done: bool, end) -> Hypothesis:
        score = logprob / len(ids) ** length_penalty
        return Hypothesis(tuple(ids), tuple(itos[i] for i in ids), logprob, score, done, end)

    for t in range(max_new_tokens):
        n = len(live)
        last = torch.tensor([[ids[-1] if ids else c.bos_id] for ids, _ in live])  # (n, 1)
        out = model.decode(last, enc.memory.expand(n, -1, -1),
                           enc.key_padding_mask.expand(n, -1), past_key_values=cache,
                           pe_table=tgt_pe)
        logp = out.logits[:, -1].float().log_softmax(-1)  # (n, V)
        if logits_processor is not None:
            logp = logits_processor(t, logp, torch.tensor([[c.bos_id, *ids] for ids, _ in live]))
        if t < len(forced):
            width = 1
            ranked = [(0, int(forced[t]), live[0][1] + float(logp[0, forced[t]]))]
        else:
            width = num_beams
            total = torch.tensor([lp for _, lp in live])[:, None] + logp  # (n, V)
            top = total.flatten().topk(min(2 * num_beams, total.numel()))
            V = total.size(1)
            ranked = [(int(i) // V, int(i) % V, float(v))
                      for v, i in zip(top.values, top.indices, strict=True)]
        kept: list[tuple[list[int], float, int, int]] = []
        records = []
        for rank, (parent, tok, lp) in enumerate(ranked):
            ids = live[parent][0] + [tok]
            if tok == c.eos_id and rank < width:
                status = "finished"
                finished.append(hypothesis(ids, lp, True, (t, rank)))
            elif tok != c.eos_id and len(kept) < width:
                status = "kept"
                kept.append((ids, lp, parent, rank))
            else:
                status = "pruned"
            records.append(BeamCandidate(t, parent, tok, itos[tok], lp, status))
        steps.append(tuple(records))
        if not kept or (len(finished) >= num_beams and (early_stopping or kept[0][1] / (
                t + 1) ** length_penalty <= _worst(finished, num_beams))):
            break
        cache = model.reorder_cache(out.past_key_values, torch.tensor([k[2] for k in kept]))
        live = [(ids, lp) for ids, lp, _, _ in kept]
        ends = [(t, rank) for _, _, _, rank in kept]
    else:  # length limit: the live beams among the top ``width`` join the list unfinished
        finished.extend(hypothesis(ids, lp, False, end)
                        for (ids, lp), end in zip(live, ends, strict=True) if end[1] < width)
    best = sorted(finished, key=lambda h: h.score, reverse=True)[:num_beams]
    return BeamTrace(tuple(steps), tuple(best), num_beams, length_penalty)


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
