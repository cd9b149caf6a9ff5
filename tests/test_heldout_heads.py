"""The Heads view's held-out figures kept in a model's folder (``heldout_heads``): what is
saved reads back equal, a stale or damaged file reads as None (never an error), and the app
opens the Heads view from it with no model pass."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from apptest_helpers import chart_title, charts, run_app

from model import load_pretrained
from model.analysis import heldout_heads
from model.analysis.heldout_heads import HEADS_FILE
from model.backends.load import PRETRAINED_DIR

N = 4  # held-out pairs: enough for every figure, quick to compute
# Held-out pairs come from the grammar's splits, built first (~15 s): the slow tier.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def kept(tmp_path_factory):
    """A copy of the small grammar model with its held-out figures saved, and them."""
    folder = tmp_path_factory.mktemp("models") / "en-zh-small"
    shutil.copytree(PRETRAINED_DIR / "en-zh-small", folder)
    heads = heldout_heads.compute(load_pretrained(folder), N)
    heldout_heads.save(folder, heads)
    return folder, heads


def test_saved_figures_read_back_equal(kept):
    folder, heads = kept
    back = heldout_heads.load(folder, load_pretrained(folder), N)
    assert back is not None and back.n == N
    for kind, s in heads.stats.items():
        assert (back.stats[kind].rows, back.stats[kind].sentences) == (s.rows, s.sentences)
        for name, v in s.values.items():
            np.testing.assert_array_equal(back.stats[kind].values[name], v)
        np.testing.assert_array_equal(back.importance[kind], heads.importance[kind])
    assert back.curve.order == heads.curve.order
    np.testing.assert_array_equal(back.curve.bleu, heads.curve.bleu)
    np.testing.assert_array_equal(back.curve.pruned, heads.curve.pruned)
    assert heads.agreement is not None and set(back.agreement) == set(heads.agreement)
    for method, (rho, top1) in heads.agreement.items():
        np.testing.assert_array_equal(back.agreement[method][0], rho)
        np.testing.assert_array_equal(back.agreement[method][1], top1)


def test_heldout_agreement_pools_each_sentences_agreement_by_its_steps(kept):
    """The kept agreement is the step-weighted mean of each pair's own head_agreement with
    value zeroing (computed again here, sentence by sentence)."""
    import torch

    from model.analysis.agreement import head_agreement
    from model.analysis.value_zeroing import value_zeroing
    from model.core.heldout import sample_pairs

    folder, heads = kept
    translator = load_pretrained(folder)
    rho_sum, top_sum, steps = 0.0, 0.0, 0
    for src, _ in sample_pairs(translator, N):
        tr = translator.generate(src)
        vz = value_zeroing(translator.model, torch.as_tensor(tr.src_ids),
                           torch.as_tensor(tr.tgt_ids[:-1])).normalised()[0]
        rho, top1 = head_agreement(tr.cross_attentions, vz)
        T = tr.cross_attentions.shape[2]
        rho_sum, top_sum, steps = rho_sum + T * np.nan_to_num(rho), top_sum + T * top1, steps + T
    np.testing.assert_allclose(heads.agreement["value_zeroing"][0], rho_sum / steps, atol=1e-6)
    np.testing.assert_allclose(heads.agreement["value_zeroing"][1], top_sum / steps, atol=1e-6)
    assert np.all((heads.agreement["input_x_gradient"][1] >= 0)
                  & (heads.agreement["input_x_gradient"][1] <= 1))


def test_stale_or_damaged_files_read_as_none(kept, tmp_path):
    folder, _ = kept
    other = tmp_path / "copy"
    shutil.copytree(folder, other)
    translator = load_pretrained(other)
    assert heldout_heads.load(other, translator, N + 1) is None  # another sample size
    with np.load(other / HEADS_FILE) as npz:
        arrays = {name: npz[name] for name in npz.files}
    np.savez(other / HEADS_FILE, **{**arrays, "sha256": np.array("0" * 64)})
    assert heldout_heads.load(other, translator, N) is None  # other weights
    np.savez(other / HEADS_FILE, **{**arrays, "importance/cross": np.zeros((9, 9))})
    assert heldout_heads.load(other, translator, N) is None  # another shape
    np.savez(other / HEADS_FILE, **{**arrays, "curve/heads": np.array([[99, 0]] * len(
        arrays["curve/kinds"]))})
    assert heldout_heads.load(other, translator, N) is None  # a head the model lacks
    data = (folder / HEADS_FILE).read_bytes()
    for damaged in (data[: len(data) // 2], b"not a zip", b""):
        (other / HEADS_FILE).write_bytes(damaged)
        assert heldout_heads.load(other, translator, N) is None
    np.savez(other / HEADS_FILE, n=np.array([{"a": 1}], dtype=object))  # pickled objects
    assert heldout_heads.load(other, translator, N) is None


def test_the_heads_view_opens_from_the_kept_figures(kept, monkeypatch):
    """With the figures kept, the Heads view shows the importance at once and the held-out
    statistics when chosen, computing neither (the computing functions fail if called)."""
    import ui.cache
    import ui.views.heads

    folder, heads = kept

    def never(*args, **kwargs):
        raise AssertionError("computed although the folder keeps it")

    monkeypatch.setattr(ui.views.heads, "HELDOUT_SIZE", N)
    monkeypatch.setattr(ui.cache, "head_stats_over", never)
    monkeypatch.setattr(ui.cache.pruning, "importance", never)
    monkeypatch.setattr(ui.cache.pruning, "pruning_curve", never)
    monkeypatch.setenv("ATTENTION_PRETRAINED_DIR", str(folder.parent))
    at = run_app()
    at.session_state["view"] = "heads"
    at.run()
    assert not at.exception, at.exception
    assert not [b for b in at.button if b.key == "importance_go"]  # shown at once
    assert any("importance" in chart_title(c).lower() for c in charts(at))
    at.radio(key="heads_scope").set_value("heldout").run()
    assert not at.exception, at.exception
    assert any(f"{N} held-out sentences" in chart_title(c) for c in charts(at))
