"""Hugging Face encoder-decoder models as a backend: the parts (``parts``) an
``AutoModelForSeq2SeqLM`` and its tokenizer plug into ``translator.Translator``, so greedy,
beam, sampling, forced prefixes, teacher forcing and every view run through the same code
as for our models, and the traces are the same type.

- ``HFSeq2Seq`` wraps the model (Marian, BART / mBART, T5 / mT5, M2M100 / NLLB) with the
  calls that ``model.decoding`` makes of our ``Transformer``: ``encode``, one ``decode``
  step with a key/value cache (Hugging Face's ``past_key_values``), ``reorder_cache`` and
  one layer's ``attention``.
- ``HFInternals``: the masks, the model's own positions (a table, or T5's relative
  position bias), and one head's inputs and the embeddings taken by hooks (``hf_hooks``).
- The tokenizer's two sides are ``hf_tokenizer.HFSource`` and ``hf_tokenizer.HFTarget``.
- ``build_translator`` puts them together with a ``ModelInfo`` from the model's configs;
  ``hf_load.load_hf`` calls it.

What ``generate()`` takes from the model's generation config is applied the same way:
``bad_words_ids`` of one token are banned, ``forced_bos_token_id`` (or the target language
of a multilingual model) is forced first, ``forced_eos_token_id`` is forced at the length
limit (``HFTarget``), and ``early_stopping`` governs beam search (``ModelInfo``).

Attention weights come from ``attn_implementation="eager"``, the only implementation that
returns them; ``output_attentions=True`` gives per layer (B, H, Tq, Tk) arrays named as in
``Seq2SeqLMOutput`` (``encoder_attentions``, ``decoder_attentions``, ``cross_attentions``).

Loading is ``model.backends.hf_load`` (offline and safe: ``local_files_only=True``, never
``trust_remote_code``; weights from safetensors, pickle weights only when allowed).

Shape letters: B batch, S source length, T target length, L layers, H heads, D d_model,
V vocabulary size. Masks are boolean, True = blocked.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

import numpy as np
import torch

from ..core.config import TransformerConfig
from ..core.masks import mask_views
from ..core.transformer import DecoderOutput, EncoderOutput
from ..decoding import DecodeTrace
from ..errors import InputError
from ..errors import short_repr as _short
from . import hf_hooks
from .hf_tokenizer import HFSource, HFTarget, PieceLabels, TokenizerTable, languages
from .records import EmbeddingParts, HeadInputs, ModelInfo
from .translator import Translator, card_examples, trained_source_tokens

# model_type -> how the family encodes positions (``ModelInfo.positional_scheme``):
# "sinusoidal-halves" (Marian, M2M100: sin in the first half of the dimensions, cos in the
# second, not interleaved), "learned" (BART: a trained table whose row p + 2 serves position
# p) or "relative" (T5: a learned bias per head and relative-distance bucket on the scores).
FAMILIES = {
    "marian": "sinusoidal-halves", "m2m_100": "sinusoidal-halves",
    "bart": "learned", "mbart": "learned", "t5": "relative", "mt5": "relative",
}
MAX_TOKENS = 128  # the longest source or output the app decodes with a Hugging Face model
FIXED_POSITIONS = ("A Hugging Face model keeps the positions it was trained with; positional "
                   "experiments need one of our own models.")


def build_translator(model: HFSeq2Seq, tokenizer, card: dict, *, name: str = "",
                     where: str = "") -> Translator:
    """A Hugging Face model (``HFSeq2Seq``) and its tokenizer as a ``Translator``, with what
    the model's configs say (``model_info``); ``where``: the folder it was read from (a
    cache's path names the model, its folder only a snapshot hash), default ``name``."""
    lock = threading.RLock()  # the tokenizer keeps state: one call at a time
    c = model.config
    vocab = TokenizerTable(tokenizer, c.tgt_vocab_size)  # one table for both sides
    piece_labels = PieceLabels(tokenizer, lock)
    lang_ids = languages(tokenizer)
    generation = model.hf.generation_config
    info = model_info(model, card, vocab, languages=tuple(lang_ids), name=where or name)
    shared = dict(tokenizer=tokenizer, lock=lock, vocab=vocab, piece_labels=piece_labels)
    return Translator(
        model=model, source_side=HFSource(**shared, eos_id=c.eos_id),
        target=HFTarget(**shared, config=c, generation=generation, lang_ids=lang_ids),
        internals=HFInternals(model, vocab), info=info, card=card, name=name)


def pair_of(name: str) -> tuple[str, str]:
    """The (source, target) languages an OPUS-MT name or path spells
    (``Helsinki-NLP/opus-mt-zh-en``, a cache's ``models--Helsinki-NLP--opus-mt-zh-en/
    snapshots/<hash>`` -> ``("zh", "en")``), else ``("", "")``: not known."""
    for part in reversed(re.split(r"[/\\]|--", str(name))):
        if m := OPUS_PAIR.fullmatch(part):
            return m.group(1), m.group(2)
    return "", ""


OPUS_PAIR = re.compile(r"opus-mt-([a-z]{2,3})-([a-z]{2,3})")


def model_info(model: HFSeq2Seq, card: dict, vocab: TokenizerTable, *,
               languages: tuple[str, ...], name: str = "") -> ModelInfo:
    """What the model's configs say: its family and positions (``FAMILIES``), languages
    (a multilingual model's codes; an OPUS-MT model's pair from its ``name``,
    ``pair_of``), task prefixes (``task_specific_params``), length limit and
    ``early_stopping``."""
    source_language, target_language = pair_of(name)
    gen, c = model.hf.generation_config, model.config
    limit = gen.max_new_tokens or (gen.max_length - 1 if gen.max_length else None)
    params = getattr(model.hf.config, "task_specific_params", None) or {}
    return ModelInfo(
        backend="huggingface", model_type=model.model_type, subword=True,
        positional_scheme=FAMILIES[model.model_type], languages=languages,
        task_prefixes={name: p["prefix"] for name, p in params.items()
                       if isinstance(p, dict) and isinstance(p.get("prefix"), str)
                       and p["prefix"]},
        examples=card_examples(card), eos_token=vocab.itos[c.eos_id],
        max_source_words=c.max_len - 1,
        # generate()'s length limit: max_new_tokens, else max_length minus the start
        # token (transformers' default max_length is 20), at most max_len - 1.
        default_max_new_tokens=max(1, min(c.max_len - 1, limit or c.max_len - 1)),
        early_stopping=gen.early_stopping is True,
        trained_source_tokens=trained_source_tokens(card),
        source_language=source_language, target_language=target_language)


class HFSeq2Seq:
    """An ``AutoModelForSeq2SeqLM`` with the interface ``model.decoding`` uses.

    Read-only after construction and shared by every caller: the cache lives in each
    call's result (``DecoderOutput.past_key_values`` is Hugging Face's
    ``EncoderDecoderCache``).

    Attributes:
        hf: the eval-mode Hugging Face model (eager attention).
        config: its hyper-parameters as a ``TransformerConfig`` (``bos_id`` is the
            ``decoder_start_token_id``; ``max_len`` is capped at ``MAX_TOKENS``).
        model_type: ``hf.config.model_type``.
    """

    def __init__(self, hf, config: TransformerConfig) -> None:
        self.hf, self.config = hf, config
        self.model_type = hf.config.model_type

    @staticmethod
    def _fixed_positions(pe_table) -> None:
        if pe_table is not None:
            raise InputError(FIXED_POSITIONS)

    def encode(self, src_ids: torch.Tensor, pe_table: None = None) -> EncoderOutput:
        """Encode (B, S) source ids, right-padded with ``pad_id``.

        Returns:
            EncoderOutput: memory (B, S, D), per-layer attentions (B, H, S, S), the key
            padding mask (B, S).

        Raises:
            InputError: a ``pe_table`` (positional experiments are for our models only).
        """
        self._fixed_positions(pe_table)
        key_padding_mask = src_ids == self.config.pad_id  # (B, S)
        out = self.hf.get_encoder()(input_ids=src_ids, attention_mask=(~key_padding_mask).long(),
                                    output_attentions=True, return_dict=True)
        return EncoderOutput(out.last_hidden_state, tuple(out.attentions), key_padding_mask)

    def decode(self, tgt_ids: torch.Tensor, memory: torch.Tensor,
               memory_key_padding_mask: torch.Tensor | None = None, *, past_key_values=None,
               pe_table: None = None) -> DecoderOutput:
        """Run the decoder over ``tgt_ids`` (B, T): all positions (teacher forcing), or with
        the ``cache`` of the previous call only the new ones, as ``generate()`` does.

        Returns:
            DecoderOutput: logits (B, T, V), per-layer decoder self-attentions
            (B, H, T, T_all) and cross-attentions (B, H, T, S), and the cache
            (``past_key_values``) covering every position so far.
        """
        from transformers.modeling_outputs import BaseModelOutput

        self._fixed_positions(pe_table)
        enc_mask = None if memory_key_padding_mask is None else (~memory_key_padding_mask).long()
        out = self.hf(encoder_outputs=BaseModelOutput(last_hidden_state=memory),
                      attention_mask=enc_mask, decoder_input_ids=tgt_ids,
                      past_key_values=past_key_values,
                      use_cache=True, output_attentions=True, return_dict=True)
        return DecoderOutput(out.logits, tuple(out.decoder_attentions),
                             tuple(out.cross_attentions), past_key_values=out.past_key_values)

    @staticmethod
    def reorder_cache(cache, index: torch.Tensor):
        """Keep (and duplicate) beams ``index`` (n,) of an ``EncoderDecoderCache``: the
        cache Hugging Face's beam search reorders, in place; returns it."""
        cache.reorder_cache(index)
        return cache

    def num_parameters(self) -> int:
        """Number of parameters (shared embeddings counted once)."""
        return sum(p.numel() for p in self.hf.parameters())

    def attention(self, kind: str, layer: int):
        """The attention module of ``kind`` (``encoder``, ``decoder``, ``cross``) in
        ``layer``, and the names of its query, key and value projections."""
        if self.model_type in ("t5", "mt5"):
            stack = self.hf.encoder if kind == "encoder" else self.hf.decoder
            block = stack.block[layer].layer
            module = block[1].EncDecAttention if kind == "cross" else block[0].SelfAttention
            return module, ("q", "k", "v")
        stack = self.hf.get_encoder() if kind == "encoder" else self.hf.get_decoder()
        lay = stack.layers[layer]
        module = lay.encoder_attn if kind == "cross" else lay.self_attn
        return module, ("q_proj", "k_proj", "v_proj")


class HFInternals:
    """What the views and the analysis recompute of a Hugging Face model
    (``parts.Internals``): masks, the model's own positions (no positional experiments),
    and one head's inputs and the embeddings by hooks on its own modules (``hf_hooks``).

    Attributes:
        model: the ``HFSeq2Seq``; config: its ``TransformerConfig``; vocab: the
            tokenizer's table; relative: True for T5's relative position bias
            (``FAMILIES``), which adds no position vectors.
    """

    def __init__(self, model: HFSeq2Seq, vocab: TokenizerTable) -> None:
        self.model, self.config, self.vocab = model, model.config, vocab
        self.relative = FAMILIES[model.model_type] == "relative"

    def mask_views(self, src_tokens: list[str], tgt_tokens: list[str], pad: int = 0
                   ) -> dict[str, np.ndarray]:
        """The masks for a sentence pair right-padded with ``pad`` ``<pad>`` tokens on both
        sides (``masks.mask_views``); padding is known by position, since some models
        start decoding with their ``<pad>`` token."""
        return mask_views([1] * len(src_tokens) + [0] * pad, [1] * len(tgt_tokens) + [0] * pad,
                          pad_id=0)

    def pe_tables(self, src_len: int, positional: str = "normal", positional_seed: int = 0):
        """(None, None): a Hugging Face model keeps its own positions.

        Raises:
            InputError: any experiment other than ``"normal"``.
        """
        if positional != "normal":
            raise InputError(FIXED_POSITIONS)
        return None, None

    def positional_encoding(self, length: int, side: str = "source") -> np.ndarray:
        """The vectors the encoder (``side="source"``) or decoder (``"target"``) adds at
        positions 0..length-1: (length, D) float32, read from the model's own table
        (Marian's sinusoidal rows from row 0; M2M100's from row padding_idx + 1 = 2, so its
        first token gets sin(2w), cos(2w); BART's learned rows from row 2, a table per side).

        Raises:
            InputError: a relative-position model (T5 adds no vectors; see
                ``relative_position_bias``), or ``length`` outside 1..max_len.
        """
        if not 1 <= length <= self.config.max_len:
            raise InputError(f"length must be in [1, {self.config.max_len}], got {length}")
        if self.relative:
            raise InputError("T5 adds no position vectors: it adds a learned bias per head to "
                             "the attention scores (relative_position_bias).")
        stack = self.model.hf.get_encoder() if side == "source" else self.model.hf.get_decoder()
        table = stack.embed_positions
        weight = getattr(table, "weights", None)
        weight = table.weight if weight is None else weight  # M2M100 keeps a buffer
        # M2M100 numbers positions from padding_idx + 1 (its table's row 0 is never used);
        # BART's learned table has an offset of 2; Marian starts at row 0.
        offset = (table.padding_idx + 1 if weight is getattr(table, "weights", None)
                  else getattr(table, "offset", 0))
        return weight[offset: offset + length].detach().float().numpy().copy()

    def relative_position_bias(self, q_len: int, k_len: int, side: str = "encoder"
                               ) -> np.ndarray | None:
        """T5's position bias (H, q_len, k_len) float32 that layer 0 of the encoder
        (bidirectional buckets) or the decoder (causal buckets) adds to every layer's
        scores: bias[h, i, j] = table[bucket(j - i), h] (Raffel et al., 2020, section 2.1);
        None for a model that adds position vectors instead (not ``relative``).

        Raises:
            InputError: an unknown side, or a length outside 1..max_len.
        """
        if not self.relative:
            return None
        if side not in ("encoder", "decoder"):
            raise InputError(f"side must be encoder or decoder, got {_short(side, 20)}")
        for n in (q_len, k_len):
            if not 1 <= n <= self.config.max_len:
                raise InputError(f"lengths must be in [1, {self.config.max_len}], got {n}")
        module, _ = self.model.attention(side, 0)
        with torch.inference_mode():
            bias = module.compute_bias(q_len, k_len)  # (1, H, q_len, k_len)
        return bias[0].float().numpy().copy()

    def head_inputs(self, trace: DecodeTrace, kind: str, *, layer: int, head: int
                    ) -> HeadInputs:
        """One head's inputs, recorded by hooks during one teacher-forced pass
        (``hf_hooks.head_inputs``): x_q (Tq, D), x_k (Tk, D), the (q, k, v) projections,
        the scaling and T5's position bias (Tq, Tk) or None."""
        return hf_hooks.head_inputs(self.model, trace, kind, layer=layer, head=head,
                                    relative=self.relative)

    def encoder_sublayers(self, trace: DecodeTrace) -> None:
        """None: the sublayers of a Hugging Face model are not taken apart (each family
        names and orders them its own way; the lesson says so)."""
        return None

    def embedding_parts(self, tokens: Sequence[str], side: str, *, positional: str = "normal",
                        positional_seed: int = 0) -> EmbeddingParts:
        """The scaled token embeddings and the position vectors the model adds for T
        tokens (``hf_hooks.embedding_parts``); a Hugging Face model has no positional
        experiments.

        Raises:
            InputError: any ``positional`` other than ``"normal"``.
        """
        self.pe_tables(len(tokens), positional, positional_seed)  # refuses experiments
        added = None if self.relative else self.positional_encoding(len(tokens), side)
        return hf_hooks.embedding_parts(self.model, self.vocab, tokens, side=side, added=added)
