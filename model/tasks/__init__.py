"""Synthetic data tasks, one module per task. Each module provides ``build_splits(seed)``,
``source_words()``, ``target_tokens()``, ``GENERATOR_SETTINGS`` and ``EXAMPLES``."""

from __future__ import annotations

import importlib
from types import ModuleType

TASKS = {"en-zh": "model.tasks.en_zh"}


def get_task(name: str) -> ModuleType:
    """The module of task ``name``.

    Raises:
        ValueError: an unknown task name.
    """
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; known: {sorted(TASKS)}")
    return importlib.import_module(TASKS[name])
