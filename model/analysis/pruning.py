"""Which heads matter, over held-out sentence pairs: Michel et al.'s head importance and
their pruning experiment (Michel, Levy and Neubig, "Are Sixteen Heads Really Better than
One?", NeurIPS 2019, sections 4.1-4.2): switch heads off from the least important up and
watch the translation quality (sacrebleu corpus BLEU) fall.

Everything runs through ``Translator`` (our models and Hugging Face ones alike) with heads
switched off by ``ablation``; the shared model keeps no state. The translations are
``backends.translate.translate_batch``'s (greedy, batched).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..backends.heads import HeadKey
from ..backends.translate import translate_batch
from ..errors import InputError
from .ablation import head_importance, pruning_order


def pair_ids(translator, pairs: Sequence[tuple[str, str]]
             ) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(src_ids (1, S), tgt_ids (1, T + 1)) of each (source text, reference) pair that the
    model can read: the reference starts with the decoder start token (a decoder-only
    model's: the prompt's last token, ``<sep>``) and ends with ``</s>``. Pairs the model
    refuses (too long, unknown target tokens; for one stack, prompt and reference past its
    positions together) are left out."""
    c, out = translator.config, []
    for text, reference in pairs:
        try:
            source = translator.source(text)
            ids = translator.target.forced_start(translator.target.ids(reference, "reference"))
        except InputError:
            continue
        start = c.bos_id if source.start_id is None else source.start_id
        ids = [start, *ids, c.eos_id]
        used = len(ids) if source.start_id is None else len(source.ids) + len(ids) - 1
        if used <= c.max_len:
            out.append((torch.from_numpy(source.ids)[None], torch.tensor([ids])))  # (1, S)
    return out


def importance(translator, pairs: Sequence[tuple[str, str]],
               progress: Callable[[int, int], None] | None = None) -> dict[str, np.ndarray]:
    """Head importance (``ablation.head_importance``) over the readable ``pairs``.

    Returns:
        kind -> (L, H) float64, the mean absolute gradient of the loss in each head's gate.

    Raises:
        ValueError: no pair the model can read.
    """
    return head_importance(translator.model, translator.config, pair_ids(translator, pairs),
                           progress)


@dataclass(frozen=True)
class PruningCurve:
    """BLEU after switching heads off in importance order (least important first).

    Attributes:
        order: every head, least important first.
        pruned: (P,) int, how many heads of ``order`` were off at each point (0 first).
        bleu: (P,) float64, sacrebleu corpus BLEU (tokenized by ``bleu_tokenize`` of the
            target language) of the greedy translations against the references at each
            point.
        n_pairs: sentence pairs scored.
    """

    order: tuple[HeadKey, ...]
    pruned: np.ndarray
    bleu: np.ndarray
    n_pairs: int


def bleu_tokenize(target_language: str) -> str:
    """sacrebleu's tokenizer for translations into ``target_language`` (ISO 639-1, ``""``
    when not known): its default ``"13a"`` for a known language other than Chinese (as
    ``model.training.evaluate_zh_en`` scores English), else ``"zh"`` (each Chinese
    character a token, the rest as 13a)."""
    return "13a" if target_language and target_language != "zh" else "zh"


def pruning_curve(translator, pairs: Sequence[tuple[str, str]],
                  importance_by_kind: dict[str, np.ndarray], points: int = 9, *,
                  progress: Callable[[int, int], None] | None = None) -> PruningCurve:
    """Michel et al.'s pruning experiment (their figure 3): BLEU of greedy translations of
    ``pairs`` with the ``k`` least important heads switched off, at ``points`` values of
    k spread evenly from 0 to every head.

    Raises:
        ValueError: no pairs, or ``points`` below 2.
    """
    import sacrebleu  # here: the server imports this module with every page (7 MB)

    if not pairs:
        raise ValueError("pruning_curve needs at least one sentence pair.")
    if isinstance(points, bool) or not isinstance(points, int) or points < 2:
        raise ValueError(f"points must be an int of at least 2, got {points!r}.")
    order = tuple(pruning_order(importance_by_kind))
    pruned = np.unique(np.linspace(0, len(order), points).round().astype(int))
    texts, refs = [p[0] for p in pairs], [p[1] for p in pairs]
    tokenize = bleu_tokenize(translator.info.target_language)
    bleu = []
    for i, k in enumerate(pruned):
        hyps = translate_batch(translator, texts, heads_off=order[:k])
        bleu.append(sacrebleu.corpus_bleu(hyps, [refs], tokenize=tokenize).score)
        if progress is not None:
            progress(i + 1, len(pruned))
    return PruningCurve(order, pruned, np.array(bleu), len(pairs))
