"""Token-by-token decoding that records everything a person may want to see.

Greedy decoding (the Annotated Transformer's ``greedy_decode``): start the decoder with
``<s>``, and at step t feed ``<s> y1 .. yt``, take the most probable next token, stop at
``</s>`` or after ``max_new_tokens``. Every step records the decoder input so far, the chosen
token, the top-k next-token probabilities and the new rows of the decoder self-attention and
cross-attention, so the trace holds the same maps that one teacher-forced pass over the final
output would give (a test checks this).

Shape letters: B batch, S source length, T decoder steps, L layers, H heads, V target
vocabulary size, K top-k.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .transformer import Transformer


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


@dataclass(frozen=True)
class DecodeTrace:
    """Everything one decoding of one sentence produced (names as in Hugging Face's
    ``Seq2SeqLMOutput``). All arrays are float32 numpy.

    Attributes:
        src_text: the sentence as given.
        src_tokens: the S encoder input tokens (the words, then ``</s>``).
        tgt_tokens: ``("<s>", y1, .., yn)`` plus ``"</s>"`` if decoding finished; the decoder
            inputs are ``tgt_tokens[:-1]`` (T = len(tgt_tokens) - 1 of them).
        steps: T DecodeStep records, one per generated token.
        encoder_attentions: (L, H, S, S).
        decoder_attentions: (L, H, T, T); row t is decoder position t (token tgt_tokens[t]);
            cells above the diagonal are 0 (look-ahead mask).
        cross_attentions: (L, H, T, S).
        step_probs: (T, V) the full next-token distribution at each step.
        finished: True if ``</s>`` was produced before the length limit.
        unknown_words: source words outside the vocabulary (decoded as ``<unk>``).
    """

    src_text: str
    src_tokens: tuple[str, ...]
    tgt_tokens: tuple[str, ...]
    steps: tuple[DecodeStep, ...]
    encoder_attentions: np.ndarray
    decoder_attentions: np.ndarray
    cross_attentions: np.ndarray
    step_probs: np.ndarray
    finished: bool
    unknown_words: tuple[str, ...] = ()

    @property
    def decoder_input_tokens(self) -> tuple[str, ...]:
        """The T decoder inputs ``<s> y1 .. y_{T-1}``: rows of the decoder-side maps."""
        return self.tgt_tokens[:-1]

    @property
    def output_tokens(self) -> tuple[str, ...]:
        """The generated tokens without ``<s>`` and ``</s>``."""
        return tuple(t for t in self.tgt_tokens[1:] if t != "</s>")

    @property
    def output_text(self) -> str:
        """The translation as text: the output tokens joined without spaces (Chinese)."""
        return "".join(self.output_tokens)


@dataclass(frozen=True)
class GreedyResult:
    """Raw result of ``greedy_decode`` for one sentence (ids and arrays; no strings).

    tgt_ids: (T + 1,) ``<s>`` and the T generated ids; step_probs: (T, V);
    encoder_attentions (L, H, S, S); decoder_attentions (L, H, T, T);
    cross_attentions (L, H, T, S); finished: ended with ``</s>``.
    """

    tgt_ids: np.ndarray
    step_probs: np.ndarray
    encoder_attentions: np.ndarray
    decoder_attentions: np.ndarray
    cross_attentions: np.ndarray
    finished: bool


def _stack_layers(per_layer: tuple[torch.Tensor, ...]) -> np.ndarray:
    """Per-layer (1, H, Tq, Tk) tensors -> (L, H, Tq, Tk) float32 numpy."""
    return torch.stack([a[0] for a in per_layer]).float().cpu().numpy()


@torch.inference_mode()
def greedy_decode(model: Transformer, src_ids: torch.Tensor, max_new_tokens: int) -> GreedyResult:
    """Greedy decoding of one sentence, recording every step.

    Args:
        model: a Transformer in eval mode.
        src_ids: (1, S) int64 source ids ending with ``</s>``, no padding.
        max_new_tokens: the most tokens to generate (``</s>`` included).

    Returns:
        GreedyResult with T = number of generated tokens.

    Raises:
        ValueError: a batch of more than one sentence, or ``max_new_tokens`` < 1 or beyond
            the positional table.
    """
    c = model.config
    if src_ids.dim() != 2 or src_ids.size(0) != 1:
        raise ValueError(f"src_ids must be (1, S), got {tuple(src_ids.shape)}")
    if not 1 <= max_new_tokens <= c.max_len - 1:
        raise ValueError(f"max_new_tokens must be in [1, {c.max_len - 1}], got {max_new_tokens}")
    enc = model.encode(src_ids)
    L, H, S = c.num_decoder_layers, c.nhead, src_ids.size(1)
    dec_attn = np.zeros((L, H, max_new_tokens, max_new_tokens), np.float32)
    cross_attn = np.zeros((L, H, max_new_tokens, S), np.float32)
    probs_rows = []
    ys = torch.full((1, 1), c.bos_id, dtype=torch.long)  # (1, t + 1)
    finished = False
    for t in range(max_new_tokens):
        out = model.decode(ys, enc.memory, enc.key_padding_mask)
        probs = out.logits[0, -1].float().softmax(-1)  # (V,)
        probs_rows.append(probs.numpy())
        # Row t of every layer's maps: query = position t, keys = positions 0..t / source.
        dec_attn[:, :, t, : t + 1] = _stack_layers(out.self_attentions)[:, :, t, :]
        cross_attn[:, :, t, :] = _stack_layers(out.cross_attentions)[:, :, t, :]
        next_id = int(probs.argmax())
        ys = torch.cat([ys, torch.tensor([[next_id]])], dim=1)
        if next_id == c.eos_id:
            finished = True
            break
    T = ys.size(1) - 1
    return GreedyResult(
        tgt_ids=ys[0].numpy().copy(),
        step_probs=np.stack(probs_rows).astype(np.float32),
        encoder_attentions=_stack_layers(enc.attentions),
        decoder_attentions=dec_attn[:, :, :T, :T].copy(),
        cross_attentions=cross_attn[:, :, :T].copy(),
        finished=finished,
    )


@torch.inference_mode()
def greedy_decode_batch(
    model: Transformer, src_ids: torch.Tensor, max_new_tokens: int
) -> list[list[int]]:
    """Greedy decoding of a padded batch at once (for evaluation; records no attention).

    Args:
        src_ids: (B, S) int64, right-padded with ``pad_id``, each row ending in ``</s>``.
        max_new_tokens: the most tokens to generate per sentence.

    Returns:
        B lists of generated ids, each without ``<s>`` and cut before ``</s>``.
    """
    c = model.config
    B = src_ids.size(0)
    enc = model.encode(src_ids)
    ys = torch.full((B, 1), c.bos_id, dtype=torch.long)  # (B, t + 1)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_new_tokens):
        logits = model.decode(ys, enc.memory, enc.key_padding_mask).logits[:, -1]  # (B, V)
        next_ids = logits.argmax(-1).masked_fill(done, c.pad_id)  # (B,)
        ys = torch.cat([ys, next_ids[:, None]], dim=1)
        done |= next_ids == c.eos_id
        if bool(done.all()):
            break
    results = []
    for row in ys[:, 1:].tolist():
        out = []
        for i in row:
            if i in (c.eos_id, c.pad_id):
                break
            out.append(i)
        results.append(out)
    return results


def top_k_step(probs: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, float]:
    """The k most probable ids of a (V,) distribution, their probabilities, and its entropy
    H = -sum p log p in nats."""
    k = max(1, min(k, probs.shape[0]))
    ids = np.argsort(-probs, kind="stable")[:k]
    p = probs[probs > 0]
    entropy = float(-(p * np.log(p)).sum())
    return ids.astype(np.int64), probs[ids].astype(np.float32), entropy
