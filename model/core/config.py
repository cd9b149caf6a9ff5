"""The one configuration dataclass of the Transformer (Vaswani et al., 2017, section 3)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

ATTENTION_KINDS = ("encoder", "decoder", "cross")  # encoder self, decoder self, cross


@dataclass(frozen=True)
class TransformerConfig:
    """Hyper-parameters of the encoder-decoder Transformer.

    A checkpoint stores ``config.to_dict()`` in ``config.json``; loading rebuilds it with
    ``TransformerConfig.from_dict(saved)``.

    ``head_dim`` (Dh, the width of one head's queries, keys and values) is d_model / nhead
    unless given: our own models always have H * Dh = D (the paper's d_k = d_model / h,
    section 3.2.2), and their checkpoints omit the field; a Hugging Face T5 v1.1 / Flan-T5 /
    mT5 model has its own (``d_kv``, e.g. flan-t5-small: D = 512, H = 6, Dh = 64), and each
    head's projections then map D to Dh, the heads' concatenation H * Dh back to D.

    Raises:
        ValueError: from ``__post_init__`` when a field is out of range, e.g. ``d_model``
            not divisible by ``nhead`` when ``head_dim`` is not given.
    """

    src_vocab_size: int  # V_src: rows of the source embedding table
    tgt_vocab_size: int  # V_tgt: rows of the target embedding and of the output projection
    d_model: int = 128  # D: width of every residual stream (paper: 512)
    nhead: int = 8  # H: heads per attention layer; each head has head_dim dimensions
    num_encoder_layers: int = 3  # L_enc: stacked encoder layers (paper: 6)
    num_decoder_layers: int = 3  # L_dec: stacked decoder layers (paper: 6)
    dim_feedforward: int = 512  # inner width of the position-wise feed-forward net (paper: 2048)
    dropout: float = 0.1  # on sublayer outputs, embeddings+PE and attention weights (paper: 0.1)
    max_len: int = 64  # longest sequence (in tokens) the positional table covers
    pad_id: int = 0  # <pad>: padding, never attended to
    unk_id: int = 1  # <unk>: any token outside the vocabulary
    bos_id: int = 2  # <s>: first decoder input
    eos_id: int = 3  # </s>: end of a sequence
    norm_first: bool = False  # False = post-LN as in the paper: x = LayerNorm(x + Sublayer(x))
    head_dim: int | None = None  # Dh per head; None (our models) = d_model // nhead

    def __post_init__(self) -> None:
        if self.head_dim is None:
            if self.d_model <= 0 or self.nhead <= 0 or self.d_model % self.nhead:
                raise ValueError(f"d_model ({self.d_model}) must be a positive multiple of "
                                 f"nhead ({self.nhead})")
            object.__setattr__(self, "head_dim", self.d_model // self.nhead)  # frozen
        elif min(self.d_model, self.nhead, self.head_dim) <= 0:
            raise ValueError(f"d_model ({self.d_model}), nhead ({self.nhead}) and head_dim "
                             f"({self.head_dim}) must be positive")
        if self.d_model % 2:
            raise ValueError(f"d_model ({self.d_model}) must be even for sin/cos pairs")
        for name in ("src_vocab_size", "tgt_vocab_size"):
            if getattr(self, name) <= 4:
                raise ValueError(f"{name} must exceed the 4 special tokens")
        if min(self.num_encoder_layers, self.num_decoder_layers, self.dim_feedforward) <= 0:
            raise ValueError("layer counts and dim_feedforward must be positive")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.max_len < 2:
            raise ValueError(f"max_len must be at least 2, got {self.max_len}")

    @property
    def inner_dim(self) -> int:
        """H * Dh: the width of the heads' concatenation (= d_model for our models)."""
        return self.nhead * self.head_dim

    def to_dict(self) -> dict:
        """The fields as a JSON-serialisable dict (what ``config.json`` holds); ``head_dim``
        only when it is not d_model / nhead, so our models' configs stay as they were."""
        data = asdict(self)
        if self.nhead * self.head_dim == self.d_model:
            data.pop("head_dim")
        return data

    @classmethod
    def from_dict(cls, data: dict) -> TransformerConfig:
        """Rebuild from ``to_dict()`` output.

        Raises:
            ValueError: unknown or missing fields, or values out of range.
        """
        if not isinstance(data, dict):
            raise ValueError(f"config must be a JSON object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown config fields: {unknown}")
        try:
            return cls(**data)
        except TypeError as exc:  # a missing required field
            raise ValueError(str(exc)) from exc


def layer_counts(config: TransformerConfig) -> dict[str, int]:
    """Layers per attention kind (``ATTENTION_KINDS``) of a ``TransformerConfig``."""
    return {"encoder": config.num_encoder_layers, "decoder": config.num_decoder_layers,
            "cross": config.num_decoder_layers}
