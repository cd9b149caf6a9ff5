"""Stepping in the browser (issue 34): the decoding's trace document, sent once, played by the
take-home page's player (``ui/player/``) inside the app as a Streamlit components-v2
component. Next, Previous, the slider, Play (up to 10 steps a second), the keys, the view,
layer and head pickers and the top-k bars then run in the page, with no rerun and no message
to the server; a step repaints in milliseconds where a server round trip takes ~190 ms.

The switch ``IN_BROWSER_KEY`` (``?in_browser=true`` in links) puts the player where the
step-through panel stands. The player's step reaches the server only when the user next turns
to the rest of the page (``ui/player/component.js``); ``_step_changed`` then sets the
stepper's step, so the server's views (Inside one head, Heads, branching...) open at the step
the player showed, and the link keeps it.

plotly.js is plotly's own ``plotly.min.js`` (``take_home.plotly_js``), put on the page by a
second component (``ui/player/loader.js``) whose element never changes: Streamlit's message
cache sends it once per session and afterwards only its hash. Nothing comes from the internet.
"""

from __future__ import annotations

from functools import lru_cache

import streamlit as st

from model import DecodeTrace
from model.backends.records import ModelInfo
from model.decoding.document import dumps, to_document
from viz.convention import display_settings

from .. import pinyin, state
from ..charts import presenting
from ..document import payload
from ..i18n import VIEWS, t, view_label
from ..pinyin import chinese_sides, side_readings
from .take_home import PLAYER, VIEW_KINDS, page_strings, plotly_js

IN_BROWSER_KEY = "in_browser"  # the switch (a link's ``in_browser=true``)
PLAYER_KEY = "browser_player"  # the player's component: its state ``{STEP: k}``
STEP = "step"  # the name of the component's own state value (``component.js``'s setStateValue)
LOADER_KEY = "plotly_loader"


@lru_cache(maxsize=1)
def _player_js() -> str:
    """player.js and its component wrapper as one module (read once per process)."""
    return "\n".join((PLAYER / name).read_text(encoding="utf-8")
                     for name in ("player.js", "component.js"))


_loader = st.components.v2.component("plotly_loader",
                                     js=(PLAYER / "loader.js").read_text(encoding="utf-8"))
_player = st.components.v2.component(
    "trace_player", html=f'<div class="player in-app">'
                         f'{(PLAYER / "player.html").read_text(encoding="utf-8")}</div>',
    css=(PLAYER / "player.css").read_text(encoding="utf-8")
    + ".player.in-app header, .player.in-app .legend { display: none; }",
    js=_player_js(), isolate_styles=False)  # plotly.js styles its charts from <head>


def switch() -> bool:
    """The switch for stepping in the browser (off by default; ``?in_browser=true``). True
    when on."""
    return st.toggle(t("in_browser_switch"), key=IN_BROWSER_KEY, help=t("in_browser_help"),
                     bind="query-params")


@st.cache_data(max_entries=16, show_spinner=False)
def document_json(trace_id: tuple, model: str, sides: tuple[bool, bool],
                  _trace: DecodeTrace) -> str:
    """The trace document of ``_trace`` (whose ``cache.trace_key`` is ``trace_id``) as JSON,
    with the pinyin of its source labels when ``sides[0]`` (a model that reads Chinese) and
    of its target labels when ``sides[1]`` (``pinyin.side_readings``): built once per
    decoding. Raises nothing for a decoded trace."""
    src, tgt = side_readings(_trace, sides)
    return dumps(to_document(_trace, display_settings(), model, tgt_pinyin=tgt,
                             src_pinyin=src))


def _step_changed() -> None:
    """The player's step arrived: the stepper's step follows it."""
    step = (st.session_state.get(PLAYER_KEY) or {}).get(STEP)
    if isinstance(step, int) and not isinstance(step, bool) and step >= 1:
        state.set_step(step)  # clamped to the decoding by stepper.current_step


def player(trace: DecodeTrace, trace_id: tuple, model: str, lang: str, *, k: int,
           info: ModelInfo | None = None) -> None:
    """The player of ``trace`` (decoded by ``model``, whose ``ModelInfo`` is ``info``; its
    ``cache.trace_key`` is ``trace_id``) in the interface language ``lang``, starting at
    step ``k`` (1-based), with pinyin under the Chinese side (``pinyin.chinese_sides``:
    the source of a zh -> en model, the target of an en -> zh one; ``info`` None: en -> zh)
    when the pinyin switch is on. ``trace`` carries its plain labels (not
    ``pinyin.annotate``'s: the player adds the pinyin itself)."""
    _loader(key=LOADER_KEY, data=payload({"source": plotly_js()}))
    sides = chinese_sides(info) if pinyin.is_on() else (False, False)
    doc = document_json(trace_id, model, sides, trace)
    present = presenting()  # Present mode: the map first, its labels as large as the charts'
    strings = page_strings(lang, trace.architecture)
    _player(key=PLAYER_KEY, data=payload({"doc": doc, "strings": strings, STEP: k,
                                          "present": present,
                                          "id": f"{hash(trace_id)}:{lang}:{sides}:"
                                                f"{present}"}),
            default={STEP: k}, on_step_change=_step_changed)
    st.caption(server_adds())


def server_adds() -> str:
    """What the server's step-through adds to the player, named from the catalogue: every
    view the player does not draw (``VIEW_KINDS`` are its three), and branching."""
    views = [view_label(v) for v in VIEWS if v not in VIEW_KINDS]
    return t("in_browser_server_adds", views=t("word_separator").join(views))
