"""Chapter 12, "One stack instead of two": the sidebar's English sentence through the
decoder-only model trained here (``DECODER_ONLY``, a prefix language model: ``<s> English
<sep> Chinese`` in one sequence) beside the lesson's encoder-decoder.

What it points at is computed from the two decodings: the written token whose attention on
the English part of the one sequence is plainest (the chosen layer, the mean of its heads:
``model.decoding.split_at_prompt``'s ``cross_attentions`` block, where cross-attention
went), how much of that row is on the prompt and on which token most, what the
encoder-decoder's cross-attention looks at when it writes the same token, the head that
parks most attention on the first token (an attention sink, Xiao et al. 2023:
``headstats`` "first"), and the one map with the look-ahead mask drawn.

Shape letters: S prompt tokens before ``<sep>``, T decoder inputs, N = S + T, L layers,
H heads.
"""

from __future__ import annotations

import numpy as np

import viz
from model import GenerationSettings, InputError
from model.analysis.headstats import head_stats
from model.analysis.picks import clearest_row, is_content
from model.backends.load import pretrained_root
from model.decoding import one_map
from viz.convention import head_number, layer_number, step_number

from .. import cache
from ..i18n import t, viz_labels
from ..text import code_span, md_literal
from .chapter import Chapter
from .picks import Live

DECODER_ONLY = "decoder-only-en-zh"  # the decoder-only model the chapter opens


def _one_stack_trace(live: Live):
    """The sidebar's sentence decoded greedily by ``DECODER_ONLY`` (split at the prompt, as
    ``ui.cache`` gives every trace), or a string key saying why not."""
    info = live.translator.info
    if info.architecture != "encoder-decoder" or info.source_language != "en":
        return "lesson_one_stack_english"
    folder = pretrained_root() / DECODER_ONLY
    if not (folder / "config.json").is_file():
        return "lesson_one_stack_missing"
    try:
        return cache.decode(cache.model_key(folder), live.trace.src_text, GenerationSettings())
    except InputError:
        return "lesson_one_stack_unread"


def _same_token_line(live: Live, token: str) -> str:
    """What the encoder-decoder's cross-attention (its last layer, the mean of the heads)
    looks at most when it writes ``token`` too, or that it does not write it."""
    tr = live.trace
    if token not in tr.tgt_tokens[1:]:
        return t("lesson_one_stack_not_written", output=md_literal(tr.output_text))
    j = tr.tgt_tokens[1:].index(token)  # the step that writes it
    row = tr.cross_attentions[-1].mean(0)[j]  # (S_enc,)
    best = int(row.argmax())
    return t("lesson_one_stack_cross", k=step_number(j), best=code_span(tr.src_labels[best]),
             weight=f"{row[best]:.0%}")


def one_stack(live: Live, turn: int) -> Chapter:
    """The chapter (each "another layer" turn goes one layer down from the last)."""
    d = _one_stack_trace(live)
    if isinstance(d, str):
        return Chapter(why=d)
    S, T = len(d.src_tokens), len(d.steps)
    L = d.cross_attentions.shape[0]
    layer = (L - 1 - turn) % L
    prompt = d.cross_attentions[layer].mean(0)  # (T, S): the written tokens over the prompt
    row = clearest_row(prompt, [is_content(label) for label in d.tgt_labels[1:]])
    share, best = float(prompt[row].sum()), int(prompt[row].argmax())
    sink = head_stats(d, "decoder").values["first"]  # (L, H)
    sl, sh = (int(i) for i in np.unravel_index(int(sink.argmax()), sink.shape))
    A = one_map(d)[layer].mean(0)  # (N, N)
    labels = [*d.src_labels, *d.decoder_input_labels]
    fig = viz.attention_heatmap(
        A, labels, labels, title=t("lesson_one_stack_title", layer=layer_number(layer)),
        query_label=t("query_sequence"), key_label=t("key_sequence"),
        marked=[(S + row, best)], blocked=np.triu(np.ones((S + T, S + T), bool), 1),
        text=viz_labels())
    token = d.tgt_tokens[row + 1]
    options = [("prompt", t("lesson_one_stack_prompt")),
               ("written", t("lesson_one_stack_written"))]
    return Chapter({"token": code_span(d.tgt_labels[row + 1]), "k": step_number(row),
                    "query": code_span(d.decoder_input_labels[row]),  # the row that writes it
                    "layer": layer_number(layer), "share": f"{share:.0%}",
                    "rest": f"{1 - share:.0%}", "best": code_span(d.src_labels[best]),
                    "weight": f"{prompt[row, best]:.0%}", "model": code_span(DECODER_ONLY),
                    "output": md_literal(d.output_text),
                    "enc_output": md_literal(live.trace.output_text),
                    "cross": _same_token_line(live, token),
                    "sink_layer": layer_number(sl), "sink_head": head_number(sh),
                    "sink": f"{sink[sl, sh]:.0%}", "n": S + T},
                   fig, options, "prompt" if share >= 0.5 else "written",
                   action="open_one_stack")
