"""The take-home page in Chromium, opened from file:// with every network request blocked: it
asks for nothing but itself, logs no console error, steps with the keys, and draws the numbers
of the trace (heatmap cells, top-k bars) under the verdict line; a sentence's markup stays
text; the app's header downloads the page of the sentence on screen, with its verdict."""

from __future__ import annotations

import html
import time

import numpy as np
import pytest
from shipped import model_of

from model import load_pretrained
from model.analysis.verdict import judge_trace
from model.decoding.document import read_document
from testkit.one_stack_tiny import tiny_prefix_lm
from ui.i18n import STRINGS
from ui.player import take_home

MODEL = "en-zh-everyday"
SENTENCE = "Why do we work?"


@pytest.fixture(scope="module")
def model():
    return model_of(MODEL)


def _wait(page, expression: str, timeout_s: float = 10.0) -> None:
    """Poll ``expression`` until it is true (``page.wait_for_function`` evaluates a string,
    which the page's Content-Security-Policy refuses; ``evaluate`` goes through DevTools)."""
    end = time.monotonic() + timeout_s
    while not page.evaluate(expression):
        if time.monotonic() > end:
            raise AssertionError(f"not true after {timeout_s} s: {expression}")
        time.sleep(0.02)


def _open(browser, path):
    """The page at ``path`` in a fresh context whose every request but the file is aborted;
    (page, requests seen, console errors and page errors)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    requests, errors = [], []
    url = path.as_uri()

    def route(r):
        requests.append(r.request.url)
        return r.continue_() if r.request.url == url else r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    _wait(page, "!!window.tracePlayer && document.body.dataset.step === '1'")
    return page, requests, errors


def _heatmap(page, rows: int | None = None, cols: int | None = None) -> np.ndarray:
    """The heatmap's numbers, its first ``rows`` x ``cols``; the rest (steps not yet taken)
    must be blank."""
    z = page.evaluate("document.getElementById('heatmap').data[0].z")
    z = np.array([[np.nan if v is None else v for v in row] for row in z], dtype=float)
    rows, cols = rows or z.shape[0], cols or z.shape[1]
    assert np.isnan(z[rows:]).all() and np.isnan(z[:, cols:]).all()
    return z[:rows, :cols]


def _step(page, key: str, want: int) -> None:
    page.keyboard.press(key)
    _wait(page, f"document.body.dataset.step === '{want}'")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_steps_offline_and_draws_the_traces_numbers(browser, model, tmp_path, lang):
    trace = model.generate(SENTENCE)
    path = tmp_path / "page.html"
    path.write_text(take_home.page_html(trace, MODEL, lang), encoding="utf-8")
    page, requests, errors = _open(browser, path)
    assert requests == [path.as_uri()] and not errors
    assert page.evaluate("document.documentElement.lang") == {"en": "en", "zh": "zh-Hans"}[lang]
    assert page.locator("#next").inner_text() == STRINGS["home_next"][lang]
    lines = take_home.verdict_lines(take_home.page_verdict(trace, None), lang)
    assert page.locator("#verdict p").all_inner_texts() == lines  # the verdict line, shown
    T = len(trace.steps)
    # step 1, Cross-attention, layer 1, mean of heads: one row
    np.testing.assert_allclose(_heatmap(page, 1), trace.cross_attentions[0, :, :1].mean(0),
                               atol=1e-4)
    _step(page, "ArrowRight", 2)
    np.testing.assert_allclose(_heatmap(page, 2), trace.cross_attentions[0, :, :2].mean(0),
                               atol=1e-4)
    shown = page.locator("#map-labels .map-y:not([hidden])").all_inner_texts()
    assert len(shown) == 2 and shown[1].startswith(trace.tgt_labels[1])  # rows up to the step
    bars = page.evaluate("[...document.querySelectorAll('#topk .topk-row:not([hidden])')]"
                         ".map((r) => 100 * Number(r.dataset.prob))")
    np.testing.assert_allclose(bars, 100 * trace.steps[1].top_probs, atol=1e-3)
    _step(page, "End", T)
    _step(page, "PageUp", T - 1)
    _step(page, "Home", 1)
    _step(page, "PageDown", 2)
    page.select_option("#view", "decoder")
    page.select_option("#layer", "1")
    page.select_option("#head", "3")
    want = np.where(np.tril(np.ones((2, 2))) > 0, trace.decoder_attentions[1, 3, :2, :2], np.nan)
    np.testing.assert_allclose(_heatmap(page, 2, 2), want, atol=1e-4)  # the look-ahead mask
    page.select_option("#view", "encoder")
    np.testing.assert_allclose(_heatmap(page), trace.encoder_attentions[1, 3], atol=1e-4)
    page.locator("#player").click(position={"x": 5, "y": 5})  # focus off the pickers
    _step(page, "ArrowRight", 3)
    assert not errors


def test_play_runs_to_the_end_and_markup_stays_text(browser, model, tmp_path):
    sentence = "I like <b>cats</b> </script><script>alert(1)</script>"
    trace = model.generate(sentence)
    path = tmp_path / "markup.html"
    path.write_text(take_home.page_html(trace, MODEL, "en"), encoding="utf-8")
    page, requests, errors = _open(browser, path)
    assert page.locator("#source b").count() == 0 and page.locator("#verdict b").count() == 0
    assert sentence in page.locator("#source").inner_text()
    page.select_option("#speed", "10")
    page.locator("#play").click()
    _wait(page, f"document.body.dataset.step === '{len(trace.steps)}'")
    assert requests == [path.as_uri()] and not errors


def test_the_headers_button_downloads_the_page_of_the_sentence_on_screen(app, model):
    app.enter_sentence(SENTENCE)
    with app.page.expect_download() as info:
        app.page.get_by_role("button", name=STRINGS["home_download"]["en"]).click()
    page_text = open(info.value.path(), encoding="utf-8").read()
    start = page_text.index('id="trace-document">') + len('id="trace-document">')
    doc = read_document(page_text[start:page_text.index("</script>", start)])
    trace = model.generate(SENTENCE)
    assert doc.raw["src_text"] == SENTENCE and doc.raw["output_text"] == trace.output_text
    judged = judge_trace(trace, model.info.train_counts, model.info.source_language)
    assert all(html.escape(line) in page_text for line in take_home.verdict_lines(judged, "en"))
    np.testing.assert_allclose(doc.cross_attentions, trace.cross_attentions, atol=1e-4)


def test_a_decoder_only_page_cuts_its_one_map_at_the_prompt(browser, tmp_path):
    """A decoder-only model's document holds one (L, H, N, N) map: the page shows its
    written tokens reading the prompt, the prompt, and the written tokens, each the block
    of that map (a tiny random prefix LM: only equalities are asserted)."""
    tiny = load_pretrained(tiny_prefix_lm(tmp_path / "tiny-prefix-lm"))
    trace = tiny.generate(SENTENCE, max_new_tokens=6)
    one, S = trace.decoder_attentions, len(trace.src_tokens)
    path = tmp_path / "one-stack.html"
    path.write_text(take_home.page_html(trace, "tiny-prefix-lm", "en"), encoding="utf-8")
    page, requests, errors = _open(browser, path)
    assert requests == [path.as_uri()] and not errors
    views = page.locator("#view option").all_inner_texts()
    assert STRINGS["tab_to_prompt"]["en"] in views and STRINGS["tab_cross"]["en"] not in views
    np.testing.assert_allclose(_heatmap(page, 1), one[0, :, S:S + 1, :S].mean(0), atol=1e-4)
    _step(page, "ArrowRight", 2)
    page.select_option("#view", "decoder")
    page.select_option("#head", "1")
    want = np.where(np.tril(np.ones((2, 2))) > 0, one[0, 1, S:S + 2, S:S + 2], np.nan)
    np.testing.assert_allclose(_heatmap(page, 2, 2), want, atol=1e-4)
    page.select_option("#view", "encoder")
    np.testing.assert_allclose(_heatmap(page), one[0, 1, :S, :S], atol=1e-4)
    assert not errors
