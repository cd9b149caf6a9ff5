"""A tiny decoder-only prefix language model over the default model's real English tokenizer
and Chinese characters, with random weights, saved as one of our folders: what the tests of
the decoder-only backend (``model.backends.one_stack``) and of its views open. Only
equalities with the network's own forward pass are asserted of it, never its translations.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from model.core.checkpoint import save_checkpoint
from model.core.config import DecoderOnlyConfig
from model.core.decoder_only import DecoderOnlyTransformer
from model.core.prefix_lm import PrefixCodec
from model.core.subword import load_tokenizer
from model.core.vocab import Vocab

EVERYDAY = Path(__file__).resolve().parents[1] / "pretrained" / "en-zh-everyday"


def tiny_prefix_lm(folder: Path, *, max_len: int = 40, seed: int = 3) -> Path:
    """Write the tiny model (d_model 32, 4 heads, 2 layers, ``max_len`` positions) into
    ``folder`` and return it."""
    zh = Vocab(json.loads((EVERYDAY / "tgt_vocab.json").read_text(encoding="utf-8")))
    codec = PrefixCodec(load_tokenizer(EVERYDAY / "src_tokenizer.json"), zh)
    torch.manual_seed(seed)
    model = DecoderOnlyTransformer(DecoderOnlyConfig(
        vocab_size=codec.layout.vocab_size, sep_id=codec.layout.sep_id, d_model=32, nhead=4,
        num_layers=2, dim_feedforward=64, dropout=0.0, max_len=max_len))
    save_checkpoint(folder, model.eval(), None, zh, card={"task": "en-zh"},
                    src_tokenizer=codec.tokenizer)
    return folder
