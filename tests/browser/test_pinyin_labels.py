"""Pinyin under Chinese tokens, as Chromium draws it: on the English and the Chinese page
alike (the switch's default in either language, as README's quick starts say) every Chinese
token on the decoder self-attention chart's x axis has a second line, its pinyin as
``ui.pinyin.readings`` reads it in context, laid out below the token; the header writes the
translation's words with pinyin over them (``<ruby>``). After a link's ``pinyin=false``, in
either language, neither is drawn.
"""

from __future__ import annotations

import re

import pytest
from shipped import model_of

from model.backends.load import default_model, pretrained_root
from ui.i18n import STRINGS
from ui.pinyin import readings

#: The chart read, by its title in each language (``view_head_title``).
HEAD = {lang: STRINGS["view_head_title"][lang].format(
    view=STRINGS["tab_decoder"][lang], layer=1, head=1) for lang in ("en", "zh")}
QUERY = {"en": "", "zh": "&lang=简体中文"}
TONED = re.compile("[āáǎàēéěèīíǐìōóǒòūúǔùǖǘǚǜ]")  # a syllable with a tone mark

LINES_JS = """
(title) => {
  const charts = [...document.querySelectorAll("[data-testid='stPlotlyChart']")];
  const c = charts.find((c) => ((c.querySelector('.gtitle') || {}).textContent || '')
                                 .startsWith(title));
  const box = (e) => { const r = e.getBoundingClientRect();
                       return {text: e.textContent, top: r.top, bottom: r.bottom,
                               left: r.left, right: r.right}; };
  const ticks = c ? [...c.querySelectorAll('.subplot.xy .xtick text')].map((t) => {
    const lines = [...t.querySelectorAll('tspan.line')];
    return lines.length ? lines.map(box) : [box(t)];
  }) : null;
  return {ticks, ruby: [...document.querySelectorAll('rt')].map((e) => e.textContent),
          all: charts.flatMap((c) => [...c.querySelectorAll('.xtick text, .ytick text')])
                     .map((e) => e.textContent)};
}
"""


def _open(app, query: str, lang: str = "en") -> dict:
    """The default sentence at its last step (the stepper clamps a later one) in the
    decoder self-attention view, head 1 of layer 1; what ``LINES_JS`` reads."""
    translator = model_of(default_model(
        [p.name for p in pretrained_root().iterdir()]))
    last = translator.config.max_len
    app.page.goto(f"{app.url}/?view=decoder&layer=1&head=1&step={last}{query}")
    app.wait_ready(minCharts=2)
    return app.page.evaluate(LINES_JS, HEAD[lang])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_pinyin_is_drawn_under_each_chinese_token_in_either_language(app, lang):
    got = _open(app, QUERY[lang], lang)
    assert got["ticks"], "no decoder self-attention chart for head 1"
    tokens = [lines[0]["text"] for lines in got["ticks"]]
    expected = readings(tokens)
    chinese = [i for i, tok in enumerate(tokens) if re.search(r"[\u4e00-\u9fff]", tok)]
    assert chinese, tokens
    for i in chinese:
        token, *rest = got["ticks"][i]
        assert [line["text"] for line in rest] == [expected[i]], (tokens[i], rest)
        middle = (token["top"] + token["bottom"]) / 2  # text boxes include the line gap
        assert rest[0]["top"] > middle and rest[0]["bottom"] > token["bottom"], (
            tokens[i], token, rest[0])  # under it
        overlap = min(token["right"], rest[0]["right"]) - max(token["left"], rest[0]["left"])
        assert overlap > 0, (tokens[i], token, rest[0])  # and in its column
    assert got["ruby"] and all(TONED.search(r) or r.isascii() for r in got["ruby"])


def test_no_pinyin_after_a_link_turns_it_off_in_either_language(app):
    for query in ("&pinyin=false", "&lang=简体中文&pinyin=false"):
        got = _open(app, query)
        assert got["all"], query
        assert not got["ruby"] and not [t for t in got["all"] if TONED.search(t)], query
