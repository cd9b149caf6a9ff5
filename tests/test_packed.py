"""model.core.packed: a PackedMap is the dict it was made from, for any keys and values
(hypothesis), and refuses text it cannot read."""

from __future__ import annotations

import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from model.core.packed import SEP, PackedMap, join, lines, once, split, split_set

TEXT = st.text(st.characters(blacklist_characters="\t\n", blacklist_categories=("Cs",)))


@given(st.dictionaries(TEXT, TEXT), st.lists(TEXT))
def test_a_packed_map_is_the_dict_it_was_made_from(d, others):
    packed = PackedMap.from_pairs(d.items())
    assert dict(packed) == d and len(packed) == len(d)
    assert list(packed) == sorted(d)  # iterates in key order
    assert list(packed.items()) == sorted(d.items()) and len(packed.items()) == len(d)
    for key in [*d, *others]:
        assert (key in packed) == (key in d)
        assert packed.get(key) == d.get(key)
    for prefix in [*others, *(key[:n] for key in d for n in range(len(key) + 1))]:
        assert packed.has_prefix(prefix) == any(key.startswith(prefix) for key in d)
    assert PackedMap(lines(d.items()).encode("utf-8")) == packed  # from the file's bytes


@given(st.lists(st.text(st.characters(blacklist_characters=SEP, blacklist_categories=("Cs",)),
                        min_size=1)))
def test_joined_items_come_back(items):
    assert split(join(items)) == tuple(items) and split_set(join(items)) == frozenset(items)


def test_a_packed_map_decodes_its_values():
    packed = PackedMap.from_pairs([("b", join(["北", "京"])), ("a", "")], split)
    assert packed["b"] == ("北", "京") and packed["a"] == ()
    with pytest.raises(KeyError):
        packed["c"]
    assert 3 not in packed and packed.get(3) is None


@pytest.mark.parametrize("text", ["b\t1\na\t2\n", "a\t1\na\t2\n", "a 1\n", "a\t1",
                                  "a 1\nb\t2\n", "a\t1\nb 2\n"])
def test_text_out_of_order_or_without_tabs_is_refused(text):
    with pytest.raises(ValueError):
        PackedMap(text)


@pytest.mark.parametrize("pairs", [[("a", "1"), ("a", "2")], [("a\tb", "1")], [("a", "x\ny")]])
def test_entries_that_cannot_be_packed_are_refused(pairs):
    with pytest.raises(ValueError):
        lines(pairs)
    with pytest.raises(ValueError):
        join(["a" + SEP])


def test_once_computes_once_when_threads_ask_at_the_same_time():
    calls = []

    @once
    def load(name: str) -> list[str]:
        calls.append(name)
        time.sleep(0.05)  # long enough for every thread to arrive while it computes
        return [name]

    start = threading.Barrier(6)
    got = []

    def ask():
        start.wait()
        got.append(load("cedict"))

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert calls == ["cedict"]  # functools.cache alone lets each thread compute it
    assert len(got) == 6 and all(g is got[0] for g in got)  # one result, shared
    assert load("lemmas") == ["lemmas"] and calls == ["cedict", "lemmas"]  # per argument
    load.cache_clear()
    load("cedict")
    assert calls == ["cedict", "lemmas", "cedict"]
