"""Every example sentence a shipped model offers (the sidebar's list, and so the lesson's
"longer example") is translated right by that model, as the app first shows it (greedy): a
model whose card lists what each example's translation must contain
(``example_required``, the classroom set's groups) meets every group (in lower case for an
English translation); a grammar model writes its grammar's own translation."""

from __future__ import annotations

import pytest
from shipped import model_of

from model import available_models
from model.tasks import get_task
from model.training.classroom_set import group_met


@pytest.mark.parametrize("name", available_models())
def test_every_example_is_translated_right(name):
    m = model_of(name)
    examples = m.info.examples
    assert examples, name
    required = m.card.get("example_required")
    wrong = []
    english = m.info.target_language == "en"
    for sentence in examples:
        out = m.generate(sentence).output_text
        out = out.lower() if english else out
        if required is not None:
            assert sentence in required, f"{name}: no required terms for {sentence!r}"
            groups = [tuple(g.split("/")) for g in required[sentence].split("|")]
            if not all(group_met(g, out) for g in groups):
                wrong.append((sentence, out, required[sentence]))
        elif out != get_task(m.card["task"]).translate(sentence):
            wrong.append((sentence, out))
    assert not wrong, wrong
