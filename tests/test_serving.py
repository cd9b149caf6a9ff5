"""Serving a class: many sessions over Streamlit's own protocol on one app process, and two
processes behind nginx with sticky sessions (benchmarks/protocol.py, benchmarks/proxy.py).

These run the real app and the real nginx; they check what must hold however fast the
machine is (every click answered with the session's own next step, no errors, sessions kept
on their process), never timings."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from benchmarks.protocol import Student, classroom
from benchmarks.proxy import INSTALL_HINT, NGINX, first_visit, nginx
from model.tasks.en_zh import EXAMPLES
from testkit.harness import free_port, streamlit_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server():
    """One ``serve.py`` server for the module's tests (each cold start costs seconds)."""
    with streamlit_server() as running:
        yield running


def test_sessions_over_the_protocol_each_walk_their_own_sentence(server):
    sentences = list(EXAMPLES[:4])
    students, _, _ = asyncio.run(classroom(server.url, sentences, 3, interval=0.2, timeout=60.0))
    log = server.output(None)
    assert "Traceback" not in log, log[-3000:]  # no error page, no failed warm-up
    for me in students:
        assert me.errors == [], (me.sentence, me.errors)  # own source tokens, own steps
        assert len(me.waits) >= 2  # "Next" answered (a "First" at the end is not a wait)


def test_a_broken_session_is_reported_not_hidden(server):
    # a sentence the model cannot translate: no step-through, so no "Next" to click
    students, _, _ = asyncio.run(classroom(server.url, [""], 2, interval=0.2, timeout=60.0))
    assert students[0].errors and not students[0].waits


def test_two_processes_behind_nginx_keep_each_session_on_its_process(server):
    assert Path(NGINX).exists() or shutil.which("nginx"), INSTALL_HINT
    # The second process is visited while it is still starting (its port bound, serve.py's
    # warm-up running): those visits wait for it and get the app, never an error page.
    with streamlit_server(answering=False) as starting:
        backends = [server.url.removeprefix("http://"), starting.url.removeprefix("http://")]
        with nginx(free_port(), backends) as url:
            visits = [first_visit(url) for _ in range(12)]
            assert {page for _, page in visits} == set(backends)  # both processes serve
            # Four first visits at once, one of them at least on each process.
            chosen = [next(v for v in visits if v[1] == b) for b in backends]
            chosen += [v for v in visits if v not in chosen][:2]
            students = [Student(EXAMPLES[i], headers={"Cookie": cookie})
                        for i, (cookie, _) in enumerate(chosen)]
            asyncio.run(classroom(url, [], 2, interval=0.2, timeout=60.0, students=students))
            for me, (_, page) in zip(students, chosen, strict=True):
                assert me.errors == [], me.errors
                assert me.upstream == page  # the websocket reached the page's process
            # The check can fail: another session's cookie leads to the other process.
            other = next(c for c, page in visits if page != visits[0][1])
            moved = Student(EXAMPLES[0], headers={"Cookie": other})
            asyncio.run(classroom(url, [], 1, interval=0.2, timeout=60.0, students=[moved]))
            assert moved.upstream != visits[0][1]
        log = starting.output(None)
    assert not any(word in log for word in ("Traceback", "WARNING", "Error")), log[-3000:]


def test_readme_gives_the_configuration_the_benchmark_runs(tmp_path):
    from benchmarks.proxy import nginx_config
    from testkit.harness import ROOT

    readme = (ROOT / "docs" / "serving.md").read_text(encoding="utf-8")
    block = readme.split("```nginx", 1)[1].split("```", 1)[0]
    ours = " ".join(nginx_config(8080, ["127.0.0.1:8501", "127.0.0.1:8502"], tmp_path).split())
    for line in block.splitlines():
        directive = line.split("#", 1)[0].strip()
        if directive and not directive.startswith(("listen", "}", "server {")):
            assert " ".join(directive.split()) in ours, directive


def test_app_py_alone_still_serves_the_app():
    """``streamlit run app.py`` (no warm-up) serves the same app as serve.py."""
    with streamlit_server(script="app.py") as server:
        students, _, _ = asyncio.run(classroom(server.url, [EXAMPLES[0]], 2, interval=0.2,
                                               timeout=60.0))
    assert students[0].errors == [] and students[0].waits
