"""The page's language and a presenter's keys in Chromium. A Chinese page declares
``lang="zh-Hans"`` (an English one ``en``). The keys are pressed for real (Playwright's
keyboard), with nothing focused: → / PageDown, ← / PageUp, Home / End and Space step
through the decoding in Explore mode; in the lesson → reveals the answer and then opens
the next chapter, ← goes back. A focused text box keeps its own keys (``ui.document``)."""

from __future__ import annotations

from urllib.parse import quote

from shipped import model_of

from model.backends.load import default_model, pretrained_root
from ui.document import KEYMAP
from ui.lesson import chapters

SENTENCE = "i go to school tomorrow ."
ANSWER = "Just show me"


def _blur(app) -> None:
    """Nothing focused: what a presenter's page has after a click on empty space."""
    app.page.evaluate("document.activeElement && document.activeElement.blur()")


def _press(app, key: str, step: int, total: int) -> dict:
    """Press ``key`` with nothing focused and wait for step ``step`` of ``total``."""
    _blur(app)
    return app.act(lambda: app.page.keyboard.press(key), step=f"Step {step} of {total}",
                   slider=step)


def test_the_keys_step_through_the_decoding(app):
    translator = model_of(default_model(
        [p.name for p in pretrained_root().iterdir()]))
    total = len(translator.generate(SENTENCE).steps)  # the page's first sentence may share
    app.enter_sentence(SENTENCE, stepOf=f"Step 1 of {total}")  # "Step 1 of": wait for ours
    assert total >= 4, total
    assert {"ArrowRight", "PageDown", "ArrowLeft", "PageUp", "Home", "End", " "} <= set(
        KEYMAP["explore"])
    _press(app, "ArrowRight", 2, total)
    _press(app, "PageDown", 3, total)
    _press(app, "ArrowLeft", 2, total)
    _press(app, "PageUp", 1, total)
    snap = _press(app, "End", total, total)
    assert snap["slider"]["value"] == total
    _press(app, "Home", 1, total)
    sidebar = app.page.locator("[data-testid='stSidebar']").inner_text()
    assert "PageDown" in sidebar  # the page says which keys work

    # Space plays: the page steps on by itself, and Space again pauses it.
    _blur(app)
    app.page.keyboard.press(" ")
    app.page.get_by_role("button", name="Pause", exact=False).wait_for(timeout=30_000)
    for _ in range(60):  # at least one step played (a tick a second)
        if app.snapshot()["slider"]["value"] > 1:
            break
        app.page.wait_for_timeout(500)
    _blur(app)
    app.page.keyboard.press(" ")
    app.page.get_by_role("button", name="Play", exact=False).wait_for(timeout=30_000)
    assert app.snapshot()["slider"]["value"] > 1  # it played at least one step

    # A focused text box keeps its keys: Home and End move the caret, not the step.
    step = app.snapshot()["slider"]["value"]
    box = app.page.get_by_role("textbox", name="English sentence")
    box.focus()
    box.press("Home")
    box.press("End")
    box.press("ArrowLeft")
    app.page.wait_for_timeout(1500)  # time for a (wrong) rerun to start and end
    snap = app.snapshot()
    assert snap["slider"]["value"] == step and snap["sentence"] == SENTENCE


def test_the_keys_reveal_the_answer_then_turn_the_chapter(app):
    titles = [c["title"]["en"] for c in chapters()]
    app.page.goto(f"{app.url}/?lesson=1")
    app.page.get_by_role("heading", name=titles[0]).wait_for(timeout=60_000)
    app.wait_ready(charts=0)  # the question first: nothing drawn before the answer
    show = app.page.get_by_role("button", name=ANSWER, exact=True)
    assert show.count() == 1
    _blur(app)
    snap = app.act(lambda: app.page.keyboard.press("ArrowRight"), minCharts=1)
    assert show.count() == 0 and snap["charts"]  # the answer and its figure
    _blur(app)
    app.page.keyboard.press("PageDown")
    app.page.get_by_role("heading", name=titles[1]).wait_for(timeout=60_000)
    _blur(app)
    app.page.keyboard.press("PageUp")
    app.page.get_by_role("heading", name=titles[0]).wait_for(timeout=60_000)
    assert "PageDown" in app.page.locator("[data-testid='stSidebar']").inner_text()


def test_the_page_declares_its_language(app):
    assert app.page.evaluate("document.documentElement.lang") == "en"
    app.page.goto(f"{app.url}/?lang={quote('简体中文')}")
    app.wait_ready(minCharts=1)
    app.page.wait_for_function("document.documentElement.lang === 'zh-Hans'", timeout=30_000)


def test_play_slows_down_when_the_browser_asks_for_reduced_motion(app):
    """``prefers-reduced-motion: reduce`` (the system's setting, emulated): Play's speed
    becomes the slowest, both when the setting changes on an open page and on a new one."""
    from playwright.sync_api import expect

    from ui.stepper import DEFAULT_SPEED, SLOWEST_SPEED

    speed = app.combobox("Speed")
    assert speed.input_value() == DEFAULT_SPEED != SLOWEST_SPEED
    app.page.emulate_media(reduced_motion="reduce")
    expect(speed).to_have_value(SLOWEST_SPEED, timeout=30_000)
    app.open()  # a new session in a browser that asks for it from the start
    expect(app.combobox("Speed")).to_have_value(SLOWEST_SPEED, timeout=30_000)
