"""ui.cache.tidy_heap: after a run, the pages malloc holds free go back to the operating
system (glibc's malloc_trim), measured as the resident memory of a fresh process."""

from __future__ import annotations

import json

from testkit.harness import fresh_python

CODE = """
import json
import ui.cache as c

def rss_mib():
    with open("/proc/self/status") as f:
        return next(int(x.split()[1]) for x in f if x.startswith("VmRSS")) / 1024

assert c._LIBC is not None, "glibc expected"
blocks = [bytearray(2000) for _ in range(40_000)]  # 80 MB in malloc's chunks (not pymalloc)
kept = blocks[::64] + [blocks[-1]]  # a few stay alive, among them the heap's top
del blocks
before = rss_mib()
c.tidy_heap()
print(json.dumps([before, rss_mib()]))
"""


def test_tidy_heap_hands_the_pages_freed_in_the_heap_back():
    out = fresh_python(CODE)
    before, after = json.loads(out.splitlines()[-1])
    assert before - after > 40, (before, after)  # most of the 80 MB freed
