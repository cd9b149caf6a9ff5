"""What the app reads from a Hugging Face ``config.json``, checked before transformers sees it.

``config_fields`` takes the raw ``config.json`` dict (or a loaded config's attributes) of a
supported family (``hf.FAMILIES``) and returns the hyper-parameters ``hf_load`` maps onto our
``TransformerConfig``, each checked: present (under its name or one of transformers'
aliases, ``attribute_map``), an integer (not a bool, not a string) and in range; token ids
inside the vocabulary; the encoder's and decoder's head counts equal (the views stack
(L, H, ., .) maps of one H); the feed-forward activation one transformers knows. Anything
else raises ``CheckpointError`` naming the field and the value, so a broken folder never
reaches transformers' own ``ValueError`` / ``KeyError`` / ``TypeError`` (or, for a missing
field, its silent default: a T5 folder without ``d_kv`` would get 64).

Per family (Vaswani et al., 2017; Raffel et al., 2020 for T5; Xue et al., 2021 for mT5):

==========================  ===========================================================
our field                   Marian, BART, mBART, M2M100  /  T5, mT5
==========================  ===========================================================
d_model (D)                 ``d_model`` (alias ``hidden_size``), both
nhead (H)                   ``encoder_attention_heads`` (= ``decoder_attention_heads``)
                            / ``num_heads``
head_dim (Dh)               D / H (must divide) / ``d_kv`` (alias ``head_dim``): T5 v1.1,
                            Flan-T5 and mT5 have H * Dh != D (flan-t5-small: 512, 6 x 64)
num_encoder_layers          ``encoder_layers`` / ``num_layers``
num_decoder_layers          ``decoder_layers`` / ``num_decoder_layers`` (else num_layers)
dim_feedforward (F)         ``encoder_ffn_dim`` (and ``decoder_ffn_dim``) / ``d_ff``
max_len                     ``max_position_embeddings`` / none (relative positions)
activation                  ``activation_function`` / ``feed_forward_proj`` (``relu``,
                            ``gated-gelu``: T5 v1.1 and mT5's gated feed-forward; a saved
                            ``dense_act_fn`` / ``is_gated_act`` overrides what it implies)
special ids                 ``pad_token_id``, ``eos_token_id``, ``decoder_start_token_id``
                            (else the pad id), ``unk_token_id`` (else the pad id)
==========================  ===========================================================

``causal_fields`` does the same for a causal language model (``hf_causal.FAMILIES``):

==========================  ===========================================================
our field                   GPT-2  /  Llama, Mistral, Qwen2, Qwen3
==========================  ===========================================================
d_model (D)                 ``n_embd`` / ``hidden_size``
nhead (H)                   ``n_head`` / ``num_attention_heads``
num_key_value_heads         H / ``num_key_value_heads`` (else H; must divide H)
head_dim (Dh)               D / H / ``head_dim`` (else D / H)
num_layers (L)              ``n_layer`` / ``num_hidden_layers``
dim_feedforward (F)         ``n_inner`` (else 4 D) / ``intermediate_size`` (gated: 3 D F)
max_position_embeddings     ``n_positions`` / ``max_position_embeddings``
special ids                 ``eos_token_id`` (an id, or a list: each ends decoding), optional
                            ``pad_token_id`` and ``bos_token_id``
==========================  ===========================================================
"""

from __future__ import annotations

import re

from ..errors import CheckpointError
from ..errors import short_repr as _short

PRE_LN = ("t5", "mt5", "m2m_100", "mbart")  # LayerNorm before each sublayer; the rest after
RELATIVE = ("t5", "mt5")  # no position table: a bias on the scores (no max_position_embeddings)
LIMIT = 10**9  # a value above this is no model's hyper-parameter

# our name -> (the family's config.json names, first the canonical one, then aliases)
_BART_LIKE = {
    "d_model": ("d_model", "hidden_size"),
    "nhead": ("encoder_attention_heads", "num_attention_heads"),
    "decoder_heads": ("decoder_attention_heads",),
    "num_encoder_layers": ("encoder_layers", "num_hidden_layers"),
    "num_decoder_layers": ("decoder_layers",),
    "dim_feedforward": ("encoder_ffn_dim",),
    "decoder_ffn_dim": ("decoder_ffn_dim",),
    "max_position_embeddings": ("max_position_embeddings",),
}
_T5_LIKE = {
    "d_model": ("d_model", "hidden_size"),
    "nhead": ("num_heads", "num_attention_heads"),
    "head_dim": ("d_kv", "head_dim"),
    "num_encoder_layers": ("num_layers", "num_hidden_layers"),
    "dim_feedforward": ("d_ff",),
}
_COMMON = {"vocab_size": ("vocab_size",), "pad_token_id": ("pad_token_id",),
           "eos_token_id": ("eos_token_id",)}
_ACTIVATION = re.compile(r"(gated-)?([a-z0-9_]+)")  # T5's feed_forward_proj


def _present(data: dict, names: tuple[str, ...]):
    """(name, value) of the first of ``names`` in ``data`` (None counts as absent)."""
    return next(((n, data[n]) for n in names if data.get(n) is not None), (names[0], None))


def _integer(where: str, name: str, value, least: int) -> int:
    """``value`` as an int in ``least``..``LIMIT``.

    Raises:
        CheckpointError: naming ``name`` and the value (a bool, float or string is refused).
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise CheckpointError(f"{where}: {name} must be an integer, got {_short(value, 30)}")
    if not least <= value <= LIMIT:
        raise CheckpointError(f"{where}: {name} must be at least {least}"
                              f"{'' if value < least else f' and at most {LIMIT:,}'}, "
                              f"got {value}")
    return value


def _required(data: dict, where: str, names: tuple[str, ...], *, least: int,
              meaning: str) -> int:
    name, value = _present(data, names)
    if value is None:
        raise CheckpointError(f"{where} lacks {names[0]} ({meaning}); the model cannot be "
                              "opened without it")
    return _integer(where, name, value, least)


_MEANING = {
    "d_model": "the width D of the residual stream", "nhead": "the heads per layer",
    "decoder_heads": "the decoder's heads per layer", "head_dim": "the width of one head",
    "num_encoder_layers": "the encoder's layers", "num_decoder_layers": "the decoder's layers",
    "dim_feedforward": "the feed-forward width", "decoder_ffn_dim": "the decoder's "
    "feed-forward width", "max_position_embeddings": "the positions the model has",
    "vocab_size": "the vocabulary size", "pad_token_id": "the padding token's id",
    "eos_token_id": "the end-of-sentence token's id",
}
_LEAST = {"vocab_size": 5, "max_position_embeddings": 2, "pad_token_id": 0,
          "eos_token_id": 0}  # the rest: at least 1


def config_fields(data: dict, where: str) -> dict:
    """The checked hyper-parameters of a supported family's config (see the module's table).

    Args:
        data: ``config.json`` as a dict with its ``model_type`` (one of ``hf.FAMILIES``),
            or a loaded config's ``vars()``.
        where: how messages name the file, e.g. ``"opus-mt-en-zh: config.json"``.

    Returns:
        dict of ints under our names (``d_model``, ``nhead``, ``head_dim``,
        ``num_encoder_layers``, ``num_decoder_layers``, ``dim_feedforward``,
        ``max_position_embeddings``, ``vocab_size``, the four special ids) and ``gated``
        (bool: a gated feed-forward with two input matrices).

    Raises:
        CheckpointError: a field missing, not an integer, out of range or inconsistent; the
            message names the field and its value.
    """
    model_type = data["model_type"]
    t5 = model_type in RELATIVE
    spec = {**_COMMON, **(_T5_LIKE if t5 else _BART_LIKE)}
    out: dict = {key: _required(data, where, names, least=_LEAST.get(key, 1),
                                meaning=_MEANING[key])
                 for key, names in spec.items() if not (key == "eos_token_id"
                                                        and isinstance(data.get(key), list))}
    if "eos_token_id" not in out:  # a list of end ids: the app decodes with one
        ids = data["eos_token_id"]
        if len(ids) != 1:
            raise CheckpointError(f"{where}: eos_token_id must be one id, got "
                                  f"{_short(ids, 30)}; the app stops at a single </s>")
        out["eos_token_id"] = _integer(where, "eos_token_id", ids[0], 0)
    if t5:
        _t5_fields(data, where, out)
    else:
        _bart_fields(data, where, out)
    if out["d_model"] % 2:
        raise CheckpointError(f"{where}: d_model ({out['d_model']}) must be even")
    vocab = out["vocab_size"]
    for field in ("pad_token_id", "eos_token_id"):
        _inside(where, field, out[field], vocab)
    for field in ("decoder_start_token_id", "unk_token_id"):
        value = data.get(field)
        out[field] = out["pad_token_id"] if value is None else _inside(
            where, field, _integer(where, field, value, 0), vocab)
    return out


def _t5_fields(data: dict, where: str, out: dict) -> None:
    """``config_fields``' T5-family fields, into ``out``: the decoder's layers (default
    the encoder's), no position table, and the (gated) feed-forward activation.

    Raises:
        CheckpointError: a field out of range or an activation transformers lacks.
    """
    name, value = _present(data, ("num_decoder_layers",))
    out["num_decoder_layers"] = (out["num_encoder_layers"] if value is None
                                 else _integer(where, name, value, 1))
    out["max_position_embeddings"] = LIMIT  # relative positions: no table
    proj = data.get("feed_forward_proj", "relu")
    match = _ACTIVATION.fullmatch(proj) if isinstance(proj, str) else None
    _check_activation(where, "feed_forward_proj", proj, match and match.group(2))
    out["gated"] = bool(match.group(1))
    # transformers derives these two from feed_forward_proj, but a saved value wins
    act = data.get("dense_act_fn")
    if act is not None:
        _check_activation(where, "dense_act_fn", act, act if isinstance(act, str) else None)
    gated = data.get("is_gated_act")
    if gated is not None:
        if not isinstance(gated, bool):
            raise CheckpointError(f"{where}: is_gated_act must be true or false, got "
                                  f"{_short(gated, 30)}")
        out["gated"] = gated


def _bart_fields(data: dict, where: str, out: dict) -> None:
    """``config_fields``' BART-family fields (Marian, BART, mBART, M2M100), into ``out``:
    one head count for both stacks, head_dim = D / H, the activation.

    Raises:
        CheckpointError: differing head counts, D not a multiple of H, or an activation
            transformers lacks.
    """
    if out["decoder_heads"] != out["nhead"]:
        raise CheckpointError(
            f"{where}: decoder_attention_heads ({out['decoder_heads']}) differs from "
            f"encoder_attention_heads ({out['nhead']}); the app shows every layer's "
            "heads side by side and needs one head count")
    if out["d_model"] % out["nhead"]:
        raise CheckpointError(
            f"{where}: d_model ({out['d_model']}) is not a multiple of "
            f"encoder_attention_heads ({out['nhead']})")
    out["head_dim"] = out["d_model"] // out["nhead"]
    act = data.get("activation_function", "gelu")
    _check_activation(where, "activation_function", act, act if isinstance(act, str)
                      else None)
    out["gated"] = False


def _inside(where: str, field: str, value: int, vocab: int) -> int:
    """``value``, a token id, when it is below ``vocab``."""
    if value >= vocab:
        raise CheckpointError(f"{where}: {field} {value} is outside the vocabulary "
                              f"(vocab_size {vocab})")
    return value


def _check_activation(where: str, field: str, value, name: str | None) -> None:
    """``name`` must be an activation transformers has (``ACT2FN``).

    Raises:
        CheckpointError: naming ``field`` and ``value``.
    """
    from transformers.activations import ACT2FN

    if name is None or name not in ACT2FN:
        raise CheckpointError(f"{where}: {field} {_short(value, 30)} is not an activation "
                              "transformers knows (e.g. relu, gelu, gated-gelu for T5)")


# our name -> (GPT-2's config.json name, the Llama-like families'), for causal_fields
_CAUSAL = {
    "d_model": ("n_embd", "hidden_size"), "nhead": ("n_head", "num_attention_heads"),
    "num_layers": ("n_layer", "num_hidden_layers"),
    "max_position_embeddings": ("n_positions", "max_position_embeddings"),
    "vocab_size": ("vocab_size", "vocab_size"),
}


def causal_fields(data: dict, where: str) -> dict:
    """The checked hyper-parameters of a causal language model's config (the module's
    second table).

    Args:
        data: ``config.json`` as a dict with its ``model_type`` (one of
            ``hf_causal.FAMILIES``), or a loaded config's ``vars()``.
        where: how messages name the file.

    Returns:
        dict of ints under our names (``d_model``, ``nhead``, ``num_key_value_heads``,
        ``head_dim``, ``num_layers``, ``dim_feedforward``, ``max_position_embeddings``,
        ``vocab_size``, ``eos_token_id``), ``pad_token_id`` and ``bos_token_id`` (int or
        None) and ``gated`` (bool: the MLP has gate, up and down matrices).

    Raises:
        CheckpointError: a field missing, not an integer, out of range or inconsistent (H
            not a multiple of the key/value heads, D of H without a head_dim); the message
            names the field and its value.
    """
    meaning = {**_MEANING, "num_layers": "the layers"}
    gpt2 = data["model_type"] == "gpt2"  # GPT-2's names first, then their aliases
    out: dict = {key: _required(data, where, names if gpt2 else names[1:],
                                least=_LEAST.get(key, 1), meaning=meaning[key])
                 for key, names in _CAUSAL.items()}
    nhead = out["nhead"]
    kv = None if gpt2 else data.get("num_key_value_heads")
    out["num_key_value_heads"] = nhead if kv is None else _integer(
        where, "num_key_value_heads", kv, 1)
    if nhead % out["num_key_value_heads"]:
        raise CheckpointError(f"{where}: num_attention_heads ({nhead}) is not a multiple of "
                              f"num_key_value_heads ({out['num_key_value_heads']})")
    head_dim = None if gpt2 else data.get("head_dim")
    if head_dim is None and out["d_model"] % nhead:
        raise CheckpointError(f"{where}: the width ({out['d_model']}) is not a multiple of "
                              f"the heads ({nhead}) and there is no head_dim")
    out["head_dim"] = (out["d_model"] // nhead if head_dim is None
                       else _integer(where, "head_dim", head_dim, 1))
    name, inner = _present(data, ("n_inner",) if gpt2 else ("intermediate_size",))
    out["dim_feedforward"] = (4 * out["d_model"] if inner is None and gpt2
                              else _required(data, where, (name,), least=1,
                                             meaning=_MEANING["dim_feedforward"]))
    out["gated"] = not gpt2
    out["eos_token_id"] = _first_id(data, where, "eos_token_id", required=True)
    for field in ("pad_token_id", "bos_token_id"):
        out[field] = _first_id(data, where, field, required=False)
    for field in ("eos_token_id", "pad_token_id", "bos_token_id"):
        if out[field] is not None:
            _inside(where, field, out[field], out["vocab_size"])
    ends = data["eos_token_id"] if isinstance(data["eos_token_id"], list) else []
    out["eos_token_ids"] = tuple(dict.fromkeys(  # every end id, the first first
        [out["eos_token_id"], *(_inside(where, "eos_token_id",
                                        _integer(where, "eos_token_id", i, 0),
                                        out["vocab_size"]) for i in ends)]))
    return out


def _first_id(data: dict, where: str, field: str, *, required: bool) -> int | None:
    """A special token id of ``data``: an int, or a non-empty list's first (Llama 3 lists
    several end ids: ``eos_token_ids`` keeps them all), or None when absent and not
    ``required``.

    Raises:
        CheckpointError: missing when ``required``, or not an id.
    """
    value = data.get(field)
    if isinstance(value, list) and value:
        value = value[0]
    if value is None:
        if required:
            raise CheckpointError(f"{where} lacks {field} ({_MEANING.get(field, field)}); "
                                  "the model cannot be opened without it")
        return None
    return _integer(where, field, value, 0)
