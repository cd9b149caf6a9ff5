"""What ``benchmarks/clicks.py`` reads in the page: the in-page JavaScript (when a click was
pressed, whether the page has settled, the controls' state), the websocket's traffic, and
what a settled page must show after each kind of click."""

from __future__ import annotations

import asyncio
import string
import time

from testkit.harness import READY_JS, with_views
from viz.convention import FIRST_NUMBER, head_number, layer_number

HEADING = "## Clicks in Chromium (benchmarks/clicks.py)"
SENTENCES = ("why do we work ?",
             "My little brother wants to read three new books about old trains before he "
             "goes to bed tonight.")
ACTIONS = ("next step", "head change", "layer change", "view change", "language change")
LANGS = {"English": "en", "简体中文": "zh"}  # the language radio's options (ui.i18n.LANGUAGES)
CROSS = "cross"  # the view the clicks happen in: its id (ui.i18n.VIEWS) names its widgets' keys
ONE_STACK_VIEW = "to_prompt"  # a decoder-only model's: the written tokens over the prompt


#: Runs in every document before the app's own scripts: remembers when the last pointer was
#: pressed and when the first heatmap (a Plotly heatmap's image) entered the page.
INIT_JS = """
(() => {
  window.__pressAt = null;
  window.__firstHeatmapAt = null;
  addEventListener('pointerdown', () => { window.__pressAt = performance.now(); }, true);
  const heatmap = "[data-testid='stPlotlyChart'] .heatmaplayer image";
  const seen = new MutationObserver(() => {
    if (document.querySelector(heatmap)) {
      window.__firstHeatmapAt = performance.now();
      seen.disconnect();
    }
  });
  seen.observe(document, {childList: true, subtree: true});
})();
"""

#: ``() => n``: before a click: forgets the last press and marks every Plotly chart's element
#: (a property of ours on the chart's DOM node), which Plotly's public ``plotly_afterplot``
#: event clears whenever Plotly draws that chart again; a chart Streamlit mounts anew is a new
#: node, unmarked. So ``SETTLED_JS`` can count the charts the click made Plotly draw without
#: reading plotly.js's private state.
MARK_JS = """
() => {
  window.__pressAt = null;
  const mark = window.__chartMark = {};
  const plots = [...document.querySelectorAll("[data-testid='stPlotlyChart'] .js-plotly-plot")];
  plots.forEach((gd) => {
    gd.__chartMark = mark;
    if (!gd.__chartWatched && typeof gd.on === 'function') {
      gd.on('plotly_afterplot', () => { gd.__chartMark = null; });
      gd.__chartWatched = true;
    }
  });
  return plots.length;
}
"""

#: ``(want) => false | {now, pressAt, charts, replotted}``: ``READY_JS`` (the app idle, no
#: stale element, every chart drawn, and what ``want`` asks for), and every chart whose widget
#: key is in ``want.redrawn`` drawn again since ``MARK_JS`` (if the page has it); when that
#: holds, the page's clock now and at the last pointer press, how many charts the page has
#: and how many of them Plotly has drawn since ``MARK_JS``.
SETTLED_JS = f"""
(want) => {{
  const ready = {READY_JS.strip()};
  if (!ready(want)) return false;
  const stale = (gd) => gd.__chartMark === window.__chartMark;
  if ((want.redrawn || []).some((key) => {{
    const gd = document.querySelector(`.st-key-${{key}} .js-plotly-plot`);
    return gd && stale(gd);
  }})) return false;
  const plots = [...document.querySelectorAll(
    "[data-testid='stPlotlyChart'] .js-plotly-plot")];
  return {{now: performance.now(), pressAt: window.__pressAt, charts: plots.length,
           replotted: plots.filter((gd) => !stale(gd)).length}};
}}
"""

#: ``(view) => {...}``: the controls' state (``view``'s layer and head pickers), read before
#: each click to choose what to expect.
STATE_JS = """
(view) => {
  const slider = document.querySelector(".st-key-step input[type='range']");
  const tab = document.querySelector("%VIEW_CHOSEN%");
  const lang = document.querySelector(".st-key-lang [data-testid='stRadioOption']"
                                      + "[data-selected='true']");
  const box = (key) => {
    const input = document.querySelector(`.st-key-${key} input[role='combobox']`);
    return input ? input.value : null;
  };
  const app = document.querySelector("[data-testid='stApp']");
  return {
    step: slider ? +slider.value : null,
    steps: slider ? +slider.max : null,
    tab: tab ? tab.innerText.trim() : null,
    tabs: [...document.querySelectorAll("%VIEW_OPTIONS%")].map((t) => t.innerText.trim()),
    lang: lang ? lang.innerText.trim() : null,
    layer: box(view + '_layer'),
    head: box(view + '_head'),
    source: (() => {
      const md = [...document.querySelectorAll("[data-testid='stCaptionContainer']")]
        .find((e) => e.innerText.trim().startsWith('Source tokens:'));
      return md ? md.querySelectorAll('code').length : null;
    })(),
    script: app ? app.getAttribute('data-test-script-state') : null,
    charts: [...document.querySelectorAll("[data-testid='stPlotlyChart'] .gtitle")]
      .map((e) => e.textContent),
  };
}
"""
STATE_JS = with_views(STATE_JS)

# ---------------------------------------------------------------------------------------------
# Processes: CPU time and memory from /proc


class Wire:
    """Counts one page's websocket traffic and decodes what the server sends.

    Bytes both ways (payload lengths: ``len`` of bytes, of the UTF-8 encoding of text), the
    script runs the server reported finished (``script_finished``: whole script or one
    fragment), and the elements it sent (``delta.new_element``, or by reference to one the
    browser has cached: ``ref_hash``), Plotly charts apart. A run
    of a few milliseconds can leave the page's ``data-test-script-state`` untouched, so a
    click waits for a finished run here before it looks at the page.
    """

    COUNTERS = ("bytes_in", "bytes_out", "runs", "fragment_runs", "elements", "cached",
                "charts", "chart_bytes")

    def __init__(self, page):
        for name in self.COUNTERS:
            setattr(self, name, 0)
        self._kinds: dict[str, str] = {}  # hash of a cacheable message -> element type
        self._finished = asyncio.Event()
        page.on("websocket", self._socket)

    def _socket(self, ws) -> None:
        ws.on("framereceived", self._received)
        ws.on("framesent", self._sent)

    @staticmethod
    def _size(payload) -> int:
        return len(payload) if isinstance(payload, bytes) else len(payload.encode())

    def _sent(self, payload) -> None:
        self.bytes_out += self._size(payload)

    def _received(self, payload) -> None:
        self.bytes_in += self._size(payload)
        if isinstance(payload, str):
            return
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = ForwardMsg()
        try:
            msg.ParseFromString(payload)
        except Exception:  # not a ForwardMsg: bytes only
            return
        kind = msg.WhichOneof("type")
        if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element.WhichOneof("type")
            if msg.hash:
                self._kinds[msg.hash] = element
            self.elements += 1
            if element == "plotly_chart":
                self.charts += 1
                self.chart_bytes += len(payload)
        elif kind == "ref_hash":  # an element the browser has cached: sent by reference
            self.elements += 1
            self.cached += 1
            self.charts += self._kinds.get(msg.ref_hash) == "plotly_chart"
        elif kind == "script_finished" and msg.script_finished in (
                ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY):
            self.runs += 1
            self.fragment_runs += msg.script_finished == \
                ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY
            self._finished.set()

    def counters(self) -> dict[str, int]:
        """Every counter now."""
        return {name: getattr(self, name) for name in self.COUNTERS}

    async def wait_run(self, after: int, deadline: float) -> None:
        """Until more than ``after`` runs have finished; TimeoutError at ``deadline``
        (``time.monotonic``)."""
        while self.runs <= after:
            self._finished.clear()
            await asyncio.wait_for(self._finished.wait(), max(deadline - time.monotonic(), 0))


# ---------------------------------------------------------------------------------------------
# Expected page content, from the app's own string table
# ---------------------------------------------------------------------------------------------


def _strings() -> dict[str, dict[str, str]]:
    from ui.i18n import STRINGS

    return STRINGS


def text(key: str, lang: str, **fmt) -> str:
    """String ``key`` of the app's table in ``lang`` ("en"/"zh") as the page shows it:
    formatted with ``fmt`` and cut before the first field ``fmt`` does not fill (a title
    prefix); markdown bold markers removed."""
    entry = _strings()[key]
    template = entry.get(lang, entry["en"])
    out = []
    for literal, name, spec, _conv in string.Formatter().parse(template):
        out.append(literal)
        if name is None:
            continue
        if name not in fmt:
            break
        out.append(format(fmt[name], spec or ""))
    return "".join(out).replace("**", "")


def view_label(lang: str, view: str = CROSS) -> str:
    """View ``view``'s name in the view picker (``ui.i18n.VIEW_KEYS``)."""
    from ui.i18n import VIEW_KEYS

    return text(VIEW_KEYS[view], lang)


def view_title(lang: str, layer: int, head: int | None, view: str = CROSS) -> str:
    """The step view's (Cross-attention, or ``view``) chart title for the 0-based ``layer``
    and ``head`` indices (None: all heads), numbered as the page numbers them
    (``viz.convention``)."""
    view = view_label(lang, view)
    if head is None:
        return text("view_all_heads_title", lang, view=view, layer=layer_number(layer))
    return text("view_head_title", lang, view=view, layer=layer_number(layer),
                head=head_number(head))


def overview_title(lang: str, k: int) -> str:
    """The step panel's chart title at step ``k`` (it shows the first layer)."""
    return text("step_overview_title", lang, k=k, layer=layer_number(0))


def picked_index(label: str | None) -> int | None:
    """The 0-based index a layer or head picker's text names ("Layer 2", "Head 3" or their
    Chinese forms: the first number in the text, as the page numbers it), None without one."""
    digits = "".join(c if c.isdigit() else " " for c in label or "").split()
    return int(digits[0]) - FIRST_NUMBER if digits else None


def step_want(lang: str, k: int, steps: int, *, layer: int, head: int | None,
              view: str = CROSS) -> dict:
    """``SETTLED_JS`` expectations at step ``k`` of ``steps`` with the step view (the
    Cross-attention tab, or ``view``) open: the step label, the step panel's charts for step
    k, the view's chart with k rows, and every chart that shows the step (the step panel's,
    the view's) drawn again."""
    cross = view_title(lang, layer, head, view)
    return {"step": text("step_of", lang, k=k, n=steps), "panelCharts": 1,
            "redrawn": ["step_chart", f"{view}_chart"],
            "tab": view_label(lang, view),
            "titles": [overview_title(lang, k), cross],
            "rows": {"title": cross, "n": k}}
