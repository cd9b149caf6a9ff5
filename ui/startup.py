"""One lock around the app's imports, for ``serve.py``'s warm-up and the first visit.

``serve.py`` imports the app's modules in a background thread while the server already
answers, so a visitor's first script run (``app.py``) can import the same modules at the same
time. Python's per-module import locks do not make that safe for our packages: ``model``'s
``__init__`` imports its submodules, and a thread that imports a submodule directly
(``from model.backends.load import ...``) does not wait for a parent package another thread
is still initialising. Two threads then wait on each other (``_DeadlockError``) or one sees a
partially initialised module (``ImportError``), and the visitor gets an error page
(tests/test_serving.py caught it). Both take ``IMPORTS`` around their imports, so one
imports while the other waits; after that the lock is free at once.
"""

from __future__ import annotations

import threading

IMPORTS = threading.Lock()
