"""A small encoder-decoder Transformer written from "Attention Is All You Need", with
decoding that records every attention map. No Streamlit or Plotly here.

Public API::

    from model import load_pretrained
    m = load_pretrained("en-zh")          # or a folder path
    trace = m.generate("why do we work ?")  # DecodeTrace
    m.generate("why do we work ?", positional="shuffled")  # a positional-encoding experiment

Teaching views (``model.internals``): ``head_internals`` (Q, K, V, scores, mask, softmax and
output of one head), ``decode_batch`` / ``batch_matches_single`` (a real padded batch),
``pe_similarity`` and ``embedding_parts`` (the positional encodings).
"""

from .config import TransformerConfig
from .decoding import DecodeStep, DecodeTrace
from .errors import CheckpointError, InputError
from .internals import (
    ATTENTION_KINDS,
    BatchTrace,
    EmbeddingParts,
    HeadInternals,
    batch_matches_single,
    decode_batch,
    embedding_parts,
    head_internals,
    pe_similarity,
)
from .layers import POSITIONAL_MODES
from .translator import Translator, available_models, load_pretrained

__all__ = [
    "ATTENTION_KINDS",
    "POSITIONAL_MODES",
    "BatchTrace",
    "CheckpointError",
    "DecodeStep",
    "DecodeTrace",
    "EmbeddingParts",
    "HeadInternals",
    "InputError",
    "Translator",
    "TransformerConfig",
    "available_models",
    "batch_matches_single",
    "decode_batch",
    "embedding_parts",
    "head_internals",
    "load_pretrained",
    "pe_similarity",
]
