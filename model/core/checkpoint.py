"""Read and write a pretrained folder: ``model.safetensors`` (weights, no pickle),
``config.json`` (``TransformerConfig``, or ``DecoderOnlyConfig`` when it says
``"architecture": "decoder-only"``), ``src_vocab.json`` / ``tgt_vocab.json`` (token lists
in id order; a subword model has ``src_tokenizer.json``, a Hugging Face ``tokenizers`` file,
instead of ``src_vocab.json``) and ``card.json`` (data, size, training, metrics, sha256 of
the weights).

A decoder-only folder (a prefix language model, ``prefix_lm.py``) has the same files: its
one vocabulary is the English tokenizer's pieces, ``<sep>``, then the Chinese characters of
``tgt_vocab.json``, so ``config.json``'s ``vocab_size`` and ``sep_id`` must be the ones
``PrefixLayout`` computes from the two files.

Every load failure raises ``CheckpointError`` whose message starts with the file's name and
says what is wrong with it, in one short sentence. Nothing here unpickles: the weights are
read only with ``safetensors``, whose header is checked against ``config.json`` before any
tensor data is read, and the model is built only when ``config.json`` describes no more
parameters than the header holds (a hostile ``config.json`` cannot make the loader allocate
gigabytes).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any, NamedTuple

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file

from ..errors import CheckpointError
from ..errors import short_repr as _short
from .config import ARCHITECTURES, DecoderOnlyConfig, TransformerConfig, config_from_dict
from .decoder_only import DecoderOnlyTransformer
from .prefix_lm import PrefixLayout
from .subword import SRC_TOKENIZER, TGT_TOKENIZER, load_tokenizer, tokenizer_vocab
from .transformer import Transformer
from .vocab import Vocab

WEIGHTS, CONFIG, SRC_VOCAB, TGT_VOCAB, CARD = (
    "model.safetensors", "config.json", "src_vocab.json", "tgt_vocab.json", "card.json",
)
MAX_JSON_BYTES = 16 << 20  # a JSON file of a pretrained folder is a few kB; refuse huge ones
MAX_POSITIONS = 4096  # the largest max_len accepted: its sin/cos table is built in memory
SIZE_SLACK = 4  # a config may describe this many times the header's numbers before the build
_SHA256 = re.compile(r"[0-9a-f]{64}")


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _write_json(path: Path, data) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def _json_kind(value) -> str:
    """The JSON name of a parsed value's type, for messages."""
    if isinstance(value, bool):
        return "true/false"
    return {dict: "an object", list: "a list", str: "a string", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def _require_file(path: Path) -> None:
    """Raise CheckpointError unless ``path`` is a regular file (or a link to one)."""
    if not path.exists():
        raise CheckpointError(f"{path.name} is missing from the folder {path.parent.name!r}")
    if not path.is_file():
        raise CheckpointError(f"{path.name} in the folder {path.parent.name!r} is not a file")


def _check_json_size(path: Path) -> None:
    """Raise CheckpointError if the JSON file ``path`` is larger than ``MAX_JSON_BYTES``."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise CheckpointError(f"{path.name} could not be read: {exc.strerror or exc}") from exc
    if size > MAX_JSON_BYTES:
        raise CheckpointError(f"{path.name} is {size:,} bytes; a file of a pretrained folder "
                              f"may have at most {MAX_JSON_BYTES:,}")


def _read_json(path: Path):
    """Parse one JSON file of the folder.

    Raises:
        CheckpointError: missing, unreadable, too large, not UTF-8, not JSON or nested too
            deeply for the parser.
    """
    _require_file(path)
    _check_json_size(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CheckpointError(f"{path.name} could not be read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise CheckpointError(f"{path.name} is not UTF-8 text (byte {exc.start})") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CheckpointError(
            f"{path.name} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from exc
    except RecursionError as exc:
        raise CheckpointError(f"{path.name} is not valid JSON: nested too deeply") from exc


def save_checkpoint(
    folder: Path, model: Transformer | DecoderOnlyTransformer, src_vocab: Vocab | None,
    tgt_vocab: Vocab, *, card: dict, src_tokenizer=None, tgt_tokenizer=None,
) -> dict:
    """Write the five files into ``folder`` (created if needed): with ``src_tokenizer`` (a
    ``tokenizers.Tokenizer``), ``src_tokenizer.json`` replaces ``src_vocab.json``; with
    ``tgt_tokenizer`` (an English target's byte-level BPE), ``tgt_tokenizer.json`` is
    written beside ``tgt_vocab.json`` (its pieces in id order). A decoder-only prefix
    language model is saved the same way, with its English tokenizer and Chinese vocabulary
    (``config.json`` then says ``"architecture": "decoder-only"``).

    ``card`` is completed with the parameter count and the weights' sha256 and returned.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    save_file(state, str(folder / WEIGHTS), metadata={"format": "pt"})
    _write_json(folder / CONFIG, model.config.to_dict())
    if src_tokenizer is not None:
        src_tokenizer.save(str(folder / SRC_TOKENIZER))
        (folder / SRC_VOCAB).unlink(missing_ok=True)
    else:
        _write_json(folder / SRC_VOCAB, src_vocab.itos)
        (folder / SRC_TOKENIZER).unlink(missing_ok=True)
    _write_json(folder / TGT_VOCAB, tgt_vocab.itos)
    if tgt_tokenizer is not None:
        tgt_tokenizer.save(str(folder / TGT_TOKENIZER))
    else:
        (folder / TGT_TOKENIZER).unlink(missing_ok=True)
    card = dict(card, parameters=model.num_parameters(), sha256=sha256_file(folder / WEIGHTS))
    _write_json(folder / CARD, card)
    return card


def _config_class(data: dict) -> type:
    """The config dataclass a ``config.json`` dict describes (``config_from_dict``'s rule)."""
    if data.get("architecture", "encoder-decoder") == "decoder-only":
        return DecoderOnlyConfig
    return TransformerConfig


def _load_config(folder: Path) -> tuple[TransformerConfig | DecoderOnlyConfig, dict]:
    """``config.json`` -> (TransformerConfig or DecoderOnlyConfig, the raw dict); every
    field type-checked."""
    data = _read_json(folder / CONFIG)
    if not isinstance(data, dict):
        raise CheckpointError(f"{CONFIG} must be a JSON object, not {_json_kind(data)}")
    arch = data.get("architecture", "encoder-decoder")
    if arch not in ARCHITECTURES:
        raise CheckpointError(f"{CONFIG}: architecture must be one of {list(ARCHITECTURES)}, "
                              f"got {_short(arch)}")
    spec = {f.name: f for f in fields(_config_class(data))}
    spec["architecture"] = {f.name: f for f in fields(DecoderOnlyConfig)}["architecture"]
    unknown = sorted(set(data) - set(spec))
    if unknown:
        raise CheckpointError(f"{CONFIG} has unknown field(s) {_short(unknown)}")
    missing = [n for n, f in spec.items() if f.default is MISSING and n not in data]
    if missing:
        raise CheckpointError(f"{CONFIG} lacks the required field(s) {missing}")
    for name, value in data.items():
        kind = spec[name].type  # a string: annotations are postponed
        integer = isinstance(value, int) and not isinstance(value, bool)
        ok = {"bool": isinstance(value, bool), "int": integer, "str": isinstance(value, str),
              "int | None": integer or value is None,  # head_dim: None = d_model // nhead
              "float": isinstance(value, int | float) and not isinstance(value, bool)
              and math.isfinite(value)}[kind]
        if not ok:
            want = {"bool": "true or false", "int": "an integer", "int | None": "an integer",
                    "str": "a string",
                    "float": "a number"}[kind]
            raise CheckpointError(f"{CONFIG}: {name} must be {want}, got {_short(value)}")
    try:
        config = config_from_dict(data)
    except ValueError as exc:
        raise CheckpointError(f"{CONFIG}: {exc}") from exc
    if config.max_len > MAX_POSITIONS:
        raise CheckpointError(
            f"{CONFIG}: max_len {config.max_len:,} is larger than the {MAX_POSITIONS} "
            "positions this loader accepts"
        )
    return config, data


def _load_card(folder: Path) -> dict:
    """``card.json`` -> dict, with the fields the app and loader use type-checked."""
    card = _read_json(folder / CARD)
    if not isinstance(card, dict):
        raise CheckpointError(f"{CARD} must be a JSON object, not {_json_kind(card)}")
    sha = card.get("sha256")
    if sha is not None and not (isinstance(sha, str) and _SHA256.fullmatch(sha)):
        raise CheckpointError(f"{CARD}: sha256 must be 64 lower-case hex digits, "
                              f"got {_short(sha)}")
    for key, kind, want in (("task", str, "a string"), ("name", str, "a string"),
                            ("parameters", int, "an integer"), ("config", dict, "an object"),
                            ("test_metrics", dict, "an object")):
        value = card.get(key)
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            raise CheckpointError(f"{CARD}: {key} must be {want}, got {_short(value)}")
    for key, value in card.get("test_metrics", {}).items():
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not math.isfinite(value):
            raise CheckpointError(f"{CARD}: test_metrics.{key} must be a number, "
                                  f"got {_short(value)}")
    return card


def _check_card_config(card: dict, data: dict) -> None:
    """``config.json`` must equal the config recorded in ``card.json`` (when it records one):
    a changed ``nhead`` keeps every weight's shape, so only this check can catch it."""
    recorded = card.get("config")
    if recorded is None:
        return
    defaults = {f.name: f.default for f in fields(_config_class(data))
                if f.default is not MISSING}
    recorded, data = {**defaults, **recorded}, {**defaults, **data}  # omitted = default
    differ = [k for k in sorted(set(recorded) | set(data)) if recorded.get(k) != data.get(k)]
    if differ:
        k = differ[0]
        raise CheckpointError(
            f"{CONFIG} disagrees with the config recorded in {CARD}: {k} is "
            f"{_short(data.get(k), 20)} but {CARD} says {_short(recorded.get(k), 20)}"
        )


def _load_vocab(path: Path) -> Vocab:
    data = _read_json(path)
    if not isinstance(data, list):
        raise CheckpointError(f"{path.name} must be a JSON list of tokens, not {_json_kind(data)}")
    try:
        return Vocab(data)
    except ValueError as exc:
        raise CheckpointError(f"{path.name}: {exc}") from exc


def load_source_tokenizer(folder: Path):
    """The ``tokenizers.Tokenizer`` of a subword model's folder, or None for a word-level
    model (one with ``src_vocab.json``).

    Raises:
        CheckpointError: ``src_tokenizer.json`` is too large or not a tokenizers file.
    """
    path = Path(folder) / SRC_TOKENIZER
    if not path.exists():
        return None
    _require_file(path)
    _check_json_size(path)
    try:
        return load_tokenizer(path)
    except ValueError as exc:
        _read_json(path)  # not UTF-8 or not JSON: say so precisely
        raise CheckpointError(str(exc)) from exc


def _load_target_tokenizer(folder: Path, tgt_vocab: Vocab):
    """The English target's ``tokenizers.Tokenizer`` (``tgt_tokenizer.json``, a zh-en
    model), or None when the folder has none (one token per Chinese character).

    Raises:
        CheckpointError: the file is too large, not a tokenizers file, or its pieces in id
            order are not ``tgt_vocab``'s.
    """
    path = Path(folder) / TGT_TOKENIZER
    if not path.exists():
        return None
    _require_file(path)
    _check_json_size(path)
    try:
        tok = load_tokenizer(path)
        same = tokenizer_vocab(tok).itos == tgt_vocab.itos
    except ValueError as exc:
        _read_json(path)
        raise CheckpointError(f"{TGT_TOKENIZER}: {exc}") from exc
    if not same:
        raise CheckpointError(f"{TGT_TOKENIZER}: its pieces are not those of {TGT_VOCAB}")
    return tok


def _load_source(folder: Path) -> tuple[Vocab, Any]:
    """(the source vocabulary, the tokenizer or None): ``src_vocab.json`` for a word-level
    model, else ``src_tokenizer.json`` and its vocabulary (the file is read once)."""
    tok = load_source_tokenizer(folder)
    if tok is None:
        return _load_vocab(folder / SRC_VOCAB), None
    try:
        return tokenizer_vocab(tok), tok
    except ValueError as exc:
        raise CheckpointError(f"{SRC_TOKENIZER}: {exc}") from exc


def _weights_format_hint(path: Path) -> str:
    """What a file that safetensors cannot parse looks like, from its first bytes."""
    with open(path, "rb") as f:
        head = f.read(4)
    if head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return ("it is a Python pickle, which is never loaded because unpickling can run "
                "code; convert it with safetensors.torch.save_file")
    if head == b"PK\x03\x04":
        return ("it is a zip archive (torch.save format, pickle inside), which is never "
                "loaded; convert it with safetensors.torch.save_file")
    return "it is truncated or not a safetensors file"


def _read_header(weights: Path) -> dict[str, tuple[tuple[int, ...], str]]:
    """{tensor name: (shape, dtype string)} from the safetensors header, no tensor data."""
    try:
        with safe_open(str(weights), framework="pt") as f:
            return {k: (tuple(f.get_slice(k).get_shape()), f.get_slice(k).get_dtype())
                    for k in f.keys()}
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise CheckpointError(
            f"{WEIGHTS} cannot be read: {_weights_format_hint(weights)} ({exc})"
        ) from exc


def _layer_count(names, prefix: str) -> int:
    """How many ``prefix.N.`` blocks the tensor names hold."""
    found = {int(m.group(1)) for n in names if (m := re.match(rf"{prefix}\.(\d+)\.", n))}
    return max(found) + 1 if found else 0


def _least_parameters(config: TransformerConfig | DecoderOnlyConfig) -> int:
    """A lower bound on the parameters ``config`` describes: the embedding tables (two, or
    a decoder-only model's one) and, per layer, the attention projections (4 D H Dh, = 4 D^2
    when H Dh = D; the decoder's cross-attention too) and the feed-forward weights (2 D F),
    biases and norms left out."""
    d, f = config.d_model, config.dim_feedforward
    a = 4 * d * config.nhead * config.head_dim
    if isinstance(config, DecoderOnlyConfig):
        return config.vocab_size * d + config.num_layers * (a + 2 * d * f)
    return ((config.src_vocab_size + config.tgt_vocab_size) * d
            + config.num_encoder_layers * (a + 2 * d * f)
            + config.num_decoder_layers * (2 * a + 2 * d * f))


def _layer_stacks(config: TransformerConfig | DecoderOnlyConfig) -> tuple[tuple[str, str], ...]:
    """(tensor-name prefix, config field) of each stack of layers."""
    if isinstance(config, DecoderOnlyConfig):
        return (("layers", "num_layers"),)
    return (("encoder_layers", "num_encoder_layers"), ("decoder_layers", "num_decoder_layers"))


def _check_header(header: dict, config: TransformerConfig | DecoderOnlyConfig
                  ) -> Transformer | DecoderOnlyTransformer:
    """Tensor names, shapes and dtypes in the header must be what ``config`` implies.

    The model is built (on the CPU, randomly initialised) only once the layer counts agree
    and the config describes at most ``SIZE_SLACK`` times the numbers the header holds, so a
    hostile ``config.json`` cannot make the loader allocate much more than the weights
    file's size; within that slack a mismatch gets the precise message naming a tensor.

    Returns:
        The model ``config`` describes, ready for ``load_state_dict``.
    """
    for prefix, field in _layer_stacks(config):
        have, want = _layer_count(header, prefix), getattr(config, field)
        if have != want:
            raise CheckpointError(
                f"{WEIGHTS} has {have} {prefix.replace('_', ' ')} but {CONFIG} says {field} "
                f"is {want}"
            )
    held = sum(math.prod(shape) for shape, _ in header.values())
    least = _least_parameters(config)
    if least > SIZE_SLACK * held:
        raise CheckpointError(
            f"{WEIGHTS} holds {held:,} numbers but {CONFIG} describes at least {least:,} "
            f"parameters (d_model {config.d_model}, dim_feedforward {config.dim_feedforward})"
        )
    model = (DecoderOnlyTransformer if isinstance(config, DecoderOnlyConfig)
             else Transformer)(config)
    expected = model.state_dict()
    missing = sorted(set(expected) - set(header))
    extra = sorted(set(header) - set(expected))
    if missing or extra:
        parts = [f"{what} tensors {_short(names[:2])}" + (f" and {len(names) - 2} more"
                                                          if len(names) > 2 else "")
                 for what, names in (("missing", missing), ("unexpected", extra)) if names]
        raise CheckpointError(f"{WEIGHTS} does not match {CONFIG}: {', '.join(parts)}")
    for k, (shape, dtype) in header.items():
        if shape != tuple(expected[k].shape):
            raise CheckpointError(
                f"{WEIGHTS}: tensor {k} has shape {shape}, but {CONFIG} implies "
                f"{tuple(expected[k].shape)}"
            )
        if not dtype.startswith(("F", "BF")):
            raise CheckpointError(f"{WEIGHTS}: tensor {k} has dtype {dtype}, not a float type")
    return model


def _check_vocab_sizes(config, src: tuple[str, Vocab], tgt: tuple[str, Vocab]) -> None:
    """The vocabularies (file name, ``Vocab``) must have the sizes ``config`` says: an
    encoder-decoder's ``src_vocab_size`` and ``tgt_vocab_size``; a decoder-only prefix
    language model's ``vocab_size`` and ``sep_id`` as ``PrefixLayout`` makes them.

    Raises:
        CheckpointError: a size that disagrees.
    """
    if isinstance(config, DecoderOnlyConfig):
        try:
            PrefixLayout(len(src[1]), len(tgt[1])).check(config)
        except ValueError as exc:
            raise CheckpointError(f"{CONFIG}: {exc}") from exc
        return
    for (name, vocab), size in ((src, config.src_vocab_size), (tgt, config.tgt_vocab_size)):
        if len(vocab) != size:
            raise CheckpointError(f"{name} has {len(vocab)} tokens but {CONFIG} says {size}")


class Checkpoint(NamedTuple):
    """What ``load_checkpoint`` reads from a pretrained folder."""

    model: Transformer | DecoderOnlyTransformer  # in eval mode
    src_vocab: Vocab
    tgt_vocab: Vocab
    card: dict
    src_tokenizer: Any  # a tokenizers.Tokenizer (subword models), or None
    tgt_tokenizer: Any = None  # an English target's byte-level BPE (tgt_tokenizer.json), or None


def load_checkpoint(folder: Path) -> Checkpoint:
    """Load a pretrained folder into an eval-mode model.

    The files are checked in this order: ``config.json``, ``card.json`` (and that its
    recorded config equals ``config.json``), the two vocabularies, then ``model.safetensors``
    (sha256 against ``card.json``, header against ``config.json``, values finite).

    Returns:
        a ``Checkpoint``: (model, src_vocab, tgt_vocab, card, src_tokenizer, tgt_tokenizer).

    Raises:
        CheckpointError: a missing or malformed file, a sha256 that does not match
            ``card.json``, a pickle instead of safetensors, weights whose names, shapes or
            dtypes disagree with ``config.json``, NaN or infinite weights, vocabularies
            whose sizes disagree with it, or a ``tgt_tokenizer.json`` whose pieces are not
            ``tgt_vocab.json``'s. The message starts with the file's name.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(f"{folder} is not a folder")
    config, raw_config = _load_config(folder)
    card = _load_card(folder)
    _check_card_config(card, raw_config)
    (src_vocab, tokenizer), tgt_vocab = _load_source(folder), _load_vocab(folder / TGT_VOCAB)
    src_name = SRC_TOKENIZER if (folder / SRC_TOKENIZER).exists() else SRC_VOCAB
    tgt_tokenizer = _load_target_tokenizer(folder, tgt_vocab)
    _check_vocab_sizes(config, (src_name, src_vocab), (TGT_VOCAB, tgt_vocab))
    weights = folder / WEIGHTS
    _require_file(weights)
    try:
        digest = sha256_file(weights)
    except OSError as exc:
        raise CheckpointError(f"{WEIGHTS} could not be read: {exc.strerror or exc}") from exc
    if card.get("sha256") and digest != card["sha256"]:
        raise CheckpointError(f"{WEIGHTS}: sha256 does not match the one in {CARD} (the file "
                              "is damaged or was replaced)")
    model = _check_header(_read_header(weights), config)
    try:
        state = load_file(str(weights))
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise CheckpointError(
            f"{WEIGHTS} cannot be read: {_weights_format_hint(weights)} ({exc})"
        ) from exc
    for k, v in state.items():
        if not bool(torch.isfinite(v).all()):
            raise CheckpointError(f"{WEIGHTS}: tensor {k} holds NaN or infinite values")
    try:
        model.load_state_dict(state)
    except RuntimeError as exc:  # unreachable after _check_header; kept as a last guard
        raise CheckpointError(f"{WEIGHTS} does not fit {CONFIG}: {exc}") from exc
    model.eval()  # parameters keep requires_grad: decoding runs under inference_mode, and
    # num_parameters() (which counts trainable ones) must match the card's count
    return Checkpoint(model, src_vocab, tgt_vocab, card, tokenizer, tgt_tokenizer)
