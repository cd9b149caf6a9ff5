"""Every backend offers one interface (``model.backends.protocol.Backend``), and nothing
more: the app and the analysis never ask which backend they hold. Both backends are one
class, ``translator.Translator``, composed of the parts each supplies (``parts``); no class
of ``model/backends`` subclasses another of its classes to override its methods."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from shipped import model_of

from model import Translator, load_pretrained
from model.backends import parts
from model.backends.protocol import Backend
from testkit.hf_tiny import FAMILIES, tiny_folder
from testkit.hf_tiny_causal import FAMILIES as CAUSAL_FAMILIES
from testkit.hf_tiny_causal import tiny_causal_folder

BACKENDS = Path(__file__).resolve().parent.parent / "model" / "backends"


def public(obj) -> set[str]:
    return {name for name in dir(obj) if not name.startswith("_")}


#: The interface's members: what its Protocol class declares (attributes and methods).
MEMBERS = public(Backend) | set(Backend.__annotations__)


def protocol_methods(protocol) -> dict[str, inspect.Signature]:
    return {name: inspect.signature(getattr(protocol, name)) for name in public(protocol)
            if inspect.isfunction(getattr(protocol, name))}


def conforms(obj, protocol) -> None:
    """``obj`` has every member of ``protocol`` (``isinstance`` against the
    ``runtime_checkable`` Protocol), and each method takes the protocol's arguments: its
    positional parameters start with the protocol's, in order, and it has each of the
    protocol's keyword-only ones."""
    assert isinstance(obj, protocol), (type(obj).__name__, protocol.__name__)
    for name, wanted in protocol_methods(protocol).items():
        given = inspect.signature(getattr(obj, name)).parameters
        positional = [p.name for p in wanted.parameters.values()
                      if p.kind is p.POSITIONAL_OR_KEYWORD and p.name != "self"]
        keywords = [p.name for p in wanted.parameters.values() if p.kind is p.KEYWORD_ONLY]
        assert list(given)[: len(positional)] == positional, (type(obj).__name__, name)
        assert set(keywords) <= set(given), (type(obj).__name__, name)


def parts_of(model: Translator) -> dict:
    """Each part of ``model`` against the Protocol it implements."""
    return {parts.EncoderDecoder: model.model, parts.SourceSide: model._source_side,
            parts.TargetSide: model.target, parts.Internals: model._internals}


def test_the_interface_is_small():
    assert len(MEMBERS) <= 16, sorted(MEMBERS)  # 16th: encoder_sublayers (the lesson's)


@pytest.mark.parametrize("name", ["en-zh", "en-zh-everyday"])
def test_our_models_offer_exactly_the_interface(name):
    model = model_of(name)
    assert type(model) is Translator
    conforms(model, Backend)
    assert public(model) == MEMBERS, public(model) ^ MEMBERS
    assert model.info.backend == "ours"
    for protocol, part in parts_of(model).items():
        conforms(part, protocol)


@pytest.mark.parametrize("family", FAMILIES)
def test_hugging_face_models_offer_exactly_the_interface(family, tmp_path_factory):
    model = load_pretrained(tiny_folder(family, tmp_path_factory))
    assert type(model) is Translator  # the same class, with Hugging Face's parts
    conforms(model, Backend)
    assert public(model) == MEMBERS, public(model) ^ MEMBERS
    assert model.info.backend == "huggingface"
    assert (model.relative_position_bias(3, 3) is None) == (
        model.info.positional_scheme != "relative")
    for protocol, part in parts_of(model).items():
        conforms(part, protocol)


@pytest.mark.parametrize("family", CAUSAL_FAMILIES)
def test_hugging_face_causal_models_offer_exactly_the_interface(family, tmp_path_factory):
    model = load_pretrained(tiny_causal_folder(family, tmp_path_factory))
    assert type(model) is Translator  # the same class, with the causal parts
    conforms(model, Backend)
    assert public(model) == MEMBERS, public(model) ^ MEMBERS
    assert (model.info.backend, model.info.architecture) == ("huggingface", "decoder-only")
    for protocol, part in parts_of(model).items():
        conforms(part, protocol)


def backend_classes() -> dict[str, tuple[str, list[str]]]:
    """Class name -> (its module in model/backends, the names of its bases)."""
    out = {}
    for path in sorted(BACKENDS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = [b.id if isinstance(b, ast.Name) else ast.unparse(b).rsplit(".")[-1]
                         for b in node.bases]
                out[node.name] = (path.stem, bases)
    return out


def test_backends_are_composed_not_subclassed():
    """No class of model/backends subclasses another class of model/backends, so no
    backend overrides another's methods, private or public. Only a ``Protocol`` extends
    another (``protocol.Backend`` offers ``parts.InternalsViews``); the parts satisfy the
    Protocols by their shape, never by inheriting them."""
    classes = backend_classes()
    inherited = {name: [b for b in bases if b in classes]
                 for name, (_, bases) in classes.items() if "Protocol" not in bases}
    assert not any(inherited.values()), {k: v for k, v in inherited.items() if v}
    assert {"Translator", "OurSource", "OurTarget", "OurInternals", "HFSource", "HFTarget",
            "HFInternals", "HFSeq2Seq"} <= set(classes)


def test_hugging_face_modules_import_nothing_of_ours():
    """The Hugging Face backend's modules use only the shared modules (``translator``,
    ``parts``, ``records``, ``heads``), never ``ours``."""
    for path in BACKENDS.glob("hf*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                assert node.module != "ours" and not (
                    node.module is None and any(a.name == "ours" for a in node.names)), path
