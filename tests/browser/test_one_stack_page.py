"""The decoder-only model trained here (``pretrained/decoder-only-en-zh``) in a real browser:
opened by a link, stepped with Next, every one-stack view drawn with no error and its
Chinese characters drawn, and the step caption counting the continuation's tokens.

Nothing is asserted about what the model writes; the prompt's tokens come from the model's
own tokenizer.
"""

from __future__ import annotations

from urllib.parse import urlencode

from model import load_pretrained
from model.backends.load import pretrained_root
from testkit.harness import CJK
from tests.browser.conftest import open_link
from ui.i18n import ONE_STACK_VIEWS, STRINGS, VIEW_KEYS
from ui.lesson.one_stack import DECODER_ONLY

SENTENCE = "Why do we work?"


def test_the_decoder_only_model_steps_and_draws_every_view(browser, app_server):
    trace = load_pretrained(pretrained_root() / DECODER_ONLY).generate(SENTENCE)
    total = len(trace.steps)
    query = {"model": DECODER_ONLY, "sentence": SENTENCE}
    app = open_link(browser, app_server, f"{app_server.url}/?{urlencode(query)}",
                    step=f"Step 1 of {total}")
    try:
        assert app.views() == [STRINGS[VIEW_KEYS[v]]["en"] for v in ONE_STACK_VIEWS]
        snap = app.click_button("Next ▶", step=f"Step 2 of {total}", slider=2)
        assert snap["slider"]["value"] == 2
        seen = [name for name, _ in app.each_view()]
        assert seen == app.views()
        app.open_view(STRINGS[VIEW_KEYS["sequence"]]["en"])
        x, _ = app.ticks(STRINGS["tab_sequence"]["en"])
        written = [label for label in x if CJK.search(label)]  # the Chinese written so far
        assert written, x
        app.assert_cjk_renders(written, "one sequence")
    finally:
        app.page.context.close()
