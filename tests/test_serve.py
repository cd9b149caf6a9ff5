"""serve.py: the app started by Streamlit's ``st.App`` with a warm-up at server start."""

from __future__ import annotations

import json
import logging
import shutil

import serve
from model.translator import DEFAULT_MODELS, pretrained_root
from ui.cache import load_model, model_key


def test_warm_up_loads_the_default_model_into_the_apps_own_cache():
    translator = serve.warm_up()
    assert translator is not None
    folder = pretrained_root() / DEFAULT_MODELS[0]
    # The app's first run asks the same cache for the same folder: no second load.
    assert load_model(*model_key(folder)) is translator


def test_warm_up_logs_a_broken_default_model_and_returns(tmp_path, monkeypatch, caplog):
    broken = tmp_path / "broken"
    shutil.copytree(pretrained_root() / "en-zh-small", broken)
    config = json.loads((broken / "config.json").read_text())
    (broken / "config.json").write_text(json.dumps(config | {"d_model": "wide"}))
    monkeypatch.setenv("ATTENTION_PRETRAINED_DIR", str(tmp_path))
    with caplog.at_level(logging.ERROR, logger="attention_app"):
        assert serve.warm_up() is None
    assert "warm-up failed" in caplog.text and "config.json" in caplog.text


def test_warm_up_without_any_model_returns_none(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_PRETRAINED_DIR", str(tmp_path))
    assert serve.warm_up() is None
