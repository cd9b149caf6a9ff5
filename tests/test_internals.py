"""The teaching computations of ``model.analysis.internals``: inside one head, a real padded
batch, and the positional-encoding experiments. Checked against the shipped model's own
attention."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from model import (
    ATTENTION_KINDS,
    BatchTrace,
    InputError,
    TransformerConfig,
    Translator,
    batch_matches_single,
    decode_batch,
    embedding_parts,
    head_internals,
    pe_similarity,
)
from model.backends.ours import build_translator
from model.core.layers import PositionalEncoding, positional_tables, shuffled_positions
from model.core.masks import (
    cross_attention_mask,
    decoder_self_attention_mask,
    mask_views,
    padding_mask,
    subsequent_mask,
)
from model.core.transformer import Transformer
from model.core.vocab import SPECIALS, Vocab

WHY = "why do we work ?"
BATCH = ["why do we work ?", "i go to school tomorrow .", "we eat rice ."]


@pytest.fixture(scope="module")
def why_trace(en_zh):
    return en_zh.generate(WHY)


@pytest.fixture(scope="module")
def batch(en_zh) -> BatchTrace:
    return decode_batch(en_zh, BATCH)


def _trace_map(trace, kind):
    return {"encoder": trace.encoder_attentions, "decoder": trace.decoder_attentions,
            "cross": trace.cross_attentions}[kind]


def _model_pass(translator, trace):
    """One teacher-forced pass over the trace's sentence, keeping scores and layer outputs."""
    src = torch.from_numpy(trace.src_ids)[None]  # (1, S)
    tgt = torch.tensor([translator.target.vocab.encode(trace.decoder_input_tokens)])
    with torch.inference_mode():
        enc = translator.model.encode(src, return_scores=True, return_layers=True)
        dec = translator.model.decode(tgt, enc.memory, enc.key_padding_mask,
                                      return_scores=True, return_layers=True)
    return enc, dec


# --- inside one head ---------------------------------------------------------------------

@pytest.mark.parametrize("kind", ATTENTION_KINDS)
@pytest.mark.parametrize("layer,head", [(0, 0), (1, 5), (2, 7)])
def test_head_weights_equal_the_models_attention(en_zh, why_trace, kind, layer, head):
    hi = head_internals(en_zh, why_trace, kind, layer=layer, head=head)
    np.testing.assert_allclose(hi.weights, _trace_map(why_trace, kind)[layer, head],
                               atol=1e-6, rtol=0)
    S, T = len(why_trace.src_tokens), len(why_trace.decoder_input_tokens)
    Tq, Tk = {"encoder": (S, S), "decoder": (T, T), "cross": (T, S)}[kind]
    Dh = en_zh.config.d_model // en_zh.config.nhead
    assert hi.d_k == Dh and hi.weights.shape == hi.scaled_scores.shape == (Tq, Tk)
    assert hi.q.shape == hi.output.shape == (Tq, Dh) and hi.k.shape == hi.v.shape == (Tk, Dh)
    for name in ("q", "k", "v", "raw_scores", "scaled_scores", "weights", "output",
                 "x_query", "x_key", "w_q", "b_q"):
        assert getattr(hi, name).dtype == np.float32, name
    # The mask is the model's: look-ahead for the decoder, nothing for one sentence otherwise.
    src_ids = why_trace.src_ids.tolist()
    tgt_ids = en_zh.target.vocab.encode(why_trace.decoder_input_tokens)
    np.testing.assert_array_equal(hi.mask, mask_views(src_ids, tgt_ids)[kind])
    assert hi.mask.any() == (kind == "decoder")
    assert np.all(hi.weights[hi.mask] == 0) and np.all(np.isneginf(hi.masked_scores[hi.mask]))
    np.testing.assert_array_equal(hi.masked_scores[~hi.mask], hi.scaled_scores[~hi.mask])
    np.testing.assert_allclose(hi.weights.sum(-1), 1.0, atol=1e-6)
    # Each step follows from the previous one.
    np.testing.assert_allclose(hi.raw_scores / math.sqrt(hi.d_k), hi.scaled_scores, rtol=1e-6)
    np.testing.assert_allclose(hi.weights @ hi.v, hi.output, atol=1e-5)
    for x, w, b, out in ((hi.x_query, hi.w_q, hi.b_q, hi.q), (hi.x_key, hi.w_k, hi.b_k, hi.k),
                         (hi.x_key, hi.w_v, hi.b_v, hi.v)):
        np.testing.assert_allclose(x @ w + b, out, atol=1e-4, rtol=1e-5)
    assert hi.query_tokens == (why_trace.src_tokens if kind == "encoder"
                               else why_trace.decoder_input_tokens)
    assert hi.key_tokens == (why_trace.decoder_input_tokens if kind == "decoder"
                             else why_trace.src_tokens)


@pytest.mark.parametrize("kind", ATTENTION_KINDS)
def test_head_scores_and_output_equal_multihead_attention(en_zh, why_trace, kind):
    enc, dec = _model_pass(en_zh, why_trace)
    for layer, head in ((0, 2), (2, 4)):
        hi = head_internals(en_zh, why_trace, kind, layer=layer, head=head)
        if kind == "encoder":
            attn, x = enc.layers[layer].self_attention, enc.layers[layer].self_attention_input
        elif kind == "decoder":
            attn, x = dec.layers[layer].self_attention, dec.layers[layer].self_attention_input
        else:
            attn, x = dec.layers[layer].cross_attention, dec.layers[layer].cross_attention_input
        np.testing.assert_allclose(hi.scaled_scores, attn.scores[0, head].numpy(), atol=1e-6)
        np.testing.assert_allclose(hi.output, attn.context[0, head].numpy(), atol=1e-6)
        np.testing.assert_array_equal(hi.x_query, x[0].numpy())
        np.testing.assert_allclose(hi.k, attn.key_value[0][0, head].numpy(), atol=1e-6)
        np.testing.assert_allclose(hi.v, attn.key_value[1][0, head].numpy(), atol=1e-6)
    if kind == "cross":
        np.testing.assert_array_equal(hi.x_key, enc.memory[0].numpy())


def test_context_heads_concatenated_and_projected_give_the_output(en_zh, why_trace):
    enc, _ = _model_pass(en_zh, why_trace)
    a = enc.layers[1].self_attention
    mha = en_zh.model.encoder_layers[1].self_attn
    B, H, S, Dh = a.context.shape
    concat = a.context.transpose(1, 2).reshape(B, S, H * Dh)
    with torch.inference_mode():
        torch.testing.assert_close(mha.out_proj(concat), a.output, atol=1e-6, rtol=0)


def test_encoder_layer_zero_input_is_embedding_plus_positions(en_zh, why_trace):
    hi = head_internals(en_zh, why_trace, "encoder", layer=0, head=0)
    parts = embedding_parts(en_zh, why_trace.src_tokens, "source")
    np.testing.assert_array_equal(hi.x_query, parts.total)  # post-LN: x itself


def test_head_query_keeps_one_row(en_zh, why_trace):
    full = head_internals(en_zh, why_trace, "cross", layer=1, head=3)
    one = head_internals(en_zh, why_trace, "cross", layer=1, head=3, query=4)
    assert one.query_tokens == (why_trace.decoder_input_tokens[4],)
    assert one.query_positions.tolist() == [4] and one.weights.shape == (1, 6)
    np.testing.assert_array_equal(one.weights[0], full.weights[4])
    np.testing.assert_array_equal(one.output[0], full.output[4])
    np.testing.assert_array_equal(one.k, full.k)
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.layer = 2


@pytest.mark.parametrize("args", [
    ("self", 0, 0), ("encoder", 3, 0), ("decoder", -1, 0), ("cross", 0, 8),
    ("encoder", 0, 1.5), ("decoder", True, 0),
])
def test_head_internals_rejects_bad_choices(en_zh, why_trace, args):
    with pytest.raises(InputError):
        kind, layer, head = args
        head_internals(en_zh, why_trace, kind, layer=layer, head=head)


@pytest.mark.parametrize("kind,query", [("encoder", 6), ("decoder", 9), ("cross", -1)])
def test_head_internals_rejects_a_query_outside_the_sentence(en_zh, why_trace, kind, query):
    with pytest.raises(InputError):
        head_internals(en_zh, why_trace, kind, layer=0, head=0, query=query)


def _tiny_translator(norm_first: bool) -> Translator:
    torch.manual_seed(4)
    words = ["alpha", "beta", "gamma", "delta", "echo", "fox", "golf", "hotel"]
    chars = list("一二三四五六七八九十")
    config = TransformerConfig(src_vocab_size=len(words) + 4, tgt_vocab_size=len(chars) + 4,
                               d_model=32, nhead=4, num_encoder_layers=2,
                               num_decoder_layers=2, dim_feedforward=64, dropout=0.0,
                               max_len=16, norm_first=norm_first)
    model = Transformer(config).eval()
    return build_translator(model, Vocab([*SPECIALS, *words]), Vocab([*SPECIALS, *chars]),
                            {}, name="tiny")


@pytest.mark.parametrize("norm_first", [False, True])
def test_head_internals_follow_pre_and_post_layer_norm(norm_first):
    tiny = _tiny_translator(norm_first)
    trace = tiny.generate("alpha gamma fox beta", max_new_tokens=6)
    enc, dec = _model_pass(tiny, trace)
    for kind in ATTENTION_KINDS:
        for layer in (0, 1):
            hi = head_internals(tiny, trace, kind, layer=layer, head=1)
            np.testing.assert_allclose(hi.weights, _trace_map(trace, kind)[layer, 1],
                                       atol=1e-6, rtol=0)
    # Pre-LN: the self-attention sees LayerNorm(x), not the residual stream x.
    x0 = tiny.model.positional(tiny.model.src_embed(torch.tensor(
        [trace.src_ids.tolist()])))
    with torch.inference_mode():
        expected = tiny.model.encoder_layers[0].sublayer1.norm(x0) if norm_first else x0
    hi = head_internals(tiny, trace, "encoder", layer=0, head=0)
    np.testing.assert_allclose(hi.x_query, expected[0].detach().numpy(), atol=1e-6)


# --- a real padded batch -----------------------------------------------------------------

def test_batch_shapes_tokens_and_padding(en_zh, batch):
    c = en_zh.config
    B, S = 3, 7  # "i go to school tomorrow ." + </s>
    T = int(batch.tgt_lengths.max())
    L, H = c.num_decoder_layers, c.nhead
    assert batch.src_ids.shape == (B, S) and batch.tgt_ids.shape == (B, T)
    assert batch.encoder_attentions.shape == (B, c.num_encoder_layers, H, S, S)
    assert batch.decoder_attentions.shape == (B, L, H, T, T)
    assert batch.cross_attentions.shape == (B, L, H, T, S)
    assert batch.step_probs.shape == (B, T, c.tgt_vocab_size)
    for arr in (batch.encoder_attentions, batch.decoder_attentions, batch.cross_attentions):
        assert arr.dtype == np.float32 and np.isfinite(arr).all()
    assert batch.src_tokens[2] == ("we", "eat", "rice", ".", "</s>", "<pad>", "<pad>")
    assert batch.tgt_tokens[2] == ("<s>", "我", "们", "吃", "米", "饭", "。", "<pad>", "<pad>")
    assert batch.output_texts == ("我们为什么工作？", "我明天去学校。", "我们吃米饭。")
    assert batch.finished == (True, True, True)
    assert batch.src_lengths.tolist() == [6, 7, 5]
    assert batch.tgt_lengths.tolist() == [len(o) + 1 for o in batch.output_tokens]


def test_batch_pad_keys_get_exactly_zero_and_real_rows_sum_to_one(batch):
    src_pad, tgt_pad = batch.source_padding_mask, batch.target_padding_mask
    assert src_pad.any() and tgt_pad.any()  # the batch really is padded
    for b in range(len(batch.texts)):
        assert np.all(batch.encoder_attentions[b][..., src_pad[b]] == 0)
        assert np.all(batch.cross_attentions[b][..., src_pad[b]] == 0)
        assert np.all(batch.decoder_attentions[b][..., tgt_pad[b]] == 0)
        real_src, real_tgt = ~src_pad[b], ~tgt_pad[b]
        np.testing.assert_allclose(batch.encoder_attentions[b][:, :, real_src].sum(-1), 1.0,
                                   atol=1e-5)
        np.testing.assert_allclose(batch.decoder_attentions[b][:, :, real_tgt].sum(-1), 1.0,
                                   atol=1e-5)
        np.testing.assert_allclose(batch.cross_attentions[b][:, :, real_tgt].sum(-1), 1.0,
                                   atol=1e-5)
    # Look-ahead: nothing above the diagonal.
    assert np.all(batch.decoder_attentions[..., batch.subsequent_mask] == 0)


def test_batch_masks_are_the_model_masks(en_zh, batch):
    src, tgt = torch.from_numpy(batch.src_ids), torch.from_numpy(batch.tgt_ids)
    T, S = tgt.size(1), src.size(1)
    np.testing.assert_array_equal(batch.source_padding_mask, padding_mask(src).numpy())
    np.testing.assert_array_equal(batch.target_padding_mask, padding_mask(tgt).numpy())
    np.testing.assert_array_equal(batch.subsequent_mask, subsequent_mask(T).numpy())
    np.testing.assert_array_equal(batch.decoder_mask, decoder_self_attention_mask(tgt).numpy())
    np.testing.assert_array_equal(batch.cross_mask, cross_attention_mask(src, T).numpy())
    assert batch.decoder_mask.shape == (3, T, T) and batch.cross_mask.shape == (3, T, S)
    # And each sentence's slice equals Translator.mask_views with the same padding.
    for b in range(3):
        n_src, n_tgt = int(batch.src_lengths[b]), int(batch.tgt_lengths[b])
        src_tokens = list(batch.src_tokens[b][:n_src])
        tgt_tokens = list(batch.tgt_tokens[b][:n_tgt])
        if S - n_src == T - n_tgt:
            views = en_zh.mask_views(src_tokens, tgt_tokens, pad=S - n_src)
            np.testing.assert_array_equal(views["decoder"], batch.decoder_mask[b])
            np.testing.assert_array_equal(views["cross"], batch.cross_mask[b])


def test_each_sentence_of_the_batch_equals_its_single_decode(en_zh, batch):
    report = batch_matches_single(en_zh, batch)
    assert report["all_same_output"] and report["pad_weight"] == 0.0
    assert len(report["sentences"]) == 3
    for row, text in zip(report["sentences"], BATCH, strict=True):
        assert row["text"] == text and row["same_output"]
        assert row["batch_output"] == row["single_output"] == en_zh.generate(text).output_text
        assert row["compared_positions"] == len(en_zh.generate(text).decoder_input_tokens)
        for kind in ATTENTION_KINDS:
            assert 0.0 <= row[kind] <= 1e-5, (text, kind, row[kind])
    assert set(report["max_abs_diff"]) == set(ATTENTION_KINDS)
    # And directly: the unpadded maps have the single trace's shapes and values.
    for b, text in enumerate(BATCH):
        single = en_zh.generate(text)
        for mine, theirs in zip(batch.unpadded(b), (single.encoder_attentions,
                                                    single.decoder_attentions,
                                                    single.cross_attentions), strict=True):
            np.testing.assert_allclose(mine, theirs, atol=1e-5, rtol=0)


def test_batch_length_limit_and_unfinished_sentences(en_zh):
    short = decode_batch(en_zh, ["why do we work ?", "we eat rice ."], max_new_tokens=3)
    assert short.tgt_ids.shape[1] == 3 and short.finished == (False, False)
    assert short.output_tokens == (("我", "们", "为"), ("我", "们", "吃"))
    assert not short.target_padding_mask.any()


@pytest.mark.parametrize("texts", [
    ["why do we work ?"], ["we eat rice ."] * 5, [], "why do we work ?", None,
    ["why do we work ?", ""], ["why do we work ?", "?!"], ["why do we work ?", 3],
])
def test_decode_batch_refuses_bad_batches(en_zh, texts):
    with pytest.raises(InputError):
        decode_batch(en_zh, texts)


def test_decode_batch_names_the_bad_sentence(en_zh):
    with pytest.raises(InputError, match="Sentence 2"):
        decode_batch(en_zh, ["why do we work ?", "   ", "we eat rice ."])
    with pytest.raises(InputError):
        decode_batch(en_zh, BATCH[:2], max_new_tokens=0)


def test_fully_padded_query_rows_give_zeros_not_nan(tiny_model):
    src = torch.tensor([[5, 6, 3], [0, 0, 0]])  # the second source is nothing but <pad>
    tgt = torch.tensor([[2, 7, 8], [0, 0, 0]])  # ... and so is its decoder input
    with torch.inference_mode():
        enc = tiny_model.encode(src)
        out = tiny_model.decode(tgt, enc.memory, enc.key_padding_mask)
    for maps in (enc.attentions, out.decoder_attentions, out.cross_attentions):
        for a in maps:
            assert torch.isfinite(a).all()
            assert torch.equal(a[1], torch.zeros_like(a[1]))  # every key blocked: all 0
            torch.testing.assert_close(a[0].sum(-1), torch.ones_like(a[0].sum(-1)))
    assert torch.isfinite(enc.memory).all() and torch.isfinite(out.logits).all()


# --- positional-encoding experiments -----------------------------------------------------

def test_normal_positions_equal_the_ordinary_decode_exactly(en_zh, why_trace):
    normal = en_zh.generate(WHY, positional="normal", positional_seed=5)
    assert normal.tgt_tokens == why_trace.tgt_tokens
    for name in ("encoder_attentions", "decoder_attentions", "cross_attentions", "step_probs"):
        np.testing.assert_array_equal(getattr(normal, name), getattr(why_trace, name))
    assert why_trace.settings.positional == "normal"


@pytest.mark.parametrize("mode", ["none", "shuffled"])
def test_positional_experiments_change_the_model_but_stay_finite(en_zh, why_trace, mode):
    trace = en_zh.generate(WHY, positional=mode)
    assert trace.settings.positional == mode and trace.settings.positional_seed == 0
    for arr in (trace.encoder_attentions, trace.decoder_attentions, trace.cross_attentions):
        assert np.isfinite(arr).all()
        np.testing.assert_allclose(arr.sum(-1), 1.0, atol=1e-5)
    differs = trace.tgt_tokens != why_trace.tgt_tokens or not np.allclose(
        trace.encoder_attentions, why_trace.encoder_attentions, atol=1e-3)
    assert differs
    # The head view replays the experiment recorded in the trace.
    hi = head_internals(en_zh, trace, "cross", layer=2, head=0)
    np.testing.assert_allclose(hi.weights, trace.cross_attentions[2, 0], atol=1e-6, rtol=0)


def test_without_positions_the_encoder_cannot_tell_word_order(en_zh):
    # Same words in another order, no positional encoding: the encoder's maps are the same
    # maps with rows and columns permuted (self-attention is permutation-equivariant).
    a = en_zh.generate("we eat rice .", positional="none", max_new_tokens=2)
    b = en_zh.generate("rice eat we .", positional="none", max_new_tokens=2)
    perm = [2, 1, 0, 3, 4]
    np.testing.assert_allclose(b.encoder_attentions, a.encoder_attentions[:, :, perm][..., perm],
                               atol=1e-5)


def test_shuffled_positions_are_seeded(en_zh):
    one = en_zh.generate(WHY, positional="shuffled", positional_seed=3)
    again = en_zh.generate(WHY, positional="shuffled", positional_seed=3)
    np.testing.assert_array_equal(one.encoder_attentions, again.encoder_attentions)
    other = en_zh.generate(WHY, positional="shuffled", positional_seed=4)
    assert not np.array_equal(one.encoder_attentions, other.encoder_attentions)
    perm = shuffled_positions(6, 3)
    assert sorted(perm.tolist()) == list(range(6))
    assert torch.equal(perm, shuffled_positions(6, 3))


@pytest.mark.parametrize("kwargs", [
    dict(positional="random"), dict(positional=None), dict(positional_seed="x"),
    dict(positional="shuffled", positional_seed=-1), dict(positional_seed=True),
])
def test_unknown_positional_modes_are_input_errors(en_zh, kwargs):
    with pytest.raises(InputError):
        en_zh.generate(WHY, **kwargs)


def test_experiments_with_beam_search_and_sampling(en_zh):
    for kwargs in (dict(num_beams=3), dict(do_sample=True, seed=1)):
        trace = en_zh.generate(WHY, positional="shuffled", **kwargs)
        assert np.isfinite(trace.cross_attentions).all()
        hi = head_internals(en_zh, trace, "decoder", layer=1, head=1)
        np.testing.assert_allclose(hi.weights, trace.decoder_attentions[1, 1], atol=1e-6)


def test_positional_tables_and_the_pe_table_argument():
    pe = PositionalEncoding(8, 10).pe
    assert positional_tables(pe, "normal", 4) == (None, None)
    src, tgt = positional_tables(pe, "none", 4)
    assert src.shape == (4, 8) and tgt.shape == (10, 8) and not src.any() and not tgt.any()
    src, tgt = positional_tables(pe, "shuffled", 4, seed=1)
    torch.testing.assert_close(src, pe[shuffled_positions(4, 1)])
    torch.testing.assert_close(tgt, pe[shuffled_positions(10, 1)])
    with pytest.raises(ValueError):
        positional_tables(pe, "sideways", 4)
    with pytest.raises(ValueError):
        positional_tables(pe, "none", 11)
    enc = PositionalEncoding(8, 10).eval()
    x = torch.randn(2, 3, 8)
    torch.testing.assert_close(enc(x), x + pe[:3], atol=0, rtol=0)
    torch.testing.assert_close(enc(x, offset=2, pe_table=tgt), x + tgt[2:5], atol=0, rtol=0)
    with pytest.raises(ValueError):
        enc(x, pe_table=torch.zeros(10, 4))
    with pytest.raises(ValueError):
        enc(x, offset=1, pe_table=torch.zeros(3, 8))


def test_pe_similarity_is_symmetric_with_d_over_2_on_the_diagonal(en_zh):
    D = en_zh.config.d_model
    pe = en_zh.positional_encoding(20)
    sim = pe_similarity(pe)
    assert sim.shape == (20, 20) and sim.dtype == np.float32
    np.testing.assert_allclose(sim, sim.T, atol=1e-5)
    np.testing.assert_allclose(np.diag(sim), D / 2, rtol=1e-5)
    # It depends only on the offset i - j: every diagonal is constant.
    np.testing.assert_allclose(sim[1:, 1:], sim[:-1, :-1], atol=1e-3)
    assert (sim <= D / 2 + 1e-3).all()
    np.testing.assert_array_equal(pe_similarity(torch.from_numpy(pe)), sim)
    with pytest.raises(ValueError):
        pe_similarity(pe[0])


@pytest.mark.parametrize("side", ["source", "target"])
@pytest.mark.parametrize("mode", ["normal", "none", "shuffled"])
def test_embedding_parts_add_up(en_zh, why_trace, side, mode):
    tokens = why_trace.src_tokens if side == "source" else why_trace.decoder_input_tokens
    parts = embedding_parts(en_zh, tokens, side, positional=mode, positional_seed=2)
    T, D = len(tokens), en_zh.config.d_model
    assert parts.embedding.shape == parts.positional.shape == parts.total.shape == (T, D)
    assert parts.tokens == tuple(tokens) and parts.positional_mode == mode
    np.testing.assert_allclose(parts.embedding + parts.positional, parts.total, atol=1e-6)
    vocab = en_zh._source_side.vocab if side == "source" else en_zh.target.vocab
    lut = (en_zh.model.src_embed if side == "source" else en_zh.model.tgt_embed).lut
    np.testing.assert_allclose(parts.embedding,
                               lut.weight[vocab.encode(tokens)].detach().numpy() * math.sqrt(D),
                               rtol=1e-6)
    table = en_zh.model.positional.pe.numpy()
    if mode == "none":
        assert parts.positions is None and not parts.positional.any()
    else:
        np.testing.assert_array_equal(parts.positional, table[parts.positions])
        if mode == "normal":
            assert parts.positions.tolist() == list(range(T))
        else:
            assert parts.positions.tolist() != list(range(T))
    # The encoder's first layer receives exactly this in the decode with the same experiment.
    if side == "source":
        trace = en_zh.generate(WHY, positional=mode, positional_seed=2, max_new_tokens=1)
        hi = head_internals(en_zh, trace, "encoder", layer=0, head=0)
        np.testing.assert_array_equal(hi.x_query, parts.total)


def test_embedding_parts_reject_bad_arguments(en_zh):
    for tokens, side, mode in ((["why", "</s>"], "middle", "normal"), ([], "source", "normal"),
                               (["why"] * 65, "target", "normal"),
                               (["why"], "source", "random")):
        with pytest.raises(InputError):
            embedding_parts(en_zh, tokens, side, positional=mode)
