"""A synthetic English -> Chinese translation task with word alignments.

The language
------------
A small grammar generates English sentences together with their Mandarin translation and a
word alignment.  Examples (English tokens are joined by spaces, Chinese characters are not)::

    why do we work ?                    ->  我们为什么工作？
    he did not drink tea yesterday .    ->  他昨天没喝茶。
    i go to school tomorrow .           ->  我明天去学校。
    he reads books in the library .     ->  他在图书馆看书。
    do you like cats ?                  ->  你喜欢猫吗？
    the cat is very happy .             ->  猫非常高兴。
    she has a beautiful house .         ->  她有漂亮的房子。
    i like my friend 's house .         ->  我喜欢我朋友的房子。
    i bought two books yesterday .      ->  我昨天买了两本书。
    i know the man who reads books .    ->  我认识看书的男人。
    you should not drink beer .         ->  你不应该喝啤酒。

The lexicon has about 110 nouns with measure words, 28 places, 63 verbs, 43 adjectives, all
personal pronouns, 23 time words and the numbers one to ten: over 500 English word types.  Its
tables are data files in `data/` inside this package (tab-separated tables, small mappings and
flag sets in `lexicon.toml`; columns are explained in its README.md), read at import.
Every sample is tagged with the construction it was sampled for (`CONSTRUCTIONS`):

    svo                    we eat rice .                   我们吃米饭。
    negation               he does not drink tea .         他不喝茶。  (past: 没, 有 -> 没有)
    time                   i go to school tomorrow .       我明天去学校。
    location               we study in the library .       我们在图书馆学习。
    wh_question            where does she live ?           她住在哪里？  (what/who/when/where/why)
    yes_no_question        do you like cats ?              你喜欢猫吗？
    adjective_predicate    the car is red .                车是红色的。
    adjective_attributive  she has a big dog .             她有大狗。  (beautiful -> 漂亮的)
    possessive             i read my friend 's books .     我看我朋友的书。  (his cat -> 他的猫)
    number                 i have three cats .             我有三只猫。  (两 before measure words)
    relative_clause        i know the girl who swims .     我认识游泳的女孩。
    modal                  she cannot swim .               她不能游泳。  (want to 想, should 应该)

A sentence may combine several of these (a negated question is not generated, but a negated
statement with a time word, a location and a possessive is).  Word order follows Mandarin:
SUBJECT TIME NEGATION/MODAL 在PLACE VERB OBJECT.  In the past tense 了 follows the object
(他昨天喝茶了), or directly the verb when the object has a number, possessor or relative clause
(我昨天买了三本书).

The translation is a *function* of the English sentence: every English word or fixed phrase has
exactly one Chinese rendering for its construction (`you` is always 你, `they` 他们, `read` 看,
`can` 能; `the` and `a` are dropped, `book` and `books` are both 书).  The past tense is only used
together with a past time word (yesterday, last night, ...), so `read` (present) and `read`
(past) are never confused.  `parse` and `translate` analyse an English sentence of the language;
the generator and the parser share the same realisation code, and the tests check that they
agree and that no English sentence is ever generated with two different translations.

Tokens
------
Source tokens are lower-case English words and punctuation (`?`, `.` and the possessive `'s` are
separate tokens); multi-word items such as `every day` or `listen to` are several tokens.
Target tokens are single Chinese characters or full-width punctuation (`？`, `。`).  Sentences have
at most 20 source and 30 target tokens.  `source_words()` and `target_tokens()` list every token
the grammar can emit.  The alignment of a `Pair` links source token indices to the target
character indices that translate them; words that are dropped (the, a, do) are unaligned.

Splits
------
`build_splits(seed)` draws samples from `sample_pair` with `random.Random(seed)` and keeps the
first occurrence of every English sentence.  Before sampling it chooses about 40 held-out pairs
of content words (adjective + noun, verb + object noun, subject noun + verb) whose words never
appear together in a training or validation sentence; each word of a pair still occurs in many
other training sentences.  The test set consists of ordinary unseen sentences plus `n_novel`
sentences that contain both words of a held-out pair (indices in `novel_test_indices`), so it
measures compositional generalisation.  Train, valid and test are disjoint as English sentences,
and every token of every valid/test sentence occurs in the training set.  Content words are
compared by lemma (`content_words`): `ate` and `eats` both count as `eat`.

Modules
-------
The code is split by stage (each module's docstring says what it holds): `lexicon` (data files
and word tables), `vocabulary` (token inventories and lemmas), `realise` (derivations -> `Pair`),
`grammar` (which derivations are well formed), `parse` (`tokenize`, `parse`, `translate`),
`phrases` and `generate` (the sampler, `sample_pair`) and `splits` (`build_splits`).  This
module re-exports the public names and holds `VERSION` and `GENERATOR_SETTINGS`.
"""

from __future__ import annotations

from .generate import CONSTRUCTIONS, sample_pair
from .lexicon import EXAMPLE_CONSTRUCTIONS, EXAMPLES
from .parse import parse, tokenize, translate
from .realise import MAX_SRC_LEN, MAX_TGT_LEN, Pair
from .splits import _N_HELD_OUT, Splits, build_splits
from .vocabulary import content_words, lexicon_summary, source_words, target_tokens

__all__ = [
    "CONSTRUCTIONS",
    "EXAMPLES",
    "EXAMPLE_CONSTRUCTIONS",
    "GENERATOR_SETTINGS",
    "MAX_SRC_LEN",
    "MAX_TGT_LEN",
    "VERSION",
    "Pair",
    "Splits",
    "build_splits",
    "content_words",
    "lexicon_summary",
    "parse",
    "sample_pair",
    "source_words",
    "target_tokens",
    "tokenize",
    "translate",
]

VERSION = "en_zh-1.0"

GENERATOR_SETTINGS: dict = {
    "name": "en_zh",
    "version": VERSION,
    "lexicon": lexicon_summary(),
    "constructions": dict(CONSTRUCTIONS),
    "max_src_len": MAX_SRC_LEN,
    "max_tgt_len": MAX_TGT_LEN,
    "source_vocab_size": len(source_words()),
    "target_vocab_size": len(target_tokens()),
    "held_out_pairs": dict(_N_HELD_OUT),
    "conventions": {
        "articles": "the/a/an are dropped; singular and plural nouns translate alike",
        "pronouns": "you -> 你, they/them -> 他们, it -> 它 (animals)",
        "modals": "can -> 能, want to -> 想, should -> 应该",
        "negation": "不 (present), 没 (past and 有), 没 before adjectives in 有...",
        "past": "only with a past time word; VO了, or V了O for quantified/possessed objects",
        "numbers": "number + measure word of the noun; two -> 两",
        "possessive": "my X -> 我的X, but 我X for relation nouns (friend, mother, ...)",
    },
    "split_defaults": {"n_train": 200_000, "n_valid": 1_000, "n_test": 2_000, "n_novel": 400},
}
