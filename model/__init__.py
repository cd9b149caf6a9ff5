"""A small encoder-decoder Transformer written from "Attention Is All You Need", with
decoding that records every attention map. No Streamlit or Plotly here.

Public API::

    from model import load_pretrained
    m = load_pretrained("en-zh")          # or a folder path
    trace = m.decode("why do we work ?")  # DecodeTrace
"""

from .config import TransformerConfig
from .decoding import DecodeStep, DecodeTrace
from .errors import CheckpointError, InputError
from .translator import Translator, available_models, load_pretrained

__all__ = [
    "CheckpointError",
    "DecodeStep",
    "DecodeTrace",
    "InputError",
    "Translator",
    "TransformerConfig",
    "available_models",
    "load_pretrained",
]
