"""The server's caches, shared by every session of one process and by ``serve.py``'s
warm-up: the loaded models (``st.cache_resource``) and the decoding traces
(``st.cache_data``). Models are read-only after loading; nothing per session is kept on them.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import streamlit as st
import torch

from model import DecodeTrace, GenerationSettings, Translator
from model import load_pretrained as _load_pretrained
from model.analysis import alignment, headstats, heldout_heads, internals, pruning
from model.analysis.aggregate import attention_flow, attention_rollout, decoder_rollout
from model.analysis.alignment import HeadAER, head_aer
from model.analysis.headstats import head_stats_over
from model.backends.records import SourceSentence
from model.core.heldout import heldout_pairs, sample_pairs
from model.decoding import one_map, split_at_prompt

from .i18n import LocalText, t

GREEDY = GenerationSettings()  # the default settings: greedy decoding

# One shared model serves every session: each request (and serve.py's warm-up, which loads
# the default model through this module before app.py runs) computes on one thread, so a
# class of users doesn't oversubscribe the CPU, and no torch operation waits on a second
# thread while the browser or another request holds the other core (OpenMP's threads meet at
# the end of every operation: loading a model's 176 tensors took 2.7 s instead of 0.05 s).
torch.set_num_threads(1)


def model_key(folder: Path, load_pickle_weights: bool = False) -> tuple[str, tuple, bool]:
    """What identifies a model folder for the caches: its full path, each file's size and
    modification time (so a folder that is replaced or repaired is loaded afresh instead of
    served from the cache), and whether pickle weights may be loaded."""
    folder = Path(folder).resolve()
    try:
        stamp = tuple(sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns)
                             for p in folder.iterdir() if p.is_file()))
    except OSError:
        stamp = ()
    return str(folder), stamp, load_pickle_weights


@st.cache_resource(show_spinner=LocalText("spinner_loading"), max_entries=4)
def load_model(folder: str, stamp: tuple, load_pickle_weights: bool = False) -> Translator:
    """The model in ``folder`` (ours or a Hugging Face one), loaded once per server and
    shared read-only. A failure raises ``CheckpointError`` and is not cached: the next run
    tries again."""
    model = _load_pretrained(Path(folder), load_pickle_weights=load_pickle_weights)
    # Streamlit runs a full garbage collection after every script run (runner.postScriptGC),
    # which walks every object alive: with torch, transformers and a model loaded that is
    # ~245,000 objects and ~90 ms of CPU per click (benchmarks/RESULTS.md, 2026-12-06).
    # Freezing what exists now (imports, the model) leaves the collector only the objects
    # of later runs. It is for the CPU: the server's memory is the same either way.
    gc.collect()
    gc.freeze()
    return model


@st.cache_data(max_entries=512, show_spinner=False)
def read_source(key: tuple[str, tuple, bool], sentence: str, src_lang: str | None = None,
                task: str | None = None, *, chat: bool = False) -> SourceSentence:
    """``sentence`` as the model reads it (``Translator.source``): tokenised once per model,
    sentence, language, task and chat template, then shared by the sidebar, the decodings
    and the views.

    Raises:
        InputError: the model refuses the sentence (not cached: the next run asks again).
    """
    return load_model(*key).source(sentence, src_lang, task, chat)


@st.cache_data(max_entries=512, show_spinner=LocalText("spinner_decoding"))
def decode(key: tuple[str, tuple, bool], sentence: str,
           settings: GenerationSettings = GREEDY,
           prefix: tuple[str, ...] | None = None, *, heads_off: tuple = ()) -> DecodeTrace:
    """The decoding trace of ``sentence`` with ``settings``, an optional forced ``prefix``
    and (kind, layer, head) ``heads_off``; cached by all of them and the model. A
    decoder-only model's comes split at the prompt (``decoding.split_at_prompt``): the
    views read the encoder-decoder's three arrays, and ``trace.architecture`` says which
    model wrote them."""
    src = read_source(key, sentence, settings.src_lang, settings.task, chat=settings.chat)
    return split_at_prompt(load_model(*key).generate(src, settings, prefix=prefix,
                                                     heads_off=heads_off))


@st.cache_data(max_entries=256, show_spinner=LocalText("spinner_teacher"))
def teacher_force(key: tuple[str, tuple, bool], sentence: str, reference: str | tuple[str, ...],
                  settings: GenerationSettings = GREEDY, *, heads_off: tuple = ()
                  ) -> DecodeTrace:
    """The teacher-forced trace of a reference translation (a string, or target tokens),
    cached; of ``settings`` the languages apply; ``heads_off`` (kind, layer, head) keys of
    heads switched off; split at the prompt as ``decode``'s."""
    src = read_source(key, sentence, settings.src_lang, settings.task, chat=settings.chat)
    return split_at_prompt(load_model(*key).teacher_force(src, reference, settings,
                                                          heads_off=heads_off))


# -- what the views compute from one trace, cached so a step click recomputes nothing -------
# A trace's maps depend on the model, its tokens, the settings and the heads switched off:
# ``trace_key`` is that, hashed cheaply; the trace itself is passed unhashed (``_trace``).


def trace_key(key: tuple[str, tuple, bool], trace: DecodeTrace) -> tuple:
    """What a trace's maps depend on: the model's cache key (first), the source ids, the
    target tokens, the settings, the heads switched off and whether it was teacher-forced."""
    return (key, tuple(trace.src_ids.tolist()), trace.tgt_tokens, trace.settings,
            trace.heads_off, trace.teacher_forced)


@st.cache_data(max_entries=64, show_spinner=False)
def head_internals(trace_id: tuple, kind: str, layer: int, head: int, *, _trace: DecodeTrace
                   ) -> internals.HeadInternals:
    """``internals.head_internals`` of one head of ``_trace`` (whose ``trace_key`` is
    ``trace_id``): one teacher-forced pass per model, trace and head, not per step."""
    return internals.head_internals(load_model(*trace_id[0]), _trace, kind, layer=layer,
                                    head=head)


@st.cache_data(max_entries=64, show_spinner=False)
def head_stats(trace_id: tuple, kind: str, eos: str, _trace: DecodeTrace
               ) -> headstats.HeadStats:
    """``headstats.head_stats`` of one kind of ``_trace``'s attention."""
    return headstats.head_stats(_trace, kind, eos)


@st.cache_data(max_entries=64, show_spinner=False)
def rollouts(trace_id: tuple, _trace: DecodeTrace) -> tuple[np.ndarray, np.ndarray]:
    """(the encoder's rollout to its last layer (S, S), the decoder's rollout to the source
    tokens (T, S)), both clipped to [0, 1] (``aggregate``: Abnar and Zuidema 2020)."""
    encoder = np.clip(attention_rollout(_trace.encoder_attentions)[-1], 0.0, 1.0)
    dec = decoder_rollout(_trace.encoder_attentions, _trace.decoder_attentions,
                          _trace.cross_attentions)
    return encoder, np.clip(dec.source, 0.0, 1.0)


@st.cache_data(max_entries=256, show_spinner=False)
def grammar_translation(key: tuple[str, tuple, bool], text: str) -> str | None:
    """The model's grammar's translation of ``text`` (``Translator.grammar_translation``:
    a parse), or None outside it."""
    return load_model(*key).grammar_translation(text)


@st.cache_data(max_entries=256, show_spinner=False)
def gold_cells(text: str, src_labels: tuple[str, ...]) -> tuple[tuple[int, int], ...] | None:
    """``alignment.gold_cells`` of a sentence with these source labels."""
    return alignment.gold_cells(text, src_labels)


# -- the Heads view: computations over held-out sentences, cached per model ---------------------
# Each draws its own progress bar while it computes and removes it when done (a cache hit
# replays both, so nothing shows): Streamlit replays what a cached function drew, so it may
# not draw into a block made outside it.


@contextmanager
def _progress_bar():
    """A progress bar and a ``report(i, n, text_key)`` that moves it; removed at the end."""
    bar = st.progress(0.0)
    try:
        yield lambda i, n, text_key: bar.progress(i / n, text=t(text_key, i=i, n=n))
    finally:
        bar.empty()


@st.cache_resource(max_entries=8, show_spinner=False)
def kept_heads(key: tuple[str, tuple, bool], n: int) -> heldout_heads.HeldoutHeads | None:
    """The held-out figures the model's folder keeps (``heldout_heads.load``: computed when
    the model was trained or refreshed), or None; read once per model."""
    return heldout_heads.load(Path(key[0]), load_model(*key), n)


@st.cache_data(max_entries=8, show_spinner=False)
def heldout_statistics(key: tuple[str, tuple, bool], n: int) -> dict:
    """{kind: headstats.HeadStats} pooled over the model's first ``n`` held-out sentences,
    each decoded greedily (``heldout.sample_pairs``): those its folder keeps
    (``heldout_heads.load``), else computed now; {} when the model has none."""
    translator = load_model(*key)
    kept = kept_heads(key, n)
    if kept is not None:
        return kept.stats
    pairs = sample_pairs(translator, n)
    if not pairs:
        return {}
    with _progress_bar() as report:
        traces = (translator.generate(src) for src, _ in pairs)
        return head_stats_over(traces, eos=translator.info.eos_token,
                               progress=lambda i, m: report(i, m, "heads_progress"))


@st.cache_data(max_entries=8, show_spinner=False)
def importance_and_pruning(key: tuple[str, tuple, bool], n: int):
    """(importance {kind: (L, H)}, pruning.PruningCurve) over the model's first ``n``
    held-out pairs (``heldout.sample_pairs``; Michel et al. 2019): those its folder keeps
    (``heldout_heads.load``), else computed now; None when the model has none."""
    translator = load_model(*key)
    kept = kept_heads(key, n)
    if kept is not None:
        return kept.importance, kept.curve
    pairs = sample_pairs(translator, n)
    if not pairs:
        return None
    with _progress_bar() as report:
        importance = pruning.importance(translator, pairs,
                                        lambda i, m: report(i, m, "importance_progress"))
        curve = pruning.pruning_curve(translator, pairs, importance,
                                      progress=lambda i, m: report(i, m, "pruning_progress"))
    return importance, curve


@st.cache_data(max_entries=64, show_spinner=LocalText("spinner_teacher"))
def alignment_scores(key: tuple[str, tuple, bool], sentences: tuple[str, ...]) -> HeadAER | None:
    """Corpus AER of every cross-attention head over ``sentences`` against the gold links
    of the model's grammar (``alignment.head_aer``: sentences outside it are skipped), or
    None when none has gold links."""
    try:
        return head_aer(load_model(*key), sentences)
    except ValueError:  # no sentence with gold links: no score is invented
        return None


@st.cache_data(max_entries=8, show_spinner=LocalText("spinner_teacher"))
def heldout_alignment(key: tuple[str, tuple, bool], n: int) -> HeadAER | None:
    """``alignment_scores`` over the model's first ``n`` held-out sentences."""
    pairs = heldout_pairs(load_model(*key).card, n)
    return alignment_scores(key, tuple(src for src, _ in pairs)) if pairs else None


@st.cache_data(max_entries=64, show_spinner=False)
def encoder_flow(trace_id: tuple, _trace: DecodeTrace) -> np.ndarray:
    """``aggregate.attention_flow`` to the last encoder layer, (S, S), clipped to [0, 1]
    (max flow is at most 1 up to rounding)."""
    return np.clip(attention_flow(_trace.encoder_attentions), 0.0, 1.0)


@st.cache_data(max_entries=64, show_spinner=False)
def one_stack_rollout(trace_id: tuple, _trace: DecodeTrace) -> np.ndarray:
    """A decoder-only trace's attention rollout over its one sequence to the last layer,
    (N, N) clipped to [0, 1] (``aggregate.attention_rollout`` of ``one_map``)."""
    return np.clip(attention_rollout(one_map(_trace))[-1], 0.0, 1.0)


@st.cache_data(max_entries=64, show_spinner=False)
def one_stack_flow(trace_id: tuple, _trace: DecodeTrace) -> np.ndarray:
    """``aggregate.attention_flow`` of a decoder-only trace's one sequence to the last
    layer, (N, N), clipped to [0, 1]."""
    return np.clip(attention_flow(one_map(_trace)), 0.0, 1.0)
