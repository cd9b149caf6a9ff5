"""Attention masks. Every mask here is boolean and True means *blocked*.

That is the convention of ``torch.nn.MultiheadAttention`` (``key_padding_mask`` and a
boolean ``attn_mask``). ``torch.nn.functional.scaled_dot_product_attention`` uses the
opposite meaning (True = take part); convert at the boundary if it is ever used.

Shape letters: B batch, S source length, T target length.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch


def padding_mask(ids: torch.Tensor, pad_id: int = 0) -> torch.Tensor:
    """Key padding mask: which positions of a padded batch are ``<pad>``.

    Args:
        ids: (B, S) integer token ids.
        pad_id: the id of ``<pad>``.

    Returns:
        (B, S) bool, True where ``ids == pad_id`` (blocked as a key).

    Raises:
        ValueError: if ``ids`` is not 2-D.
    """
    if ids.dim() != 2:
        raise ValueError(f"ids must be (B, S), got shape {tuple(ids.shape)}")
    return ids == pad_id


def subsequent_mask(size: int, device: torch.device | None = None, past: int = 0) -> torch.Tensor:
    """Look-ahead (sequence) mask: query position i may not see key positions j > i.

    Args:
        size: T, the number of (new) query positions.
        past: positions already decoded and cached before them; query i sits at absolute
            position past + i and the keys are the past + T positions 0..past+T-1.

    Returns:
        (T, past + T) bool, True where key j > past + i (blocked); (T, T) when past = 0.

    Raises:
        ValueError: if ``size`` or ``past`` is negative.
    """
    if size < 0 or past < 0:
        raise ValueError(f"size and past must be >= 0, got {size}, {past}")
    ones = torch.ones(size, past + size, dtype=torch.bool, device=device)
    return torch.triu(ones, diagonal=past + 1)


def decoder_self_attention_mask(tgt_ids: torch.Tensor, pad_id: int = 0) -> torch.Tensor:
    """The decoder's combined mask: padding OR look-ahead.

    Query i of sequence b may attend to key j only if j <= i and ``tgt_ids[b, j]`` is not
    ``<pad>``.

    Args:
        tgt_ids: (B, T) decoder input ids.

    Returns:
        (B, T, T) bool, True = blocked.
    """
    pad = padding_mask(tgt_ids, pad_id)[:, None, :]  # (B, 1, T): blocks key columns
    ahead = subsequent_mask(tgt_ids.size(1), tgt_ids.device)[None]  # (1, T, T)
    return pad | ahead  # (B, T, T)


def cross_attention_mask(src_ids: torch.Tensor, tgt_len: int, pad_id: int = 0) -> torch.Tensor:
    """The memory (cross-attention) mask: decoder queries may not attend to padded source keys.

    Args:
        src_ids: (B, S) source ids.
        tgt_len: T, the number of decoder queries.

    Returns:
        (B, T, S) bool, True = blocked (the same row repeated for every query).
    """
    pad = padding_mask(src_ids, pad_id)[:, None, :]  # (B, 1, S)
    return pad.expand(-1, tgt_len, -1)  # (B, T, S)


def length_padding_mask(lengths: Sequence[int], n: int) -> torch.Tensor:
    """The padding of rows padded on the right to ``n`` tokens, by position: (B,) real
    lengths -> (B, n) bool, True = ``<pad>`` (position >= the row's length). For a batch
    whose pad id may also be a real token (a Hugging Face one stack's end token)."""
    return torch.arange(n)[None, :] >= torch.as_tensor(list(lengths))[:, None]  # (B, n)


def position_ids_past_padding(key_padding_mask: torch.Tensor, n: int) -> torch.Tensor:
    """The positions of the last ``n`` of N_all tokens when ``<pad>`` tokens take none:
    (B, N_all) bool (True = ``<pad>``) -> (B, n) int64, each real token numbered by how many
    real tokens come before it in its row (a ``<pad>`` gets its last real neighbour's
    number, 0 before any: it is blocked as a key, so no real token reads what it holds).

    In a padded batch of one-stack sequences (prompts padded on the right, then the
    continuation) every sentence's tokens then sit at the positions they have alone, as
    Hugging Face's ``position_ids = attention_mask.cumsum(-1) - 1`` for a left-padded batch.
    """
    real = (~key_padding_mask).long()  # (B, N_all)
    return (real.cumsum(dim=1) - 1).clamp(min=0)[:, key_padding_mask.size(1) - n:]  # (B, n)


def mask_views(src_ids: list[int], tgt_ids: list[int], pad_id: int = 0) -> dict[str, np.ndarray]:
    """Every mask the model builds for one (possibly padded) sentence pair, as numpy.

    Args:
        src_ids: S source ids (may end in ``pad_id`` entries).
        tgt_ids: T decoder input ids (may end in ``pad_id`` entries).

    Returns:
        dict of bool arrays, True = blocked: ``"source_padding"`` (S,) the key padding mask;
        ``"encoder"`` (S, S) the encoder self-attention mask; ``"subsequent"`` (T, T) the
        look-ahead mask; ``"target_padding"`` (T,); ``"decoder"`` (T, T) padding OR look-ahead;
        ``"cross"`` (T, S) the cross-attention mask.
    """
    src = torch.tensor([src_ids], dtype=torch.long)  # (1, S)
    tgt = torch.tensor([tgt_ids], dtype=torch.long)  # (1, T)
    src_pad = padding_mask(src, pad_id)  # (1, S)
    views = {
        "source_padding": src_pad[0],
        "encoder": src_pad.expand(src.size(1), -1),  # (S, S): the same blocked columns
        "subsequent": subsequent_mask(tgt.size(1)),
        "target_padding": padding_mask(tgt, pad_id)[0],
        "decoder": decoder_self_attention_mask(tgt, pad_id)[0],
        "cross": cross_attention_mask(src, tgt.size(1), pad_id)[0],
    }
    return {k: v.numpy().copy() for k, v in views.items()}
