"""Every backend offers one interface (``model.backends.protocol.Backend``), and nothing
more: the app and the analysis never ask which backend they hold."""

from __future__ import annotations

import pytest
from hf_tiny import FAMILIES, tiny_folder

from model import load_pretrained
from model.backends.protocol import Backend


def public(obj) -> set[str]:
    return {name for name in dir(obj) if not name.startswith("_")}


#: The interface's members: what its Protocol class declares (attributes and methods).
MEMBERS = public(Backend) | set(Backend.__annotations__)


def test_the_interface_is_small():
    assert len(MEMBERS) <= 16, sorted(MEMBERS)  # 16th: encoder_sublayers (the lesson's)


@pytest.mark.parametrize("name", ["en-zh", "en-zh-everyday"])
def test_our_models_offer_exactly_the_interface(name):
    model = load_pretrained(name)
    assert isinstance(model, Backend)
    assert public(model) == MEMBERS, public(model) ^ MEMBERS
    assert model.info.backend == "ours"


@pytest.mark.parametrize("family", FAMILIES)
def test_hugging_face_models_offer_exactly_the_interface(family, tmp_path_factory):
    model = load_pretrained(tiny_folder(family, tmp_path_factory))
    assert isinstance(model, Backend)
    assert public(model) == MEMBERS, public(model) ^ MEMBERS
    assert model.info.backend == "huggingface"
    assert (model.relative_position_bias(3, 3) is None) == (
        model.info.positional_scheme != "relative")
