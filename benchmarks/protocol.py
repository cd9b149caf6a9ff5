"""A classroom over Streamlit's own protocol: many sessions on one server, without browsers.

    python -m benchmarks.protocol                  # 10 and 30 sessions, prints the figures
    python -m benchmarks.protocol --sessions 30    # one classroom size
    python -m benchmarks.protocol --write          # also writes benchmarks/RESULTS.md

Thirty Chromium pages would take this machine's two cores from the server they measure, so
each student here is a websocket client that sends the messages the browser sends
(``streamlit.proto``: a ``BackMsg`` whose ``rerun_script`` carries the widget states, and the
fragment's id for a click inside the step-through fragment) and reads what the server sends
back (``ForwardMsg`` deltas until ``script_finished``). Each session opens the app, types its
own sentence, opens the Cross-attention view, then clicks "Next ▶" every ``--interval``
seconds (back to the first step with "First" at the end, not counted), the sessions' clicks
spread evenly over the interval.

A click's wait runs from sending it until the server's ``script_finished``: the server's
whole share of a click (queueing behind other sessions, the fragment run, sending the
deltas), not the browser's drawing (``benchmarks/clicks.py`` measures that). An error is a
click that does not finish within ``--timeout`` seconds, an exception or error box in what
the server sent, a lost connection, or a run that does not show the session's own step
("Step k of T") and, after typing, its own source tokens. Server CPU comes from
``/proc/<pid>/stat``; capacity is clicks per second per core of server CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import re
import sys
import time
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Common_pb2 import StringArray
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from benchmarks.classroom import source_tokens
from benchmarks.procs import cpu_seconds, descendants, rss_mib
from benchmarks.report import machine, percentile, publish
from testkit.harness import ROOT, streamlit_server

HEADING = "## Classroom over the protocol (benchmarks/protocol.py)"
STEP = re.compile(r"^Step (\d+) of (\d+)$")


@dataclass
class Student:
    """One session's sentence, click waits (s) and problems."""

    sentence: str
    waits: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)  # sent with the websocket
    upstream: str | None = None  # a proxy's X-Upstream on the websocket's handshake


class Client:
    """One browser session, spoken in Streamlit's protocol over the app's websocket.

    ``ids`` maps each widget's key to its id and the id of the fragment it was drawn in,
    as the server reported them; ``rerun`` sends widget states and reads the reply."""

    def __init__(self, ws):
        self.ws = ws
        self.ids: dict[str, tuple[str, str]] = {}

    async def rerun(self, states: list, fragment: str = "", timeout: float = 30.0
                    ) -> tuple[float, list[str], list[str]]:
        """Send one rerun with ``states`` (``WidgetState`` protos; ``fragment``: rerun only
        that fragment) and read until ``script_finished``.

        Returns:
            (seconds waited, the markdown texts drawn, the problems seen: exceptions and
            error boxes).

        Raises:
            TimeoutError: if the run does not finish within ``timeout`` seconds.
        """
        msg = BackMsg()
        msg.rerun_script.query_string = ""
        msg.rerun_script.page_script_hash = ""
        msg.rerun_script.fragment_id = fragment
        msg.rerun_script.widget_states.widgets.extend(states)
        start = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        texts, problems = [], []
        async with asyncio.timeout(timeout):
            while True:
                reply = ForwardMsg()
                reply.ParseFromString(await self.ws.recv())
                kind = reply.WhichOneof("type")
                if kind == "script_finished":
                    # A run the server stopped early for a newer one (the page's own first
                    # run, cut short by ours on a slow machine) is not the reply: read on.
                    if reply.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                        continue
                    if reply.script_finished == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                        problems.append("the script did not compile")
                    return time.perf_counter() - start, texts, problems
                if kind != "delta":
                    continue
                delta = reply.delta
                which = delta.WhichOneof("type")
                part = (delta.new_element if which == "new_element"
                        else delta.add_block if which == "add_block" else None)
                if part is None or part.WhichOneof("type") is None:
                    continue
                inner = getattr(part, part.WhichOneof("type"))
                key_id = getattr(inner, "id", "")
                if key_id:  # "$$ID-<hash>-<key>"
                    self.ids[key_id.rsplit("-", 1)[-1]] = (key_id, delta.fragment_id)
                if which == "new_element":
                    element = part.WhichOneof("type")
                    if element == "markdown":
                        texts.append(inner.body)
                    elif element == "exception":
                        problems.append(f"exception: {inner.message[:200]}")
                    elif element == "alert" and inner.format == inner.ERROR:
                        problems.append(f"error box: {inner.body[:200]}")

    def state(self, key: str, **value):
        """A ``WidgetState`` for the widget ``key`` (e.g. ``trigger_value=True``)."""
        return WidgetState(id=self.ids[key][0], **value)

    def fragment(self, key: str) -> str:
        """The id of the fragment widget ``key`` was drawn in ("" if none)."""
        return self.ids[key][1]


def step_of(texts: list[str]) -> tuple[int, int] | None:
    """(k, T) from the "Step k of T" label among the paragraphs of ``texts`` (Markdown
    bodies), or None."""
    for text in texts:
        for paragraph in text.split("\n\n"):
            found = STEP.match(paragraph.replace("*", "").strip())
            if found:
                return int(found[1]), int(found[2])
    return None


async def student(url: str, me: Student, clicks: int, *, interval: float, delay: float,
                  timeout: float, ready: asyncio.Barrier) -> None:
    """One session: open, type ``me.sentence``, open the Cross-attention view, wait at
    ``ready`` for the others, then click "Next ▶" ``clicks`` times, every ``interval``
    seconds after ``delay``. Problems are recorded in ``me.errors``; the session stops at
    the first one that breaks it (after passing ``ready`` in any case)."""
    waited = False

    async def all_ready() -> None:
        nonlocal waited
        if not waited:
            waited = True
            await ready.wait()

    ws_url = url.replace("http://", "ws://") + "/_stcore/stream"
    try:
        async with websockets.connect(ws_url, subprotocols=["streamlit"], max_size=None,
                                      open_timeout=timeout,
                                      additional_headers=me.headers) as ws:
            me.upstream = ws.response.headers.get("X-Upstream")
            client = Client(ws)
            _, _, problems = await client.rerun([], timeout=timeout)  # the first visit
            if problems or "sentence" not in client.ids:
                me.errors.append(f"first visit: {problems or 'no sentence box'}; "
                                 f"widgets drawn: {sorted(client.ids)}")
                return
            _, texts, problems = await client.rerun(
                [client.state("sentence", string_value=me.sentence)], timeout=timeout)
            own = source_tokens(me.sentence)
            caption = next((t for t in texts if t.startswith("Source tokens:")), "")
            if problems or not caption or any(f"`{tok}`" not in caption for tok in own):
                me.errors.append(f"after typing: {problems or caption[:200]}")
                return
            _, texts, problems = await client.rerun(
                [client.state("view", string_array_value=StringArray(data=["Cross-attention"]))],
                fragment=client.fragment("view"), timeout=timeout)
            k, total = step_of(texts) or (0, 0)
            await all_ready()
            await asyncio.sleep(delay)
            next_tick = time.monotonic()
            for _ in range(clicks):
                next_tick += interval
                button = "next_step" if k < total else "first_step"
                wait, texts, problems = await client.rerun(
                    [client.state(button, trigger_value=True)],
                    fragment=client.fragment(button), timeout=timeout)
                want = k + 1 if button == "next_step" else 1
                k, total = step_of(texts) or (0, total)
                if button == "next_step":
                    me.waits.append(wait)
                if problems or k != want:
                    me.errors.append(f"{button}: step {k} (wanted {want}); {problems}")
                await asyncio.sleep(max(next_tick - time.monotonic(), 0.0))
    except (TimeoutError, OSError, KeyError, websockets.ConnectionClosed) as exc:
        me.errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
    finally:
        await all_ready()


async def classroom(url: str, sentences: list[str], clicks: int, *, interval: float,
                    timeout: float, cpu=lambda: 0.0, students: list[Student] | None = None
                    ) -> tuple[list[Student], float, float]:
    """Every student at once (``students``, or one per sentence), their clicks spread
    evenly over ``interval``.

    Returns:
        (the students, the seconds and the ``cpu()`` seconds from when every session had
        typed its sentence and opened its view until the last click).
    """
    students = students or [Student(s) for s in sentences]
    n = len(students)
    ready = asyncio.Barrier(n + 1)
    runs = [asyncio.create_task(student(url, me, clicks, interval=interval,
                                        delay=interval * i / n, timeout=timeout, ready=ready))
            for i, me in enumerate(students)]
    await ready.wait()
    used, start = cpu(), time.perf_counter()
    await asyncio.gather(*runs)
    return students, time.perf_counter() - start, cpu() - used


def measure(n: int, clicks: int, interval: float, timeout: float) -> dict:
    """One classroom of ``n`` sessions on a fresh server; its figures."""
    from model.tasks.en_zh import EXAMPLES

    sentences = [EXAMPLES[i % len(EXAMPLES)] for i in range(n)]
    with streamlit_server() as server:
        pids = descendants(server.pid) | {server.pid}
        asyncio.run(classroom(server.url, sentences[:1], 1, interval=interval,
                              timeout=timeout))  # warm up
        students, seconds, cpu = asyncio.run(classroom(
            server.url, sentences, clicks, interval=interval, timeout=timeout,
            cpu=lambda: cpu_seconds(pids)))
        rss = rss_mib(pids)
    waits = [w for s in students for w in s.waits]
    errors = [f"{s.sentence!r}: {e}" for s in students for e in s.errors]
    return dict(n=n, clicks=len(waits), errors=errors, seconds=seconds, cpu=cpu, rss=rss,
                p50=percentile(waits, 50) if waits else None,
                p95=percentile(waits, 95) if waits else None,
                max=max(waits) if waits else None)


def _ms(x: float | None) -> str:
    return "–" if x is None else f"{x * 1000:.0f}"


def report(rows: list[dict], args, info: dict) -> str:
    """The RESULTS.md section."""
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        HEADING, "",
        f"`python -m benchmarks.protocol --clicks {args.clicks} --interval {args.interval}`, "
        f"{when}. One `streamlit run app.py` with the model the app preselects; each session "
        "a websocket client speaking Streamlit's protocol (no browser): it types its own "
        "sentence, opens the Cross-attention view and clicks \"Next ▶\" every "
        f"{args.interval:g} s. A wait is from sending the click to the server's "
        "`script_finished` (the server's share; the browser's drawing is in \"Clicks in "
        "Chromium\"). Server CPU is counted from when every session has typed its "
        "sentence and opened its tab (the clicks' share, \"First\" clicks included); "
        "capacity is 1 / that CPU per click: clicks per second per core.", "",
        "| Sessions | clicks | p50 ms | p95 ms | max ms | errors | server CPU ms / click "
        "| capacity (clicks/s/core) | server RSS MiB |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        per_click = r["cpu"] / max(r["clicks"], 1)
        lines.append(f"| {r['n']} | {r['clicks']} | {_ms(r['p50'])} | {_ms(r['p95'])} | "
                     f"{_ms(r['max'])} | {len(r['errors'])} | {per_click * 1000:.0f} | "
                     f"{1 / per_click if per_click else 0:.0f} | {r['rss']:.0f} |")
    problems = [e for r in rows for e in r["errors"]]
    lines += ["", f"Machine: {info['cpu']}, {info['cores']} cores; Python {info['python']}, "
              f"torch {info['torch']}, Streamlit {info['streamlit']}; git {info['commit']}.",
              "",
              "Problems: " + ("none." if not problems else "\n- " + "\n- ".join(problems[:20]))]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Measure each classroom size, print the figures and (with --write) record them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[10, 30])
    parser.add_argument("--clicks", type=int, default=10, help="Next clicks per session")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between clicks")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per click")
    parser.add_argument("--write", action="store_true", help="write benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    rows = [measure(n, args.clicks, args.interval, args.timeout) for n in args.sessions]
    publish(report(rows, args, machine()), HEADING, args.write)
    return 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
