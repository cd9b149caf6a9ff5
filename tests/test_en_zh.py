"""Tests for the synthetic English->Chinese corpus generator (model.tasks.en_zh)."""

from __future__ import annotations

import json
import random
import re

import pytest
from shipped import grammar_splits

from model.tasks import en_zh

N_SAMPLES = 200_000


@pytest.fixture(scope="module")
def samples() -> list[en_zh.Pair]:
    """200k generated pairs (shared by the determinism, vocabulary and alignment tests)."""
    rng = random.Random(1234)
    return [en_zh.sample_pair(rng) for _ in range(N_SAMPLES)]


@pytest.fixture(scope="module")
def splits() -> en_zh.Splits:
    """The default splits (as used for training; built once per session:
    ``shipped.grammar_splits``)."""
    return grammar_splits(seed=0)


# ------------------------------------------------------------------------------------ lexicon


def test_lexicon_counts():
    summary = en_zh.lexicon_summary()
    words = [w for w in en_zh.source_words() if w not in ("?", ".")]
    assert len(words) >= 250
    assert summary["english_word_types"] == len(words)
    assert summary["nouns"] >= 60
    assert summary["verbs"] >= 40
    assert summary["adjectives"] >= 25
    assert summary["time_words"] >= 6


def test_all_pronouns_are_in_the_language():
    pronouns = "i you he she it we they me him her us them my your his her its our their".split()
    assert set(pronouns) <= set(en_zh.source_words())
    assert en_zh.translate("you eat rice .") == "你吃米饭。"
    assert en_zh.translate("they like us .") == "他们喜欢我们。"
    assert en_zh.translate("she helps him .") == "她帮助他。"
    assert en_zh.translate("it eats fish .") == "它吃鱼。"
    assert en_zh.translate("we know them .") == "我们认识他们。"
    assert en_zh.translate("he loves her .") == "他爱她。"
    assert en_zh.translate("i like its ball .") == "我喜欢它的球。"
    assert en_zh.translate("they read our books .") == "他们看我们的书。"
    assert en_zh.translate("you help your mother .") == "你帮助你妈妈。"


@pytest.mark.parametrize(
    ("word", "chinese"),
    [
        ("one", "一"),
        ("two", "两"),
        ("three", "三"),
        ("four", "四"),
        ("five", "五"),
        ("six", "六"),
        ("seven", "七"),
        ("eight", "八"),
        ("nine", "九"),
        ("ten", "十"),
    ],
)
def test_numbers_one_to_ten_with_measure_words(word, chinese):
    noun = "cat" if word == "one" else "cats"
    assert en_zh.translate(f"i have {word} {noun} .") == f"我有{chinese}只猫。"


def test_time_words_are_in_the_language():
    words = set(en_zh.source_words())
    assert {"today", "tomorrow", "yesterday", "now", "every", "day", "morning"} <= words
    assert en_zh.translate("we drink tea every day .") == "我们每天喝茶。"
    assert en_zh.translate("she reads books in the morning .") == "她早上看书。"
    assert en_zh.translate("i like cats now .") == "我现在喜欢猫。"


# ------------------------------------------------------------------------- the brief's examples


@pytest.mark.parametrize(
    ("english", "chinese"),
    [
        ("why do we work ?", "我们为什么工作？"),
        ("where does she live ?", "她住在哪里？"),
        ("i go to school tomorrow .", "我明天去学校。"),
        ("he reads books in the library .", "他在图书馆看书。"),
        ("we eat rice .", "我们吃米饭。"),
        ("he does not drink tea .", "他不喝茶。"),
        ("he did not drink tea yesterday .", "他昨天没喝茶。"),
        ("do you like cats ?", "你喜欢猫吗？"),
        ("the cat is happy .", "猫很高兴。"),
    ],
)
def test_brief_examples_translate_exactly(english, chinese):
    assert en_zh.translate(english) == chinese


@pytest.mark.parametrize(
    ("english", "phrase"),
    [
        ("i have three cats .", "三只猫"),
        ("he buys two books .", "两本书"),
        ("i like my friend 's house .", "我朋友的房子"),
        ("i read his book .", "他的书"),
        ("i know the man who reads books .", "看书的男人"),
        ("she has a big dog .", "大狗"),
        ("she has a beautiful house .", "漂亮的房子"),
    ],
)
def test_phrases_inside_sentences(english, phrase):
    assert phrase in en_zh.translate(english)


def test_more_constructions_translate_naturally():
    cases = {
        "what do you eat ?": "你吃什么？",
        "who reads books in the library ?": "谁在图书馆看书？",
        "when do you go to school ?": "你什么时候去学校？",
        "where do they go ?": "他们去哪里？",
        "the car is red .": "车是红色的。",
        "the cat is not happy .": "猫不高兴。",
        "the cat is very happy .": "猫非常高兴。",
        "i bought three books yesterday .": "我昨天买了三本书。",
        "we worked yesterday .": "我们昨天工作了。",
        "he does not have a cat .": "他没有猫。",
        "i can swim .": "我能游泳。",
        "she cannot swim .": "她不能游泳。",
        "i want to go to beijing .": "我想去北京。",
        "you should not drink beer .": "你不应该喝啤酒。",
        "can you swim ?": "你能游泳吗？",
        "did you eat rice yesterday ?": "你昨天吃米饭了吗？",
        "is the cat happy ?": "猫高兴吗？",
        "the girl who lives in beijing is happy .": "住在北京的女孩很高兴。",
    }
    for english, chinese in cases.items():
        assert en_zh.translate(english) == chinese, english


def test_module_docstring_examples():
    lines = [line.strip() for line in en_zh.__doc__.splitlines() if line.startswith("    ")]
    checked = 0
    for line in lines:
        cells = re.split(r"\s{2,}", line)
        if "->" in cells:  # "english -> chinese"
            english, chinese = cells[0], cells[cells.index("->") + 1]
        elif cells and cells[0] in en_zh.CONSTRUCTIONS:  # "name  english  chinese  (note)"
            english, chinese = cells[1], cells[2]
        else:
            continue
        assert en_zh.translate(english) == chinese, english
        checked += 1
    assert checked >= 20


def test_why_do_we_work_is_generated():
    rng = random.Random(7)
    for _ in range(2_000_000):
        pair = en_zh.sample_pair(rng)
        if pair.src == ("why", "do", "we", "work", "?"):
            break
    else:
        pytest.fail("'why do we work ?' was not generated")
    assert " ".join(pair.tgt) == "我 们 为 什 么 工 作 ？"
    assert pair.construction == "wh_question"


def test_translate_normalises_case_and_punctuation():
    assert en_zh.translate("Why do we work?") == "我们为什么工作？"
    assert en_zh.tokenize("I like my friend's house.") == tuple(
        "i like my friend 's house .".split()
    )


@pytest.mark.parametrize(
    "english",
    [
        "",
        "why do we work",  # no punctuation
        "i eats rice .",  # agreement
        "he read books .",  # past tense without a past time word
        "the cat reads books .",  # semantically excluded
        "we eat rice yesterday .",  # present tense with a past time word
        "colorless green ideas sleep furiously .",  # unknown words
        "he did not drinks tea yesterday .",
    ],
)
def test_translate_rejects_sentences_outside_the_language(english):
    with pytest.raises(ValueError):
        en_zh.translate(english)


@pytest.mark.slow  # 200k generated pairs or the default splits: ~10 s each to build
def test_translate_agrees_with_generator(samples):
    for pair in samples[:3000]:
        assert en_zh.translate(" ".join(pair.src)) == "".join(pair.tgt), pair.src


# ---------------------------------------------------------------------------- the generator


@pytest.mark.slow  # 200k generated pairs or the default splits: ~10 s each to build
def test_every_construction_occurs_in_20k_samples(samples):
    seen = {pair.construction for pair in samples[:20_000]}
    assert seen == set(en_zh.CONSTRUCTIONS)


@pytest.mark.slow  # 200k generated pairs or the default splits: ~10 s each to build
def test_translation_is_a_function_of_the_source(samples):
    assert len(samples) >= 200_000
    translation: dict[tuple[str, ...], tuple[str, ...]] = {}
    for pair in samples:
        assert translation.setdefault(pair.src, pair.tgt) == pair.tgt, pair.src


def test_sample_pair_is_deterministic_for_a_seed():
    first = [en_zh.sample_pair(random.Random(5)) for _ in range(3)]
    rng_a, rng_b = random.Random(42), random.Random(42)
    assert [en_zh.sample_pair(rng_a) for _ in range(500)] == [
        en_zh.sample_pair(rng_b) for _ in range(500)
    ]
    assert first[0] == first[1] == first[2]


@pytest.mark.slow  # 200k generated pairs or the default splits: ~10 s each to build
def test_lengths_and_token_shapes(samples):
    for pair in samples:
        assert 2 <= len(pair.src) <= en_zh.MAX_SRC_LEN
        assert 2 <= len(pair.tgt) <= en_zh.MAX_TGT_LEN
        assert pair.src[-1] in ("?", ".")
        assert pair.tgt[-1] == ("？" if pair.src[-1] == "?" else "。")
        assert all(len(token) == 1 for token in pair.tgt)
        assert all(token == token.lower() and " " not in token for token in pair.src)


@pytest.mark.slow  # 200k generated pairs or the default splits: ~10 s each to build
def test_vocabularies_are_complete_and_sorted(samples):
    source, target = en_zh.source_words(), en_zh.target_tokens()
    assert source == sorted(set(source)) and target == sorted(set(target))
    source_set, target_set = set(source), set(target)
    for pair in samples:
        assert source_set.issuperset(pair.src), pair.src
        assert target_set.issuperset(pair.tgt), pair.tgt


@pytest.mark.slow  # 200k generated pairs or the default splits: ~10 s each to build
def test_alignments_are_valid(samples):
    for pair in samples:
        assert list(pair.alignment) == sorted(set(pair.alignment))
        for i, j in pair.alignment:
            assert 0 <= i < len(pair.src) and 0 <= j < len(pair.tgt)
        aligned = {i for i, _ in pair.alignment}
        for i, token in enumerate(pair.src):  # every content word is linked to its Chinese
            if en_zh.content_words([token]):
                assert i in aligned, (pair.src, token)


def test_alignment_example():
    pair = en_zh.parse("he reads books in the library .")
    assert pair.construction == "location"
    links = {(pair.src[i], pair.tgt[j]) for i, j in pair.alignment}
    assert {("he", "他"), ("reads", "看"), ("books", "书"), ("in", "在")} <= links
    assert {("library", "图"), ("library", "书"), ("library", "馆")} <= links
    assert not any(word == "the" for word, _ in links)


@pytest.mark.slow  # 200k generated pairs or the default splits: ~10 s each to build
def test_parse_returns_the_generated_pair(samples):
    for pair in samples[:500]:
        parsed = en_zh.parse(" ".join(pair.src))
        assert (parsed.src, parsed.tgt, parsed.alignment) == (pair.src, pair.tgt, pair.alignment)
    for sentence, construction in en_zh.EXAMPLE_CONSTRUCTIONS:
        assert en_zh.parse(sentence).construction == construction


def test_content_words_are_lemmas():
    src = "the mice ate apples and she looks for the big dogs in beijing".split()
    assert en_zh.content_words(src) == {"mouse", "eat", "apple", "look", "big", "dog", "beijing"}


def test_examples():
    assert len(en_zh.EXAMPLES) >= 12
    assert en_zh.EXAMPLES[0] == "why do we work ?"
    assert en_zh.EXAMPLES == [s for s, _ in en_zh.EXAMPLE_CONSTRUCTIONS]
    constructions = [c for _, c in en_zh.EXAMPLE_CONSTRUCTIONS]
    assert len(set(constructions)) == len(constructions)
    assert set(constructions) == set(en_zh.CONSTRUCTIONS)
    for sentence in en_zh.EXAMPLES:
        assert en_zh.translate(sentence)
        assert " ".join(en_zh.tokenize(sentence)) == sentence


def test_generator_settings_are_json():
    settings = json.loads(json.dumps(en_zh.GENERATOR_SETTINGS))
    assert settings["version"] == en_zh.VERSION
    assert settings["constructions"] == en_zh.CONSTRUCTIONS
    assert abs(sum(settings["constructions"].values()) - 1.0) < 1e-9
    assert settings["lexicon"]["english_word_types"] >= 250


# ---------------------------------------------------------------------------------- splits


@pytest.mark.slow  # 200k generated pairs or the default splits: ~10 s each to build
def test_split_sizes(splits):
    assert len(splits.train) == 200_000
    assert len(splits.valid) == 1_000
    assert len(splits.test) == 2_000
    assert len(splits.novel_test_indices) == 400 >= 300
    assert list(splits.novel_test_indices) == sorted(set(splits.novel_test_indices))
    assert all(0 <= i < len(splits.test) for i in splits.novel_test_indices)
    assert 30 <= len(splits.held_out_pairs) <= 50


@pytest.mark.slow  # 200k generated pairs or the default splits: ~10 s each to build
def test_splits_are_disjoint_and_train_has_no_duplicates(splits):
    train = {p.src for p in splits.train}
    valid = {p.src for p in splits.valid}
    test = {p.src for p in splits.test}
    assert len(train) == len(splits.train)
    assert len(valid) == len(splits.valid) and len(test) == len(splits.test)
    assert not train & valid and not train & test and not valid & test


@pytest.mark.slow  # 200k generated pairs or the default splits: ~10 s each to build
def test_held_out_pairs_never_co_occur_in_train_or_valid(splits):
    held = splits.held_out_pairs
    words = [w for pair in held for w in pair]
    assert len(words) == len(set(words))  # every word is in at most one held-out pair

    def contains_pair(pair: en_zh.Pair) -> bool:
        lemmas = en_zh.content_words(pair.src)
        return any(a in lemmas and b in lemmas for a, b in held)

    assert not any(contains_pair(p) for p in splits.train)
    assert not any(contains_pair(p) for p in splits.valid)
    novel = set(splits.novel_test_indices)
    for index, pair in enumerate(splits.test):
        assert contains_pair(pair) == (index in novel)

    # For every novel test sentence, its held-out pair never co-occurs in a training sentence,
    # although both words occur in training on their own.
    train_lemmas = [en_zh.content_words(p.src) for p in splits.train]
    seen_words = set().union(*train_lemmas)
    for a, b in held:
        assert a in seen_words and b in seen_words
        assert not any(a in lemmas and b in lemmas for lemmas in train_lemmas)


@pytest.mark.slow  # 200k generated pairs or the default splits: ~10 s each to build
def test_every_test_and_valid_word_occurs_in_train(splits):
    src_vocab = {w for p in splits.train for w in p.src}
    tgt_vocab = {c for p in splits.train for c in p.tgt}
    for pair in splits.valid + splits.test:
        assert src_vocab.issuperset(pair.src), pair.src
        assert tgt_vocab.issuperset(pair.tgt), pair.tgt


@pytest.mark.slow  # 200k generated pairs or the default splits: ~10 s each to build
def test_novel_test_sentences_cover_several_constructions(splits):
    constructions = {splits.test[i].construction for i in splits.novel_test_indices}
    assert len(constructions) >= 8


@pytest.mark.slow  # 200k generated pairs or the default splits: ~10 s each to build
def test_examples_are_not_in_valid_or_test(splits):
    held = {p.src for p in splits.valid + splits.test}
    for sentence in en_zh.EXAMPLES:
        assert tuple(sentence.split()) not in held


@pytest.mark.slow
def test_build_splits_is_deterministic_for_a_seed():
    small = {"n_train": 3000, "n_valid": 100, "n_test": 400, "n_novel": 300}
    a = en_zh.build_splits(seed=3, **small)
    b = en_zh.build_splits(seed=3, **small)
    c = en_zh.build_splits(seed=4, **small)
    assert a == b
    assert a.train != c.train
    assert len(a.train) == 3000 and len(a.test) == 400 and len(a.novel_test_indices) == 300


def test_build_splits_rejects_bad_sizes():
    with pytest.raises(ValueError):
        en_zh.build_splits(n_test=10, n_novel=20)
    with pytest.raises(ValueError):
        en_zh.build_splits(n_train=-1)
