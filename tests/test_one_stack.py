"""A decoder-only model through ``load_pretrained`` and ``generate`` (issue 55, item 1):
``backends.one_stack`` puts our prefix language model behind the encoder-decoder's parts, so
every strategy, teacher forcing and the head switches drive it. Each trace is checked
against one plain forward pass of the network over the same tokens (the reference:
``DecoderOnlyTransformer``, itself tested against ``nn.TransformerEncoderLayer``), as the
issue asks of Hugging Face's ``output_attentions``; the weights are random (a tiny model
over the default model's real vocabularies), since only equalities are asserted."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest
import torch

from model import GenerationSettings, InputError, load_pretrained
from model.analysis.attribution import attribute
from model.analysis.headstats import ONE_STACK_STATISTICS, head_stats, head_stats_over
from model.analysis.internals import head_internals
from model.analysis.verdict import judge_trace
from model.backends.heads import heads_off
from model.backends.one_stack import OneStack
from model.backends.translate import translate_batch
from model.decoding import document as D
from model.decoding import one_map, split_at_prompt
from testkit.one_stack_tiny import tiny_prefix_lm
from viz.convention import display_settings

SENTENCE = "We are learning about neural networks."
MAX_LEN = 40


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tiny_prefix_lm(tmp_path_factory.mktemp("one-stack") / "tiny-prefix-lm",
                          max_len=MAX_LEN)


@pytest.fixture(scope="module")
def tiny(folder):
    return load_pretrained(folder)


def _reference(tiny, trace):
    """One forward pass over the trace's N = S + T tokens: its (L, H, N, N) attention and
    the (T, V) next-token distributions of the decoder inputs' rows."""
    ids = torch.from_numpy(np.concatenate([trace.src_ids, trace.tgt_ids[:-1]]))[None]
    with torch.inference_mode():
        out = tiny.model.model(ids)
    attn = torch.stack([a[0] for a in out.decoder_attentions]).numpy()
    S = len(trace.src_tokens)
    return attn, out.logits[0, S:].float().softmax(-1).numpy()


def test_a_decoder_only_folder_opens_with_its_architecture(tiny):
    assert tiny.info.architecture == "decoder-only"
    assert isinstance(tiny.model, OneStack)
    src = tiny.source(SENTENCE)
    codec = tiny._source_side.codec
    assert [*src.ids.tolist(), src.start_id] == codec.prompt(SENTENCE)  # <s> English <sep>
    assert src.tokens[0] == "<s>" and tiny.target.vocab.itos[src.start_id] == "<sep>"


def test_greedy_trace_is_one_forward_pass_over_its_tokens(tiny):
    trace = tiny.generate(SENTENCE, max_new_tokens=12)
    assert trace.architecture == "decoder-only"
    assert trace.encoder_attentions is None and trace.cross_attentions is None
    S, T = len(trace.src_tokens), len(trace.tgt_tokens) - 1
    assert trace.tgt_tokens[0] == "<sep>" and 1 <= T <= 12
    attn, probs = _reference(tiny, trace)
    assert trace.decoder_attentions.shape == attn.shape == (2, 4, S + T, S + T)
    np.testing.assert_allclose(trace.decoder_attentions, attn, atol=1e-5)
    np.testing.assert_allclose(trace.step_probs, probs, atol=1e-5)
    assert [s.token_id for s in trace.steps] == probs.argmax(-1).tolist()  # greedy
    above = np.triu(np.ones((S + T, S + T), bool), 1)
    assert (trace.decoder_attentions[..., above] == 0).all()  # every position looks back


def test_beams_score_hypotheses_as_a_forward_pass_does(tiny):
    trace = tiny.generate(SENTENCE, GenerationSettings(num_beams=3, max_new_tokens=6))
    attn, _ = _reference(tiny, trace)
    np.testing.assert_allclose(trace.decoder_attentions, attn, atol=1e-5)
    src = tiny.source(SENTENCE)
    for h in trace.beam.hypotheses:
        ids = torch.tensor([[*src.ids.tolist(), src.start_id, *h.ids]])
        with torch.inference_mode():
            logp = tiny.model.model(ids[:, :-1]).logits[0].float().log_softmax(-1)
        S = len(src.ids)
        want = sum(float(logp[S + i, tok]) for i, tok in enumerate(h.ids))
        assert h.logprob == pytest.approx(want, abs=1e-4)


def test_sampling_is_reproducible_and_recorded_as_a_forward_pass(tiny):
    run = GenerationSettings(do_sample=True, seed=7, temperature=1.0, max_new_tokens=8)
    a, b = tiny.generate(SENTENCE, run), tiny.generate(SENTENCE, run)
    assert a.tgt_tokens == b.tgt_tokens
    attn, probs = _reference(tiny, a)
    np.testing.assert_allclose(a.decoder_attentions, attn, atol=1e-5)
    np.testing.assert_allclose(a.step_probs, probs, atol=1e-5)


def test_teacher_forcing_scores_the_reference(tiny):
    trace = tiny.teacher_force(SENTENCE, "我们在学习神经网络。")
    assert trace.teacher_forced and trace.output_text == "我们在学习神经网络。"
    _, probs = _reference(tiny, trace)
    want = probs[np.arange(len(trace.steps)), trace.tgt_ids[1:]]
    np.testing.assert_allclose([s.prob for s in trace.steps], want, atol=1e-5)


def test_a_head_switched_off_changes_the_trace_as_in_the_network(tiny):
    key = ("decoder", 1, 2)
    off = tiny.teacher_force(SENTENCE, "我们学习。", heads_off=[key])
    on = tiny.teacher_force(SENTENCE, "我们学习。")
    ids = torch.from_numpy(np.concatenate([off.src_ids, off.tgt_ids[:-1]]))[None]
    with torch.inference_mode(), heads_off(tiny.model, [key], 4):
        out = tiny.model.model(ids)
    S = len(off.src_tokens)
    want = out.logits[0, S:].softmax(-1).numpy()
    np.testing.assert_allclose(off.step_probs, want, atol=1e-5)
    assert np.abs(off.step_probs - on.step_probs).max() > 1e-4
    with pytest.raises(InputError, match="no cross attention"):
        tiny.generate(SENTENCE, heads_off=[("cross", 0, 0)])


def test_decoding_stops_where_the_positions_end(tiny):
    S = len(tiny.source(SENTENCE).ids)
    trace = tiny.generate(SENTENCE, max_new_tokens=MAX_LEN - 1)  # more than fit after S
    assert S + len(trace.tgt_tokens) - 1 <= MAX_LEN
    with pytest.raises(InputError, match="positional experiments"):
        tiny.generate(SENTENCE, positional="shuffled")


def test_the_document_holds_one_map_and_validates(tiny):
    trace = tiny.generate(SENTENCE, GenerationSettings(num_beams=2, max_new_tokens=5))
    doc = D.to_document(trace, display_settings(), "tiny-prefix-lm")
    schema = json.loads(D.SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.validate(doc, schema)
    assert doc["architecture"] == "decoder-only"
    assert doc["attention"]["encoder"] is None and doc["attention"]["cross"] is None
    back = D.read_document(D.dumps(doc))
    assert back.encoder_attentions is None and back.cross_attentions is None
    assert np.abs(back.decoder_attentions - trace.decoder_attentions).max() <= 5e-5 + 1e-7
    with pytest.raises(ValueError, match="N = S \\+ T"):
        D.read_document({**doc, "src_labels": doc["src_labels"][1:]})


def test_split_at_the_prompt_and_joined_again_is_the_same_map(tiny):
    trace = tiny.generate(SENTENCE, max_new_tokens=6)
    split = split_at_prompt(trace)
    S, T = len(trace.src_tokens), len(trace.steps)
    assert split.encoder_attentions.shape[2:] == (S, S)
    assert split.cross_attentions.shape[2:] == (T, S)
    assert split.decoder_attentions.shape[2:] == (T, T)
    rows = split.cross_attentions.sum(-1) + split.decoder_attentions.sum(-1)  # (L, H, T)
    np.testing.assert_allclose(rows, 1.0, atol=1e-5)  # a row's two blocks together
    assert np.array_equal(one_map(split), trace.decoder_attentions)
    assert split_at_prompt(split) is split
    same = D.dumps(D.to_document(split, display_settings(), "m"))
    assert same == D.dumps(D.to_document(trace, display_settings(), "m"))


@pytest.mark.parametrize("num_beams", [1, 3])
def test_translate_batch_gives_what_generate_gives(tiny, num_beams):
    texts = [SENTENCE, "Hello.", "Good evening.", "Why do we work?", "Good morning.", "",
             "It is raining today."]
    lengths = [len(tiny.source(t).ids) for t in texts if t]
    assert len(set(lengths)) < len(lengths)  # a batch of two prompts of one length
    got = translate_batch(tiny, texts, num_beams=num_beams, max_new_tokens=8, batch_size=3)
    want = [tiny.generate(t, num_beams=num_beams, max_new_tokens=8).output_text if t.strip()
            else "" for t in texts]
    assert got == want


def test_the_verdict_reads_a_decoder_only_trace(tiny):
    trace = tiny.generate(SENTENCE, max_new_tokens=6)
    judged = judge_trace(trace, tiny.info.train_counts, "en")
    S, T = len(trace.src_tokens), len(trace.steps)
    assert judged.coverage.shape == (S,)  # each written token's prompt share, renormalised
    assert judged.coverage.sum() == pytest.approx(T, abs=1e-4)
    assert judged.left_out == ()  # the left-out check is calibrated on cross-attention
    assert judge_trace(split_at_prompt(trace), None, "en").coverage == pytest.approx(
        judged.coverage)


def test_one_head_recomputed_is_the_one_map(tiny):
    trace = tiny.generate(SENTENCE, max_new_tokens=6)
    N = len(trace.src_tokens) + len(trace.steps)
    h = head_internals(tiny, trace, "decoder", layer=1, head=2)
    assert h.query_tokens == h.key_tokens == (*trace.src_labels, *trace.decoder_input_labels)
    np.testing.assert_allclose(h.weights, trace.decoder_attentions[1, 2], atol=1e-6)
    assert np.array_equal(h.mask, np.triu(np.ones((N, N), bool), 1))  # look-ahead only


def test_head_statistics_read_the_one_map_with_its_sink(tiny):
    trace = tiny.generate(SENTENCE, max_new_tokens=6)
    s = head_stats(trace, "decoder")
    A = trace.decoder_attentions.astype(np.float64)  # (L, H, N, N)
    assert tuple(s.values) == ONE_STACK_STATISTICS and s.rows == A.shape[2]
    np.testing.assert_allclose(s.values["first"], A[..., 0].mean(-1), atol=1e-12)
    np.testing.assert_allclose(s.values["confidence"], A.max(-1).mean(-1), atol=1e-12)
    assert head_stats(split_at_prompt(trace), "decoder").values["first"] == pytest.approx(
        s.values["first"])  # as the app holds it, split at the prompt
    with pytest.raises(ValueError, match="only 'decoder'"):
        head_stats(trace, "cross")
    assert set(head_stats_over([trace, trace])) == {"decoder"}


def test_gradient_x_input_is_the_one_sequence_s_own_gradient(tiny):
    """Gradient x input of a decoder-only model (the prompt before <sep> as the source, the
    decoder inputs as the prefix) equals autograd through one forward pass of the network
    over the one sequence's embeddings."""
    trace = tiny.generate(SENTENCE, max_new_tokens=4)
    src, tgt = torch.as_tensor(trace.src_ids), torch.as_tensor(trace.tgt_ids)
    got = attribute(tiny.model, src, tgt, "input_x_gradient")
    net, S = tiny.model.model, len(src)
    for t in range(len(trace.steps)):
        ids = torch.cat([src, tgt[: t + 1]])[None]  # (1, S + t + 1)
        emb = net.embed(ids).detach().requires_grad_(True)  # (1, N, D)
        logp = net(None, inputs_embeds=emb).logits[0, -1].log_softmax(-1)[tgt[t + 1]]
        (grad,) = torch.autograd.grad(logp, emb)
        want = (grad * emb)[0].sum(-1).detach().numpy()  # (N,)
        np.testing.assert_allclose(got.source[t], want[:S], atol=1e-5)
        np.testing.assert_allclose(got.prefix[t, : t + 1], want[S:], atol=1e-5)


def test_the_output_text_writes_no_special_and_no_byte_marks(tiny):
    """The tiny random model writes English pieces and <sep> too: its text shows them as a
    reader would (the codec's decode), never ``Ġ`` or ``<sep>``."""
    trace = tiny.generate(SENTENCE, max_new_tokens=12)
    codec = tiny._source_side.codec
    assert trace.output_text == codec.decode(trace.tgt_ids)
    assert "<sep>" not in trace.output_text and "Ġ" not in trace.output_text
