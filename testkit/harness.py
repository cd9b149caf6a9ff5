"""The harness the benchmarks and ``tests/browser`` share: the repository's root, the
Streamlit server launcher, the Chromium settings and the in-page JavaScript that reads the
page's state. (The benchmarks' own reporting, percentiles, the machine's description and
the RESULTS.md sections, is ``benchmarks/report.py``.)"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
INSTALL_HINT = ("Debian's Chromium is needed for the browser tests and is never downloaded: "
                "run `apt-get install chromium fonts-noto-cjk` (as root), then retry.")
VIEWPORT = {"width": 1500, "height": 1200}
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

# ---------------------------------------------------------------------------------------------
# Server and browser
# ---------------------------------------------------------------------------------------------


def chromium_problem() -> str | None:
    """Why Debian's Chromium cannot be used (a message naming the fix), or None if it can."""
    if not Path(CHROMIUM).is_file() or not os.access(CHROMIUM, os.X_OK):
        return f"{CHROMIUM} is missing. {INSTALL_HINT}"
    return None


def fresh_python(code: str) -> str:
    """What ``python -c code`` prints (stdout) in a new interpreter of this environment, run
    from the repository's root: for what only a fresh process shows (which modules an
    import loads, the heap, thread settings). Raises ``CalledProcessError`` when it fails."""
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
            return reply.status == 200 and reply.read().strip() == b"ok"
    except OSError:
        return False


@dataclass
class Server:
    """A running ``streamlit run app.py``: its URL and a way to read what it has printed."""

    url: str
    output: Callable[..., str]  # output(tail=5000): its last ``tail`` characters, None: all
    pid: int


def _listening(port: int) -> bool:
    """Whether something accepts TCP connections on 127.0.0.1:``port``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@contextmanager
def streamlit_server(timeout: float = 60.0, script: str = "serve.py",
                     file_watcher: str | None = "none", *, answering: bool = True
                     ) -> Iterator[Server]:
    """Run ``python -m streamlit run SCRIPT`` on a free loopback port and yield it: by
    default ``serve.py`` (the app, warmed up at server start, as README says to run it), or
    ``app.py`` itself.

    The server runs from the repository root with this interpreter, its Python output
    unbuffered (``Server.output`` reads all it has printed so far). The file watcher is off
    (a test must not rerun the app because someone saved a file meanwhile; ``file_watcher``
    None leaves it to ``.streamlit/config.toml``, as a plain ``streamlit run`` does) and so
    are the usage statistics. Polls ``/_stcore/health`` until it answers ``ok`` (with
    ``answering`` False, only until its port accepts connections: ``serve.py`` may still be
    warming up, and a request then waits for it); raises ``RuntimeError`` with the server's
    output if it exits or is not up within ``timeout`` seconds. The server is terminated
    (then killed) on exit.
    """
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
    watcher = ["--server.fileWatcherType", file_watcher] if file_watcher is not None else []
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", *watcher,
         "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )

    def output(tail: int | None = 5000) -> str:
        log.flush()
        log.seek(0)
        text = log.read()
        return text if tail is None else text[-tail:]

    try:
        deadline = time.monotonic() + timeout
        while not (_healthy(url) if answering else _listening(port)):
            if server.poll() is not None:
                raise RuntimeError(f"streamlit exited with code {server.returncode} before "
                                   f"{url}/_stcore/health answered; its output:\n{output()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not answer {url}/_stcore/health within "
                                   f"{timeout:.0f} s; its output:\n{output()}")
            time.sleep(0.25)
        yield Server(url, output, server.pid)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
        log.close()


# ---------------------------------------------------------------------------------------------
# What the page looks like: JavaScript evaluated in the page, shared by the sync helpers in
# tests/browser/conftest.py and the async classroom below.
# ---------------------------------------------------------------------------------------------

#: The view picker (a segmented control), its options (buttons with the role "radio"), the
#: chosen one, and the container that holds the chosen view (``ui.views.panels.VIEW_PANEL``).
VIEW_PICKER = ".st-key-view"
VIEW_OPTIONS = f"{VIEW_PICKER} [role='radio']"
VIEW_CHOSEN = f"{VIEW_OPTIONS}[aria-checked='true']"
VIEW_PANEL = ".st-key-view_panel"


def view_option(page, name: str):
    """The view picker's option ``name`` in ``page`` (a Playwright locator, sync or async
    API alike)."""
    return page.locator(VIEW_PICKER).get_by_role("radio", name=name, exact=True)


def with_views(js: str) -> str:
    """``js`` with the view picker's selectors in place of ``%VIEW_OPTIONS%``,
    ``%VIEW_CHOSEN%`` and ``%VIEW_PANEL%``."""
    return (js.replace("%VIEW_OPTIONS%", VIEW_OPTIONS).replace("%VIEW_CHOSEN%", VIEW_CHOSEN)
            .replace("%VIEW_PANEL%", VIEW_PANEL))

#: Everything the tests look at, read in one go: ``() => snapshot`` (``tab``: the chosen
#: view's name; ``panelCharts``: the charts in its panel).
SNAPSHOT_JS = """
() => {
  const all = (sel, root = document) => [...root.querySelectorAll(sel)];
  const text = (e) => e.textContent;
  const app = document.querySelector("[data-testid='stApp']");
  const md = all("[data-testid='stMarkdownContainer'] p, [data-testid='stCaptionContainer'] p");
  const codesAfter = (prefix) => {
    const el = md.find((e) => e.innerText.trim().startsWith(prefix));
    return el ? all('code', el).map(text) : null;
  };
  const stepEl = md.find((e) => /^Step \\d+ of \\d+$/.test(e.innerText.trim()));
  const slider = document.querySelector(  // the step slider, not the sidebar's
    ".st-key-step [data-testid='stSlider'] input[type='range']");
  const sentence = document.querySelector("input[aria-label='English sentence']");
  const tab = document.querySelector("%VIEW_CHOSEN%");
  return {
    state: app ? app.getAttribute('data-test-script-state') : null,
    stale: all("[data-stale='true']").length,
    charts: all("[data-testid='stPlotlyChart']").map((c) => ({
      title: (c.querySelector('.gtitle') || {textContent: ''}).textContent,
      drawn: c.querySelector('svg.main-svg') !== null,
      // every panel's ticks: Plotly names the groups xtick, x2tick, x5tick, ...
      x: all('g', c).filter((g) => /^x\\d*tick$/.test(g.getAttribute('class') || ''))
        .map(text),
      y: all('g', c).filter((g) => /^y\\d*tick$/.test(g.getAttribute('class') || ''))
        .map(text),
      firstPanelY: all('.subplot.xy .ytick text', c).map(text),
      // each axis's tick labels by axis: {x: [...], x2: [...], y: [...], ...}
      axes: all('g', c).reduce((axes, g) => {
        const name = (/^([xy]\\d*)tick$/.exec(g.getAttribute('class') || '') || [])[1];
        if (name) (axes[name] = axes[name] || []).push(text(g));
        return axes;
      }, {}),
    })),
    exceptions: all("[data-testid='stException']").map((e) => e.innerText),
    alerts: all("[data-testid='stAlert']").map((a) => ({
      kind: ((a.querySelector("[data-testid^='stAlertContent']") || {dataset: {}})
             .dataset.testid || '').replace('stAlertContent', '').toLowerCase(),
      text: a.innerText,
    })),
    heading: all('h3').map((e) => e.innerText.trim()).join('\\n'),
    step: stepEl ? stepEl.innerText.trim() : null,
    sourceTokens: codesAfter('Source tokens:'),
    decoderInput: codesAfter('Decoder input so far:'),
    slider: slider ? {min: +slider.min, max: +slider.max, value: +slider.value} : null,
    sentence: sentence ? sentence.value : null,
    tab: tab ? tab.innerText.trim() : null,
    panelCharts: (() => {
      const p = document.querySelector("%VIEW_PANEL%");
      return p ? all("[data-testid='stPlotlyChart']", p).length : 0;
    })(),
  };
}
"""
SNAPSHOT_JS = with_views(SNAPSHOT_JS)

#: ``(want) => bool``: the app is idle, every widget is drawn (none is still a loading
#: skeleton: on a first visit Streamlit fetches each widget's code on demand, so a chart can
#: be drawn before the sidebar's text box), and the page shows what ``want`` describes. Keys
#: (all optional): ``charts`` / ``minCharts`` (how many Plotly charts; every chart on the page
#: must have its SVG in any case), ``panelCharts`` / ``panelMin`` (the same inside the
#: chosen view's panel, ``VIEW_PANEL``), ``titles`` (chart titles that must be present, as
#: prefixes), ``step`` (the "Step k of T" label), ``stepOf`` (the label starts with "Step 1
#: of " etc.), ``source`` (the source-token caption), ``alert`` (text some alert contains),
#: ``tab`` (the chosen view's name), ``rows`` (``{title, n}``: that chart's heatmap, or the
#: first panel of its grid of heads, has ``n`` query rows in its data).
READY_JS = """
(want) => {
  const all = (sel, root = document) => [...root.querySelectorAll(sel)];
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector("[data-stale='true']")) return false;
  // a widget whose code is still loading is drawn as a skeleton (first visit)
  if (document.querySelector("[data-testid='stSkeleton']")) return false;
  const charts = all("[data-testid='stPlotlyChart']");
  const title = (c) => (c.querySelector('.gtitle') || {textContent: ''}).textContent;
  if (want.charts !== undefined && charts.length !== want.charts) return false;
  if (want.minCharts !== undefined && charts.length < want.minCharts) return false;
  if (!charts.every((c) => c.querySelector('svg.main-svg'))) return false;
  const panel = document.querySelector("%VIEW_PANEL%");
  const inPanel = panel ? all("[data-testid='stPlotlyChart']", panel).length : 0;
  if (want.panelCharts !== undefined && inPanel !== want.panelCharts) return false;
  if (want.panelMin !== undefined && inPanel < want.panelMin) return false;
  if (want.titles && !want.titles.every((t) => charts.some((c) => title(c).startsWith(t)))) {
    return false;
  }
  const md = all("[data-testid='stMarkdownContainer'] p, [data-testid='stCaptionContainer'] p");
  const texts = md.map((e) => e.innerText.trim());
  if (want.step && !texts.includes(want.step)) return false;
  const isStep = (t) => /^Step \\d+ of \\d+$/.test(t);
  if (want.stepOf && !texts.some((t) => isStep(t) && t.startsWith(want.stepOf))) return false;
  if (want.source) {
    const cap = md.find((e) => e.innerText.trim().startsWith('Source tokens:'));
    if (!cap || JSON.stringify(all('code', cap).map((e) => e.textContent))
                 !== JSON.stringify(want.source)) return false;
  }
  if (want.alert && !all("[data-testid='stAlert']").some((a) => a.innerText.includes(want.alert))) {
    return false;
  }
  if (want.slider !== undefined) {  // the step slider's value (React sets it after a render)
    const s = document.querySelector(".st-key-step [data-testid='stSlider'] input[type='range']");
    if (!s || +s.value !== want.slider) return false;
  }
  if (want.tab) {
    const tab = document.querySelector("%VIEW_CHOSEN%");
    if (!tab || tab.innerText.trim() !== want.tab) return false;
  }
  if (want.rows) {
    const c = charts.find((c) => title(c).startsWith(want.rows.title));
    const plot = c && c.querySelector('.js-plotly-plot');
    const map = plot && (plot.data || []).find((tr) => tr.type === 'heatmap');
    if (!map) return false;
    // The query rows of the first panel, from the data (a long axis shows only some of its
    // tick labels): the rows up to the first row of nothing but gap cells (NaN, between the
    // panels of a grid of heads), or all of them.
    let z = map.z, width = 0;
    if (!Array.isArray(z)) {  // Plotly's typed-array form: {dtype, bdata, shape}
      const types = {f4: Float32Array, f8: Float64Array};
      const bytes = Uint8Array.from(atob(z.bdata), (ch) => ch.charCodeAt(0));
      const flat = new types[z.dtype](bytes.buffer);
      width = Number(String(z.shape).split(',')[1]);
      z = Array.from({length: flat.length / width},
                     (_, i) => flat.slice(i * width, (i + 1) * width));
    }
    const gap = z.findIndex((row) => Array.from(row).every((v) => v === null || Number.isNaN(v)));
    if ((gap < 0 ? z.length : gap) !== want.rows.n) return false;
  }
  return true;
}
"""
READY_JS = with_views(READY_JS)


class RunCounter:
    """Counts the script runs the server reports as finished to one page.

    Listens to the page's websocket and decodes each ``ForwardMsg``: a ``script_finished``
    (successfully, whole script or one ``st.fragment``) is one finished run. The page's
    ``data-test-script-state`` attribute is not enough on its own: a run of a few
    milliseconds can go ``notRunning`` -> ``running`` -> ``notRunning`` within one React
    render, leaving the attribute untouched.
    """

    def __init__(self, page):
        self.done = 0
        page.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, payload) -> None:
        if isinstance(payload, str):
            return
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = ForwardMsg()
        try:
            msg.ParseFromString(payload)
        except Exception:  # not a ForwardMsg: nothing to count
            return
        if msg.WhichOneof("type") == "script_finished" and msg.script_finished in (
                ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY):
            self.done += 1


#: ``() => [problem, ...]``: user text that became live HTML, a link, LaTeX, colour, ...
INJECTION_JS = """
() => {
  const all = (sel) => [...document.querySelectorAll(sel)];
  const problems = [];
  all('script').filter((s) => /alert|onerror/.test(s.textContent))
    .forEach((s) => problems.push('script element: ' + s.outerHTML.slice(0, 80)));
  all('img[onerror], img[src="x"], [onerror], [onclick]')
    .forEach((e) => problems.push('element with handler: ' + e.outerHTML.slice(0, 80)));
  all('a[href]').filter((a) => /^\\s*javascript:|example\\.com/i.test(a.getAttribute('href')))
    .forEach((a) => problems.push('link: ' + a.outerHTML.slice(0, 80)));
  const md = "[data-testid='stMarkdownContainer'] ";
  all(md + '.katex, ' + md + '.stMarkdownColoredText, ' + md + '.stMarkdownBadge, ' +
      md + "[data-testid='stIconMaterial'], " + md + 'blockquote, ' + md + 'h1, ' + md + 'h2')
    .filter((e) => !e.closest("[data-testid='stHeading']"))  // st.title: the app's own text
    .forEach((e) => problems.push('rendered markup: ' + e.outerHTML.slice(0, 80)));
  all(md + 'strong, ' + md + 'em, ' + md + 'b, ' + md + 'i')
    .filter((e) => /^(why|we|click)$/i.test(e.textContent.trim()))
    .forEach((e) => problems.push('emphasis on user text: ' + e.outerHTML.slice(0, 80)));
  if (document.body.innerText.includes('\\u{1F604}')) problems.push(':smile: became an emoji');
  return problems;
}
"""

#: ``([text, cssFont]) => {...}``: draws ``text`` on a canvas in the given CSS font and
#: compares it with the missing-glyph box of an unassigned code point: a font stack that
#: cannot draw the character gives the same box (or nothing at all).
GLYPH_JS = """
([text, font]) => {
  const draw = (s) => {
    const c = document.createElement('canvas');
    c.width = 160; c.height = 80;
    const g = c.getContext('2d', {willReadFrequently: true});
    g.fillStyle = '#fff'; g.fillRect(0, 0, c.width, c.height);
    g.fillStyle = '#000'; g.font = font; g.textBaseline = 'middle'; g.fillText(s, 8, 40);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let ink = 0, bits = '';
    for (let i = 0; i < d.length; i += 4) { const on = d[i] < 128; ink += on; bits += +on; }
    return {ink, bits, width: g.measureText(s).width};
  };
  const glyph = draw(text), tofu = draw('\\u0378');
  return {ink: glyph.ink, width: glyph.width, tofuWidth: tofu.width,
          isTofu: glyph.bits === tofu.bits || glyph.ink === 0};
}
"""


def page_problems(snap: dict) -> list[str]:
    """Streamlit exception boxes and error alerts in a page snapshot (empty when clean)."""
    return ([f"exception box: {e[:500]}" for e in snap["exceptions"]]
            + [f"error alert: {a['text'][:500]}" for a in snap["alerts"] if a["kind"] == "error"])


def tick_labels(snap: dict) -> set[str]:
    """Every axis tick label of every chart in a snapshot."""
    return {t for c in snap["charts"] for t in (*c["x"], *c["y"])}


def chart(snap: dict, title: str) -> dict:
    """The one chart whose title starts with ``title`` (AssertionError if not exactly one)."""
    found = [c for c in snap["charts"] if c["title"].startswith(title)]
    assert len(found) == 1, (title, [c["title"] for c in snap["charts"]])
    return found[0]
