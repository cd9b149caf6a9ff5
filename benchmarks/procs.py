"""CPU time and memory of processes, read from ``/proc``: a benchmark's own processes (the
server, the browser, Playwright's driver) and any other heavy process running meanwhile."""

from __future__ import annotations

import os
import re
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (field 3 is item 0), or
    None if the process is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def _comm(pid: int) -> str:
    """A process's command name (``/proc/<pid>/comm``), "" if it is gone."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def children() -> dict[int, list[int]]:
    """Every live process's children: parent pid -> child pids."""
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields:
                tree.setdefault(int(fields[1]), []).append(int(entry.name))
    return tree


def descendants(root: int, tree: dict[int, list[int]] | None = None) -> set[int]:
    """``root`` and every process below it (children, grandchildren...), alive now
    (``tree``: a ``children()`` map to reuse)."""
    tree = children() if tree is None else tree
    found, todo = {root}, [root]
    while todo:
        for child in tree.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def cpu_seconds(pids: set[int]) -> float:
    """CPU seconds (user + system: ``/proc/<pid>/stat`` fields 14 and 15) used so far by
    ``pids``, and by the finished children each of them has waited for (fields 16, 17:
    Chromium's closed renderers, a reaped Playwright driver)."""
    ticks = 0
    for pid in pids:
        fields = _stat(pid)
        if fields:
            ticks += sum(int(x) for x in fields[11:15])
    return ticks / CLK_TCK


def rss_mib(pids: set[int]) -> float:
    """Resident memory of ``pids`` together (``VmRSS`` of ``/proc/<pid>/status``), MiB."""
    kib = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    kib += int(line.split()[1])
        except OSError:
            pass
    return kib / 1024


def machine_busy_seconds() -> float:
    """CPU seconds all processes of the machine have used (``/proc/stat``, every core)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / CLK_TCK


def process_cpu() -> dict[int, tuple[str, float]]:
    """Every live process: pid -> (its command line, shortened; CPU seconds so far)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            pid = int(entry.name)
            fields = _stat(pid)
            try:
                args = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if fields:
                line = " ".join(a.decode(errors="replace") for a in args if a) or _comm(pid)
                found[pid] = (line[:70], (int(fields[11]) + int(fields[12])) / CLK_TCK)
    return found


def top_others(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]],
               ours: set[int], n: int = 3) -> list[str]:
    """The ``n`` processes outside ``ours`` that used the most CPU between two
    ``process_cpu`` readings (at least a second each), as "`command` (seconds)"."""
    used = sorted(((cpu - before.get(pid, ("", 0.0))[1], line)
                   for pid, (line, cpu) in after.items() if pid not in ours), reverse=True)
    return [f"`{line}` ({cpu:.0f} s)" for cpu, line in used[:n] if cpu >= 1.0]


class Meters:
    """CPU clocks of the server (its process tree) and of the browser: Chromium's processes
    and Playwright's driver (every other process below this one, told apart by name)."""

    def __init__(self, server_pid: int):
        self.server_pid = server_pid

    def read(self) -> dict[str, float]:
        """CPU seconds used so far: ``server``, ``chromium``, ``driver``."""
        tree = children()
        server = descendants(self.server_pid, tree)
        browser = descendants(os.getpid(), tree) - server - {os.getpid()}
        driver = {pid for pid in browser if _comm(pid).startswith("node")}
        return {"server": cpu_seconds(server),
                "chromium": cpu_seconds(browser - driver), "driver": cpu_seconds(driver)}

    def ours(self) -> float:
        """CPU seconds of this process and everything below it (server, browser) so far."""
        return cpu_seconds(descendants(os.getpid()))

    def server_rss(self) -> float:
        """The server's resident memory now, MiB."""
        return rss_mib(descendants(self.server_pid))


def busy_processes(ignore: set[int]) -> set[str]:
    """Other heavy processes running now (a test run, a Streamlit server, a training), as
    "pid command" strings; ``ignore``: our own pids."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in ignore:
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        line = " ".join(a.decode(errors="replace") for a in args if a)
        if re.search(r"-m (pytest|model\.train(ing\.train)?)\b|streamlit run", line):
            found.add(f"{entry.name} {line[:80]}")
    return found


class Watcher:
    """Samples ``busy_processes`` in a thread while the benchmark runs."""

    def __init__(self, ignore: set[int]):
        import threading

        self.ignore, self.seen, self._stop = ignore, set(), threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.seen |= busy_processes(self.ignore)
            self._stop.wait(2)

    def __enter__(self) -> Watcher:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
