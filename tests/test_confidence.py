"""When the model is guessing (``model.analysis.confidence``): uncertain steps, loops and
runaway length, checked against definitions computed another way; and the app's header and
step panel saying so, on the real default model."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from model.analysis.confidence import (
    LOOP_MIN_REPEATS,
    assess,
    is_runaway,
    looks_looped,
    loops_against,
    repeats,
)

CHARS = "我们的朋友来看好。"


def _count_non_overlapping(text: str, s: str) -> int:
    count = i = 0
    while (j := text.find(s, i)) >= 0:
        count, i = count + 1, j + len(s)
    return count


@given(st.text(alphabet=CHARS, max_size=40))
def test_repeats_is_the_most_frequent_string_by_brute_force(text):
    s, c = repeats(text)
    best = max((_count_non_overlapping(text, text[i : i + n]) for n in range(2, 7)
                for i in range(len(text) - n + 1) if text[i : i + n].strip("。")), default=0)
    assert c == best
    if c:
        assert 2 <= len(s) <= 6 and _count_non_overlapping(text, s) == c


def test_the_issue_loop_is_a_loop_and_a_normal_sentence_is_not():
    looped = "我们的朋友来和朋友来看我们的朋友们的朋友好朋友"
    assert loops_against(looped, "我们的朋友来看我们。")
    assert looks_looped(looped) is not None
    normal = "我们的朋友明天来看我们。"
    assert not loops_against(normal, normal) and looks_looped(normal) is None


@given(st.text(alphabet=CHARS, max_size=30))
def test_a_hypothesis_equal_to_its_reference_never_loops_against_it(text):
    assert not loops_against(text, text)


@given(st.text(alphabet="我们好", min_size=2, max_size=3),
       st.integers(LOOP_MIN_REPEATS, 9))
def test_a_string_written_again_and_again_looks_looped(unit, times):
    assert looks_looped(unit * times) is not None


def test_runaway_length():
    assert is_runaway(10, 5, finished=False)  # the length limit, whatever the length
    assert not is_runaway(10, 5, finished=True)
    assert is_runaway(60, 5, finished=True)


@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), max_size=20),
       st.floats(0.05, 0.95))
def test_uncertain_steps_are_the_unforced_ones_below_the_threshold(steps, threshold):
    probs, forced = [p for p, _ in steps], [f for _, f in steps]
    c = assess(probs, forced, "我们", 3, finished=True, threshold=threshold)
    assert c.uncertain == tuple(k for k, (p, f) in enumerate(steps, 1) if not f and p < threshold)
    assert c.probs == tuple(probs[k - 1] for k in c.uncertain)
    assert c.guessing == (bool(c.uncertain) or c.loop is not None or c.runaway)
    least = c.least_probable(3)
    assert list(least) == sorted(least) and set(least) <= set(c.uncertain)
    assert len(least) == min(3, len(c.uncertain))
    if least:  # none left out is less probable than one kept
        kept = max(probs[k - 1] for k in least)
        assert all(probs[k - 1] >= kept for k in set(c.uncertain) - set(least))


def test_assess_refuses_mismatched_lengths():
    with pytest.raises(ValueError, match="steps"):
        assess([0.5], [False, True], "", 1, finished=True)


def test_the_header_marks_uncertain_steps_and_a_button_opens_one():
    """On the real model: the header's verdict agrees with ``judge`` of the model's own
    decoding, sentence by sentence (Confident exactly when no signal fires); an uncertain
    step's button opens that step, whose panel explains the low probability."""
    from apptest_helpers import enter, run_app
    from shipped import model_of

    from ui.confidence import MAX_BUTTONS
    from ui.verdict import trace_verdict

    at = run_app()
    translator = model_of(at.selectbox(key="model").value)
    seen = set()
    for sentence in ("do you like cats ?", "The ornithologist photographed a rare kingfisher.",
                     "Gleeb the florp zarked 4821 quibbles.",
                     "Quantum chromodynamics describes gluons."):
        enter(at, sentence)
        v = trace_verdict(translator, translator.generate(sentence))
        c = v.confidence
        buttons = [b for b in at.button if str(b.key).startswith("open_step_")]
        confident = any("Confident" in x.value for x in at.caption)
        assert confident == (not v.flagged)
        if not v.flagged:
            seen.add("confident")
            assert not buttons
            continue
        if c.uncertain:
            seen.add("uncertain")
            worst = c.least_probable(MAX_BUTTONS)
            assert [b.key for b in buttons] == [f"open_step_{k}" for k in worst]
            k = worst[0]
            at.button(key=f"open_step_{k}").click().run()
            assert not at.exception and at.session_state["step"] == k
            assert any("Low confidence" in m.value for m in at.markdown)
    assert "uncertain" in seen
