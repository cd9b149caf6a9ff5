"""Opening a model by name or folder, as Hugging Face's ``from_pretrained`` does, always
offline: our checkpoints (``ours.build_translator``) and Hugging Face folders or cached hub models
(``hf_load``). Names are folders of ``pretrained/``, or of ``$ATTENTION_PRETRAINED_DIR``
when that is set (see ``pretrained_root``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..core.checkpoint import load_checkpoint
from ..core.counts import read_counts
from ..core.heldout import read_heldout
from ..core.transformer import Transformer
from ..errors import CheckpointError
from ..errors import short_repr as _short
from . import hf_load, one_stack, ours
from .translator import Translator

PRETRAINED_DIR = Path(__file__).resolve().parents[2] / "pretrained"  # the default root
PRETRAINED_ENV = "ATTENTION_PRETRAINED_DIR"  # overrides PRETRAINED_DIR; see pretrained_root()
DEFAULT_MODELS = ("en-zh-everyday", "en-zh")  # the app preselects the first one present


def pretrained_root() -> Path:
    """The folder whose sub-folders are the named models.

    ``$ATTENTION_PRETRAINED_DIR`` when it is set and not empty (read at every call, so a
    test or a deployment can point the app at another folder without reloading modules),
    else the repository's ``pretrained/`` (``PRETRAINED_DIR``).
    """
    env = os.environ.get(PRETRAINED_ENV, "").strip()
    return Path(env).expanduser() if env else PRETRAINED_DIR


def available_models(root: Path | None = None) -> list[str]:
    """Names of the model folders (sorted), whether or not they load.

    Args:
        root: where to look; default ``pretrained_root()``, i.e. ``$ATTENTION_PRETRAINED_DIR``
            if set, else the repository's ``pretrained/``. Hidden folders are skipped.
    """
    root = pretrained_root() if root is None else Path(root)
    try:
        return sorted(p.name for p in root.iterdir()
                      if p.is_dir() and not p.name.startswith("."))
    except OSError:  # missing, not a folder, or unreadable: no models
        return []


def default_model(names: Sequence[str]) -> str | None:
    """The model the app preselects among ``names``: the first of ``DEFAULT_MODELS`` there,
    else the first name, or None when there is none."""
    return next((m for m in DEFAULT_MODELS if m in names), names[0] if names else None)


def load_pretrained(name_or_path: str | Path, load_pickle_weights: bool = False) -> Translator:
    """Load a model as Hugging Face's ``from_pretrained`` does, always offline.

    ``name_or_path`` is, in this order: a folder name of ``pretrained_root()``
    (``$ATTENTION_PRETRAINED_DIR`` if set, else the repository's ``pretrained/``, read at call
    time; a ``str`` without a path separator, even if the working directory has a folder of
    that name); a folder (one of ours, or one saved by Hugging Face ``save_pretrained``); or
    a Hugging Face hub name (``Helsinki-NLP/opus-mt-en-zh``) found in the local Hugging
    Face cache (``hf_load.cache_snapshot``). Nothing is downloaded.

    Args:
        load_pickle_weights: for a Hugging Face folder with only ``pytorch_model.bin``: load it
            in weights-only mode (tensors only) instead of refusing it.

    Returns:
        a ``Translator`` with our backend's parts (a decoder-only folder of ours:
        ``one_stack.build_translator``), or for a Hugging Face folder with Hugging Face's
        (``hf.build_translator``).

    Raises:
        CheckpointError: no such model, or a folder that cannot or must not be loaded (the
            message names the file and the problem).
    """
    root = pretrained_root()
    name = str(name_or_path)
    is_name = isinstance(name_or_path, str) and not ("/" in name or "\\" in name)
    if is_name and not name.startswith(".") and name in available_models(root):
        path = root / name
    elif Path(name_or_path).is_dir():
        path = Path(name_or_path)
    elif isinstance(name_or_path, str) and hf_load.HUB_NAME.fullmatch(name):
        path = hf_load.cache_snapshot(name)
    else:
        raise CheckpointError(
            f"no pretrained model {_short(name)} in {root}; available: "
            f"{', '.join(available_models(root)) or 'none'}"
        )
    if hf_load.is_hf_folder(path):
        return hf_load.load_hf(path, load_pickle_weights=load_pickle_weights)
    ckpt = load_checkpoint(path)
    if not isinstance(ckpt.model, Transformer):  # a decoder-only prefix LM
        return one_stack.build_translator(
            ckpt.model, ckpt.src_tokenizer, ckpt.tgt_vocab, ckpt.card, name=path.name,
            heldout=read_heldout(path), train_counts=read_counts(path))
    return ours.build_translator(ckpt.model, ckpt.src_vocab, ckpt.tgt_vocab, ckpt.card,
                                 name=path.name, src_tokenizer=ckpt.src_tokenizer,
                                 tgt_tokenizer=ckpt.tgt_tokenizer, heldout=read_heldout(path),
                                 train_counts=read_counts(path))
