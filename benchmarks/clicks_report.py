"""The figures and RESULTS.md section of ``benchmarks/clicks.py``."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field

from benchmarks.clicks_page import ACTIONS, HEADING
from benchmarks.report import percentile


@dataclass
class Click:
    """One measured click (or visit): what the user waited and what it cost."""

    label: str = ""  # what was clicked (a view's name...)
    seconds: float | None = None  # press -> settled, in the page; None: error
    wall: float | None = None  # the same from Python, Playwright's overhead included
    cost: dict[str, float] = field(default_factory=dict)  # increase of ``User.readings``
    replotted: int = 0  # charts Plotly drew anew (or first) for this click
    charts: int = 0  # charts on the page once settled
    error: str | None = None
    first_heatmap: float | None = None  # visits only: navigation -> first heatmap
    started: float = 0.0  # time.perf_counter() at the start


@dataclass
class SentenceRun:
    """Every measured click on one sentence, by action."""

    sentence: str
    source_tokens: int | None
    steps: int | None
    clicks: dict[str, list[Click]] = field(
        default_factory=lambda: {action: [] for action in ACTIONS})


def _after_or_before(seconds: float) -> str:
    """A difference in seconds as "N ms after" (0 or more) or "N ms before"."""
    return f"{_ms(abs(seconds))} ms {'after' if seconds >= 0 else 'before'}"


def _ms(x: float | None) -> str:
    return "–" if x is None else f"{x * 1000:.0f}"


def _kib(x: float | None) -> str:
    return "–" if x is None else f"{x / 1024:.1f}"


def figures(clicks: list[Click]) -> dict:
    """Summary of clicks that settled: n and errors; p50 / p95 / max wait and median first
    heatmap (s); the median of each cost (``Click.cost``) and its mean (``mean_<name>``);
    mean charts replotted and on the page."""
    good = [c for c in clicks if c.seconds is not None]
    out: dict = {"n": len(good), "errors": len(clicks) - len(good)}
    waits = [c.seconds for c in good]
    out["p50"] = percentile(waits, 50) if waits else None
    out["p95"] = percentile(waits, 95) if waits else None
    out["max"] = max(waits) if waits else None
    heat = [c.first_heatmap for c in good if c.first_heatmap is not None]
    out["first_heatmap"] = percentile(heat, 50) if heat else None
    out["first_heatmap_max"] = max(heat) if heat else None
    for name in good[0].cost if good else ():
        values = [c.cost.get(name, 0.0) for c in good]
        out[name] = percentile(values, 50)
        out[f"mean_{name}"] = sum(values) / len(values)
    out["replotted"] = sum(c.replotted for c in good) / len(good) if good else None
    out["charts"] = sum(c.charts for c in good) / len(good) if good else None
    return out


def tables(raw: dict) -> str:
    """The markdown tables: waits, then costs, per sentence and action; then visits."""
    rows_wait, rows_cost, by_view = [], [], []
    for done in raw["sentences"]:
        name = f"{done.source_tokens} tokens, {done.steps} steps"
        for action in ACTIONS:
            f = figures(done.clicks[action])
            rows_wait.append(f"| {name} | {action} | {f['n']} | {_ms(f['p50'])} | "
                             f"{_ms(f['p95'])} | {_ms(f['max'])} | {f['errors']} |")
            if not f["n"]:
                continue
            rows_cost.append(
                f"| {name} | {action} | {_ms(f['mean_server'])} | {_ms(f['mean_chromium'])} | "
                f"{_ms(f['mean_task'])} ({_ms(f['mean_script'])} / {_ms(f['mean_layout'])} / "
                f"{_ms(f['mean_task'] - f['mean_script'] - f['mean_layout'])}) | "
                f"{_kib(f['bytes_in'])} / {_kib(f['bytes_out'])} | "
                f"{f['mean_runs']:.1f} ({f['mean_fragment_runs']:.1f}) | "
                f"{f['mean_elements']:.0f} ({f['mean_cached']:.0f}) | "
                f"{f['mean_charts']:.1f} ({_kib(f['mean_chart_bytes'])}) | "
                f"{f['replotted']:.1f} of {f['charts']:.1f} |")
        views: dict[str, list[float]] = {}
        for c in done.clicks["view change"]:
            if c.seconds is not None:
                views.setdefault(c.label, []).append(c.seconds)
        by_view.append(f"{name}: " + ", ".join(
            f"{view} {_ms(percentile(v, 50))}" for view, v in views.items()))
    visits = []
    for label, record in (("cold: a new server, a new browser", raw["visits_cold"]),
                          ("cold: a new server once idle (warmed up), a new browser",
                           raw.get("visits_idle", [])),
                          ("warm server, a new page", raw["visits_warm"])):
        f = figures(record)
        if f["n"]:
            visits.append(
                f"| {label} | {f['n']} | {_ms(f['first_heatmap'])} | "
                f"{_ms(f['first_heatmap_max'])} | {_ms(f['p50'])} | "
                f"{_ms(f['p95'])} | {_ms(f['mean_server'])} | {_ms(f['mean_chromium'])} | "
                f"{_kib(f['bytes_in'])} | {f['charts']:.0f} | {f['errors']} |")
    floor = figures(raw.get("visits_floor", []))
    if floor["n"]:
        visits.append(f"| cold: the trivial app (`benchmarks/floor_app.py`, 2 heatmaps), a new "
                      f"server, a new browser | {floor['n']} | {_ms(floor['first_heatmap'])} | "
                      f"{_ms(floor['first_heatmap_max'])} | – | – | – | – | – | 2 | "
                      f"{floor['errors']} |")
    cold, idle = figures(raw["visits_cold"]), figures(raw.get("visits_idle", []))
    behind = (f"\n\nThe app's first heatmap comes "
              f"{_after_or_before(idle['first_heatmap'] - floor['first_heatmap'])} the trivial "
              f"app's on a new server once warmed up, and "
              f"{_after_or_before(cold['first_heatmap'] - floor['first_heatmap'])} it on a server "
              f"visited as soon as it answers (medians, in the same run); the app itself has "
              f"replaced the snapshot there {_ms(cold['p50'] - floor['first_heatmap'])} ms "
              f"after the trivial app's first heatmap (settled, median)."
              if cold["n"] and idle["n"] and floor["n"] else "")
    floors = [f"| a trivial app, {n} chart{'s' * (n > 1)} redrawn a click | {f['n']} | "
              f"{_ms(f['p50'])} | {_ms(f['p95'])} | {f['errors']} |"
              for n, f in ((n, figures(c)) for n, c in raw.get("floor", {}).items())]
    floor_table = ("\n\nThe floor, on the same machine right after: `benchmarks/floor_app.py`, a "
                   "button and N small heatmaps that every click redraws, timed the same way.\n\n"
                   "| Floor | n | p50 ms | p95 ms | errors |\n| --- | --- | --- | --- | --- |\n"
                   + "\n".join(floors)) if floors else ""
    nl = "\n"
    return f"""| Sentence | Action | n | p50 ms | p95 ms | max ms | errors |
| --- | --- | --- | --- | --- | --- | --- |
{nl.join(rows_wait)}{floor_table}

Median wait of a view change by the view chosen (ms): {"; ".join(by_view)}.

What a click costs (means, websocket bytes as medians):

| Sentence | Action | server CPU ms | Chromium CPU ms | page main thread ms (JS / \
layout + style / the rest) | WS KiB in / out | runs (of them fragment runs) | elements sent (by \
reference) | Plotly charts sent (KiB sent in full) | charts Plotly redrew, of those on the page |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
{nl.join(rows_cost)}

| First visit, from `page.goto` | n | first heatmap ms (median) | first heatmap ms (max) | \
settled p50 ms | settled p95 ms | server CPU ms | Chromium CPU ms | WS KiB in | charts | errors |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
{nl.join(visits)}{behind}"""


def default_model() -> str:
    """The model the app preselects: its folder name and size, from its card."""
    from model.backends.load import available_models, default_model, pretrained_root

    name = default_model(available_models())
    try:
        card = json.loads((pretrained_root() / name / "card.json").read_text("utf-8"))
        return f"pretrained/{name} ({card.get('parameters', '?'):,} parameters)"
    except (OSError, ValueError, TypeError):
        return str(name)


def driver_cpu(raw: dict) -> float | None:
    """Mean CPU seconds of Playwright's driver per measured click."""
    clicks = [c for done in raw["sentences"] for record in done.clicks.values() for c in record]
    return sum(c.cost.get("driver", 0.0) for c in clicks) / len(clicks) if clicks else None


def report(raw: dict, info: dict, args, others: set[str]) -> str:
    """RESULTS.md's section for one run (``others``: test runs, servers, trainings seen)."""
    nan = float("nan")
    seconds, machine_cpu = raw.get("seconds", nan), raw.get("machine_cpu", nan)
    other_cpu = max(machine_cpu - raw.get("our_cpu", nan), 0.0)
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    busy = "; ".join(f"`{p}`" for p in sorted(others)) if others else "none seen"
    software = (f"Python {info['python']}, torch {info['torch']}, Streamlit "
                f"{info['streamlit']}, Playwright {info['playwright']}, {info['chromium']}")
    sentences = "\n".join(f"- `{s.sentence}`: {s.source_tokens} source tokens, {s.steps} "
                          "decoding steps" for s in raw["sentences"])
    problems = raw["errors"] + [f"page error: {e}" for e in raw["page_errors"]]
    listed = ("\n\n" + "\n".join(f"- {p[:300]}" for p in problems[:10])
              + (f"\n- ... and {len(problems) - 10} more" if len(problems) > 10 else "")
              if problems else " none.")
    load_note = (" (above 1.0: the machine was, or had just been, busy; the figures may be "
                 "pessimistic)" if info["load_1min"] > 1.0 else "")
    return f"""{HEADING}

`python -m benchmarks.clicks --clicks {args.clicks} --cold {args.cold} --floor \
{' '.join(map(str, args.floor))}`, {when}, {seconds:.0f} s
for the clicks. One `streamlit run serve.py` (the app, its model loaded in the background as
the server starts, as README says to serve it) and one headless Chromium (one context, one
user) on the same machine, with the model the app preselects, {default_model()}. Sentences:

{sentences}

A click's wait runs from the click (the page's `pointerdown`) until the server has reported
the run finished and the page is idle with the new content drawn: the new step label, the
chart titles of the new step, layer, head or language, the cross-attention chart with one
row per step so far, the new view with its charts. Both ends are read from the page's clock,
polled every animation frame. "Next ▶" walks through the sentence in the Cross-attention
tab (the "First" click at the end is not counted); head and layer changes cycle through the
Cross-attention view's pickers at the last step; view changes go round the view picker; language
changes alternate English and 简体中文 in the Cross-attention view.

Costs: server CPU is utime + stime of the Streamlit process (10 ms clock ticks: read the
mean); Chromium CPU is all its processes (renderer, GPU, browser); the page's main thread
is Chrome's `TaskDuration` (of it JavaScript, `ScriptDuration`, which includes this
benchmark's polling; layout and style recalculation; the rest: painting, decoding the
heatmaps' images, garbage collection...); WS is the websocket's payload bytes; a run is a
whole-script run or a fragment run; elements are what the server sent for the run, some
only as a reference to one the browser has cached; "charts Plotly redrew" counts the charts
Plotly drew after the click (a new chart, or Plotly's `plotly_afterplot` event on one).

A first visit is timed from `page.goto`. "Cold" visits are the first page of a server just
started and of a browser just launched (nothing cached), {args.cold} times, each with a new
server and browser, visited as soon as the server answers and again once it has finished its
start-up work (its CPU idle for a second: `serve.py` warms the model up in the background);
"warm" visits are new pages of the first server once it has served one. The trivial app's
first visits are cold ones too. A visit during the warm-up first gets the default page's top
and first chart from a snapshot (`ui/first_page.py`): its first heatmap is the snapshot's,
and "settled" is when the app itself has replaced it.

{tables(raw)}

| Run | |
| --- | --- |
| Server RSS: start, after the first visit, after every view, after every lesson chapter \
(the end) | {raw['rss_start']:.0f} MiB, {raw.get('rss_loaded', float('nan')):.0f} MiB, \
{raw.get('rss_views', float('nan')):.0f} MiB, {raw['rss_end']:.0f} MiB |
| Errors (clicks that did not settle in {args.timeout:.0f} s, page errors) | {len(problems)} |
| Playwright's driver (node), CPU per click | {_ms(driver_cpu(raw))} ms |
| CPU used during the run: the whole machine; this benchmark, the server and the browser; \
the rest | {machine_cpu:.0f} s; {raw.get('our_cpu', nan):.0f} s; {other_cpu:.0f} s \
({other_cpu / seconds / (info['cores'] or 1):.0%} of the machine's {seconds:.0f} s) |
| Other test runs, servers or trainings during the run | {busy} |
| Other processes that used the most CPU during the run | \
{"; ".join(raw.get("top_others", [])) or "none above 1 s"} |

| Machine | |
| --- | --- |
| CPU | {info['cpu']} |
| Cores (`os.cpu_count()`) | {info['cores']} |
| RAM | {info['ram']} |
| Load average at the start (1, 5, 15 min) | {info['load']}{load_note} |
| Software | {software} |
| App version | git {info['commit']} |

Problems:{listed}

The browser runs on the same machine as the server and takes CPU from it (see the Chromium
CPU column), which a real user's computer would not.
"""
