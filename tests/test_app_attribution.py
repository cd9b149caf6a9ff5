"""The Attribution view (ui.views.attribution) in AppTest: it opens from ?view=attribution on every
shipped model and on a tiny Hugging Face model from the hub cache, its maps are the model's
cross-attention, value zeroing and gradient x input, its text's numbers are computed from
them, its grid is each head's agreement, in English and Chinese."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from apptest_helpers import APP, heatmaps, markdown_sources, unescape, z_array
from shipped import model_of
from streamlit.testing.v1 import AppTest

from model import load_pretrained
from model.analysis.agreement import head_agreement
from model.analysis.attribution import MAX_COMPLETENESS_ERROR, attribute
from model.analysis.value_zeroing import value_zeroing
from model.decoding import split_at_prompt
from testkit.hf_tiny import tiny_folder, to_hf_cache
from ui.i18n import STRINGS
from viz.convention import layer_number

CASES = [("en-zh-everyday", "Why do we work?"), ("en-zh", "why do we work ?"),
         ("en-zh-small", "why do we work ?"),
         ("decoder-only-en-zh", "Why do we work?")]  # its prompt where the source is


@pytest.mark.parametrize("name, sentence", CASES)
def test_the_view_draws_attention_and_value_zeroing_of_the_model(name, sentence):
    at = AppTest.from_file(APP, default_timeout=120)
    for param, value in {"view": "attribution", "model": name, "sentence": sentence,
                         "step": "2"}.items():
        at.query_params[param] = value
    at.run()
    assert not at.exception, at.exception
    m = model_of(name)
    trace = split_at_prompt(m.generate(sentence))  # a one stack's: cross = rows on the prompt
    vz = value_zeroing(m.model, torch.as_tensor(trace.src_ids),
                       torch.as_tensor(trace.tgt_ids[:-1]))
    last = trace.cross_attentions.shape[0] - 1
    (att,) = heatmaps(at, f"Cross-attention, Layer {layer_number(last)}, mean")
    np.testing.assert_allclose(z_array(att), trace.cross_attentions[last].mean(0), atol=1e-6)
    at.selectbox(key="attribution_head").select(1).run()  # the picked head, on the same axes
    (one,) = heatmaps(at, f"Cross-attention, Layer {layer_number(last)}, Head 2")  # index 1
    np.testing.assert_allclose(z_array(one), trace.cross_attentions[last, 1], atol=1e-6)
    assert any(c.value.startswith(f"Layer {layer_number(last)}, Head 2 against value zeroing")
               for c in at.caption)
    (shown,) = heatmaps(at, "Value zeroing")
    cross, _ = vz.normalised()
    # float32 sums in another order (the app's one thread, this process's two) move a cosine
    # distance of nearly equal vectors, and so a share, by up to ~1e-4
    np.testing.assert_allclose(z_array(shown), cross[last], atol=1e-3)
    share = round(100 * float(vz.source_share()[last, 1]))
    text = "\n".join(unescape(s) for s in markdown_sources(at))
    assert any(f"{s} % of its mixing came from the sentence" in text  # rounding, as above
               for s in (share - 1, share, share + 1))
    (grid,) = heatmaps(at, "Agreement with value zeroing")
    rho, _ = head_agreement(trace.cross_attentions, cross)
    np.testing.assert_allclose(z_array(grid), rho, atol=2e-2)  # ranks of near-ties may swap
    gxi = attribute(m.model, torch.as_tensor(trace.src_ids), torch.as_tensor(trace.tgt_ids),
                    "input_x_gradient")
    (shown,) = heatmaps(at, "Gradient × input")
    np.testing.assert_allclose(z_array(shown), gxi.normalised()[0], atol=1e-3)


def test_the_view_opens_from_a_link_on_a_hugging_face_model(tmp_path_factory, tmp_path,
                                                            monkeypatch):
    snapshot = to_hf_cache(tiny_folder("marian", tmp_path_factory), tmp_path / "hub",
                           "tiny-org/opus-mt-tiny")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    at = AppTest.from_file(APP, default_timeout=120)
    sentence = "My mother is a doctor."
    for param, value in {"view": "attribution", "model": "tiny-org/opus-mt-tiny",
                         "sentence": sentence, "step": "2"}.items():
        at.query_params[param] = value
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    m = load_pretrained(snapshot)
    trace = m.generate(sentence)
    src, tgt = torch.as_tensor(trace.src_ids), torch.as_tensor(trace.tgt_ids)
    last = trace.cross_attentions.shape[0] - 1
    (att,) = heatmaps(at, f"Cross-attention, Layer {layer_number(last)}, mean")
    np.testing.assert_allclose(z_array(att), trace.cross_attentions[last].mean(0), atol=1e-6)
    (shown,) = heatmaps(at, "Value zeroing")
    np.testing.assert_allclose(z_array(shown), value_zeroing(m.model, src, tgt[:-1])
                               .normalised()[0][last], atol=1e-3)
    (shown,) = heatmaps(at, "Gradient × input")
    np.testing.assert_allclose(z_array(shown), attribute(m.model, src, tgt, "input_x_gradient")
                               .normalised()[0], atol=1e-3)
    assert len(heatmaps(at, "Agreement with value zeroing")) == 1
    assert at.button(key="attribution_ig")  # integrated gradients, when asked for


@pytest.mark.slow
def test_integrated_gradients_on_request_with_their_completeness():
    at = AppTest.from_file(APP, default_timeout=600)
    for param, value in {"view": "attribution", "model": "en-zh-small",
                         "sentence": "why do we work ?"}.items():
        at.query_params[param] = value
    at.run()
    assert not heatmaps(at, "Integrated gradients")  # not before it is asked for
    at.button(key="attribution_ig").click().run()
    assert not at.exception, at.exception
    assert len(heatmaps(at, "Integrated gradients")) == 1
    claim = next(c.value for c in at.caption if c.value.startswith("Completeness"))
    error = float(claim.split("within ")[1].split(" %")[0])
    assert error <= 100 * MAX_COMPLETENESS_ERROR


def test_the_view_in_chinese():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["view"], at.query_params["lang"] = "attribution", "zh"
    at.run()
    assert not at.exception, at.exception
    assert any(STRINGS["tab_attribution"]["zh"] not in s and "值置零" in s
               for s in markdown_sources(at))
