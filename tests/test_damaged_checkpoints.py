"""Damaged or hostile pretrained folders: copies of the shipped ``pretrained/en-zh`` broken one
way each. Every one must fail with a ``CheckpointError`` whose message starts with the file's
name and says what is wrong, through the public API and through the app (pointed at a tmp
root by ``$ATTENTION_PRETRAINED_DIR``). Nothing may be unpickled, ever.
"""

from __future__ import annotations

import copy
import io
import json
import pickle
import re
import shutil
from pathlib import Path

import pytest
import torch
from apptest_helpers import DEFAULT_CHARTS, charts, markdown_sources, run_app, split_code_spans
from safetensors.torch import load_file, save_file
from shipped import trace_of

from model import CheckpointError, available_models, load_pretrained
from model.backends.load import PRETRAINED_DIR, PRETRAINED_ENV
from model.core.checkpoint import CARD, CONFIG, SRC_VOCAB, TGT_VOCAB, WEIGHTS, sha256_file

REPO = Path(__file__).resolve().parents[1]
SHIPPED = PRETRAINED_DIR / "en-zh"


# ----------------------------------------------------------------------------- helpers


def read_json(folder: Path, name: str):
    return json.loads((folder / name).read_text(encoding="utf-8"))


def write_json(folder: Path, name: str, data) -> None:
    (folder / name).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def refresh_sha(folder: Path) -> None:
    """Record the current weights' sha256 in card.json, so the hash check passes and the
    check behind it is the one tested."""
    card = read_json(folder, CARD)
    card["sha256"] = sha256_file(folder / WEIGHTS)
    write_json(folder, CARD, card)


def set_config(folder: Path, in_card: bool = True, **changes) -> None:
    """Change config.json (and, with ``in_card``, the copy recorded in card.json)."""
    write_json(folder, CONFIG, {**read_json(folder, CONFIG), **changes})
    if in_card:
        card = read_json(folder, CARD)
        card["config"] = {**card["config"], **changes}
        write_json(folder, CARD, card)


def rewrite_weights(folder: Path, change, fresh_sha: bool = True) -> None:
    """Load the safetensors state, apply ``change(state)`` in place, save it back."""
    state = load_file(str(folder / WEIGHTS))
    change(state)
    save_file({k: v.contiguous() for k, v in state.items()}, str(folder / WEIGHTS))
    if fresh_sha:
        refresh_sha(folder)


def truncate(folder: Path, keep: int, fresh_sha: bool) -> None:
    weights = folder / WEIGHTS
    weights.write_bytes(weights.read_bytes()[:keep])
    if fresh_sha:
        refresh_sha(folder)


def vocab(folder: Path, name: str, change) -> None:
    write_json(folder, name, change(read_json(folder, name)))


def set_card(folder: Path, **changes) -> None:
    write_json(folder, CARD, {**read_json(folder, CARD), **changes})


class _Canary:
    """Unpickling this creates the file ``path``: proof that a pickle was (not) loaded."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def pickle_weights(folder: Path, how: str) -> None:
    """Replace model.safetensors by a pickle (plain, or torch.save's zip) of the same tensors
    plus a canary that would create ``folder/UNPICKLED`` if anything unpickled the file."""
    state = dict(load_file(str(folder / WEIGHTS)), canary=_Canary(folder / "UNPICKLED"))
    if how == "pickle":
        data = pickle.dumps(state)
    else:
        buf = io.BytesIO()
        torch.save(state, buf)
        data = buf.getvalue()
    (folder / WEIGHTS).write_bytes(data)
    refresh_sha(folder)


def remove(folder: Path, name: str) -> None:
    (folder / name).unlink()


def transpose(state, key="generator.weight"):
    state[key] = state[key].t()


def as_int(state, key="generator.bias"):
    state[key] = state[key].round().to(torch.int64)


def with_nan(state, key="encoder_layers.1.feed_forward.linear1.weight"):
    state[key] = state[key].clone()
    state[key].view(-1)[7] = float("nan")


def drop(state, key="generator.bias"):
    del state[key]


def add(state):
    state["decoder_layers.0.extra"] = torch.zeros(3)


# (id, damage, file the message must start with, what it must say about it)
DAMAGES = [
    ("truncated weights, stale sha", lambda f: truncate(f, 5000, False), WEIGHTS,
     "sha256 does not match"),
    ("truncated weights, fresh sha", lambda f: truncate(f, 5000, True), WEIGHTS,
     "truncated or not a safetensors file"),
    ("empty weights, no sha", lambda f: (set_card(f, sha256=None), truncate(f, 0, False)),
     WEIGHTS, "truncated or not a safetensors file"),
    ("transposed tensor, fresh sha", lambda f: rewrite_weights(f, transpose), WEIGHTS,
     r"tensor generator\.weight has shape \(128, \d+\), but config\.json implies"),
    ("transposed tensor, stale sha", lambda f: rewrite_weights(f, transpose, False), WEIGHTS,
     "sha256 does not match"),
    ("integer tensor", lambda f: rewrite_weights(f, as_int), WEIGHTS,
     r"generator\.bias has dtype I64, not a float"),
    ("NaN in a tensor", lambda f: rewrite_weights(f, with_nan), WEIGHTS,
     "holds NaN or infinite values"),
    ("tensor missing", lambda f: rewrite_weights(f, drop), WEIGHTS,
     r"does not match config\.json: missing tensors \['generator\.bias'\]$"),
    ("unexpected tensor", lambda f: rewrite_weights(f, add), WEIGHTS,
     r"does not match config\.json: unexpected tensors \['decoder_layers\.0\.extra'\]$"),
    ("pickle renamed", lambda f: pickle_weights(f, "pickle"), WEIGHTS,
     "it is a Python pickle, which is never loaded"),
    ("torch.save zip renamed", lambda f: pickle_weights(f, "zip"), WEIGHTS,
     r"zip archive \(torch\.save format"),
    ("weights missing", lambda f: remove(f, WEIGHTS), WEIGHTS, "is missing from the folder"),
    ("weights is a folder", lambda f: (remove(f, WEIGHTS), (f / WEIGHTS).mkdir()), WEIGHTS,
     "in the folder 'en-zh' is not a file"),
    ("d_model disagrees with weights", lambda f: set_config(f, d_model=256), WEIGHTS,
     r"has shape \(.*128.*\), but config\.json implies \(.*256"),
    ("fewer encoder layers than weights", lambda f: set_config(f, num_encoder_layers=2),
     WEIGHTS, "has 3 encoder layers but config.json says num_encoder_layers is 2"),
    ("more decoder layers than weights", lambda f: set_config(f, num_decoder_layers=4),
     WEIGHTS, "has 3 decoder layers but config.json says num_decoder_layers is 4"),
    ("huge dim_feedforward (size check)", lambda f: set_config(f, dim_feedforward=10**9),
     WEIGHTS, r"holds [\d,]+ numbers but config\.json describes at least [\d,]+ parameters "
     r"\(d_model 128, dim_feedforward 1000000000\)"),
    ("config differs from card", lambda f: set_config(f, in_card=False, nhead=4), CONFIG,
     "disagrees with the config recorded in card.json: nhead is 4 but card.json says 8"),
    ("config unknown field", lambda f: set_config(f, attention="flash"), CONFIG,
     r"has unknown field\(s\) \['attention'\]"),
    ("config missing field", lambda f: write_json(f, CONFIG, {"d_model": 128}), CONFIG,
     r"lacks the required field\(s\) \['src_vocab_size', 'tgt_vocab_size'\]"),
    ("config string number", lambda f: set_config(f, d_model="128"), CONFIG,
     "d_model must be an integer, got '128'"),
    ("config float layers", lambda f: set_config(f, num_encoder_layers=2.5), CONFIG,
     "num_encoder_layers must be an integer, got 2.5"),
    ("config bool as int", lambda f: set_config(f, nhead=True), CONFIG,
     "nhead must be an integer, got True"),
    ("config out of range", lambda f: set_config(f, nhead=7), CONFIG,
     r"d_model \(128\) must be a positive multiple of nhead \(7\)"),
    ("config huge max_len", lambda f: set_config(f, max_len=10**9), CONFIG,
     "max_len 1,000,000,000 is larger than the 4096 positions"),
    ("config not an object", lambda f: write_json(f, CONFIG, [1, 2]), CONFIG,
     "must be a JSON object, not a list"),
    ("config not JSON", lambda f: (f / CONFIG).write_text("{d_model: 128"), CONFIG,
     "is not valid JSON: .* at line 1, column 2"),
    ("config nested too deeply", lambda f: (f / CONFIG).write_text("[" * 200_000), CONFIG,
     "is not valid JSON: nested too deeply"),
    ("config not UTF-8", lambda f: (f / CONFIG).write_bytes(b'{"d_model": "\xff"}'), CONFIG,
     "is not UTF-8 text"),
    ("config missing", lambda f: remove(f, CONFIG), CONFIG, "is missing from the folder"),
    ("card missing", lambda f: remove(f, CARD), CARD, "is missing from the folder"),
    ("card not an object", lambda f: write_json(f, CARD, "hello"), CARD,
     "must be a JSON object, not a string"),
    ("card sha256 of other weights", lambda f: set_card(f, sha256="0" * 64), WEIGHTS,
     "sha256 does not match the one in card.json"),
    ("card sha256 not hex", lambda f: set_card(f, sha256="**bold**"), CARD,
     "sha256 must be 64 lower-case hex digits"),
    ("card metrics not numbers", lambda f: set_card(f, test_metrics={"bleu": "**99**"}), CARD,
     "test_metrics.bleu must be a number"),
    ("card task not a string", lambda f: set_card(f, task=["en-zh"]), CARD,
     "task must be a string"),
    ("src vocab missing", lambda f: remove(f, SRC_VOCAB), SRC_VOCAB,
     "is missing from the folder"),
    ("tgt vocab missing", lambda f: remove(f, TGT_VOCAB), TGT_VOCAB,
     "is missing from the folder"),
    ("src vocab not JSON", lambda f: (f / SRC_VOCAB).write_text('["<pad>", '), SRC_VOCAB,
     "is not valid JSON"),
    ("src vocab not a list", lambda f: write_json(f, SRC_VOCAB, {"<pad>": 0}), SRC_VOCAB,
     "must be a JSON list of tokens, not an object"),
    ("src vocab duplicates", lambda f: vocab(f, SRC_VOCAB, lambda v: [*v[:-2], v[4], v[5]]),
     SRC_VOCAB, r"2 token\(s\) listed twice, e\.g\."),
    ("tgt vocab specials not first", lambda f: vocab(f, TGT_VOCAB, lambda v: v[::-1]),
     TGT_VOCAB, r"the first 4 entries must be \['<pad>', '<unk>', '<s>', '</s>'\]"),
    ("tgt vocab wrong size", lambda f: vocab(f, TGT_VOCAB, lambda v: v[:-1]), TGT_VOCAB,
     r"has \d+ tokens but config\.json says \d+"),
    ("src vocab entry is an object", lambda f: vocab(f, SRC_VOCAB, lambda v: [*v[:-1], {}]),
     SRC_VOCAB, r"entry \d+ is \{\}; every entry must be a non-empty string"),
    ("src vocab entry is a number", lambda f: vocab(f, SRC_VOCAB, lambda v: [*v[:-1], 7]),
     SRC_VOCAB, r"entry \d+ is 7"),
    ("tgt vocab entry with a newline", lambda f: vocab(f, TGT_VOCAB, lambda v: [*v[:-1], "a\nb"]),
     TGT_VOCAB, "contains a space or an invisible character"),
]


@pytest.fixture()
def good(tmp_path) -> Path:
    """A fresh copy of the shipped en-zh folder."""
    return Path(shutil.copytree(SHIPPED, tmp_path / "en-zh"))


# ------------------------------------------------------------------------------ the API


def test_the_copy_loads_so_each_failure_below_is_the_damage(good):
    """The undamaged copy loads, has the card's parameter count, and translates like the
    shipped model."""
    m = load_pretrained(good)
    assert m.model.num_parameters() == m.card["parameters"] > 0 and not m.model.training
    assert m.generate("we eat rice .").output_text == \
        trace_of("en-zh", "we eat rice .").output_text


@pytest.mark.parametrize(("case", "damage", "file", "problem"), DAMAGES,
                         ids=[d[0] for d in DAMAGES])
def test_damaged_folder_raises_checkpoint_error_naming_file_and_problem(
        good, case, damage, file, problem):
    """Each damage raises CheckpointError (nothing else), the message starts with the
    file's name, says the problem, and is short; a pickle's canary is never triggered."""
    damage(good)
    with pytest.raises(CheckpointError) as info:
        load_pretrained(good)
    message = str(info.value)
    assert message.startswith(file), message
    assert re.search(problem, message), message
    assert len(message) < 300, message
    assert not (good / "UNPICKLED").exists()


def test_the_canary_would_show_an_unpickle(tmp_path):
    """The canary used above works: rebuilding it from its ``__reduce__`` (what unpickling
    does; ``copy`` does the same without a pickle) creates the file, so its absence after a
    failed load means the loader never unpickled the weights."""
    copy.deepcopy(_Canary(tmp_path / "UNPICKLED")).close()
    assert (tmp_path / "UNPICKLED").exists()


def test_no_project_code_loads_pickles():
    """No project ``.py`` file (outside .venv) calls a pickle-based loader."""
    banned = ["torch" + ".load(", "pickle" + ".load", "allow_pickle" + "=True",
              "joblib" + ".load", "dill" + ".load", "cloudpickle" + ".load"]
    hits = []
    files = [p for p in REPO.rglob("*.py")
             if not any(part.startswith(".") for part in p.relative_to(REPO).parts)]
    assert len(files) > 20 and REPO / "model" / "core" / "checkpoint.py" in files
    for path in files:
        text = path.read_text(encoding="utf-8")
        hits += [f"{path.relative_to(REPO)}: {b}" for b in banned if b in text]
    assert not hits, hits


def test_the_pretrained_root_comes_from_the_environment_at_call_time(tmp_path, good,
                                                                      monkeypatch):
    """$ATTENTION_PRETRAINED_DIR, read at each call, decides what the names mean: with it
    set to a root whose en-zh is damaged, loading "en-zh" fails naming the file, although
    the repository's en-zh is fine; set to a file, there are no models (no exception);
    unset, the repository's pretrained/ is used again."""
    root = tmp_path
    (root / "other").mkdir()
    (root / ".hidden").mkdir()
    monkeypatch.setenv(PRETRAINED_ENV, str(root))
    assert available_models() == ["en-zh", "other"]
    remove(good, SRC_VOCAB)
    with pytest.raises(CheckpointError, match="src_vocab.json is missing"):
        load_pretrained("en-zh")
    with pytest.raises(CheckpointError, match="no pretrained model 'nope'.*en-zh, other"):
        load_pretrained("nope")
    monkeypatch.setenv(PRETRAINED_ENV, str(good / CARD))  # a file, not a folder
    assert available_models() == []
    monkeypatch.delenv(PRETRAINED_ENV)
    assert "other" not in available_models()
    assert load_pretrained("en-zh").name == "en-zh"


def test_a_registered_name_wins_over_a_folder_of_the_same_name_in_the_cwd(
        tmp_path, monkeypatch):
    """``load_pretrained("en-zh")`` loads the registry's model even when the working
    directory holds a (damaged) folder called en-zh."""
    (tmp_path / "en-zh").mkdir()
    monkeypatch.chdir(tmp_path)
    assert load_pretrained("en-zh").card["sha256"] == read_json(SHIPPED, CARD)["sha256"]


# ------------------------------------------------------------------------------ the app

BROKEN = "broken-weights"
MD_NAME = "bad_**vocab**_[x](y)"  # a folder name Markdown would act on


@pytest.fixture()
def root(tmp_path, monkeypatch) -> Path:
    """A pretrained root with the good en-zh copy and two damaged folders, set as
    $ATTENTION_PRETRAINED_DIR before the app starts."""
    root = tmp_path / "root"
    shutil.copytree(SHIPPED, root / "en-zh")
    truncate(Path(shutil.copytree(SHIPPED, root / BROKEN)), 5000, False)
    remove(Path(shutil.copytree(SHIPPED, root / MD_NAME)), SRC_VOCAB)
    monkeypatch.setenv(PRETRAINED_ENV, str(root))
    return root


def _sidebar_error(at) -> str:
    (error,) = at.sidebar.error
    return error.value


def test_app_shows_a_short_clear_error_for_damaged_models_and_recovers(root):
    """The app lists the env root's folders; a damaged model gives one short sidebar error
    naming the file and the problem (no exception, no chart, folder name in a code span,
    nothing Markdown-active raw); the good model then draws its charts; and a repaired
    folder loads at once (a failure is never cached)."""
    at = run_app()
    model = at.selectbox(key="model")
    assert model.options[:-1] == ["en-zh", *sorted([BROKEN, MD_NAME])]  # the default first
    assert model.value == "en-zh"
    assert model.options[-1] == "📂 Open a folder…"  # then any folder, by its path
    assert len(charts(at)) == DEFAULT_CHARTS and not at.error

    model.select(BROKEN).run()
    assert not at.exception
    error = _sidebar_error(at)
    assert error.startswith(f"Model `{BROKEN}` could not be loaded: model\\.safetensors")
    assert "sha256 does not match" in error and len(error) < 300
    assert not charts(at) and "Choose a model" in at.info[0].value

    at.selectbox(key="model").select(MD_NAME).run()
    assert not at.exception
    error = _sidebar_error(at)
    assert error.startswith(f"Model `{MD_NAME}` could not be loaded: src\\_vocab\\.json is "
                            "missing") and len(error) < 300
    for src in markdown_sources(at):
        outside = split_code_spans(src)[1]  # the name is shown in a code span
        assert "**vocab**" not in outside and "[x](y)" not in outside, src

    at.selectbox(key="model").select("en-zh").run()
    assert not at.exception and not at.error and len(charts(at)) == DEFAULT_CHARTS

    shutil.copy(SHIPPED / SRC_VOCAB, root / MD_NAME / SRC_VOCAB)  # repair it
    at.selectbox(key="model").select(MD_NAME).run()
    assert not at.exception and not at.error and len(charts(at)) == DEFAULT_CHARTS


def test_app_with_an_empty_root_says_so(tmp_path, monkeypatch):
    """An empty $ATTENTION_PRETRAINED_DIR (and an empty Hugging Face cache) gives a sidebar
    message naming it, no exception, and the folder box to open a model by its path."""
    monkeypatch.setenv(PRETRAINED_ENV, str(tmp_path))
    at = run_app()
    (warning,) = at.sidebar.warning
    assert "No models found in" in warning.value and str(tmp_path) in warning.value
    assert at.text_input(key="model_folder").value == ""
    assert not charts(at) and not at.sidebar.error
