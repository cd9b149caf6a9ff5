"""Greedy decoding of a right-padded batch at once, as ``generate()`` of a batch: for
evaluation, pruning curves and the padded-batch view; and the one padding helper.

Shape letters: B batch, S source length, T decoder inputs, V target vocabulary size.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import torch

from ..core.config import end_ids
from ..core.transformer import Transformer
from .processors import LogitsProcessor, apply, for_settings
from .settings import GenerationSettings
from .strategies import check_arguments


@dataclass(frozen=True)
class BatchGreedy:
    """A padded batch decoded greedily at once (``greedy_batch``).

    Attributes:
        src_ids: (B, S) the right-padded sources.
        tgt_ids: (B, T) decoder inputs: the start token, each sentence's tokens, and
            ``<pad>`` once a sentence has finished.
        generated: B lists of generated ids, ``</s>`` included where produced.
        encoder: the ``EncoderOutput`` of the batch; decoder: the ``DecoderOutput`` of the
            last step's pass over all of ``tgt_ids`` (causality makes each row equal what
            that step saw).
    """

    src_ids: torch.Tensor
    tgt_ids: torch.Tensor
    generated: tuple[tuple[int, ...], ...]
    encoder: object
    decoder: object

    def outputs(self, ends: Collection[int]) -> list[list[int]]:
        """The generated ids of each sentence without its end token (one of ``ends``,
        ``core.config.end_ids``)."""
        return [list(g[:-1]) if g and g[-1] in ends else list(g) for g in self.generated]


def pad_rows(rows: Sequence[Sequence[int]], pad_id: int) -> torch.Tensor:
    """The one padding helper: B token id rows of different lengths as one (B, S) int64
    CPU tensor, each row right-padded with ``pad_id`` to the longest (S), as
    ``greedy_batch`` and the model's ``key_padding_mask`` (``core.masks``: True where the
    id is ``pad_id``) take it; equal to ``torch.nn.utils.rnn.pad_sequence(...,
    batch_first=True, padding_value=pad_id)``. Callers move it to their device.

    Raises:
        ValueError: no rows.
    """
    if not rows:
        raise ValueError("pad_rows needs at least one row.")
    S = max(len(r) for r in rows)
    return torch.tensor([[*r, *[pad_id] * (S - len(r))] for r in rows], dtype=torch.long)


@torch.inference_mode()
def greedy_batch(model: Transformer, src_ids: torch.Tensor, settings: GenerationSettings,
                 processors: Sequence[LogitsProcessor] = (), *, use_cache: bool = False,
                 start_ids: Sequence[int] | None = None,
                 key_padding_mask: torch.Tensor | None = None) -> BatchGreedy:
    """Greedy decoding of a right-padded batch at once, as ``generate()`` of a batch: for
    evaluation, and for the padded-batch view (``analysis.batch.decode_batch``).

    Each step runs the decoder over the whole padded decoder input so far with the model's
    masks; every unfinished sentence takes its most probable token (after the settings'
    processors, then ``processors``, as ``run_decoder``); a finished one is fed ``<pad>``.
    Stops when all have produced ``</s>`` or after ``max_new_tokens`` steps.

    Args:
        src_ids: (B, S) int64, right-padded with ``pad_id``.
        settings: its ``max_new_tokens`` (per sentence, ``</s>`` included; None:
            max_len - 1), ``repetition_penalty`` and ``no_repeat_ngram_size`` count.
        processors: ``LogitsProcessor``s applied in order after the settings' own.
        use_cache: run each step over the new position only, with the key/value cache
            (``past_key_values``) of the steps before, as ``run_decoder`` does: the same
            tokens, far less work. ``BatchGreedy.decoder`` is then the last step's only.
        start_ids: (B,) each row's first decoder input; None = ``config.bos_id`` (a
            decoder-only model's: its prompt's last token, the rows unpadded).
        key_padding_mask: (B, S) bool, True = ``<pad>`` (a one stack's padding by
            position: its pad id may be a real token); None = the model's, by ``pad_id``.

    Returns:
        BatchGreedy (see its docstring for the shapes).

    Raises:
        TypeError, ValueError: see ``strategies.check_arguments``.
    """
    c = model.config
    max_new_tokens = check_arguments(model, src_ids, settings, batch=True)
    todo = [*for_settings(settings), *processors]
    B, device = src_ids.size(0), src_ids.device
    enc = (model.encode(src_ids) if key_padding_mask is None
           else model.encode(src_ids, key_padding_mask=key_padding_mask))
    ends = torch.tensor(sorted(end_ids(c)), device=device)  # (E,) where a sentence stops
    tgt = (torch.full((B, 1), c.bos_id, dtype=torch.long, device=device) if start_ids is None
           else torch.tensor(list(start_ids), device=device)[:, None])  # (B, t+1) inputs
    done = torch.zeros(B, dtype=torch.bool, device=device)
    generated: list[list[int]] = [[] for _ in range(B)]
    out = None  # the last step's DecoderOutput (its past_key_values, with use_cache)
    for t in range(max_new_tokens):
        if use_cache and out is not None:  # only the new position, over the cached ones
            out = model.decode(tgt[:, -1:], enc.memory, enc.key_padding_mask,
                               past_key_values=out.past_key_values)
        else:
            out = model.decode(tgt, enc.memory, enc.key_padding_mask)  # the combined masks
        logp = out.logits[:, -1].float().log_softmax(-1)  # (B, V)
        next_ids = apply(todo, t, logp, tgt).argmax(-1)  # (B,); tgt: the inputs so far
        for b in range(B):
            if not done[b]:
                generated[b].append(int(next_ids[b]))
        done |= torch.isin(next_ids, ends)  # (B,) an end id chosen
        if bool(done.all()) or t == max_new_tokens - 1:
            break
        feed = next_ids.masked_fill(done, c.pad_id)  # finished sentences get <pad>
        tgt = torch.cat([tgt, feed[:, None]], dim=1)
    return BatchGreedy(src_ids, tgt, tuple(tuple(g) for g in generated), enc, out)
