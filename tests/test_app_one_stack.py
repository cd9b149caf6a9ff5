"""A decoder-only model in the app (AppTest, issue 55): it opens like any model, offers its
own views (one sequence, reading the prompt, the prompt, the written tokens, positions,
masks) and draws each without an error; what the views show equals the model's own trace
(a tiny random prefix LM over the default model's vocabularies, ``testkit.one_stack_tiny``:
only equalities are asserted)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from apptest_helpers import array_of, chart_title, charts, enter, messages, run_app, z_array

from model import head_internals, load_pretrained
from model.analysis.aggregate import attention_rollout
from model.backends.load import PRETRAINED_DIR
from model.core import rope
from model.decoding import one_map
from testkit.hf_tiny import to_hf_cache
from testkit.hf_tiny_causal import build_tiny_causal
from testkit.one_stack_tiny import tiny_prefix_lm
from ui.i18n import ONE_STACK_VIEWS, STRINGS, VIEW_KEYS
from ui.lesson.one_stack import DECODER_ONLY
from ui.state import VIEW_KEY
from ui.views.one_stack import gqa_line

SENTENCE = "We are learning."


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """A models folder holding the tiny decoder-only model (first, so the app opens it) and
    the small shipped encoder-decoder, for Side by side."""
    root = tmp_path_factory.mktemp("models")
    tiny_prefix_lm(root / "a-tiny-prefix-lm")
    shutil.copytree(PRETRAINED_DIR / "en-zh-small", root / "en-zh-small")
    return root


@pytest.fixture()
def app(root, monkeypatch):
    monkeypatch.setenv("ATTENTION_PRETRAINED_DIR", str(root))
    return enter(run_app(), SENTENCE)


def test_every_view_of_one_stack_draws(app):
    every_view_draws(app)


def test_every_view_of_the_shipped_decoder_only_model_draws(monkeypatch):
    """The decoder-only model trained here (``pretrained/decoder-only-en-zh``), picked in
    the sidebar as a person picks it, on an English sentence of its kind."""
    monkeypatch.delenv("ATTENTION_PRETRAINED_DIR", raising=False)
    every_view_draws(enter(run_app(DECODER_ONLY), "Why do we work?"))


def every_view_draws(app) -> None:
    """The picker offers the one-stack views, the lesson is not offered, and each view draws
    at least one chart without an exception."""
    names = [STRINGS[VIEW_KEYS[view]]["en"] for view in ONE_STACK_VIEWS]
    assert app.button_group(key=VIEW_KEY).options == names
    assert STRINGS["one_stack_note"]["en"] in messages(app)
    assert not app.get("radio") or all(r.key != "mode" for r in app.get("radio"))  # no lesson
    for view in ONE_STACK_VIEWS:
        app.button_group(key=VIEW_KEY).set_value(view).run()
        assert not app.exception, (view, app.exception)
        assert charts(app), view


def test_the_heads_view_ranks_the_one_stacks_heads_by_their_sink(app, root):
    trace = load_pretrained(root / "a-tiny-prefix-lm").generate(SENTENCE)
    app.button_group(key=VIEW_KEY).set_value("heads").run()
    app.selectbox(key="heads_stat").select("first").run()
    assert not app.exception, app.exception
    assert app.selectbox(key="heads_kind").options == [STRINGS["tab_sequence"]["en"]]
    grid = next(c for c in charts(app) if "first token" in chart_title(c))
    np.testing.assert_allclose(z_array(grid["data"][0]),
                               trace.decoder_attentions[..., 0].mean(-1), atol=1e-5)


def test_the_sequence_view_is_the_trace_s_one_map(app, root):
    trace = load_pretrained(root / "a-tiny-prefix-lm").generate(SENTENCE)
    T = len(trace.steps)
    app.slider(key="step").set_value(T).run()
    app.button_group(key=VIEW_KEY).set_value("sequence").run()
    app.selectbox(key="sequence_head").select(1).run()  # layer 1, head 2
    fig = next(c for c in charts(app) if chart_title(c).startswith("One sequence"))
    z = z_array(fig["data"][0])
    N = len(trace.src_tokens) + T
    np.testing.assert_allclose(z, one_map(trace)[0, 1, :N, :N], atol=1e-6)
    blocked = fig["data"][1]  # the look-ahead mask's cells, drawn over the map
    cells = set(zip(blocked["y"], blocked["x"], strict=True))
    assert cells == {(i, j) for i in range(N) for j in range(i + 1, N)}


def test_the_step_figure_splits_a_row_at_the_prompt(app, root):
    trace = load_pretrained(root / "a-tiny-prefix-lm").generate(SENTENCE)
    k = min(3, len(trace.steps))
    app.slider(key="step").set_value(k).run()
    fig = next(c for c in charts(app) if chart_title(c).startswith(f"Step {k}, layer"))
    rows = z_array(next(d for d in fig["data"] if d["type"] == "heatmap"))
    S = len(trace.src_tokens)
    whole = one_map(trace)[0, :, S + k - 1, : S + k]  # (H, S + k): the step's row, layer 1
    np.testing.assert_allclose(rows[:, :S], whole[:, :S], atol=1e-6)  # over the prompt
    np.testing.assert_allclose(rows[:, S + 1:], whole[:, S:], atol=1e-6)  # over what it wrote


def test_side_by_side_puts_it_beside_an_encoder_decoder(app):
    app.button_group(key=VIEW_KEY).set_value("compare").run()
    app.selectbox(key="compare_model").select("en-zh-small").run()
    assert not app.exception, app.exception
    titles = [chart_title(c) for c in charts(app)]
    a = [x for x in titles if x.startswith(STRINGS["tab_to_prompt"]["en"])]
    b = [x for x in titles if x.startswith(STRINGS["tab_cross"]["en"])]
    assert len(a) == 1 and len(b) == 1, titles  # A: one stack, B: two


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_every_view_draws_for_a_hugging_face_causal_model(family, tmp_path, monkeypatch):
    """A tiny random GPT-2 (learned positions) and Llama (RoPE, grouped-query attention)
    open in the app from a models folder; each decoder-only view draws or says plainly what
    it cannot show yet, never an exception."""
    build_tiny_causal(family, tmp_path / f"tiny-{family}")
    monkeypatch.setenv("ATTENTION_PRETRAINED_DIR", str(tmp_path))
    app = enter(run_app(), "the cat sat on the mat")
    for view in ONE_STACK_VIEWS:
        app.button_group(key=VIEW_KEY).set_value(view).run()
        assert not app.exception, (family, view, app.exception)
    app.button_group(key=VIEW_KEY).set_value("sequence").run()
    assert any(chart_title(c).startswith(STRINGS["tab_sequence"]["en"]) for c in charts(app))
    config = load_pretrained(tmp_path / f"tiny-{family}").config
    gqa = [c.value for c in app.caption if c.value.startswith("Grouped-query attention")]
    if config.num_key_value_heads < config.nhead:  # Llama: 4 query heads share 2
        assert gqa == [gqa_line(config.nhead, config.num_key_value_heads)]
        assert "heads 1–2 → key/value head 1, heads 3–4 → key/value head 2" in gqa[0]
    else:
        assert gqa == []
    app.button_group(key=VIEW_KEY).set_value("attribution").run()  # value zeroing by hooks
    vz = STRINGS["attr_vz_title"]["en"].split("{")[0]
    assert any(chart_title(c).startswith(vz) for c in charts(app)), family


def test_a_rotary_model_s_positions_are_its_rope_curves(tmp_path, monkeypatch):
    """Llama's Positions view draws RoPE's score against distance and the pairs'
    wavelengths from the model's own base and d_k (``model.core.rope``, itself tested
    against Hugging Face's rotary embedding)."""
    folder = build_tiny_causal("llama", tmp_path / "tiny-llama")
    tiny = load_pretrained(folder)
    base, c = tiny.info.rope_base, tiny.config
    assert base == tiny.model.hf.config.rope_parameters["rope_theta"]
    monkeypatch.setenv("ATTENTION_PRETRAINED_DIR", str(tmp_path))
    app = enter(run_app(), "the cat sat on the mat")
    app.button_group(key=VIEW_KEY).set_value("positional").run()
    assert not app.exception, app.exception
    figs = {chart_title(f).split(":")[0]: f for f in charts(app)}
    score = next(f for k, f in figs.items() if k.startswith("RoPE alone"))
    wave = next(f for k, f in figs.items() if k.startswith("Each pair"))
    d = array_of(score["data"][0]["x"])
    np.testing.assert_allclose(array_of(score["data"][0]["y"]),
                               rope.score_by_distance(c.head_dim, base, d), atol=1e-9)
    np.testing.assert_allclose(array_of(wave["data"][0]["y"]),
                               2 * np.pi / rope.inverse_frequencies(c.head_dim, base),
                               rtol=1e-9)
    gpt2 = load_pretrained(build_tiny_causal("gpt2", tmp_path / "other" / "tiny-gpt2"))
    assert gpt2.info.rope_base is None  # learned positions: no rotation


def test_a_cached_causal_model_opens_by_hub_name_in_present_mode(tmp_path, monkeypatch):
    """A causal model in the Hugging Face cache layout is listed by its hub name, opens from
    the picker, and draws its step figure and One sequence in Present mode too."""
    to_hf_cache(build_tiny_causal("qwen3", tmp_path / "qwen3"), tmp_path / "hub",
                "tiny-org/tiny-qwen3")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    app = run_app()
    app.selectbox(key="model").select("tiny-org/tiny-qwen3").run()
    assert not app.exception and not app.error, app.exception
    app = enter(app, "the cat sat on the mat")
    app.toggle(key="present").set_value(True).run()
    for view in ("sequence", "to_prompt"):
        app.button_group(key=VIEW_KEY).set_value(view).run()
        assert not app.exception, (view, app.exception)
    titles = [chart_title(c) for c in charts(app)]
    assert any(x.startswith(STRINGS["tab_to_prompt"]["en"]) for x in titles), titles


def test_an_instruct_model_offers_its_chat_template_as_a_switch(tmp_path, monkeypatch):
    """A tokenizer with a chat template gets the sidebar's switch; on, the prompt the views
    show is the template's (its special tokens around the text); a link keeps it."""
    build_tiny_causal("qwen2", tmp_path / "tiny-qwen2")
    monkeypatch.setenv("ATTENTION_PRETRAINED_DIR", str(tmp_path))
    app = enter(run_app(), "the cat sat on the mat")
    assert not app.toggle(key="chat").value
    app.button_group(key=VIEW_KEY).set_value("prompt").run()
    app.selectbox(key="prompt_head").select(0).run()  # one head's map: (S, S)
    plain = next(c for c in charts(app) if chart_title(c).startswith("The prompt"))
    app.toggle(key="chat").set_value(True).run()
    assert not app.exception, app.exception
    framed = next(c for c in charts(app) if chart_title(c).startswith("The prompt"))
    model = load_pretrained(tmp_path / "tiny-qwen2")
    S = {chat: len(model.source("the cat sat on the mat", chat=chat).ids) for chat in (False, True)}
    assert S[True] > S[False]  # the template's tokens around the text
    assert z_array(plain["data"][0]).shape == (S[False], S[False])
    assert z_array(framed["data"][0]).shape == (S[True], S[True])
    assert app.query_params["chat"] in ("True", ["True"])


def test_a_model_without_a_template_has_no_chat_switch(tmp_path, monkeypatch):
    build_tiny_causal("gpt2", tmp_path / "tiny-gpt2")
    monkeypatch.setenv("ATTENTION_PRETRAINED_DIR", str(tmp_path))
    app = run_app()
    assert not [w for w in app.toggle if w.key == "chat"]


def test_inside_one_head_of_a_rotary_model_shows_q_and_k_turned(tmp_path, monkeypatch):
    """Llama's Inside one head draws its Q and K as projected, then as RoPE turns them
    (what its scores use): the numbers of ``head_internals`` (itself tested against
    Hugging Face's attention in tests/test_hf_causal.py)."""
    folder = build_tiny_causal("llama", tmp_path / "tiny-llama")
    monkeypatch.setenv("ATTENTION_PRETRAINED_DIR", str(tmp_path))
    app = enter(run_app(), "the cat sat on the mat")
    app.button_group(key=VIEW_KEY).set_value("inside").run()
    assert not app.exception, app.exception
    tiny = load_pretrained(folder)
    hi = head_internals(tiny, tiny.generate("the cat sat on the mat"), "decoder", layer=0,
                        head=0)
    qs = [z_array(c["data"][0]) for c in charts(app) if chart_title(c).startswith("Q (")]
    assert len(qs) == 2  # as projected, then turned
    n = qs[0].shape[0]
    np.testing.assert_allclose(qs[0], hi.q_projected[:n], atol=1e-5)
    np.testing.assert_allclose(qs[1], hi.q[:n], atol=1e-5)
    assert not np.allclose(qs[0][1:], qs[1][1:], atol=1e-3)  # positions 1.. are turned
    assert any("key/value head 1" in c.value for c in app.caption)


def test_the_heads_view_rolls_attention_out_over_the_one_sequence(app, root):
    """Rollout (Abnar & Zuidema 2020) over the whole sequence to the last layer, as
    ``aggregate.attention_rollout`` of the trace's one map gives it (itself tested against
    the paper's recurrence in tests/test_aggregate.py)."""
    trace = load_pretrained(root / "a-tiny-prefix-lm").generate(SENTENCE)
    T = len(trace.steps)
    app.slider(key="step").set_value(T).run()
    app.button_group(key=VIEW_KEY).set_value("heads").run()
    assert not app.exception, app.exception
    fig = next(c for c in charts(app)
               if chart_title(c).startswith("One sequence: attention rollout"))
    N = len(trace.src_tokens) + T
    want = np.clip(attention_rollout(one_map(trace))[-1], 0.0, 1.0)[:N, :N]
    np.testing.assert_allclose(z_array(fig["data"][0]), want, atol=1e-5)
