"""Downloads in a real browser: the Cross-attention view's CSV and NPZ files load back equal
to the model's own attention (rows up to the current step), with their tokens; the HTML
file is a standalone page of the figure; the heatmap's numbers are there as a table."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from model import load_pretrained
from ui.i18n import STRINGS

MODEL = "en-zh"
SENTENCE = "why do we work ?"


def _download(app, label: str) -> bytes:
    panel = app.panel()
    with app.page.expect_download() as info:
        panel.get_by_role("button", name=label).click()
    return open(info.value.path(), "rb").read()


def test_csv_and_npz_downloads_load_back_equal_to_the_arrays(app):
    app.select("Model", MODEL, stepOf="Step 1 of ")
    for k in (2, 3):
        app.click_button("Next ▶", step=f"Step {k} of 9")
    app.open_view("Cross-attention", panelCharts=1)
    trace = load_pretrained(MODEL).generate(SENTENCE)
    shown = trace.cross_attentions[:, :, :3]  # (L, H, 3, S): rows up to step 3
    panel = app.panel()
    app.act(panel.get_by_text(STRINGS["download_expander"]["en"]).click, panelCharts=1)
    panel.locator("[data-testid='stDataFrame']").wait_for()  # the numbers as a table

    with np.load(io.BytesIO(_download(app, "Weights as NPZ")), allow_pickle=False) as f:
        np.testing.assert_allclose(f["weights"], shown, atol=1e-6)
        assert list(f["query_tokens"]) == list(trace.decoder_input_tokens[:3])
        assert list(f["key_tokens"]) == list(trace.src_labels)

    table = pd.read_csv(io.BytesIO(_download(app, "Weights as CSV")), keep_default_na=False)
    back = np.zeros(shown.shape, np.float32)
    back[table.layer, table["head"], table.query_position, table.key_position] = table.weight
    np.testing.assert_allclose(back, shown, atol=1e-6)
    assert len(table) == shown.size

    page = _download(app, "Figure as HTML").decode("utf-8")
    assert "Cross-attention, layer 0, all heads" in page and "<script src=" not in page
