"""Compute once (AppTest, the real app and model): a sentence is tokenised once per run,
and a step click in the Inside-one-head and Heads views runs no model pass (everything
those views show that does not depend on the step is cached per model, trace and choice).

Forward passes are counted with PyTorch's global module forward hook, which sees every
``nn.Module`` call in the process (ours and Hugging Face's alike)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from apptest_helpers import run_app
from shipped import model_of
from torch.nn.modules.module import register_module_forward_hook

from model.backends.ours import OurSource


@contextmanager
def forward_calls() -> Iterator[list[str]]:
    """The class names of the modules called while the block runs, in order."""
    calls: list[str] = []
    handle = register_module_forward_hook(lambda module, args, out:
                                          calls.append(type(module).__name__))
    try:
        yield calls
    finally:
        handle.remove()


def test_the_counter_sees_a_model_pass():
    """Not vacuous: a decoding seen through the same hook counts its layers' calls."""
    with forward_calls() as calls:
        model_of("en-zh").generate("i have three cats .")
    assert "Linear" in calls and len(calls) > 10


@pytest.mark.parametrize("view", ["inside", "heads"])
def test_a_step_click_runs_no_model_pass(view):
    at = run_app()
    at.session_state["view"] = view
    at.run()
    if view == "heads":  # the heads-off comparison is on the page too
        at.multiselect(key="heads_off").select("cross:0:1").run()
    else:
        at.selectbox(key="ih_kind").select("cross").run()
    assert not at.exception
    with forward_calls() as calls:
        for button in ("next_step", "next_step", "prev_step", "last_step", "first_step"):
            at.button(key=button).click().run()
            assert not at.exception
    assert calls == [], f"{len(calls)} module calls, the first: {calls[:5]}"


def test_a_new_sentence_is_tokenised_once_per_run(monkeypatch):
    """A sentence typed for the first time is read once in its run (sidebar pieces,
    unknown words, decoding and the views share it), and not again on the next run."""
    at = run_app()
    reads: list[str] = []
    tokenize = OurSource.tokenize

    def counted(self, text: str) -> list[str]:
        reads.append(text)
        return tokenize(self, text)

    monkeypatch.setattr(OurSource, "tokenize", counted)
    at.text_input(key="sentence").input("my teacher reads seven old books at night .").run()
    assert not at.exception and at.markdown  # decoded and drawn
    assert reads == ["my teacher reads seven old books at night ."]
    at.button(key="next_step").click().run()
    assert reads == ["my teacher reads seven old books at night ."]
