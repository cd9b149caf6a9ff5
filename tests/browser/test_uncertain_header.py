"""The header's "is the model guessing?" in a real browser, with the default everyday model:
the uncertain tokens of a sentence the model finds hard are drawn on a coloured background,
each has a button that opens its step, and that step's panel explains the low probability.

Which steps are uncertain comes from the model's own decoding (``model.analysis.confidence``
on ``generate``), never from a run of the page.
"""

from __future__ import annotations

import pytest
from shipped import model_of

from ui.confidence import MAX_BUTTONS, trace_confidence

MODEL = "en-zh-everyday"
CANDIDATES = ("The ornithologist photographed a rare kingfisher.",
              "Gleeb the florp zarked 4821 quibbles.", "Zorbly quanked the vintrous mollusk.",
              "Quantum chromodynamics describes gluons.")

#: The verdict box's markdown spans drawn on a coloured background (not code spans; the
#: source tokens above the box mark the words left out in the same way): [text, the font
#: weight of its text] each.
MARKED_JS = """
() => Array.from(document.querySelectorAll(
    ".st-key-confidence [data-testid='stMarkdownContainer'] span"))
  .filter((s) => !s.closest('code') && !s.querySelector('span')
          && getComputedStyle(s).backgroundColor !== 'rgba(0, 0, 0, 0)'
          && s.textContent.trim())
  .map((s) => [s.textContent.trim(),
               +getComputedStyle(s.querySelector('strong') || s).fontWeight])
"""


@pytest.fixture(scope="module")
def hard() -> tuple[str, object]:
    """The first candidate sentence the model is unsure about, and its decoding."""
    m = model_of(MODEL)
    for sentence in CANDIDATES:
        trace = m.generate(sentence)
        if trace_confidence(trace).uncertain:
            return sentence, trace
    pytest.fail(f"the model is sure of every one of {CANDIDATES}")


def test_uncertain_tokens_are_marked_and_a_button_opens_their_step(app, hard):
    sentence, trace = hard
    c = trace_confidence(trace)
    total = len(trace.steps)
    app.enter_sentence(sentence, stepOf=f"Step 1 of {total}")
    page = app.page
    assert page.get_by_text("The model is guessing at", exact=False).count() == 1
    marked = page.evaluate(MARKED_JS)
    assert [text for text, _ in marked] == [  # </s> is a code span
        trace.steps[k - 1].label for k in c.uncertain if trace.steps[k - 1].token != "</s>"]
    assert all(weight >= 600 for _, weight in marked), marked  # bold: more than a colour
    k = c.least_probable(MAX_BUTTONS)[-1]
    button = page.locator(f".st-key-open_step_{k} button")
    assert button.inner_text().startswith(f"Step {k}:")
    snap = app.act(button.click, stepOf=f"Step {k} of {total}")
    assert snap["step"] == f"Step {k} of {total}"
    assert page.get_by_text("Low confidence", exact=False).count() >= 1
