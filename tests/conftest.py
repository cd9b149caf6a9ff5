"""Shared fixtures: a small random model for invariants, and the shipped checkpoint."""

from __future__ import annotations

import os
import tempfile

import pytest
import torch
from hypothesis import settings

from model import load_pretrained
from model.core.config import TransformerConfig
from model.core.transformer import Transformer

# No per-example time limit: a deadline is a timed assertion, and on 2 busy cores the same
# example takes 3x as long (the properties are what the tests check, not the speed).
settings.register_profile("no-deadline", deadline=None)
settings.load_profile("no-deadline")


def pytest_collection_modifyitems(config, items):
    """Every test under tests/browser/ is a ``browser`` test (the tiers: pyproject.toml)."""
    for item in items:
        if "browser" in item.path.parts:
            item.add_marker(pytest.mark.browser)


def pytest_configure(config):
    """Offline, with an empty Hugging Face cache of the tests' own: the machine's cache
    (a developer's downloads) never changes what the app lists or what a test sees. Tests
    that need a cached model put it into a cache folder of their own."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_HUB_CACHE"] = tempfile.mkdtemp(prefix="hf-cache-empty-")


@pytest.fixture(scope="session")
def tiny_model() -> Transformer:
    """An untrained 2+2-layer model in eval mode (invariants hold for any weights)."""
    torch.manual_seed(0)
    config = TransformerConfig(src_vocab_size=20, tgt_vocab_size=24, d_model=32, nhead=4,
                               num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=64,
                               dropout=0.0, max_len=32)
    return Transformer(config).eval()


@pytest.fixture(scope="session")
def en_zh():
    """The shipped English->Chinese model."""
    return load_pretrained("en-zh")


@pytest.fixture(scope="session")
def everyday():
    """The shipped everyday model (subword English, the app's default)."""
    return load_pretrained("en-zh-everyday")
