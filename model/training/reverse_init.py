"""Start a model of the reverse direction from a trained one: the Chinese -> English model
from the English -> Chinese one, each part put where the same language is read or written.

    python -m model.training.train --recipe zh-en-classroom --out runs/zh-en
    (the recipe's ``reverse_of = "pretrained/en-zh-everyday"``)

What goes where (``REVERSED``; pre-LN layers, ``core.layers``):

- the vocabularies: the old target's Chinese characters become the source vocabulary, the
  old source's byte-level BPE tokenizer the target's (same ids, so rows copy one to one);
- embeddings: ``src_embed`` <- old ``tgt_embed`` (Chinese), ``tgt_embed`` <- old
  ``src_embed`` (English); the new ``generator`` (English pieces) <- old ``src_embed``
  rows (the output layer and the input embedding of the same pieces, as Press and Wolf
  2017 tie them), bias 0;
- encoder layer i <- old decoder layer i's self-attention, feed-forward and their norms
  (the layers that read Chinese), ``encoder_norm`` <- old ``decoder_norm``;
- decoder layer i <- old encoder layer i's self-attention, feed-forward and their norms
  (the layers that read English); its cross-attention <- the old decoder's (the only
  attention between the two languages there is), ``decoder_norm`` <- old ``encoder_norm``.

Training then fits the new roles (a causal decoder over English, a bidirectional encoder
over Chinese). Warm-starting a translation model from one of another direction or
language pair is transfer learning as in Zoph et al. 2016 ("Transfer Learning for
Low-Resource Neural Machine Translation").
"""

from __future__ import annotations

import re
from pathlib import Path

import torch

from ..core.checkpoint import load_checkpoint
from ..core.subword import SRC_TOKENIZER, TGT_TOKENIZER
from ..core.transformer import Transformer

# new (zh-en) parameter name pattern -> old (en-zh) one; {i} a layer index
REVERSED = {
    "src_embed.lut.weight": "tgt_embed.lut.weight",
    "tgt_embed.lut.weight": "src_embed.lut.weight",
    "generator.weight": "src_embed.lut.weight",
    "encoder_norm.{p}": "decoder_norm.{p}",
    "decoder_norm.{p}": "encoder_norm.{p}",
    "encoder_layers.{i}.self_attn.{p}": "decoder_layers.{i}.self_attn.{p}",
    "encoder_layers.{i}.feed_forward.{p}": "decoder_layers.{i}.feed_forward.{p}",
    "encoder_layers.{i}.sublayer1.{p}": "decoder_layers.{i}.sublayer1.{p}",
    "encoder_layers.{i}.sublayer2.{p}": "decoder_layers.{i}.sublayer3.{p}",
    "decoder_layers.{i}.self_attn.{p}": "encoder_layers.{i}.self_attn.{p}",
    "decoder_layers.{i}.feed_forward.{p}": "encoder_layers.{i}.feed_forward.{p}",
    "decoder_layers.{i}.sublayer1.{p}": "encoder_layers.{i}.sublayer1.{p}",
    "decoder_layers.{i}.sublayer3.{p}": "encoder_layers.{i}.sublayer2.{p}",
    "decoder_layers.{i}.cross_attn.{p}": "decoder_layers.{i}.cross_attn.{p}",
    "decoder_layers.{i}.sublayer2.{p}": "decoder_layers.{i}.sublayer2.{p}",
}


def old_name(new: str) -> str | None:
    """The old model's parameter that initialises ``new`` (``REVERSED``), or None (the
    ``generator.bias``: zeros)."""
    for pattern, old in _PATTERNS:
        if m := pattern.fullmatch(new):
            return old.format(**m.groupdict())
    return None


_PATTERNS = [(re.compile(re.escape(k).replace(r"\{i\}", r"(?P<i>\d+)")
                         .replace(r"\{p\}", r"(?P<p>.+)")), v) for k, v in REVERSED.items()]


def start_reversed(old: Path, state_dir: Path) -> None:
    """Seed ``state_dir`` with ``old``'s vocabularies swapped: its Chinese target
    vocabulary as the source vocabulary, its BPE source tokenizer as the target one, so
    that ``pairs.build_vocabularies`` reloads them. Nothing is copied when ``state_dir``
    has them already (a resumed run).

    Raises:
        FileNotFoundError: ``old`` lacks ``src_tokenizer.json`` or ``tgt_vocab.json``.
    """
    old, state_dir = Path(old), Path(state_dir)
    if (state_dir / TGT_TOKENIZER).exists():
        return
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / TGT_TOKENIZER).write_bytes((old / SRC_TOKENIZER).read_bytes())
    (state_dir / "src_vocab.json").write_bytes((old / "tgt_vocab.json").read_bytes())


@torch.no_grad()
def init_reversed(model: Transformer, old: Path) -> None:
    """Copy ``old``'s weights into the reverse-direction ``model`` (``REVERSED``).

    Raises:
        CheckpointError: ``old`` does not load.
        ValueError: a size that differs (vocabularies, d_model, layers, feed-forward).
    """
    old_state = load_checkpoint(old).model.state_dict()
    for name, param in model.state_dict().items():
        source = old_name(name)
        if source is None and name == "generator.bias":
            param.zero_()
            continue
        if source is None or source not in old_state:
            raise ValueError(f"{name}: no parameter of {old} to start it from")
        value = old_state[source]
        if value.shape != param.shape:
            raise ValueError(f"{name} {tuple(param.shape)} cannot start from {old}'s "
                             f"{source} {tuple(value.shape)}")
        param.copy_(value)
