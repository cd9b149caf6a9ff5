"""Sidebar controls for the decoding strategy. They return a ``GenerationSettings`` (Hugging
Face ``generate()`` names; hashable, so it keys the cache); the strategy radio's value is the
strategy's id (``greedy``, ``beam``, ``sampling``), shown through its label. The settings
reach the URL through ``ui.link`` (``GenerationSettings.to_query``), never as labels."""

from __future__ import annotations

import streamlit as st

from model import GenerationSettings
from model.decoding import STRATEGIES
from model.decoding.settings import BOUNDS, STARTS, STRATEGY_FIELDS

from .i18n import STRINGS, labels, t

STRATEGY_KEYS = {"greedy": "strategy_greedy", "beam": "strategy_beam",
                 "sampling": "strategy_sampling"}  # strategy id -> the key of its label
ANY_STRATEGY = ("no_repeat_ngram_size", "repetition_penalty")  # widgets under every strategy


def _start(name: str):
    """The value setting ``name`` starts at: that of the strategy it belongs to
    (``settings.STARTS``: 4 beams, seed 0), else the default."""
    owner = next((s for s, names in STRATEGY_FIELDS.items() if name in names), "greedy")
    return getattr(STARTS[owner], name)


# Each widget's (min, max, default, step), built from settings.BOUNDS, the one table of the
# settings' bounds: the sidebar offers exactly what GenerationSettings accepts, so a link's
# value is shown exactly when it is valid (``ui.link``).
BEAM_SEARCH_LOW = BOUNDS["num_beams"].low + 1  # one beam is the greedy strategy, a radio choice
RANGES = {name: (BEAM_SEARCH_LOW if name == "num_beams" else bound.low, bound.high,
                 _start(name), bound.step)
          for name, bound in BOUNDS.items() if bound.step is not None}


def strategy_aliases() -> dict[str, str]:
    """Every label a strategy has had in a link, in any language -> its id (links made
    before the ids held the label: ``strategy=Beam+search``, ``strategy=束搜索``)."""
    return {label: sid for sid, key in STRATEGY_KEYS.items() for label in STRINGS[key].values()}


def _sample_again() -> None:
    st.session_state["seed"] = int(st.session_state.get("seed", 0)) + 1


def _widget(kind: str, name: str, help_key: str | None = None):
    """The sidebar's ``st.slider`` or ``st.number_input`` (``kind``) for setting ``name``,
    its range and step from ``RANGES`` and its value from the session state, where the
    default is put first. Passing no ``value`` keeps a link's value (set through the Session
    State API by ``ui.link``) from making Streamlit log a warning with a stack trace."""
    low, high, default, step = RANGES[name]
    st.session_state.setdefault(name, default)
    make = getattr(st.sidebar, kind)
    return make(t(name), min_value=low, max_value=high, step=step, key=name,
                help=t(help_key) if help_key else None)


def strategy_sidebar(model_settings: dict[str, str] | None = None) -> GenerationSettings:
    """The strategy radio and its settings; returns them with ``model_settings`` (a
    multilingual model's ``src_lang`` / ``tgt_lang``, a T5-style model's ``task``) as one
    ``GenerationSettings``. The widgets' ranges are the settings' own, so every value they
    give is valid."""
    st.sidebar.subheader(t("decoding"))
    strategy = st.sidebar.radio(t("strategy"), STRATEGIES, horizontal=True, key="strategy",
                                format_func=labels(STRATEGIES, lambda s: t(STRATEGY_KEYS[s])),
                                help=t("strategy_help"))
    kwargs: dict[str, object] = dict(model_settings or {})
    if strategy == "beam":
        kwargs["num_beams"] = _widget("slider", "num_beams")
        kwargs["length_penalty"] = _widget("slider", "length_penalty", "length_penalty_help")
    elif strategy == "sampling":
        kwargs["do_sample"] = True
        kwargs["temperature"] = _widget("slider", "temperature", "temperature_help")
        kwargs["top_k"] = int(_widget("number_input", "top_k", "top_k_help"))
        kwargs["top_p"] = _widget("slider", "top_p", "top_p_help")
        kwargs["seed"] = int(_widget("number_input", "seed"))
        st.sidebar.button(t("sample_again"), on_click=_sample_again, key="sample_again",
                          help=t("sample_again_help"))
    kwargs["no_repeat_ngram_size"] = int(_widget("number_input", "no_repeat_ngram_size",
                                                 "no_repeat_ngram_size_help"))
    kwargs["repetition_penalty"] = _widget("slider", "repetition_penalty",
                                           "repetition_penalty_help")
    return GenerationSettings(**kwargs)


def describe(settings: GenerationSettings) -> str:
    """A short plain-text description of the strategy, e.g. "beam search, 4 beams", and of
    a ban on repeated n-grams and a repetition penalty."""
    s = settings
    if s.strategy == "beam":
        text = t("describe_beam", beams=s.num_beams, penalty=s.length_penalty)
    elif s.strategy == "sampling":
        parts = [t("describe_temperature", value=s.temperature)]
        if s.top_k:
            parts.append(t("describe_top_k", value=s.top_k))
        if s.top_p < 1.0:
            parts.append(t("describe_top_p", value=s.top_p))
        text = t("describe_sampling", parts=t("describe_separator").join(parts), seed=s.seed)
    else:
        text = t("describe_greedy")
    if s.no_repeat_ngram_size:
        text += t("describe_separator") + t("describe_no_repeat", n=s.no_repeat_ngram_size)
    if s.repetition_penalty != 1.0:
        text += t("describe_separator") + t("describe_repetition_penalty",
                                            value=s.repetition_penalty)
    return text
