"""Shared fixtures: a small random model for invariants, and the shipped checkpoints (loaded
once per session, ``shipped.py``)."""

from __future__ import annotations

import functools
import os
import tempfile

import pytest
import torch
from hypothesis import settings
from shipped import model_of

from model.core.config import TransformerConfig
from model.core.transformer import Transformer

# No per-example time limit: a deadline is a timed assertion, and on 2 busy cores the same
# example takes 3x as long (the properties are what the tests check, not the speed).
settings.register_profile("no-deadline", deadline=None)
settings.load_profile("no-deadline")

# Torch on one thread, as the app runs it (ui/cache.py): the whole suite got it already
# when a test module imported ui.cache, but a run of a few modules did not, and on 2 busy
# cores two OpenMP threads made a small decoding 10 to 50 times slower.
torch.set_num_threads(1)


@pytest.hookimpl(tryfirst=True)  # before xdist names each item by its group
def pytest_collection_modifyitems(config, items):
    """Every test under tests/browser/ is a ``browser`` test (the tiers: pyproject.toml),
    and each browser module is one ``xdist_group``: with ``-n 2 --dist loadgroup`` (README)
    a module's tests run in a row on one worker, against that worker's app server and
    Chromium (and the module's own fixtures, set up once), while the other worker runs
    another module or the rest. The browser tests mostly wait for pages to draw, so two
    workers run them side by side on 2 cores."""
    for item in items:
        if "browser" in item.path.parts:
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.xdist_group(f"browser-{item.path.stem}"))


def _scan_components_once() -> None:
    """Keep the result of Streamlit's scan for installed v2 components after its first run.

    Every new ``AppTest`` scans the metadata of every installed distribution for v2
    components on its first run (``BidiComponentManager.discover_and_register_components``:
    about 400 packages, 0.3-0.5 s here, ahead of a 0.2 s run of the app), and the suite makes
    hundreds of them. The installed packages do not change during a test session, so the
    first scan's list is returned again (the same list, read only by Streamlit). A Streamlit
    without this module is left as it is."""
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:
        return
    scan = manifest_scanner.scan_component_manifests
    if not hasattr(scan, "cache_info"):
        manifest_scanner.scan_component_manifests = functools.cache(scan)


def pytest_configure(config):
    """Offline, with an empty Hugging Face cache of the tests' own: the machine's cache
    (a developer's downloads) never changes what the app lists or what a test sees. Tests
    that need a cached model put it into a cache folder of their own. AppTest's scan for
    installed components is made once (``_scan_components_once``)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_HUB_CACHE"] = tempfile.mkdtemp(prefix="hf-cache-empty-")
    _scan_components_once()


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
    """The shipped English->Chinese model (shared: ``shipped.model_of``; read it only)."""
    return model_of("en-zh")


@pytest.fixture(scope="session")
def everyday():
    """The shipped everyday model (subword English, the app's default; shared:
    ``shipped.model_of``; read it only)."""
    return model_of("en-zh-everyday")
