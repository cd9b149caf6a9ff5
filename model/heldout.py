"""Held-out sentence pairs a model was never trained on, for statistics over many sentences
(``headstats``), head importance (``ablation``) and alignment scores (``alignment``).

Where they come from, in this order:
- the model's synthetic grammar (``card["grammar"]`` or ``card["task"]``): the first pairs
  of that grammar's TEST split, rebuilt with the settings the model was trained with (the
  grammar models' card; for the everyday model ``data.GRAMMAR_SPLITS``). TEST is never
  trained on (README, "Data and credits").
- otherwise none: a Hugging Face model's training data is not known here, and no score is
  made up for it.
"""

from __future__ import annotations

import functools

from .tasks import TASKS, get_task

HELDOUT_SIZE = 200  # pairs used by default: the sample of held-out sentences


@functools.lru_cache(maxsize=4)
def grammar_test_pairs(task: str, seed: int, n_train: int) -> tuple[tuple[str, str], ...]:
    """(English, Chinese) pairs of the TEST split of grammar ``task`` built with ``seed`` and
    ``n_train`` (as the model's training did), in split order. Built once per process
    (a few seconds) and kept: the splits never change."""
    splits = get_task(task).build_splits(seed=seed, n_train=n_train)
    return tuple((" ".join(p.src), "".join(p.tgt)) for p in splits.test)


def heldout_known(card: dict) -> bool:
    """Whether ``heldout_pairs`` has pairs for the model whose ``card`` this is, without
    building them (building a grammar's splits takes a few seconds)."""
    if card.get("grammar") in TASKS:
        return True
    data = card.get("data") if isinstance(card.get("data"), dict) else {}
    return (card.get("task") in TASKS and isinstance(card.get("seed", 0), int)
            and isinstance(data.get("n_train"), int))


def heldout_pairs(card: dict, n: int = HELDOUT_SIZE) -> list[tuple[str, str]]:
    """The first ``n`` held-out (English, Chinese) pairs for the model whose ``card`` this
    is, or [] when none are known (see the module docstring).

    Raises:
        ValueError: ``n`` is not a positive int.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise ValueError(f"n must be a positive int, got {n!r}.")
    if card.get("grammar") in TASKS:  # a real-data model that also learned a grammar
        from .data import GRAMMAR_SPLITS

        return list(grammar_test_pairs(card["grammar"], **GRAMMAR_SPLITS)[:n])
    if card.get("task") in TASKS:
        data = card.get("data") if isinstance(card.get("data"), dict) else {}
        seed, n_train = card.get("seed", 0), data.get("n_train")
        if not (isinstance(seed, int) and isinstance(n_train, int)):
            return []
        return list(grammar_test_pairs(card["task"], seed, n_train)[:n])
    return []
