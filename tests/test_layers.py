import math

import pytest
import torch
from torch import nn

from model.core.layers import MultiHeadAttention, masked_softmax, sinusoidal_table
from model.core.masks import subsequent_mask
from testkit.torch_reference import copy_ffn_and_norms, copy_mha


def test_positional_encoding_matches_the_formula():
    T, D = 50, 16
    pe = sinusoidal_table(T, D)
    assert pe.shape == (T, D) and pe.dtype == torch.float32
    for pos in (0, 1, 7, 49):
        for i in range(D // 2):
            angle = pos / 10000 ** (2 * i / D)
            assert pe[pos, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
            assert pe[pos, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)


def test_positional_encoding_rejects_odd_width():
    with pytest.raises(ValueError):
        sinusoidal_table(10, 7)


def test_masked_softmax_fully_blocked_row_is_zero_not_nan():
    scores = torch.randn(2, 3)
    mask = torch.tensor([[True, True, True], [False, True, False]])
    w = masked_softmax(scores, mask)
    assert torch.equal(w[0], torch.zeros(3))
    assert w[1, 1].item() == 0.0
    assert w[1].sum().item() == pytest.approx(1.0, abs=1e-6)
    assert not torch.isnan(w).any()


def _reference_pair(d_model=32, nhead=4):
    torch.manual_seed(1)
    ours = MultiHeadAttention(d_model, nhead).eval()
    ref = nn.MultiheadAttention(d_model, nhead, batch_first=True).eval()
    copy_mha(ours, ref)
    return ours, ref


def test_multihead_attention_equals_torch_reference_with_padding():
    ours, ref = _reference_pair()
    q, kv = torch.randn(3, 5, 32), torch.randn(3, 7, 32)
    kpm = torch.zeros(3, 7, dtype=torch.bool)
    kpm[1, 5:] = True
    kpm[2, 2:] = True
    a = ours(q, kv, kv, key_padding_mask=kpm)
    out, w = ref(q, kv, kv, key_padding_mask=kpm, need_weights=True,
                 average_attn_weights=False)
    torch.testing.assert_close(a.output, out, atol=1e-5, rtol=0)
    torch.testing.assert_close(a.weights, w, atol=1e-5, rtol=0)
    assert torch.equal(a.weights[2, :, :, 2:], torch.zeros(4, 5, 5))


def test_multihead_attention_equals_torch_reference_with_causal_mask():
    ours, ref = _reference_pair()
    x = torch.randn(2, 6, 32)
    am = subsequent_mask(6)
    a = ours(x, x, x, attn_mask=am)
    out, w = ref(x, x, x, attn_mask=am, need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(a.output, out, atol=1e-5, rtol=0)
    torch.testing.assert_close(a.weights, w, atol=1e-5, rtol=0)


def test_attention_rows_sum_to_one_and_blocked_cells_are_zero():
    ours, _ = _reference_pair()
    x = torch.randn(2, 6, 32)
    kpm = torch.tensor([[False] * 6, [False] * 4 + [True] * 2])
    a = ours(x, x, x, key_padding_mask=kpm, attn_mask=subsequent_mask(6), return_scores=True)
    blocked = kpm[:, None, None, :] | subsequent_mask(6)[None, None]
    torch.testing.assert_close(a.weights.sum(-1), torch.ones(2, 4, 6), atol=1e-5, rtol=0)
    assert (a.weights[blocked.expand_as(a.weights)] == 0).all()
    assert a.scores is not None and a.scores.shape == (2, 4, 6, 6)
    # The scores are QK^T / sqrt(Dh): re-derive them from the projections.
    q = ours.q_proj(x).view(2, 6, 4, 8).transpose(1, 2)
    k = ours.k_proj(x).view(2, 6, 4, 8).transpose(1, 2)
    torch.testing.assert_close(a.scores, q @ k.transpose(-2, -1) / math.sqrt(8))


def test_attention_rejects_malformed_masks():
    ours, _ = _reference_pair()
    x = torch.randn(1, 3, 32)
    with pytest.raises(ValueError, match="key_padding_mask"):
        ours(x, x, x, key_padding_mask=torch.zeros(1, 3))  # float, not bool
    with pytest.raises(ValueError, match="attn_mask"):
        ours(x, x, x, attn_mask=torch.zeros(4, 4, dtype=torch.bool))


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_equals_torch_transformer_encoder_layer(norm_first):
    from model.core.layers import EncoderLayer

    torch.manual_seed(2)
    ours = EncoderLayer(32, 4, 64, 0.0, norm_first=norm_first).eval()
    ref = nn.TransformerEncoderLayer(32, 4, 64, 0.0, batch_first=True,
                                     norm_first=norm_first).eval()
    copy_mha(ours.self_attn, ref.self_attn)
    copy_ffn_and_norms(ours, ref, 2)
    x = torch.randn(2, 5, 32)
    kpm = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    # Compare on the real (unpadded) positions: the reference's fast path may zero pads.
    ours_out = ours(x, kpm).output
    ref_out = ref(x, src_key_padding_mask=kpm)
    torch.testing.assert_close(ours_out[~kpm], ref_out[~kpm], atol=1e-5, rtol=0)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_equals_torch_transformer_decoder_layer(norm_first):
    from model.core.layers import DecoderLayer

    torch.manual_seed(3)
    ours = DecoderLayer(32, 4, 64, 0.0, norm_first=norm_first).eval()
    ref = nn.TransformerDecoderLayer(32, 4, 64, 0.0, batch_first=True,
                                     norm_first=norm_first).eval()
    copy_mha(ours.self_attn, ref.self_attn)
    copy_mha(ours.cross_attn, ref.multihead_attn)
    copy_ffn_and_norms(ours, ref, 3)
    x, memory = torch.randn(2, 4, 32), torch.randn(2, 6, 32)
    mkpm = torch.tensor([[False] * 6, [False] * 4 + [True] * 2])
    out = ours(x, memory, subsequent_mask(4), mkpm)
    ref_out = ref(x, memory, tgt_mask=subsequent_mask(4), memory_key_padding_mask=mkpm)
    torch.testing.assert_close(out.output, ref_out, atol=1e-5, rtol=0)


def test_attention_with_its_own_head_width_is_each_head_by_hand():
    """An explicit head_dim (T5 v1.1's d_kv: H * Dh != D) gives D -> H * Dh projections and
    an H * Dh -> D output; each head is softmax(Q_h K_h^T / sqrt(Dh)) V_h on its slice and the
    output is the heads' concatenation times W_O (Vaswani et al., 2017, section 3.2.2)."""
    torch.manual_seed(2)
    D, H, Dh = 32, 4, 6
    mha = MultiHeadAttention(D, H, head_dim=Dh).eval()
    assert mha.q_proj.weight.shape == (H * Dh, D) and mha.out_proj.weight.shape == (D, H * Dh)
    q, kv = torch.randn(2, 5, D), torch.randn(2, 7, D)
    kpm = torch.zeros(2, 7, dtype=torch.bool)
    kpm[1, 4:] = True
    a = mha(q, kv, kv, key_padding_mask=kpm, return_scores=True)
    heads = []
    for h in range(H):
        cols = slice(h * Dh, (h + 1) * Dh)
        s = mha.q_proj(q)[..., cols] @ mha.k_proj(kv)[..., cols].transpose(-2, -1) / math.sqrt(Dh)
        w = s.masked_fill(kpm[:, None, :], float("-inf")).softmax(-1)
        torch.testing.assert_close(a.weights[:, h], w, atol=1e-6, rtol=0)
        heads.append(w @ mha.v_proj(kv)[..., cols])
    torch.testing.assert_close(a.output, mha.out_proj(torch.cat(heads, -1)), atol=1e-5,
                               rtol=0)
    assert a.context.shape == (2, H, 5, Dh)


def test_config_head_dim_defaults_to_d_model_over_nhead():
    """Our models leave head_dim out (None -> D / H, which must divide); a given head_dim
    need not divide D; zero or negative widths are refused."""
    from model.core.config import TransformerConfig

    ours = TransformerConfig(src_vocab_size=10, tgt_vocab_size=10, d_model=32, nhead=4)
    assert ours.head_dim == 8 and ours.inner_dim == 32
    assert ours == TransformerConfig.from_dict(ours.to_dict())
    t5 = TransformerConfig(src_vocab_size=10, tgt_vocab_size=10, d_model=32, nhead=6,
                           head_dim=8)
    assert (t5.head_dim, t5.inner_dim) == (8, 48)
    with pytest.raises(ValueError, match="multiple of nhead"):
        TransformerConfig(src_vocab_size=10, tgt_vocab_size=10, d_model=32, nhead=6)
    with pytest.raises(ValueError, match="head_dim"):
        TransformerConfig(src_vocab_size=10, tgt_vocab_size=10, d_model=32, nhead=4,
                          head_dim=0)
