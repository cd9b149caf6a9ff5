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
    server_start: float | None = None  # cold visits: server launched -> ``page.goto`` (s)


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


def _click_rows(done: SentenceRun) -> tuple[list[str], list[str], str]:
    """One sentence's rows of the waits table and of the costs table, and its line of
    view-change medians by view."""
    name = f"{done.source_tokens} tokens, {done.steps} steps"
    rows_wait, rows_cost = [], []
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
    by_view = f"{name}: " + ", ".join(f"{view} {_ms(percentile(v, 50))}"
                                      for view, v in views.items())
    return rows_wait, rows_cost, by_view


def click_tables(raw: dict) -> str:
    """The markdown tables of the clicks: waits, the floor's, then costs, per sentence and
    action; "" when no sentence was measured."""
    rows_wait, rows_cost, by_view = [], [], []
    for done in raw["sentences"]:
        wait, cost, views = _click_rows(done)
        rows_wait += wait
        rows_cost += cost
        by_view.append(views)
    if not rows_wait:
        return ""
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

"""


def _from_launch(click: Click) -> float | None:
    """Seconds from launching the server to the first heatmap; None when not measured."""
    if click.server_start is None or click.first_heatmap is None:
        return None
    return click.server_start + click.first_heatmap


def cold_start_table(raw: dict) -> str:
    """Each cold start's pair (the app, then the trivial app): server launch to
    ``page.goto``, ``page.goto`` to the first heatmap, their sum, and how far the app's
    first heatmap comes after the trivial app's; then the medians."""
    rows, behind = [], []
    for i, (app, floor) in enumerate(zip(raw["visits_cold"], raw["visits_floor"],
                                         strict=False)):
        a, f = _from_launch(app), _from_launch(floor)
        if a is not None and f is not None:
            behind.append(a - f)
        rows.append(f"| {i + 1} | {_ms(app.server_start)} + {_ms(app.first_heatmap)} = "
                    f"{_ms(a)} | {_ms(floor.server_start)} + {_ms(floor.first_heatmap)} = "
                    f"{_ms(f)} | {_ms(None if a is None or f is None else a - f)} |")
    if not rows:
        return ""
    median = (f"\n\nThe app's first heatmap comes {_after_or_before(percentile(behind, 50))} "
              f"the trivial app's (median of {len(behind)}, each pair in the same run; all: "
              f"{', '.join(_ms(b) for b in behind)} ms)." if behind else "")
    return ("| Cold start | the app (`serve.py`): launch to `page.goto` + to the first heatmap "
            "= ms | the trivial app (`benchmarks/floor_app.py`, 2 heatmaps): the same, ms | "
            "the app after the trivial app, ms |\n| --- | --- | --- | --- |\n"
            + "\n".join(rows) + median)


def visit_table(raw: dict) -> str:
    """First visits from ``page.goto``: the clicks' server's first, cold ones, warm ones
    and the trivial app's."""
    visits = []
    for label, record in (("the clicks' server, its first visit", raw.get("visits_first", [])),
                          ("cold: a new server, a new browser", raw["visits_cold"]),
                          ("warm server, a new page", raw.get("visits_warm", []))):
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
    return ("| First visit, from `page.goto` | n | first heatmap ms (median) | first heatmap "
            "ms (max) | settled p50 ms | settled p95 ms | server CPU ms | Chromium CPU ms | "
            "WS KiB in | charts | errors |\n"
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
            + "\n".join(visits) + "\n\n" + cold_start_table(raw))


def tables(raw: dict) -> str:
    """The markdown tables: the clicks' (``click_tables``), then the first visits'."""
    return click_tables(raw) + visit_table(raw)


def default_model(name: str | None = None) -> str:
    """Model ``name`` (default: the one the app preselects): its folder name and size, from
    its card."""
    from model.backends.load import available_models, default_model, pretrained_root

    name = name or default_model(available_models())
    try:
        card = json.loads((pretrained_root() / name / "card.json").read_text("utf-8"))
        return f"pretrained/{name} ({card.get('parameters', '?'):,} parameters)"
    except (OSError, ValueError, TypeError):
        return str(name)


def driver_cpu(raw: dict) -> float | None:
    """Mean CPU seconds of Playwright's driver per measured click."""
    clicks = [c for done in raw["sentences"] for record in done.clicks.values() for c in record]
    return sum(c.cost.get("driver", 0.0) for c in clicks) / len(clicks) if clicks else None


def _method(raw: dict, args) -> str:
    """What was measured and how (the section's opening paragraphs)."""
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    command = (f"`python -m benchmarks.clicks --only-visits --cold {args.cold}`, {when}."
               if args.only_visits else
               f"`python -m benchmarks.clicks --clicks {args.clicks} --cold {args.cold} "
               f"--floor {' '.join(map(str, args.floor))}"
               f"{f' --model {args.model}' if getattr(args, 'model', None) else ''}`, {when}, "
               f"{raw.get('seconds', float('nan')):.0f} s for the clicks.")
    sentences = "\n".join(f"- `{s.sentence}`: {s.source_tokens} source tokens, {s.steps} "
                          "decoding steps" for s in raw["sentences"])
    chosen = getattr(args, "model", None)
    model = (f"{default_model(chosen)}, opened by its link (`?model=`), its clicks in the view "
             "of the written tokens reading the prompt (where a decoder-only model's "
             "cross-attention went) where the rest says Cross-attention" if chosen else
             f"the model the app preselects, {default_model()}")
    return f"""{command} One `streamlit run serve.py` (the app, which loads its model and
decodes the default sentence before it answers, as README says to serve it) and one headless
Chromium (one context, one user) on the same machine, with {model}. Sentences:

{sentences or "- none (first visits only)"}

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

A first visit is timed from `page.goto`, and a cold one also from the server's launch.
"Cold" visits are the first page of a server just started and of a browser just launched
(nothing cached), {args.cold} times, each with a new server and browser, visited as soon as
the server answers (`serve.py` answers once it has warmed up; the port is bound before, so
a browser that came earlier would wait); each is followed by the same for the trivial app.
"Warm" visits are new pages of the clicks' server once it has served one."""


def _run_table(raw: dict, info: dict, args) -> str:
    """The run's memory, errors and CPU table ("" for a run of first visits only)."""
    if "rss_start" not in raw:
        return ""
    nan = float("nan")
    seconds, machine_cpu = raw.get("seconds", nan), raw.get("machine_cpu", nan)
    other_cpu = max(machine_cpu - raw.get("our_cpu", nan), 0.0)
    others = raw.get("others") or set()
    busy = "; ".join(f"`{p}`" for p in sorted(others)) if others else "none seen"
    return f"""| Run | |
| --- | --- |
| Server RSS: start, after the first visit, after every view, after every lesson chapter \
(the end) | {raw['rss_start']:.0f} MiB, {raw.get('rss_loaded', nan):.0f} MiB, \
{raw.get('rss_views', nan):.0f} MiB, {raw['rss_end']:.0f} MiB |
| Errors (clicks that did not settle in {args.timeout:.0f} s, page errors) | \
{len(raw["errors"]) + len(raw["page_errors"])} |
| Playwright's driver (node), CPU per click | {_ms(driver_cpu(raw))} ms |
| CPU used during the run: the whole machine; this benchmark, the server and the browser; \
the rest | {machine_cpu:.0f} s; {raw.get('our_cpu', nan):.0f} s; {other_cpu:.0f} s \
({other_cpu / seconds / (info['cores'] or 1):.0%} of the machine's {seconds:.0f} s) |
| Other test runs, servers or trainings during the run | {busy} |
| Other processes that used the most CPU during the run | \
{"; ".join(raw.get("top_others", [])) or "none above 1 s"} |

"""


def report(raw: dict, info: dict, args) -> str:
    """RESULTS.md's section for one run (``raw["others"]``: test runs, servers, trainings
    seen during the clicks)."""
    software = (f"Python {info['python']}, torch {info['torch']}, Streamlit "
                f"{info['streamlit']}, Playwright {info['playwright']}, {info['chromium']}")
    problems = raw["errors"] + [f"page error: {e}" for e in raw["page_errors"]]
    listed = ("\n\n" + "\n".join(f"- {p[:300]}" for p in problems[:10])
              + (f"\n- ... and {len(problems) - 10} more" if len(problems) > 10 else "")
              if problems else " none.")
    load_note = (" (above 1.0: the machine was, or had just been, busy; the figures may be "
                 "pessimistic)" if info["load_1min"] > 1.0 else "")
    return f"""{HEADING}

{_method(raw, args)}

{tables(raw)}

{_run_table(raw, info, args)}| Machine | |
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
