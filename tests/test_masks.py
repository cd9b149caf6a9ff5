import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from model.core.masks import (
    cross_attention_mask,
    decoder_self_attention_mask,
    length_padding_mask,
    padding_mask,
    subsequent_mask,
)
from model.decoding.batch import pad_rows


def test_padding_mask_marks_pad_positions_true():
    ids = torch.tensor([[5, 6, 7, 3], [5, 3, 0, 0]])
    expected = torch.tensor([[False, False, False, False], [False, False, True, True]])
    assert torch.equal(padding_mask(ids), expected)
    assert padding_mask(ids).dtype == torch.bool


def test_padding_mask_rejects_1d():
    with pytest.raises(ValueError, match=r"\(B, S\)"):
        padding_mask(torch.tensor([1, 2, 0]))


def test_subsequent_mask_hand_worked():
    expected = torch.tensor([
        [False, True, True],
        [False, False, True],
        [False, False, False],
    ])
    assert torch.equal(subsequent_mask(3), expected)
    assert subsequent_mask(0).shape == (0, 0)


def test_decoder_mask_is_padding_or_lookahead_on_a_padded_batch():
    # sentence 0: <s> a b ; sentence 1: <s> a <pad>
    tgt = torch.tensor([[2, 8, 9], [2, 8, 0]])
    m = decoder_self_attention_mask(tgt)
    assert m.shape == (2, 3, 3)
    assert torch.equal(m[0], subsequent_mask(3))
    expected_1 = torch.tensor([
        [False, True, True],
        [False, False, True],
        [False, False, True],  # the pad key stays blocked even for the last query
    ])
    assert torch.equal(m[1], expected_1)


def test_cross_attention_mask_blocks_padded_source_keys_for_every_query():
    src = torch.tensor([[4, 5, 3], [4, 3, 0]])
    m = cross_attention_mask(src, tgt_len=4)
    assert m.shape == (2, 4, 3)
    assert not m[0].any()
    assert torch.equal(m[1], torch.tensor([[False, False, True]] * 4))


def test_mask_views_for_a_padded_pair_are_consistent():
    from model.core.masks import mask_views

    v = mask_views([7, 8, 3, 0, 0], [2, 9, 0])
    assert v["source_padding"].tolist() == [False, False, False, True, True]
    assert v["encoder"].shape == (5, 5) and v["encoder"][:, 3:].all()
    assert not v["encoder"][:, :3].any()
    assert v["decoder"].tolist() == [[False, True, True], [False, False, True],
                                     [False, False, True]]
    assert (v["decoder"] == (v["subsequent"] | v["target_padding"][None, :])).all()
    assert v["cross"].shape == (3, 5) and v["cross"][:, 3:].all()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=5))
def test_padding_by_length_is_padding_by_id_when_the_pad_id_is_never_real(lengths):
    rows = [[5] * n for n in lengths]  # no real token is the pad id 0
    src = pad_rows(rows, 0)  # (B, S)
    assert torch.equal(length_padding_mask(lengths, src.size(1)), padding_mask(src, 0))
