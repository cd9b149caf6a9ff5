"""The decoder-only Transformer (model/core/decoder_only.py): equal to torch.nn's own
TransformerEncoder run with a causal mask and our weights, causal, blind to padding, equal
with and without its key/value cache, and its config round-trips through JSON."""

from __future__ import annotations

import json
import math

import pytest
import torch
from safetensors.torch import load_file, save_file
from torch import nn
from torch.nn import functional as F

from model.core.config import DecoderOnlyConfig, TransformerConfig, config_from_dict
from model.core.decoder_only import DecoderOnlyTransformer
from model.core.layers import sinusoidal_table
from model.core.masks import padding_mask
from testkit.torch_reference import copy_ffn_and_norms, copy_mha

V, D, H, L = 23, 16, 4, 2


def tiny(seed: int = 0, **overrides) -> DecoderOnlyTransformer:
    """A tiny model in eval mode, with random LayerNorm gains and biases (the defaults 1 and 0
    would hide a norm applied in the wrong place)."""
    torch.manual_seed(seed)
    fields = dict(vocab_size=V, d_model=D, nhead=H, num_layers=L, dim_feedforward=32,
                  dropout=0.0, max_len=16)
    model = DecoderOnlyTransformer(DecoderOnlyConfig(**(fields | overrides))).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.add_(0.3 * torch.randn_like(p))
    return model


def ids_batch() -> tuple[torch.Tensor, torch.Tensor]:
    """Two rows of 7 ids, the second right-padded after 4 real tokens; and its (2, 7)
    key padding mask (True = <pad>)."""
    ids = torch.tensor([[2, 5, 9, 11, 3, 7, 8], [2, 6, 13, 3, 0, 0, 0]])
    return ids, padding_mask(ids, 0)


def reference(model: DecoderOnlyTransformer, ids, kpm):
    """The same network from torch.nn's parts: (logits (B, N, V), attentions
    (L, B, H, N, N)), every mask and embedding built here, not by model.core."""
    c = model.config
    N = ids.size(1)
    causal = torch.ones(N, N, dtype=torch.bool).triu(1)  # True = blocked, as nn.MHA
    lut = model.embed.lut.weight
    x = F.embedding(ids, lut) * math.sqrt(c.d_model) + sinusoidal_table(N, c.d_model)
    weights = []
    for ours in model.layers:
        ref = nn.TransformerEncoderLayer(c.d_model, c.nhead, c.dim_feedforward, 0.0,
                                         batch_first=True, norm_first=c.norm_first).eval()
        copy_mha(ours.self_attn, ref.self_attn)
        copy_ffn_and_norms(ours, ref, 2)
        h = ref.norm1(x) if c.norm_first else x
        _, w = ref.self_attn(h, h, h, attn_mask=causal, key_padding_mask=kpm,
                             need_weights=True, average_attn_weights=False)
        weights.append(w)
        x = ref(x, src_mask=causal, src_key_padding_mask=kpm)
    if c.norm_first:
        x = F.layer_norm(x, (c.d_model,), model.norm.weight, model.norm.bias)
    head = lut if c.tie_word_embeddings else model.lm_head.weight
    return x @ head.T, torch.stack(weights)


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("tied", [True, False])
def test_equals_torch_transformer_encoder_with_a_causal_mask(norm_first, tied):
    model = tiny(1, norm_first=norm_first, tie_word_embeddings=tied)
    ids, kpm = ids_batch()
    out = model(ids, kpm)
    ref_logits, ref_weights = reference(model, ids, kpm)
    attn = torch.stack(out.decoder_attentions)
    assert out.logits.shape == (2, 7, V) and attn.shape == (L, 2, H, 7, 7)
    real = ~kpm
    torch.testing.assert_close(out.logits[real], ref_logits[real], atol=1e-5, rtol=0)
    torch.testing.assert_close(attn, ref_weights, atol=1e-5, rtol=0)
    assert model.num_parameters() == sum(p.numel() for p in model.parameters())
    assert (model.lm_head is None) == tied


def test_tied_head_saves_the_vocabulary_matrix():
    tied, untied = tiny(tie_word_embeddings=True), tiny(tie_word_embeddings=False)
    assert untied.num_parameters() - tied.num_parameters() == V * D


@pytest.mark.parametrize("keep", [1, 3, 8])
def test_logits_to_keep_are_the_last_positions_of_the_full_logits(keep):
    model = tiny(2).eval()
    ids = torch.tensor([[2, 5, 9, 11, 3, 7, 8, 4], [2, 6, 6, 10, 12, 3, 0, 0]])
    mask = ids == 0
    full = model(ids, mask).logits  # (B, N, V)
    kept = model(ids, mask, logits_to_keep=keep).logits  # (B, K, V)
    assert kept.shape == (2, keep, V)
    torch.testing.assert_close(kept, full[:, -keep:], atol=1e-6, rtol=0)


def test_no_position_sees_a_later_token():
    model = tiny(2)
    ids = torch.tensor([[2, 5, 9, 11, 3, 7, 8, 4]])
    out = model(ids)
    for j in range(1, ids.size(1)):
        changed = ids.clone()
        changed[0, j] = 4 + (ids[0, j] + 1 - 4) % (V - 4)  # another ordinary token
        new = model(changed)
        torch.testing.assert_close(new.logits[:, :j], out.logits[:, :j], atol=1e-6, rtol=0)
        assert (new.logits[:, j] - out.logits[:, j]).abs().max() > 1e-3  # it does matter
    attn = torch.stack(out.decoder_attentions)  # (L, 1, H, N, N)
    above = torch.ones(8, 8, dtype=torch.bool).triu(1)
    assert (attn[..., above] == 0).all()
    assert (attn[..., ~above] > 0).all()
    torch.testing.assert_close(attn.sum(-1), torch.ones(L, 1, H, 8), atol=1e-6, rtol=0)


def test_padded_row_equals_its_unpadded_run():
    model = tiny(3)
    ids, kpm = ids_batch()
    out = model(ids, kpm)
    alone = model(ids[1:, :4])
    torch.testing.assert_close(out.logits[1, :4], alone.logits[0], atol=1e-5, rtol=0)
    for batched, single in zip(out.decoder_attentions, alone.decoder_attentions, strict=True):
        torch.testing.assert_close(batched[1, :, :4, :4], single[0], atol=1e-5, rtol=0)
        assert (batched[1, :, :, 4:] == 0).all()  # padded keys get exactly nothing
    # Without the mask the padded row would see its <pad> keys: the mask is what works.
    unmasked = model(ids)
    assert (unmasked.decoder_attentions[0][1, :, 4:, 4:] > 0).any()


def test_all_blocked_query_gets_zero_weights_not_nan():
    model = tiny(4)
    ids = torch.tensor([[0, 0, 2, 5, 9]])  # left padding: the first queries see only <pad>
    out = model(ids, padding_mask(ids, 0))
    assert torch.isfinite(out.logits).all()
    for w in out.decoder_attentions:
        assert (w[0, :, :2] == 0).all()


@pytest.mark.parametrize("prompt_len", [1, 4])
def test_cached_steps_equal_the_full_forward(prompt_len):
    model = tiny(5)
    ids = torch.tensor([[2, 5, 9, 11, 3, 7, 8], [2, 6, 13, 3, 12, 10, 4]])
    full = model(ids)
    step = model(ids[:, :prompt_len])
    torch.testing.assert_close(step.logits, full.logits[:, :prompt_len], atol=1e-5, rtol=0)
    for t in range(prompt_len, ids.size(1)):
        step = model(ids[:, t:t + 1], past_key_values=step.past_key_values)
        assert step.past_key_values[0].self_kv[0].shape == (2, H, t + 1, D // H)
        assert step.past_key_values[0].cross_kv is None
        torch.testing.assert_close(step.logits[:, 0], full.logits[:, t], atol=1e-5, rtol=0)
        for cached, whole in zip(step.decoder_attentions, full.decoder_attentions, strict=True):
            assert cached.shape == (2, H, 1, t + 1)
            torch.testing.assert_close(cached[:, :, 0], whole[:, :, t, :t + 1],
                                       atol=1e-5, rtol=0)


def test_cache_with_padding_and_reordered_rows():
    model = tiny(6)
    ids, kpm = ids_batch()  # row 1 is real for 4 tokens; extend it from its 3rd token
    prompt = model(ids[:, :3], kpm[:, :3])
    swapped = model.reorder_cache(prompt.past_key_values, torch.tensor([1, 0]))
    nxt = torch.tensor([[ids[1, 3]], [ids[0, 3]]])
    step = model(nxt, kpm[[1, 0], :4], past_key_values=swapped)
    full = model(ids[:, :4], kpm[:, :4])
    torch.testing.assert_close(step.logits[:, 0], full.logits[[1, 0], 3], atol=1e-5, rtol=0)


def test_config_round_trips_through_json_and_weights_through_safetensors(tmp_path):
    config = DecoderOnlyConfig(vocab_size=V, d_model=D, nhead=H, num_layers=L, head_dim=8,
                               tie_word_embeddings=False, norm_first=False)
    data = json.loads(json.dumps(config.to_dict()))
    assert data["architecture"] == "decoder-only" and data["head_dim"] == 8
    assert config_from_dict(data) == config == DecoderOnlyConfig.from_dict(data)
    assert "head_dim" not in DecoderOnlyConfig(vocab_size=V, d_model=D, nhead=H).to_dict()
    # an encoder-decoder's config.json (no architecture) still reads as before
    ed = TransformerConfig(src_vocab_size=30, tgt_vocab_size=40, d_model=D, nhead=H)
    assert "architecture" not in ed.to_dict()
    assert config_from_dict(json.loads(json.dumps(ed.to_dict()))) == ed
    model = tiny(7)
    save_file(model.state_dict(), str(tmp_path / "w.safetensors"))  # no shared tensors
    again = DecoderOnlyTransformer(config_from_dict(model.config.to_dict())).eval()
    again.load_state_dict(load_file(str(tmp_path / "w.safetensors")))
    ids, kpm = ids_batch()
    assert torch.equal(again(ids, kpm).logits, model(ids, kpm).logits)


@pytest.mark.parametrize("bad, match", [
    ({"architecture": "encoder-only"}, "architecture"),
    ({"num_layers": 0}, "num_layers"),
    ({"vocab_size": 4}, "vocab_size"),
    ({"d_model": 18}, "multiple of nhead"),
    ({"n_layer": 2}, "unknown config fields"),
])
def test_config_refuses_bad_fields(bad, match):
    with pytest.raises(ValueError, match=match):
        config_from_dict({"architecture": "decoder-only", "vocab_size": V, "d_model": D,
                          "nhead": H} | bad)


def test_forward_refuses_malformed_inputs():
    model = tiny(8)
    with pytest.raises(ValueError, match=r"\(B, N\)"):
        model(torch.tensor([2, 5, 9]))
    with pytest.raises(ValueError, match="max_len"):
        model(torch.full((1, 17), 5))
    with pytest.raises(ValueError, match="key_padding_mask"):
        model(torch.tensor([[2, 5, 9]]), torch.zeros(1, 2, dtype=torch.bool))
    with pytest.raises(ValueError, match="only 'decoder' attention"):
        model.attention("cross", 0)
    assert model.attention("decoder", 1)[0] is model.layers[1].self_attn
