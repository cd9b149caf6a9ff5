"""Transformer attention, step by step: a Streamlit app around a small pretrained
encoder-decoder Transformer.

    streamlit run app.py

Type an English sentence, watch the model translate it into Chinese one token at a time,
and inspect the positional encodings, the masks and every head's attention.
This file is the table of contents: the panels live in ``ui/``, the figures in ``viz/``,
the model in ``model/``.
"""

from __future__ import annotations

import logging

import streamlit as st
import torch

from model import CheckpointError, DecodeTrace, InputError, Translator, available_models
from model import load_pretrained as _load_pretrained
from ui import panels
from ui.text import TABS, code_span, md_literal

DEFAULT_SENTENCE = "why do we work ?"
log = logging.getLogger("attention_app")

# One shared model serves every session: keep each request on one thread so a class of
# users doesn't oversubscribe the CPU.
torch.set_num_threads(1)


@st.cache_resource(show_spinner="Loading the model…")
def load_model(name: str) -> Translator:
    """The pretrained model ``name``, loaded once per server and shared read-only."""
    return _load_pretrained(name)


@st.cache_data(max_entries=512, show_spinner="Decoding…")
def decode(name: str, sentence: str) -> DecodeTrace:
    """The full greedy decoding trace of ``sentence`` (cached by model name and text)."""
    return load_model(name).decode(sentence)


def _use_example() -> None:
    st.session_state["sentence"] = st.session_state["example"]


def sidebar() -> tuple[Translator | None, str]:
    """Model picker, examples and the sentence box. Returns (model or None, sentence)."""
    st.sidebar.title("Transformer, step by step")
    names = available_models()
    if not names:
        st.sidebar.error("No models found in `pretrained/`.")
        return None, ""
    default = names.index("en-zh") if "en-zh" in names else 0
    name = st.sidebar.selectbox("Model", names, index=default, key="model")
    try:
        translator = load_model(name)
    except CheckpointError as exc:
        st.sidebar.error(f"Model {code_span(name)} could not be loaded: {md_literal(str(exc))}")
        return None, ""
    st.session_state.setdefault("sentence", DEFAULT_SENTENCE)
    if translator.examples:
        st.sidebar.selectbox("Examples", translator.examples, index=None, key="example",
                             placeholder="Pick an example sentence…", on_change=_use_example)
    sentence = st.sidebar.text_input("English sentence", key="sentence",
                                     help="Lower or upper case; punctuation is split off.")
    card = translator.card.get("test_metrics", {})
    if card:
        st.sidebar.caption(
            f"{translator.config.num_encoder_layers}+{translator.config.num_decoder_layers} "
            f"layers, {translator.config.nhead} heads, d_model {translator.config.d_model}, "
            f"{translator.card.get('parameters', 0):,} parameters. Test exact match "
            f"{card.get('exact_match', '?')} %, BLEU {card.get('bleu', '?')}."
        )
    return translator, sentence


def decode_or_explain(translator: Translator, sentence: str) -> DecodeTrace | None:
    """Validate the sentence, flag unknown words, and decode; None (with a message) if the
    sentence cannot be translated."""
    try:
        tokens = translator.check_input(sentence)
    except InputError as exc:
        st.info(md_literal(str(exc)))
        return None
    unknown = translator.unknown_words(sentence)
    if unknown:
        lines = []
        for word in unknown[:10]:
            close = translator.suggestions(word)
            hint = ", ".join(code_span(w) for w in close) if close else "no close match"
            lines.append(f"- {code_span(word)}: try {hint}")
        more = f"\n- … and {len(unknown) - 10} more" if len(unknown) > 10 else ""
        known = [t for t in tokens if t in translator.src_vocab]
        if not known:
            st.warning("None of these words are in the model's vocabulary, so there is "
                       "nothing to translate.\n\n" + "\n".join(lines) + more)
            return None
        st.warning("Not in the model's vocabulary (the model sees `<unk>` for these):\n\n"
                   + "\n".join(lines) + more)
    name = st.session_state["model"]
    trace = decode(name, sentence)
    if st.session_state.get("shown") != (name, sentence):  # a new sentence starts at step 1
        st.session_state["shown"] = (name, sentence)
        st.session_state["step"] = 1
    return trace


def main() -> None:
    """Lay out the page."""
    translator, sentence = sidebar()
    if translator is None:
        st.info("Choose a model in the sidebar.")
        return
    trace = decode_or_explain(translator, sentence)
    if trace is None:
        return
    st.markdown(f"### {md_literal(trace.output_text) or '(empty output)'}")
    st.caption("Source tokens: " + " ".join(code_span(t) for t in trace.src_tokens))
    if not trace.finished:
        st.info("Decoding stopped at the length limit before `</s>`.")
    k = panels.step_control(trace)
    panels.step_panel(trace, k)
    tabs = st.tabs(list(TABS), key="view", on_change="rerun")
    draw = {
        "Positional encoding": lambda: panels.positional_tab(translator, trace, k),
        "Masks": lambda: panels.masks_tab(translator, trace, k),
        "Encoder self-attention": lambda: panels.encoder_tab(trace),
        "Decoder self-attention": lambda: panels.decoder_tab(trace, k),
        "Cross-attention": lambda: panels.cross_tab(trace, k),
    }
    for name, tab in zip(TABS, tabs, strict=True):
        if tab.open:  # only the open tab's figures are built
            with tab:
                draw[name]()


st.set_page_config(page_title="Transformer attention, step by step", page_icon="🔎",
                   layout="wide")
try:
    main()
except Exception:  # a user never sees a traceback; the log keeps it for us
    log.exception("unexpected error")
    st.error("Something went wrong while drawing this page. Try another sentence or reload; "
             "the error has been logged.")
