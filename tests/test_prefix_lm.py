"""The prefix language model's data, loss and checkpoint (issue 55, item 4): one sequence
``<s> English <sep> Chinese </s>`` over the default model's two vocabularies
(``model.core.prefix_lm``), the loss on the continuation only (``trainer.prefix_lm_loss``),
and a decoder-only folder's save -> load round trip."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from model import CheckpointError, load_pretrained
from model.core.checkpoint import load_checkpoint, save_checkpoint
from model.core.config import DecoderOnlyConfig
from model.core.decoder_only import DecoderOnlyTransformer
from model.core.prefix_lm import BOS_ID, EOS_ID, PrefixCodec, PrefixLayout
from model.core.subword import load_tokenizer
from model.core.vocab import Vocab, tokenize_zh
from model.training.prefix_lm import greedy_continuation, translate
from model.training.trainer import (
    LoopSettings,
    label_smoothed_cross_entropy,
    prefix_lm_loss,
    token_batches,
    train_loop,
    valid_loss,
)

EVERYDAY = Path(__file__).resolve().parents[1] / "pretrained" / "en-zh-everyday"


@pytest.fixture(scope="module")
def codec() -> PrefixCodec:
    """The default model's English tokenizer and Chinese vocabulary, as one vocabulary."""
    zh = Vocab(json.loads((EVERYDAY / "tgt_vocab.json").read_text(encoding="utf-8")))
    return PrefixCodec(load_tokenizer(EVERYDAY / "src_tokenizer.json"), zh)


@pytest.fixture(scope="module")
def pairs() -> list[tuple[str, str]]:
    """Eight real held-out pairs of the default model (English, Chinese)."""
    lines = (EVERYDAY / "heldout.tsv").read_text(encoding="utf-8").splitlines()
    return [tuple(line.split("\t")[:2]) for line in lines[:8]]


def _tiny(codec: PrefixCodec, seed: int = 0) -> DecoderOnlyTransformer:
    torch.manual_seed(seed)
    layout = codec.layout
    return DecoderOnlyTransformer(DecoderOnlyConfig(
        vocab_size=layout.vocab_size, sep_id=layout.sep_id, d_model=32, nhead=4, num_layers=2,
        dim_feedforward=64, dropout=0.0, max_len=96))


def test_layout_puts_sep_after_english_and_chinese_after_sep(codec):
    layout, zh = codec.layout, codec.zh_vocab
    en_size = codec.tokenizer.get_vocab_size()
    assert layout.sep_id == en_size
    assert layout.vocab_size == en_size + 1 + len(zh) - 4
    chinese = [layout.from_chinese(c) for c in range(4, len(zh))]
    assert chinese == list(range(en_size + 1, layout.vocab_size))  # no gap, no overlap
    assert all(layout.to_chinese(layout.from_chinese(c)) == c for c in range(len(zh)))
    assert layout.to_chinese(layout.sep_id) is None and layout.to_chinese(5) is None


def test_encode_decode_round_trip_on_real_pairs(codec, pairs):
    for english, chinese in pairs:
        ex = codec.encode(english, chinese)
        assert ex.ids[0] == BOS_ID and ex.ids[-1] == EOS_ID
        assert ex.ids.count(codec.layout.sep_id) == 1
        # The English part is the tokenizer's own ids; it reads back as the sentence.
        sep = ex.ids.index(codec.layout.sep_id)
        assert codec.tokenizer.decode(list(ex.ids[1:sep])).strip() == english
        assert codec.decode(ex.ids) == "".join(tokenize_zh(chinese))


def test_scored_mask_covers_exactly_the_chinese_tokens_and_the_closing_eos(codec, pairs):
    sep = codec.layout.sep_id
    for english, chinese in pairs:
        ex = codec.encode(english, chinese)
        cut = ex.ids.index(sep) + 1
        assert not any(ex.scored[:cut])
        assert all(ex.scored[cut:])
        scored = [i for i, s in zip(ex.ids, ex.scored, strict=True) if s]
        assert scored[-1] == EOS_ID
        assert len(scored) == len(tokenize_zh(chinese)) + 1
        assert all(i > sep for i in scored[:-1])  # every scored token but </s> is Chinese


def test_decode_stops_at_eos_and_refuses_ids_outside(codec):
    layout = codec.layout
    zh = [layout.from_chinese(codec.zh_vocab.stoi[ch]) for ch in "我们"]
    assert codec.decode([BOS_ID, 100, layout.sep_id, *zh, EOS_ID, zh[0]]) == "我们"
    with pytest.raises(ValueError, match="outside"):
        codec.decode([layout.vocab_size])
    with pytest.raises(ValueError, match="sep_id"):
        layout.check(DecoderOnlyConfig(vocab_size=layout.vocab_size, sep_id=5))


def test_encode_corpus_drops_what_does_not_fit(codec, pairs):
    data, kept = codec.encode_corpus(pairs, max_len=96)
    assert kept == pairs
    for (p, c), (english, chinese) in zip(data, pairs, strict=True):
        assert tuple(p + c) == codec.encode(english, chinese).ids
    shortest = min(len(p) + len(c) for p, c in data)
    assert len(codec.encode_corpus(pairs, max_len=shortest)[0]) < len(pairs)


def test_joined_token_batches_count_prompt_and_continuation(codec, pairs):
    data, _ = codec.encode_corpus(pairs, max_len=96)
    budget = 2 * max(len(p) + len(c) for p, c in data)
    batches = token_batches(data, budget, seed=0, joined=True)
    assert sorted(i for b in batches for i in b) == list(range(len(data)))
    for b in batches:
        assert len(b) * max(len(data[i][0]) + len(data[i][1]) for i in b) <= budget
    # Counting the longest side only would pack more rows than the joined rows fit.
    sides = token_batches(data, budget, seed=0)
    assert len(sides) < len(batches)


def test_loss_equals_a_reference_computed_position_by_position(codec, pairs):
    model = _tiny(codec).eval()
    data, _ = codec.encode_corpus(pairs[:3], max_len=96)
    eps = 0.1
    with torch.no_grad():
        got = prefix_lm_loss(model, data, [0, 1, 2], eps).item()
        terms = []
        for p, c in data:  # each row alone: no padding, no batching
            ids = torch.tensor([p + c])
            logp = model(ids).logits[0].log_softmax(-1)  # (N, V)
            for j in range(len(p) - 1, len(p) + len(c) - 1):  # predicts token j + 1
                y = ids[0, j + 1]
                terms.append(-(1 - eps) * logp[j, y] - eps * logp[j].mean())
        want = torch.stack(terms).mean().item()
    assert got == pytest.approx(want, rel=1e-5)
    assert len(terms) == sum(len(c) for _, c in data)
    # Scoring the prompt too would give another number: the mask matters.
    with torch.no_grad():
        ids = torch.tensor([data[0][0] + data[0][1]])
        every = label_smoothed_cross_entropy(model(ids[:, :-1]).logits, ids[:, 1:], 0, eps)
        only = prefix_lm_loss(model, data, [0], eps)
    assert not math.isclose(every.item(), only.item(), rel_tol=1e-3)


def test_padding_does_not_change_the_loss(codec, pairs):
    model = _tiny(codec).eval()
    data, _ = codec.encode_corpus(pairs[:4], max_len=96)
    with torch.no_grad():
        rows = [prefix_lm_loss(model, data, [i], 0.0) for i in range(4)]
        batch = prefix_lm_loss(model, data, [0, 1, 2, 3], 0.0)
    counts = torch.tensor([float(len(c)) for _, c in data])
    want = (torch.stack(rows) * counts).sum() / counts.sum()  # mean over scored tokens
    assert batch.item() == pytest.approx(want.item(), rel=1e-5)


def test_a_tiny_model_overfits_a_handful_of_pairs(codec, pairs):
    model = _tiny(codec, seed=1)
    data, _ = codec.encode_corpus(pairs, max_len=96)
    start = valid_loss(model, data, loss=prefix_lm_loss)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    seen = []
    meta = train_loop(
        model, opt, data, LoopSettings(100, 100, 60.0, "valid_score", label_smoothing=0.0),
        epoch_batches=lambda epoch: [list(range(len(data)))],
        lr=lambda step, used: 3e-3,
        validate=lambda m: {"valid_score": math.exp(-valid_loss(m, data, loss=prefix_lm_loss))},
        on_best=lambda m, meta: seen.append(meta["step"]), loss_fn=prefix_lm_loss)
    end = valid_loss(model, data, loss=prefix_lm_loss)
    assert meta["step"] == 100 and seen == [100]
    assert start > math.log(codec.layout.vocab_size) - 1  # an untrained model guesses
    assert end < start / 2
    # What it learnt is the translation: greedy decoding writes each pair's Chinese back.
    assert [translate(model, codec, e) for e, _ in pairs] == \
        ["".join(tokenize_zh(z)) for _, z in pairs]


def test_greedy_continuation_with_the_cache_equals_full_passes(codec, pairs):
    model = _tiny(codec, seed=3).eval()
    prompt = codec.prompt(pairs[0][0])
    got = greedy_continuation(model, prompt, max_new_tokens=6)
    ids = list(prompt)
    with torch.inference_mode():
        for _ in range(6):  # no cache: the whole sequence each step
            ids.append(int(model(torch.tensor([ids])).logits[0, -1].argmax()))
            if ids[-1] == EOS_ID:
                break
    assert got == ids[len(prompt):]
    assert len(greedy_continuation(model, prompt, max_new_tokens=200)) <= 96 - len(prompt)
    with pytest.raises(ValueError, match="prompt"):
        greedy_continuation(model, list(range(4, 100)), max_new_tokens=1)


def test_decoder_only_checkpoint_round_trip_gives_identical_logits(tmp_path, codec, pairs):
    model = _tiny(codec, seed=2).eval()
    folder = tmp_path / "prefix"
    card = save_checkpoint(folder, model, None, codec.zh_vocab, card={"task": "en-zh"},
                           src_tokenizer=codec.tokenizer)
    saved = json.loads((folder / "config.json").read_text())
    assert saved["architecture"] == "decoder-only" and saved["sep_id"] == codec.layout.sep_id
    loaded = load_checkpoint(folder)
    assert isinstance(loaded.model, DecoderOnlyTransformer) and not loaded.model.training
    assert loaded.card["parameters"] == card["parameters"] == model.num_parameters()
    assert loaded.model.config == model.config
    again = PrefixCodec(loaded.src_tokenizer, loaded.tgt_vocab)
    assert again.layout == codec.layout
    ids = torch.tensor([codec.encode(*pairs[0]).ids])
    with torch.inference_mode():
        assert torch.equal(loaded.model(ids).logits, model(ids).logits)
    assert load_pretrained(folder).info.architecture == "decoder-only"  # tests/test_one_stack


def _saved(tmp_path: Path, codec) -> Path:
    """A tiny decoder-only model saved as a checkpoint folder under ``tmp_path``."""
    folder = tmp_path / "prefix"
    save_checkpoint(folder, _tiny(codec), None, codec.zh_vocab, card={"task": "en-zh"},
                    src_tokenizer=codec.tokenizer)
    return folder


def test_decoder_only_folder_whose_sizes_disagree_is_refused(tmp_path, codec):
    folder = _saved(tmp_path, codec)
    zh = json.loads((folder / "tgt_vocab.json").read_text(encoding="utf-8"))
    (folder / "tgt_vocab.json").write_text(json.dumps(zh[:-1]), encoding="utf-8")
    with pytest.raises(CheckpointError, match="config.json: vocab_size"):
        load_checkpoint(folder)


def test_unknown_architecture_is_refused(tmp_path, codec):
    folder = _saved(tmp_path, codec)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "architecture": "mixture"}))
    with pytest.raises(CheckpointError, match="architecture"):
        load_checkpoint(folder)


def test_an_encoder_decoder_checkpoint_still_loads():
    ckpt = load_checkpoint(EVERYDAY)
    assert type(ckpt.model).__name__ == "Transformer"
    assert ckpt.model.config.src_vocab_size == len(ckpt.src_vocab)
    assert PrefixLayout(len(ckpt.src_vocab), len(ckpt.tgt_vocab)).sep_id == len(ckpt.src_vocab)
