"""Read and write a pretrained folder: ``model.safetensors`` (weights, no pickle),
``config.json`` (``TransformerConfig``), ``src_vocab.json`` / ``tgt_vocab.json`` (token lists
in id order) and ``card.json`` (data, size, training, metrics, sha256 of the weights).

Every load failure raises ``CheckpointError`` with the file's name and the problem.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from .config import TransformerConfig
from .errors import CheckpointError
from .transformer import Transformer
from .vocab import Vocab

WEIGHTS, CONFIG, SRC_VOCAB, TGT_VOCAB, CARD = (
    "model.safetensors", "config.json", "src_vocab.json", "tgt_vocab.json", "card.json",
)


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _write_json(path: Path, data) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def _read_json(path: Path):
    if not path.is_file():
        raise CheckpointError(f"{path.name} is missing from {path.parent}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path.name} in {path.parent} is not valid JSON: {exc}") from exc


def save_checkpoint(
    folder: Path, model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab, card: dict
) -> dict:
    """Write the five files into ``folder`` (created if needed).

    ``card`` is completed with the parameter count and the weights' sha256 and returned.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    save_file(state, str(folder / WEIGHTS), metadata={"format": "pt"})
    _write_json(folder / CONFIG, model.config.to_dict())
    _write_json(folder / SRC_VOCAB, src_vocab.itos)
    _write_json(folder / TGT_VOCAB, tgt_vocab.itos)
    card = dict(card, parameters=model.num_parameters(), sha256=sha256_file(folder / WEIGHTS))
    _write_json(folder / CARD, card)
    return card


def _load_vocab(path: Path) -> Vocab:
    data = _read_json(path)
    if not isinstance(data, list):
        raise CheckpointError(f"{path.name} must be a JSON list of tokens")
    try:
        return Vocab(data)
    except ValueError as exc:
        raise CheckpointError(f"{path.name}: {exc}") from exc


def load_checkpoint(folder: Path) -> tuple[Transformer, Vocab, Vocab, dict]:
    """Load a pretrained folder into an eval-mode model.

    Returns:
        (model, src_vocab, tgt_vocab, card).

    Raises:
        CheckpointError: a missing or malformed file, a sha256 that does not match
            ``card.json``, weights whose names or shapes disagree with ``config.json``, or
            vocabularies whose sizes disagree with it.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(f"{folder} is not a folder")
    try:
        config = TransformerConfig.from_dict(_read_json(folder / CONFIG))
    except ValueError as exc:
        if isinstance(exc, CheckpointError):
            raise
        raise CheckpointError(f"{CONFIG}: {exc}") from exc
    src_vocab, tgt_vocab = _load_vocab(folder / SRC_VOCAB), _load_vocab(folder / TGT_VOCAB)
    for name, vocab, size in ((SRC_VOCAB, src_vocab, config.src_vocab_size),
                              (TGT_VOCAB, tgt_vocab, config.tgt_vocab_size)):
        if len(vocab) != size:
            raise CheckpointError(f"{name} has {len(vocab)} tokens but {CONFIG} says {size}")
    card = _read_json(folder / CARD)
    if not isinstance(card, dict):
        raise CheckpointError(f"{CARD} must be a JSON object")
    weights = folder / WEIGHTS
    if not weights.is_file():
        raise CheckpointError(f"{WEIGHTS} is missing from {folder}")
    if card.get("sha256") and sha256_file(weights) != card["sha256"]:
        raise CheckpointError(f"{WEIGHTS}: sha256 does not match the one in {CARD}")
    try:
        state = load_file(str(weights))
    except (SafetensorError, OSError, ValueError) as exc:
        raise CheckpointError(f"{WEIGHTS} is not a readable safetensors file: {exc}") from exc
    model = Transformer(config)
    expected = model.state_dict()
    missing = sorted(set(expected) - set(state))
    extra = sorted(set(state) - set(expected))
    if missing or extra:
        raise CheckpointError(
            f"{WEIGHTS} does not match {CONFIG}: missing {missing[:3]}, unexpected {extra[:3]}"
        )
    for k, v in state.items():
        if v.shape != expected[k].shape:
            raise CheckpointError(
                f"{WEIGHTS}: tensor {k} has shape {tuple(v.shape)}, {CONFIG} implies "
                f"{tuple(expected[k].shape)}"
            )
    model.load_state_dict(state)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model, src_vocab, tgt_vocab, card

