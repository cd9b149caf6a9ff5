import json

import pytest
import torch

from model import CheckpointError, load_pretrained
from model.core.checkpoint import load_checkpoint, save_checkpoint
from model.core.vocab import SPECIALS, Vocab


@pytest.fixture()
def saved(tmp_path, tiny_model):
    src = Vocab([*SPECIALS, *[f"w{i}" for i in range(16)]])
    tgt = Vocab([*SPECIALS, *[chr(0x4E00 + i) for i in range(20)]])
    folder = tmp_path / "tiny"
    save_checkpoint(folder, tiny_model, src, tgt, card={"task": "none", "seed": 0})
    return folder


def test_round_trip_restores_every_weight(saved, tiny_model):
    model, src, tgt, card = load_checkpoint(saved)[:4]
    assert card["parameters"] == tiny_model.num_parameters() and len(card["sha256"]) == 64
    assert len(src) == 20 and len(tgt) == 24
    for k, v in tiny_model.state_dict().items():
        assert torch.equal(model.state_dict()[k], v), k
    assert not model.training
    # The table no checkpoint holds is the model's own, and the weights stay trainable.
    assert torch.equal(model.positional.pe, tiny_model.positional.pe)
    assert all(p.requires_grad for p in model.parameters())
    src_ids = torch.tensor([[5, 6, 7, 2]])
    with torch.inference_mode():
        got, want = model.encode(src_ids), tiny_model.eval().encode(src_ids)
    assert torch.equal(got.memory, want.memory)


def _damage(folder, name, text=None, data=None):
    path = folder / name
    if data is not None:
        path.write_bytes(data)
    else:
        path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    ("name", "how", "message"),
    [
        ("model.safetensors", "truncate", "sha256"),
        ("src_vocab.json", "delete", "src_vocab.json is missing"),
        ("tgt_vocab.json", "garble", "tgt_vocab.json"),
        ("config.json", "resize", "config.json"),
    ],
)
def test_damaged_checkpoint_names_the_file(saved, name, how, message):
    path = saved / name
    if how == "truncate":
        _damage(saved, name, data=path.read_bytes()[:100])
    elif how == "delete":
        path.unlink()
    elif how == "garble":
        _damage(saved, name, text="{not json")
    elif how == "resize":
        config = json.loads(path.read_text())
        config["d_model"] = 64
        _damage(saved, name, text=json.dumps(config))
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(saved)


def test_truncated_weights_without_a_hash_still_fail_clearly(saved):
    card = json.loads((saved / "card.json").read_text())
    card.pop("sha256")
    (saved / "card.json").write_text(json.dumps(card))
    weights = saved / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:200])
    with pytest.raises(CheckpointError, match="model.safetensors"):
        load_checkpoint(saved)


def test_unknown_model_name_lists_what_is_available():
    with pytest.raises(CheckpointError, match="en-zh"):
        load_pretrained("no-such-model")
    with pytest.raises(CheckpointError):
        load_pretrained("../pretrained")


def test_float16_weights_load_as_float32_parameters(tmp_path, tiny_model):
    """A checkpoint stored in half precision is converted to the model's own float type."""
    import copy

    half = copy.deepcopy(tiny_model).half()
    src = Vocab([*SPECIALS, *[f"w{i}" for i in range(16)]])
    tgt = Vocab([*SPECIALS, *[chr(0x4E00 + i) for i in range(20)]])
    save_checkpoint(tmp_path / "half", half, src, tgt, card={"task": "none", "seed": 0})
    model = load_checkpoint(tmp_path / "half").model
    for k, v in half.state_dict().items():
        assert model.state_dict()[k].dtype == torch.float32, k
        assert torch.equal(model.state_dict()[k], v.float()), k


def test_a_model_with_its_own_head_width_round_trips(tmp_path):
    """Our Transformer with head_dim != d_model / nhead saves and loads (config.json records
    head_dim), and head_internals equals its attention maps."""
    from model.core.config import TransformerConfig
    from model.core.transformer import Transformer

    config = TransformerConfig(src_vocab_size=20, tgt_vocab_size=24, d_model=32, nhead=4,
                               head_dim=6, num_encoder_layers=1, num_decoder_layers=1,
                               dim_feedforward=64, max_len=16)
    torch.manual_seed(0)
    model = Transformer(config)
    src = Vocab([*SPECIALS, *[f"w{i}" for i in range(16)]])
    tgt = Vocab([*SPECIALS, *[chr(0x4E00 + i) for i in range(20)]])
    save_checkpoint(tmp_path / "m", model, src, tgt, card={"task": "none", "seed": 0})
    assert json.loads((tmp_path / "m" / "config.json").read_text())["head_dim"] == 6
    loaded = load_checkpoint(tmp_path / "m").model
    assert loaded.config == config
    assert loaded.encoder_layers[0].self_attn.q_proj.weight.shape == (24, 32)
    for k, v in model.state_dict().items():
        assert torch.equal(loaded.state_dict()[k], v), k
    from model import head_internals

    tr = load_pretrained(tmp_path / "m")
    trace = tr.generate("w1 w2 w3", max_new_tokens=4)
    for kind, maps in (("encoder", trace.encoder_attentions),
                       ("cross", trace.cross_attentions)):
        for head in range(4):
            hi = head_internals(tr, trace, kind, layer=0, head=head)
            assert hi.d_k == 6 and hi.q.shape[1] == 6
            torch.testing.assert_close(torch.from_numpy(hi.weights),
                                       torch.from_numpy(maps[0, head]), atol=1e-6, rtol=0)
