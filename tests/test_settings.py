"""``GenerationSettings``: the one validator of decoding options, the cache key and the URL
encoding (``model.decoding.settings``); bad values from a link or the API are refused by
name, and a link's settings open the same decoding in the app."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from model import GenerationSettings, InputError
from model.decoding import for_settings
from model.decoding.settings import BOUNDS, STARTS, STRATEGIES

BAD = [
    ("num_beams", 0), ("num_beams", 9), ("num_beams", 2.5), ("num_beams", True),
    ("length_penalty", float("nan")), ("length_penalty", "1"),
    ("early_stopping", 1), ("do_sample", "yes"),
    ("temperature", -0.1), ("temperature", float("inf")),
    ("top_k", -1), ("top_k", 1.5), ("top_p", 0.0), ("top_p", 1.5),
    ("seed", -1), ("seed", 2**63), ("seed", "7"),
    ("max_new_tokens", 0), ("src_lang", 3), ("tgt_lang", ["zh"]),
    ("positional", "sideways"), ("positional_seed", -2),
    ("no_repeat_ngram_size", -1), ("no_repeat_ngram_size", 2.0), ("task", 5),
    ("repetition_penalty", 0.0), ("repetition_penalty", -1.0), ("repetition_penalty", 11.0),
    ("repetition_penalty", float("nan")), ("repetition_penalty", "1.2"),
]


@pytest.mark.parametrize(("name", "value"), BAD)
def test_every_bad_value_is_refused_by_name(name, value):
    with pytest.raises(InputError, match=name):
        GenerationSettings(**{name: value})


def test_beam_search_and_sampling_together_are_refused():
    with pytest.raises(InputError, match="not both"):
        GenerationSettings(num_beams=4, do_sample=True)


def test_equal_settings_are_one_cache_key():
    a = GenerationSettings(num_beams=np.int64(4), length_penalty=1)
    b = GenerationSettings(num_beams=4, length_penalty=1.0)
    assert a == b and hash(a) == hash(b)
    assert type(a.num_beams) is int and type(a.length_penalty) is float
    assert {a: 1}[b] == 1


def test_replace_checks_like_a_new_object():
    with pytest.raises(InputError, match="unknown generation setting"):
        GenerationSettings().replace(beams=4)
    with pytest.raises(InputError, match="top_p"):
        GenerationSettings().replace(do_sample=True, top_p=2.0)


def _within(name: str, digits: int) -> st.SearchStrategy:
    """Values of setting ``name`` within ``BOUNDS``, rounded as a sidebar step gives them."""
    bound = BOUNDS[name]
    if bound.integer:
        return st.integers(bound.low, bound.high)
    return st.floats(bound.low, bound.high).map(lambda x: round(x, digits)).filter(
        bound.holds)


settings_strategy = st.one_of(
    st.builds(GenerationSettings, num_beams=st.integers(2, BOUNDS["num_beams"].high),
              length_penalty=_within("length_penalty", 1)),
    st.builds(GenerationSettings, do_sample=st.just(True),
              temperature=_within("temperature", 2), top_k=_within("top_k", 0),
              top_p=_within("top_p", 2), seed=_within("seed", 0)),
    st.just(GenerationSettings()),
).flatmap(lambda s: st.builds(s.replace, no_repeat_ngram_size=_within("no_repeat_ngram_size", 0),
                              task=st.sampled_from([None, "translation_en_to_de"]),
                              repetition_penalty=_within("repetition_penalty", 2)))


@given(settings_strategy)
def test_the_url_encoding_reads_back_to_equal_settings(settings):
    query = settings.to_query()
    assert all(isinstance(v, str) for v in query.values())
    back, dropped = GenerationSettings.from_query(query)
    assert dropped == () and back == settings and back.strategy in STRATEGIES


def test_a_bad_value_in_a_link_drops_only_itself():
    settings, dropped = GenerationSettings.from_query(
        {"strategy": "sampling", "temperature": "hot", "top_k": "5", "top_p": "7",
         "seed": "3", "num_beams": "4"})  # num_beams is not sampling's: ignored
    assert settings.strategy == "sampling" and (settings.top_k, settings.seed) == (5, 3)
    start = STARTS["sampling"]  # where a link's sampling starts
    assert (settings.temperature, settings.top_p) == (start.temperature, start.top_p)
    assert set(dropped) == {"temperature", "top_p"}


def test_old_links_name_the_strategy_by_its_label():
    aliases = {"Beam search": "beam", "束搜索": "beam", "Sampling": "sampling"}
    for label in ("Beam search", "束搜索"):
        settings, dropped = GenerationSettings.from_query(
            {"strategy": label, "num_beams": "3"}, aliases)
        assert (settings.strategy, settings.num_beams, dropped) == ("beam", 3, ())
    settings, dropped = GenerationSettings.from_query({"strategy": "zigzag"}, aliases)
    assert settings == GenerationSettings() and dropped == ("strategy",)


def test_model_limits_are_checked_by_the_settings(en_zh):
    limit = en_zh.config.max_len - 1
    GenerationSettings(max_new_tokens=limit).check_for(en_zh.config.max_len)
    with pytest.raises(InputError, match="max_new_tokens"):
        GenerationSettings(max_new_tokens=limit + 1).check_for(en_zh.config.max_len)
    with pytest.raises(InputError, match="max_new_tokens"):  # shorter than the prefix
        GenerationSettings(max_new_tokens=2).check_for(en_zh.config.max_len, n_forced=3)
    with pytest.raises(InputError, match="no language"):
        GenerationSettings(tgt_lang="fr").check_for(64, languages=("en", "zh"))
    with pytest.raises(InputError, match="no task"):
        GenerationSettings(task="summarize").check_for(64, tasks=("translation_en_to_de",))
    GenerationSettings(task="summarize").check_for(64, tasks=("summarize",))
    with pytest.raises(InputError, match="no task"):  # ours name no tasks
        en_zh.generate("why do we work ?", task="summarize")


def test_generate_takes_the_settings_whole_or_as_keywords(en_zh):
    whole = en_zh.generate("why do we work ?", GenerationSettings(num_beams=3))
    keywords = en_zh.generate("why do we work ?", num_beams=3)
    assert whole.settings == keywords.settings == GenerationSettings(num_beams=3)
    assert whole.tgt_tokens == keywords.tgt_tokens
    for bad in ({"num_beams": 0}, {"top_p": 0}, {"beams": 2}, {"max_new_tokens": 999}):
        with pytest.raises(InputError):
            en_zh.generate("why do we work ?", **bad)


@given(st.one_of(st.none(), st.integers(1, 500)), st.one_of(st.none(), st.booleans()),
       st.integers(1, 500), st.booleans())
def test_resolved_fills_only_what_is_left_to_the_model(max_new, early, default_max, default_early):
    s = GenerationSettings(max_new_tokens=max_new, early_stopping=early, num_beams=3)
    r = s.resolved(default_max, default_early)
    assert r.max_new_tokens == (default_max if max_new is None else max_new)
    assert r.early_stopping is (default_early if early is None else early)
    assert r.replace(max_new_tokens=max_new, early_stopping=early) == s  # nothing else moves
    assert r.resolved(1, not default_early) == r  # resolving twice changes nothing


def test_the_settings_ask_for_their_processors_in_generate_order():
    assert for_settings(GenerationSettings()) == []
    assert len(for_settings(GenerationSettings(repetition_penalty=1.5))) == 1
    both = for_settings(GenerationSettings(repetition_penalty=1.5, no_repeat_ngram_size=2))
    logp = torch.tensor([[-1.0, -2.0, -3.0]])
    ids = torch.tensor([[0, 1, 0]])  # 0 1 0: "0 1" would repeat; 0 and 1 already seen
    out = both[1](2, both[0](2, logp, ids), ids)
    assert out[0, 1] == float("-inf") and out[0, 0] == -1.5 and out[0, 2] == -3.0


def test_sampling_starts_where_the_models_write_sense_and_vary_most():
    # benchmarks.sampling's rule on made-up figures: a setting below KEEP of greedy's right
    # share in either direction is never chosen, however much it varies; of the rest the
    # one that varies most is.
    from benchmarks.sampling import GRID, KEEP, Figures, choose

    greedy = [Figures(50.0, 1), Figures(60.0, 1)]
    grid = [[Figures(50.0, 1.5), Figures(60.0, 1.5)] for _ in GRID]
    grid[3] = [Figures(50.0 * KEEP, 3.0), Figures(60.0, 3.0)]  # just keeps it: chosen
    grid[5] = [Figures(50.0, 4.0), Figures(60.0 * KEEP - 0.1, 4.0)]  # falls short in one
    assert choose(greedy, grid) == 3
    with pytest.raises(ValueError):
        choose(greedy, [[Figures(0.0, 5.0), Figures(0.0, 5.0)] for _ in GRID])
    # the shipped start is one of the grid's settings, with sampling on
    start = STARTS["sampling"]
    assert start.do_sample and {"temperature": start.temperature, "top_p": start.top_p,
                                "top_k": start.top_k} in GRID
