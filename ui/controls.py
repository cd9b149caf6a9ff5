"""Sidebar controls for the decoding strategy. They return ``Translator.decode`` keyword
arguments (Hugging Face ``generate()`` names), as a sorted tuple so they can key a cache."""

from __future__ import annotations

import streamlit as st

STRATEGIES = ("Greedy", "Beam search", "Sampling")


def _sample_again() -> None:
    st.session_state["seed"] = int(st.session_state.get("seed", 0)) + 1


def strategy_sidebar() -> tuple[tuple[str, object], ...]:
    """Strategy radio and its settings. Returns the decode kwargs as sorted (name, value)."""
    st.sidebar.subheader("Decoding")
    strategy = st.sidebar.radio("Strategy", STRATEGIES, horizontal=True, key="strategy",
                                help="Greedy takes the most probable token at every step; beam "
                                     "search keeps several hypotheses; sampling draws tokens.")
    kwargs: dict[str, object] = {}
    if strategy == "Beam search":
        kwargs["num_beams"] = st.sidebar.slider("Number of beams (num_beams)", 2, 8, 4,
                                                key="num_beams")
        kwargs["length_penalty"] = st.sidebar.slider(
            "Length penalty", 0.0, 2.0, 1.0, 0.1, key="length_penalty",
            help="Score = log-probability / length^penalty: above 0 favours longer outputs.")
    elif strategy == "Sampling":
        kwargs["do_sample"] = True
        kwargs["temperature"] = st.sidebar.slider(
            "Temperature", 0.0, 2.0, 1.0, 0.05, key="temperature",
            help="Divides the logits: below 1 sharpens the distribution, above 1 flattens "
                 "it; 0 is greedy.")
        kwargs["top_k"] = int(st.sidebar.number_input(
            "Top-k (0 = off)", 0, 100, 0, key="top_k",
            help="Sample only among the k most probable tokens."))
        kwargs["top_p"] = st.sidebar.slider(
            "Top-p (nucleus; 1 = off)", 0.05, 1.0, 1.0, 0.05, key="top_p",
            help="Sample only among the most probable tokens whose probabilities add up "
                 "to p.")
        st.session_state.setdefault("seed", 0)
        kwargs["seed"] = int(st.sidebar.number_input("Seed", 0, 2**31 - 1, key="seed"))
        st.sidebar.button("🎲 Sample again", on_click=_sample_again, key="sample_again",
                          help="Draw again with the next seed.")
    return tuple(sorted(kwargs.items()))


def describe(options: tuple[tuple[str, object], ...]) -> str:
    """A short plain-text description of the strategy, e.g. "beam search, 4 beams"."""
    o = dict(options)
    if o.get("num_beams", 1) > 1:
        return f"beam search, {o['num_beams']} beams, length penalty {o['length_penalty']:.1f}"
    if o.get("do_sample"):
        parts = [f"temperature {o['temperature']:.2f}"]
        if o.get("top_k"):
            parts.append(f"top-k {o['top_k']}")
        if o.get("top_p", 1.0) < 1.0:
            parts.append(f"top-p {o['top_p']:.2f}")
        return f"sampling ({', '.join(parts)}, seed {o['seed']})"
    return "greedy"
