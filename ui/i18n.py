"""Every piece of interface text in English and in simplified Chinese, and the language switch.

``t(key, **fmt)`` returns the string ``key`` in the session's language, formatted with
``str.format(**fmt)`` (so literal braces in a string are written ``{{`` and ``}}``). Values
put into a string with ``fmt`` are inserted as they are: anything a user typed must already
be a code span or escaped (``ui.text``) before it is passed in.

The language is the sidebar radio with key ``lang``, bound to the URL query parameter
``lang``: English is the default and leaves the URL clean, Chinese writes ``?lang=简体中文``
(the option's label; ``?lang=%E7%AE%80%E4%BD%93%E4%B8%AD%E6%96%87`` on the wire), so a
reload or a shared link keeps the language. ``?lang=zh`` (or zh-CN, zh-Hans, cn, 中文) is
accepted as a short form when a session starts, though Streamlit then drops it from the
address bar; any other value is dropped and the page is in English. Switching language keeps
every choice (strategy, view, layer, head, speed...): see ``_keep_choices``.

Messages raised by the model (``InputError``, ``CheckpointError``) stay in English; in
Chinese mode they are shown after a Chinese lead-in. The views' names are translated, but
the views keep stable ids (``VIEWS``): the view picker's value (``ui.state.ViewState.view``)
and the prefix of each view's layer and head keys (``ui.state.layer_key``). ``view_id``
also reads a view's name in either language (a link may hold one).
"""

from __future__ import annotations

import string
import tomllib
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

import streamlit as st

from viz import VizText
from viz.convention import head_number, layer_number

from . import state as view_state

LANG_KEY = "lang"
LANG_LABEL = "Language / 语言"
LANGUAGES = {"English": "en", "简体中文": "zh"}  # radio option (what the URL holds) -> code
DEFAULT_LANGUAGE = "English"
# Short forms accepted in the URL on the first load, mapped to a radio option.
URL_ALIASES = {"en": "English", "english": "English", "zh": "简体中文", "zh-cn": "简体中文",
               "zh_cn": "简体中文", "zh-hans": "简体中文", "cn": "简体中文", "中文": "简体中文"}

# The catalogue is data: ui/strings.toml (see its header for the two tables).
_CATALOGUE = tomllib.loads((Path(__file__).with_name("strings.toml")).read_text("utf-8"))
STRINGS: dict[str, dict[str, str]] = _CATALOGUE["strings"]  # key -> {"en": ..., "zh": ...}
# The text that the ``viz`` builders write themselves, by ``VizText`` field: field ->
# {"en": ..., "zh": ...}. The builders get it as their ``text`` argument (``viz_labels()``).
VIZ_LABELS: dict[str, dict[str, str]] = _CATALOGUE["viz"]

# <html lang> of each interface language (a Chinese page declares zh-Hans: screen readers,
# fonts and hyphenation follow it).
HTML_LANG = {"en": "en", "zh": "zh-Hans"}

# The views, by their ids (the English labels); the keys of their labels in ``STRINGS``.
VIEW_KEYS = {
    "positional": "tab_positional",
    "masks": "tab_masks",
    "encoder": "tab_encoder",
    "decoder": "tab_decoder",
    "cross": "tab_cross",
    "inside": "tab_inside",
    "heads": "tab_heads",
    "attribution": "tab_attribution",
    "compare": "tab_compare",
    # a decoder-only model's (one stack: the prompt and the continuation in one sequence)
    "sequence": "tab_sequence",
    "to_prompt": "tab_to_prompt",
    "prompt": "tab_prompt",
    "continuation": "tab_continuation",
}
ONE_STACK_VIEWS = ("sequence", "to_prompt", "prompt", "continuation", "positional", "masks",
                   "inside", "heads", "attribution", "compare")
VIEWS = tuple(v for v in VIEW_KEYS if v not in ONE_STACK_VIEWS[:4])  # an encoder-decoder's
ONE_STACK_DEFAULT_VIEW = "sequence"
DEFAULT_VIEW = view_state.DEFAULT_VIEW  # the view a first visit opens (issue 33)
# Attention kind (model.core.config.ATTENTION_KINDS) -> the view that shows one of its heads.
KIND_VIEWS = {"encoder": "encoder", "decoder": "decoder", "cross": "cross"}
# A decoder-only model's attention views: every one shows its "decoder" heads (the one stack).
ONE_STACK_KINDS = dict.fromkeys(ONE_STACK_VIEWS[:4], "decoder")
EXPLAIN_KEYS = {view: key.replace("tab_", "explain_") for view, key in VIEW_KEYS.items()}


def lang() -> str:
    """The session's language code: "en" (the default, also for a bad value) or "zh"."""
    try:
        return LANGUAGES.get(st.session_state.get(LANG_KEY), "en")
    except Exception:  # no session (a bare import): English
        return "en"


def text_in(key: str, language: str, **fmt) -> str:
    """String ``key`` in ``language`` ("en" or "zh"; English where it has none), formatted
    with ``fmt``."""
    entry = STRINGS[key]
    return entry.get(language, entry["en"]).format(**fmt)


def t(key: str, **fmt) -> str:
    """String ``key`` in the session's language, formatted with ``fmt``."""
    return text_in(key, lang(), **fmt)


def explain(view: str) -> str:
    """The explanation shown at the top of view ``view`` (a view id)."""
    return t(EXPLAIN_KEYS[view])


def view_label(view: str) -> str:
    """The name of view ``view`` (an id) in the session's language."""
    return t(VIEW_KEYS[view])


def view_id(label: str | None) -> str | None:
    """The view whose id or name, in any language, is ``label``; None if there is none."""
    if label in VIEW_KEYS:
        return label
    for view, key in VIEW_KEYS.items():  # a label, as links made before the ids held
        if label in STRINGS[key].values():
            return view
    return None


_VIZ_TEXT: dict[str, VizText] = {}  # language code -> its VizText, built on first use


def viz_labels() -> VizText:
    """The ``viz`` builders' own text in the session's language: pass it as ``text=``.

    Built from the ``[viz]`` table once per language and reused; a field with no entry
    in that language is in English."""
    code = lang()
    text = _VIZ_TEXT.get(code)
    if text is None:
        text = VizText(**{f.name: VIZ_LABELS.get(f.name, {}).get(code, f.default)
                          for f in fields(VizText)})
        _VIZ_TEXT[code] = text
    return text


def labels(options, label: Callable[[Any], str]) -> Callable[[Any], str]:
    """A widget's ``format_func``: ``label(option)`` for each of ``options``, in the language
    of this run. The labels are fixed now because the function is kept and called again
    outside the run (by Streamlit's AppTest), where the session's language is not known."""
    table = {option: label(option) for option in options}
    return lambda option: table.get(option, str(option))


def layer_label(layer) -> str:
    """A layer picker's option: "Layer 2" / "第 2 层"."""
    return t("layer_option", layer=layer_number(layer))


def head_label(head) -> str:
    """A head picker's option: "Head 3" / "第 3 个头"."""
    return t("head_option", head=head_number(head))


def placeholders(text: str) -> set[str]:
    """The names of the ``str.format`` fields in ``text``."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


class LocalText(str):
    """A string that shows as ``t(key)`` in the session's language when ``str()`` is taken.

    For the spinners of the cached functions: their message is fixed when the function is
    decorated, and Streamlit takes ``str()`` of it each time it shows the spinner, in the
    session that is waiting. Anywhere else it is the English text."""

    def __new__(cls, key: str) -> LocalText:
        obj = super().__new__(cls, STRINGS[key]["en"])
        obj.key = key
        return obj

    def __str__(self) -> str:
        return t(self.key)


# -- the language switch -------------------------------------------------------------------------

# Widgets whose option labels depend on the language: the browser sends back the label it
# shows, which the next run (in the other language) would not recognise, so the choice is
# re-set by value when the language changes.
_KEEP_ON_SWITCH = (view_state.MODEL_KEY, view_state.VIEW_KEY, view_state.HYPOTHESIS_KEY,
                   view_state.MODE_KEY, *view_state.PICKER_KEYS,
                   "strategy", "speed", "step_layer", "pe_side", "pe_part", "pe_mode",
                   "pe_layer", "pe_bias_head", "batch_layer", "batch_head", "ih_kind",
                   "ih_layer", "ih_head", "branch_layer", "branch_head", "ref_layer", "ref_head",
                   "heads_scope", "heads_kind", "heads_stat", "heads_off", "importance_kind",
                   "lesson_pick", "lines_kind", "lines_layer", "lines_heads", "compare_model")


def _keep_choices() -> None:
    state = st.session_state
    for key in _KEEP_ON_SWITCH:
        if key in state:
            state[key] = state[key]


def language_selector() -> str:
    """The language radio at the top of the sidebar, bound to ``?lang=``; returns "en"/"zh".

    A short form in the URL on the first load (``?lang=zh``) selects its language; the
    binding itself ignores (and removes) any value that is not an option."""
    state = st.session_state
    if LANG_KEY not in state:
        raw = st.query_params.get(LANG_KEY)
        alias = URL_ALIASES.get(raw.strip().lower()) if isinstance(raw, str) else None
        if alias is not None and alias != raw:
            state[LANG_KEY] = alias  # the binding then drops the short form from the URL
    st.sidebar.radio(LANG_LABEL, list(LANGUAGES), key=LANG_KEY, horizontal=True,
                     bind="query-params", on_change=_keep_choices)
    return lang()
