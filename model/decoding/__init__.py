"""Decoding that records every step: the trace types (``trace``), greedy, beam search and
sampling one token at a time (``strategies``), a padded batch decoded at once
(``batch``), and ``GenerationSettings`` (``settings``: every decoding option, checked in one
place). Names as in Hugging Face ``generate()``."""

from .batch import BatchGreedy, greedy_batch, pad_rows
from .processors import (
    LogitsProcessor,
    apply,
    for_settings,
    no_repeat_ngram,
    repetition_penalty,
)
from .settings import STRATEGIES, GenerationSettings
from .strategies import (
    NORMAL_POSITIONS,
    PETables,
    beam_search,
    check_arguments,
    greedy_decode,
    run_decoder,
    sample_decode,
    sampling_distribution,
    top_k_step,
)
from .trace import (
    BeamCandidate,
    BeamTrace,
    DecodeStep,
    DecodeTrace,
    Hypothesis,
    join_blocks,
    one_map,
    split_at_prompt,
)

__all__ = [
    "NORMAL_POSITIONS",
    "STRATEGIES",
    "GenerationSettings",
    "BatchGreedy",
    "BeamCandidate",
    "BeamTrace",
    "DecodeStep",
    "DecodeTrace",
    "Hypothesis",
    "LogitsProcessor",
    "PETables",
    "beam_search",
    "apply",
    "check_arguments",
    "no_repeat_ngram",
    "repetition_penalty",
    "for_settings",
    "greedy_batch",
    "greedy_decode",
    "join_blocks",
    "one_map",
    "pad_rows",
    "run_decoder",
    "sample_decode",
    "sampling_distribution",
    "split_at_prompt",
    "top_k_step",
]
