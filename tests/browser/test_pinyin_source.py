"""Pinyin under a Chinese source, as Chromium draws it (issue 46): with the zh -> en model
(``zh-en-everyday``) and the pinyin switch on (its default in English), every Chinese source
token on the encoder self-attention and cross-attention charts' x axes has a second line,
its pinyin as ``ui.pinyin.readings`` reads it in the sentence, under the token; the header
shows the source sentence's words with pinyin over them (``<ruby>``). Nothing here depends
on the model's translation.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from shipped import trace_of

from ui.pinyin import readings

MODEL = "zh-en-everyday"
SENTENCE = "我们为什么工作？"
HAN = re.compile(r"[\u4e00-\u9fff]")

TICKS_JS = """
(title) => {
  const charts = [...document.querySelectorAll("[data-testid='stPlotlyChart']")];
  const c = charts.find((c) => ((c.querySelector('.gtitle') || {}).textContent || '')
                                 .startsWith(title));
  const box = (e) => { const r = e.getBoundingClientRect();
                       return {text: e.textContent, top: r.top, bottom: r.bottom}; };
  const ticks = c ? [...c.querySelectorAll('.subplot.xy .xtick text')].map((t) => {
    const lines = [...t.querySelectorAll('tspan.line')];
    return lines.length ? lines.map(box) : [box(t)];
  }) : null;
  const ruby = [...document.querySelectorAll('.gloss-source rt')].map((e) => e.textContent);
  return {ticks, ruby};
}
"""


@pytest.mark.parametrize("view, title", [("encoder", "Encoder self-attention, layer 1, head 1"),
                                         ("cross", "Cross-attention, layer 1, head 1")])
def test_pinyin_is_drawn_under_each_chinese_source_token(app, view, title):
    query = {"model": MODEL, "sentence": SENTENCE, "view": view, "layer": "1", "head": "1"}
    app.page.goto(f"{app.url}/?{urlencode(query)}")
    app.wait_ready(minCharts=2)
    got = app.page.evaluate(TICKS_JS, title)
    assert got["ticks"], f"no chart titled {title!r}"
    src_labels = list(trace_of(MODEL, SENTENCE, max_new_tokens=1).src_labels)
    expected = dict(zip(src_labels, readings(src_labels), strict=True))  # one per character
    tokens = [lines[0]["text"] for lines in got["ticks"]]
    chinese = [i for i, tok in enumerate(tokens) if HAN.search(tok)]
    assert chinese and "我" in tokens, tokens
    for i in chinese:
        token, *rest = got["ticks"][i]
        assert [line["text"] for line in rest] == [expected[tokens[i]]], (tokens[i], rest)
        assert rest[0]["top"] > (token["top"] + token["bottom"]) / 2, (tokens[i], rest)  # under
    assert "wǒ men" in got["ruby"], got["ruby"]  # the header: the sentence's words, read
