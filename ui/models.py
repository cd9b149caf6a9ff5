"""The sidebar's model picker: our ``pretrained/`` folders, the encoder-decoder models in the
local Hugging Face cache, or any folder by its path; and a multilingual model's languages.
Which model reads which language, without loading one (``model_for``: the verdict's switch
between directions), and the stronger model of each direction (``stronger_model``).

A choice resolves to a folder on disk; ``app.load_model`` opens it (``model.load_pretrained``)
once per server. Nothing here downloads anything.
"""

from __future__ import annotations

import json
from pathlib import Path

import streamlit as st

from model import CheckpointError, Translator, available_models
from model.backends.hf import pair_of
from model.backends.hf_load import cache_snapshot, cached_models, hub_cache_dir
from model.backends.load import default_model, pretrained_root

from . import state
from .i18n import labels, t
from .link import BIND
from .text import clip, code_span, md_literal

STRONGER = "Helsinki-NLP/opus-mt-en-zh"  # the stronger English->Chinese model we point to
# (source, target) -> the stronger model of that direction, opened from the cache only
STRONGER_MODELS = {("en", "zh"): STRONGER, ("zh", "en"): "Helsinki-NLP/opus-mt-zh-en"}
DEFAULT_LANGUAGES = ("en", "zh")  # a card without ``languages`` (ours before zh-en)
MAX_CARD_BYTES = 2_000_000  # a larger card.json is not read for its languages
FOLDER = "\x00folder"  # the picker's option "open a folder by its path" (never a real name)
MAX_PATH = 500  # characters: a longer typed path is refused


@st.cache_data(ttl=30, show_spinner=False)
def hub_models(cache_dir: str) -> list[str]:
    """The supported encoder-decoder models in the Hugging Face cache ``cache_dir``
    (rescanned at most every 30 seconds)."""
    return cached_models(Path(cache_dir))


def listed_models() -> tuple[list[str], list[str]]:
    """(the folders of ``pretrained/``, the encoder-decoder models of the Hugging Face cache:
    ``hub_models``, scanned at most every 30 s): what the model picker and the Side by side
    view's second picker both list."""
    return available_models(), hub_models(str(hub_cache_dir()))


def model_choice() -> tuple[str, Path, bool] | None:
    """The model picker: the app's default model first (``default_model``), then the other
    folders of ``pretrained/``, the Hugging Face cache's models, and "open a folder". Returns
    (the choice's name, its folder, whether pickle weights may be loaded), or None (with a
    message) when nothing usable is chosen.

    The default is the first option, so the picker is given no ``index``: its value may be
    set through the Session State API (``state.set_model`` by the verdict's buttons, the
    language switch's ``i18n._keep_choices``) without Streamlit logging a warning with a
    stack trace for a widget with both a default and a state value, and its link leaves
    ``model`` out exactly when the default is chosen."""
    ours, hub = listed_models()
    if not ours and not hub:
        st.sidebar.warning(t("no_models", path=code_span(str(pretrained_root()))))
    first = default_model(ours) or (hub[0] if hub else FOLDER)
    options = list(dict.fromkeys([first, *ours, *hub, FOLDER]))

    def label(option: str) -> str:
        # A bound selectbox writes the label into the link: a model's label is its name
        # (a hub model's org/name), so a link names it by its id in either language.
        return t("model_folder_option") if option == FOLDER else option

    name = st.sidebar.selectbox(t("model"), options, key=state.MODEL_KEY,
                                format_func=labels(options, label), help=t("model_help"),
                                bind=BIND)
    if name in ours:
        return name, pretrained_root() / name, False
    if name in hub:
        try:
            return name, cache_snapshot(name), False
        except CheckpointError as exc:
            st.sidebar.error(t("model_failed", name=code_span(clip(name)),
                               error=md_literal(clip(str(exc), 240))))
            return None
    typed = st.sidebar.text_input(t("model_folder"), key="model_folder",
                                  placeholder=t("model_folder_placeholder"))
    load_pickle_weights = st.sidebar.checkbox(t("load_pickle_weights"), key="load_pickle_weights",
                                       help=t("load_pickle_weights_help"))
    path = typed.strip()
    if not path:
        st.sidebar.info(t("model_folder_hint"))
        return None
    folder = Path(path[:MAX_PATH]).expanduser()
    if len(path) > MAX_PATH or not folder.is_dir():
        st.sidebar.error(t("model_folder_missing", path=code_span(clip(path, 80))))
        return None
    return folder.name, folder, load_pickle_weights


def language_pickers(translator: Translator) -> dict[str, str]:
    """Source and target language pickers for a multilingual model (``generate()``'s
    ``forced_bos_token_id`` is the target language): {"src_lang": .., "tgt_lang": ..}, or {}
    for a one-pair model."""
    langs = list(translator.info.languages)
    if not langs:
        return {}
    src = next((x for x in langs if x in ("en", "eng_Latn", "en_XX")), langs[0])
    tgt = next((x for x in langs if x in ("zh", "zho_Hans", "zh_CN")), langs[-1])
    cols = st.sidebar.columns(2)
    src = cols[0].selectbox(t("src_lang"), langs, index=langs.index(src), key="src_lang")
    tgt = cols[1].selectbox(t("tgt_lang"), langs, index=langs.index(tgt), key="tgt_lang",
                            help=t("tgt_lang_help"))
    return {"src_lang": src, "tgt_lang": tgt}


def task_picker(translator: Translator) -> dict[str, str]:
    """A T5-style model's task picker (its prefix, "translate English to German: ", goes
    before the sentence): {"task": name}, or {} (no picker for a model that names no
    tasks)."""
    names = list(translator.info.task_prefixes)
    if not names:
        return {}
    default = next((i for i, n in enumerate(names) if n.startswith("translation")), 0)
    name = st.sidebar.selectbox(t("task"), names, index=default, key="task",
                                help=t("task_help"))
    return {"task": name}


def chat_switch(translator: Translator) -> dict[str, bool]:
    """An instruct model's chat-template switch (its tokenizer's template around the
    prompt, one user turn, the assistant's turn opened): {"chat": on}, or {} for a model
    whose tokenizer has no template."""
    if not translator.info.chat_template:
        return {}
    return {"chat": st.sidebar.toggle(t("chat_switch"), key="chat", help=t("chat_help"))}


def card_caption(translator: Translator) -> None:
    """The sidebar's collapsed "About this model": its size and, from its card, its test
    figures (the everyday model's Tatoeba, HSK, grammar, hard-input and classroom sets; a
    grammar model's exact match and BLEU), or a Hugging Face model's family and size. A
    class sees the model's name, not a wall of figures."""
    with st.sidebar.expander(t("about_model"), icon=":material/info:"):
        _card_text(translator)


def _card_text(translator: Translator) -> None:
    metrics = translator.card.get("metrics")
    card = translator.card.get("test_metrics", {})
    cfg = translator.config
    if isinstance(metrics, dict):
        def metric(group: str, name: str):
            value = metrics.get(group, {})
            return value.get(name, "?") if isinstance(value, dict) else "?"

        hard = "" if "numbers_test" not in metrics else t(
            "model_card_hard_input", numbers=metric("numbers_test", "correct"),
            terms=metric("terms_test", "correct"), kept=metric("long_test", "kept"))
        test = metric("classroom", "test")
        if isinstance(test, dict):
            hard += t("model_card_classroom", right=test.get("right", "?"),
                      wrong=test.get("flagged_wrong", "?"), flagged=test.get("flagged_right", "?"))
        st.caption(t("model_card_everyday", enc=cfg.num_encoder_layers,
                     dec=cfg.num_decoder_layers, heads=cfg.nhead, d_model=cfg.d_model,
                     params=translator.card.get("parameters", 0),
                     tatoeba=metric("tatoeba_test", "bleu"),
                     hsk=metric("hsk_test", "bleu"),
                     grammar=metric("grammar_test", "exact_match")) + hard)
    elif card:
        st.caption(t("model_card", enc=cfg.num_encoder_layers,
                     dec=cfg.num_decoder_layers, heads=cfg.nhead, d_model=cfg.d_model,
                     params=translator.card.get("parameters", 0),
                     exact=card.get("exact_match", "?"), bleu=card.get("bleu", "?")))
    elif translator.info.backend == "huggingface":
        st.caption(t("model_card_hf", kind=translator.info.model_type,
                     enc=cfg.num_encoder_layers, dec=cfg.num_decoder_layers,
                     heads=cfg.nhead, d_model=cfg.d_model,
                     params=translator.card.get("parameters", 0)))


def card_languages(folder: Path) -> tuple[str, str] | None:
    """(source, target) of one of our model folders from its ``card.json`` ``languages``
    (``DEFAULT_LANGUAGES`` when the card names none), without loading the model; None when
    the card is missing, larger than MAX_CARD_BYTES or not a JSON object, or its languages
    are not two codes."""
    path = Path(folder) / "card.json"
    try:
        if path.stat().st_size > MAX_CARD_BYTES:
            return None
        card = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    languages = (card.get("languages") or DEFAULT_LANGUAGES) if isinstance(card, dict) else None
    if (not isinstance(languages, list | tuple) or len(languages) != 2
            or not all(isinstance(x, str) for x in languages)):
        return None
    return languages[0], languages[1]


@st.cache_data(ttl=30, show_spinner=False)
def our_directions(root: str) -> dict[str, tuple[str, str]]:
    """Each folder of ``root`` (``available_models``) -> its (source, target)
    (``card_languages``; folders whose card says none usable are left out), read at most
    every 30 seconds."""
    found = {name: card_languages(Path(root) / name) for name in available_models(Path(root))}
    return {name: pair for name, pair in found.items() if pair is not None}


def model_for(source: str, target: str) -> str | None:
    """A model that reads ``source`` into ``target`` (ISO codes), for the verdict's switch
    between directions: one of ours (``our_directions``: the app's default model when it
    fits, else the first by name), else a model of the Hugging Face cache whose OPUS-MT name
    spells the pair (``hf.pair_of``; the direction's ``STRONGER_MODELS`` first); None when
    there is none. Nothing is loaded or downloaded."""
    ours = [name for name, pair in our_directions(str(pretrained_root())).items()
            if pair == (source, target)]
    if ours:
        return default_model(ours)
    hub = [name for name in hub_models(str(hub_cache_dir())) if pair_of(name) == (source, target)]
    preferred = STRONGER_MODELS.get((source, target))
    return preferred if preferred in hub else (hub[0] if hub else None)


def direction(translator: Translator) -> tuple[str, str]:
    """(source, target) of the model on screen (``ModelInfo``; ``""`` where not known)."""
    return translator.info.source_language, translator.info.target_language


def stronger_model(translator: Translator) -> str | None:
    """The stronger model of the direction of the model on screen (``STRONGER_MODELS``:
    Helsinki-NLP/opus-mt-en-zh for English -> Chinese, opus-mt-zh-en for Chinese ->
    English) when it is in the Hugging Face cache and the model on screen is ours (the
    verdict offers to open the sentence with it); None otherwise."""
    name = STRONGER_MODELS.get(direction(translator))
    if translator.info.backend != "ours" or name is None:
        return None
    return name if name in hub_models(str(hub_cache_dir())) else None


def stronger_hint(translator: Translator) -> None:
    """Under the model line: how to get the direction's stronger model (one ``hf
    download``: ``stronger_model_hint``, or ``stronger_model_hint_zh_en``) while it is not
    in the cache, for our everyday models: subword English -> Chinese, and Chinese ->
    English (one character per token), not the word-level grammar models."""
    info = translator.info
    everyday = info.subword or info.source_language == "zh"
    if info.backend != "ours" or not everyday or stronger_model(translator) is not None:
        return
    if direction(translator) == ("zh", "en"):
        st.sidebar.caption(t("stronger_model_hint_zh_en"))
    elif direction(translator) == ("en", "zh"):
        st.sidebar.caption(t("stronger_model_hint"))
