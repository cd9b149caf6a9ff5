"""Hugging Face causal language models (decoder-only) as a backend: an
``AutoModelForCausalLM`` and its tokenizer behind the encoder-decoder's parts (``parts``),
as ``one_stack`` puts our own decoder-only model there, so greedy, beams, sampling,
prefixes, teacher forcing and the head switches drive it through ``translator.Translator``.

One sequence, split where an encoder-decoder splits its two: the prompt as
``tokenizer(prompt)`` gives it (P ids, the specials the tokenizer adds included, e.g.
Llama's BOS), its first S = P - 1 tokens the "source" (``HFCausal.encode``), and the decoder
inputs continuing the same sequence from the prompt's last token
(``SourceSentence.start_id``). Each decoding step's attention row over the N_all = S + t + 1
keys is returned split at S under the encoder-decoder's names, as ``one_stack.OneStack``
does: ``cross_attentions`` (B, H, T, S) over the prompt, ``decoder_attentions``
(B, H, T, t + 1) over the decoder inputs; ``Translator`` joins them with the prompt's own
rows into the one causal (L, H, N, N) map of a decoder-only trace, which equals Hugging
Face's ``output_attentions`` of one forward pass over the N tokens (Radford et al., 2019;
H = the query heads, also under grouped-query attention, Ainslie et al., 2023).

Families (``FAMILIES``): GPT-2 (learned positions ``wpe`` added to the embeddings), Llama,
Mistral, Qwen2 (biased q, k, v) and Qwen3 (q/k RMSNorm), which rotate q and k by position
(RoPE, Su et al., 2021) instead of adding vectors. Positions come from the cache's length
(``cache_position``) inside the model, so a pass over ``inputs_embeds`` numbers its tokens
0.. without a cache and continues after the cached ones with it.

Attention weights come from ``attn_implementation="eager"`` (``hf_load``), the only
implementation that returns them. Loading (offline, no remote code, safetensors) is
``hf_load.load_hf``.

Shape letters: B batch, P prompt ids, S = P - 1, T decoder inputs (new ones with a cache),
N_all every position so far, L layers, H query heads, D d_model, V vocabulary size. Masks
are boolean, True = blocked.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..core.config import OneStackNames
from ..core.masks import (
    decoder_self_attention_mask,
    padding_mask,
    position_ids_past_padding,
    subsequent_mask,
)
from ..core.transformer import DecoderOutput, EncoderOutput
from ..decoding import GenerationSettings
from ..errors import CheckpointError, InputError
from . import hf_hooks
from .hf import FIXED_POSITIONS
from .hf_config import causal_fields
from .hf_tokenizer import HFSource, HFTarget, PieceLabels, TokenizerTable
from .one_stack import split_output
from .records import EmbeddingParts, HeadInputs, ModelInfo
from .translator import Translator, card_examples

# model_type -> how the family gives positions (``ModelInfo.positional_scheme``): a learned
# table added to the embeddings, or q and k rotated by position (RoPE).
FAMILIES = {"gpt2": "learned", "llama": "rotary", "mistral": "rotary", "qwen2": "rotary",
            "qwen3": "rotary"}
MAX_TOKENS = 256  # the longest sequence (prompt + continuation) the app decodes
DEFAULT_NEW_TOKENS = 32  # generate()'s length without a max_new_tokens in the model's config
NOT_YET = "not yet for this model"


@dataclass(frozen=True)
class CausalConfig(OneStackNames):
    """What decoding, the head switches and the views read of a causal language model,
    under the encoder-decoder's names (``TransformerConfig``'s, from
    ``core.config.OneStackNames`` as ``DecoderOnlyConfig`` offers them): the one stack is
    the decoder (L layers, no encoder, no cross-attention: ``core.config.layer_counts``
    keys on ``architecture``).

    Attributes:
        vocab_size: V, the output layer's rows; d_model: D; nhead: H, the query heads;
        num_key_value_heads: the key/value heads (< H under grouped-query attention, each
            shared by H / num_key_value_heads query heads); head_dim: Dh (Qwen3's may differ
            from D / H); num_layers: L; dim_feedforward: the MLP's inner width;
        max_len: the longest sequence decoded, min(context_length, ``MAX_TOKENS``);
        context_length: the positions the model has (``n_positions`` /
            ``max_position_embeddings``);
        pad_id: what a finished row is fed in a batch (the config's pad, else the
            tokenizer's, else EOS, as ``generate()`` does); bos_id: the tokenizer's BOS
            (else EOS), refused inside a reference; eos_id: the end token (the first of a
            list); eos_ids: every id where decoding stops, as ``generate()`` stops (the
            config's list and its generation config's: Qwen2.5-Instruct ends a turn with
            <|im_end|> and a text with <|endoftext|>).
    """

    vocab_size: int
    d_model: int
    nhead: int
    num_key_value_heads: int
    head_dim: int
    num_layers: int
    dim_feedforward: int
    max_len: int
    context_length: int
    pad_id: int
    bos_id: int
    eos_id: int
    eos_ids: tuple[int, ...] = ()

    architecture = "decoder-only"  # not a field: what ``layer_counts`` and the views read


def causal_config(hf_config, tokenizer, vocab_size: int, where: str = "config.json", *,
                  generation_eos: int | list[int] | None = None) -> CausalConfig:
    """The loaded Hugging Face config as a ``CausalConfig`` (``vocab_size``: the output
    layer's rows; ``generation_eos``: the generation config's ``eos_token_id``, an id or a
    list, whose ids end decoding too). Its fields were checked before loading
    (``hf_config.causal_fields``).

    Raises:
        CheckpointError: a special id outside 0..V-1 (the message names it).
    """
    f = causal_fields(dict(vars(hf_config), model_type=hf_config.model_type), where)
    eos = f["eos_token_id"]
    more = generation_eos if isinstance(generation_eos, list) else [generation_eos]
    ends = tuple(dict.fromkeys([*f["eos_token_ids"], *(
        i for i in more if isinstance(i, int) and not isinstance(i, bool)
        and 0 <= i < vocab_size)]))
    pad = next((i for i in (f["pad_token_id"], tokenizer.pad_token_id) if i is not None), eos)
    bos = next((i for i in (tokenizer.bos_token_id, f["bos_token_id"]) if i is not None), eos)
    for field, value in (("eos_token_id", eos), ("pad_token_id", pad), ("bos_token_id", bos)):
        if not 0 <= value < vocab_size:
            raise CheckpointError(f"{where}: {field} {value} is outside the model's "
                                  f"{vocab_size} output rows")
    return CausalConfig(
        vocab_size=vocab_size, d_model=f["d_model"], nhead=f["nhead"],
        num_key_value_heads=f["num_key_value_heads"], head_dim=f["head_dim"],
        num_layers=f["num_layers"], dim_feedforward=f["dim_feedforward"],
        max_len=min(MAX_TOKENS, f["max_position_embeddings"]),
        context_length=f["max_position_embeddings"], pad_id=pad, bos_id=bos, eos_id=eos,
        eos_ids=ends)


class HFCausal:
    """An ``AutoModelForCausalLM`` (eager attention, eval mode) with the interface
    ``model.decoding`` uses (``parts.EncoderDecoder``), read-only and shared: the cache
    lives in each call's result (Hugging Face's ``DynamicCache``).

    ``memory`` is the prompt's token embeddings (B, S, D), ``get_input_embeddings()(ids)``:
    a pass without a cache runs the prompt and the decoder inputs as one sequence from it
    (``inputs_embeds``; GPT-2 adds its position rows inside, the others rotate q and k).

    Attributes:
        hf: the Hugging Face model; config: its ``CausalConfig``; model_type:
            ``hf.config.model_type`` (one of ``FAMILIES``).
    """

    def __init__(self, hf, config: CausalConfig) -> None:
        self.hf, self.config = hf, config
        self.model_type = hf.config.model_type

    @staticmethod
    def _fixed_positions(pe_table) -> None:
        if pe_table is not None:
            raise InputError(FIXED_POSITIONS)

    def _embed(self, ids: torch.Tensor) -> torch.Tensor:
        """(B, T) ids -> (B, T, D) the model's token embeddings (no positions)."""
        return self.hf.get_input_embeddings()(ids)

    def encode(self, src_ids: torch.Tensor, *, key_padding_mask: torch.Tensor | None = None,
               pe_table: torch.Tensor | None = None,
               src_embeds: torch.Tensor | None = None) -> EncoderOutput:
        """The prompt's own pass: (B, S) ids -> memory (B, S, D) (their embeddings), the
        causal self-attention per layer (B, H, S, S), and the key padding mask (B, S): the
        one given (prompts padded on the right, True = ``<pad>``: the model's pad id may be
        a real token of a prompt, so padding is known by position, not by id), else all
        False (``translate_batch`` batches prompts of one length). The pads are blocked as
        keys (``attention_mask``) and take no position. ``src_embeds`` (B, S, D) replace
        the embeddings.

        Raises:
            InputError: a positional experiment (``pe_table``).
        """
        self._fixed_positions(pe_table)
        emb = self._embed(src_ids) if src_embeds is None else src_embeds  # (B, S, D)
        padded = key_padding_mask is not None and bool(key_padding_mask.any())
        out = self.hf(inputs_embeds=emb, use_cache=False, output_attentions=True,
                      attention_mask=(~key_padding_mask).long() if padded else None,
                      position_ids=(position_ids_past_padding(key_padding_mask, emb.size(1))
                                    if padded else None),
                      logits_to_keep=1, return_dict=True)
        pad = (torch.zeros(src_ids.shape, dtype=torch.bool, device=src_ids.device)
               if key_padding_mask is None else key_padding_mask)  # (B, S)
        return EncoderOutput(memory=emb, attentions=tuple(out.attentions), key_padding_mask=pad)

    def decode(self, tgt_ids: torch.Tensor, memory: torch.Tensor,
               memory_key_padding_mask: torch.Tensor | None = None, *, past_key_values=None,
               pe_table: torch.Tensor | None = None, tgt_embeds: torch.Tensor | None = None
               ) -> DecoderOutput:
        """(B, T) decoder inputs after the prompt ``memory`` (B, S, D): logits (B, T, V)
        and each layer's attention rows of these T positions split at S: over the prompt
        (``cross_attentions``, (B, H, T, S)) and over the decoder inputs
        (``decoder_attentions``, (B, H, T, T_all)); the cache (``past_key_values``) covers
        all S + T_all positions. Without ``past_key_values`` the prompt is run first in the
        same pass. A True in ``memory_key_padding_mask`` (B, S) blocks that prompt key
        (Hugging Face's ``attention_mask``) and takes no position (``position_ids`` past the
        padding, ``masks.position_ids_past_padding``), so a right-padded prompt's
        continuation decodes as the prompt alone.

        Raises:
            InputError: a positional experiment (``pe_table``).
        """
        self._fixed_positions(pe_table)
        S, T = memory.size(1), tgt_ids.size(1)
        emb = self._embed(tgt_ids) if tgt_embeds is None else tgt_embeds  # (B, T, D)
        if past_key_values is None:
            emb = torch.cat([memory, emb], dim=1)  # (B, S + T, D)
        mask = positions = None
        if memory_key_padding_mask is not None and bool(memory_key_padding_mask.any()):
            seen = 0 if past_key_values is None else past_key_values.get_seq_length()
            pad = torch.zeros(emb.size(0), seen + emb.size(1), dtype=torch.bool,
                              device=emb.device)  # (B, N_all) True = <pad>
            pad[:, :S] = memory_key_padding_mask
            mask = (~pad).long()  # (B, N_all) 1 = attend
            positions = position_ids_past_padding(pad, emb.size(1))  # (B, N)
        out = self.hf(inputs_embeds=emb, attention_mask=mask, position_ids=positions,
                      past_key_values=past_key_values, use_cache=True,
                      output_attentions=True, logits_to_keep=T, return_dict=True)
        return split_output(out.logits, out.attentions, out.past_key_values, S=S, T=T)

    @staticmethod
    def reorder_cache(cache, index: torch.Tensor):
        """Keep (and duplicate) beams ``index`` (n,) of a ``DynamicCache``, in place, as
        Hugging Face's beam search does; returns it."""
        cache.reorder_cache(index)
        return cache

    def attention(self, kind: str, layer: int):
        """The self-attention module of ``layer`` and the names of its q, k, v projections
        (GPT-2: the one fused ``c_attn``); its W_O is ``o_proj`` (GPT-2: ``c_proj``).

        Raises:
            ValueError: ``kind`` is not ``"decoder"`` (no encoder, no cross-attention).
        """
        if kind != "decoder":
            raise ValueError(f"a decoder-only model has only 'decoder' attention, got {kind!r}")
        if self.model_type == "gpt2":
            return self.blocks()[layer].attn, ("c_attn",)
        return self.blocks()[layer].self_attn, ("q_proj", "k_proj", "v_proj")

    def blocks(self) -> list[torch.nn.Module]:
        """The model's decoder layers, first to last (GPT-2's ``transformer.h``, the other
        families' ``model.layers``)."""
        return list(self.hf.transformer.h if self.model_type == "gpt2" else self.hf.model.layers)

    def num_parameters(self) -> int:
        """Number of parameters (tied embeddings counted once)."""
        return sum(p.numel() for p in self.hf.parameters())


class CausalSource:
    """The prompt side (``parts.SourceSide``): an ``HFSource`` (the tokenizer's pieces, the
    specials it adds, e.g. Llama's BOS, labels and words), refusing a prompt that does not
    fit in the model's context.

    Attributes:
        vocab: the tokenizer's table; max_len: the most prompt ids (P) decoded; added:
            how many specials ``tokenizer(prompt)`` adds around the pieces.
    """

    def __init__(self, source: HFSource, *, added: int, max_len: int,
                 context_length: int, tokenizer=None, lock=None) -> None:
        self._source, self.vocab, self.added = source, source.vocab, added
        self.max_len, self._context = max_len, context_length
        self._tokenizer, self._lock = tokenizer, lock

    def chat_ids(self, text: str) -> list[int]:
        """The P prompt ids of ``text`` as one user turn of the tokenizer's chat template,
        the assistant's turn opened (``apply_chat_template(..., add_generation_prompt=True)``,
        as an instruct model is prompted).

        Raises:
            InputError: the templated prompt does not fit (P > max_len) or has fewer than 2
                ids.
        """
        with self._lock:
            enc = self._tokenizer.apply_chat_template(
                [{"role": "user", "content": text}], add_generation_prompt=True,
                tokenize=True)
        ids = [int(i) for i in (enc["input_ids"] if "input_ids" in enc else enc)]
        if not 2 <= len(ids) <= self.max_len:
            raise InputError(f"In the chat template the prompt is {len(ids)} tokens long; "
                             f"it must fit in {self.max_len} positions. Please shorten it.")
        return ids

    def tokenize(self, text: str) -> list[str]:
        """``HFSource.tokenize``, refusing a prompt whose P ids (with the specials) would
        not fit.

        Raises:
            InputError: see ``HFSource.tokenize``; P > max_len (the message gives the
                model's context length, and the app's cap when lower).
        """
        pieces = self._source.tokenize(text)
        n = len(pieces) + self.added
        if n > self.max_len:
            cap = "" if self.max_len == self._context else (
                f" (the app decodes at most {self.max_len} of its {self._context})")
            raise InputError(f"The prompt is {n} tokens long; it must fit in the model's "
                             f"context of {self.max_len} positions{cap}. Please shorten it.")
        return pieces

    def encode(self, pieces: list[str], src_lang: str | None = None) -> list[int]:
        """Pieces -> the P prompt ids, as ``tokenizer(prompt)`` gives them.

        Raises:
            InputError: P < 2 (the first S = P - 1 ids are the source: at least one), or
                P > max_len.
        """
        ids = self._source.encode(pieces, src_lang)
        if len(ids) < 2:
            raise InputError("The prompt is a single token; please type at least two "
                             "(the model reads the ones before the last, then continues).")
        if len(ids) > self.max_len:
            raise InputError(f"The prompt is {len(ids)} tokens long; at most {self.max_len} "
                             "fit in the model's context.")
        return ids

    def tokens(self, pieces: list[str], src_ids: list[int]) -> tuple[str, ...]:
        """The P prompt tokens, specials included."""
        return self._source.tokens(pieces, src_ids)

    def labels(self, tokens: Sequence[str]) -> tuple[str, ...]:
        """Readable labels (``HFSource.labels``)."""
        return self._source.labels(tokens)

    def words(self, tokens: Sequence[str]) -> tuple[int, ...]:
        """The word index of each token (``HFSource.words``)."""
        return self._source.words(tokens)


class CausalInternals:
    """What the views recompute of a causal language model (``parts.Internals``), over the
    one sequence: the prompt's S tokens then the T decoder inputs (N = S + T).

    Attributes:
        model: the ``HFCausal``; config: its ``CausalConfig``.
    """

    def __init__(self, model: HFCausal) -> None:
        self.model, self.config = model, model.config

    def mask_views(self, src_tokens: list[str], tgt_tokens: list[str], pad: int = 0
                   ) -> dict[str, np.ndarray]:
        """The masks of the one sequence (prompt tokens, then decoder inputs) right-padded
        with ``pad`` padding positions: ``"padding"`` (N,), ``"subsequent"`` (N, N) the
        look-ahead mask and ``"self"`` (N, N) their OR; bool, True = blocked. Padding is
        known by position (a model's pad id may be its EOS)."""
        keep = torch.tensor([[1] * (len(src_tokens) + len(tgt_tokens)) + [0] * pad])
        return {"padding": padding_mask(keep, 0)[0].numpy(),
                "subsequent": subsequent_mask(keep.size(1)).numpy(),
                "self": decoder_self_attention_mask(keep, 0)[0].numpy()}

    def pe_tables(self, src_len: int, positional: str = "normal", positional_seed: int = 0):
        """(None, None): the model's own positions.

        Raises:
            InputError: another positional experiment.
        """
        GenerationSettings(positional=positional, positional_seed=positional_seed)  # checks
        if positional != "normal":
            raise InputError(FIXED_POSITIONS)
        return None, None

    def positional_encoding(self, length: int, side: str = "source") -> np.ndarray:
        """GPT-2's learned rows ``wpe[0:length]`` (length, D) float32, added to the token
        embeddings at positions 0..length-1 of the one sequence (``side`` is the same).

        Raises:
            InputError: ``length`` outside 1..max_len; a RoPE model (it adds no vectors).
        """
        if not 1 <= length <= self.config.max_len:
            raise InputError(f"length must be in [1, {self.config.max_len}], got {length}")
        if FAMILIES[self.model.model_type] != "learned":
            raise InputError("This model adds no position vectors: it rotates each head's "
                             "queries and keys by an angle that grows with the position "
                             "(RoPE, rotary position embedding).")
        return self.model.hf.transformer.wpe.weight[:length].detach().float().numpy().copy()

    def relative_position_bias(self, q_len: int, k_len: int, side: str = "encoder") -> None:
        """None: no bias is added to the scores."""
        return None

    def head_inputs(self, trace, kind: str, *, layer: int, head: int) -> HeadInputs:
        """One self-attention head's inputs over the trace's N = S + T positions, recorded
        by a hook in one pass (``hf_hooks.causal_head_inputs``): x (N, D) the layer's
        attention input, the q, k, v projections, the scaling, the key/value group, Qwen3's
        q/k norms and the rotary frequencies. ``kind`` is ``"decoder"`` (checked by the
        caller)."""
        return hf_hooks.causal_head_inputs(self.model, trace, layer)

    def embedding_parts(self, tokens: Sequence[str], side: str, *, positional: str = "normal",
                        positional_seed: int = 0) -> EmbeddingParts:
        """Not yet for a Hugging Face causal model.

        Raises:
            InputError: always.
        """
        raise InputError(f"The embedding parts: {NOT_YET}.")

    def encoder_sublayers(self, trace) -> None:
        """None: there is no encoder."""
        return None


def _rope_base(model: HFCausal) -> float | None:
    """The RoPE base theta of a rotary family whose ``rope_parameters`` are the paper's
    formula (``rope_type`` "default"), else None (GPT-2, or a scaled RoPE such as Llama 3's)."""
    rope = getattr(model.hf.config, "rope_parameters", None) or {}
    if FAMILIES[model.model_type] != "rotary" or rope.get("rope_type", "default") != "default":
        return None
    base = rope.get("rope_theta")
    return float(base) if isinstance(base, int | float) and base > 1 else None


def build_translator(model: HFCausal, tokenizer, card: dict, *, name: str = "") -> Translator:
    """A causal language model (``HFCausal``) and its tokenizer as a ``Translator``:
    ``CausalSource``, ``HFTarget`` (the continuation decoded by the tokenizer, the
    generation config's banned words and forced EOS; no forced BOS, which ``generate()``
    applies to a decoder-only model only at length 1) and ``CausalInternals``."""
    lock = threading.RLock()  # the tokenizer keeps state: one call at a time
    c = model.config
    vocab = TokenizerTable(tokenizer, c.vocab_size)
    shared = dict(tokenizer=tokenizer, lock=lock, vocab=vocab,
                  piece_labels=PieceLabels(tokenizer, lock))
    generation = copy.deepcopy(model.hf.generation_config)
    generation.forced_bos_token_id = None
    with lock:
        added = len(tokenizer("x")["input_ids"]) - len(
            tokenizer("x", add_special_tokens=False)["input_ids"])
    source = CausalSource(HFSource(**shared, eos_id=c.eos_id), added=added,
                          max_len=c.max_len, context_length=c.context_length,
                          tokenizer=tokenizer, lock=lock)
    limit = generation.max_new_tokens or DEFAULT_NEW_TOKENS
    info = ModelInfo(
        backend="huggingface", model_type=model.model_type, subword=True,
        positional_scheme=FAMILIES[model.model_type], languages=(), task_prefixes={},
        examples=card_examples(card), eos_token=vocab.itos[c.eos_id],
        max_source_words=c.max_len - source.added,
        default_max_new_tokens=max(1, min(c.max_len - 1, limit)),
        early_stopping=generation.early_stopping is True, source_language="",
        target_language="", architecture="decoder-only", rope_base=_rope_base(model),
        num_key_value_heads=(c.num_key_value_heads if c.num_key_value_heads < c.nhead
                             else None),
        chat_template=bool(getattr(tokenizer, "chat_template", None)))
    return Translator(model=model, source_side=source,
                      target=HFTarget(**shared, config=c, generation=generation, lang_ids={}),
                      internals=CausalInternals(model), info=info, card=card, name=name)
