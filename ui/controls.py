"""Sidebar controls for the decoding strategy. They return ``Translator.generate`` keyword
arguments (Hugging Face ``generate()`` names), as a sorted tuple so they can key a cache."""

from __future__ import annotations

import streamlit as st

from .i18n import STRINGS, labels, t
from .link import BIND

# The strategies by id (the English label, the radio's value) -> the key of their label.
STRATEGY_KEYS = {STRINGS[k]["en"]: k for k in ("strategy_greedy", "strategy_beam",
                                                 "strategy_sampling")}
STRATEGIES = tuple(STRATEGY_KEYS)
GREEDY, BEAM_SEARCH, SAMPLING = STRATEGIES


def _sample_again() -> None:
    st.session_state["seed"] = int(st.session_state.get("seed", 0)) + 1


def strategy_sidebar() -> tuple[tuple[str, object], ...]:
    """Strategy radio and its settings. Returns the generate() kwargs as sorted (name, value)."""
    st.sidebar.subheader(t("decoding"))
    strategy = st.sidebar.radio(t("strategy"), STRATEGIES, horizontal=True, key="strategy",
                                format_func=labels(STRATEGIES, lambda s: t(STRATEGY_KEYS[s])),
                                help=t("strategy_help"), bind=BIND)
    kwargs: dict[str, object] = {}
    if strategy == BEAM_SEARCH:
        kwargs["num_beams"] = st.sidebar.slider(t("num_beams"), 2, 8, 4, key="num_beams",
                                                bind=BIND)
        kwargs["length_penalty"] = st.sidebar.slider(
            t("length_penalty"), 0.0, 2.0, 1.0, 0.1, key="length_penalty",
            help=t("length_penalty_help"), bind=BIND)
    elif strategy == SAMPLING:
        kwargs["do_sample"] = True
        kwargs["temperature"] = st.sidebar.slider(
            t("temperature"), 0.0, 2.0, 1.0, 0.05, key="temperature",
            help=t("temperature_help"), bind=BIND)
        kwargs["top_k"] = int(st.sidebar.number_input(t("top_k"), 0, 100, 0, key="top_k",
                                                      help=t("top_k_help"), bind=BIND))
        kwargs["top_p"] = st.sidebar.slider(t("top_p"), 0.05, 1.0, 1.0, 0.05, key="top_p",
                                            help=t("top_p_help"), bind=BIND)
        st.session_state.setdefault("seed", 0)
        kwargs["seed"] = int(st.sidebar.number_input(t("seed"), 0, 2**31 - 1, key="seed"))
        st.sidebar.button(t("sample_again"), on_click=_sample_again, key="sample_again",
                          help=t("sample_again_help"))
    return tuple(sorted(kwargs.items()))


def describe(options: tuple[tuple[str, object], ...]) -> str:
    """A short plain-text description of the strategy, e.g. "beam search, 4 beams"."""
    o = dict(options)
    if o.get("num_beams", 1) > 1:
        return t("describe_beam", beams=o["num_beams"], penalty=o["length_penalty"])
    if o.get("do_sample"):
        parts = [t("describe_temperature", value=o["temperature"])]
        if o.get("top_k"):
            parts.append(t("describe_top_k", value=o["top_k"]))
        if o.get("top_p", 1.0) < 1.0:
            parts.append(t("describe_top_p", value=o["top_p"]))
        return t("describe_sampling", parts=t("describe_separator").join(parts), seed=o["seed"])
    return t("describe_greedy")
