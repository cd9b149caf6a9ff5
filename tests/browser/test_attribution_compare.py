"""The Attribution and Side by side views in a real browser, each opened by a link
(``?view=attribution``, ``?compare=...``) in English and in 简体中文: every chart of the
view draws, with no error and no warning, and the Side by side view shows both
translations (the model's own) and each sentence's maps; its minimal-pair button opens the
lesson's pair over a sentence of one's own and says where the two part."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from pair_checks import first_pair, where_they_part
from shipped import model_of

from tests.browser.conftest import open_link
from ui.pairs import minimal_pairs

MODEL = "en-zh-everyday"
ATTRIBUTION = {
    "English": ("Attribution", ["Cross-attention, Layer", "Value zeroing, Layer",
                                "Gradient × input", "Agreement with value zeroing"]),
    "简体中文": ("归因", ["交叉注意力，", "值置零，", "梯度 × 输入", "与值置零的一致程度"]),
}


@pytest.mark.parametrize("lang", list(ATTRIBUTION))
def test_the_attribution_view_opens_from_a_link(browser, app_server, lang):
    tab, titles = ATTRIBUTION[lang]
    query = {"view": "attribution", "model": MODEL, "sentence": "Why do we work?",
             "step": "2", "lang": lang, "pinyin": "false"}
    page = open_link(browser, app_server, f"{app_server.url}/?{urlencode(query)}", tab=tab,
                     titles=titles)
    snap = page.assert_clean()
    assert not [a for a in snap["alerts"] if a["kind"] == "warning"], snap["alerts"]
    page.page.context.close()


@pytest.mark.parametrize("lang, tab, cross", [("English", "Side by side", "Cross-attention, "),
                                               ("简体中文", "并排比较", "交叉注意力，")])
def test_side_by_side_opens_from_a_link_with_both_translations(browser, app_server, lang, tab,
                                                               cross):
    a, b = minimal_pairs("en")[0]  # a pair typed into the boxes, translated right or not
    query = {"view": "compare", "model": MODEL, "sentence": a, "compare": b, "lang": lang,
             "pinyin": "false"}
    page = open_link(browser, app_server, f"{app_server.url}/?{urlencode(query)}", tab=tab,
                     titles=[cross])
    page.assert_clean()
    m = model_of(MODEL)
    panel = page.panel()
    for sentence in (a, b):
        assert panel.get_by_text(m.generate(sentence).output_text, exact=True).count() >= 1
    titles = panel.locator("[data-testid='stPlotlyChart'] .gtitle").all_text_contents()
    assert sum(t.startswith(cross) for t in titles) == 2, titles  # one map per sentence
    page.page.context.close()


def test_the_minimal_pair_button_opens_the_lessons_pair_over_ones_own_sentence(browser,
                                                                               app_server):
    # The case, as a teacher meets it: one's own sentence typed and shown, then
    # "Try a minimal pair": both boxes take the pair, and the view says where they part.
    query = {"view": "compare", "model": MODEL, "sentence": "Why do we work?",
             "pinyin": "false"}
    page = open_link(browser, app_server, f"{app_server.url}/?{urlencode(query)}",
                     tab="Side by side", titles=["Cross-attention, "])
    page.enter_sentence("My mother likes green tea.", tab="Side by side",
                        titles=["Cross-attention, "])
    m = model_of(MODEL)
    a, b = first_pair(m, m.generate)
    button = page.page.get_by_role("button", name="Try a minimal pair")
    page.act(button.click, tab="Side by side", titles=["Cross-attention, "])
    boxes = [page.page.get_by_role("textbox", name=name, exact=True).input_value()
             for name in ("English sentence", "Compare with a second sentence")]
    assert boxes == [a, b]
    ta, tb = m.generate(a), m.generate(b)
    said = re.sub(r"`([^`]*)`", r"\1", where_they_part(ta, tb, "en"))  # as the page reads
    assert page.panel().get_by_text(said, exact=True).count() >= 1
    page.page.context.close()
