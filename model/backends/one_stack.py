"""A decoder-only Transformer behind the same parts as an encoder-decoder (``parts``), so
that ``model.decoding`` (greedy, sampling, beams, teacher forcing), switching heads off and
``translator.Translator`` drive it unchanged.

One sequence, split where the encoder-decoder splits its two: the prompt's tokens before its
last one are the "source" (S tokens, ``encode``), and the decoder inputs continue the same
sequence, starting with the prompt's last token (``<sep>`` in our prefix language model,
``core.prefix_lm``), as ``<s>`` starts an encoder-decoder's decoder. Each decoding step's
attention row over the N_all = S + t + 1 keys is returned in two parts under the
encoder-decoder's names, the keys of the prompt (``cross_attentions``, (B, H, T, S)) and
those of the decoder inputs (``decoder_attentions``, (B, H, T, t + 1)), so the strategies
record them as they do; ``Translator`` joins them (with the prompt's own rows from
``encode``) into the one causal (L, H, N, N) map that a decoder-only trace holds.

Our prefix LM's two sides are here too: ``PrefixSource`` (English pieces after ``<s>``,
then ``<sep>``) and ``PrefixTarget`` (Chinese characters in the one vocabulary), and
``build_translator`` puts them together (``load.load_pretrained`` calls it for a
decoder-only folder of ours).

Shape letters: B batch, S prompt tokens before the last, T decoder inputs (new ones with a
cache), N_all every position so far, D d_model, H heads, V the one vocabulary.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from ..core.decoder_only import DecoderOnlyTransformer
from ..core.masks import position_ids_past_padding
from ..core.prefix_lm import BOS_ID, EOS_ID, PrefixCodec
from ..core.subword import piece_label, pieces, word_ids
from ..core.transformer import DecoderOutput, EncoderOutput
from ..core.vocab import SPECIALS, TokenTable, Vocab, normalize_text, tokenize_zh
from ..decoding import GenerationSettings, LogitsProcessor
from ..errors import InputError
from ..errors import short_repr as _short
from .records import EmbeddingParts, HeadInputs, ModelInfo, to_numpy
from .translator import Translator, card_examples, trained_source_tokens


class OneStack:
    """``parts.EncoderDecoder`` over a ``DecoderOnlyTransformer`` (read-only, shared).

    ``memory`` is the prompt's scaled token embeddings (B, S, D), what the stack reads for
    those positions (positions are added inside the stack): a pass without a cache runs the
    prompt and the decoder inputs as one sequence from it.

    Attributes:
        model: the ``DecoderOnlyTransformer``; config: its ``DecoderOnlyConfig``.
    """

    def __init__(self, model: DecoderOnlyTransformer) -> None:
        self.model, self.config = model, model.config

    def encode(self, src_ids: torch.Tensor, *, key_padding_mask: torch.Tensor | None = None,
               pe_table: torch.Tensor | None = None,
               src_embeds: torch.Tensor | None = None) -> EncoderOutput:
        """The prompt's own pass: (B, S) ids -> memory (B, S, D) (their embeddings),
        attentions per layer (B, H, S, S) (causal), key padding mask (B, S) True =
        ``<pad>`` (the one given, else where the ids are ``pad_id``). ``src_embeds``
        (B, S, D) replace the embeddings (attribution).

        Raises:
            InputError: a positional experiment (``pe_table``): not for one stack yet.
        """
        if pe_table is not None:
            raise InputError("The positional experiments are for encoder-decoders only.")
        emb = self.model.embed(src_ids) if src_embeds is None else src_embeds  # (B, S, D)
        pad = src_ids == self.config.pad_id if key_padding_mask is None else key_padding_mask
        out = self.model(None, pad, inputs_embeds=emb, logits_to_keep=1,
                         position_ids=_positions(pad, src_ids.size(1)))
        return EncoderOutput(memory=emb, attentions=out.decoder_attentions,
                             key_padding_mask=pad)

    def decode(self, tgt_ids: torch.Tensor, memory: torch.Tensor,
               memory_key_padding_mask: torch.Tensor | None = None, *, past_key_values=None,
               pe_table: torch.Tensor | None = None, tgt_embeds: torch.Tensor | None = None
               ) -> DecoderOutput:
        """(B, T) decoder inputs after the prompt ``memory`` (B, S, D): logits (B, T, V)
        and each layer's attention rows of these T positions split at S: over the prompt
        (``cross_attentions``, (B, H, T, S)) and over the decoder inputs
        (``decoder_attentions``, (B, H, T, T_all)); the cache covers all S + T_all
        positions. Without ``past_key_values`` the prompt is run first in the same pass.
        A prompt padded on the right (``memory_key_padding_mask`` (B, S), True = ``<pad>``)
        has its ``<pad>`` keys blocked and numbered out of the positions, so every row
        decodes as it does alone (``analysis.batch.decode_batch``).

        Raises:
            InputError: a positional experiment (``pe_table``).
        """
        if pe_table is not None:
            raise InputError("The positional experiments are for encoder-decoders only.")
        B, S, T = memory.size(0), memory.size(1), tgt_ids.size(1)
        emb = self.model.embed(tgt_ids) if tgt_embeds is None else tgt_embeds  # (B, T, D)
        if past_key_values is None:
            emb = torch.cat([memory, emb], dim=1)  # (B, S + T, D)
        n_all = emb.size(1) + (0 if past_key_values is None
                               else past_key_values[0].self_kv[0].size(2))
        pad = torch.zeros(B, n_all, dtype=torch.bool, device=memory.device)  # (B, N_all)
        if memory_key_padding_mask is not None:
            pad[:, :S] = memory_key_padding_mask
        out = self.model(None, pad, inputs_embeds=emb, past_key_values=past_key_values,
                         logits_to_keep=T, position_ids=_positions(pad, emb.size(1)))
        return split_output(out.logits, out.decoder_attentions, out.past_key_values, S=S, T=T)

    @property
    def src_embed(self):
        """The scaled token embedding the prompt is read with (``Embedding``: the one
        vocabulary's); gradient attributions take the prompt's embeddings from it."""
        return self.model.embed

    @property
    def tgt_embed(self):
        """The same embedding: the decoder inputs continue the one sequence."""
        return self.model.embed

    def reorder_cache(self, cache, index: torch.Tensor):
        """The cache of beams ``index`` (n,)."""
        return self.model.reorder_cache(cache, index)

    def attention(self, kind: str, layer: int):
        """The self-attention module of ``layer`` (``kind`` must be ``"decoder"``)."""
        return self.model.attention(kind, layer)

    def num_parameters(self) -> int:
        """Number of parameters."""
        return self.model.num_parameters()


def _positions(key_padding_mask: torch.Tensor, n: int) -> torch.Tensor | None:
    """The last ``n`` positions of a padded batch, its ``<pad>`` tokens numbered out
    (``masks.position_ids_past_padding``), or None when nothing is padded (the plain
    numbering 0..N_all-1 is the same)."""
    if not bool(key_padding_mask.any()):
        return None
    return position_ids_past_padding(key_padding_mask, n)  # (B, n)


def split_output(logits: torch.Tensor, attentions, cache, *, S: int, T: int) -> DecoderOutput:
    """A one-stack pass's last T positions as an encoder-decoder's ``decode`` returns them:
    ``logits`` (B, T, V), each layer's (B, H, N, N_all) ``attentions`` cut to the T new
    rows and split at the prompt's S keys into ``cross_attentions`` (B, H, T, S) and
    ``decoder_attentions`` (B, H, T, T_all), and the ``cache`` as ``past_key_values``
    (``OneStack``, ``hf_causal.HFCausal``)."""
    rows = [w[:, :, -T:] for w in attentions]  # (B, H, T, N_all) each
    return DecoderOutput(logits=logits[:, -T:],
                         decoder_attentions=tuple(w[..., S:] for w in rows),
                         cross_attentions=tuple(w[..., :S] for w in rows),
                         past_key_values=cache)


class PrefixSource:
    """The prompt side of our prefix LM (``parts.SourceSide``): ``<s>``, the English
    sentence's byte-level BPE pieces, ``<sep>`` (P = S + 1 ids; ``Translator`` keeps the
    last as the decoder's start).

    Attributes:
        vocab: the ``OneVocabulary``; codec: the ``PrefixCodec``.
    """

    def __init__(self, codec: PrefixCodec, vocab: TokenTable) -> None:
        self.codec, self.vocab = codec, vocab

    def tokenize(self, text: str) -> list[str]:
        """The English pieces of ``text`` (``subword.pieces``; never ``<unk>``)."""
        return pieces(self.codec.tokenizer, " ".join(normalize_text(text).split()))

    def encode(self, pieces: list[str], src_lang: str | None = None) -> list[int]:
        """Pieces -> the P prompt ids ``<s> .. <sep>``."""
        tok = self.codec.tokenizer
        return [BOS_ID, *(tok.token_to_id(p) for p in pieces), self.codec.layout.sep_id]

    def tokens(self, pieces: list[str], src_ids: list[int]) -> tuple[str, ...]:
        """The P prompt tokens."""
        return tuple(self.vocab.itos[i] for i in src_ids)

    @staticmethod
    def labels(tokens: Sequence[str]) -> tuple[str, ...]:
        """Readable labels (``Ġlearn`` -> ``learn``)."""
        return tuple(piece_label(t) for t in tokens)

    @staticmethod
    def words(tokens: Sequence[str]) -> tuple[int, ...]:
        """The word index of each token (pieces of one word share one)."""
        return word_ids(tokens)


class PrefixTarget:
    """What our prefix LM writes (``parts.TargetSide``): Chinese characters at their ids in
    the one vocabulary (``PrefixLayout.from_chinese``); an English piece it writes there
    is shown as its label. It forces nothing.

    Attributes:
        vocab: the ``OneVocabulary``; codec: the ``PrefixCodec``.
    """

    def __init__(self, codec: PrefixCodec, vocab: TokenTable) -> None:
        self.codec, self.vocab = codec, vocab

    def ids(self, tokens: str | Sequence[str], what: str = "prefix") -> list[int]:
        """Chinese text (one token per character) or a token list as ids in the one
        vocabulary.

        Raises:
            InputError: a character outside the Chinese vocabulary, or a special other than
                a final ``</s>`` (the message names the ``what`` and lists them).
        """
        tokens = tokenize_zh(tokens) if isinstance(tokens, str) else list(tokens)
        zh = self.codec.zh_vocab
        bad = [t for i, t in enumerate(tokens) if t not in zh
               or (t in SPECIALS and not (t == SPECIALS[3] and i == len(tokens) - 1))]
        if bad:
            shown = ", ".join(_short(t, 12) for t in list(dict.fromkeys(bad))[:5])
            raise InputError(f"The {what} has tokens the model cannot produce: {shown}")
        return [self.codec.layout.from_chinese(i) for i in zh.encode(tokens)]

    def forced_start(self, ids: list[int], tgt_lang: str | None = None) -> list[int]:
        """``ids`` as they are: nothing is forced."""
        return ids

    def text(self, tgt_ids: np.ndarray) -> str:
        """The text of decoder ids ``<sep> y1 .. yn`` (``PrefixCodec.decode``): the Chinese
        characters up to ``</s>``, an English piece the model wrote decoded as text, and
        ``<sep>`` / ``<s>`` / ``<pad>`` never written out."""
        return self.codec.decode(tgt_ids)

    def labels(self, ids) -> tuple[str, ...]:
        """Chinese characters as they are; an English piece as ``piece_label`` shows it."""
        return tuple(piece_label(self.vocab.itos[int(i)]) for i in ids)

    def processors(self, max_new_tokens: int, tgt_lang: str | None = None
                   ) -> list[LogitsProcessor]:
        """None: the model's distribution is used as it is."""
        return []


class OneVocabulary(TokenTable):
    """Every id's token in the one vocabulary of our prefix LM: the specials, the English
    pieces, ``<sep>``, the Chinese characters (an ASCII character may be both an English
    piece and a Chinese-side token: ``stoi`` keeps the last, the Chinese one). No English
    word is unknown (byte-level BPE)."""

    def __init__(self, codec: PrefixCodec) -> None:
        tok, layout = codec.tokenizer, codec.layout
        english = [tok.id_to_token(i) for i in range(len(SPECIALS), layout.en_size)]
        super().__init__([*SPECIALS, *english, "<sep>", *codec.zh_vocab.itos[len(SPECIALS):]])

    def encode(self, tokens: Sequence[str]) -> list[int]:
        """Token strings -> ids (``<unk>`` for any other)."""
        return [self.stoi.get(t, 1) for t in tokens]

    def unknown(self, tokens) -> list[str]:
        """Always empty: the English side is byte-level BPE."""
        return []

    def suggest(self, token: str, n: int = 3) -> list[str]:
        """Always empty (see ``unknown``)."""
        return []


def build_translator(model: DecoderOnlyTransformer, tokenizer, zh_vocab: Vocab, card: dict,
                     *, name: str = "", heldout=(), train_counts=None) -> Translator:
    """Our decoder-only prefix LM (English -> Chinese) as a ``Translator``: ``OneStack``,
    ``PrefixSource``, ``PrefixTarget`` and ``OneStackInternals``.

    Raises:
        ValueError: the vocabularies disagree with the config (``PrefixLayout.check``).
    """
    codec = PrefixCodec(tokenizer, zh_vocab)
    codec.layout.check(model.config)
    vocab = OneVocabulary(codec)
    c = model.config
    info = ModelInfo(
        backend="ours", model_type="transformer", subword=True,
        positional_scheme="sinusoidal", languages=(), task_prefixes={},
        examples=card_examples(card), eos_token=vocab.itos[EOS_ID],
        max_source_words=c.max_len // 2 - 2, default_max_new_tokens=c.max_len // 2,
        early_stopping=True, heldout=tuple(heldout),
        trained_source_tokens=trained_source_tokens(card), train_counts=train_counts,
        source_language="en", target_language="zh", architecture="decoder-only")
    return Translator(model=OneStack(model), source_side=PrefixSource(codec, vocab),
                      target=PrefixTarget(codec, vocab),
                      internals=OneStackInternals(model, vocab), info=info,
                      card=card, name=name)


class OneStackInternals:
    """What the views recompute of our decoder-only model (``parts.Internals``), over the
    one sequence: the prompt's S tokens then the T decoder inputs (N = S + T positions).

    Attributes:
        model: the ``DecoderOnlyTransformer``; config: its config; vocab: the one
            vocabulary (``OneVocabulary``).
    """

    def __init__(self, model: DecoderOnlyTransformer, vocab: TokenTable) -> None:
        self.model, self.config, self.vocab = model, model.config, vocab

    def mask_views(self, src_tokens: list[str], tgt_tokens: list[str], pad: int = 0
                   ) -> dict[str, np.ndarray]:
        """The masks of the one sequence (prompt tokens, then decoder inputs) right-padded
        with ``pad`` ``<pad>`` tokens: ``"padding"`` (N,), ``"subsequent"`` (N, N) the
        look-ahead mask and ``"self"`` (N, N) their OR; bool, True = blocked."""
        from ..core.masks import decoder_self_attention_mask, padding_mask, subsequent_mask

        ids = torch.tensor([self.vocab.encode([*src_tokens, *tgt_tokens])
                            + [self.config.pad_id] * pad])  # (1, N + pad)
        return {"padding": padding_mask(ids, self.config.pad_id)[0].numpy(),
                "subsequent": subsequent_mask(ids.size(1)).numpy(),
                "self": decoder_self_attention_mask(ids, self.config.pad_id)[0].numpy()}

    def pe_tables(self, src_len: int, positional: str = "normal", positional_seed: int = 0):
        """(None, None): the model's own positions.

        Raises:
            InputError: another positional experiment (for encoder-decoders only).
        """
        GenerationSettings(positional=positional, positional_seed=positional_seed)  # checks
        if positional != "normal":
            raise InputError("The positional experiments are for encoder-decoders only.")
        return None, None

    def positional_encoding(self, length: int, side: str = "source") -> np.ndarray:
        """The sinusoidal table's first ``length`` rows (length, D) float32: position n of
        the one sequence (``side`` is the same table).

        Raises:
            ValueError: ``length`` outside 1..max_len.
        """
        if not 1 <= length <= self.config.max_len:
            raise ValueError(f"length must be in [1, {self.config.max_len}], got {length}")
        return self.model.positional.pe[:length].numpy().astype(np.float32)

    def relative_position_bias(self, q_len: int, k_len: int, side: str = "encoder") -> None:
        """None: positions are added to the embeddings."""
        return None

    def head_inputs(self, trace, kind: str, *, layer: int, head: int) -> HeadInputs:
        """One self-attention head's inputs over the trace's N = S + T positions: x_q = x_k
        (N, D) the layer's attention input in one pass, its q, k, v projections, scaling
        1 / sqrt(Dh). ``kind`` is ``"decoder"`` (checked by the caller)."""
        ids = torch.from_numpy(np.concatenate([trace.src_ids, trace.tgt_ids[:-1]]))[None]
        with torch.inference_mode():
            out = self.model(ids, return_layers=True, logits_to_keep=1)
        attn = self.model.layers[layer].self_attn
        x = out.layers[layer].self_attention_input[0]  # (N, D)
        return HeadInputs(x, x,
                          (attn.q_proj, attn.k_proj, attn.v_proj),
                          1 / math.sqrt(self.config.head_dim), None)

    def embedding_parts(self, tokens: Sequence[str], side: str, *, positional: str = "normal",
                        positional_seed: int = 0) -> EmbeddingParts:
        """The first layer's input for the T ``tokens`` at positions 0..T-1: the scaled
        token embeddings, the sinusoidal rows, their sum (T, D) float32.

        Raises:
            InputError: a positional experiment other than ``"normal"``.
        """
        self.pe_tables(len(tokens), positional, positional_seed)
        tokens = tuple(tokens)
        ids = torch.tensor([self.vocab.encode(tokens)])  # (1, T)
        with torch.inference_mode():
            emb = self.model.embed(ids)  # (1, T, D)
            total = self.model.positional(emb)  # (1, T, D)
        return EmbeddingParts(
            side=side, positional_mode="normal", tokens=tokens, ids=ids[0].numpy().copy(),
            positions=np.arange(len(tokens), dtype=np.int64), embedding=to_numpy(emb[0]),
            positional=to_numpy(self.model.positional.pe[:len(tokens)]),
            total=to_numpy(total[0]))

    def encoder_sublayers(self, trace) -> None:
        """None: there is no encoder."""
        return None
