"""Lesson mode in Chromium: every chapter opens through its link (``?lesson=N``) in English
and in Chinese with the default model, and in English with the grammar model ``en-zh``; and
with a sentence the learner types, chapter after chapter through the Next button. Each
chapter shows its title, text and question, draws its figure once the learner asks to see
it (every chart drawn as SVG, no exception), and offers its try-it action; one chapter's
page is saved as a screenshot (docs/lesson.png, shown in docs/teaching.md)."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from ui.lesson import chapters

SHOW = {"English": "Just show me", "简体中文": "直接看答案"}
TRY = {"English": "Try it:", "简体中文": "试一试："}
NEXT = "Next →"
TYPED = "The teacher wrote three new words on the board."


def _check_chapter(app, number: int, lang: str) -> None:
    """On chapter ``number``'s page: its title, the try-it line, nothing drawn before the
    answer, then its figure once "show me" is pressed."""
    chapter = chapters()[number - 1]
    code = "en" if lang == "English" else "zh"
    page = app.page
    page.get_by_role("heading", name=chapter["title"][code]).wait_for(timeout=60_000)
    app.wait_ready(charts=0)  # predict first: nothing drawn before the answer
    assert page.get_by_text(TRY[lang], exact=False).count() >= 1, chapter["id"]
    show = page.get_by_role("button", name=SHOW[lang], exact=True)
    snap = app.act(show.click, minCharts=1)
    assert snap["charts"] and all(c["drawn"] for c in snap["charts"]), chapter["id"]


@pytest.mark.parametrize("lang", ["English", "简体中文"])
def test_every_chapter_opens_by_its_link_and_draws_its_figure(app, lang):
    for number in range(1, len(chapters()) + 1):
        app.page.goto(f"{app.url}/?lesson={number}&lang={quote(lang)}")
        _check_chapter(app, number, lang)
        if number == 7 and lang == "English":
            app.screenshot("lesson-cross-attention")


def test_every_chapter_works_for_the_grammar_model(app):
    for number in range(1, len(chapters()) + 1):
        app.page.goto(f"{app.url}/?model=en-zh&lesson={number}")
        _check_chapter(app, number, "English")
        assert app.combobox("Model").input_value() == "en-zh"


def test_a_typed_sentence_goes_through_every_chapter(app):
    app.page.goto(f"{app.url}/?lesson=1")
    app.page.get_by_role("heading", name=chapters()[0]["title"]["en"]).wait_for(timeout=60_000)
    app.enter_sentence(TYPED)
    for number in range(1, len(chapters()) + 1):
        if number > 1:
            app.click_button(NEXT)
        _check_chapter(app, number, "English")
        assert app.page.get_by_role("textbox", name="English sentence").input_value() == TYPED
