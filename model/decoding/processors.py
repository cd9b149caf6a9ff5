"""What ``generate()`` does to each step's scores before a token is chosen (Hugging Face's
logits processors): a ``LogitsProcessor`` is ``(t, logp, input_ids) -> logp`` with logp
(n, V) the step's log-probabilities of n rows (beams or sentences) and input_ids (n, t + 1)
int64 the decoder inputs so far, the start token first (as ``LogitsProcessor.__call__``'s
``input_ids`` in transformers). A banned token gets -inf; nothing is renormalised, as in
``generate()``. A strategy (``strategies``) takes a list of them, as ``generate()`` takes a
``LogitsProcessorList``, and applies the settings' own (``for_settings``) and then that
list, in order (``apply``).

Shape letters: n rows, t the step (0-based), V target vocabulary size.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from .settings import GenerationSettings, check

# (t, logp (n, V), input_ids (n, t + 1)) -> logp (n, V); None = the distribution as it is.
LogitsProcessor = Callable[[int, torch.Tensor, torch.Tensor], torch.Tensor]


def banned_ngram_tokens(ids: list[int], size: int) -> set[int]:
    """The tokens that would repeat an n-gram of ``size`` tokens already in ``ids`` (one
    row's decoder inputs): every token that followed the last ``size - 1`` tokens before.
    Fewer than ``size - 1`` tokens: none."""
    if size < 1 or len(ids) + 1 < size:
        return set()
    prefix = tuple(ids[len(ids) - size + 1:])  # the last size - 1 tokens (none for size 1)
    return {ids[i + size - 1] for i in range(len(ids) - size + 1)
            if tuple(ids[i: i + size - 1]) == prefix}


def no_repeat_ngram(size: int) -> LogitsProcessor | None:
    """``no_repeat_ngram_size``: no n-gram of ``size`` tokens occurs twice in a row's decoder
    input (Paulus et al. 2018, section 2.5; transformers' ``NoRepeatNGramLogitsProcessor``,
    which counts the start token too); None for 0 (off, as in ``generate()``).

    Raises:
        ValueError: ``size`` outside ``settings.BOUNDS["no_repeat_ngram_size"]``.
    """
    check("no_repeat_ngram_size", size, ValueError)
    if size == 0:
        return None

    def process(t: int, logp: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
        rows = [banned_ngram_tokens(row, size) for row in input_ids.tolist()]
        if not any(rows):
            return logp
        logp = logp.clone()
        for r, banned in enumerate(rows):
            if banned:
                logp[r, sorted(banned)] = float("-inf")
        return logp

    return process


def repetition_penalty(penalty: float) -> LogitsProcessor | None:
    """``repetition_penalty``: every token already in a row's decoder input gets its score
    divided by ``penalty`` where positive and multiplied by it where negative (Keskar et al.
    2019, CTRL, section 4.1; transformers' ``RepetitionPenaltyLogitsProcessor``). Our scores
    are log-probabilities, all <= 0, so a repeated token's log-probability is multiplied by
    ``penalty``: > 1 discourages repeats (the settings' bounds allow no encouraging value
    below 1). None for 1 (off, as in
    ``generate()``). ``generate()`` hands its processors log-probabilities in beam search
    (where the two agree token for token) but raw logits in greedy search and sampling,
    where it divides a positive logit instead: a rule that depends on the logits' offset,
    so ours keeps the log-probability form for every strategy.

    Raises:
        ValueError: ``penalty`` outside ``settings.BOUNDS["repetition_penalty"]``.
    """
    check("repetition_penalty", penalty, ValueError)
    if penalty == 1:
        return None

    def process(t: int, logp: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
        seen = torch.gather(logp, 1, input_ids)  # (n, t + 1)
        seen = torch.where(seen < 0, seen * penalty, seen / penalty)
        return logp.scatter(1, input_ids, seen)

    return process


def for_settings(settings: GenerationSettings) -> list[LogitsProcessor]:
    """The processors a ``GenerationSettings`` asks for, in ``generate()``'s order
    (transformers' ``_get_logits_processor``): ``repetition_penalty``, then
    ``no_repeat_ngram_size``; empty when both are off. Every strategy applies them before
    the processors it is given (``strategies``)."""
    return [p for p in (repetition_penalty(settings.repetition_penalty),
                        no_repeat_ngram(settings.no_repeat_ngram_size)) if p is not None]


def apply(processors: Sequence[LogitsProcessor], t: int, logp: torch.Tensor,
          input_ids: torch.Tensor) -> torch.Tensor:
    """``processors`` applied in order to step ``t``'s logp (n, V), given the decoder inputs
    so far ``input_ids`` (n, t + 1), as transformers' ``LogitsProcessorList.__call__``;
    logp itself when the list is empty."""
    for process in processors:
        logp = process(t, logp, input_ids)
    return logp
