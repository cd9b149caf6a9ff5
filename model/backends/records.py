"""What a backend hands to the analysis code: the inputs of one attention head and the
parts of the first layer's input. Both backends (``ours.Translator``, ``hf.HFTranslator``)
return these same types, so the analysis never asks which backend it has.

Shape letters: T tokens, Tq / Tk query / key length, D d_model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch


def to_numpy(x: torch.Tensor) -> np.ndarray:
    """A tensor as a float32 numpy array of its own (no memory shared with the model)."""
    return x.detach().float().cpu().numpy().copy()


class HeadInputs(NamedTuple):
    """What one head of one attention sublayer is recomputed from
    (``analysis.internals.head_internals``).

    Attributes:
        x_q: (Tq, D) the sublayer's query input; x_k: (Tk, D) its key and value input.
        linears: the layer's own (q, k, v) projections (``nn.Linear``, H * Dh outputs).
        scaling: what Q K^T is multiplied by (1 / sqrt(Dh); T5: 1.0).
        bias: (Tq, Tk) a position bias added to the scaled scores (T5's relative position
            bias, in self-attention), or None.
    """

    x_q: torch.Tensor
    x_k: torch.Tensor
    linears: tuple[torch.nn.Linear, torch.nn.Linear, torch.nn.Linear]
    scaling: float
    bias: torch.Tensor | None


@dataclass(frozen=True)
class EmbeddingParts:
    """What the first layer receives, in its two parts (paper, sections 3.4 and 3.5):
    total = embedding + positional, embedding = E[token] * sqrt(D).

    Attributes:
        side: ``"source"`` or ``"target"``; positional_mode: ``"normal"``, ``"none"`` or
            ``"shuffled"`` (see ``layers.positional_tables``).
        tokens: the T tokens; ids: (T,) int64 (unknown tokens are ``<unk>``).
        positions: (T,) int64, the table row added at each position (0..T-1 normally, the
            seeded permutation when shuffled), or None when no encoding is added.
        embedding: (T, D) the scaled token embeddings.
        positional: (T, D) the encodings added (zeros for ``"none"``).
        total: (T, D) the model's own ``positional(embed(ids))`` (dropout is off in eval
            mode), which equals embedding + positional.
    """

    side: str
    positional_mode: str
    tokens: tuple[str, ...]
    ids: np.ndarray
    positions: np.ndarray | None
    embedding: np.ndarray
    positional: np.ndarray
    total: np.ndarray
