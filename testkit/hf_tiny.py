"""Tiny random-weight Hugging Face encoder-decoder models, built offline, for the tests (and
the tokenizers of ``benchmarks/hf_shapes.py``).

``build_tiny(family, folder)`` writes a real, loadable Hugging Face folder (``config.json``,
``model.safetensors``, ``generation_config.json`` and the tokenizer files) for one of four
families (``FAMILIES``) or three further geometries of them (``GEOMETRIES``, below).  Every
tokenizer is trained here, in a few milliseconds, on the ~30 English/Chinese pairs in
``testkit/data/hf_tiny_sentences.tsv``, so nothing is ever downloaded, and every folder loads
with ``AutoModelForSeq2SeqLM`` / ``AutoTokenizer`` (``local_files_only=True``) into the
family's own classes:

==========  =========================  ====================================================
family      tokenizer class            files (trained here)
==========  =========================  ====================================================
marian      ``MarianTokenizer``        ``source.spm`` (English unigram), ``target.spm``
                                       (Chinese unigram), joint ``vocab.json``
                                       (``</s>``=0, ``<unk>``=1, ..., ``<pad>`` last)
bart        ``RobertaTokenizer``       byte-level BPE ``vocab.json`` + ``merges.txt`` +
            (transformers 5's          ``tokenizer.json`` (``<s>``=0, ``<pad>``=1,
            ``BartTokenizer`` alias)   ``</s>``=2, ``<unk>``=3, ``<mask>`` last)
t5          ``T5Tokenizer``            joint unigram ``spiece.model`` -> ``tokenizer.json``
            (tokenizers-backed)        (``<pad>``=0, ``</s>``=1, ``<unk>``=2, then
                                       ``EXTRA_IDS`` sentinels ``<extra_id_N>`` at the end)
m2m100      ``M2M100Tokenizer``        joint BPE ``sentencepiece.bpe.model`` + ``vocab.json``
                                       (``<s>``=0, ``<pad>``=1, ``</s>``=2, ``<unk>``=3),
                                       then the 100 ``__xx__`` language tokens
==========  =========================  ====================================================

``GEOMETRIES``: the shapes of the published models the app must also open:

==========  ========================================================================
t5-v1_1     ``T5ForConditionalGeneration`` as google/t5-v1_1-* and google/flan-t5-*:
            H * d_kv != d_model (4 x 12 = 48 vs 32), ``feed_forward_proj="gated-gelu"``
            (``wi_0``, ``wi_1``), an untied ``lm_head`` (``tie_word_embeddings`` false in
            config.json, so the decoder output is not scaled by d_model^-0.5); t5 tokenizer
mt5         ``MT5ForConditionalGeneration`` as google/mt5-*: 6 heads x d_kv 8 = 48 vs 32,
            gated-gelu, untied ``lm_head``; t5 tokenizer
bart-zh     ``BartForConditionalGeneration`` whose byte-level BPE (``RobertaTokenizer``) is
            trained on the Chinese side only with few merges, so most Chinese characters
            are two or three byte-level pieces (``ä½``, ``ł``) and targets are pieces of
            characters
mbart-zh    ``MBartForConditionalGeneration`` as facebook/mbart-large-50-many-to-many-mmt:
            pre-LN, scaled embeddings, a SentencePiece ``MBartTokenizer`` with the 52
            language codes; ``zh_CN`` forced first (``forced_bos_token_id``)
==========  ========================================================================

Special ids follow each family's real checkpoints (Marian: decoder start = pad, the last id;
BART: decoder start = ``</s>``; T5: decoder start = pad = 0; M2M100: decoder start = ``</s>``,
and ``generation_config.forced_bos_token_id`` is the ``__zh__`` token).  The saved generation
config is plain greedy search (one beam, no sampling, no bad words, no n-gram blocking, no
forced ``</s>``, ``max_length`` 64).

Random weights at the families' own init scale make greedy decoding repeat one token (often the
start token itself, so BART stops at once with ``</s>``).  After the seeded init, the linear
layers are therefore scaled by fixed per-family gains (``GAINS``: feed-forward, query/key,
self-attention value/output, cross-attention value/output), chosen so that greedy decoding of
the sentences gives varied tokens that differ from sentence to sentence, and the ``</s>`` row of
the (tied) output embedding is shrunk by ``EOS_SCALE`` so that ``</s>`` seldom wins: with seed 0
generation usually runs until ``max_new_tokens``/``max_length`` (see ``_discourage_eos``).
Everything is deterministic: the same seed gives byte-identical files.

Notes on transformers 5.23 (what these folders show):

* The default ``attn_implementation`` is ``"sdpa"``, which returns no attention weights
  (``output_attentions=True`` gives empty tuples and a warning): load with
  ``attn_implementation="eager"`` to see attention maps.  ``generate`` uses an
  ``EncoderDecoderCache``.
* ``BartTokenizer`` is an alias of the tokenizers-backed ``RobertaTokenizer``, and
  ``T5Tokenizer`` is tokenizers-backed; their ``save_pretrained`` writes ``tokenizer.json`` only.
* M2M100's ``__xx__`` language tokens are neither counted by ``len(tokenizer)`` nor dropped by
  ``decode(..., skip_special_tokens=True)``; the model's ``vocab_size`` covers them.
* ``config.save_pretrained`` refuses generation parameters that are not declared config fields
  (they belong in ``generation_config.json``).  ``T5Config`` and ``MT5Config`` always set
  ``tie_word_embeddings`` true (T5 turns a false into ``scale_decoder_outputs`` false), so a
  fresh model is tied; ``_untie`` gives it its own ``lm_head`` and ``build_tiny`` writes
  ``tie_word_embeddings: false`` as the published config.json files have it.  Loading then
  logs that both tensors are present and differ, and keeps them apart.
* A config with ``auto_map`` but a known ``model_type`` (``remote_code_folder``) loads with the
  library's own classes, silently, when ``trust_remote_code`` is not given.

Other helpers: ``to_hf_cache`` (the hub cache layout), ``remote_code_folder`` (a folder whose
config asks for custom code), ``pickle_only_folder`` (weights only in ``pytorch_model.bin``) and
``tiny_folder`` (one build per test session and family).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import sentencepiece as spm  # noqa: E402
import torch  # noqa: E402
from tokenizers import ByteLevelBPETokenizer  # noqa: E402
from transformers import (  # noqa: E402
    BartConfig,
    BartForConditionalGeneration,
    GenerationConfig,
    M2M100Config,
    M2M100ForConditionalGeneration,
    M2M100Tokenizer,
    MarianConfig,
    MarianMTModel,
    MarianTokenizer,
    MBartConfig,
    MBartForConditionalGeneration,
    MBartTokenizer,
    MT5Config,
    MT5ForConditionalGeneration,
    PreTrainedModel,
    RobertaTokenizer,
    T5Config,
    T5ForConditionalGeneration,
    T5Tokenizer,
)

FAMILIES = ("marian", "bart", "t5", "m2m100")
# More shapes of these families (module docstring).
GEOMETRIES = ("t5-v1_1", "mt5", "bart-zh", "mbart-zh")
ALL_FAMILIES = FAMILIES + GEOMETRIES
UNTIED = ("t5-v1_1", "mt5")  # their own lm_head, not the embedding table

SENTENCES_FILE = Path(__file__).parent / "data" / "hf_tiny_sentences.tsv"

D_MODEL = 32
LAYERS = 2
HEADS = 4
FFN = 64
MAX_POSITIONS = 64
MAX_LENGTH = 64
# T5-like families: (num_heads, d_kv); T5 v1.1 and mT5 have num_heads * d_kv != D_MODEL
T5_HEADS = {"t5": (HEADS, D_MODEL // HEADS), "t5-v1_1": (HEADS, 12), "mt5": (6, 8)}
GAINS = {
    "marian": {"ffn": 15.0, "qk": 15.0, "vo": 1.0, "cross": 10.0},
    "bart": {"ffn": 30.0, "qk": 10.0, "vo": 1.0, "cross": 10.0},
    "t5": {"ffn": 6.0, "qk": 3.0, "vo": 1.0, "cross": 1.0},
    "m2m100": {"ffn": 15.0, "qk": 25.0, "vo": 1.0, "cross": 5.0},
    "t5-v1_1": {"ffn": 6.0, "qk": 3.0, "vo": 1.0, "cross": 1.0},
    "mt5": {"ffn": 3.0, "qk": 4.0, "vo": 0.5, "cross": 0.5},
    "bart-zh": {"ffn": 15.0, "qk": 20.0, "vo": 1.0, "cross": 5.0},
    "mbart-zh": {"ffn": 15.0, "qk": 20.0, "vo": 1.0, "cross": 5.0},
}
EXTRA_IDS = 8  # T5 sentinels (the real checkpoints have 100)
EOS_SCALE = 0.5  # the </s> output row is shrunk by this factor (see _discourage_eos)

_BUILT: dict[str, Path] = {}


def sentence_pairs() -> list[tuple[str, str]]:
    """The (English, Chinese) pairs the tokenizers are trained on."""
    pairs = []
    for line in SENTENCES_FILE.read_text(encoding="utf-8").splitlines():
        if line.strip():
            english, chinese = line.split("\t")
            pairs.append((english, chinese))
    return pairs


def _train_spm(sentences: list[str], path: Path, vocab_size: int, model_type: str = "unigram",
               **ids: int | str) -> spm.SentencePieceProcessor:
    """Train a small SentencePiece model on ``sentences``, write it to ``path``, return it.

    ``ids`` are SentencePiece's ``unk_id``/``bos_id``/``eos_id``/``pad_id`` (-1 = absent),
    or other trainer options (``normalization_rule_name``).
    ``hard_vocab_limit=False`` lets the tiny corpus end with fewer pieces than asked for.
    """
    buffer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences), model_writer=buffer, vocab_size=vocab_size,
        model_type=model_type, character_coverage=1.0, hard_vocab_limit=False, num_threads=1,
        minloglevel=2, **ids,
    )
    path.write_bytes(buffer.getvalue())
    return spm.SentencePieceProcessor(model_file=str(path))


def _plain_pieces(*processors: spm.SentencePieceProcessor) -> list[str]:
    """The ordinary pieces of the processors (no control or unknown pieces), first seen first."""
    pieces: dict[str, None] = {}
    for processor in processors:
        for i in range(processor.get_piece_size()):
            if not (processor.is_control(i) or processor.is_unknown(i)):
                pieces.setdefault(processor.id_to_piece(i), None)
    return list(pieces)


def _write_json(data: object, path: Path) -> None:
    """Write ``data`` as UTF-8 JSON."""
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")


def _marian_tokenizer(folder: Path) -> MarianTokenizer:
    """MarianTokenizer: an English source.spm, a Chinese target.spm and one joint vocab.json."""
    pairs = sentence_pairs()
    source = _train_spm([en for en, _ in pairs], folder / "source.spm", 120)
    target = _train_spm([zh for _, zh in pairs], folder / "target.spm", 160)
    tokens = ["</s>", "<unk>", *_plain_pieces(source, target), "<pad>"]
    _write_json({token: i for i, token in enumerate(tokens)}, folder / "vocab.json")
    with warnings.catch_warnings():  # without sacremoses, punctuation is not normalized
        warnings.filterwarnings("ignore", "Recommended: pip install sacremoses")
        return MarianTokenizer(source_spm=str(folder / "source.spm"),
                               target_spm=str(folder / "target.spm"),
                               vocab=str(folder / "vocab.json"), source_lang="en",
                               target_lang="zh")


def _bart_tokenizer(folder: Path) -> RobertaTokenizer:
    """Byte-level BPE (GPT-2/RoBERTa style) trained with ``tokenizers``, ``<mask>`` last."""
    pairs = sentence_pairs()
    trainer = ByteLevelBPETokenizer()
    trainer.train_from_iterator([text for pair in pairs for text in pair], vocab_size=500,
                                min_frequency=1, show_progress=False,
                                special_tokens=["<s>", "<pad>", "</s>", "<unk>"])
    return _roberta_files(folder, trainer)


def _roberta_files(folder: Path, trainer: ByteLevelBPETokenizer) -> RobertaTokenizer:
    """The trained byte-level BPE as a RobertaTokenizer, its vocab.json and merges.txt
    written to ``folder``, ``<mask>`` last."""
    model = json.loads(trainer.to_str())["model"]
    vocab = dict(model["vocab"])
    vocab["<mask>"] = len(vocab)
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    # save_pretrained writes only tokenizer.json; the real checkpoints also have these two.
    _write_json(vocab, folder / "vocab.json")
    lines = ["#version: 0.2", *(" ".join(merge) for merge in merges)]
    (folder / "merges.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return RobertaTokenizer(vocab=vocab, merges=merges)


def _bart_zh_tokenizer(folder: Path) -> RobertaTokenizer:
    """Byte-level BPE trained on the Chinese sentences only, with few merges (vocabulary
    300: the 256 bytes, the specials and ~40 merges), so Chinese characters are mostly split
    into byte-level pieces; ``<mask>`` last."""
    trainer = ByteLevelBPETokenizer()
    trainer.train_from_iterator([zh for _, zh in sentence_pairs()], vocab_size=300,
                                min_frequency=1, show_progress=False,
                                special_tokens=["<s>", "<pad>", "</s>", "<unk>"])
    return _roberta_files(folder, trainer)


def _t5_tokenizer(folder: Path) -> T5Tokenizer:
    """T5Tokenizer converted from a joint unigram spiece.model (pad 0, eos 1, unk 2, no bos)."""
    pairs = sentence_pairs()
    _train_spm([text for pair in pairs for text in pair], folder / "spiece.model", 240,
               pad_id=0, eos_id=1, unk_id=2, bos_id=-1)
    # transformers 5 converts the SentencePiece model to a tokenizers Unigram model (with its
    # precompiled normalizer), as from_pretrained does for a folder holding only spiece.model.
    native = T5Tokenizer.convert_to_native_format(vocab_file=str(folder / "spiece.model"),
                                                  extra_ids=EXTRA_IDS)
    return T5Tokenizer(**native)


def _m2m100_tokenizer(folder: Path) -> M2M100Tokenizer:
    """M2M100Tokenizer: a joint BPE sentencepiece.bpe.model and a fairseq-ordered vocab.json."""
    pairs = sentence_pairs()
    processor = _train_spm([text for pair in pairs for text in pair],
                           folder / "sentencepiece.bpe.model", 240, model_type="bpe")
    tokens = ["<s>", "<pad>", "</s>", "<unk>", *_plain_pieces(processor)]
    _write_json({token: i for i, token in enumerate(tokens)}, folder / "vocab.json")
    return M2M100Tokenizer(vocab_file=str(folder / "vocab.json"),
                           spm_file=str(folder / "sentencepiece.bpe.model"),
                           src_lang="en", tgt_lang="zh")


def _mbart_tokenizer(folder: Path) -> MBartTokenizer:
    """MBartTokenizer (mBART-50's fairseq order: ``<s> <pad> </s> <unk>``, the pieces, the
    language codes ``en_XX`` .. ``zh_CN``, ``<mask>``) converted from a joint unigram
    sentencepiece.bpe.model, large enough to hold every Chinese character of the pairs."""
    pairs = sentence_pairs()
    # No NFKC: the converted tokenizer has no normalizer, so "？" must be a piece of its own.
    _train_spm([text for pair in pairs for text in pair], folder / "sentencepiece.bpe.model",
               600, normalization_rule_name="identity")
    native = MBartTokenizer.convert_to_native_format(
        vocab_file=str(folder / "sentencepiece.bpe.model"))
    return MBartTokenizer(**native, src_lang="en_XX", tgt_lang="zh_CN")


def train_tokenizer(family: str, folder: Path):
    """Train and return the family's tokenizer, writing its files into ``folder`` (they may
    already be there); ``benchmarks/hf_shapes.py`` uses it for the published geometries."""
    builders = {"marian": _marian_tokenizer, "bart": _bart_tokenizer, "t5": _t5_tokenizer,
                "m2m100": _m2m100_tokenizer, "t5-v1_1": _t5_tokenizer, "mt5": _t5_tokenizer,
                "bart-zh": _bart_zh_tokenizer, "mbart-zh": _mbart_tokenizer}
    tokenizer = builders[family](folder)
    tokenizer.model_max_length = MAX_POSITIONS
    return tokenizer


def _vocab_size(family: str, tokenizer) -> int:
    """The model's vocabulary size: every id the tokenizer can produce.

    M2M100Tokenizer's language tokens get ids after ``vocab.json`` but (in transformers 5) are
    not counted by ``len(tokenizer)``; like the real checkpoints, the model also keeps
    ``num_madeup_words`` unused ids after them.
    """
    if family == "m2m100":
        return tokenizer.encoder_size + len(tokenizer.lang_code_to_id) + tokenizer.num_madeup_words
    return len(tokenizer)


def _config(family: str, tokenizer):
    """A tiny config of the family whose special ids agree with ``tokenizer``."""
    vocab_size = _vocab_size(family, tokenizer)
    pad, eos = tokenizer.pad_token_id, tokenizer.eos_token_id
    if family in T5_HEADS:
        heads, d_kv = T5_HEADS[family]
        v1_1 = dict(feed_forward_proj="gated-gelu", tie_word_embeddings=False)
        return (MT5Config if family == "mt5" else T5Config)(
            vocab_size=vocab_size, d_model=D_MODEL, d_kv=d_kv, num_heads=heads, d_ff=FFN,
            num_layers=LAYERS, num_decoder_layers=LAYERS, dropout_rate=0.0, pad_token_id=pad,
            eos_token_id=eos, decoder_start_token_id=pad, **(v1_1 if family in UNTIED else {}))
    common = dict(vocab_size=vocab_size, d_model=D_MODEL, encoder_layers=LAYERS,
                  decoder_layers=LAYERS, encoder_attention_heads=HEADS,
                  decoder_attention_heads=HEADS, encoder_ffn_dim=FFN, decoder_ffn_dim=FFN,
                  max_position_embeddings=MAX_POSITIONS, dropout=0.0, attention_dropout=0.0,
                  activation_dropout=0.0, pad_token_id=pad, eos_token_id=eos)
    if family == "marian":
        # As in Helsinki-NLP/opus-mt-*: swish, scaled embeddings, decoding starts from <pad>.
        return MarianConfig(**common, activation_function="swish", scale_embedding=True,
                            decoder_start_token_id=pad, forced_eos_token_id=None)
    if family in ("bart", "bart-zh"):
        return BartConfig(**common, bos_token_id=tokenizer.bos_token_id,
                          decoder_start_token_id=eos, forced_eos_token_id=None)
    if family == "mbart-zh":  # as facebook/mbart-large-50-many-to-many-mmt: pre-LN, scaled
        return MBartConfig(**common, bos_token_id=tokenizer.bos_token_id, scale_embedding=True,
                           decoder_start_token_id=eos, forced_eos_token_id=None)
    return M2M100Config(**common, bos_token_id=tokenizer.bos_token_id, decoder_start_token_id=eos,
                        encoder_layerdrop=0.0, decoder_layerdrop=0.0)


_MODEL_CLASSES: dict[str, type[PreTrainedModel]] = {
    "marian": MarianMTModel,
    "bart": BartForConditionalGeneration,
    "t5": T5ForConditionalGeneration,
    "m2m100": M2M100ForConditionalGeneration,
    "t5-v1_1": T5ForConditionalGeneration,
    "mt5": MT5ForConditionalGeneration,
    "bart-zh": BartForConditionalGeneration,
    "mbart-zh": MBartForConditionalGeneration,
}


def _generation_config(family: str, config, tokenizer) -> GenerationConfig:
    """Plain greedy search with the model's special ids (M2M100 also forces ``__zh__`` first,
    mBART ``zh_CN``)."""
    forced_bos = (tokenizer.get_lang_id("zh") if family == "m2m100"
                  else tokenizer.convert_tokens_to_ids("zh_CN") if family == "mbart-zh"
                  else None)
    return GenerationConfig(
        decoder_start_token_id=config.decoder_start_token_id,
        bos_token_id=getattr(config, "bos_token_id", None),
        eos_token_id=config.eos_token_id, pad_token_id=config.pad_token_id,
        forced_bos_token_id=forced_bos, forced_eos_token_id=None, bad_words_ids=None,
        no_repeat_ngram_size=0, num_beams=1, do_sample=False, max_length=MAX_LENGTH,
    )


def _amplify_layers(model: PreTrainedModel, family: str) -> None:
    """Scale the random linear layers (all but the output projection) by ``GAINS[family]``."""
    gains = GAINS[family]
    output = model.get_output_embeddings()
    with torch.no_grad():
        for name, module in model.named_modules():
            if isinstance(module, torch.nn.Linear) and module is not output:
                leaf = name.rsplit(".", 1)[-1]
                if leaf in {"fc1", "fc2", "wi", "wo", "wi_0", "wi_1"}:
                    module.weight *= gains["ffn"]
                elif leaf in {"q_proj", "k_proj", "q", "k"}:
                    module.weight *= gains["qk"]
                elif "encoder_attn" in name or "EncDecAttention" in name:
                    module.weight *= gains["cross"]
                else:
                    module.weight *= gains["vo"]


def _discourage_eos(model: PreTrainedModel, eos_id: int) -> None:
    """Shrink the ``</s>`` row of the (tied) output embedding by ``EOS_SCALE``.

    With random weights ``</s>`` would otherwise win as often as any other token and most
    sentences would stop after a step or two; a smaller row brings its logit toward 0, so greedy
    decoding stops only when the other logits are weak.  Deterministic: no randomness involved.
    """
    with torch.no_grad():
        model.get_output_embeddings().weight[eos_id] *= EOS_SCALE


def _untie(model: PreTrainedModel) -> None:
    """Give the model its own ``lm_head`` (V, D), normal with std 1 as T5's init does for an
    untied head, instead of the shared embedding table."""
    weight = model.lm_head.weight
    model.lm_head.weight = torch.nn.Parameter(torch.randn(weight.shape, dtype=weight.dtype))


def _published_config(folder: Path) -> None:
    """config.json as google/flan-t5-* and google/mt5-* publish it: ``tie_word_embeddings``
    false, and none of ``scale_decoder_outputs``, ``is_gated_act``, ``dense_act_fn`` (which
    transformers 5 derives from ``tie_word_embeddings`` and ``feed_forward_proj``)."""
    path = folder / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config["tie_word_embeddings"] = False
    for derived in ("scale_decoder_outputs", "is_gated_act", "dense_act_fn"):
        config.pop(derived, None)
    _write_json(config, path)


def _build(family: str, folder: Path, seed: int):
    """Train the tokenizer into ``folder`` and build the (unsaved) model: ``(model, tokenizer)``."""
    if family not in ALL_FAMILIES:
        raise ValueError(f"unknown family {family!r}; expected one of {ALL_FAMILIES}")
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = train_tokenizer(family, folder)
    config = _config(family, tokenizer)
    torch.manual_seed(seed)
    model = _MODEL_CLASSES[family](config).eval()
    if family in UNTIED:
        _untie(model)
    _amplify_layers(model, family)
    _discourage_eos(model, config.eos_token_id)
    model.generation_config = _generation_config(family, config, tokenizer)
    return model, tokenizer


def build_tiny(family: str, folder: Path, seed: int = 0) -> Path:
    """Build a tiny random ``family`` model with its tokenizer and save both in ``folder``.

    ``folder`` (created if needed) gets ``config.json``, ``model.safetensors``,
    ``generation_config.json`` and the tokenizer files; the same ``seed`` gives the same
    weights.  Returns ``folder``.
    """
    folder = Path(folder)
    model, tokenizer = _build(family, folder, seed)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    if family in UNTIED:
        _published_config(folder)
    return folder


def tiny_folder(family: str, tmp_path_factory) -> Path:
    """The ``family`` folder for this test session: built once, under ``tmp_path_factory``."""
    folder = _BUILT.get(family)
    if folder is None or not (folder / "config.json").is_file():
        folder = build_tiny(family, tmp_path_factory.mktemp(f"hf-tiny-{family}"))
        _BUILT[family] = folder
    return folder


# Files the Hub keeps in Git LFS (their blobs are named by SHA-256, the others by git's SHA-1).
_LFS_SUFFIXES = {".safetensors", ".bin", ".model", ".spm", ".pt", ".pth"}


def _blob_name(path: Path) -> str:
    """The name the Hub cache gives ``path``'s blob: SHA-256 for LFS files, else the git SHA-1."""
    data = path.read_bytes()
    if path.suffix in _LFS_SUFFIXES:
        return hashlib.sha256(data).hexdigest()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def to_hf_cache(folder: Path, cache_dir: Path, repo_id: str) -> Path:
    """Copy a saved ``folder`` into the Hugging Face hub cache under ``cache_dir`` as ``repo_id``.

    Lays it out like ``huggingface_hub`` does: ``models--{org}--{name}/blobs/<hash>``,
    ``snapshots/<commit>/<file>`` as relative symlinks to the blobs and ``refs/main`` holding the
    (made-up but deterministic, 40 hex digits) commit.  Returns the snapshot folder.
    """
    folder, cache_dir = Path(folder), Path(cache_dir)
    repo_dir = cache_dir / ("models--" + repo_id.replace("/", "--"))
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    blobs = {path.relative_to(folder).as_posix(): _blob_name(path) for path in files}
    listing = "".join(f"{name} {blob}\n" for name, blob in blobs.items())
    commit = hashlib.sha1(f"{repo_id}\n{listing}".encode()).hexdigest()
    snapshot = repo_dir / "snapshots" / commit
    (repo_dir / "blobs").mkdir(parents=True, exist_ok=True)
    for path in files:
        name = path.relative_to(folder).as_posix()
        blob = repo_dir / "blobs" / blobs[name]
        if not blob.exists():
            shutil.copyfile(path, blob)
        link = snapshot / name
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(os.path.relpath(blob, link.parent))
    (repo_dir / "refs").mkdir(exist_ok=True)
    (repo_dir / "refs" / "main").write_text(commit)
    return snapshot


_REMOTE_CONFIG_CODE = '''"""Custom configuration (test fixture: a repository with its own code)."""

from transformers import MarianConfig


class CustomConfig(MarianConfig):
    """MarianConfig under another name."""
'''

_REMOTE_MODEL_CODE = '''"""Custom model (test fixture: a repository with its own code)."""

from transformers import MarianMTModel

from .configuration_custom import CustomConfig


class CustomModel(MarianMTModel):
    """MarianMTModel under another name."""

    config_class = CustomConfig
'''


def remote_code_folder(folder: Path) -> Path:
    """A tiny Marian folder whose ``config.json`` asks for custom code (``auto_map``).

    ``configuration_custom.py`` and ``modeling_custom.py`` are present and harmless (renamed
    Marian classes): loading the folder through them would mean running the folder's code,
    which the app refuses.
    """
    folder = build_tiny("marian", folder)
    config_path = folder / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["auto_map"] = {"AutoModelForSeq2SeqLM": "modeling_custom.CustomModel",
                          "AutoConfig": "configuration_custom.CustomConfig"}
    _write_json(config, config_path)
    (folder / "configuration_custom.py").write_text(_REMOTE_CONFIG_CODE, encoding="utf-8")
    (folder / "modeling_custom.py").write_text(_REMOTE_MODEL_CODE, encoding="utf-8")
    return folder


def pickle_only_folder(folder: Path) -> Path:
    """A tiny Marian folder whose weights are only a pickled ``pytorch_model.bin``.

    The file is ``torch.save(model.state_dict())`` (tied weights included, as in old
    checkpoints); there is no ``model.safetensors``.
    """
    folder = Path(folder)
    model, tokenizer = _build("marian", folder, seed=0)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    (folder / "model.safetensors").unlink()
    torch.save(model.state_dict(), folder / "pytorch_model.bin")
    return folder
