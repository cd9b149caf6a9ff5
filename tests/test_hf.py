"""Hugging Face encoder-decoder models through our step-through decoding, against Hugging
Face's own forward pass and ``generate()``.

Tiny random-weight Marian, BART, T5 and M2M100 models, and the further geometries T5 v1.1
(H * d_kv != d_model, gated-gelu, untied lm_head), mT5 and BART with a byte-level BPE trained
on Chinese (``testkit/hf_tiny.py``: config classes, tokenizers trained on a few sentences,
``save_pretrained``) are opened with ``load_pretrained`` like any model; nothing is
downloaded.
"""

from __future__ import annotations

import re
from contextlib import contextmanager, nullcontext

import numpy as np
import pytest
import torch

from model import InputError, head_internals, load_pretrained
from model.analysis.internals import embedding_parts
from model.core.config import ATTENTION_KINDS
from model.decoding.settings import BOUNDS
from testkit.hf_tiny import ALL_FAMILIES, T5_HEADS, UNTIED, tiny_folder

SENTENCES = ("Why do we work?", "My mother is a doctor.", "I like to read books at night.")
ATOL = 1e-5


@pytest.fixture(scope="module", params=ALL_FAMILIES)
def family(request):
    return request.param


@pytest.fixture(scope="module")
def tiny(family, tmp_path_factory):
    """(translator, the Hugging Face model, its tokenizer) of one family."""
    tr = load_pretrained(tiny_folder(family, tmp_path_factory))
    return tr, tr.model.hf, tr._source_side.tokenizer


def _src(tr, text: str) -> torch.Tensor:
    return torch.from_numpy(tr.source(text).ids)[None]  # (1, S)


def _generate(hf, src: torch.Tensor, **kwargs):
    with torch.inference_mode():
        return hf.generate(src, attention_mask=torch.ones_like(src), do_sample=False,
                           return_dict_in_generate=True, max_length=None, **kwargs)


@contextmanager
def eos_pressure(hf, eos: int):
    """While active, the model's ``</s>`` logit is set just above its second-best logit at
    every position (a deterministic hook on the output layer, seen alike by our decoding
    and by ``generate()``): the random tiny models then finish sentences at varied steps,
    so stopping at ``</s>`` and finished beam hypotheses are exercised."""
    def hook(module, args, logits):
        logits = logits.clone()
        logits[..., eos] = logits.topk(2, dim=-1).values[..., 1] + 1e-3
        return logits

    handle = hf.get_output_embeddings().register_forward_hook(hook)
    try:
        yield
    finally:
        handle.remove()


def _layers(per_layer) -> np.ndarray:
    """Hugging Face's per-layer (1, H, Tq, Tk) tuple as our (L, H, Tq, Tk) array."""
    return torch.stack([a[0] for a in per_layer]).numpy()


def _strip(ids: list[int], eos: int, pad: int) -> list[int]:
    """Generated ids up to and with the first ``</s>`` (``generate`` pads shorter rows)."""
    out = []
    for i in ids:
        out.append(i)
        if i == eos:
            break
    while out and out[-1] == pad and pad != eos:
        out.pop()
    return out


@pytest.mark.parametrize("text", SENTENCES)
def test_step_through_equals_one_forward_pass(tiny, text):
    """Every map and every step's distribution of the cached step-through equal one
    teacher-forced ``model(..., output_attentions=True)`` over the result."""
    tr, hf, tokenizer = tiny
    trace = tr.generate(text, max_new_tokens=10)
    src = _src(tr, text)
    dec = torch.tensor([tr.target.vocab.encode(trace.decoder_input_tokens)])
    with torch.inference_mode():
        ref = hf(input_ids=src, decoder_input_ids=dec, output_attentions=True, use_cache=False)
    for ours, theirs in ((trace.encoder_attentions, ref.encoder_attentions),
                         (trace.decoder_attentions, ref.decoder_attentions),
                         (trace.cross_attentions, ref.cross_attentions)):
        np.testing.assert_allclose(ours, _layers(theirs), atol=ATOL)
    np.testing.assert_allclose(trace.step_probs, ref.logits[0].softmax(-1).numpy(), atol=ATOL)
    assert trace.src_tokens == tuple(tokenizer.convert_ids_to_tokens(src[0].tolist()))


@pytest.mark.parametrize("eos", [False, True])
@pytest.mark.parametrize("text", SENTENCES)
def test_greedy_equals_generate_with_its_attentions(tiny, text, eos):
    """Greedy output equals ``generate()`` token for token, and each step's new decoder
    self- and cross-attention rows equal the ones ``generate(output_attentions=True)``
    returns for that step."""
    tr, hf, tokenizer = tiny
    c = tr.config
    with eos_pressure(hf, c.eos_id) if eos else nullcontext():
        trace = tr.generate(text, max_new_tokens=12)
        src = _src(tr, text)
        out = _generate(hf, src, num_beams=1, max_new_tokens=12, output_attentions=True,
                        output_logits=True)
    ours = tr.target.vocab.encode(trace.tgt_tokens)
    assert ours == [c.bos_id, *_strip(out.sequences[0, 1:].tolist(), c.eos_id, -1)]
    assert trace.output_text == tokenizer.decode(out.sequences[0], skip_special_tokens=True)
    np.testing.assert_allclose(trace.encoder_attentions, _layers(out.encoder_attentions),
                               atol=ATOL)
    for t, (dec_t, cross_t) in enumerate(zip(out.decoder_attentions, out.cross_attentions,
                                             strict=True)):
        dec_row = torch.stack([a[0, :, -1] for a in dec_t]).numpy()  # (L, H, t + 1)
        cross_row = torch.stack([a[0, :, -1] for a in cross_t]).numpy()  # (L, H, S)
        np.testing.assert_allclose(trace.decoder_attentions[:, :, t, : t + 1], dec_row,
                                   atol=ATOL)
        np.testing.assert_allclose(trace.cross_attentions[:, :, t], cross_row, atol=ATOL)
        probs = out.logits[t][0].softmax(-1).numpy()  # the model's, before the processors
        np.testing.assert_allclose(trace.step_probs[t], probs, atol=ATOL)


@pytest.mark.parametrize("num_beams,early_stopping,length_penalty",
                         [(2, True, 1.0), (4, True, 1.0), (4, False, 1.0), (3, False, 0.5),
                          (4, False, 2.0)])
def test_beam_search_equals_generate(tiny, num_beams, early_stopping, length_penalty):
    """The n-best list equals ``generate(num_beams=..., num_return_sequences=num_beams)``
    in order, token for token, with the same scores; with ``</s>`` pressure, so that
    hypotheses finish at different steps, and without."""
    tr, hf, _ = tiny
    c = tr.config
    finished = 0
    for text in SENTENCES:
        for eos in (False, True):
            with eos_pressure(hf, c.eos_id) if eos else nullcontext():
                trace = tr.generate(text, num_beams=num_beams, max_new_tokens=12,
                                  length_penalty=length_penalty,
                                  early_stopping=early_stopping)
                out = _generate(hf, _src(tr, text), num_beams=num_beams, max_new_tokens=12,
                                num_return_sequences=num_beams, early_stopping=early_stopping,
                                length_penalty=length_penalty, output_scores=True)
            theirs = [_strip(row[1:].tolist(), c.eos_id, c.pad_id) for row in out.sequences]
            ours = [tr.target.vocab.encode(h.tokens) for h in trace.beam.hypotheses]
            assert ours == theirs, (text, eos)
            np.testing.assert_allclose([h.score for h in trace.beam.hypotheses],
                                       out.sequences_scores.numpy(), atol=1e-4)
            assert tr.target.vocab.encode(trace.tgt_tokens) == [c.bos_id, *ours[0]]
            finished += sum(c.status == "finished" for step in trace.beam.steps for c in step)
    assert finished > 0  # the </s> pressure did finish hypotheses during the search


def test_head_internals_equal_the_models_weights(tiny):
    """Inside one head, recomputed from the hooked projections, the weights equal the
    model's own maps for every kind, layer and head."""
    tr, _, _ = tiny
    trace = tr.generate(SENTENCES[1], max_new_tokens=8)
    maps = dict(encoder=trace.encoder_attentions, decoder=trace.decoder_attentions,
                cross=trace.cross_attentions)
    Dh = tr.config.head_dim
    for kind in ATTENTION_KINDS:
        for layer in range(maps[kind].shape[0]):
            for head in range(maps[kind].shape[1]):
                hi = head_internals(tr, trace, kind, layer=layer, head=head)
                assert hi.d_k == Dh and hi.q.shape[1] == hi.k.shape[1] == hi.v.shape[1] == Dh
                assert hi.w_q.shape == (tr.config.d_model, Dh)
                np.testing.assert_allclose(hi.weights, maps[kind][layer, head], atol=ATOL)
                np.testing.assert_allclose(hi.output, hi.weights @ hi.v, atol=ATOL)
                want = hi.raw_scores * hi.scaling + (
                    0 if hi.position_bias is None else hi.position_bias)
                np.testing.assert_allclose(hi.scaled_scores, want, atol=ATOL)


def test_the_config_has_the_models_geometry(tiny, family):
    """Our config carries the Hugging Face model's own per-head width (T5's d_kv, so
    H * Dh != D for T5 v1.1 and mT5) and head count, the query projection is (H * Dh, D),
    and an untied lm_head stays apart from the embedding table."""
    tr, hf, _ = tiny
    c, hc = tr.config, hf.config
    module, names = tr.model.attention("encoder", 0)
    assert getattr(module, names[0]).weight.shape == (c.nhead * c.head_dim, c.d_model)
    if family in T5_HEADS:
        assert (c.nhead, c.head_dim) == T5_HEADS[family] == (hc.num_heads, hc.d_kv)
    else:
        assert (c.nhead, c.head_dim) == (hc.encoder_attention_heads,
                                         hc.d_model // hc.encoder_attention_heads)
    untied = hf.get_output_embeddings().weight is not hf.get_input_embeddings().weight
    assert untied == (family in UNTIED)


def test_hooks_are_removed_and_scoped_to_the_request(tiny):
    """After a look inside a head the shared model has the hooks it had before (transformers
    keeps some of its own), and a pass from another thread during the look is not
    recorded."""
    import threading

    from model.backends.hf_hooks import recording

    tr, hf, _ = tiny

    def hooks() -> dict:
        return {name: len(m._forward_hooks) for name, m in hf.named_modules()}

    trace = tr.generate(SENTENCES[0], max_new_tokens=4)  # transformers' own hooks, if any
    before = hooks()
    head_internals(tr, trace, "cross", layer=0, head=0)
    assert hooks() == before
    q_proj = getattr(*tr.model.attention("encoder", 0)[0:1], tr.model.attention("encoder", 0)[1][0])
    with recording({"q": q_proj}) as seen:
        other = threading.Thread(target=tr.generate, args=(SENTENCES[1],),
                                 kwargs=dict(max_new_tokens=2))
        other.start()
        other.join()
    assert seen == {}


def test_positions_per_family(tiny, family):
    """Marian and M2M100: sinusoids with sin in the first half of the dimensions and cos in
    the second; BART: the learned table from row 2; T5: no vectors, a bias that depends
    only on the distance j - i. The embedding parts add up to what the first encoder layer
    receives (BART: before its layernorm_embedding)."""
    tr, hf, _ = tiny
    D, n = tr.config.d_model, 7
    if tr.info.positional_scheme == "relative":
        with pytest.raises(InputError):
            tr.positional_encoding(n)
        bias = tr.relative_position_bias(n, n, "encoder")
        for d in range(-n + 1, n):
            cells = [bias[:, i, i + d] for i in range(n) if 0 <= i + d < n]
            assert all(np.array_equal(cells[0], x) for x in cells)
        return
    pe = tr.positional_encoding(n)
    if tr.info.positional_scheme == "sinusoidal-halves":
        half = D // 2
        rate = np.exp(-np.log(10000.0) * np.arange(half) / (half - (family == "m2m100")))
        if family == "marian":
            rate = 1 / np.power(10000, 2 * np.arange(half) / D)
        first = 2 if family == "m2m100" else 0  # M2M100 numbers positions from 2
        angle = (first + np.arange(n))[:, None] * rate[None, :]
        np.testing.assert_allclose(pe, np.concatenate([np.sin(angle), np.cos(angle)], 1),
                                   atol=1e-5)
    else:
        table = hf.get_encoder().embed_positions.weight
        np.testing.assert_allclose(pe, table[2: 2 + n].detach().numpy(), atol=0)
    tokens = tr.source(SENTENCES[0]).tokens
    parts = embedding_parts(tr, tokens, "source")
    np.testing.assert_allclose(parts.total, parts.embedding + parts.positional, atol=1e-6)


def test_multilingual_target_language_is_forced_first(tiny, family):
    """M2M100, mBART: ``tgt_lang`` forces its language token first, as
    ``generate(forced_bos_token_id=...)``, and the outputs agree token for token."""
    tr, hf, tok = tiny
    if not tr.info.languages:
        with pytest.raises(InputError, match="language"):
            tr.generate(SENTENCES[0], tgt_lang="zh")
        return
    code = {lang[:2]: lang for lang in tr.info.languages if lang[:2] in ("en", "zh")}
    for lang in (code["zh"], code["en"]):  # M2M100's "zh", mBART's "zh_CN"
        trace = tr.generate(SENTENCES[0], src_lang=code["en"], tgt_lang=lang,
                            max_new_tokens=10)
        lang_id = tr.target.vocab.stoi[tok.lang_code_to_token[lang]] if hasattr(
            tok, "lang_code_to_token") else tr.target.vocab.stoi[lang]
        assert trace.tgt_tokens[1] == tr.target.vocab.itos[lang_id]
        out = _generate(hf, _src(tr, SENTENCES[0]), num_beams=1, max_new_tokens=10,
                        forced_bos_token_id=lang_id)
        c = tr.config
        assert tr.target.vocab.encode(trace.tgt_tokens) == [
            c.bos_id, *_strip(out.sequences[0, 1:].tolist(), c.eos_id, -1)]


def test_concurrent_sessions_keep_their_own_languages(tmp_path_factory):
    """The tokenizer's source language is state; sessions decoding at once with different
    languages each get their own (the translator serialises tokenizer calls)."""
    from concurrent.futures import ThreadPoolExecutor

    tr = load_pretrained(tiny_folder("m2m100", tmp_path_factory))
    jobs = [("en", "zh"), ("fr", "en"), ("de", "zh"), ("zh", "fr")] * 4

    def run(langs):
        src, tgt = langs
        trace = tr.generate(SENTENCES[2], src_lang=src, tgt_lang=tgt, max_new_tokens=3)
        return trace.src_tokens[0], trace.tgt_tokens[1]

    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(run, jobs))
    assert got == [(f"__{s}__", f"__{t}__") for s, t in jobs]


def test_a_padded_batch_equals_each_sentence_alone(tiny):
    """Three sentences of different lengths decoded as one right-padded batch (the Masks
    tab) give each sentence's own output and maps, and no real query reads a <pad> key."""
    from model import batch_matches_single, decode_batch

    tr, _, _ = tiny
    batch = decode_batch(tr, ["Why?", SENTENCES[1], SENTENCES[2]], max_new_tokens=8)
    assert batch.source_padding_mask.any()  # the short sentences really are padded
    check = batch_matches_single(tr, batch)
    assert check["all_same_output"], check
    assert max(check["max_abs_diff"].values()) < ATOL and check["pad_weight"] < 1e-6


def test_default_length_limit_is_the_generation_configs(tiny):
    """Without ``max_new_tokens`` the step-through stops where ``generate()`` with the
    model's generation config stops (its ``max_length`` counts the start token)."""
    tr, hf, _ = tiny
    trace = tr.generate(SENTENCES[2])
    with torch.inference_mode():
        out = hf.generate(_src(tr, SENTENCES[2]), do_sample=False, num_beams=1)
    assert len(trace.tgt_tokens) <= hf.generation_config.max_length
    assert tr.target.vocab.encode(trace.tgt_tokens) == [
        tr.config.bos_id, *_strip(out[0, 1:].tolist(), tr.config.eos_id, -1)]


@pytest.mark.parametrize("penalty", [1.5, BOUNDS["repetition_penalty"].high])
def test_repetition_penalty_equals_generate_with_beams(tiny, penalty):
    """``repetition_penalty`` with beam search decodes what
    ``generate(repetition_penalty=..., num_beams=3)`` decodes, token for token (beam search
    hands the processors log-probabilities, as ours always do), and the penalty changes the
    search of at least one sentence: its n-best scores (the tiny models repeat themselves;
    within the settings' bounds the output itself may stay the same)."""
    tr, hf, _ = tiny
    c = tr.config
    changed = 0
    for text in SENTENCES:
        trace = tr.generate(text, num_beams=3, max_new_tokens=12, repetition_penalty=penalty,
                            early_stopping=True)
        out = _generate(hf, _src(tr, text), num_beams=3, max_new_tokens=12,
                        repetition_penalty=penalty, early_stopping=True)
        theirs = _strip(out.sequences[0, 1:].tolist(), c.eos_id, c.pad_id)
        assert tr.target.vocab.encode(trace.tgt_tokens) == [c.bos_id, *theirs], text
        plain = tr.generate(text, num_beams=3, max_new_tokens=12, early_stopping=True)
        changed += [h.score for h in plain.beam.hypotheses] != [
            h.score for h in trace.beam.hypotheses]
    assert changed > 0


@pytest.mark.parametrize("num_beams", [1, 3])
@pytest.mark.parametrize("size", [1, 2, 3])
def test_no_repeat_ngram_size_equals_generate(tiny, num_beams, size):
    """``no_repeat_ngram_size`` bans what ``generate(no_repeat_ngram_size=...)`` bans: the
    best output is the same token for token, greedy and with beams, and it differs from
    the output without the ban (the tiny models repeat themselves)."""
    tr, hf, _ = tiny
    c = tr.config
    changed = 0
    for text in SENTENCES:
        trace = tr.generate(text, num_beams=num_beams, max_new_tokens=12,
                            no_repeat_ngram_size=size, early_stopping=True)
        out = _generate(hf, _src(tr, text), num_beams=num_beams, max_new_tokens=12,
                        no_repeat_ngram_size=size, early_stopping=True)
        theirs = _strip(out.sequences[0, 1:].tolist(), c.eos_id,
                        c.pad_id if num_beams > 1 else -1)
        assert tr.target.vocab.encode(trace.tgt_tokens) == [c.bos_id, *theirs], text
        plain = tr.generate(text, num_beams=num_beams, max_new_tokens=12, early_stopping=True)
        changed += plain.tgt_tokens != trace.tgt_tokens
    assert changed > 0


def test_target_labels_read_as_the_tokenizers_own_text(tiny):
    """Every target label is the tokenizer's own text of that one token (``decode([id])``:
    no ``▁`` or byte-level marks), the bytes of a token that is only part of a character
    in hex, special tokens as they are; the trace, its steps and its beams carry them."""
    tr, _, tok = tiny
    specials = set(tok.all_special_tokens)
    trace = tr.generate(SENTENCES[1], num_beams=2, max_new_tokens=10)
    ids = sorted({int(i) for s in trace.steps for i in s.top_ids} | set(trace.tgt_ids.tolist()))
    for i, label in zip(ids, tr.target.labels(ids), strict=True):
        token = tok.convert_ids_to_tokens(i)
        text = tok.decode([i], skip_special_tokens=False).strip()
        if token in specials:
            assert label == token
        elif "\ufffd" in text:  # part of a character: its bytes
            assert re.fullmatch(r"(⟨[0-9a-f]{2}( [0-9a-f]{2})*⟩|[^⟨⟩])+", label), label
        else:
            assert label == (text or "␣"), (token, label, text)
        assert "▁" not in label and not (label != token and "Ġ" in label)
    assert trace.tgt_labels == tr.target.labels(trace.tgt_ids)
    assert trace.steps[0].top_labels == tr.target.labels(trace.steps[0].top_ids)
    assert trace.beam.steps[0][0].label == tr.target.labels([trace.beam.steps[0][0].token_id])[0]


def test_bad_words_of_the_generation_config_ban_as_generate_does(tiny):
    """``bad_words_ids`` of one token are banned as ``generate()`` bans them, ``</s>``
    excepted (transformers never bans it this way): the outputs agree token for token."""
    tr, hf, _ = tiny
    c, gen = tr.config, hf.generation_config
    plain = tr.generate(SENTENCES[0], max_new_tokens=8)
    first = int(plain.tgt_ids[1])  # the first token greedy decoding chooses
    saved = gen.bad_words_ids
    try:
        gen.bad_words_ids = [[c.eos_id], [first]]
        trace = tr.generate(SENTENCES[0], max_new_tokens=8)
        out = _generate(hf, _src(tr, SENTENCES[0]), num_beams=1, max_new_tokens=8)
    finally:
        gen.bad_words_ids = saved
    assert first not in trace.tgt_ids[1:].tolist() or trace.steps[0].forced
    assert trace.tgt_ids.tolist() == [c.bos_id, *_strip(out.sequences[0, 1:].tolist(),
                                                         c.eos_id, -1)]
