"""Held-out pairs (model.heldout) and the pruning experiment (model.pruning)."""

from __future__ import annotations

import numpy as np
import pytest
import sacrebleu

from model import load_pretrained
from model.ablation import KINDS
from model.data import GRAMMAR_SPLITS
from model.heldout import grammar_test_pairs, heldout_pairs
from model.pruning import importance, pair_ids, pruning_curve, translate_batch
from model.tasks import get_task


@pytest.fixture(scope="module")
def small():
    return load_pretrained("en-zh-small")


def test_heldout_pairs_are_the_grammars_test_split_never_its_training_pairs(small):
    pairs = heldout_pairs(small.card, 50)
    splits = get_task("en-zh").build_splits(seed=small.card["seed"],
                                            n_train=small.card["data"]["n_train"])
    test = [(" ".join(p.src), "".join(p.tgt)) for p in splits.test]
    assert pairs == test[:50]
    assert not {src for src, _ in pairs} & {" ".join(p.src) for p in splits.train}
    # the everyday model learned the same grammar with the same split settings
    everyday = load_pretrained("en-zh-everyday").card
    assert heldout_pairs(everyday, 50) == list(grammar_test_pairs("en-zh", **GRAMMAR_SPLITS)[:50])


def test_no_heldout_pairs_are_made_up():
    assert heldout_pairs({"source": "huggingface", "model_type": "marian"}) == []
    assert heldout_pairs({"task": "en-zh", "seed": "0"}) == []  # a card without the settings
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="positive int"):
            heldout_pairs({}, bad)


def test_batched_translations_equal_one_sentence_at_a_time(small):
    texts = [src for src, _ in heldout_pairs(small.card, 12)] + ["zzz qqq"]
    off = [("cross", 1, 0), ("encoder", 0, 3)]
    for heads in ((), off):
        batch = translate_batch(small, texts, heads, batch_size=5)
        alone = [small.generate(t, heads_off=heads).output_text for t in texts[:-1]]
        assert batch[:-1] == alone
    assert translate_batch(small, ["", "we eat rice ."])[0] == ""  # refused, not raised


def test_pair_ids_keep_what_the_model_can_read(small):
    pairs = [("we eat rice .", "我们吃米饭。"), ("we eat rice .", "我们吃米饭🍚"), ("", "我")]
    (src, tgt), = pair_ids(small, pairs)
    c = small.config
    assert tgt[0, 0] == c.bos_id and tgt[0, -1] == c.eos_id
    assert small.tgt_vocab.decode(tgt[0, 1:-1].tolist()) == list("我们吃米饭。")


def test_pruning_curve_prunes_in_importance_order(small):
    pairs = heldout_pairs(small.card, 40)
    imp = importance(small, pairs)
    assert set(imp) == set(KINDS)
    calls = []
    curve = pruning_curve(small, pairs, imp, points=5, progress=lambda i, n: calls.append(i))
    n_heads = sum(v.size for v in imp.values())
    assert curve.pruned[0] == 0 and curve.pruned[-1] == n_heads == len(curve.order)
    assert np.all(np.diff(curve.pruned) > 0) and calls == list(range(1, len(curve.pruned) + 1))
    values = [imp[k][layer, h] for k, layer, h in curve.order]
    assert values == sorted(values)
    hyps = translate_batch(small, [p[0] for p in pairs])
    assert curve.bleu[0] == sacrebleu.corpus_bleu(hyps, [[p[1] for p in pairs]],
                                                  tokenize="zh").score
    assert curve.n_pairs == 40 and curve.bleu.shape == curve.pruned.shape
    with pytest.raises(ValueError, match="points"):
        pruning_curve(small, pairs, imp, points=1)
    with pytest.raises(ValueError, match="at least one"):
        pruning_curve(small, [], imp)
