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

from ..core.config import end_ids
from ..decoding import (
    GenerationSettings,
    beam_search,
    greedy_batch,
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

    Greedy (``num_beams`` = 1): ``decoding.greedy_batch`` over right-padded (B, S) batches
    of ``batch_size`` (padded keys blocked by ``key_padding_mask``) with the key/value cache
    (a decoder-only model: prompts of one length, unpadded, ``_groups``). Beam search
    (``num_beams`` > 1): ``decoding.beam_search`` one sentence at a time, with the settings'
    length penalty and early stopping (None: ``info.early_stopping``). Both run up to
    ``max_new_tokens`` (None: ``info.default_max_new_tokens``) tokens with the target
    side's logits processor and the settings' ``repetition_penalty`` and
    ``no_repeat_ngram_size`` (``processors.for_settings``), in the settings' languages and
    task, under ``backends.heads.heads_off`` (outputs zeroed before W_O, Michel et al.
    2019). The text is ``target.text``'s, else the tokens joined, ``</s>`` left out.

    Args:
        translator: a ``Translator`` of either backend.
        texts: the source sentences; one the model refuses (empty, too long) gives "".
        settings: a ``GenerationSettings`` (default greedy), or its fields as
            ``overrides`` (``num_beams=4``); sampling is not batched.
        heads_off: (kind, layer, head) keys of the heads to switch off.
        batch_size: sentences per greedy batch (B), at least 1.
        progress: called with (texts done, len(texts)) as the work goes on.

    Returns:
        One translation per text, in order.

    Raises:
        InputError: a setting out of range or not the model's (``check_for``), sampling,
            or a head outside the model.
        ValueError: ``batch_size`` below 1.
    """
    s = (settings or GenerationSettings()).replace(**overrides)
    if s.do_sample:
        raise InputError("translate_batch decodes greedily or with beams, not by sampling")
    info = translator.info
    s.check_for(translator.config.max_len, info.languages, tasks=info.task_prefixes,
                chat=info.chat_template)
    off = check_heads(heads_off, translator.config)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be an int of at least 1, got {batch_size!r}.")
    rows, starts, keep = _readable(translator, texts, s)
    out = [""] * len(texts)
    run = s.resolved(info.default_max_new_tokens, info.early_stopping)
    done = len(texts) - len(rows)
    with torch.inference_mode(), switched_off(translator.model, off, translator.config.nhead):
        for group in _groups(rows, batch_size if s.num_beams == 1 else 1,
                             one_stack=info.architecture == "decoder-only"):
            outputs = _decode_rows(translator, [rows[j] for j in group], starts[group[0]], run)
            for j, ids in zip(group, outputs, strict=True):
                out[keep[j]] = _text_of(translator, ids, starts[j])
            done += len(group)
            if progress is not None:
                progress(done, len(texts))
    if progress is not None and not rows:
        progress(len(texts), len(texts))
    return out


def _readable(translator, texts: Sequence[str], settings: GenerationSettings
              ) -> tuple[list[list[int]], list[int | None], list[int]]:
    """The source ids of each text the model reads (``translator.source`` in the settings'
    language and task), their decoder start (a decoder-only model's, else None), and the
    indices of those texts; the others are left out."""
    rows, starts, keep = [], [], []
    for i, text in enumerate(texts):
        try:
            src = translator.source(text, settings.src_lang, settings.task, settings.chat)
        except InputError:
            continue
        rows.append(src.ids.tolist())
        starts.append(src.start_id)
        keep.append(i)
    return rows, starts, keep


def _groups(rows: list[list[int]], size: int, *, one_stack: bool) -> list[list[int]]:
    """Indices of ``rows`` in batches of at most ``size``: in order; for a decoder-only
    model (``one_stack``) only rows of one length together, so none is padded (its
    decoder inputs' positions follow the prompt's own length)."""
    order = list(range(len(rows)))
    if not one_stack:
        return [order[i : i + size] for i in range(0, len(order), size)]
    groups: list[list[int]] = []
    for i in sorted(order, key=lambda i: len(rows[i])):
        if groups and len(groups[-1]) < size and len(rows[groups[-1][0]]) == len(rows[i]):
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _decode_rows(translator, rows: list[list[int]], start: int | None,
                 run: GenerationSettings) -> list[list[int]]:
    """The generated ids (no ``</s>``) of each of ``rows`` (source ids) decoded with the
    resolved settings ``run``: greedily as one padded batch with the key/value cache, or
    with beam search (one row). ``start``: a decoder-only model's decoder start (the rows
    then share one length, and decode only as far as its positions reach)."""
    c, model = translator.config, translator.model
    if start is not None:
        run = run.replace(max_new_tokens=min(run.max_new_tokens, c.max_len - len(rows[0])))
    processors = translator.target.processors(run.max_new_tokens, run.tgt_lang)
    src = pad_rows(rows, c.pad_id)  # (B, S); B = 1 for beams
    if run.num_beams == 1:
        return greedy_batch(model, src, run, processors, use_cache=True,
                            start_ids=None if start is None else [start] * len(rows)
                            ).outputs(end_ids(c))
    best = beam_search(model, src, run, processors, start_id=start).hypotheses[0].ids
    return [list(best[:-1]) if best and best[-1] in end_ids(c) else list(best)]


def _text_of(translator, ids: Sequence[int], start: int | None = None) -> str:
    """The text of generated ids (no ``</s>``): the target side's of ``<s> y1 .. yn``
    (``start`` in place of ``<s>`` for a decoder-only model), else the tokens joined."""
    target = translator.target
    text = target.text(np.array([translator.config.bos_id if start is None else start, *ids]))
    return text if text is not None else "".join(target.vocab.decode(ids))
