"""What each encoder sublayer adds (model.core.sublayers): run sublayer by sublayer, the
encoder gives exactly what Transformer.encode gives, for post-LN and pre-LN models; and the
pieces add up to the residual stream the next sublayer reads."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from shipped import model_of

from model import GenerationSettings
from model.core.config import TransformerConfig
from model.core.sublayers import encoder_sublayer_norms
from model.core.transformer import Transformer


def _tiny(norm_first: bool) -> Transformer:
    torch.manual_seed(7)
    config = TransformerConfig(src_vocab_size=20, tgt_vocab_size=20, d_model=32, nhead=4,
                               num_encoder_layers=3, num_decoder_layers=1,
                               dim_feedforward=64, dropout=0.0, max_len=16,
                               norm_first=norm_first)
    return Transformer(config).eval()


@pytest.mark.parametrize("norm_first", [False, True])
def test_sublayer_by_sublayer_equals_encode(norm_first):
    model = _tiny(norm_first)
    ids = torch.tensor([[5, 9, 4, 12, 3]])
    norms = encoder_sublayer_norms(model, ids)
    with torch.inference_mode():
        enc = model.encode(ids, return_layers=True)
    for layer, out in enumerate(enc.layers):
        np.testing.assert_allclose(norms.outputs[layer], out.output[0].numpy(), atol=1e-5)
    L, S = len(enc.layers), ids.size(1)
    for values in (norms.stream, norms.attention, norms.feed_forward):
        assert values.shape == (L, S) and (values >= 0).all()
    if norm_first:  # pre-LN: x_{l+1} = x_l + attention + FFN, so the stream is the sum
        with torch.inference_mode():
            x0 = model.positional(model.src_embed(ids))[0].double()
        np.testing.assert_allclose(norms.stream[0], torch.linalg.vector_norm(x0, dim=-1),
                                   rtol=1e-6)
        np.testing.assert_allclose(norms.stream[1:], np.linalg.norm(norms.outputs[:-1], axis=-1),
                                   rtol=1e-5)


def test_the_positional_experiment_reaches_the_sublayers():
    translator = model_of("en-zh")
    normal = translator.generate("why do we work ?")
    none = translator.generate("why do we work ?", GenerationSettings(positional="none"))
    a, b = translator.encoder_sublayers(normal), translator.encoder_sublayers(none)
    assert not np.allclose(a.stream[0], b.stream[0])  # layer 0's input lost its positions
    with torch.inference_mode():
        enc = translator.model.encode(torch.from_numpy(normal.src_ids)[None], return_layers=True)
    np.testing.assert_allclose(a.outputs[-1], enc.layers[-1].output[0].numpy(), atol=1e-5)


def test_refuses_a_batch():
    with pytest.raises(ValueError):
        encoder_sublayer_norms(_tiny(False), torch.tensor([[5, 3], [6, 3]]))
