"""Opening Hugging Face folders, offline and safely: encoder-decoders for
``model.backends.hf`` and causal language models for ``model.backends.hf_causal``.

A folder saved by ``save_pretrained``, or a snapshot of the local Hugging Face cache, is
checked before any weights are read (no remote code, safetensors unless pickle weights are
allowed, a supported encoder-decoder or causal family, a size this machine can hold), then
loaded with ``local_files_only=True``, ``trust_remote_code=False`` and eager attention.
``cached_models`` lists the encoder-decoders the cache holds
(``huggingface_hub.scan_cache_dir``); ``cache_snapshot`` finds a hub name's folder (of
either kind) without downloading.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import torch

from ..core.config import TransformerConfig
from ..errors import CheckpointError
from ..errors import short_repr as _short
from . import hf_causal
from .hf import FAMILIES, MAX_TOKENS, HFSeq2Seq, build_translator
from .hf_causal import FAMILIES as CAUSAL_FAMILIES
from .hf_config import PRE_LN, causal_fields, config_fields
from .translator import Translator

SAFE_WEIGHTS = ("model.safetensors", "model.safetensors.index.json")
PICKLE_WEIGHTS = ("pytorch_model.bin", "pytorch_model.bin.index.json")
MEMORY_SHARE = 0.5  # refuse weights needing more than this share of the machine's memory
CONFIG_LIMIT = 1 << 20  # bytes: a config.json larger than this is not a model config
HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}")  # org/name


# --- loading ---------------------------------------------------------------------------------


def is_hf_folder(folder: Path) -> bool:
    """True for a folder saved by Hugging Face ``save_pretrained`` (a ``config.json`` with a
    ``model_type``), as opposed to one of ours (``card.json``)."""
    folder = Path(folder)
    if (folder / "card.json").exists() or not (folder / "config.json").is_file():
        return False
    try:
        return "model_type" in _read_config(folder)
    except CheckpointError:
        return True  # a damaged HF config: load_hf explains


def _read_config(folder: Path) -> dict:
    """config.json as a dict.

    Raises:
        CheckpointError: missing, too large, not UTF-8 JSON, or not an object.
    """
    path = folder / "config.json"
    if not path.is_file():
        raise CheckpointError(f"{folder.name}: config.json is missing; this is not a saved "
                              "Hugging Face model folder")
    if path.stat().st_size > CONFIG_LIMIT:
        raise CheckpointError(f"{folder.name}: config.json is larger than "
                              f"{CONFIG_LIMIT // 1024} KB; this is not a model configuration")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{folder.name}: config.json is not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise CheckpointError(f"{folder.name}: config.json must hold a JSON object")
    return data


def _check_folder(folder: Path, load_pickle_weights: bool) -> dict:
    """Refuse what must not or cannot be loaded, before any weights are read.

    Raises:
        CheckpointError: remote code, a model type we do not support (``_config_size``),
            a config field the app cannot represent, no weights, pickle-only weights
            without ``load_pickle_weights``, or weights larger than ``MEMORY_SHARE`` of this
            machine's memory.
    """
    data = _read_config(folder)
    name = folder.name
    if "auto_map" in data or any(p.suffix == ".py" for p in folder.iterdir()):
        raise CheckpointError(
            f"{name} needs its own Python code (trust_remote_code); this app never runs code "
            "that comes with a model. Use a model whose architecture ships with transformers.")
    described = _config_size(data, name)
    safe = [folder / f for f in SAFE_WEIGHTS if (folder / f).is_file()]
    pickled = [folder / f for f in PICKLE_WEIGHTS if (folder / f).is_file()]
    if not safe and not pickled:
        raise CheckpointError(f"{name} has no weights (model.safetensors is missing)")
    if not safe and not load_pickle_weights:
        raise CheckpointError(
            f"{name} has only pickle weights (pytorch_model.bin), which can run code when "
            "loaded. Convert them once on a trusted machine: load the model there and call "
            "model.save_pretrained(folder) (it writes model.safetensors), or tick "
            "'load pickle weights' to load them in weights-only mode (tensors only).")
    size = max(sum(_weights_bytes(p) for p in (safe or pickled)), described)
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if size > MEMORY_SHARE * memory:
        raise CheckpointError(
            f"{name} needs {size / 2**30:.1f} GB for its weights; this machine has "
            f"{memory / 2**30:.1f} GB of memory, too little to run it.")
    return data


def is_causal(data: dict) -> bool:
    """True for the config (dict) of a causal language model of a supported family
    (``hf_causal.FAMILIES``)."""
    model_type = data.get("model_type")
    return isinstance(model_type, str) and model_type in CAUSAL_FAMILIES


def _config_size(data: dict, name: str) -> int:
    """Float32 bytes of the model ``config.json`` (``data``) describes, its family and
    fields checked (``config_fields`` / ``causal_fields``).

    Raises:
        CheckpointError: a model type we do not support, an encoder-decoder type saved as
            something else, a causal type whose ``architectures`` is not a language-model
            head (``*ForCausalLM``, GPT-2's ``*LMHeadModel``), or a bad field.
    """
    where, model_type = f"{name}: config.json", data.get("model_type")
    if is_causal(data):
        heads = data.get("architectures") or []
        if not isinstance(heads, list) or not all(
                isinstance(a, str) and a.endswith(("ForCausalLM", "LMHeadModel")) for a in heads):
            raise CheckpointError(
                f"{name} is a {_short(model_type, 30)} model with the head "
                f"{_short(heads, 60)} (config.json: architectures); the app opens causal "
                "language models (*ForCausalLM, GPT2LMHeadModel)")
        return _causal_bytes(causal_fields(data, where))
    if not isinstance(model_type, str) or model_type not in FAMILIES:
        raise CheckpointError(
            f"{name} is a {_short(model_type, 30)} model (config.json: model_type); the app "
            "opens encoder-decoder translation models of these types: "
            f"{', '.join(sorted(FAMILIES))}, and causal language models of these: "
            f"{', '.join(sorted(CAUSAL_FAMILIES))}.")
    encoder_decoder = data.get("is_encoder_decoder", True)
    if not isinstance(encoder_decoder, bool):
        raise CheckpointError(f"{name}: config.json: is_encoder_decoder must be true or "
                              f"false, got {_short(encoder_decoder, 30)}")
    if not encoder_decoder:
        raise CheckpointError(f"{name} is not an encoder-decoder model")
    return _config_bytes(config_fields(data, where))


def _config_bytes(fields: dict) -> int:
    """Float32 bytes of the model a config describes (``config_fields``' dict), roughly: the
    embedding table plus, per layer, attention (4 D H Dh; cross-attention too) and
    feed-forward (2 D F, 3 D F when gated) weights. Catches a config far larger than its
    weights file before transformers allocates the model."""
    d, inner = fields["d_model"], fields["nhead"] * fields["head_dim"]
    ff = fields["dim_feedforward"] * (3 if fields["gated"] else 2)
    layers = fields["num_encoder_layers"] + 2 * fields["num_decoder_layers"]
    return 4 * (fields["vocab_size"] * d + layers * (4 * d * inner + d * ff))


def _causal_bytes(fields: dict) -> int:
    """Float32 bytes of the causal language model a config describes (``causal_fields``'
    dict), roughly: the embedding table plus, per layer, attention (q and o: 2 D H Dh; k
    and v: 2 D K Dh for K key/value heads) and the MLP (2 D F, 3 D F when gated)."""
    d, dh = fields["d_model"], fields["head_dim"]
    attention = 2 * d * dh * (fields["nhead"] + fields["num_key_value_heads"])
    mlp = fields["dim_feedforward"] * d * (3 if fields["gated"] else 2)
    return 4 * (fields["vocab_size"] * d + fields["num_layers"] * (attention + mlp))


def _weights_bytes(path: Path) -> int:
    """Bytes of a weights file, or of the files a sharded index lists."""
    if path.suffix != ".json":
        return path.stat().st_size
    try:
        shards = set(json.loads(path.read_text(encoding="utf-8"))["weight_map"].values())
        return sum((path.parent / s).stat().st_size for s in shards)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CheckpointError(f"{path.name} is not a valid weights index ({exc})") from exc


def _our_config(hf_config, vocab_size: int, where: str = "config.json") -> TransformerConfig:
    """The Hugging Face config's hyper-parameters under our names (``config_fields``):
    ``head_dim`` is T5's ``d_kv`` (D / H for the other families), ``norm_first`` the
    family's (pre-LN: T5, mT5, M2M100, mBART; post-LN: Marian, BART), ``max_len`` at most
    ``MAX_TOKENS``; ``vocab_size`` (V) is the output layer's rows.

    Raises:
        CheckpointError: a field missing or out of range, or a special id outside 0..V-1
            (the message names the field).
    """
    f = config_fields(dict(vars(hf_config), model_type=hf_config.model_type), where)
    for field in ("pad_token_id", "eos_token_id", "decoder_start_token_id"):
        if f[field] >= vocab_size:
            raise CheckpointError(f"{where}: {field} {f[field]} is outside the model's "
                                  f"{vocab_size} output rows")
    try:
        return TransformerConfig(
            src_vocab_size=vocab_size, tgt_vocab_size=vocab_size, d_model=f["d_model"],
            nhead=f["nhead"], head_dim=f["head_dim"],
            num_encoder_layers=f["num_encoder_layers"],
            num_decoder_layers=f["num_decoder_layers"], dim_feedforward=f["dim_feedforward"],
            dropout=0.0, max_len=min(MAX_TOKENS, f["max_position_embeddings"]),
            pad_id=f["pad_token_id"], unk_id=f["unk_token_id"],
            bos_id=f["decoder_start_token_id"], eos_id=f["eos_token_id"],
            norm_first=hf_config.model_type in PRE_LN)
    except ValueError as exc:  # what config_fields does not check (vocab_size from weights)
        raise CheckpointError(f"{where}: {exc}") from exc


def load_hf(folder: str | Path, load_pickle_weights: bool = False) -> Translator:
    """Open a folder saved by Hugging Face ``save_pretrained`` (a plain folder, or a
    snapshot of the Hugging Face cache), offline: an encoder-decoder
    (``AutoModelForSeq2SeqLM``, ``hf.build_translator``) or a causal language model
    (``AutoModelForCausalLM``, ``hf_causal.build_translator``), as its config says.

    Args:
        folder: the folder with config.json, the weights and the tokenizer files.
        load_pickle_weights: load ``pytorch_model.bin`` when there is no safetensors file (with
            transformers in weights-only mode, which refuses anything but tensors).

    Raises:
        CheckpointError: see ``_check_folder``; a config, tokenizer or weights file that
            transformers cannot read (the message says which); weights lacking tensors the
            config describes (transformers would initialise them at random).
    """
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    folder = Path(folder)
    causal = is_causal(_check_folder(folder, load_pickle_weights))
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True,
                                                  trust_remote_code=False)
    except Exception as exc:  # transformers raises many types for a bad tokenizer
        raise CheckpointError(f"{folder.name}: the tokenizer files cannot be read "
                              f"({_short(str(exc), 200)})") from exc
    auto = AutoModelForCausalLM if causal else AutoModelForSeq2SeqLM
    hf = _load_weights(auto, folder, load_pickle_weights)
    where = f"{folder.name}: config.json"
    rows = hf.get_output_embeddings().weight.size(0)
    if causal:
        model = hf_causal.HFCausal(hf, hf_causal.causal_config(
            hf.config, tokenizer, rows, where, generation_eos=hf.generation_config.eos_token_id))
    else:
        if not hf.config.is_encoder_decoder:
            raise CheckpointError(f"{folder.name} is not an encoder-decoder model")
        model = HFSeq2Seq(hf, _our_config(hf.config, rows, where))
    card = {"name": folder.name, "source": "huggingface", "model_type": hf.config.model_type,
            "parameters": model.num_parameters()}
    if causal:
        return hf_causal.build_translator(model, tokenizer, card, name=folder.name)
    return build_translator(model, tokenizer, card, name=folder.name, where=str(folder))


def _load_weights(auto, folder: Path, load_pickle_weights: bool):
    """The eval-mode model of ``folder`` through the auto class ``auto``
    (``AutoModelForSeq2SeqLM`` or ``AutoModelForCausalLM``): offline, no remote code,
    eager attention (the one that returns attention weights), float32, safetensors unless
    pickle weights are allowed.

    Raises:
        CheckpointError: the weights cannot be read or do not match config.json, or they
            lack tensors the config describes.
    """
    try:
        hf, info = auto.from_pretrained(
            folder, local_files_only=True, trust_remote_code=False, attn_implementation="eager",
            use_safetensors=not load_pickle_weights or None, dtype=torch.float32,
            output_loading_info=True)
    except Exception as exc:  # a damaged or mismatched weights file, a bad config
        if "ignore_mismatched_sizes" in str(exc):  # transformers logs which tensors
            raise CheckpointError(
                f"{folder.name}: the weights' shapes do not match config.json (its d_model, "
                "heads, head width, feed-forward width or vocab_size)") from exc
        raise CheckpointError(f"{folder.name}: the model cannot be loaded "
                              f"({_short(str(exc), 200)})") from exc
    missing = sorted(info.get("missing_keys") or ())  # tied and optional ones left out
    if missing:
        raise CheckpointError(
            f"{folder.name}: the weights lack {len(missing)} tensor(s) that config.json "
            f"describes (e.g. {_short(missing[0], 80)}); transformers would fill them with "
            "random numbers. Does config.json belong to these weights (e.g. "
            "feed_forward_proj, d_kv, the layer counts)?")
    return hf.eval()


# --- the local Hugging Face cache ------------------------------------------------------------


def hub_cache_dir() -> Path:
    """The Hugging Face hub cache: ``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
    ``~/.cache/huggingface/hub`` (read at every call, as the app's tests set them)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or Path("~/.cache/huggingface")
    return Path(home).expanduser() / "hub"


def cached_models(cache_dir: Path | None = None) -> list[str]:
    """Hub names (``org/name``) of the encoder-decoder models and causal language models
    (``is_causal``) of a supported family in the local Hugging Face cache, sorted; empty
    when there is no cache.

    Uses ``huggingface_hub.scan_cache_dir``; a repository whose newest snapshot's
    config.json is unreadable or of another kind is left out.
    """
    from huggingface_hub import scan_cache_dir
    from huggingface_hub.errors import CacheNotFound

    cache_dir = hub_cache_dir() if cache_dir is None else Path(cache_dir)
    try:
        info = scan_cache_dir(cache_dir)
    except (CacheNotFound, OSError, ValueError):
        return []
    names = []
    for repo in info.repos:
        if repo.repo_type != "model" or not repo.revisions:
            continue
        newest = max(repo.revisions, key=lambda r: r.last_modified)
        try:
            data = _read_config(Path(newest.snapshot_path))
        except CheckpointError:
            continue
        if (data.get("model_type") in FAMILIES and data.get("is_encoder_decoder", True)
                or is_causal(data)):
            names.append(repo.repo_id)
    return sorted(names)


def cache_snapshot(repo_id: str, cache_dir: Path | None = None) -> Path:
    """The folder of ``repo_id``'s cached snapshot (``refs/main``), never downloading.

    Raises:
        CheckpointError: the model is not in the cache (the message says how to get it).
    """
    from huggingface_hub import snapshot_download

    cache_dir = hub_cache_dir() if cache_dir is None else Path(cache_dir)
    try:
        return Path(snapshot_download(repo_id, cache_dir=cache_dir, local_files_only=True))
    except Exception as exc:  # LocalEntryNotFoundError, a bad name, a damaged cache
        raise CheckpointError(
            f"{_short(repo_id, 80)} is not in the local Hugging Face cache ({cache_dir}). "
            f"Download it once on a connected machine with `hf download {_short(repo_id, 80)}` "
            "and copy the cache here; this app never downloads.") from exc
