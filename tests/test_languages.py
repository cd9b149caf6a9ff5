"""What a model reads and writes (``ModelInfo.source_language`` / ``target_language``): ours
from the card's ``languages``, an OPUS-MT model from its name or its cache path."""

from __future__ import annotations

import json
import shutil

import pytest
from shipped import model_of

from model import CheckpointError, load_pretrained
from model.backends.hf import pair_of
from model.backends.load import PRETRAINED_DIR


@pytest.mark.parametrize(("name", "pair"), [
    ("Helsinki-NLP/opus-mt-zh-en", ("zh", "en")),
    ("/cache/hub/models--Helsinki-NLP--opus-mt-en-zh/snapshots/0123abcd", ("en", "zh")),
    ("opus-mt-en-de/", ("en", "de")),
    ("t5-small", ("", "")),
    ("0123abcd", ("", "")),
])
def test_pair_of_reads_names_and_cache_paths(name, pair):
    assert pair_of(name) == pair


def test_our_models_say_their_languages():
    assert (model_of("en-zh-everyday").info.source_language,
            model_of("en-zh-everyday").info.target_language) == ("en", "zh")
    zh_en = model_of("zh-en-everyday").info
    assert (zh_en.source_language, zh_en.target_language) == ("zh", "en")


def test_a_card_naming_other_languages_is_refused(tmp_path):
    folder = tmp_path / "m"
    shutil.copytree(PRETRAINED_DIR / "en-zh-small", folder)
    card = json.loads((folder / "card.json").read_text(encoding="utf-8"))
    card["languages"] = ["de", "en"]
    (folder / "card.json").write_text(json.dumps(card), encoding="utf-8")
    with pytest.raises(CheckpointError, match="languages"):
        load_pretrained(folder)
