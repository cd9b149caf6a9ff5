"""The configuration dataclasses of our Transformers: ``TransformerConfig`` for the
encoder-decoder (Vaswani et al., 2017, section 3) and ``DecoderOnlyConfig`` for the
decoder-only stack (Radford et al., 2018 and 2019; Liu et al., 2018). ``config_from_dict``
reads either from a ``config.json``: a decoder-only one says ``"architecture":
"decoder-only"``, an encoder-decoder one (every checkpoint made before it) says nothing."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

ATTENTION_KINDS = ("encoder", "decoder", "cross")  # encoder self, decoder self, cross
ARCHITECTURES = ("encoder-decoder", "decoder-only")


def _check_geometry(config) -> None:
    """The checks both configs share: head width, even d_model, sizes, dropout, max_len.
    Fills ``head_dim`` = d_model / nhead when it is None (the dataclass is frozen).

    Raises:
        ValueError: a field out of range.
    """
    if config.head_dim is None:
        if config.d_model <= 0 or config.nhead <= 0 or config.d_model % config.nhead:
            raise ValueError(f"d_model ({config.d_model}) must be a positive multiple of "
                             f"nhead ({config.nhead})")
        object.__setattr__(config, "head_dim", config.d_model // config.nhead)  # frozen
    elif min(config.d_model, config.nhead, config.head_dim) <= 0:
        raise ValueError(f"d_model ({config.d_model}), nhead ({config.nhead}) and head_dim "
                         f"({config.head_dim}) must be positive")
    if config.d_model % 2:
        raise ValueError(f"d_model ({config.d_model}) must be even for sin/cos pairs")
    if config.dim_feedforward <= 0:
        raise ValueError("dim_feedforward must be positive")
    if not 0.0 <= config.dropout < 1.0:
        raise ValueError(f"dropout must be in [0, 1), got {config.dropout}")
    if config.max_len < 2:
        raise ValueError(f"max_len must be at least 2, got {config.max_len}")


class _ConfigJSON:
    """``to_dict`` and ``from_dict``, shared by the config dataclasses."""

    def to_dict(self) -> dict:
        """The fields as a JSON-serialisable dict (what ``config.json`` holds, with
        ``architecture`` for a decoder-only model); ``head_dim`` only when it is not
        d_model / nhead, so our models' configs stay as they were."""
        data = asdict(self)
        if self.nhead * self.head_dim == self.d_model:
            data.pop("head_dim")
        return data

    @classmethod
    def from_dict(cls, data: dict):
        """Rebuild an instance of ``cls`` from ``to_dict()`` output.

        Raises:
            ValueError: not a dict, unknown or missing fields, or values out of range.
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


@dataclass(frozen=True)
class TransformerConfig(_ConfigJSON):
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
        _check_geometry(self)
        for name in ("src_vocab_size", "tgt_vocab_size"):
            if getattr(self, name) <= 4:
                raise ValueError(f"{name} must exceed the 4 special tokens")
        if min(self.num_encoder_layers, self.num_decoder_layers) <= 0:
            raise ValueError("layer counts must be positive")

    architecture = "encoder-decoder"  # not a field: config.json carries it only when decoder-only

    @property
    def inner_dim(self) -> int:
        """H * Dh: the width of the heads' concatenation (= d_model for our models)."""
        return self.nhead * self.head_dim


class OneStackNames:
    """What decoding reads of any model, by the encoder-decoder's names (Hugging Face's
    configs alias names the same way, ``attribute_map``), for a decoder-only config with
    ``num_layers``, ``vocab_size``, ``nhead`` and ``head_dim``: the one stack is the
    decoder (its L layers), with no encoder, and writes from the one vocabulary.
    ``DecoderOnlyConfig`` and ``backends.hf_causal.CausalConfig`` offer them."""

    @property
    def num_decoder_layers(self) -> int:
        """L: the stack's layers."""
        return self.num_layers

    @property
    def num_encoder_layers(self) -> int:
        """0: there is no encoder."""
        return 0

    @property
    def tgt_vocab_size(self) -> int:
        """V: what the model writes from (the one vocabulary)."""
        return self.vocab_size

    @property
    def src_vocab_size(self) -> int:
        """V: what the prompt is read in (the one vocabulary)."""
        return self.vocab_size

    @property
    def inner_dim(self) -> int:
        """H * Dh: the width of the heads' concatenation."""
        return self.nhead * self.head_dim


@dataclass(frozen=True)
class DecoderOnlyConfig(_ConfigJSON, OneStackNames):
    """Hyper-parameters of the decoder-only Transformer (``DecoderOnlyTransformer``): one
    stack of masked self-attention + feed-forward layers over one sequence, as GPT
    (Radford et al., 2018, "Improving Language Understanding by Generative Pre-Training";
    2019, "Language Models are Unsupervised Multitask Learners") and the prefix language
    model of Liu et al. (2018, "Generating Wikipedia by Summarizing Long Sequences"): the
    source, a separator, then the target, all in one sequence.

    A checkpoint stores ``config.to_dict()`` in ``config.json``, ``"architecture":
    "decoder-only"`` included; ``config_from_dict`` (or ``DecoderOnlyConfig.from_dict``)
    rebuilds it. Field names and defaults follow ``TransformerConfig`` where they mean the
    same; ``num_layers`` is L, ``vocab_size`` V (one vocabulary for the whole sequence).
    ``sep_id`` is the separator of a prefix language model (``core.prefix_lm``: the id
    after the English ids, where the prompt ends and the scored continuation begins); it
    lives here, in ``config.json``, because generation must append it to every prompt and
    the views must know where the prompt ends, and both read only the config.

    Raises:
        ValueError: from ``__post_init__`` when a field is out of range (as
            ``TransformerConfig``), or ``architecture`` is not ``"decoder-only"``.
    """

    vocab_size: int  # V: rows of the token embedding and of the output projection
    d_model: int = 128  # D: width of the residual stream
    nhead: int = 8  # H: heads per self-attention layer
    num_layers: int = 6  # L: stacked layers (encoder 3 + decoder 3 in the default model)
    dim_feedforward: int = 512  # inner width of the position-wise feed-forward net
    dropout: float = 0.1  # on sublayer outputs, embeddings+PE and attention weights
    max_len: int = 128  # longest sequence N = S + T the positional table covers
    pad_id: int = 0  # <pad>: padding, never attended to
    unk_id: int = 1  # <unk>
    bos_id: int = 2  # <s>
    eos_id: int = 3  # </s>
    norm_first: bool = True  # pre-LN, as GPT-2 (section 2.3); False = post-LN as GPT-1
    tie_word_embeddings: bool = True  # output projection = token embedding^T (HF's name)
    head_dim: int | None = None  # Dh per head; None = d_model // nhead
    architecture: str = "decoder-only"  # what config.json says; the only value allowed
    sep_id: int | None = None  # <sep> between prompt and continuation (prefix_lm.py); None
    # = a plain language model with no separator

    def __post_init__(self) -> None:
        if self.architecture != "decoder-only":
            raise ValueError(f"architecture must be 'decoder-only', got {self.architecture!r}")
        _check_geometry(self)
        if self.vocab_size <= 4:
            raise ValueError("vocab_size must exceed the 4 special tokens")
        if self.num_layers <= 0:
            raise ValueError("num_layers must be positive")
        if self.sep_id is not None and not 4 <= self.sep_id < self.vocab_size:
            raise ValueError(f"sep_id ({self.sep_id}) must be a non-special id below "
                             f"vocab_size ({self.vocab_size})")


def config_from_dict(data: dict) -> TransformerConfig | DecoderOnlyConfig:
    """The config a ``config.json`` describes: ``DecoderOnlyConfig`` when its
    ``architecture`` is ``"decoder-only"``, else ``TransformerConfig`` (whose dicts carry no
    ``architecture``; ``"encoder-decoder"`` is accepted and dropped).

    Raises:
        ValueError: not a dict, an unknown architecture, unknown or missing fields, or values
            out of range.
    """
    if not isinstance(data, dict):
        raise ValueError(f"config must be a JSON object, got {type(data).__name__}")
    arch = data.get("architecture", "encoder-decoder")
    if arch not in ARCHITECTURES:
        raise ValueError(f"architecture must be one of {ARCHITECTURES}, got {arch!r}")
    if arch == "decoder-only":
        return DecoderOnlyConfig.from_dict(data)
    return TransformerConfig.from_dict({k: v for k, v in data.items() if k != "architecture"})


def layer_counts(config: TransformerConfig | DecoderOnlyConfig) -> dict[str, int]:
    """Layers per attention kind (``ATTENTION_KINDS``): a decoder-only model's L layers are
    all ``"decoder"`` (self-attention over the one sequence); it has no encoder and no
    cross-attention (0 layers of those)."""
    if config.architecture == "decoder-only":
        return {"encoder": 0, "decoder": config.num_layers, "cross": 0}
    return {"encoder": config.num_encoder_layers, "decoder": config.num_decoder_layers,
            "cross": config.num_decoder_layers}


def end_ids(config) -> frozenset[int]:
    """The ids where decoding stops: a config's ``eos_ids`` (a Hugging Face causal model
    may list several, as ``generate()`` stops at any), else its one ``eos_id``."""
    return frozenset(getattr(config, "eos_ids", ()) or (config.eos_id,))


def kv_head_of(nhead: int, num_key_value_heads: int) -> tuple[int, ...]:
    """Grouped-query attention (Ainslie et al. 2023, "GQA: Training Generalized Multi-Query
    Transformer Models from Multi-Head Checkpoints"): the key/value head each of the H query
    heads reads, as Hugging Face's ``repeat_kv`` lays them out: query head h reads key/value
    head h // (H / Hkv), so heads 0 .. H/Hkv - 1 share the first. (H,) 0-based indices;
    every head its own when Hkv = H.

    Raises:
        ValueError: Hkv not a positive divisor of H.
    """
    if not (0 < num_key_value_heads <= nhead and nhead % num_key_value_heads == 0):
        raise ValueError(f"num_key_value_heads ({num_key_value_heads}) must divide nhead "
                         f"({nhead})")
    group = nhead // num_key_value_heads
    return tuple(h // group for h in range(nhead))
