"""Hovering a cell of a grid of heads, in Chromium: the label names that cell's head, its
query and key (position, from 1, and token, as the chart's tick labels show them) and a
weight in [0, 1]. The grid's per-cell hover data travels as a numeric array plus one string a cell
(``viz.attention_grid``); this checks that plotly.js reads them back as the builder means."""

from __future__ import annotations

import re

from testkit.harness import chart
from viz.convention import FIRST_NUMBER

VIEW = "Cross-attention"
TITLE = "Cross-attention, layer 1, all heads"
HOVER = re.compile(r"^Head (\d+)Query (\d+): (.+)Key (\d+): (.+)Weight: ([0-9.]+)$")
HEADS = 8  # the default model's (pretrained/en-zh-everyday)


def test_a_grid_cell_hover_names_its_head_query_and_key(app):
    for k in (2, 3):
        app.click_button("Next ▶", stepOf=f"Step {k} of ")
    snap = app.open_view(VIEW, panelCharts=1, titles=[TITLE])
    grid = chart(snap, TITLE)
    queries, keys = grid["firstPanelY"], grid["x"]
    assert len(queries) >= 3 and keys, grid  # 3 decoder inputs so far, rows repeated per panel

    area = app.panel().locator(".nsewdrag").first  # the plot area, where Plotly hovers
    area.scroll_into_view_if_needed()
    box = area.bounding_box()
    heads, labels = set(), 0
    for fx in (0.1, 0.35, 0.6, 0.85):
        for fy in (0.2, 0.45, 0.7, 0.95):  # some points fall in the gaps: no label there
            x, y = box["x"] + box["width"] * fx, box["y"] + box["height"] * fy
            app.page.mouse.move(x - 3, y - 3)
            app.page.mouse.move(x, y, steps=4)
            app.page.wait_for_timeout(150)
            label = app.page.locator(".hoverlayer .hovertext")
            if not label.count():
                continue
            text = label.first.text_content().strip()
            found = HOVER.match(text)
            assert found, text
            head, i, q_tok, j, k_tok, weight = found.groups()
            assert FIRST_NUMBER <= int(head) < HEADS + FIRST_NUMBER  # as the panels number them
            q, k = int(i) - FIRST_NUMBER, int(j) - FIRST_NUMBER  # positions as people count
            assert q >= 0 and k >= 0, text  # from 1: no query or key 0
            assert (q_tok, k_tok) == (queries[q].strip(), keys[k].strip()), text
            assert 0.0 <= float(weight) <= 1.0
            heads.add(int(head))
            labels += 1
    assert labels >= 4 and len(heads) >= 2, (labels, heads)  # cells of different panels
