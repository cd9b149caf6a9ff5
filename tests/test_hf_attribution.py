"""Attribution and value zeroing of Hugging Face models (model.backends.hf_attribution), on
the tiny random-weight folders of every family and geometry (``testkit/hf_tiny.py``):

- value zeroing equals the same intervention made by hand on a copy of the model (a hook
  zeroes one token's values, Hugging Face's own ``decoder_hidden_states`` give the layer's
  output);
- the step function with the embeddings as they are reads the model's own log-probability;
- gradient x input adds up to the directional derivative along the embeddings, and
  integrated gradients are complete within 2 %;
- the shared model keeps no hook."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from model import load_pretrained
from model.analysis.attribution import MAX_COMPLETENESS_ERROR, attribute, attribution_inputs
from model.analysis.value_zeroing import value_zeroing
from testkit.hf_tiny import ALL_FAMILIES, tiny_folder

SENTENCE = "My mother is a doctor."


@pytest.fixture(scope="module", params=ALL_FAMILIES)
def decoded(request, tmp_path_factory):
    """(translator, trace) of one family."""
    tr = load_pretrained(tiny_folder(request.param, tmp_path_factory))
    return tr, tr.generate(SENTENCE, max_new_tokens=6)


def _hooks(module: torch.nn.Module) -> int:
    return sum(len(m._forward_hooks) for m in module.modules())


def _first_layer_output(hf, src, tgt, v_proj=None, j: int = 0) -> torch.Tensor:
    """Decoder layer 0's output (T, D) from Hugging Face's own hidden states, with token j's
    values zeroed by a hook on ``v_proj`` (None: no hook)."""
    def zero(module, inputs, output):
        output = output.clone()
        output[:, j, :] = 0.0
        return output

    handle = v_proj.register_forward_hook(zero) if v_proj is not None else None
    try:
        with torch.inference_mode():
            out = hf(input_ids=src[None], decoder_input_ids=tgt[None], use_cache=False,
                     output_hidden_states=True, return_dict=True)
    finally:
        if handle is not None:
            handle.remove()
    return out.decoder_hidden_states[1][0]  # the first of two layers: no final norm on it


def test_value_zeroing_is_the_layers_move_when_the_values_are_zeroed_by_hand(decoded):
    tr, trace = decoded
    src, tgt = torch.as_tensor(trace.src_ids), torch.as_tensor(trace.tgt_ids[:-1])
    hooks = _hooks(tr.model.hf)
    vz = value_zeroing(tr.model, src, tgt)
    assert _hooks(tr.model.hf) == hooks
    L, T, S = vz.cross.shape
    assert L == 2 and (T, S) == (len(tgt), len(src)) and vz.decoder.shape == (L, T, T)
    assert np.all(np.triu(vz.decoder, k=1) == 0)
    model = copy.deepcopy(tr.model)  # hooks go on a copy, never on the shared model
    base = _first_layer_output(model.hf, src, tgt)
    for kind, scores, positions in (("cross", vz.cross, (0, S - 1)),
                                    ("decoder", vz.decoder, (0, T - 1))):
        module, names = model.attention(kind, 0)
        for j in positions:
            moved = _first_layer_output(model.hf, src, tgt, getattr(module, names[2]), j)
            want = (1 - F.cosine_similarity(moved, base, dim=-1)).clamp_min(0).numpy()
            if kind == "decoder":
                want[:j] = 0.0  # rows before j cannot see position j
            np.testing.assert_allclose(scores[0, :, j], want, atol=2e-5)


def test_the_step_function_reads_the_models_own_log_probabilities(decoded):
    tr, trace = decoded
    src, tgt = torch.as_tensor(trace.src_ids), torch.as_tensor(trace.tgt_ids)
    with torch.inference_mode():
        logits = tr.model.hf(input_ids=src[None], decoder_input_ids=tgt[None, :-1],
                             use_cache=False, return_dict=True).logits[0]  # (T, V)
    want = torch.log_softmax(logits.float(), -1)[torch.arange(len(tgt) - 1), tgt[1:]]
    given = attribution_inputs(tr.model, src, tgt)
    with torch.no_grad():
        got = [float(given.step_function(t, int(tgt[t + 1]))(given.src, given.tgt[:, : t + 1]))
               for t in range(len(tgt) - 1)]
    np.testing.assert_allclose(got, want.numpy(), atol=1e-4)


def test_gradient_times_input_adds_up_to_the_directional_derivative(decoded):
    # In float64 (a copy of the model), where a central difference with h = 1e-5 is exact to
    # ~1e-8. T5's layer norm squares in float32 whatever the model's precision, so its
    # differences carry float32 rounding (~1e-7 / h) as well as curvature (~h^2): for T5 the
    # better of h = 1e-3 and 1e-4 must agree within 1 %.
    tr, trace = decoded
    model = copy.deepcopy(tr.model)
    model.hf.double()
    src, tgt = torch.as_tensor(trace.src_ids), torch.as_tensor(trace.tgt_ids)
    a = attribute(model, src, tgt, "input_x_gradient")
    given = attribution_inputs(model, src, tgt)
    t5 = model.model_type in ("t5", "mt5")
    for t in (0, len(tgt) - 2):
        f = given.step_function(t, int(tgt[t + 1]))
        x = (given.src, given.tgt[:, : t + 1])
        total = float(a.source[t].sum() + a.prefix[t].sum())  # sum of x . grad f, all inputs
        slopes = []
        for h in ((1e-3, 1e-4) if t5 else (1e-5,)):
            with torch.no_grad():
                slopes.append(float(f(*(v * (1 + h) for v in x)) - f(*(v * (1 - h) for v in x)))
                              / (2 * h))
        best = min(slopes, key=lambda s: abs(s - total))
        np.testing.assert_allclose(total, best, rtol=1e-2 if t5 else 1e-4, atol=1e-6)


def test_integrated_gradients_are_complete(decoded):
    tr, trace = decoded
    a = attribute(tr.model, torch.as_tensor(trace.src_ids), torch.as_tensor(trace.tgt_ids),
                  "integrated_gradients")
    assert np.all(a.completeness_error <= MAX_COMPLETENESS_ERROR), a.completeness_error
    assert np.all(np.triu(a.prefix, k=1) == 0)
