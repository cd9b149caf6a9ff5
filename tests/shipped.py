"""The shipped models, their decodings and the grammar's splits for the tests, each loaded or
computed once per test session (``model_of``, ``trace_of``, ``grammar_splits``; the session
fixtures of ``conftest.py`` use them).

Loading a shipped model reads and checks every weight (the everyday models: about 45 MB,
up to a second each), and many tests read the same model or decode the same sentence. The
objects are shared, as the app shares one model between its sessions: no test may change
them (no training, pruning, hooks left on, weights or ``config`` edited, arrays of a trace
edited in place). A test that changes a model changes a ``copy.deepcopy`` of it or loads its
own with ``load_pretrained``; a test of loading itself calls ``load_pretrained``.
"""

from __future__ import annotations

import functools

from model import DecodeTrace, Translator, load_pretrained
from model.backends.load import pretrained_root
from model.tasks import en_zh
from model.tasks.en_zh import Splits


def model_of(name: str) -> Translator:
    """The shipped model ``name`` (a folder name of ``pretrained_root()``, as
    ``load_pretrained`` takes it), loaded once per test session and folder.

    Raises:
        CheckpointError: as ``load_pretrained`` (not cached: the next call tries again).
    """
    return _load(str(pretrained_root()), name)


@functools.cache
def _load(root: str, name: str) -> Translator:
    """``load_pretrained(name)``, cached by the pretrained root it was read from."""
    return load_pretrained(name)


def trace_of(name: str, sentence: str, **generate) -> DecodeTrace:
    """``model_of(name).generate(sentence, **generate)``, decoded once per test session,
    model and arguments (``generate``'s keyword arguments must be hashable: ints, strings,
    a frozen ``GenerationSettings``)."""
    return _decode(str(pretrained_root()), name, sentence, tuple(sorted(generate.items())))


@functools.cache
def _decode(root: str, name: str, sentence: str, generate: tuple) -> DecodeTrace:
    """The decoding of ``trace_of``, cached by its pretrained root and arguments."""
    return _load(root, name).generate(sentence, **dict(generate))


def grammar_splits(seed: int = 0, n_train: int = 200_000) -> Splits:
    """``en_zh.build_splits(seed=seed, n_train=n_train)``, built once per test session and
    arguments: the defaults are the splits every shipped grammar model was trained on
    (``GRAMMAR_SPLITS``), which several modules read and which take seconds to build.
    Shared: read them only."""
    return _splits(seed, n_train)


@functools.cache
def _splits(seed: int, n_train: int) -> Splits:
    """The splits of ``grammar_splits``, cached by their arguments."""
    return en_zh.build_splits(seed=seed, n_train=n_train)
