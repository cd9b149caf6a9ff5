"""A small encoder-decoder Transformer written from "Attention Is All You Need", with
decoding that records every attention map. No Streamlit or Plotly here.

Public API::

    from model import load_pretrained
    m = load_pretrained("en-zh")          # or a folder path
    trace = m.generate("why do we work ?")  # DecodeTrace
    m.generate("why do we work ?", positional="shuffled")  # a positional-encoding experiment

Packages by role, each importing only those below it (``tests/test_imports.py``):
``core`` (the Transformer, checkpoints, tokenizers) < ``decoding`` < ``backends`` (ours and
Hugging Face's, ``load_pretrained``) < ``analysis`` < ``training``; ``tasks`` (the synthetic
grammar) and ``errors`` import nothing of ours.

Teaching views (``model.analysis.internals``): ``head_internals`` (Q, K, V, scores, mask,
softmax and output of one head), ``model.analysis.batch``'s ``decode_batch`` /
``batch_matches_single`` (a real padded batch),
``pe_similarity`` and ``embedding_parts`` (the positional encodings).
"""

from .analysis.batch import BatchTrace, batch_matches_single, decode_batch
from .analysis.internals import (
    ATTENTION_KINDS,
    EmbeddingParts,
    HeadInternals,
    embedding_parts,
    head_internals,
    pe_similarity,
)
from .backends.load import available_models, load_pretrained
from .backends.translator import Translator
from .core.config import TransformerConfig
from .core.layers import POSITIONAL_MODES
from .decoding import DecodeStep, DecodeTrace, GenerationSettings
from .errors import CheckpointError, InputError

__all__ = [
    "ATTENTION_KINDS",
    "POSITIONAL_MODES",
    "BatchTrace",
    "CheckpointError",
    "DecodeStep",
    "DecodeTrace",
    "EmbeddingParts",
    "GenerationSettings",
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
