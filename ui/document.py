"""What the app sets on the page's document: its language (``<html lang>``, so that a screen
reader reads a Chinese page as Chinese) and the presenter's keys: a clicker's PageDown /
PageUp and the arrow keys step through the decoding (Explore) or the lesson, with nothing
focused (issue 33); whether the browser asks for reduced motion, which slows Play to its
slowest speed; and, in Present mode, the width of the page's main column, to which the
charts are fitted (``ui.charts.column_px``).

A small Streamlit components-v2 script (no iframe: it runs in the page) sets the language
and listens for keys on the page's document; a key presses one of the page's own buttons,
so it does exactly what that button does: the same callback, the same fragment rerun,
nothing when the button is disabled. ``KEYMAP`` says which buttons (by their widget keys)
a key presses, in order: the first one on the page and enabled is pressed.

Text boxes, select boxes, sliders, radio groups and other widgets that use these keys keep
them; Space on a focused button or link presses that one (the browser's own), not Play.
"""

from __future__ import annotations

import streamlit as st

from .charts import DOCUMENT_KEY, presenting
from .i18n import HTML_LANG, lang, t
from .stepper import SLOWEST_SPEED

#: Mode -> key (``KeyboardEvent.key``) -> the buttons it presses, by widget key; the first
#: present and enabled is pressed. ``SHOW`` is the lesson question's "show the answer"
#: button (its key ends in ``_show``, ``ui.lesson._question``).
SHOW = "lesson_q_*_show"
_NEXT, _PREV = ("ArrowRight", "PageDown"), ("ArrowLeft", "PageUp")
KEYMAP: dict[str, dict[str, tuple[str, ...]]] = {
    "explore": {**dict.fromkeys(_NEXT, ("next_step",)), **dict.fromkeys(_PREV, ("prev_step",)),
                "Home": ("first_step",), "End": ("last_step",), " ": ("play",)},
    "lesson": {**dict.fromkeys(_NEXT, (SHOW, "lesson_next")),
               **dict.fromkeys(_PREV, ("lesson_prev",))},
}

_JS = """
const OWNS_KEYS = new Set(["slider", "radio", "radiogroup", "listbox", "option", "combobox",
                           "tab", "tablist", "menu", "menuitem", "spinbutton", "textbox",
                           "switch", "checkbox"]);

function ownsKeys(el) {  // a focused element that uses these keys itself
  if (!el || el === document.body || el === document.documentElement) return false;
  if (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName)) return true;
  return OWNS_KEYS.has(el.getAttribute("role") || "");
}

function selector(key) {  // a widget key -> its button (Streamlit's st-key-<key> class)
  if (!key.includes("*")) return `.st-key-${key} button`;
  const [head, tail] = key.split("*");
  return `[class*="st-key-${head}"][class*="${tail}"] button`;
}

function press(keys) {  // the first present, enabled button of keys; true if one was
  for (const key of keys) {
    const button = [...document.querySelectorAll(selector(key))].find((b) => !b.disabled);
    if (button) { button.click(); return true; }
  }
  return false;
}

export default function ({ data: sent, parentElement, setStateValue }) {
  const data = Array.isArray(sent) ? sent[0] : sent; // the payload comes as [payload]
  if (data && data.lang) document.documentElement.lang = data.lang;
  const motion = window.matchMedia("(prefers-reduced-motion: reduce)");
  // A value is sent only when it differs from what the server has (``data``): each one
  // sent reruns the app.
  parentElement.__known = { reduced_motion: !!(data && data.reduced_motion),
                            column_px: data && data.column_px };
  const send = (name, value) => {
    if (parentElement.__known[name] === value) return;
    parentElement.__known[name] = value;
    setStateValue(name, value);
  };
  send("reduced_motion", motion.matches);
  if (!parentElement.__onMotion) {
    parentElement.__onMotion = (event) => parentElement.__send("reduced_motion", event.matches);
    motion.addEventListener("change", parentElement.__onMotion);
  }
  parentElement.__send = send;
  // Present mode: the main column's width, which the charts are fitted to (to 20 px)
  parentElement.__present = !!(data && data.present);
  const main = document.querySelector("[data-testid='stMainBlockContainer']");
  const report = () => {
    if (!parentElement.__present || !main) return;
    const style = getComputedStyle(main);
    const inner = main.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    if (inner > 0) parentElement.__send("column_px", Math.floor(inner / 20) * 20);
  };
  report();
  if (main && !parentElement.__observer) {
    let timer = null;
    parentElement.__observer = new ResizeObserver(() => {
      clearTimeout(timer);
      timer = setTimeout(report, 300);  // once the window has stopped moving
    });
    parentElement.__observer.observe(main);
  }
  parentElement.__keymap = (data && data.keymap) || {};
  if (!parentElement.__onKey) {
    parentElement.__onKey = (event) => {
      if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
      const keys = parentElement.__keymap[event.key];
      const focused = document.activeElement;
      if (!keys || ownsKeys(focused)) return;
      const pressable = /^(BUTTON|A|SUMMARY)$/.test(focused.tagName);
      if (event.key === " " && (event.repeat || pressable)) return;
      if (press(keys)) event.preventDefault();  // no scrolling by PageDown or Space
    };
    document.addEventListener("keydown", parentElement.__onKey);
  }
  return () => {
    document.removeEventListener("keydown", parentElement.__onKey);
    motion.removeEventListener("change", parentElement.__onMotion);
    if (parentElement.__observer) parentElement.__observer.disconnect();
    parentElement.__onKey = parentElement.__onMotion = parentElement.__observer = null;
  };
}
"""

_script = st.components.v2.component("page_document", js=_JS)


def payload(data: dict) -> list[dict]:
    """A components-v2 component's ``data`` as ``[data]`` (its script reads the first item).
    Streamlit scans a dict's values for dataframes, and its check imports pandas (43 MB of
    the server, which otherwise never loads it: ``ui.export.table``); a list is sent as
    JSON unscanned."""
    return [data]


def _ignore() -> None:
    """The column's new width needs no callback: the rerun it causes refits the charts."""


def _motion_changed() -> None:
    """The browser asks for reduced motion (``prefers-reduced-motion: reduce``): Play steps
    at its slowest speed (the sidebar's picker shows it, and the teacher may change it)."""
    if (st.session_state.get(DOCUMENT_KEY) or {}).get("reduced_motion"):
        st.session_state["speed"] = SLOWEST_SPEED


def set_up(mode: str) -> None:
    """Set the page's language and its keys for ``mode`` ("explore" or "lesson"), and say in
    small type, in the sidebar, which keys work.

    Raises:
        KeyError: ``mode`` is not a key of ``KEYMAP``.
    """
    keymap = KEYMAP[mode]
    with st.sidebar:
        st.caption(t(f"keys_{mode}"))
        known = st.session_state.get(DOCUMENT_KEY) or {}
        sent = {"lang": HTML_LANG[lang()], "present": presenting(),
                "keymap": {k: list(v) for k, v in keymap.items()},
                "reduced_motion": bool(known.get("reduced_motion")),
                "column_px": known.get("column_px")}
        _script(key=DOCUMENT_KEY, data=payload(sent),
                default={"reduced_motion": False, "column_px": None},
                on_reduced_motion_change=_motion_changed,
                on_column_px_change=_ignore)  # read by ui.charts.column_px
