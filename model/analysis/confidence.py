"""When is the model guessing? Low-probability steps, loops and runaway length of one
decoding, and the loop test of the evaluation (``loops_against``).

A step is *uncertain* when the token the decoder chose had probability below
``LOW_PROB`` (the softmax of the step's logits, as ``DecodeStep.prob``): below 0.05 the
model spread nearly all of its probability over other tokens. A *loop* is a 2-6 character string
written again and again (``朋友`` five times in ``…我们的朋友来和朋友来看我们的朋友们的朋友好…``);
a *runaway* output is much longer than its source, or stopped by the length limit with no
``</s>``. These are warnings, not verdicts: a low probability can be two good synonyms.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

LOW_PROB = 0.05  # a chosen token less probable than this marks its step uncertain (calibrated:
# model.analysis.verdict; at 0.3 it flagged half the right translations of the classroom set)
LOOP_MIN_REPEATS = 4  # a loop: some 2-6 character string at least this many times ...
LOOP_MIN_SHARE = 1 / 3  # ... covering at least this share of the output (no reference)
RUNAWAY_RATIO = 3.0  # an output longer than this many tokens per source token, plus
RUNAWAY_SLACK = 8  # ... this many, is runaway
_WORD_CHARS = re.compile(r"\w")


def repeats(text: str, shortest: int = 2, longest: int = 6) -> tuple[str, int]:
    """The ``shortest``-``longest`` character string of ``text`` that occurs most often
    (non-overlapping, ``str.count``), and how often; ties go to the longer string, then
    the earlier. Strings without a letter or digit (``。。``) do not count.

    Returns:
        (string, count); ("", 0) for a text shorter than ``shortest``.
    """
    best = ("", 0)
    for n in range(longest, shortest - 1, -1):
        for i in range(len(text) - n + 1):
            s = text[i : i + n]
            if not _WORD_CHARS.search(s):
                continue
            c = text.count(s)
            if c > best[1]:
                best = (s, c)
    return best


def loops_against(hypothesis: str, reference: str) -> bool:
    """The evaluation's loop: some 2-6 character string occurs at least LOOP_MIN_REPEATS
    times in ``hypothesis`` and at least twice as often as in ``reference``, plus two
    (``朋友`` five times against once in the reference is a loop; a word the reference also
    repeats is not)."""
    s, c = repeats(hypothesis)
    return c >= LOOP_MIN_REPEATS and c >= 2 * reference.count(s) + 2 if s else False


def looks_looped(text: str) -> tuple[str, int] | None:
    """The app's loop (no reference to compare with): the most repeated 2-6 character
    string when it occurs at least LOOP_MIN_REPEATS times and its copies cover at least
    LOOP_MIN_SHARE of ``text``; else None."""
    s, c = repeats(text)
    if c >= LOOP_MIN_REPEATS and c * len(s) >= LOOP_MIN_SHARE * len(text):
        return s, c
    return None


def is_runaway(n_output: int, n_source: int, finished: bool) -> bool:
    """Whether an output of ``n_output`` tokens is out of proportion to its ``n_source``
    source tokens (more than RUNAWAY_RATIO x n_source + RUNAWAY_SLACK), or stopped by the
    length limit (``finished`` False: no ``</s>``)."""
    return not finished or n_output > RUNAWAY_RATIO * n_source + RUNAWAY_SLACK


@dataclass(frozen=True)
class Confidence:
    """What a decoding's header warns about.

    Attributes:
        uncertain: the 1-based steps (as the step panel numbers them) whose chosen token
            had probability below the threshold, in order; forced tokens never count.
        probs: those tokens' probabilities, in the same order.
        loop: (string, count) of ``looks_looped``, or None.
        runaway: ``is_runaway``.
    """

    uncertain: tuple[int, ...]
    probs: tuple[float, ...]
    loop: tuple[str, int] | None
    runaway: bool

    def least_probable(self, n: int) -> tuple[int, ...]:
        """The ``n`` uncertain steps of lowest probability (ties: the earlier), in step
        order."""
        ranked = sorted(zip(self.probs, self.uncertain, strict=True))[:n]
        return tuple(sorted(k for _, k in ranked))

    @property
    def guessing(self) -> bool:
        """Any warning at all."""
        return bool(self.uncertain) or self.loop is not None or self.runaway


def assess(probs: Sequence[float], forced: Sequence[bool], output_text: str, n_source: int, *,
           finished: bool, threshold: float = LOW_PROB) -> Confidence:
    """The warnings for one decoding.

    Args:
        probs: (T,) the probability of each step's chosen token (``DecodeStep.prob``).
        forced: (T,) whether each step's token was given rather than chosen.
        output_text: the translation as shown; n_source: source tokens (with ``</s>``);
        finished: whether ``</s>`` ended the decoding.
        threshold: the probability below which a step is uncertain.

    Raises:
        ValueError: ``probs`` and ``forced`` differ in length.
    """
    if len(probs) != len(forced):
        raise ValueError(f"{len(probs)} probabilities for {len(forced)} steps")
    low = [(i + 1, float(p)) for i, (p, f) in enumerate(zip(probs, forced, strict=True))
           if not f and p < threshold]
    return Confidence(tuple(i for i, _ in low), tuple(p for _, p in low),
                      looks_looped(output_text), is_runaway(len(probs), n_source, finished))
