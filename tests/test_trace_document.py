"""The trace document (model.decoding.document): a decoding as versioned JSON that round-trips
to its arrays within the precision its schema states, validates against the JSON Schema file
beside it, and is refused, with a message, when it is not one."""

from __future__ import annotations

import json

import jsonschema
import numpy as np
import pytest
from shipped import model_of

from model import GenerationSettings
from model.decoding import document as D
from viz.convention import display_settings

SENTENCE = "why do we work ?"


@pytest.fixture(scope="module")
def small():
    return model_of("en-zh-small")


@pytest.fixture(scope="module")
def schema():
    return json.loads(D.SCHEMA_FILE.read_text(encoding="utf-8"))


def _round_trip(trace, **kw):
    doc = D.to_document(trace, display_settings(), "en-zh-small", **kw)
    return D.read_document(json.loads(D.dumps(doc)))


@pytest.mark.parametrize("decimals, tol", [(4, 5e-5 + 1e-7), (6, 1e-6)])
def test_arrays_come_back_within_the_stated_precision(small, decimals, tol):
    trace = small.generate(SENTENCE)
    back = _round_trip(trace, decimals=decimals)
    for kind in D.KINDS:
        a, b = getattr(trace, f"{kind}_attentions"), getattr(back, f"{kind}_attentions")
        assert a.shape == b.shape and np.abs(a - b).max() <= tol, kind
    assert np.allclose(back.probs, [s.prob for s in trace.steps], atol=1e-6)
    for s, top in zip(trace.steps, back.top_probs, strict=True):
        assert np.allclose(top, s.top_probs, atol=1e-6)
    assert back.src_labels == list(trace.src_labels)
    assert back.tgt_labels == list(trace.tgt_labels)
    assert back.raw["output_text"] == trace.output_text


def test_a_document_written_again_from_its_reading_is_the_same_text(small):
    text = D.dumps(D.to_document(small.generate(SENTENCE), display_settings(), "en-zh-small"))
    assert D.dumps(D.read_document(text).raw) == text


def test_greedy_and_beam_documents_validate_against_the_schema(small, schema):
    greedy = D.to_document(small.generate(SENTENCE), display_settings(), "en-zh-small",
                           tgt_pinyin=[""] * len(small.generate(SENTENCE).tgt_tokens))
    beam_trace = small.generate(SENTENCE, GenerationSettings(num_beams=3))
    beam = D.to_document(beam_trace, display_settings(), "en-zh-small")
    for doc in (greedy, beam):
        jsonschema.Draft202012Validator(schema).validate(json.loads(D.dumps(doc)))
    assert beam["settings"] == {"strategy": "beam", "num_beams": "3"}
    assert [h["text"] for h in beam["beam"]["hypotheses"]] == [
        h.text for h in beam_trace.beam.hypotheses]
    assert len(beam["beam"]["steps"]) == len(beam_trace.beam.steps)
    broken = json.loads(D.dumps(greedy))
    broken["attention"]["cross"]["data"][0] = -1  # a weight below 0
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(broken)


def test_what_is_not_a_document_is_refused_with_its_reason(small):
    good = json.loads(D.dumps(D.to_document(small.generate(SENTENCE), display_settings())))
    cases = [("{", "not JSON"), ("[]", "object"),
             ({**good, "format": "other"}, "format"), ({**good, "version": 1}, "version"),
             ({k: v for k, v in good.items() if k != "steps"}, "steps"),
             ({k: v for k, v in good.items() if k != "display"}, "display")]
    short = json.loads(json.dumps(good))
    short["attention"]["cross"]["data"] = short["attention"]["cross"]["data"][:-1]
    cases.append((short, "cross"))
    fewer = json.loads(json.dumps(good))
    fewer["steps"] = fewer["steps"][:-1]
    cases.append((fewer, "steps"))
    for doc, what in cases:
        with pytest.raises(ValueError, match=what):
            D.read_document(doc)
    with pytest.raises(ValueError, match="tgt_pinyin"):
        D.to_document(small.generate(SENTENCE), display_settings(), tgt_pinyin=["a"])
    with pytest.raises(ValueError, match="decimals"):
        D.to_document(small.generate(SENTENCE), display_settings(), decimals=0)
    with pytest.raises(ValueError, match="display"):
        D.to_document(small.generate(SENTENCE), {"first_number": 1})
