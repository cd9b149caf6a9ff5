"""What one decoding records: each step, the beams, and the whole trace, as frozen
dataclasses of float32 numpy arrays (names as in Hugging Face's ``Seq2SeqLMOutput``).

Shape letters: S source length, T decoder steps, L layers, H heads, V target vocabulary
size, K top-k.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .settings import GenerationSettings


@dataclass(frozen=True)
class DecodeStep:
    """One decoding step t.

    Attributes:
        index: t, 0-based; the decoder input had t + 1 tokens.
        input_tokens: the decoder input so far, ``("<s>", y1, .., yt)``.
        token: the chosen next token y_{t+1}; ``token_id`` its id; ``prob`` its probability.
        top_tokens: the K most probable next tokens, most probable first.
        top_ids: (K,) int64 their ids.  top_probs: (K,) float32 their probabilities.
        entropy: entropy of the next-token distribution, in nats.
        forced: the token was given (a prefix or a reference), not chosen by the strategy.
        label, top_labels: what a person reads for ``token`` and ``top_tokens`` (a
            tokenizer's pieces as text, ``TargetSide.labels``); the tokens themselves when
            not given.
    """

    index: int
    input_tokens: tuple[str, ...]
    token: str
    token_id: int
    prob: float
    top_tokens: tuple[str, ...]
    top_ids: np.ndarray
    top_probs: np.ndarray
    entropy: float
    forced: bool = False
    label: str = ""
    top_labels: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.token)
        if not self.top_labels:
            object.__setattr__(self, "top_labels", tuple(self.top_tokens))


@dataclass(frozen=True)
class BeamCandidate:
    """One continuation considered at a beam-search step.

    Attributes:
        step: t, the decoding step (0-based) that produced the token.
        parent: index of the beam it extends among the previous step's kept candidates
            (0 at step 0, whose only beam is the start token).
        token_id: the token appended; token: its string; label: what a person reads
            for it (the token when not given).
        logprob: cumulative log-probability (natural log) of the hypothesis with it.
        status: ``"kept"`` (a live beam at the next step), ``"finished"`` (ended with
            ``</s>`` and joined the n-best list) or ``"pruned"`` (dropped).
    """

    step: int
    parent: int
    token_id: int
    token: str
    logprob: float
    status: str
    label: str = ""

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.token)


@dataclass(frozen=True)
class Hypothesis:
    """One beam-search output: ids and tokens (``</s>`` included if finished), summed
    log-probability (nats), score = logprob / len ** length_penalty, finished, end =
    (step, rank) of its last token in ``BeamTrace.steps``, and its text (the tokenizer's, for
    a Hugging Face model)."""

    ids: tuple[int, ...]
    tokens: tuple[str, ...]
    logprob: float
    score: float
    finished: bool
    end: tuple[int, int]
    text: str | None = None  # the hypothesis as text; default: tokens joined, no </s>

    def __post_init__(self) -> None:
        if self.text is None:
            object.__setattr__(self, "text", "".join(t for t in self.tokens if t != "</s>"))


@dataclass(frozen=True)
class BeamTrace:
    """Everything beam search did: ``steps[t]`` lists step t's candidates (``BeamCandidate``)
    in rank order, the top 2 x num_beams continuations of all live beams (``viz.beam_tree``
    draws them); ``hypotheses`` is the n-best list, best score first."""

    steps: tuple[tuple[BeamCandidate, ...], ...]
    hypotheses: tuple[Hypothesis, ...]
    num_beams: int
    length_penalty: float


@dataclass(frozen=True)
class DecodeTrace:
    """Everything one decoding of one sentence produced (names as in Hugging Face's
    ``Seq2SeqLMOutput``). All arrays are float32 numpy.

    Attributes:
        src_text: the sentence as given.
        src_tokens: the S encoder input tokens (the words, then ``</s>``); src_ids: (S,)
            int64 their ids (an unknown word's is ``<unk>``'s).
        tgt_tokens: ``("<s>", y1, .., yn)`` plus ``"</s>"`` if decoding finished; the decoder
            inputs are ``tgt_tokens[:-1]`` (T = len(tgt_tokens) - 1 of them).
        tgt_ids: (T + 1,) int64 their ids (the first is the decoder's start token).
        steps: T DecodeStep records, one per generated token.
        encoder_attentions: (L, H, S, S); None for a decoder-only model.
        decoder_attentions: (L, H, T, T); row t is decoder position t (token tgt_tokens[t]);
            cells above the diagonal are 0 (look-ahead mask). A decoder-only model's
            (``architecture``) is (L, H, N, N) over its one sequence, N = S + T: the
            prompt's S tokens (``src_tokens``), then the T decoder inputs (the prompt's last
            token, then every token written but the last), as Hugging Face's
            ``output_attentions`` of one forward pass over those N tokens.
        cross_attentions: (L, H, T, S); None for a decoder-only model (its rows over the
            prompt are ``decoder_attentions[:, :, S:, :S]``).
        step_probs: (T, V) the full next-token distribution at each step.
        finished: True if ``</s>`` was produced before the length limit.
        unknown_words: source words outside the vocabulary (decoded as ``<unk>``).
        settings: the ``GenerationSettings`` decoded with (for a teacher-forced trace, only
            its languages and positional experiment applied).
        heads_off: the (kind, layer, head) keys of the heads switched off, sorted.
        teacher_forced: the tokens are a reference fed to the decoder, not decoded.
        n_forced: how many of the T tokens were forced (a prefix, or a whole reference).
        beam: the beam search record when ``num_beams`` > 1 (the maps are those of its
            best hypothesis), else None.
        src_labels: S readable labels of the source tokens (subword pieces without their
            byte-level marks: ``Ġlearn`` -> ``learn``); ``src_tokens`` when empty.
        src_words: S word indices (``subword.word_ids``): pieces of one word share one;
            every token its own word when empty.
        tgt_labels: what a person reads for each of ``tgt_tokens`` (a tokenizer's pieces
            as text: ``▁我们`` -> ``我们``, byte-level ``ä»Ĭ`` -> ``今``; ``TargetSide.labels``);
            ``tgt_tokens`` when empty.
        output_text: the translation as text: the tokenizer's detokenised output for a
            Hugging Face model; by default the output tokens joined without spaces
            (one Chinese character per token).
        architecture: ``"encoder-decoder"`` or ``"decoder-only"`` (what the views read to
            know which maps there are).
    """

    src_text: str
    src_tokens: tuple[str, ...]
    tgt_tokens: tuple[str, ...]
    tgt_ids: np.ndarray
    steps: tuple[DecodeStep, ...]
    encoder_attentions: np.ndarray | None
    decoder_attentions: np.ndarray
    cross_attentions: np.ndarray | None
    step_probs: np.ndarray
    finished: bool
    unknown_words: tuple[str, ...] = ()
    settings: GenerationSettings = GenerationSettings()
    heads_off: tuple[tuple[str, int, int], ...] = ()
    teacher_forced: bool = False
    n_forced: int = 0
    beam: BeamTrace | None = None
    src_labels: tuple[str, ...] = ()
    src_words: tuple[int, ...] = ()
    output_text: str | None = None
    src_ids: np.ndarray | None = None
    tgt_labels: tuple[str, ...] = ()
    architecture: str = "encoder-decoder"

    def __post_init__(self) -> None:
        if not self.tgt_labels:
            object.__setattr__(self, "tgt_labels", tuple(self.tgt_tokens))
        if self.output_text is None:
            object.__setattr__(self, "output_text", "".join(self.output_tokens))
        if not self.src_labels:
            object.__setattr__(self, "src_labels", tuple(self.src_tokens))
        if not self.src_words:
            object.__setattr__(self, "src_words", tuple(range(len(self.src_tokens))))

    @property
    def decoder_input_tokens(self) -> tuple[str, ...]:
        """The T decoder inputs ``<s> y1 .. y_{T-1}``: rows of the decoder-side maps."""
        return self.tgt_tokens[:-1]

    @property
    def decoder_input_labels(self) -> tuple[str, ...]:
        """What a person reads for the T decoder inputs (``tgt_labels[:-1]``)."""
        return self.tgt_labels[:-1]

    @property
    def step_labels(self) -> tuple[str, ...]:
        """The T decoder-side rows as a person reads them, one convention in every view:
        the decoder input at step t and the token it produced, ``我 → 们``
        (``tgt_labels[t] → tgt_labels[t + 1]``)."""
        return tuple(f"{a} → {b}" for a, b in zip(self.tgt_labels[:-1], self.tgt_labels[1:],
                                                   strict=True))

    @property
    def output_labels(self) -> tuple[str, ...]:
        """What a person reads for the generated tokens, without ``<s>`` and ``</s>``."""
        return tuple(label for tok, label in zip(self.tgt_tokens[1:], self.tgt_labels[1:],
                                                 strict=True) if tok != "</s>")

    @property
    def output_tokens(self) -> tuple[str, ...]:
        """The generated tokens without ``<s>`` and ``</s>``."""
        return tuple(t for t in self.tgt_tokens[1:] if t != "</s>")


def join_blocks(encoder: np.ndarray, cross: np.ndarray, decoder: np.ndarray) -> np.ndarray:
    """A decoder-only model's one causal map from its three blocks: the prompt's own rows
    ``encoder`` (L, H, S, S), the decoder inputs' rows over the prompt ``cross``
    (L, H, T, S) and over themselves ``decoder`` (L, H, T, T) -> (L, H, N, N), N = S + T,
    zero above the diagonal."""
    L, H, S, _ = encoder.shape
    T = decoder.shape[2]
    out = np.zeros((L, H, S + T, S + T), np.float32)
    out[:, :, :S, :S] = encoder
    out[:, :, S:, :S] = cross
    out[:, :, S:, S:] = decoder
    return out


def split_at_prompt(trace: DecodeTrace) -> DecodeTrace:
    """A decoder-only trace with its one (L, H, N, N) map cut where the prompt ends, into
    the encoder-decoder's three arrays: the prompt's rows over the prompt
    (``encoder_attentions``, (L, H, S, S)), the decoder inputs' rows over the prompt
    (``cross_attentions``, (L, H, T, S): where cross-attention went) and over the decoder
    inputs (``decoder_attentions``, (L, H, T, T)). A decoder input's row sums to 1 over its
    two blocks together, not in each. ``architecture`` stays ``"decoder-only"``, so a
    reader knows; ``one_map`` joins them again. An encoder-decoder trace, or one already
    split, is returned as it is."""
    if trace.architecture != "decoder-only" or trace.encoder_attentions is not None:
        return trace
    S, a = len(trace.src_tokens), trace.decoder_attentions
    return replace(trace, encoder_attentions=a[:, :, :S, :S].copy(),
                   cross_attentions=a[:, :, S:, :S].copy(),
                   decoder_attentions=a[:, :, S:, S:].copy())


def one_map(trace: DecodeTrace) -> np.ndarray:
    """A decoder-only trace's (L, H, N, N) self-attention over its one sequence, whether it
    is split (``split_at_prompt``) or not.

    Raises:
        ValueError: an encoder-decoder trace (it has two stacks).
    """
    if trace.architecture != "decoder-only":
        raise ValueError("an encoder-decoder trace has no one map")
    if trace.encoder_attentions is None:
        return trace.decoder_attentions
    return join_blocks(trace.encoder_attentions, trace.cross_attentions,
                       trace.decoder_attentions)
