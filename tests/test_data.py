"""The everyday corpus: fixed split rules, no TEST sentence in TRAIN, clear file errors.

The real sources are pip packages installed only for training (requirements-train.txt), so
the rules are tested on rows made here; ``split_corpus`` is what ``model.training.data`` runs
on them.
"""

from __future__ import annotations

import collections
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.tasks import en_zh
from model.training.data import norm_key, read_pairs, split_corpus, typed_form

WORDS = ["I", "you", "like", "tea", "cats", "go", "home", "today", "now"]
CHARS = "我你喜欢茶猫去家今天现在"


@st.composite
def corpus(draw):
    n = draw(st.integers(5, 40))
    tatoeba = [(draw(st.integers(1, 10_000)),
                " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4))) + ".",
                "".join(draw(st.lists(st.sampled_from(CHARS), min_size=1, max_size=4))) + "。")
               for _ in range(n)]
    hsk = [(draw(st.integers(1, 1200)), draw(st.integers(1, 6)),
            draw(st.sampled_from(WORDS)) + "!", draw(st.sampled_from(CHARS)) + "！")
           for _ in range(draw(st.integers(0, 15)))]
    grammar = ([("we go home .", "我们回家。")], [("i like tea .", "我喜欢茶。")],
               [("you like cats .", "你喜欢猫。")])
    return tatoeba, hsk, grammar


@settings(max_examples=60, deadline=None)
@given(corpus())
def test_split_rules_and_no_test_sentence_in_train(rows):
    tatoeba, hsk, grammar = rows
    out = split_corpus(tatoeba, hsk, grammar)
    want_test = [(en, zh) for i, en, zh in tatoeba if i % 10 == 0]
    assert out["test_tatoeba"] == want_test
    for level in range(1, 7):
        assert out[f"test_hsk{level}"] == [(en, zh) for n, lv, en, zh in hsk
                                           if n % 10 == 0 and lv == level]
    assert out["test_grammar"] == grammar[2]
    held = [p for name, pairs in out.items() if name != "train" for p in pairs]
    held_en, held_zh = {norm_key(e) for e, _ in held}, {norm_key(z) for _, z in held}
    for en, zh in out["train"]:
        assert norm_key(en) not in held_en and norm_key(zh) not in held_zh
    # Every other row lands in TRAIN unless it repeats a held-out sentence.
    rest = [(en, zh) for i, en, zh in tatoeba if i % 10 > 1] + [
        (en, zh) for n, _, en, zh in hsk if n % 10 > 1] + grammar[0]
    kept = [p for p in rest if norm_key(p[0]) not in held_en and norm_key(p[1]) not in held_zh]
    assert sorted(out["train"]) == sorted(kept)


def test_norm_key_ignores_case_spaces_and_punctuation():
    assert norm_key("Let's go!") == norm_key("let ' s go .") == "letsgo"
    assert norm_key("我们走吧！") == norm_key("我们 走吧!")


def test_typed_form_is_how_people_type():
    assert typed_form("i like my friend 's house .") == "I like my friend's house."
    assert typed_form("why do we work ?") == "Why do we work?"


def test_grammar_test_split_is_the_tasks_own():
    # The grammar's TEST pairs are its own test split: never seen in training there either.
    splits = en_zh.build_splits(seed=0, n_train=2000)
    test_src = {" ".join(p.src) for p in splits.test}
    assert not test_src & {" ".join(p.src) for p in splits.train}


@pytest.mark.parametrize("content, line, what", [
    ("a\tb\nonly one field\n", 2, "expected source<TAB>target"),
    ("a\tb\tc\n", 1, "3 field"),
    ("a\t \n", 1, "expected source<TAB>target"),
    ("ok\tfine\n\xff\xfe\tbad\n", 2, "not UTF-8"),
])
def test_bad_pair_files_name_the_file_and_line(tmp_path, content, line, what):
    path = tmp_path / "pairs.tsv"
    path.write_bytes(content.encode("latin-1") if "\xff" in content else content.encode())
    with pytest.raises(ValueError, match=what) as info:
        read_pairs(path)
    assert f"pairs.tsv, line {line}" in str(info.value)


def test_an_empty_file_is_refused(tmp_path):
    path = tmp_path / "empty.tsv"
    path.write_text("\n\n")
    with pytest.raises(ValueError, match="no sentence pairs"):
        read_pairs(path)


def test_pairs_are_read_with_a_bom_and_blank_lines(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("\ufeffHello.\t你好。\n\nBye.\t再见。\r\n", encoding="utf-8")
    assert read_pairs(path) == [("Hello.", "你好。"), ("Bye.", "再见。")]


def test_the_synthetic_parts_and_hard_test_sets_follow_their_rules():
    """``add_synthetic`` on a corpus made here: no VALID or TEST row in TRAIN (the drawn
    pairs included), every term test row has its term in the reference, every number test
    row writes its numbers, the long set joins TEST in threes, rare or unused words
    decide which dictionary nouns are taught, and the focus terms (used in English, nouns
    with a classifier) are the ones tested and drilled in ``train_mix``, beside every real
    TRAIN pair twice."""
    from model.training import synthetic
    from model.training.classroom_set import read_set
    from model.training.data import MIX, add_synthetic, focus_terms, training_terms
    from model.training.terms import Term

    kingfisher = Term("kingfisher", "翠鸟", "noun", counted=True)
    tatoeba = [(i, f"I am {10 + i % 80} years old.", f"我{10 + i % 80}岁了。") for i in range(300)]
    tatoeba += [(i, "I saw a kingfisher.", "我看见了一只翠鸟。") for i in range(300, 320)]
    classroom = read_set()[0]  # a classroom-set sentence among the real ones: never trained on
    tatoeba += [(i, "Tom went to Boston.", "汤姆去了波士顿。") for i in range(322, 330)]  # TRAIN
    tatoeba += [(i, classroom.en, classroom.zh) for i in range(332, 340)]  # TRAIN ids too
    out = split_corpus(tatoeba, [], ([("we go home .", "我们回家。")],
                                     [("i like tea .", "我喜欢茶。")],
                                     [("you like cats .", "你喜欢猫。")]))
    natural = {"train": list(out["train"]), "valid": list(out["valid"])}
    terms = [kingfisher, Term("years", "岁月", "noun"),
             Term("aardwolf", "土狼", "noun"), Term("Paris", "巴黎", "place"),
             Term("booming", "轰轰", "noun"), Term("tachometer", "转速表", "noun", counted=True)]
    zipf = {"kingfisher": 3.1, "years": 6.0, "aardwolf": 1.0, "Paris": 4.8, "booming": 3.4,
            "tachometer": 2.3}.get
    taught = training_terms(out["train"], terms, zipf)
    assert {"kingfisher", "Paris", "booming", "tachometer"} <= {t.en for t in taught}
    assert not {"years", "aardwolf"} & {t.en for t in taught}  # common in TRAIN / too rare
    focus = {t.en for t in focus_terms(taught, zipf)}
    assert {"kingfisher", "Paris"} <= focus  # no classifier / too rare in English:
    assert not {"booming", "tachometer"} & focus
    out = add_synthetic(out, terms, natural, zipf)
    held = [r for name, rows in out.items() if not name.startswith("train") for r in rows]
    held_en, held_zh = {norm_key(r[0]) for r in held}, {norm_key(r[1]) for r in held}
    held_en.add(norm_key(classroom.en))
    held_zh.add(norm_key(classroom.zh))
    assert {name for name in out if name.startswith("train")} == {"train", "train_mix",
                                                                  "train_mix_noise"}
    for name in ("train", "train_mix", "train_mix_noise"):
        assert not [p for p in out[name] if norm_key(p[0]) in held_en or norm_key(p[1]) in held_zh]
    real = set(natural["train"]) & set(out["train"])  # the real pairs that stayed in TRAIN
    # the one-stage mix: Chinese names and places put into the real sentences
    assert any(re.fullmatch(r"[A-Z][a-z]+ [A-Z][a-z]+ went to Boston\.", e) for e, _ in
               out["train_mix"])
    assert any(e.startswith("Tom went to ") and "波士顿" not in z for e, z in out["train_mix"])
    mix = out["train_mix"]
    # the spelling noise: in the mix, and its English is a slip of a real or classroom pair's
    noise, mix_count = out["train_mix_noise"], collections.Counter(mix)
    assert noise and all(mix_count[p] >= noise.count(p) for p in noise)
    sources = {z: e for e, z in natural["train"] + synthetic.classroom()[1]}
    assert all(z in sources for _, z in noise)
    assert sum(e != sources[z] for e, z in noise) > len(noise) / 2
    assert real and all(mix.count(p) >= MIX["real_repeat"] for p in real)
    assert ("kingfisher", "翠鸟") in mix
    assert not [p for p in mix if "轰轰" in p[1]]
    # each focus term in MIX["term_frames"] sentences, stage-3 frames among them
    framed = [e for e, z in mix if "翠鸟" in z and e != "kingfisher"]
    assert len(framed) >= MIX["term_frames"] - 2  # VALID's one removed; names put in add more
    stage3 = set(synthetic.frames("noun", "train", 3)) - set(synthetic.frames("noun", "train"))
    assert any(e == synthetic.fill(f, random.Random(0), kingfisher)[0]
               for e in framed for f in stage3)
    assert {term for _, _, term in out["test_terms"]} <= {"翠鸟", "巴黎"} | {
        t.zh for t in synthetic.classroom()[0]}
    assert all(term in zh for _, zh, term in out["test_terms"])
    assert ("I saw a kingfisher.", "我看见了一只翠鸟。", "翠鸟") in out["test_terms"]
    assert all(synthetic.number_written(n, zh) for en, zh in out["test_numbers"]
               for n in synthetic.numbers_in(en))
    assert out["test_long"][0][0] == " ".join(e for e, _ in out["test_tatoeba"][:3])
