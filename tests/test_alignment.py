"""Head alignment error rate (Och & Ney 2003) against the grammar's gold alignments: the
formula on hand-computed cases, heads built by hand, subword merging, and real models."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from shipped import model_of

from model.analysis.alignment import (
    HeadAER,
    alignment_error_rate,
    gold_links,
    grammar_word_ids,
    head_aer,
    head_links,
)
from model.tasks.en_zh import EXAMPLES, parse, translate

OUTSIDE = "colourless green ideas sleep furiously ."  # no sentence of the grammar


def attention_rows(words: list[int], S: int, eos_weight: float = 0.5) -> np.ndarray:
    """(T, S) rows that each put ``eos_weight`` on the last key (</s>), 0.3 on ``words[t]``
    and spread the rest evenly: the chosen word is the largest key but </s>."""
    T = len(words)
    rows = np.zeros((T, S))
    rest = (1.0 - eos_weight - 0.3) / (S - 1)
    rows[:, :-1] = rest
    rows[:, -1] = eos_weight
    rows[np.arange(T), words] += 0.3
    np.testing.assert_allclose(rows.sum(-1), 1.0)
    return rows


# --- the formula --------------------------------------------------------------------------

def test_perfect_alignment_has_zero_error():
    S = {(0, 0), (1, 2), (2, 1)}
    assert alignment_error_rate(S, S) == 0.0
    assert alignment_error_rate(S, S, S | {(2, 2)}) == 0.0


def test_disjoint_alignment_has_error_one():
    assert alignment_error_rate({(0, 1), (1, 0)}, {(0, 0), (1, 1)}) == 1.0
    assert alignment_error_rate(set(), {(0, 0)}) == 1.0  # nothing found


def test_partial_alignment_with_possible_links_by_hand():
    sure = {(0, 0), (1, 1)}
    possible = sure | {(2, 1), (2, 2)}  # S is a proper subset of P
    predicted = {(0, 0), (2, 1), (3, 3)}
    # |A| = 3, |S| = 2, |A ∩ S| = 1 ((0,0)), |A ∩ P| = 2 ((0,0), (2,1)): 1 - 3/5
    assert alignment_error_rate(predicted, sure, possible) == pytest.approx(0.4)
    # with P = S the possible link (2, 1) no longer counts: 1 - (1 + 1) / 5
    assert alignment_error_rate(predicted, sure) == pytest.approx(0.6)


def test_no_links_at_all_is_no_error_and_extra_links_count_against_precision():
    assert alignment_error_rate(set(), set()) == 0.0
    # no sure links: 1 - |A ∩ P| / |A| = 1 - 1/2
    assert alignment_error_rate({(0, 0), (1, 1)}, set(), {(0, 0)}) == pytest.approx(0.5)


def test_sure_links_must_be_possible():
    with pytest.raises(ValueError, match="subset"):
        alignment_error_rate({(0, 0)}, {(0, 0), (1, 1)}, {(0, 0)})


# --- gold links ---------------------------------------------------------------------------

def test_gold_links_of_a_wh_question_by_hand():
    # why do we work ?  ->  我 们 为 什 么 工 作 ？
    #  0   1  2   3   4      0  1  2  3  4  5  6  7
    want = {(2, 0), (2, 1),  # we -> 我们
            (0, 2), (0, 3), (0, 4),  # why -> 为什么 (moved after the subject)
            (3, 5), (3, 6),  # work -> 工作
            (4, 7)}  # ? -> ？ ; "do" (1) has no link
    assert gold_links("why do we work ?") == want
    assert gold_links("Why do we work?") == want  # tokenised as the models do
    assert not any(i == 1 for i, _ in want)


def test_gold_links_with_a_chinese_only_character_by_hand():
    # he drank tea yesterday .  ->  他 昨 天 喝 茶 了 。
    #  0    1    2     3      4       0  1  2  3  4  5  6
    assert gold_links("he drank tea yesterday .") == {
        (0, 0), (3, 1), (3, 2), (1, 3), (2, 4), (1, 5), (4, 6)}  # 了 goes with "drank"
    # do you like cats ?  ->  你 喜 欢 猫 吗 ？ : neither "do" nor 吗 has a link
    links = gold_links("do you like cats ?")
    assert links == {(1, 0), (2, 1), (2, 2), (3, 3), (4, 5)}
    assert parse("do you like cats ?").tgt[4] == "吗"


def test_gold_links_outside_the_grammar_is_none():
    assert gold_links(OUTSIDE) is None
    assert gold_links("") is None


# --- head links ---------------------------------------------------------------------------

def test_hand_built_heads_one_exact_one_shifted():
    gold = gold_links("why do we work ?")
    char_word = [2, 2, 0, 0, 0, 3, 3, 4]  # the gold word of each character 我们为什么工作？
    S, T = 6, 9  # why do we work ? </s> ; rows <s> + 8 characters (the last makes </s>)
    # head 0: row t looks at the word of character t (the one it outputs); its last row,
    # which outputs </s>, looks at "do" and must not become a link. Most weight sits on
    # the </s> key, which must not win the argmax.
    head0 = attention_rows([*char_word, 1], S, eos_weight=0.6)
    # head 1: row t looks at the word of character t + 1 (one step ahead)
    head1 = attention_rows([*char_word[1:], 4, 4], S)
    A = np.stack([head0, head1])[None]
    assert A.shape == (1, 2, T, S)
    links = head_links(A)
    assert set(links) == {(0, 0), (0, 1)}
    assert links[0, 0] == gold
    assert alignment_error_rate(links[0, 0], gold) == 0.0
    # head 1 links: 0->we ok, 1->why no, 2->why ok, 3->why ok, 4->work no, 5->work ok,
    # 6->? no, 7->? ok: |A| = |S| = 8, |A ∩ S| = 5, AER = 1 - (5 + 5) / 16
    assert len(links[0, 1]) == 8 and len(links[0, 1] & gold) == 5
    assert alignment_error_rate(links[0, 1], gold) == pytest.approx(0.375)


def test_the_last_row_is_kept_when_decoding_did_not_finish():
    A = attention_rows([0, 1], 3)[None, None]  # (1, 1, 2, 3)
    assert head_links(A)[0, 0] == {(0, 0)}
    assert head_links(A, ends_with_eos=False)[0, 0] == {(0, 0), (1, 1)}


def test_pieces_are_summed_into_words_before_the_argmax():
    # pieces: Ġlearn ing Ġfast </s> ; words: learning (0), fast (1), </s> (2)
    row = np.array([0.3, 0.3, 0.35, 0.05])  # piece argmax: Ġfast; word argmax: learning 0.6
    A = np.stack([row, row])[None, None]  # (1, 1, 2, 4): one character, then </s>
    assert head_links(A)[0, 0] == {(2, 0)}  # every piece its own word: Ġfast wins
    assert head_links(A, src_words=[0, 0, 1, 2])[0, 0] == {(0, 0)}


def test_head_links_refuses_mismatched_word_ids():
    A = np.full((1, 1, 2, 4), 0.25)
    with pytest.raises(ValueError, match="src_words"):
        head_links(A, src_words=[0, 1, 2])
    with pytest.raises(ValueError, match="word ids"):
        head_links(A, src_words=[0, 2, 3, 4])
    with pytest.raises(ValueError, match="L, H, T, S"):
        head_links(A[0])


def test_pieces_are_laid_over_the_grammar_tokens():
    words = parse("i like my friend 's house .").src
    # byte-level BPE of "I like my friend's house." (labels) and of the spaced grammar text
    assert grammar_word_ids(["I", "like", "my", "friend", "'s", "house", ".", "</s>"],
                            words) == (0, 1, 2, 3, 4, 5, 6, 7)
    assert grammar_word_ids(["i", "like", "my", "friend", "'", "s", "house", ".", "</s>"],
                            words) == (0, 1, 2, 3, 4, 4, 5, 6, 7)
    assert grammar_word_ids(["i", "li", "ke", "my", "␣", "friend", "'s", "house", ".", "</s>"],
                            words) == (0, 1, 1, 2, 3, 3, 4, 5, 6, 7)
    with pytest.raises(ValueError, match="spans"):
        grammar_word_ids(["i", "like", "my", "friend's", "house", ".", "</s>"], words)
    with pytest.raises(ValueError, match="spell"):
        grammar_word_ids(["i", "love", "my", "friend", "'s", "house", ".", "</s>"], words)


# --- head_aer -----------------------------------------------------------------------------

class HandBuiltTranslator:
    """A translator whose single (layer, head) attends as ``rows[sentence]`` says."""

    def __init__(self, rows: dict[str, list[int]]) -> None:
        self.rows = rows

    def grammar_translation(self, text: str) -> str | None:
        return translate(text) if text in self.rows else None

    def teacher_force(self, text: str, reference: str) -> SimpleNamespace:
        pair = parse(text)
        S = len(pair.src) + 1
        A = attention_rows([*self.rows[text], 0], S)[None, None]  # (1, 1, T, S)
        return SimpleNamespace(cross_attentions=A, src_labels=(*pair.src, "</s>"),
                               tgt_tokens=("<s>", *reference, "</s>"))


def test_corpus_aer_sums_counts_over_sentences():
    perfect = [2, 2, 0, 0, 0, 3, 3, 4]  # why do we work ? -> 我们为什么工作？
    first_word = [0] * 6  # we eat rice . -> 我们吃米饭。 all on "we": 2 of 6 right
    result = head_aer(HandBuiltTranslator({"why do we work ?": perfect,
                                           "we eat rice .": first_word}),
                      ["why do we work ?", OUTSIDE, "we eat rice ."])
    assert isinstance(result, HeadAER)
    assert (result.n_sentences, result.n_skipped) == (2, 1)
    # sentences: AER 0 and 1 - 4/12; pooled: |A| = |S| = 14, |A ∩ S| = 8 + 2 -> 1 - 20/28
    assert result.aer.shape == (1, 1) and result.aer.dtype == np.float64
    assert result.aer[0, 0] == pytest.approx(2 / 7)
    assert result.best_heads == (0,)


@pytest.fixture(scope="module")
def small():
    return model_of("en-zh-small")


def test_head_aer_on_the_small_model(small):
    result = head_aer(small, [*EXAMPLES[:6], OUTSIDE])
    L, H = small.config.num_decoder_layers, small.config.nhead
    assert result.aer.shape == (L, H) and result.aer.dtype == np.float64
    assert np.all((result.aer >= 0) & (result.aer <= 1))
    assert (result.n_sentences, result.n_skipped) == (6, 1)
    assert len(result.best_heads) == L
    for layer, head in enumerate(result.best_heads):
        assert result.aer[layer, head] == result.aer[layer].min()


def test_head_aer_of_one_sentence_is_its_heads_aer(small):
    sentence = "i know the man who reads books ."
    trace = small.teacher_force(sentence, translate(sentence))
    gold = gold_links(sentence)
    links = head_links(trace.cross_attentions)
    result = head_aer(small, [sentence])
    for (layer, head), predicted in links.items():
        assert result.aer[layer, head] == pytest.approx(alignment_error_rate(predicted, gold))


def test_head_aer_matches_grammar_words_for_subword_pieces(everyday):
    # the model makes one word of "friend's" (src_words); the grammar has "friend" and "'s",
    # and the pieces are exactly the grammar's tokens, so each piece is its own grammar word
    natural, spaced = "I like my friend's house.", "i like my friend 's house ."
    trace = everyday.teacher_force(natural, translate(spaced))
    assert trace.src_labels == ("I", "like", "my", "friend", "'s", "house", ".", "</s>")
    assert trace.src_words == (0, 1, 2, 3, 3, 4, 5, 6)
    gold = gold_links(natural)
    result = head_aer(everyday, [natural])
    assert result.n_sentences == 1
    for (layer, head), predicted in head_links(trace.cross_attentions).items():
        assert result.aer[layer, head] == pytest.approx(alignment_error_rate(predicted, gold))


def test_head_aer_without_grammar_sentences_is_refused(small):
    with pytest.raises(ValueError, match="no gold alignments"):
        head_aer(small, [OUTSIDE, "hello world"])
    with pytest.raises(ValueError, match="no gold alignments"):
        head_aer(small, [])
