"""The one padding helper (``decoding.pad_rows``) and the one batch-translation function
(``backends.translate.translate_batch``): each against its reference, the padding against
``torch.nn.utils.rnn.pad_sequence`` and each batched translation against the same text
translated alone by ``generate``."""

from __future__ import annotations

import random

import pytest
import torch
from shipped import model_of
from torch.nn.utils.rnn import pad_sequence

from model import InputError
from model.backends.translate import translate_batch
from model.decoding import pad_rows


@pytest.fixture(scope="module")
def en_zh():
    return model_of("en-zh")


@pytest.mark.parametrize("seed", range(5))
def test_pad_rows_equals_pad_sequence(seed):
    rng = random.Random(seed)
    rows = [[rng.randrange(1, 500) for _ in range(rng.randint(1, 20))]
            for _ in range(rng.randint(1, 9))]
    pad_id = rng.randrange(0, 4)
    want = pad_sequence([torch.tensor(r) for r in rows], batch_first=True,
                        padding_value=pad_id)
    got = pad_rows(rows, pad_id)
    assert got.dtype == torch.long and torch.equal(got, want)


def test_pad_rows_needs_a_row():
    with pytest.raises(ValueError, match="at least one row"):
        pad_rows([], 0)


@pytest.mark.parametrize("num_beams", [1, 4])
def test_each_batched_translation_equals_the_text_translated_alone(en_zh, num_beams):
    texts = list(en_zh.info.examples)  # the grammar's example sentences
    off = tuple(("cross", 0, h) for h in range(en_zh.config.nhead))  # a whole layer's
    outputs = {}
    for heads in ((), off):
        calls = []
        outputs[heads] = translate_batch(
            en_zh, [*texts, ""], num_beams=num_beams, heads_off=heads, batch_size=4,
            progress=lambda done, total: calls.append((done, total)))  # noqa: B023
        alone = [en_zh.generate(t, num_beams=num_beams, heads_off=heads).output_text
                 for t in texts]
        assert outputs[heads] == [*alone, ""]  # the empty text is refused: ""
        assert calls[-1] == (len(texts) + 1, len(texts) + 1)
        assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert outputs[()] != outputs[off]  # the heads were switched off


@pytest.mark.parametrize("num_beams", [1, 3])
def test_the_settings_apply_as_in_generate(everyday, num_beams):
    """``no_repeat_ngram_size`` and a length limit decode as ``generate`` with them does."""
    from model import GenerationSettings

    texts = list(everyday.info.examples)[:6]
    settings = GenerationSettings(num_beams=num_beams, no_repeat_ngram_size=1,
                                  max_new_tokens=12)
    alone = [everyday.generate(t, settings).output_text for t in texts]
    assert translate_batch(everyday, texts, settings, batch_size=4) == alone
    assert alone != [everyday.generate(t, num_beams=num_beams).output_text for t in texts]


def test_bad_arguments_are_refused(en_zh):
    with pytest.raises(InputError, match="sampling"):
        translate_batch(en_zh, ["we eat rice ."], do_sample=True)
    with pytest.raises(InputError, match="no task"):
        translate_batch(en_zh, ["we eat rice ."], task="summarize")
    with pytest.raises(InputError, match="num_beams"):
        translate_batch(en_zh, ["we eat rice ."], num_beams=9)
    with pytest.raises(InputError, match="outside"):
        translate_batch(en_zh, ["we eat rice ."], heads_off=[("cross", 9, 0)])
    with pytest.raises(ValueError, match="batch_size"):
        translate_batch(en_zh, ["we eat rice ."], batch_size=0)
