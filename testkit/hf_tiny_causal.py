"""Tiny random-weight Hugging Face causal language models, built offline, for the tests of
``model.backends.hf_causal``.

``build_tiny_causal(family, folder)`` writes a real, loadable Hugging Face folder
(``config.json``, ``model.safetensors``, ``generation_config.json``, ``tokenizer.json``,
``tokenizer_config.json``) of one of five families (``FAMILIES``), each loading with
``AutoModelForCausalLM`` / ``AutoTokenizer`` (``local_files_only=True``) into the family's
own classes:

=========  =====================  ============================================================
family     model class            what it has (2 layers, 4 query heads, d_model 32,
                                  64 positions)
=========  =====================  ============================================================
gpt2       ``GPT2LMHeadModel``    learned positions (``wpe``), LayerNorm, fused ``c_attn``;
                                  ``<|endoftext|>`` is BOS, EOS and UNK, no BOS added, no pad
llama      ``LlamaForCausalLM``   RoPE, RMSNorm, 2 key/value heads (grouped-query attention);
                                  ``<s>`` added before every prompt, ``</s>`` ends
mistral    ``MistralForCausalLM`` as llama (``sliding_window`` past the 64 positions); BOS
qwen2      ``Qwen2ForCausalLM``   RoPE, 2 key/value heads, biases on q, k and v; no BOS,
                                  ``<|endoftext|>`` ends and pads
qwen3      ``Qwen3ForCausalLM``   RoPE, 2 key/value heads, an RMSNorm on each head's q and k
                                  (``q_norm``, ``k_norm``), head_dim 12 (H * Dh = 48 != D); no BOS
=========  =====================  ============================================================

Every tokenizer is a byte-level BPE (as GPT-2's, Llama 3's and Qwen's) trained here, in a
few milliseconds, on the English and Chinese sentences of
``testkit/data/hf_tiny_sentences.tsv`` (``hf_tiny.sentence_pairs``), and saved as a fast
tokenizer (``PreTrainedTokenizerFast``; transformers 5 reloads it as ``TokenizersBackend``);
the Llama-like ones add ``<s>`` through a ``TemplateProcessing`` post-processor, as Llama 3's
tokenizer adds ``<|begin_of_text|>``.

Random weights at the families' own init scale (std 0.02) give nearly uniform next-token
distributions (top probability ~0.003) whose top two candidates can differ by little more
than float32 noise, so greedy choices would depend on the order of the sums. After the
seeded init the token embedding (tied to the output layer) is therefore scaled by
``EMBED_GAIN`` and every other weight matrix by ``GAIN`` (norms' weights stay; Qwen2's
q and k biases, zero at init, are drawn from N(0, 1) so that they matter), which makes the
distributions peaked (top probabilities 0.1 to 0.5, gaps of 1e-5 and more) and the choices
stable; the EOS row of the output embedding is shrunk by ``EOS_SCALE`` so generation
seldom stops at once. Everything is deterministic: the same seed gives the same weights
(each family its own seed).

``remote_code_causal`` gives a folder whose config asks for custom code (``auto_map``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402
from tokenizers import ByteLevelBPETokenizer, processors  # noqa: E402
from transformers import (  # noqa: E402
    GenerationConfig,
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    MistralConfig,
    MistralForCausalLM,
    PreTrainedModel,
    PreTrainedTokenizerFast,
    Qwen2Config,
    Qwen2ForCausalLM,
    Qwen3Config,
    Qwen3ForCausalLM,
)

from .hf_tiny import _write_json, sentence_pairs  # noqa: E402

FAMILIES = ("gpt2", "llama", "mistral", "qwen2", "qwen3")
D_MODEL, LAYERS, HEADS, KV_HEADS, FFN, POSITIONS = 32, 2, 4, 2, 64, 64
VOCAB = 400  # the byte-level BPE's size: 256 bytes, the specials and the merges
GAIN = 6.0  # every weight matrix but the embeddings is multiplied by this after the init
EMBED_GAIN = 10.0  # the token embedding (tied to the output layer): std 0.02 -> 1
EOS_SCALE = 0.3  # the EOS row of the output embedding is shrunk by this factor
# family -> (special tokens in id order, BOS added before a prompt or None, EOS, pad or None)
TOKENS = {
    "gpt2": (["<|endoftext|>"], None, "<|endoftext|>", None),
    "llama": (["<s>", "</s>"], "<s>", "</s>", None),
    "mistral": (["<s>", "</s>"], "<s>", "</s>", None),
    "qwen2": (["<|endoftext|>", "<|im_start|>", "<|im_end|>"], None, "<|endoftext|>",
              "<|endoftext|>"),
    "qwen3": (["<|endoftext|>", "<|im_start|>", "<|im_end|>"], None, "<|endoftext|>",
              "<|endoftext|>"),
}

# Qwen's chat template, cut down to one conversation's turns (the tiny Qwen tokenizers have
# its <|im_start|> and <|im_end|>): an instruct model's, for the chat switch.
CHAT_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}"
                 "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n"
                 "{% endif %}")
CHAT_FAMILIES = ("qwen2", "qwen3")  # the tiny families whose tokenizer has the template

_BUILT: dict[str, Path] = {}


def train_tokenizer(family: str) -> PreTrainedTokenizerFast:
    """The family's byte-level BPE (``VOCAB`` ids, the specials first), trained on the
    sentence pairs; the Llama-like ones put ``<s>`` before every text."""
    specials, bos, eos, pad = TOKENS[family]
    trainer = ByteLevelBPETokenizer()
    trainer.train_from_iterator([text for pair in sentence_pairs() for text in pair],
                                vocab_size=VOCAB, min_frequency=1, show_progress=False,
                                special_tokens=specials)
    tok = trainer._tokenizer
    if bos is not None:
        bos_id = tok.token_to_id(bos)
        tok.post_processor = processors.TemplateProcessing(
            single=f"{bos} $A", pair=f"{bos} $A {bos} $B", special_tokens=[(bos, bos_id)])
    names = {"bos_token": bos or specials[0], "eos_token": eos}
    if family == "gpt2":
        names["unk_token"] = eos
    if pad is not None:
        names["pad_token"] = pad
    made = PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=POSITIONS, **names)
    if family in CHAT_FAMILIES:
        made.chat_template = CHAT_TEMPLATE
    return made


def _config(family: str, tokenizer):
    """The tiny config of ``family`` with the tokenizer's special ids."""
    ids = dict(vocab_size=len(tokenizer), bos_token_id=tokenizer.bos_token_id,
               eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    if family == "gpt2":
        return GPT2Config(n_embd=D_MODEL, n_layer=LAYERS, n_head=HEADS, n_inner=FFN,
                          n_positions=POSITIONS, resid_pdrop=0.0, embd_pdrop=0.0,
                          attn_pdrop=0.0, **ids)
    common = dict(hidden_size=D_MODEL, intermediate_size=FFN, num_hidden_layers=LAYERS,
                  num_attention_heads=HEADS, num_key_value_heads=KV_HEADS,
                  max_position_embeddings=POSITIONS, tie_word_embeddings=True, **ids)
    if family == "llama":
        return LlamaConfig(**common)
    if family == "mistral":
        return MistralConfig(**common, sliding_window=4 * POSITIONS)
    if family == "qwen2":
        return Qwen2Config(**common)
    return Qwen3Config(**common, head_dim=12)


_MODEL_CLASSES: dict[str, type[PreTrainedModel]] = {
    "gpt2": GPT2LMHeadModel, "llama": LlamaForCausalLM, "mistral": MistralForCausalLM,
    "qwen2": Qwen2ForCausalLM, "qwen3": Qwen3ForCausalLM,
}


def _amplify(model: PreTrainedModel, eos_id: int) -> None:
    """Multiply the token embedding by ``EMBED_GAIN``, every other weight matrix by
    ``GAIN``, draw Qwen2's q and k biases, and shrink the EOS row of the output embedding
    by ``EOS_SCALE`` (module docstring)."""
    embedding = model.get_input_embeddings().weight
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p is embedding:
                p *= EMBED_GAIN
            elif p.dim() == 2:
                p *= GAIN
            elif name.endswith(("q_proj.bias", "k_proj.bias")):
                p.normal_(0.0, 1.0)  # a visible bias (Qwen2 initialises it to 0)
        model.get_output_embeddings().weight[eos_id] *= EOS_SCALE


def build_tiny_causal(family: str, folder: Path, seed: int = 0) -> Path:
    """Build a tiny random ``family`` model with its tokenizer and save both in ``folder``
    (created if needed; safetensors weights, a plain greedy generation config with the
    tokenizer's EOS and pad, EOS as pad when there is none). Returns ``folder``.

    Raises:
        ValueError: an unknown family.
    """
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; expected one of {FAMILIES}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = train_tokenizer(family)
    config = _config(family, tokenizer)
    torch.manual_seed(seed * len(FAMILIES) + FAMILIES.index(family))
    model = _MODEL_CLASSES[family](config).eval()
    _amplify(model, config.eos_token_id)
    pad = config.pad_token_id if config.pad_token_id is not None else config.eos_token_id
    model.generation_config = GenerationConfig(
        bos_token_id=config.bos_token_id, eos_token_id=config.eos_token_id, pad_token_id=pad,
        do_sample=False, num_beams=1, max_length=POSITIONS)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def tiny_causal_folder(family: str, tmp_path_factory) -> Path:
    """The ``family`` folder for this test session: built once, under ``tmp_path_factory``."""
    folder = _BUILT.get(family)
    if folder is None or not (folder / "config.json").is_file():
        folder = build_tiny_causal(family, tmp_path_factory.mktemp(f"hf-causal-{family}"))
        _BUILT[family] = folder
    return folder


def remote_code_causal(folder: Path) -> Path:
    """A tiny GPT-2 folder whose ``config.json`` asks for custom code (``auto_map``, and a
    harmless ``modeling_custom.py``): loading it through that code would run the folder's
    Python, which the app refuses."""
    folder = build_tiny_causal("gpt2", folder)
    path = folder / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config["auto_map"] = {"AutoModelForCausalLM": "modeling_custom.CustomModel"}
    _write_json(config, path)
    (folder / "modeling_custom.py").write_text(
        '"""Custom model (test fixture)."""\n\nfrom transformers import GPT2LMHeadModel\n\n\n'
        'class CustomModel(GPT2LMHeadModel):\n    """GPT2LMHeadModel under another name."""\n',
        encoding="utf-8")
    return folder
