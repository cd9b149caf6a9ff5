"""The server's caches, shared by every session of one process and by ``serve.py``'s
warm-up: the loaded models (``st.cache_resource``) and the decoding traces
(``st.cache_data``). Models are read-only after loading; nothing per session is kept on them.
"""

from __future__ import annotations

import gc
from pathlib import Path

import streamlit as st

from model import DecodeTrace, Translator
from model import load_pretrained as _load_pretrained

from .i18n import LocalText


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
    # ~400,000 objects and ~190 ms of CPU per click. Freezing what exists now (imports, the
    # model) leaves the collector only the objects of later runs (< 1 ms).
    _freeze_heap()
    return model


def _freeze_heap() -> None:
    """``gc.collect()`` then ``gc.freeze()``: objects alive now (modules, models) are never
    scanned again by the collector that Streamlit runs after every script run."""
    gc.collect()
    gc.freeze()


@st.cache_resource(show_spinner=False)
def freeze_after_first_run() -> bool:
    """Once per server process, after the first full run or ``serve.py``'s warm-up: freeze
    what it imported (plotly's validators, pandas, ...) so later runs' collections skip it
    too."""
    _freeze_heap()
    return True


@st.cache_data(max_entries=512, show_spinner=LocalText("spinner_decoding"))
def decode(key: tuple[str, tuple, bool], sentence: str, options: tuple = (),
           prefix: tuple[str, ...] | None = None, max_new_tokens: int | None = None
           ) -> DecodeTrace:
    """The decoding trace of ``sentence`` with the strategy ``options`` (``generate`` kwargs as
    sorted pairs) and an optional forced ``prefix``; cached by all of them and the model."""
    return load_model(*key).generate(sentence, max_new_tokens=max_new_tokens, prefix=prefix,
                                   **dict(options))


@st.cache_data(max_entries=256, show_spinner=LocalText("spinner_teacher"))
def teacher_force(key: tuple[str, tuple, bool], sentence: str, reference: str,
                  languages: tuple = ()) -> DecodeTrace:
    """The teacher-forced trace of a reference translation (cached); ``languages`` are a
    multilingual model's (``src_lang``, ``tgt_lang``) pairs."""
    return load_model(*key).teacher_force(sentence, reference, **dict(languages))
