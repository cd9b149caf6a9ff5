"""Readable on a projector: in Present mode, at 6, 20 and 40 source tokens and the last
decoding step, every view's charts draw their tick labels at least ``PRESENT_FONT_PX`` px
high and no two labels of one axis overlap, measured as Chromium lays them out
(``getBoundingClientRect`` of each tick's text). The grids of all heads are measured too.
On a projector's 1920 x 1080 screen every chart is at least 80 % of its column's width, and
with the Cross-attention view the first chart starts in the top 650 px. Outside Present mode,
in both directions (en -> zh, zh -> en) and windows 1280, 1440 and 1920 px wide, the step
figure and the grid of all heads at 40 tokens have no overlapping labels either.

The sentences' token counts come from the default model's own tokenizer, not from a run.
"""

from __future__ import annotations

import re
from itertools import combinations
from urllib.parse import quote

import pytest
from shipped import model_of

from model.backends.load import default_model, pretrained_root
from ui.i18n import KIND_VIEWS, STRINGS, VIEW_KEYS, VIEWS
from viz.fit import PRESENT_FONT_PX

SENTENCES = {
    6: "Why do we work?",
    20: "My mother is a doctor, and my father teaches history at a small school near our home.",
    40: "When I was a child, my grandmother told me stories about her village in the "
        "mountains, where people grew rice and tea, and every autumn the family came home "
        "to help with the harvest.",
}
OVERLAP_PX = 1.0  # two boxes sharing more than this in both directions overlap

BOXES_JS = """
() => [...document.querySelectorAll("[data-testid='stPlotlyChart']")].map((c) => {
  const axes = {};
  for (const g of c.querySelectorAll('g')) {
    const name = (/^([xy]\\d*)tick$/.exec(g.getAttribute('class') || '') || [])[1];
    const label = name && g.querySelector('text');
    if (!label || !label.textContent.trim()) continue;
    const r = label.getBoundingClientRect();
    if (!r.width || !r.height) continue;
    (axes[name] = axes[name] || []).push({text: label.textContent, left: r.left,
      right: r.right, top: r.top, bottom: r.bottom,
      font: parseFloat(getComputedStyle(label).fontSize)});
  }
  const box = c.getBoundingClientRect();
  const column = c.closest("[data-testid='stVerticalBlock']").getBoundingClientRect();
  return {title: (c.querySelector('.gtitle') || {textContent: ''}).textContent, axes,
          top: box.top + document.querySelector("[data-testid='stMain']").scrollTop,
          width: box.width, column: column.width};
})
"""
FITTED_JS = """
() => {  // every chart fitted to the main column's width as ui.document reports it
  const main = document.querySelector("[data-testid='stMainBlockContainer']");
  const style = getComputedStyle(main);
  const px = Math.floor((main.clientWidth - parseFloat(style.paddingLeft)
                         - parseFloat(style.paddingRight)) / 20) * 20;
  const charts = [...document.querySelectorAll("[data-testid='stPlotlyChart'] .js-plotly-plot")];
  return charts.length > 0 && charts.every((gd) => ((gd.layout || {}).meta || {}).page_px === px);
}
"""
PROJECTOR = {"width": 1920, "height": 1080}  # the projector
FIRST_CHART_TOP_PX = 650  # the first chart starts this high on a projector's first screen
WIDTH_SHARE = 0.8  # every chart at least this share of its column's width


def _problems(charts: list[dict]) -> list[str]:
    """Tick labels under the minimum size, and pairs of one axis's labels that overlap."""
    found = []
    for c in charts:
        for axis, boxes in c["axes"].items():
            for b in boxes:
                if b["font"] < PRESENT_FONT_PX:
                    found.append(f"{c['title']!r} {axis}: {b['text']!r} at {b['font']} px")
            for a, b in combinations(boxes, 2):
                across = min(a["right"], b["right"]) - max(a["left"], b["left"])
                down = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
                if across > OVERLAP_PX and down > OVERLAP_PX:
                    found.append(f"{c['title']!r} {axis}: {a['text']!r} overlaps {b['text']!r} "
                                 f"({across:.1f} x {down:.1f} px)")
    return found


def _measure(app, case: str, first_screen: bool) -> list[str]:
    """The problems of the page as drawn now (``case`` names it): small or overlapping tick
    labels, charts under ``WIDTH_SHARE`` of their column, and with ``first_screen`` a first
    chart that starts below ``FIRST_CHART_TOP_PX``."""
    charts = app.page.evaluate(BOXES_JS)
    assert any(c["axes"] for c in charts), f"{case}: no tick labels measured"
    problems = [f"{case}: {p}" for p in _problems(charts)]
    problems += [f"{case}: {c['title']!r} {c['width']:.0f} of {c['column']:.0f} px"
                 for c in charts if c["width"] < WIDTH_SHARE * c["column"]]
    if first_screen:  # the Cross-attention view's step figure starts high
        first = min(c["top"] for c in charts)
        if first > FIRST_CHART_TOP_PX:
            problems.append(f"{case}: the first chart starts at {first:.0f} px")
    return problems


@pytest.mark.parametrize("n", sorted(SENTENCES))
def test_present_mode_labels_are_large_and_never_overlap(app, n):
    # One session per sentence, opened by its link at the last step in Present mode; then
    # every view is chosen in the page, as a teacher does, and the three attention views
    # also with all their heads.
    sentence = SENTENCES[n]
    translator = model_of(default_model(
        [p.name for p in pretrained_root().iterdir()]))
    assert len(translator.source(sentence, None, None).tokens) == n
    last = translator.config.max_len  # the stepper clamps the step to the last one
    app.page.set_viewport_size(PROJECTOR)
    app.page.goto(f"{app.url}/?sentence={quote(sentence)}&present=true&view={VIEWS[0]}"
                  f"&step={last}")
    app.wait_ready(minCharts=2)
    app.page.wait_for_function(FITTED_JS, timeout=60_000)  # the rerun with the real width
    app.wait_ready(minCharts=2)
    problems = []
    for view in VIEWS:
        app.open_view(STRINGS[VIEW_KEYS[view]]["en"], minCharts=2)
        app.page.wait_for_function(FITTED_JS, timeout=60_000)
        problems += _measure(app, view, first_screen=view == "cross")
        if n == 40 and view == "cross":
            app.screenshot("present-cross-40-tokens")
    for view in KIND_VIEWS:
        app.open_view(STRINGS[VIEW_KEYS[view]]["en"], minCharts=2)
        app.select(STRINGS["head"]["en"], STRINGS["all_heads"]["en"], in_tab=True, minCharts=2)
        app.page.wait_for_function(FITTED_JS, timeout=60_000)
        problems += _measure(app, f"{view}, all heads", first_screen=False)
    assert not problems, "\n".join(problems[:30])


# Both directions (issue 54): the step figure and the grid of all heads, outside Present mode,
# at 40 source tokens and up to 40 decoder tokens (the link's step; the stepper stops at the
# last), in a laptop's, a desktop's and a projector's window, the sidebar open.
DIRECTIONS = {
    "en-zh": (None, SENTENCES[40]),  # the default model: pinyin under the decoder input
    "zh-en": ("zh-en-everyday", "我们每天早上七点去学校上课，中午在食堂吃饭，下午四点回家，"
                                 "晚上写作业，十点睡觉"),  # pinyin under the source
}
WINDOWS = (1280, 1440, 1920)
STEP_TITLE = STRINGS["step_overview_title"]["en"].split("{")[0]  # "Step "
ALL_HEADS_TITLE = "all heads"
TONE = re.compile(r"[āáǎàēéěèīíǐìōóǒòūúǔùǖǘǚǜ]")  # a pinyin syllable's tone mark


@pytest.mark.parametrize("width", WINDOWS)
@pytest.mark.parametrize("direction", sorted(DIRECTIONS))
def test_step_chart_and_all_heads_keep_their_labels_apart(app, direction, width):
    # One session per (direction, width), opened at its step by its link: the step figure's
    # source and decoder-input labels, its bars and heads, and the cross-attention grid of
    # all heads (Chinese with its pinyin on one side) have no two labels of an axis meeting.
    folder, sentence = DIRECTIONS[direction]
    name = folder or default_model([p.name for p in pretrained_root().iterdir()])
    assert len(model_of(name).source(sentence, None, None).tokens) == 40
    app.page.set_viewport_size({"width": width, "height": 1000})
    app.page.goto(f"{app.url}/?sentence={quote(sentence)}&view=cross&head=all&step=40"
                  + (f"&model={folder}" if folder else ""))
    app.wait_ready(minCharts=2)
    charts = app.page.evaluate(BOXES_JS)
    step = [c for c in charts if c["title"].startswith(STEP_TITLE)]
    grid = [c for c in charts if c["title"].endswith(ALL_HEADS_TITLE)]
    assert len(step) == 1 and len(grid) == 1, [c["title"] for c in charts]
    keys = [b["text"] for b in step[0]["axes"]["x2"]]
    assert any(TONE.search(k) for k in keys), keys  # Chinese keys carry their pinyin
    overlaps = [p for p in _problems(step + grid) if " overlaps " in p]
    assert not overlaps, "\n".join(overlaps[:20])
    app.screenshot(f"labels-{direction}-{width}")


LAPTOP = {"width": 1280, "height": 800}  # a teacher's laptop, the sidebar open
TITLE_JS = """
() => [...document.querySelectorAll("[data-testid='stPlotlyChart']")].map((c) => {
  const title = c.querySelector('.gtitle'), box = c.getBoundingClientRect();
  const r = title ? title.getBoundingClientRect() : box;
  const meets = [...c.querySelectorAll('.annotation-text')].map((a) => a.getBoundingClientRect())
    .filter((a) => title && a.top < r.bottom - 1 && a.bottom > r.top + 1
            && a.left < r.right - 1 && a.right > r.left + 1);
  const bar = c.querySelector('.modebar'), m = bar && bar.getBoundingClientRect();
  return {title: title ? title.textContent : '', inside: r.left >= box.left - 1
          && r.right <= box.right + 1 && r.top >= box.top - 1 && meets.length === 0,
          underToolbar: !!(title && m && m.width && m.top < r.bottom - 1 && m.bottom > r.top + 1
                           && m.left < r.right - 1 && m.right > r.left + 1)};
})
"""  # a title inside its chart (on every side), clear of the panel titles and notes, and not
# under Plotly's toolbar (its modebar, shown over the chart's top right on hover)


@pytest.mark.parametrize("view", ["masks", "compare", "attribution", "heads"])
def test_charts_side_by_side_on_a_laptop_keep_their_labels_and_titles(app, view):
    # Views with charts side by side: at 1280 px the charts go under one another rather than
    # being squeezed into half (or a third) of the page, so that every tick label has its
    # room and every title is whole, and no title sits under a chart's toolbar.
    app.page.set_viewport_size(LAPTOP)
    app.page.goto(f"{app.url}/?view={view}&compare={quote('Why do we play?')}")
    app.wait_ready(minCharts=2)
    charts = app.page.evaluate(BOXES_JS)
    overlaps = [p for p in _problems(charts) if " overlaps " in p]
    assert not overlaps, "\n".join(overlaps[:20])
    titles = app.page.evaluate(TITLE_JS)
    cut = [c["title"] for c in titles if not c["inside"]]
    assert not cut, cut
    under = [c["title"] for c in titles if c["underToolbar"]]
    assert not under, under


# The projector's first screen (issue 45): the docs' Present sentence, 33 decoding steps.
FIRST_SCREENS = {"projector": {"width": 1920, "height": 1080},
                 "small projector": {"width": 1280, "height": 720}}
PRESENT_SENTENCE = ("When I was a child, my grandmother told me stories about her village in "
                    "the mountains, where people grew rice and tea.")
SIDEBAR_JS = ("document.querySelector(\"[data-testid='stSidebar']\")"
              ".getBoundingClientRect().right")
PLAYER_JS = """
() => {  // the in-app player's map: its top on the page and its labels' boxes and sizes
  const root = document.querySelector('.player.in-app');
  const box = (e) => { const r = e.getBoundingClientRect();
    return {text: e.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom,
            font: parseFloat(getComputedStyle(e).fontSize)}; };
  const shown = (sel) => [...root.querySelectorAll(sel)].filter((e) => !e.hidden).map(box);
  return {top: root.querySelector('#map').getBoundingClientRect().top
               + document.querySelector("[data-testid='stMain']").scrollTop,
          title: 'player', axes: {x: shown('.map-x'), y: shown('.map-y')}};
}
"""


# Whether the main column's first element (the Explore / Lesson switch) is what the pointer
# meets at its centre: Present mode moves it up to where Streamlit's bar lies over the page.
FIRST_LINE_REACHABLE_JS = """() => {
  const first = document.querySelector(
    "[data-testid='stMainBlockContainer'] [data-testid='stElementContainer']");
  const r = first.getBoundingClientRect();
  return first.contains(document.elementFromPoint(r.left + 12, r.top + r.height / 2));
}"""


@pytest.mark.parametrize("player", [False, True], ids=["server", "player"])
@pytest.mark.parametrize("screen", sorted(FIRST_SCREENS))
def test_present_first_screen_shows_attention_with_every_token_labelled(app, screen, player):
    translator = model_of(default_model(
        [p.name for p in pretrained_root().iterdir()]))
    trace = translator.generate(PRESENT_SENTENCE)
    S, T = len(trace.src_tokens), len(trace.steps)
    assert T > S > 20
    app.page.set_viewport_size(FIRST_SCREENS[screen])
    app.page.goto(f"{app.url}/?sentence={quote(PRESENT_SENTENCE)}&present=true&step={T}"
                  + ("&in_browser=true" if player else ""))
    if player:
        app.page.wait_for_function("document.querySelector('.player.in-app')?.dataset.step"
                                   f" === '{T}'", timeout=90_000)
        app.page.wait_for_timeout(500)
        charts = [app.page.evaluate(PLAYER_JS)]
        assert len(charts[0]["axes"]["x"]) == S  # the cross-attention map: every source token
    else:
        app.wait_ready(minCharts=2)
        app.page.wait_for_function(FITTED_JS, timeout=60_000)  # the rerun with the real width
        app.wait_ready(minCharts=2)
        charts = [c for c in app.page.evaluate(BOXES_JS) if c["axes"].get("x")]
        counts = sorted(len(c["axes"]["x"]) for c in charts)
        assert S in counts and T in counts, counts  # the step's cross- and self-attention rows
    first = min(c["top"] for c in charts)
    assert first <= FIRST_CHART_TOP_PX, f"the first attention map starts at {first:.0f} px"
    assert not _problems(charts), "\n".join(_problems(charts)[:20])
    assert app.page.evaluate(SIDEBAR_JS) <= 0  # the sidebar folded away
    assert app.page.locator(".st-key-take_home button").first.is_visible()  # take-home page
    assert app.page.evaluate(FIRST_LINE_REACHABLE_JS), "the page's first line is covered"
    app.screenshot(f"present-first-screen-{screen.replace(' ', '-')}-"
                   f"{'player' if player else 'server'}")
