"""More students than one process holds: two app processes behind nginx, sessions sticky.

    python -m benchmarks.proxy                  # 30 sessions over two processes
    python -m benchmarks.proxy --write          # also writes benchmarks/RESULTS.md

Starts two ``streamlit run app.py`` processes and Debian's nginx (``apt-get install
nginx-light``) in front of them with the configuration docs/serving.md gives
(:func:`nginx_config`): the websocket upgrade, long read timeouts, and sticky sessions by a
cookie that nginx sets on a visitor's first request (``hash $route consistent``), so a
session's page, its websocket and any reconnection reach the same process, which holds the
session. Each student (``benchmarks.protocol``) first loads the page through nginx (gets
its cookie and the process that served it, from the ``X-Upstream`` header nginx adds), then
speaks Streamlit's protocol over the websocket with that cookie. Reported: sessions per
process, sessions whose websocket reached another process than their page (must be 0),
errors (must be 0), and the click waits.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from contextlib import ExitStack, contextmanager
from pathlib import Path

from benchmarks.protocol import Student, classroom
from benchmarks.report import percentile, publish
from testkit.harness import free_port, streamlit_server

HEADING = "## Two processes behind nginx (benchmarks/proxy.py)"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
INSTALL_HINT = "nginx is needed: run `apt-get install nginx-light` (as root), then retry."


def nginx_config(port: int, backends: list[str], folder: Path) -> str:
    """An nginx configuration serving ``backends`` (``host:port``) on ``port``: a visitor
    without the ``st_route`` cookie gets one (a fresh ``$request_id``), and ``hash $route
    consistent`` sends every request with the same cookie to the same backend; websockets
    are upgraded and may stay open a day. ``folder`` holds nginx's own files."""
    servers = "\n".join(f"        server {b};" for b in backends)
    return f"""
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
daemon off;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    map $http_upgrade $connection_upgrade {{ default upgrade; "" close; }}
    map $cookie_st_route $route {{ "" $request_id; default $cookie_st_route; }}
    upstream streamlit {{
        hash $route consistent;
{servers}
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://streamlit;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $host;
            proxy_read_timeout 86400s;
            proxy_send_timeout 86400s;
            add_header Set-Cookie "st_route=$route; Path=/; HttpOnly; SameSite=Lax" always;
            add_header X-Upstream $upstream_addr always;
        }}
    }}
}}
"""


@contextmanager
def nginx(port: int, backends: list[str]):
    """Run nginx with :func:`nginx_config` until the block ends; RuntimeError with its log
    if it does not answer within 10 s."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "nginx.conf").write_text(nginx_config(port, backends, folder))
        proc = subprocess.Popen([NGINX, "-c", str(folder / "nginx.conf"), "-p", tmp],
                                stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2)
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        log = (folder / "error.log").read_text() if (folder / "error.log"
                                                                        ).exists() else ""
                        raise RuntimeError(f"nginx did not start: {log[-2000:]}") from None
                    time.sleep(0.2)
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def first_visit(url: str) -> tuple[str, str]:
    """Load the page through the proxy: (the cookie it set, the backend that served it)."""
    with urllib.request.urlopen(url + "/", timeout=120) as reply:
        cookie = reply.headers["Set-Cookie"].split(";", 1)[0]
        return cookie, reply.headers["X-Upstream"]


def measure(sessions: int, clicks: int, interval: float, timeout: float) -> dict:
    """Two app processes, nginx in front, ``sessions`` students through it."""
    from model.tasks.en_zh import EXAMPLES

    if not Path(NGINX).exists():
        raise SystemExit(INSTALL_HINT)
    with ExitStack() as stack:
        servers = [stack.enter_context(streamlit_server()) for _ in range(2)]
        backends = [s.url.removeprefix("http://") for s in servers]
        url = stack.enter_context(nginx(free_port(), backends))
        students, pages = [], []
        for i in range(sessions):
            cookie, page = first_visit(url)
            students.append(Student(EXAMPLES[i % len(EXAMPLES)], headers={"Cookie": cookie}))
            pages.append(page)
        asyncio.run(classroom(url, [], 1, interval=interval, timeout=timeout,
                              students=[Student(s.sentence, headers=s.headers)
                                        for s in students[:2]]))  # warm both up
        asyncio.run(classroom(url, [], clicks, interval=interval, timeout=timeout,
                              students=students))
    waits = [w for s in students for w in s.waits]
    moved = [f"{s.sentence!r}: page from {p}, websocket to {s.upstream}"
             for s, p in zip(students, pages, strict=True) if s.upstream != p]
    errors = [f"{s.sentence!r}: {e}" for s in students for e in s.errors]
    return dict(sessions=sessions, per_process=Counter(pages), moved=moved, errors=errors,
                clicks=len(waits), p50=percentile(waits, 50) if waits else None,
                p95=percentile(waits, 95) if waits else None)


def report(r: dict, args) -> str:
    """The RESULTS.md section."""
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    ms = {k: "–" if r[k] is None else f"{r[k] * 1000:.0f}" for k in ("p50", "p95")}
    split = ", ".join(f"{n}" for _, n in sorted(r["per_process"].items()))
    problems = r["moved"] + r["errors"]
    return "\n".join([
        HEADING, "",
        f"`python -m benchmarks.proxy --sessions {args.sessions} --clicks {args.clicks}`, "
        f"{when}. Two `streamlit run app.py` processes behind Debian's nginx, configured as "
        "docs/serving.md's \"Serving a class\" says (sticky sessions by a cookie nginx sets, "
        "websocket upgrade); every student loads the page through nginx, then clicks "
        f"\"Next ▶\" every {args.interval:g} s over the websocket with its cookie "
        "(benchmarks/protocol.py).", "",
        "| Sessions | per process | websocket on another process than the page | clicks | "
        "p50 ms | p95 ms | errors |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        f"| {r['sessions']} | {split} | {len(r['moved'])} | {r['clicks']} | {ms['p50']} | "
        f"{ms['p95']} | {len(r['errors'])} |", "",
        "Problems: " + ("none." if not problems else "\n- " + "\n- ".join(problems[:20])),
    ]) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Measure, print and (with --write) record."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--clicks", type=int, default=5, help="Next clicks per session")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between clicks")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per click")
    parser.add_argument("--write", action="store_true", help="write benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    publish(report(measure(args.sessions, args.clicks, args.interval, args.timeout), args),
            HEADING, args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
