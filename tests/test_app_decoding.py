"""The decoding studio in the app (AppTest, real model): play/pause, first/last, strategy
changes with the beam view, sampling again, a branch, and a reference translation."""

from __future__ import annotations

import json

import numpy as np
import pytest
from apptest_helpers import (
    APP,
    GRAMMAR_MODEL,
    chart_title,
    charts,
    enter,
    heading,
    heatmaps,
    run_app,
    z_array,
)
from shipped import model_of
from streamlit.testing.v1 import AppTest

from model import GenerationSettings


def titles(at) -> list[str]:
    return [chart_title(f) for f in charts(at)]


def test_play_advances_to_the_end_and_stops_pause_keeps_the_step():
    at = run_app()  # why do we work ? -> 9 steps
    assert at.session_state["step"] == 1
    at.button(key="play").click().run()
    assert at.session_state["playing"]
    for _ in range(3):  # each rerun is a Play tick
        at.run()
    assert at.session_state["step"] == 4
    at.button(key="play").click().run()  # pause
    assert not at.session_state["playing"]
    at.run()
    assert at.session_state["step"] == 4
    at.button(key="play").click().run()
    for _ in range(12):
        at.run()
    assert not at.session_state["playing"] and at.session_state["step"] == 9
    assert not at.exception
    at.button(key="first_step").click().run()
    assert at.session_state["step"] == 1
    at.button(key="last_step").click().run()
    assert at.session_state["step"] == 9


def test_step_rows_follow_the_step():
    at = run_app()
    at.slider(key="step").set_value(4).run()
    (rows,) = heatmaps(at, "Step 4, layer 1")  # the step overview: [cross | gap | self]
    z = z_array(rows)
    assert z.shape == (8, 6 + 1 + 4)  # every head x the 6 source tokens, then 4 decoder ones
    np.testing.assert_allclose(z[:, :6].sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(z[:, 7:].sum(-1), 1.0, atol=1e-5)


def test_beam_search_shows_the_beams_and_any_hypothesis_maps():
    at = run_app()
    at.radio(key="strategy").set_value("beam").run()
    assert not at.exception
    assert "Candidates at each step (best on top)" in titles(at)
    (table,) = at.dataframe
    assert table.value["hypothesis"][0] == "我们为什么工作？" and len(table.value) == 4
    at.session_state["step"] = 9
    at.selectbox(key="hypothesis").select(2).run()
    assert not at.exception
    second = table.value["hypothesis"][2]
    assert any(second[-2] in json.dumps(f, ensure_ascii=False) for f in charts(at))
    tree = next(f for f in charts(at) if chart_title(f).startswith("Candidates"))
    assert any(t.get("name") == "selected hypothesis" for t in tree["data"])


def test_sampling_controls_and_sample_again():
    at = run_app()
    at.radio(key="strategy").set_value("sampling").run()
    at.slider(key="temperature").set_value(2.0).run()
    first = heading(at)
    seen = {first}
    for _ in range(4):
        at.button(key="sample_again").click().run()
        assert not at.exception
        seen.add(heading(at))
    assert at.session_state["seed"] == 4
    assert len(seen) > 1  # hot sampling differs between seeds
    at.number_input(key="seed").set_value(0).run()
    assert heading(at) == first  # the same seed gives the same output


def test_branch_at_step_two_continues_from_another_token():
    at = run_app(GRAMMAR_MODEL)  # its output for the default sentence starts with 我
    at.slider(key="step").set_value(2).run()
    assert not [w for w in at.selectbox if w.key == "branch_pick"]  # closed: not built
    at.session_state["branch_open"] = True  # the controls are built while it is open
    at.run()
    pick = at.selectbox(key="branch_pick")
    alternative = pick.options[0]
    pick.select(alternative).run()
    at.button(key="branch_go").click().run()
    assert not at.exception
    assert any(m.value.startswith("**Branch:") for m in at.markdown)
    branch_probs = [f for f in charts(at) if chart_title(f).startswith("Probability of each")]
    assert len(branch_probs) == 2  # original and branch side by side
    ticks = branch_probs[1]["layout"]["xaxis"]["ticktext"]
    assert ticks[:2] == ["我", alternative]  # kept token, then the forced one
    at.button(key="branch_close").click().run()
    assert not any(m.value.startswith("**Branch:") for m in at.markdown)


def test_typed_branch_token_outside_the_vocabulary_gets_a_message():
    at = run_app(GRAMMAR_MODEL)  # "Z" is not a Chinese character it can produce
    at.session_state["branch_open"] = True
    at.run()
    at.text_input(key="branch_typed").input("Z").run()
    at.button(key="branch_go").click().run()
    assert not at.exception
    assert any("cannot produce" in w.value for w in at.warning)


def test_reference_translation_marks_the_first_difference():
    at = run_app(GRAMMAR_MODEL)  # the grammar fixes its output: 我们为什么工作？
    at.text_input(key="reference").input("我们为什么学习？").run()
    assert not at.exception
    (note,) = [i.value for i in at.info if "First difference" in i.value]
    assert "position 6" in note and "`学`" in note and "`工`" in note
    bars = [f for f in charts(at) if chart_title(f).startswith("Probability of each")]
    assert len(bars) == 2
    enter(at, "why do we work ?")
    at.text_input(key="reference").input("我们为什么工作？").run()
    assert any("agrees with the reference" in s.value for s in at.success)
    at.text_input(key="reference").input("hello").run()
    assert any("cannot produce" in w.value for w in at.warning) and not at.exception


def _control(at: AppTest, name: str):
    """The sidebar widget of decoding setting ``name``."""
    return (at.number_input if name == "no_repeat_ngram_size" else at.slider)(key=name)


@pytest.mark.parametrize(("name", "value", "said", "linked", "too_big"), [
    ("no_repeat_ngram_size", 2, "no repeated 2-grams", 3, "40"),
    ("repetition_penalty", 1.5, "repetition penalty 1.50", 1.25, "9"),
])
def test_a_repetition_control_from_the_sidebar_and_from_a_link(name, value, said, linked,
                                                               too_big):
    """The controls against repetition are off by default; set in the sidebar, a control
    decodes as ``generate(name=value)`` does, says so under the translation and goes into
    the link; a link carrying it opens with it set, and a value outside the widget's range
    is reported and not applied."""
    sentence = "i know the man who reads books ."
    at = run_app()
    enter(at, sentence)
    default = _control(at, name).value
    assert default == getattr(GenerationSettings(), name)
    _control(at, name).set_value(value).run()
    assert not at.exception
    expected = model_of(at.selectbox(key="model").value).generate(
        sentence, **{name: value}).output_text
    assert heading(at) == expected
    assert any(said in c.value for c in at.caption)
    assert at.query_params[name] in (str(value), [str(value)])

    opened = AppTest.from_file(APP, default_timeout=120)
    opened.query_params.update({name: str(linked), "strategy": "beam"})
    opened.run()
    assert not opened.exception and _control(opened, name).value == linked
    bad = AppTest.from_file(APP, default_timeout=120)
    bad.query_params[name] = too_big
    bad.run()
    assert _control(bad, name).value == default
    assert any(name in w.value for w in bad.warning)
