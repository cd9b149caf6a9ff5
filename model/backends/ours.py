"""Our own checkpoints as a backend: the parts (``parts``) a trained ``Transformer`` and
its vocabularies plug into ``translator.Translator``: ``OurSource`` (the source tokenizer:
words, or byte-level BPE pieces), ``OurTarget`` (the Chinese characters) and ``OurInternals``
(masks, the sinusoidal positions and their experiments, one head's inputs, the embeddings,
the encoder's sublayers). ``build_translator`` puts them together; ``load.load_pretrained``
calls it for a folder of ours.

Shape letters: S source length, T decoder inputs, Tq / Tk query / key length, D d_model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from ..core.counts import TrainCounts
from ..core.layers import positional_tables, shuffled_positions
from ..core.masks import mask_views
from ..core.sublayers import SublayerNorms, encoder_sublayer_norms
from ..core.subword import piece_label, pieces, word_ids
from ..core.transformer import Transformer
from ..core.vocab import EOS, SPECIALS, Vocab, normalize_text, tokenize_en, tokenize_zh
from ..decoding import DecodeTrace, GenerationSettings, LogitsProcessor
from ..errors import InputError
from ..errors import short_repr as _short
from .records import EmbeddingParts, HeadInputs, ModelInfo, to_numpy
from .translator import Translator, card_examples, trained_source_tokens

DIRECTIONS = (("en", "zh"), ("zh", "en"))  # (source, target) a card's ``languages`` may name


def build_translator(model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab, card: dict, *,
                     name: str = "", src_tokenizer=None, tgt_tokenizer=None,
                     heldout: tuple[tuple[str, str], ...] = (),
                     train_counts: TrainCounts | None = None) -> Translator:
    """One of our checkpoints as a ``Translator``: ``model`` (eval mode) with its source
    vocabulary and, for a subword model, its byte-level BPE tokenizer (``core.subword``),
    its target vocabulary (and an English target's tokenizer), card (its ``languages``,
    ``[source, target]``, default en -> zh), the folder's held-out pairs and training counts.

    Raises:
        CheckpointError: the card names languages other than ``DIRECTIONS``.
    """
    from ..core.checkpoint import CheckpointError

    c = model.config
    languages = tuple(card.get("languages") or ("en", "zh"))
    if languages not in DIRECTIONS:
        raise CheckpointError(f"card.json: languages must be one of {[list(d) for d in DIRECTIONS]}"
                              f", got {_short(card.get('languages'))}")
    info = ModelInfo(
        backend="ours", model_type="transformer", subword=src_tokenizer is not None,
        positional_scheme="sinusoidal", languages=(), task_prefixes={},
        examples=card_examples(card), eos_token=tgt_vocab.itos[c.eos_id],
        max_source_words=c.max_len - 1, default_max_new_tokens=c.max_len - 1,
        early_stopping=True, heldout=tuple(heldout),
        trained_source_tokens=trained_source_tokens(card), train_counts=train_counts,
        source_language=languages[0], target_language=languages[1])
    return Translator(model=model,
                      source_side=OurSource(src_vocab, src_tokenizer, language=languages[0]),
                      target=OurTarget(tgt_vocab, tgt_tokenizer),
                      internals=OurInternals(model, src_vocab, tgt_vocab), info=info,
                      card=card, name=name)


class OurSource:
    """The source side of one of our models (``parts.SourceSide``): English words
    (``vocab.tokenize_en``), byte-level BPE pieces (``core.subword``) or Chinese characters
    (``vocab.tokenize_zh``), then ``</s>``.

    Attributes:
        vocab: the source ``Vocab``; tokenizer: the byte-level BPE tokenizer, or None for
            a word-level model; language: ``"en"`` or ``"zh"`` (one token per character).
    """

    def __init__(self, vocab: Vocab, tokenizer=None, language: str = "en") -> None:
        self.vocab, self.tokenizer, self.language = vocab, tokenizer, language

    def tokenize(self, text: str) -> list[str]:
        """The source tokens of ``text`` (without ``</s>``): byte-level BPE pieces for a
        subword model (``Ġlearn``, ``ing``; never ``<unk>``), Chinese characters for a
        Chinese source (``vocab.tokenize_zh``: ASCII ``?`` -> ``？``), else
        ``vocab.tokenize_en``."""
        if self.language == "zh":
            return tokenize_zh(text)
        if self.tokenizer is None:
            return tokenize_en(text)
        words = " ".join(normalize_text(text).split())  # no leading or repeated spaces
        return pieces(self.tokenizer, words)

    def encode(self, pieces: list[str], src_lang: str | None = None) -> list[int]:
        """Source pieces -> S ids with ``</s>`` appended (``src_lang`` is for
        multilingual models; ours have none)."""
        return self.vocab.encode([*pieces, EOS])

    def tokens(self, pieces: list[str], src_ids: list[int]) -> tuple[str, ...]:
        """The S encoder input tokens of ``pieces``: the words as typed (an unknown one
        keeps its spelling) and ``</s>``."""
        return (*pieces, EOS)

    @staticmethod
    def labels(tokens: Sequence[str]) -> tuple[str, ...]:
        """Readable labels of source tokens (``subword.piece_label``: ``Ġlearn`` -> ``learn``);
        word-level tokens are their own labels."""
        return tuple(piece_label(tok) for tok in tokens)

    def words(self, tokens: Sequence[str]) -> tuple[int, ...]:
        """The word index of each encoder input token: pieces of one English word share one
        (``subword.word_ids``); Chinese characters are grouped into the words jieba cuts
        (``chinese_words``)."""
        if self.language == "zh":
            return chinese_words(tokens)
        return word_ids(tokens)


def chinese_words(tokens: Sequence[str]) -> tuple[int, ...]:
    """The word index of each token of a Chinese source (one character each, then
    ``</s>``): the characters of one word as the app cuts the sentence
    (``model.core.zh_segment.cut``: jieba with a classroom user dictionary; 我们/为什么/工作/？
    -> 0 0 1 1 1 2 2 3) share one; a special token or a token
    that is not one character is a word alone.

    >>> chinese_words(["我", "们", "工", "作", "</s>"])
    (0, 0, 1, 1, 2)
    """
    from model.core.zh_segment import cut

    out: list[int] = []
    i, n = 0, len(tokens)
    while i < n:
        j = i
        while j < n and len(tokens[j]) == 1 and tokens[j] not in SPECIALS:
            j += 1
        lengths = [len(w) for w in cut("".join(tokens[i:j]))] if j > i else [1]
        for length in lengths:  # a special or longer token: a word of its own
            out.extend([out[-1] + 1 if out else 0] * length)
        i = max(j, i + 1)
    return tuple(out)


class OurTarget:
    """The target side of one of our models (``parts.TargetSide``; ``Translator.target``):
    its vocabulary (one token per Chinese character, or an English target's byte-level BPE
    pieces) and how target text and ids convert. Ours force nothing (a Hugging Face
    model's ``hf_tokenizer.HFTarget`` does).

    Attributes:
        vocab: the target ``Vocab`` (``itos``, ``stoi``, ``encode``, ``decode``);
        tokenizer: an English target's ``tokenizers.Tokenizer``, or None (Chinese).
    """

    def __init__(self, vocab: Vocab, tokenizer=None) -> None:
        self.vocab, self.tokenizer = vocab, tokenizer

    def ids(self, tokens: str | Sequence[str], what: str = "prefix") -> list[int]:
        """Target tokens (a string: Chinese one token per character, English its BPE
        pieces, ``subword.pieces``; or a token list) as ids.

        Raises:
            InputError: a token outside the target vocabulary, or a special token other
                than a final ``</s>`` (the message names the ``what``, and lists them).
        """
        if isinstance(tokens, str) and self.tokenizer is not None:
            tokens = pieces(self.tokenizer, " ".join(normalize_text(tokens).split()))
        elif isinstance(tokens, str):
            tokens = tokenize_zh(tokens)
        tokens = list(tokens)
        bad = [t for i, t in enumerate(tokens) if t not in self.vocab
               or (t in SPECIALS and not (t == EOS and i == len(tokens) - 1))]
        if bad:
            shown = ", ".join(_short(t, 12) for t in list(dict.fromkeys(bad))[:5])
            raise InputError(f"The {what} has tokens the model cannot produce: {shown}")
        return self.vocab.encode(tokens)

    def forced_start(self, ids: list[int], tgt_lang: str | None = None) -> list[int]:
        """Target ids with the token ``generate()`` forces first (a multilingual model's
        target language) put in front when missing; ours force nothing."""
        return ids

    def text(self, tgt_ids: np.ndarray) -> str | None:
        """The text of decoder ids ``<s> y1 .. yn`` ((n + 1,) int): an English target's
        pieces decoded (specials skipped), or None for the trace's default (Chinese: the
        output tokens joined without spaces)."""
        if self.tokenizer is None:
            return None
        return self.tokenizer.decode([int(i) for i in tgt_ids]).strip()

    def labels(self, ids) -> tuple[str, ...]:
        """What a person reads for each of the ids ((n,) int): Chinese characters as they
        are, an English target's pieces as ``subword.piece_label`` shows them
        (``Ġwork`` -> ``work``)."""
        tokens = [self.vocab.itos[int(i)] for i in ids]
        return tuple(piece_label(t) for t in tokens) if self.tokenizer else tuple(tokens)

    def processors(self, max_new_tokens: int, tgt_lang: str | None = None
                   ) -> list[LogitsProcessor]:
        """What ``generate()`` would do to each step's log-probabilities (a list of
        ``decoding.LogitsProcessor``): none, our models use their distribution as is."""
        return []


class OurInternals:
    """What the views and the analysis recompute of one of our Transformers
    (``parts.Internals``): its masks, its sinusoidal positions and the positional
    experiments, one head's inputs, the embeddings and the encoder's sublayers.

    Attributes:
        model: the ``Transformer``; config: its ``TransformerConfig``; src_vocab,
            tgt_vocab: the two ``Vocab``s.
    """

    def __init__(self, model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab) -> None:
        self.model, self.config = model, model.config
        self.src_vocab, self.tgt_vocab = src_vocab, tgt_vocab

    def mask_views(self, src_tokens: list[str], tgt_tokens: list[str], pad: int = 0
                   ) -> dict[str, np.ndarray]:
        """The model's masks for a sentence pair right-padded with ``pad`` ``<pad>`` tokens
        on both sides (as when it shares a batch with longer sentences).

        Returns:
            ``masks.mask_views`` of the padded ids: bool arrays, True = blocked.
        """
        pad_id = self.config.pad_id
        return mask_views(self.src_vocab.encode(src_tokens) + [pad_id] * pad,
                          self.tgt_vocab.encode(tgt_tokens) + [pad_id] * pad, pad_id)

    def pe_tables(self, src_len: int, positional: str = "normal", positional_seed: int = 0
                  ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """The (source (S, D), target (max_len, D)) positional encodings that a
        positional-encoding experiment adds instead of the sinusoidal table, or (None, None)
        for ``"normal"``; see ``layers.positional_tables``.

        Args:
            src_len: S, the source length with ``</s>``.
            positional: one of ``"normal"``, ``"none"``, ``"shuffled"``.
            positional_seed: the seed of the ``"shuffled"`` permutations.

        Raises:
            InputError: an unknown mode, a seed that is not an integer in [0, MAX_SEED], or S
                outside 1..max_len.
        """
        GenerationSettings(positional=positional, positional_seed=positional_seed)  # checks
        if not 1 <= src_len <= self.config.max_len:
            raise InputError(f"the source must have 1 to {self.config.max_len} tokens")
        return positional_tables(self.model.positional.pe, positional, src_len,
                                 int(positional_seed))

    def positional_encoding(self, length: int, side: str = "source") -> np.ndarray:
        """The model's sinusoidal table for ``length`` positions: (length, D) float32 (the
        same for both sides; ``side`` matters for Hugging Face models)."""
        if not 1 <= length <= self.config.max_len:
            raise ValueError(f"length must be in [1, {self.config.max_len}], got {length}")
        return self.model.positional.pe[:length].numpy().astype(np.float32)

    def relative_position_bias(self, q_len: int, k_len: int, side: str = "encoder"
                               ) -> np.ndarray | None:
        """A relative position bias (H, q_len, k_len) added to the scores, as T5 has
        (``hf.HFInternals``); None: ours add sinusoidal vectors to the embeddings instead
        (``positional_encoding``)."""
        return None

    def head_inputs(self, trace: DecodeTrace, kind: str, *, layer: int, head: int
                    ) -> HeadInputs:
        """What one head of one attention sublayer is recomputed from: its sublayer's inputs
        from one teacher-forced pass over ``trace``'s tokens with the positional encodings
        the trace was decoded with (``trace.settings``), and the layer's own projections
        (x_q (Tq, D), x_k (Tk, D); scaling 1 / sqrt(Dh), paper section 3.2.1; no bias).
        ``kind``, ``layer`` and ``head`` are checked by the caller
        (``analysis.internals.head_internals``)."""
        model = self.model
        src_ids = torch.from_numpy(trace.src_ids)[None]  # (1, S)
        tgt_ids = torch.from_numpy(trace.tgt_ids[:-1])[None]  # (1, T) the decoder inputs
        src_pe, tgt_pe = self.pe_tables(src_ids.size(1), trace.settings.positional,
                                        trace.settings.positional_seed)
        enc = model.encode(src_ids, return_layers=True, pe_table=src_pe)
        if kind == "encoder":
            attn = model.encoder_layers[layer].self_attn
            x_q = x_k = enc.layers[layer].self_attention_input[0]  # (S, D)
        else:
            dec = model.decode(tgt_ids, enc.memory, enc.key_padding_mask,
                               return_layers=True, pe_table=tgt_pe)
            out = dec.layers[layer]
            if kind == "decoder":
                attn = model.decoder_layers[layer].self_attn
                x_q = x_k = out.self_attention_input[0]  # (T, D)
            else:
                attn = model.decoder_layers[layer].cross_attn
                x_q, x_k = out.cross_attention_input[0], enc.memory[0]  # (T, D), (S, D)
        return HeadInputs(x_q, x_k, (attn.q_proj, attn.k_proj, attn.v_proj),
                          1 / math.sqrt(self.config.head_dim), None)

    def encoder_sublayers(self, trace: DecodeTrace) -> SublayerNorms:
        """What each encoder sublayer adds to each source token of ``trace``, with the
        positional encodings it was decoded with (``core.sublayers``)."""
        src_ids = torch.from_numpy(trace.src_ids)[None]  # (1, S)
        src_pe, _ = self.pe_tables(src_ids.size(1), trace.settings.positional,
                                    trace.settings.positional_seed)
        return encoder_sublayer_norms(self.model, src_ids, src_pe)

    def embedding_parts(self, tokens: Sequence[str], side: str, *, positional: str = "normal",
                        positional_seed: int = 0) -> EmbeddingParts:
        """The first layer's input for T tokens in its two parts (paper, sections 3.4 and
        3.5): the scaled token embedding and the positional encoding the experiment
        ``positional`` adds (``pe_tables``). Arguments are checked by the caller
        (``analysis.internals.embedding_parts``).

        Returns:
            EmbeddingParts with (T, D) float32 arrays.
        """
        c, model = self.config, self.model
        tokens = tuple(tokens)
        T = len(tokens)
        src_table, tgt_table = self.pe_tables(T, positional, positional_seed)
        vocab = self.src_vocab if side == "source" else self.tgt_vocab
        embed = model.src_embed if side == "source" else model.tgt_embed
        table = src_table if side == "source" else tgt_table
        ids = torch.tensor([vocab.encode(tokens)], dtype=torch.long)  # (1, T)
        with torch.inference_mode():
            emb = embed(ids)  # (1, T, D)
            total = model.positional(emb, pe_table=table)  # (1, T, D)
            added = (model.positional.pe if table is None else table)[:T]  # (T, D)
        if positional == "normal":
            positions = np.arange(T, dtype=np.int64)
        elif positional == "shuffled":
            n = T if side == "source" else c.max_len  # as layers.positional_tables
            positions = shuffled_positions(n, positional_seed)[:T].numpy().copy()
        else:
            positions = None
        return EmbeddingParts(
            side=side, positional_mode=positional, tokens=tokens, ids=ids[0].numpy().copy(),
            positions=positions, embedding=to_numpy(emb[0]), positional=to_numpy(added),
            total=to_numpy(total[0]),
        )
