"""Hugging Face causal language models through ``load_pretrained`` and ``generate`` (issue 55,
item 2): ``backends.hf_causal`` puts an ``AutoModelForCausalLM`` behind the encoder-decoder's
parts, so every strategy, teacher forcing and the head switches drive it. Each trace is
checked against Hugging Face itself: one forward pass of the model over the same N tokens
(``output_attentions``, eager attention, and its logits), and its own
``generate(do_sample=False)``, greedy and with 3 beams. The models are tiny and random
(``testkit.hf_tiny_causal``: GPT-2, Llama, Mistral, Qwen2, Qwen3, grouped-query attention in
all but GPT-2), since only equalities are asserted."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch

from model import CheckpointError, GenerationSettings, InputError, head_internals, load_pretrained
from model.analysis.attribution import MAX_COMPLETENESS_ERROR, MAX_STEPS, attribute
from model.backends.hf_causal import HFCausal
from model.backends.hf_load import cached_models
from model.backends.translate import translate_batch
from model.core.config import end_ids, layer_counts
from model.decoding import greedy_batch
from testkit.hf_tiny import to_hf_cache
from testkit.hf_tiny_causal import (
    CHAT_FAMILIES,
    FAMILIES,
    POSITIONS,
    remote_code_causal,
    tiny_causal_folder,
)

PROMPT = "We are learning about neural networks."
SCHEMES = {"gpt2": "learned", "llama": "rotary", "mistral": "rotary", "qwen2": "rotary",
           "qwen3": "rotary"}
ADDS_BOS = ("llama", "mistral")
TOL = 1e-4


@pytest.fixture(scope="module", params=FAMILIES)
def family(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def folder(family, tmp_path_factory):
    return tiny_causal_folder(family, tmp_path_factory)


@pytest.fixture(scope="module")
def tiny(folder):
    return load_pretrained(folder)


def _ids(trace) -> torch.Tensor:
    """(1, N) the trace's one sequence: the prompt before its last token, the decoder inputs."""
    return torch.from_numpy(np.concatenate([trace.src_ids, trace.tgt_ids[:-1]]))[None]


def _forward(tiny, ids: torch.Tensor):
    """Hugging Face's own pass over ``ids`` (1, N): (L, H, N, N) attention, (N, V) log-probs."""
    with torch.inference_mode():
        out = tiny.model.hf(ids, output_attentions=True)
    attn = torch.stack([a[0] for a in out.attentions]).numpy()
    return attn, out.logits[0].float().log_softmax(-1)


def _o_proj(tiny, layer: int) -> torch.nn.Module:
    """W_O of ``layer``, found by the family's own module names."""
    hf = tiny.model.hf
    if tiny.info.model_type == "gpt2":
        return hf.transformer.h[layer].attn.c_proj
    return hf.model.layers[layer].self_attn.o_proj


def test_a_causal_folder_opens_as_one_stack(tiny, family, folder):
    from transformers import AutoTokenizer

    assert tiny.info.architecture == "decoder-only" and tiny.info.backend == "huggingface"
    assert isinstance(tiny.model, HFCausal) and tiny.info.model_type == family
    assert tiny.info.positional_scheme == SCHEMES[family]
    c = tiny.config
    assert layer_counts(c) == {"encoder": 0, "decoder": 2, "cross": 0}
    assert (c.nhead, c.num_key_value_heads) == ((4, 4) if family == "gpt2" else (4, 2))
    assert c.max_len == POSITIONS and c.inner_dim == tiny.model.hf.config.num_attention_heads \
        * c.head_dim
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    src = tiny.source(PROMPT)
    assert [*src.ids.tolist(), src.start_id] == tokenizer(PROMPT)["input_ids"]
    assert (src.tokens[0] == "<s>") == (family in ADDS_BOS)


def test_greedy_trace_equals_hugging_face(tiny):
    n = 10
    trace = tiny.generate(PROMPT, max_new_tokens=n)
    assert trace.architecture == "decoder-only"
    assert trace.encoder_attentions is None and trace.cross_attentions is None
    ids = _ids(trace)
    S, N = len(trace.src_ids), ids.size(1)
    attn, logp = _forward(tiny, ids)
    assert trace.decoder_attentions.shape == attn.shape == (2, 4, N, N)
    np.testing.assert_allclose(trace.decoder_attentions, attn, atol=TOL)
    np.testing.assert_allclose(trace.step_probs, logp[S:].exp().numpy(), atol=TOL)
    prompt = torch.tensor([[*trace.src_ids, trace.tgt_ids[0]]])
    with torch.inference_mode():
        hf_ids = tiny.model.hf.generate(prompt, attention_mask=torch.ones_like(prompt),
                                        do_sample=False, max_new_tokens=n)
    assert trace.tgt_ids[1:].tolist() == hf_ids[0, prompt.size(1):].tolist()
    with tiny.target._lock:
        want = tiny.target._tokenizer.decode(trace.tgt_ids[1:].tolist(), skip_special_tokens=True)
    assert trace.output_text == want


def test_beams_score_hypotheses_as_a_forward_pass_does(tiny):
    trace = tiny.generate(PROMPT, GenerationSettings(num_beams=3, max_new_tokens=6))
    attn, _ = _forward(tiny, _ids(trace))
    np.testing.assert_allclose(trace.decoder_attentions, attn, atol=TOL)
    src = tiny.source(PROMPT)
    S = len(src.ids)
    assert len(trace.beam.hypotheses) == 3
    for h in trace.beam.hypotheses:
        ids = torch.tensor([[*src.ids.tolist(), src.start_id, *h.ids[:-1]]])
        _, logp = _forward(tiny, ids)
        want = sum(float(logp[S + i, tok]) for i, tok in enumerate(h.ids))
        assert h.logprob == pytest.approx(want, abs=TOL)
    prompt = torch.tensor([[*src.ids.tolist(), src.start_id]])
    with torch.inference_mode():
        hf_ids = tiny.model.hf.generate(
            prompt, attention_mask=torch.ones_like(prompt), num_beams=3, do_sample=False,
            max_new_tokens=6, early_stopping=tiny.info.early_stopping, length_penalty=1.0)
    assert list(trace.beam.hypotheses[0].ids) == hf_ids[0, prompt.size(1):].tolist()


def test_sampling_is_recorded_as_a_forward_pass(tiny):
    run = GenerationSettings(do_sample=True, seed=5, temperature=1.0, max_new_tokens=6)
    a, b = tiny.generate(PROMPT, run), tiny.generate(PROMPT, run)
    assert a.tgt_ids.tolist() == b.tgt_ids.tolist()
    attn, logp = _forward(tiny, _ids(a))
    np.testing.assert_allclose(a.decoder_attentions, attn, atol=TOL)
    np.testing.assert_allclose(a.step_probs, logp[len(a.src_ids):].exp().numpy(), atol=TOL)


def test_teacher_forcing_scores_the_reference(tiny):
    reference = "我们在学习神经网络。"
    trace = tiny.teacher_force(PROMPT, reference)
    assert trace.teacher_forced and trace.output_text == reference
    assert trace.tgt_ids[-1] == tiny.config.eos_id
    _, logp = _forward(tiny, _ids(trace))
    S = len(trace.src_ids)
    want = logp[S:].exp().numpy()[np.arange(len(trace.steps)), trace.tgt_ids[1:]]
    np.testing.assert_allclose([s.prob for s in trace.steps], want, atol=TOL)


def test_a_head_switched_off_is_its_w_o_input_zeroed(tiny):
    layer, head, Dh = 0, 2, tiny.config.head_dim
    off = tiny.teacher_force(PROMPT, "我们学习。", heads_off=[("decoder", layer, head)])
    on = tiny.teacher_force(PROMPT, "我们学习。")

    def zero(module, args):
        x = args[0].clone()  # (B, T, H * Dh)
        x[..., head * Dh:(head + 1) * Dh] = 0.0
        return (x, *args[1:])

    handle = _o_proj(tiny, layer).register_forward_pre_hook(zero)
    try:
        attn, logp = _forward(tiny, _ids(off))
    finally:
        handle.remove()
    np.testing.assert_allclose(off.decoder_attentions, attn, atol=TOL)
    np.testing.assert_allclose(off.step_probs, logp[len(off.src_ids):].exp().numpy(), atol=TOL)
    assert np.abs(off.step_probs - on.step_probs).max() > 1e-3
    assert np.abs(off.decoder_attentions[1] - on.decoder_attentions[1]).max() > 1e-3
    with pytest.raises(InputError, match="no cross attention"):
        tiny.generate(PROMPT, heads_off=[("cross", 0, 0)])


def test_prompts_that_do_not_fit_are_refused(tiny, family):
    with pytest.raises(InputError, match="context of 64 positions"):
        tiny.generate(" ".join(["x"] * 70))  # 70 tokens or more
    if family in ADDS_BOS:  # <s> a: the source is <s>, the decoder starts from "a"
        src = tiny.source("a")
        assert len(src.ids) == 1 and src.tokens == ("<s>",)
    else:
        with pytest.raises(InputError, match="single token"):
            tiny.generate("a")
    S = len(tiny.source(PROMPT).ids)
    trace = tiny.generate(PROMPT, max_new_tokens=POSITIONS - 1)  # more than fit after S
    assert S + len(trace.tgt_tokens) - 1 <= POSITIONS


def test_positions_and_masks_as_the_model_has_them(tiny, family):
    if family == "gpt2":
        np.testing.assert_array_equal(tiny.positional_encoding(5),
                                      tiny.model.hf.transformer.wpe.weight[:5].detach().numpy())
    else:
        with pytest.raises(InputError, match="rotates"):
            tiny.positional_encoding(5)
    with pytest.raises(InputError, match="positional experiments"):
        tiny.generate(PROMPT, positional="shuffled")
    views = tiny.mask_views(["a", "b", "c"], ["d", "e"], pad=2)
    assert views["padding"].tolist() == [False] * 5 + [True] * 2
    np.testing.assert_array_equal(views["subsequent"], np.triu(np.ones((7, 7), bool), 1))
    np.testing.assert_array_equal(views["self"], views["subsequent"] | views["padding"][None])


def test_translate_batch_gives_what_generate_gives(tiny):
    texts = [PROMPT, "Good morning.", "Good evening.", "", "Where is the bus station?"]
    got = translate_batch(tiny, texts, max_new_tokens=6, batch_size=2)
    want = [tiny.generate(t, max_new_tokens=6).output_text if t else "" for t in texts]
    assert got == want


# --- loading: what is refused, and the cache ------------------------------------------------


def test_remote_code_is_refused(tmp_path):
    folder = remote_code_causal(tmp_path / "remote")
    with pytest.raises(CheckpointError, match="trust_remote_code"):
        load_pretrained(folder)


def _edited(family: str, tmp_path, tmp_path_factory, changes: dict, drop: tuple = ()):
    """A copy of the tiny ``family`` folder whose config.json has ``changes`` and lacks
    ``drop``."""
    folder = tmp_path / f"edited-{family}"
    shutil.copytree(tiny_causal_folder(family, tmp_path_factory), folder)
    path = folder / "config.json"
    config = {**json.loads(path.read_text(encoding="utf-8")), **changes}
    for key in drop:
        config.pop(key)
    path.write_text(json.dumps(config), encoding="utf-8")
    return folder


def test_a_head_other_than_a_language_model_is_refused(tmp_path, tmp_path_factory):
    folder = _edited("gpt2", tmp_path, tmp_path_factory,
                     {"architectures": ["GPT2ForSequenceClassification"]})
    with pytest.raises(CheckpointError, match="causal language models"):
        load_pretrained(folder)


@pytest.mark.parametrize(("family", "changes", "drop", "named"), [
    ("llama", {"num_key_value_heads": 3}, (), "num_key_value_heads"),
    ("llama", {"hidden_size": "32"}, (), "hidden_size"),
    ("qwen3", {}, ("num_hidden_layers",), "num_hidden_layers"),
    ("qwen2", {"eos_token_id": 9999}, (), "eos_token_id"),
    ("gpt2", {"n_head": 5}, (), "not a multiple of the heads"),
    ("mistral", {"intermediate_size": 0}, (), "intermediate_size"),
])
def test_a_config_the_app_cannot_represent_is_named(family, changes, drop, named, tmp_path,
                                                     tmp_path_factory):
    folder = _edited(family, tmp_path, tmp_path_factory, changes, drop)
    with pytest.raises(CheckpointError, match=named):
        load_pretrained(folder)


def test_a_model_too_large_for_this_machine_is_refused_before_loading(tmp_path,
                                                                     tmp_path_factory):
    big = {"hidden_size": 65536, "intermediate_size": 262144, "num_hidden_layers": 200,
           "num_attention_heads": 512, "num_key_value_heads": 64, "head_dim": 128}
    with pytest.raises(CheckpointError, match="GB for its weights"):
        load_pretrained(_edited("llama", tmp_path, tmp_path_factory, big))


def test_a_list_of_end_ids_stops_at_any_as_generate_does(tmp_path, tmp_path_factory):
    """Llama 3 and Qwen2.5-Instruct list several end ids: decoding stops at whichever comes
    first, greedy and with beams, as Hugging Face's ``generate()`` stops. The second end id
    is the token the model writes third, so the list must cut the continuation there."""
    plain = load_pretrained(tiny_causal_folder("llama", tmp_path_factory))
    third = int(plain.generate(PROMPT, max_new_tokens=6).tgt_ids[3])
    first = plain.config.eos_id
    folder = _edited("llama", tmp_path, tmp_path_factory, {"eos_token_id": [first, third]})
    path = folder / "generation_config.json"  # what generate() reads: the same list
    path.write_text(json.dumps({**json.loads(path.read_text(encoding="utf-8")),
                                "eos_token_id": [first, third]}), encoding="utf-8")
    tiny = load_pretrained(folder)
    assert tiny.config.eos_id == first and set(tiny.config.eos_ids) == {first, third}
    trace = tiny.generate(PROMPT, max_new_tokens=6)
    assert trace.finished and int(trace.tgt_ids[-1]) == third and len(trace.steps) <= 3
    prompt = torch.tensor([[*trace.src_ids, trace.tgt_ids[0]]])
    with torch.inference_mode():
        hf_ids = tiny.model.hf.generate(prompt, attention_mask=torch.ones_like(prompt),
                                        do_sample=False, max_new_tokens=6)
    assert trace.tgt_ids[1:].tolist() == hf_ids[0, prompt.size(1):].tolist()
    run = greedy_batch(tiny.model, torch.from_numpy(trace.src_ids)[None],
                       GenerationSettings(max_new_tokens=6), tiny.target.processors(6),
                       start_ids=[int(trace.tgt_ids[0])])  # a batch stops there too
    assert run.outputs(end_ids(tiny.config)) == [trace.tgt_ids[1:-1].tolist()]


def test_pickle_only_weights_are_refused_unless_allowed(tmp_path, tmp_path_factory):
    from safetensors.torch import load_file

    folder = tmp_path / "pickled"
    shutil.copytree(tiny_causal_folder("qwen2", tmp_path_factory), folder)
    torch.save(load_file(folder / "model.safetensors"), folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()
    with pytest.raises(CheckpointError, match="pickle"):
        load_pretrained(folder)
    assert load_pretrained(folder, load_pickle_weights=True).info.architecture == "decoder-only"


def test_a_hub_name_opens_from_the_local_cache(tmp_path, tmp_path_factory, monkeypatch):
    to_hf_cache(tiny_causal_folder("llama", tmp_path_factory), tmp_path, "tiny-org/tiny-llama")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    assert cached_models() == ["tiny-org/tiny-llama"]  # the app's picker lists it
    model = load_pretrained("tiny-org/tiny-llama")
    assert model.info.architecture == "decoder-only" and model.info.model_type == "llama"
    assert model.generate(PROMPT, max_new_tokens=3).decoder_attentions.shape[0] == 2


@pytest.mark.parametrize("nhead, kv", [(9, 3), (14, 2), (4, 4), (8, 1)])
def test_query_heads_share_key_value_heads_as_repeat_kv_lays_them(nhead, kv):
    from transformers.models.llama.modeling_llama import repeat_kv

    from model.core.config import kv_head_of

    marked = torch.arange(kv, dtype=torch.float32).view(1, kv, 1, 1)  # each kv head's index
    hf = repeat_kv(marked, nhead // kv)[0, :, 0, 0].long().tolist()  # (H,)
    assert list(kv_head_of(nhead, kv)) == hf
    with pytest.raises(ValueError):
        kv_head_of(nhead, kv + nhead)


def test_the_chat_template_frames_the_prompt_as_one_user_turn(tiny, family, folder):
    """An instruct model's tokenizer template (the tiny Qwens have Qwen's): with ``chat``
    the prompt is ``apply_chat_template``'s ids, and greedy decoding from them is Hugging
    Face's own; a model without a template refuses the switch."""
    from transformers import AutoTokenizer

    if family not in CHAT_FAMILIES:
        assert not tiny.info.chat_template
        with pytest.raises(InputError, match="chat template"):
            tiny.generate(PROMPT, chat=True)
        return
    assert tiny.info.chat_template
    want = AutoTokenizer.from_pretrained(folder).apply_chat_template(
        [{"role": "user", "content": PROMPT}], add_generation_prompt=True)["input_ids"]
    src = tiny.source(PROMPT, chat=True)
    assert [*src.ids.tolist(), src.start_id] == list(want) and src.chat
    trace = tiny.generate(src, max_new_tokens=6, chat=True)  # read as the settings say
    ids = torch.tensor([want])
    with torch.inference_mode():
        hf = tiny.model.hf.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                    max_new_tokens=6)
    assert [int(i) for i in trace.tgt_ids[1:]] == hf[0, ids.size(1):].tolist()
    attn, _ = _forward(tiny, _ids(trace))
    np.testing.assert_allclose(trace.decoder_attentions, attn, atol=TOL)
    plain = tiny.generate(PROMPT, max_new_tokens=6)
    assert len(plain.src_tokens) < len(trace.src_tokens)  # the template's tokens around it


def test_the_chat_switch_goes_into_links_and_back():
    s = GenerationSettings(chat=True)
    assert s.to_query()["chat"] == "True"
    assert GenerationSettings.from_query(s.to_query())[0] == s
    assert GenerationSettings.from_query({"chat": "maybe"})[1] == ("chat",)
    assert "chat" not in GenerationSettings().to_query()


def test_inside_one_head_recomputes_hugging_face_s_weights(tiny):
    """Every head recomputed from its layer's input (``head_internals``): its q and k
    projected, normalised (Qwen3), rotated by position (RoPE), its key/value head shared
    (GQA) and softmaxed under the causal mask, equals Hugging Face's own attention; a
    rotary head's scores from the unrotated q and k do not."""
    trace = tiny.generate(PROMPT, max_new_tokens=5)
    attn, _ = _forward(tiny, _ids(trace))
    L, H = attn.shape[:2]
    group = H // (tiny.info.num_key_value_heads or H)
    for layer in range(L):
        for head in range(H):
            hi = head_internals(tiny, trace, "decoder", layer=layer, head=head)
            np.testing.assert_allclose(hi.weights, attn[layer, head], atol=TOL)
            assert hi.kv_head == head // group
            assert hi.rotated == (SCHEMES[tiny.info.model_type] == "rotary")
            if hi.rotated:
                unturned = hi.q_projected @ hi.k_projected.T * hi.scaling
                if tiny.info.model_type != "qwen3":  # no q norm: position 0 turns by 0
                    np.testing.assert_allclose(hi.q[0], hi.q_projected[0], atol=1e-6)
                assert not np.allclose(unturned, hi.scaled_scores, atol=TOL)


def test_gradient_attribution_is_hugging_face_s_own_gradient(tiny):
    """Gradient x input over the prompt and the decoder inputs (``attribute``) equals the
    gradient of Hugging Face's own log-probability of each chosen token, taken through one
    forward pass over the whole sequence's input embeddings; integrated gradients keeps
    its completeness error under the bound it refines to."""
    trace = tiny.generate(PROMPT, max_new_tokens=3)
    src, tgt = torch.from_numpy(trace.src_ids), torch.from_numpy(trace.tgt_ids)
    a = attribute(tiny.model, src, tgt, "input_x_gradient")
    S = len(src)
    embed = tiny.model.hf.get_input_embeddings()
    for t in range(len(tgt) - 1):
        ids = torch.cat([src, tgt[: t + 1]])[None]  # (1, S + t + 1)
        x = embed(ids).detach().requires_grad_(True)
        logp = tiny.model.hf(inputs_embeds=x).logits[0, -1].float().log_softmax(-1)
        (grad,) = torch.autograd.grad(logp[int(tgt[t + 1])], x)
        share = (grad * x)[0].sum(-1).detach().numpy()  # (S + t + 1,)
        np.testing.assert_allclose(a.source[t], share[:S], atol=1e-4)
        np.testing.assert_allclose(a.prefix[t, : t + 1], share[S:], atol=1e-4)
    if tiny.info.model_type == "llama":  # the same path for all: one family's integral
        ig = attribute(tiny.model, src, tgt, "integrated_gradients")
        assert ((ig.completeness_error <= MAX_COMPLETENESS_ERROR)
                | (ig.n_steps >= MAX_STEPS)).all()
