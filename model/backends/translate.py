"""Many sentences translated at once, text in, text out: the one batch-translation
function, for the pruning experiment (``analysis.pruning``: heads switched off, greedy) and
the evaluation of a trained model (``training.evaluate``: beam search). Each text gives the
``output_text`` that ``generate(text, settings, heads_off=...)`` gives it alone, without
recording any attention.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

import numpy as np
import torch

from ..decoding import (
    GenerationSettings,
    beam_search,
    greedy_batch,
    logits_processor_for,
    pad_rows,
)
from ..errors import InputError
from .heads import HeadKey, check_heads
from .heads import heads_off as switched_off


def translate_batch(translator, texts: Sequence[str], settings: GenerationSettings | None = None,
                    *, heads_off: Collection[HeadKey] = (), batch_size: int = 50,
                    progress: Callable[[int, int], None] | None = None, **overrides
                    ) -> list[str]:
    """Translate each of ``texts`` as ``translator.generate(text, settings,
    heads_off=heads_off).output_text`` would, with no trace kept.

    Greedy (``num_beams`` = 1): the readable texts go through ``decoding.greedy_batch`` in
    right-padded (B, S) batches of ``batch_size`` (``pad_rows``; the padded keys are blocked
    by the model's ``key_padding_mask``), with the key/value cache. Beam search
    (``num_beams`` > 1): ``decoding.beam_search`` one sentence at a time ((1, S) ids), with
    the settings' length penalty and early stopping (None: the model's
    ``info.early_stopping``). Both run up to ``max_new_tokens`` (None: the model's
    ``info.default_max_new_tokens``) tokens with the target side's logits processor and
    the settings' ``repetition_penalty`` and ``no_repeat_ngram_size``
    (``processors.for_settings``), in the settings' languages and task, under
    ``backends.heads.heads_off`` (the heads' outputs zeroed before W_O, as Michel et al.
    2019 mask heads). The text of ``<s> y1 .. yn`` is ``target.text`` (a Hugging Face
    tokenizer's), by default the tokens joined without spaces, ``</s>`` left out.

    Args:
        translator: a ``Translator`` of either backend.
        texts: the source sentences; one the model refuses (``source`` raises
            ``InputError``: empty, too long) gives "" rather than an error.
        settings: a ``GenerationSettings`` (default greedy), or its fields as
            ``overrides`` (``num_beams=4``); sampling is not batched.
        heads_off: (kind, layer, head) keys of the heads to switch off.
        batch_size: sentences per greedy batch (B), at least 1.
        progress: called with (texts done, len(texts)) as the work goes on.

    Returns:
        One translation per text, in order.

    Raises:
        InputError: a setting out of range or the model's (``GenerationSettings``,
            ``check_for``), sampling, or a head outside the model.
        ValueError: ``batch_size`` below 1.
    """
    s = (settings or GenerationSettings()).replace(**overrides)
    if s.do_sample:
        raise InputError("translate_batch decodes greedily or with beams, not by sampling")
    info = translator.info
    s.check_for(translator.config.max_len, info.languages, tasks=info.task_prefixes)
    off = check_heads(heads_off, translator.config)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be an int of at least 1, got {batch_size!r}.")
    c, target = translator.config, translator.target
    rows, keep = [], []
    for i, text in enumerate(texts):
        try:
            rows.append(translator.source(text, s.src_lang, s.task).ids.tolist())
            keep.append(i)
        except InputError:
            pass
    out = [""] * len(texts)

    def text_of(ids: Sequence[int]) -> str:  # generated ids, no </s>
        text = target.text(np.array([c.bos_id, *ids]))
        return text if text is not None else "".join(target.vocab.decode(ids))

    run = s.resolved(info.default_max_new_tokens, info.early_stopping)
    max_new_tokens, early = run.max_new_tokens, run.early_stopping
    processor = logits_processor_for(run, target)
    step = batch_size if s.num_beams == 1 else 1
    with torch.inference_mode(), switched_off(translator.model, off, c.nhead):
        for start in range(0, len(rows), step):
            chunk = keep[start : start + step]
            src = pad_rows(rows[start : start + step], c.pad_id)  # (B, S); B = 1 for beams
            if s.num_beams == 1:
                run = greedy_batch(translator.model, src, max_new_tokens, processor,
                                   use_cache=True)
                outputs = run.outputs(c.eos_id)
            else:
                best = beam_search(translator.model, src, s.num_beams, max_new_tokens,
                                   s.length_penalty, (), logits_processor=processor,
                                   early_stopping=early).hypotheses[0].ids
                outputs = [list(best[:-1]) if best and best[-1] == c.eos_id else list(best)]
            for i, ids in zip(chunk, outputs, strict=True):
                out[i] = text_of(ids)
            if progress is not None:
                progress(min(start + step, len(rows)) + len(texts) - len(rows), len(texts))
    if progress is not None and not rows:
        progress(len(texts), len(texts))
    return out
