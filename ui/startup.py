"""What ``serve.py``'s warm-up and a first visit share while the server starts: one lock
around the app's imports, and the events that order the warm-up after a first visit's
first page (``ui.first_page``).

``IMPORTS``: ``serve.py`` imports the app's modules in a background thread while the server
already answers, so a visitor's first script run (``app.py``) can import the same modules at
the same time. Python's per-module import locks do not make that safe for our packages:
``model``'s ``__init__`` imports its submodules, and a thread that imports a submodule directly
(``from model.backends.load import ...``) does not wait for a parent package another thread
is still initialising. Two threads then wait on each other (``_DeadlockError``) or one sees a
partially initialised module (``ImportError``), and the visitor gets an error page
(tests/test_serving.py caught it). Both take ``IMPORTS`` around their imports, so one
imports while the other waits; after that the lock is free at once. Both end their imports
with ``ui.charts.load_plotly`` (plotly's shared validators, made before any figure is built).

The events (``threading.Event``, set once per process, never cleared):

- ``WARMING``: ``serve.py``'s warm-up thread exists (never set under ``streamlit run app.py``
  or ``AppTest``, where nothing changes);
- ``FIRST_VISIT``: a first visit has begun and drawn what it draws before its imports (the
  snapshot page, or nothing: a link);
- ``WARM``: the warm-up has finished, however it ended.

It also sets the process's heap policy before the server's threads allocate much:
``serve.py`` and ``app.py`` import it first. Glibc gives busy threads malloc arenas of their own
(up to 8 per core) and memory freed in one stays with it; Streamlit runs each script run in a
thread of its own, beside the warm-up's. ``mallopt(M_ARENA_MAX, 2)`` keeps them to two
(``benchmarks/two_directions.py``: 467-468 MiB with both models open, against 470-479 when
``ui.cache`` set it after the imports). ``LIBC`` is None off glibc (musl, macOS).

Nothing here imports more than the standard library: ``app.py`` reads it before its own
imports.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading


def _glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc (it has ``malloc_trim``), else None (musl, macOS)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None


LIBC = _glibc()
M_ARENA_MAX = -8  # glibc's mallopt parameter: how many malloc arenas threads may spread over
if LIBC is not None:
    LIBC.mallopt(M_ARENA_MAX, 2)

IMPORTS = threading.Lock()
WARMING = threading.Event()
FIRST_VISIT = threading.Event()
WARM = threading.Event()

FIRST_VISIT_WAIT_S = 3.0  # serve.py's warm-up waits this long for a first visit

PAGE_CONFIG = {"page_icon": "🔎", "layout": "wide"}  # st.set_page_config's, with the title
