"""The Chinese -> English training path: the reversed start (``reverse_init``), the two sides
of the pairs (``pairs.CharSide`` / ``PieceSide``), Chinese numerals in number sentences, and
the zh-en classroom set's own rule."""

from __future__ import annotations

import json
from types import SimpleNamespace

import cn2an
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from model.core.config import TransformerConfig
from model.core.subword import train_bpe
from model.core.transformer import Transformer
from model.core.vocab import BOS, EOS, Vocab
from model.training import reverse_init
from model.training.classroom_set import is_right, read_set
from model.training.data_zh_en import chinese_numerals
from model.training.pairs import CharSide, PieceSide, build_vocabularies, encode_corpus

PAIRS = [("我们为什么工作？", "Why do we work?"), ("我妈妈是医生。", "My mother is a doctor."),
         ("李明住在杭州。", "Li Ming lives in Hangzhou.")] * 3


def tiny(src_vocab: int, tgt_vocab: int) -> Transformer:
    return Transformer(TransformerConfig(
        src_vocab_size=src_vocab, tgt_vocab_size=tgt_vocab, d_model=16, nhead=2,
        num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=32, max_len=32,
        norm_first=True))


def test_every_parameter_has_a_reversed_source_of_its_shape():
    old, new = tiny(50, 30), tiny(30, 50)  # en-zh: 50 English pieces, 30 characters
    names = dict(old.state_dict())
    for name, param in new.state_dict().items():
        source = reverse_init.old_name(name)
        if name == "generator.bias":
            assert source is None
            continue
        assert source in names, name
        assert names[source].shape == param.shape, name


def test_init_reversed_puts_each_language_where_it_is_read(tmp_path):
    from model.core.checkpoint import save_checkpoint

    old = tiny(50, 30)
    save_checkpoint(tmp_path / "old", old, Vocab.build(f"e{i}" for i in range(46)),
                    Vocab.build(f"z{i}" for i in range(26)), card={"name": "old"})
    new = tiny(30, 50)
    reverse_init.init_reversed(new, tmp_path / "old")
    o = old.state_dict()
    n = new.state_dict()
    assert torch.equal(n["src_embed.lut.weight"], o["tgt_embed.lut.weight"])
    assert torch.equal(n["tgt_embed.lut.weight"], o["src_embed.lut.weight"])
    assert torch.equal(n["generator.weight"], o["src_embed.lut.weight"])
    assert not n["generator.bias"].any()
    assert torch.equal(n["encoder_layers.1.self_attn.q_proj.weight"],
                       o["decoder_layers.1.self_attn.q_proj.weight"])
    assert torch.equal(n["encoder_layers.0.sublayer2.norm.weight"],
                       o["decoder_layers.0.sublayer3.norm.weight"])
    assert torch.equal(n["decoder_layers.1.feed_forward.linear1.weight"],
                       o["encoder_layers.1.feed_forward.linear1.weight"])
    assert torch.equal(n["decoder_layers.0.cross_attn.v_proj.weight"],
                       o["decoder_layers.0.cross_attn.v_proj.weight"])


def test_init_reversed_refuses_other_sizes(tmp_path):
    from model.core.checkpoint import save_checkpoint

    save_checkpoint(tmp_path / "old", tiny(50, 30), Vocab.build(f"e{i}" for i in range(46)),
                    Vocab.build(f"z{i}" for i in range(26)), card={"name": "old"})
    with pytest.raises(ValueError, match="cannot start from"):
        reverse_init.init_reversed(tiny(31, 50), tmp_path / "old")


def test_start_reversed_swaps_the_vocabularies(tmp_path):
    old = tmp_path / "old"
    old.mkdir()
    tok = train_bpe([e for _, e in PAIRS], 300)
    tok.save(str(old / "src_tokenizer.json"))
    chars = Vocab.build(ch for z, _ in PAIRS for ch in z)
    (old / "tgt_vocab.json").write_text(json.dumps(chars.itos, ensure_ascii=False))
    state = tmp_path / "state"
    reverse_init.start_reversed(old, state)
    args = SimpleNamespace(direction="zh-en", src_vocab_size=300, individual_digits=0,
                           min_char_count=1)
    src, tgt = build_vocabularies(PAIRS, args, state)
    assert isinstance(src, CharSide) and src.vocab.itos == chars.itos
    assert isinstance(tgt, PieceSide) and tgt.vocab.itos == PieceSide(tok).vocab.itos


def test_the_two_sides_encode_as_the_model_reads_and_writes(tmp_path):
    args = SimpleNamespace(direction="zh-en", src_vocab_size=300, individual_digits=1,
                           min_char_count=1)
    src, tgt = build_vocabularies(PAIRS, args, tmp_path)
    encoded, kept = encode_corpus(PAIRS, src, tgt)
    assert kept == PAIRS
    for (zh, en), (src_ids, tgt_ids) in zip(PAIRS, encoded, strict=True):
        assert src_ids[-1] == src.vocab.stoi[EOS] and len(src_ids) == len(zh) + 1
        assert src.decode(src_ids[:-1]) == zh
        assert tgt_ids[0] == tgt.vocab.stoi[BOS] and tgt_ids[-1] == tgt.vocab.stoi[EOS]
        assert tgt.decode(tgt_ids[1:-1]) == en


@given(st.integers(1, 9999), st.sampled_from(["我有{}本书。", "他{}岁了。", "{}年"]))
def test_chinese_numerals_keep_the_number(n, frame):
    text = frame.format(n)
    written = chinese_numerals(text)
    assert not any(ch.isdigit() for ch in written)
    if frame == "{}年" and n >= 1000:  # a year: digit by digit
        assert written[:4] == "".join("零一二三四五六七八九"[int(d)] for d in str(n))
    else:
        numeral = written[len(frame.split("{}")[0]):len(written) - len(frame.split("{}")[1])]
        assert cn2an.cn2an(numeral, "strict") == n


def test_every_classroom_reference_is_right_by_the_sets_rule():
    items = read_set(direction="zh-en")
    assert len(items) >= 60
    assert {i.split for i in items} == {"calibration", "test"}
    for item in items:
        assert item.source == item.zh and item.reference == item.en
        assert is_right(item, item.en) and is_right(item, item.en.upper()), item.id
        assert not is_right(item, ""), item.id
        assert not is_right(item, " ".join([item.en] * 4)), item.id  # a runaway


def test_english_terms_are_met_where_a_word_starts():
    from model.training.classroom_set import english_met

    assert english_met("translat", "the translation is wrong")
    assert english_met("li ming", "yesterday li ming came")
    assert english_met("n't", "i didn't come")
    assert not english_met("no", "i know")
    assert not english_met("ai", "he said so")
    assert english_met("30", "it costs 30 yuan") and not english_met("30", "it costs 300 yuan")
    assert english_met("6:30", "at 6:30 every day")
