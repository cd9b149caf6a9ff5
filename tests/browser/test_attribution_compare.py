"""The Attribution and Side by side views in a real browser, each opened by a link
(``?view=attribution``, ``?compare=...``) in English and in 简体中文: every chart of the
view draws, with no error and no warning, and the Side by side view shows both
translations (the model's own) and each sentence's maps."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from shipped import model_of

from tests.browser.conftest import open_link
from ui.views import side_by_side as S

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
    a, b = S.EXAMPLE
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
