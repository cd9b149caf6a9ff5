"""Gradient attributions of each generated token to the source tokens and to the decoder's
earlier inputs, on the token embeddings, for our models and Hugging Face ones
(``attribution_inputs``).

- **gradient x input** (Shrikumar et al. 2016): each embedding times the gradient of the
  chosen token's log-probability with respect to it, by ``torch.autograd`` (one backward
  pass; the tests hold it equal to ``captum.attr.InputXGradient``, whose import, with the
  matplotlib Captum imports, costs the server about 26 MB);
- **integrated gradients** (``captum.attr.IntegratedGradients``; Sundararajan et al. 2017):
  the gradient averaged along the straight path from a baseline to the input, times
  (input - baseline). The baseline is each side's ``<pad>`` embedding at every position
  (all zeros in our models: the pad row is zero), positions kept. Completeness: the
  attributions sum to f(input) - f(baseline); ``completeness_error`` is the gap relative
  to that difference. A step whose gap is above MAX_COMPLETENESS_ERROR is integrated
  again with twice the points, up to MAX_STEPS (the trapezoid rule: on these models the
  path from the zero embedding bends sharply near it, and Gauss-Legendre points converged
  more slowly there).

f is the log-probability of the token the decoding chose at step t, given the sentence and
the decoder inputs up to t (teacher forcing the trace's tokens). A token's score is its
embedding attribution summed over the D dimensions; ``normalised`` divides each step's
absolute scores by their sum over the source and the prefix together, so that
``source_share`` says how much the step drew on the sentence rather than on what it had
written.

Shape letters: S source tokens, T decoder steps, D d_model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..backends.hf_causal import HFCausal
from ..backends.one_stack import OneStack
from ..backends.records import AttributionInputs
from ..core.transformer import Transformer

METHODS = ("input_x_gradient", "integrated_gradients")
N_STEPS = 64  # integrated gradients' first number of points (Riemann, trapezoid rule)
MAX_STEPS = 2048  # the path from the zero embedding turns sharply near it: some steps need many
BATCH = 256  # points evaluated at once (memory)
MAX_COMPLETENESS_ERROR = 0.02  # 2 %


@dataclass(frozen=True)
class Attribution:
    """One decoding's attributions by one method.

    Attributes:
        method: one of METHODS.
        source: (T, S) each source token's signed attribution at each step.
        prefix: (T, T) each decoder input's signed attribution; 0 above the diagonal (step t
            sees inputs 0..t).
        completeness_error: (T,) |sum of attributions - (f(x) - f(baseline))| / |f(x) -
            f(baseline)| for integrated gradients; None for gradient x input.
        n_steps: (T,) the points each step was integrated with (None for gradient x input).
    """

    method: str
    source: np.ndarray
    prefix: np.ndarray
    completeness_error: np.ndarray | None = None
    n_steps: np.ndarray | None = None

    def normalised(self) -> tuple[np.ndarray, np.ndarray]:
        """(source (T, S), prefix (T, T)) absolute attributions, each row divided by the sum
        of both parts' row (a row of zeros stays zero)."""
        src, pre = np.abs(self.source), np.abs(self.prefix)
        total = src.sum(-1, keepdims=True) + pre.sum(-1, keepdims=True)
        total = np.where(total > 0, total, 1.0)
        return src / total, pre / total

    def source_share(self) -> np.ndarray:
        """(T,) the share of each step's normalised attribution on the source tokens."""
        return self.normalised()[0].sum(-1)


def _step_function(model: Transformer, src_ids: torch.Tensor, tgt_ids: torch.Tensor, *,
                   step: int, token: int):
    """f(src_embeds (B, S, D), tgt_embeds (B, step + 1, D)) -> (B,) the log-probability of
    ``token`` after decoder inputs 0..step."""
    def f(src_e: torch.Tensor, tgt_e: torch.Tensor) -> torch.Tensor:
        b = src_e.shape[0]
        src = src_ids[None].expand(b, -1)
        tgt = tgt_ids[None, : step + 1].expand(b, -1)
        enc = model.encode(src, src_embeds=src_e)
        out = model.decode(tgt, enc.memory, enc.key_padding_mask, tgt_embeds=tgt_e)
        return torch.log_softmax(out.logits[:, step].float(), dim=-1)[:, token]
    return f


def attribution_inputs(model, src_ids: torch.Tensor, tgt_ids: torch.Tensor
                       ) -> AttributionInputs:
    """The decoding's embeddings and step functions of ``model``: our Transformer or our
    decoder-only model behind ``backends.one_stack.OneStack`` (their scaled token
    embeddings, through ``encode`` / ``decode``'s ``src_embeds`` / ``tgt_embeds``: the
    prompt before its last token is the source, the decoder inputs from ``<sep>`` the
    prefix), a Hugging Face causal model (``HFCausal``: its input embeddings, unscaled, the
    same way; the baseline is its ``<pad>`` id's embedding, which may be its EOS's) or a
    Hugging Face ``HFSeq2Seq`` (``backends.hf_attribution``: hooks on its ``embed_tokens``).
    Call it where autograd may run (not under inference mode)."""
    def step_function(step: int, token: int):
        return _step_function(model, src_ids, tgt_ids, step=step, token=token)

    if isinstance(model, HFCausal):  # one stack: encode and decode take embeddings too
        embed = model.hf.get_input_embeddings()  # (V, D), no positions added
        with torch.no_grad():
            pad = embed(torch.tensor([[model.config.pad_id]]))[0, 0].detach()  # (D,)
            return AttributionInputs(embed(src_ids[None]).detach(),  # (1, S, D)
                                     embed(tgt_ids[None, :-1]).detach(),  # (1, T, D)
                                     pad, pad, step_function)
    if not isinstance(model, Transformer | OneStack):
        from ..backends.hf_attribution import attribution_inputs as hf_inputs

        return hf_inputs(model, src_ids, tgt_ids)
    pad = model.config.pad_id

    return AttributionInputs(
        model.src_embed(src_ids[None]).detach(),  # (1, S, D)
        model.tgt_embed(tgt_ids[None, :-1]).detach(),  # (1, T, D)
        model.src_embed.lut.weight[pad].detach() * model.src_embed.scale,  # (D,)
        model.tgt_embed.lut.weight[pad].detach() * model.tgt_embed.scale,
        step_function)


def attribute(model, src_ids: torch.Tensor, tgt_ids: torch.Tensor,
              method: str = "integrated_gradients") -> Attribution:
    """Attribute every step of one decoding.

    Args:
        model: our Transformer or a Hugging Face ``HFSeq2Seq`` (``eval()``; a
            ``Translator``'s ``model``); its weights are not changed.
        src_ids: (S,) int64 the source ids, ``</s>`` included.
        tgt_ids: (T + 1,) int64 ``<s>`` and the T tokens chosen (the trace's ``tgt_ids``).
        method: one of METHODS.

    Returns:
        ``Attribution``.

    Raises:
        ValueError: an unknown method, or ids that are not 1-D or too short.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if src_ids.dim() != 1 or tgt_ids.dim() != 1 or len(src_ids) < 1 or len(tgt_ids) < 2:
        raise ValueError("expected (S,) source ids and (T + 1,) target ids, T >= 1")
    S, T = len(src_ids), len(tgt_ids) - 1
    source, prefix = np.zeros((T, S), np.float32), np.zeros((T, T), np.float32)
    errors, points = np.zeros(T, np.float32), np.zeros(T, np.int64)
    with torch.inference_mode(False), torch.enable_grad():
        given = attribution_inputs(model, src_ids, tgt_ids)
        for t in range(T):
            f = given.step_function(t, int(tgt_ids[t + 1]))
            inputs = (given.src, given.tgt[:, : t + 1])  # (1, S, D), (1, t + 1, D)
            if method == "input_x_gradient":
                xs = tuple(x.clone().requires_grad_(True) for x in inputs)
                grads = torch.autograd.grad(f(*xs).sum(), xs)  # (1, S, D), (1, t + 1, D)
                a_src, a_tgt = (g * x for g, x in zip(grads, xs, strict=True))
            else:
                from captum.attr import IntegratedGradients  # asked for: Captum, matplotlib

                base = tuple(pad.expand_as(x).clone()
                             for pad, x in zip((given.src_pad, given.tgt_pad), inputs, strict=True))
                n = N_STEPS
                while True:
                    (a_src, a_tgt), delta = IntegratedGradients(f).attribute(
                        inputs, baselines=base, n_steps=n, method="riemann_trapezoid",
                        internal_batch_size=BATCH, return_convergence_delta=True)
                    with torch.no_grad():
                        gap = float((f(*inputs) - f(*base)).abs())
                    errors[t] = float(delta.abs()) / max(gap, 1e-8)
                    points[t] = n
                    if errors[t] <= MAX_COMPLETENESS_ERROR or n >= MAX_STEPS:
                        break
                    n *= 2
            source[t] = a_src[0].sum(-1).detach().numpy()  # (S,)
            prefix[t, : t + 1] = a_tgt[0].sum(-1).detach().numpy()  # (t + 1,)
    if method == "input_x_gradient":
        return Attribution(method, source, prefix)
    return Attribution(method, source, prefix, errors, points)
