"""Held-out pairs (model.core.heldout) and the pruning experiment (model.analysis.pruning)."""

from __future__ import annotations

import numpy as np
import pytest
import sacrebleu
from shipped import grammar_splits, model_of

from model import load_pretrained
from model.analysis.pruning import importance, pair_ids, pruning_curve
from model.backends.translate import translate_batch
from model.core.config import ATTENTION_KINDS
from model.core.heldout import GRAMMAR_SPLITS, grammar_test_pairs, heldout_pairs


@pytest.fixture(scope="module")
def small():
    return model_of("en-zh-small")


@pytest.mark.slow
def test_heldout_pairs_are_the_grammars_test_split_never_its_training_pairs(small):
    pairs = heldout_pairs(small.card, 50)
    splits = grammar_splits(seed=small.card["seed"], n_train=small.card["data"]["n_train"])
    test = [(" ".join(p.src), "".join(p.tgt)) for p in splits.test]
    assert pairs == test[:50]
    assert not {src for src, _ in pairs} & {" ".join(p.src) for p in splits.train}
    # the everyday model learned the same grammar with the same split settings
    everyday = model_of("en-zh-everyday").card
    assert heldout_pairs(everyday, 50) == list(grammar_test_pairs("en-zh", **GRAMMAR_SPLITS)[:50])


def test_no_heldout_pairs_are_made_up():
    assert heldout_pairs({"source": "huggingface", "model_type": "marian"}) == []
    assert heldout_pairs({"task": "en-zh", "seed": "0"}) == []  # a card without the settings
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="positive int"):
            heldout_pairs({}, bad)


@pytest.mark.slow  # over ~5 s: run in CI, not in the quick tier
def test_batched_translations_equal_one_sentence_at_a_time(small):
    texts = [src for src, _ in heldout_pairs(small.card, 12)] + ["zzz qqq"]
    off = [("cross", 1, 0), ("encoder", 0, 3)]
    for heads in ((), off):
        batch = translate_batch(small, texts, heads_off=heads, batch_size=5)
        alone = [small.generate(t, heads_off=heads).output_text for t in texts[:-1]]
        assert batch[:-1] == alone
    assert translate_batch(small, ["", "we eat rice ."])[0] == ""  # refused, not raised


def test_pair_ids_keep_what_the_model_can_read(small):
    pairs = [("we eat rice .", "我们吃米饭。"), ("we eat rice .", "我们吃米饭🍚"), ("", "我")]
    (src, tgt), = pair_ids(small, pairs)
    c = small.config
    assert tgt[0, 0] == c.bos_id and tgt[0, -1] == c.eos_id
    assert small.target.vocab.decode(tgt[0, 1:-1].tolist()) == list("我们吃米饭。")


def test_pruning_curve_prunes_in_importance_order(small):
    pairs = heldout_pairs(small.card, 40)
    imp = importance(small, pairs)
    assert set(imp) == set(ATTENTION_KINDS)
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


def test_the_everyday_model_ships_its_own_held_out_pairs(small):
    from model.backends.load import pretrained_root
    from model.core.heldout import HELDOUT_FILE, read_heldout, sample_pairs

    everyday = model_of("en-zh-everyday")
    shipped = read_heldout(pretrained_root() / "en-zh-everyday")
    assert len(shipped) == 200 and everyday.info.heldout == shipped
    assert all(en.strip() and zh.strip() for en, zh in shipped)
    assert sample_pairs(everyday, 50) == list(shipped[:50])  # statistics: everyday sentences
    assert sample_pairs(small, 5) == heldout_pairs(small.card, 5)  # no file: the grammar's
    assert not (pretrained_root() / "en-zh-small" / HELDOUT_FILE).exists()


def test_write_heldout_takes_every_strides_row_of_the_test_file(tmp_path):
    from model.core.heldout import TATOEBA_STRIDE, read_heldout, write_heldout

    rows = [f"sentence {i}\t句子{i}" for i in range(100)]
    (tmp_path / "test.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert write_heldout(tmp_path / "test.tsv", tmp_path, n=3) == 3
    assert read_heldout(tmp_path) == tuple(tuple(rows[i].split("\t"))
                                           for i in range(0, 3 * TATOEBA_STRIDE, TATOEBA_STRIDE))


@pytest.mark.parametrize(("content", "match"), [
    ("one\ttwo\nonly english\n", "line 2: expected English<TAB>Chinese"),
    ("a\tb\tc\n", "line 1"),
    (" \t我\n", "line 1"),
    ("x\ty\n" * 1001, "at most 1000"),
])
def test_a_damaged_heldout_file_is_refused_naming_the_line(tmp_path, content, match):
    from model import CheckpointError
    from model.core.heldout import HELDOUT_FILE, read_heldout

    (tmp_path / HELDOUT_FILE).write_text(content, encoding="utf-8")
    with pytest.raises(CheckpointError, match=match):
        read_heldout(tmp_path)
    (tmp_path / HELDOUT_FILE).write_bytes(b"\xff\xfe\x00")
    with pytest.raises(CheckpointError, match="UTF-8"):
        read_heldout(tmp_path)


@pytest.mark.parametrize("family", ["ours", "marian", "t5"])
def test_cached_batch_decoding_gives_the_same_tokens(small, family, tmp_path_factory):
    from model.decoding import GenerationSettings, greedy_batch, pad_rows
    from testkit.hf_tiny import sentence_pairs, tiny_folder

    tr = small if family == "ours" else load_pretrained(tiny_folder(family, tmp_path_factory))
    texts = ([src for src, _ in heldout_pairs(small.card, 6)] if family == "ours"
             else [src for src, _ in sentence_pairs()[:6]])
    src = pad_rows([tr.source(x).ids.tolist() for x in texts],
                   tr.config.pad_id)
    runs = [greedy_batch(tr.model, src, GenerationSettings(max_new_tokens=12),
                         tr.target.processors(12), use_cache=cache)
            for cache in (False, True)]
    assert runs[0].generated == runs[1].generated
