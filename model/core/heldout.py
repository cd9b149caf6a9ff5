"""Held-out sentence pairs a model was never trained on, for statistics over many sentences
(``headstats``), head importance (``ablation``) and alignment scores (``alignment``).

``sample_pairs`` (statistics, importance): the pairs of the model folder's ``heldout.tsv``
when it has one (the everyday model ships 200 Tatoeba TEST pairs: ``python -m model.training.data
heldout FOLDER``, ``write_heldout``), else
``heldout_pairs``. ``heldout_pairs`` (alignment: only grammar sentences have gold links): the
first pairs of the model's synthetic grammar's TEST split (``card["grammar"]`` or
``card["task"]``), rebuilt with the settings the model was trained with (the grammar models'
card; for the everyday model ``GRAMMAR_SPLITS``). TEST is never trained on (README,
"Data and credits"). Otherwise none: a Hugging Face model's training data is not known
here, and no score is made up for it.
"""

from __future__ import annotations

import functools
from pathlib import Path

from ..errors import CheckpointError
from ..tasks import TASKS, get_task

GRAMMAR_SPLITS = {"seed": 0, "n_train": 200_000}  # build_splits() of the grammar models too
HELDOUT_SIZE = 200  # pairs used by default: the sample of held-out sentences
HELDOUT_FILE = "heldout.tsv"  # a model folder's own held-out pairs: source<TAB>target
MAX_HELDOUT = 1000  # lines a heldout.tsv may have
TATOEBA_STRIDE = 28  # write_heldout: every 28th Tatoeba TEST pair, in file (zh_id) order


def read_heldout(folder: Path) -> tuple[tuple[str, str], ...]:
    """The (source, target) pairs of ``folder/heldout.tsv``, () when there is none.

    Raises:
        CheckpointError: a file that is not UTF-8, has more than ``MAX_HELDOUT`` lines, or a
            line that is not two non-empty tab-separated fields (named by its number).
    """
    path = Path(folder) / HELDOUT_FILE
    if not path.is_file():
        return ()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{HELDOUT_FILE} cannot be read as UTF-8 text ({exc})") from exc
    if len(lines) > MAX_HELDOUT:
        raise CheckpointError(f"{HELDOUT_FILE} has {len(lines)} lines; at most {MAX_HELDOUT}")
    pairs = []
    for number, line in enumerate(lines, start=1):
        fields = line.split("\t")
        if len(fields) != 2 or not all(f.strip() for f in fields):
            raise CheckpointError(f"{HELDOUT_FILE}, line {number}: expected English<TAB>Chinese")
        pairs.append((fields[0], fields[1]))
    return tuple(pairs)


def sample_pairs(translator, n: int = HELDOUT_SIZE) -> list[tuple[str, str]]:
    """The first ``n`` held-out pairs for statistics and importance: the model folder's own
    (``ModelInfo.heldout``), else ``heldout_pairs`` of its card."""
    own = translator.info.heldout
    return list(own[:n]) if own else heldout_pairs(translator.card, n)


def sample_known(translator) -> bool:
    """Whether ``sample_pairs`` has pairs for ``translator`` (without building them)."""
    return bool(translator.info.heldout) or heldout_known(translator.card)


@functools.lru_cache(maxsize=4)
def grammar_test_pairs(task: str, seed: int, n_train: int) -> tuple[tuple[str, str], ...]:
    """(English, Chinese) pairs of the TEST split of grammar ``task`` built with ``seed`` and
    ``n_train`` (as the model's training did), in split order. Built once per process
    (a few seconds) and kept: the splits never change."""
    splits = get_task(task).build_splits(seed=seed, n_train=n_train)
    return tuple((" ".join(p.src), "".join(p.tgt)) for p in splits.test)


def _split_settings(card: dict) -> tuple[str, int, int] | None:
    """(grammar task, seed, n_train) of the TEST split held out from the model whose
    ``card`` this is: a real-data model that also learned a grammar (``card["grammar"]``,
    ``GRAMMAR_SPLITS``) or a grammar model (``card["task"]``, its seed and n_train);
    None when the card names no grammar or lacks the settings."""
    if card.get("grammar") in TASKS:
        return card["grammar"], GRAMMAR_SPLITS["seed"], GRAMMAR_SPLITS["n_train"]
    data = card.get("data") if isinstance(card.get("data"), dict) else {}
    seed, n_train = card.get("seed", 0), data.get("n_train")
    if card.get("task") in TASKS and isinstance(seed, int) and isinstance(n_train, int):
        return card["task"], seed, n_train
    return None


def heldout_known(card: dict) -> bool:
    """Whether ``heldout_pairs`` has pairs for the model whose ``card`` this is, without
    building them (building a grammar's splits takes a few seconds)."""
    return _split_settings(card) is not None


def heldout_pairs(card: dict, n: int = HELDOUT_SIZE) -> list[tuple[str, str]]:
    """The first ``n`` held-out (English, Chinese) pairs for the model whose ``card`` this
    is, or [] when none are known (see the module docstring).

    Raises:
        ValueError: ``n`` is not a positive int.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise ValueError(f"n must be a positive int, got {n!r}.")
    settings = _split_settings(card)
    return [] if settings is None else list(grammar_test_pairs(*settings)[:n])


def write_heldout(test_file: Path, folder: Path, n: int = HELDOUT_SIZE) -> int:
    """Write ``folder/heldout.tsv``: every ``TATOEBA_STRIDE``-th pair of the everyday
    corpus's Tatoeba TEST file (``python -m model.training.data everyday``: data/everyday/
    test_tatoeba.tsv, zh_id order), the first ``n`` of them. Returns how many."""
    rows = Path(test_file).read_text(encoding="utf-8").splitlines()
    chosen = rows[::TATOEBA_STRIDE][:n]
    (Path(folder) / HELDOUT_FILE).write_text("\n".join(chosen) + "\n", encoding="utf-8")
    return len(chosen)

