"""A real padded batch of a decoder-only model (issue 55, "masks: causal plus padding, in a
real batch"): prompts of several lengths padded on the right, the continuation after them,
``<pad>`` blocked as a key and numbered out of the positions, so every sentence decodes as
alone. A tiny random prefix LM (``testkit.one_stack_tiny``): only equalities are asserted."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from apptest_helpers import charts, enter, run_app, z_array

from model import batch_matches_single, decode_batch, load_pretrained
from model.core.masks import padding_mask, position_ids_past_padding
from model.decoding import one_map, split_at_prompt
from testkit.hf_tiny_causal import build_tiny_causal
from testkit.one_stack_tiny import tiny_prefix_lm
from ui.state import VIEW_KEY

TEXTS = ["We are learning.", "Why do we work at home every day?", "Hi."]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tiny_prefix_lm(tmp_path_factory.mktemp("models") / "a-tiny-prefix-lm")


@pytest.fixture(scope="module")
def translator(folder):
    return load_pretrained(folder)


def test_positions_skip_pads_and_count_real_tokens():
    pad = torch.tensor([[False, False, True, True, False],
                        [False, False, False, False, False]])
    assert position_ids_past_padding(pad, 5).tolist() == [[0, 1, 1, 1, 2], [0, 1, 2, 3, 4]]
    assert position_ids_past_padding(pad, 2).tolist() == [[1, 2], [3, 4]]


def test_a_padded_row_with_position_ids_is_the_row_alone(translator):
    """The stack over ``<s> x <pad> <pad> <sep> y``, pads blocked and numbered out, gives
    the real tokens' logits and attention of ``<s> x <sep> y`` alone; numbered in (the
    plain 0..N-1), it does not."""
    model = translator.model.model
    alone = torch.tensor([[2, 100, 101, 8000, 9000]])  # (1, 5)
    padded = torch.tensor([[2, 100, 101, 0, 0, 8000, 9000]])  # (1, 7)
    real = [0, 1, 2, 5, 6]
    pad = padding_mask(padded, 0)  # (1, 7)
    with torch.inference_mode():
        want = model(alone)
        got = model(padded, pad, position_ids=position_ids_past_padding(pad, 7))
        plain = model(padded, pad)
    torch.testing.assert_close(got.logits[:, real], want.logits, atol=1e-5, rtol=0)
    for g, w in zip(got.decoder_attentions, want.decoder_attentions, strict=True):
        torch.testing.assert_close(g[..., real, :][..., real], w, atol=1e-6, rtol=0)
        assert float(g[..., real, :][..., [3, 4]].abs().max()) == 0.0  # pads unread
    assert not torch.allclose(plain.logits[:, real], want.logits, atol=1e-3)


def test_every_sentence_of_a_padded_batch_decodes_as_alone(translator):
    batch = decode_batch(translator, TEXTS)
    assert len(set(batch.src_lengths.tolist())) == 3  # three prompt lengths: real padding
    check = batch_matches_single(translator, batch)
    assert check["all_same_output"] and check["pad_weight"] == 0.0
    assert max(check["max_abs_diff"].values()) <= 1e-5
    for b, text in enumerate(TEXTS):
        alone = split_at_prompt(translator.generate(text))
        assert batch.tgt_tokens[b][0] == alone.decoder_input_tokens[0] == "<sep>"
        S, T = int(batch.src_lengths[b]), int(batch.tgt_lengths[b])
        one = batch.one_map(b)  # (L, H, N, N)
        S_all = batch.src_ids.shape[1]
        keep = [*range(S), *range(S_all, S_all + T)]  # the real tokens of the one sequence
        np.testing.assert_allclose(one[:, :, keep][..., keep], one_map(alone), atol=1e-5)


def test_the_batch_mask_is_padding_or_look_ahead(translator):
    batch = decode_batch(translator, TEXTS)
    for b in range(len(TEXTS)):
        mask = batch.one_mask(b)  # (N, N)
        ids = np.concatenate([batch.src_ids[b], batch.tgt_ids[b]])  # (N,)
        N = len(ids)
        S = batch.src_ids.shape[1]
        is_pad = np.zeros(N, bool)
        is_pad[:S] = batch.source_padding_mask[b]
        is_pad[S:] = batch.target_padding_mask[b]
        want = np.triu(np.ones((N, N), bool), 1) | is_pad[None, :]
        np.testing.assert_array_equal(mask, want)
        one = batch.one_map(b)
        assert float(one[..., mask].max(initial=0.0)) == 0.0  # nothing blocked is read


@pytest.mark.parametrize("kind", ["llama", "gpt2", "qwen3"])
def test_a_hugging_face_one_stack_decodes_prompts_of_several_lengths_as_alone(kind, tmp_path):
    """RoPE (Llama, Qwen3) and learned positions (GPT-2): the pads blocked and numbered out
    by position (the model's pad id may be a real token), each row decodes as alone."""
    tr = load_pretrained(build_tiny_causal(kind, tmp_path / f"tiny-{kind}"))
    texts = ["Hello there my friend.", "Hi.", "We work."]
    batch = decode_batch(tr, texts)
    assert len(set(batch.src_lengths.tolist())) == 3  # real padding
    assert batch.source_padding_mask.sum(1).tolist() == [
        int(batch.src_lengths.max() - n) for n in batch.src_lengths]
    check = batch_matches_single(tr, batch)
    assert check["all_same_output"] and check["pad_weight"] == 0.0
    assert max(check["max_abs_diff"].values()) <= 1e-5
    for b, text in enumerate(texts):
        assert batch.translations[b] == tr.generate(text).output_text


@pytest.mark.parametrize("kind", ["ours", "gpt2"])
def test_the_masks_view_draws_the_batch_s_one_mask(folder, monkeypatch, translator, kind,
                                                   tmp_path):
    if kind == "gpt2":  # a Hugging Face one stack: prompts of several lengths too
        folder = build_tiny_causal("gpt2", tmp_path / "models" / "a-tiny-gpt2")
        translator = load_pretrained(folder)
    monkeypatch.setenv("ATTENTION_PRETRAINED_DIR", str(folder.parent))
    app = enter(run_app(), TEXTS[0])
    app.button_group(key=VIEW_KEY).set_value("masks").run()
    assert not app.exception, app.exception
    app.text_area(key="batch_text").set_value("\n".join(TEXTS)).run()
    assert not app.exception, app.exception
    batch = decode_batch(translator, TEXTS)
    assert len(set(batch.src_lengths.tolist())) > 1
    drawn = [c for c in charts(app) if c["data"] and c["data"][0]["type"] == "heatmap"]
    masks = [z_array(c["data"][0]) for c in drawn]
    want = batch.one_mask(0).astype(float)
    assert any(m.shape == want.shape and np.array_equal(m, want) for m in masks)
