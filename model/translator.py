"""The public object behind ``load_pretrained``: a trained model with its vocabularies.

>>> from model import load_pretrained
>>> m = load_pretrained("en-zh")
>>> trace = m.decode("why do we work ?")
>>> trace.output_text
'我们为什么工作？'

Names are folders of ``pretrained/``, or of ``$ATTENTION_PRETRAINED_DIR`` when that is set
(see ``pretrained_root``).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch

from .checkpoint import load_checkpoint
from .decoding import DecodeStep, DecodeTrace, greedy_decode, top_k_step
from .errors import CheckpointError, InputError
from .errors import short_repr as _short
from .masks import mask_views
from .transformer import Transformer
from .vocab import EOS, Vocab, normalize_text, tokenize_en

PRETRAINED_DIR = Path(__file__).resolve().parent.parent / "pretrained"  # the default root
PRETRAINED_ENV = "ATTENTION_PRETRAINED_DIR"  # overrides PRETRAINED_DIR; see pretrained_root()
MAX_INPUT_CHARS = 300  # longer text is refused before any work is done


class Translator:
    """A pretrained Transformer with its vocabularies. Read-only after construction: the
    same instance serves every caller (every browser session) at once.

    Attributes:
        name: the folder's name; model: the eval-mode Transformer; src_vocab, tgt_vocab;
        card: the model card (dict); config: the TransformerConfig.
    """

    def __init__(self, model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab, card: dict,
                 name: str = "") -> None:
        self.model, self.src_vocab, self.tgt_vocab = model, src_vocab, tgt_vocab
        self.card, self.name = card, name
        self.config = model.config

    @property
    def max_source_words(self) -> int:
        """The most source tokens a sentence may have (one position is kept for ``</s>``)."""
        return self.config.max_len - 1

    def tokenize(self, text: str) -> list[str]:
        """The source tokens of ``text`` (without ``</s>``); see ``vocab.tokenize_en``."""
        return tokenize_en(text)

    def check_input(self, text: str) -> list[str]:
        """Validate a sentence and return its source tokens.

        Raises:
            InputError: not a string, empty or only spaces/invisible characters, no word
                (only punctuation or symbols), longer than MAX_INPUT_CHARS characters, or
                more than ``max_source_words`` tokens.
        """
        if not isinstance(text, str):
            raise InputError(f"expected text, got {type(text).__name__}")
        if len(text) > MAX_INPUT_CHARS:
            raise InputError(
                f"The sentence is {len(text):,} characters long; the limit is "
                f"{MAX_INPUT_CHARS}. This model translates one short sentence at a time."
            )
        if not normalize_text(text).strip():
            raise InputError("Please type a sentence: the text is empty.")
        tokens = self.tokenize(text)
        if not any(t.isalnum() for t in tokens):
            raise InputError("Please type a sentence: the text has no words, only symbols.")
        if len(tokens) > self.max_source_words:
            raise InputError(
                f"The sentence has {len(tokens)} tokens; this model takes at most "
                f"{self.max_source_words}."
            )
        return tokens

    def unknown_words(self, text: str) -> list[str]:
        """Source tokens of ``text`` outside the vocabulary (each once, in order)."""
        return self.src_vocab.unknown(self.tokenize(text))

    def suggestions(self, word: str, n: int = 3) -> list[str]:
        """In-vocabulary words spelled most like ``word``."""
        return self.src_vocab.suggest(word, n)

    def encode_source(self, tokens: list[str]) -> torch.Tensor:
        """Source tokens -> (1, S) int64 ids with ``</s>`` appended."""
        return torch.tensor([self.src_vocab.encode([*tokens, EOS])], dtype=torch.long)

    def decode(self, text: str, max_new_tokens: int | None = None, top_k: int = 10) -> DecodeTrace:
        """Translate ``text`` greedily, one token at a time, recording every step.

        Args:
            text: an English sentence.
            max_new_tokens: the most tokens to generate (default: as many as fit, max_len-1).
            top_k: how many next-token candidates each step keeps.

        Returns:
            DecodeTrace (float32 numpy arrays; see its docstring for the shapes).

        Raises:
            InputError: see ``check_input``; or ``max_new_tokens`` out of range.
        """
        tokens = self.check_input(text)
        limit = self.config.max_len - 1
        if max_new_tokens is None:
            max_new_tokens = limit
        if not 1 <= int(max_new_tokens) <= limit:
            raise InputError(f"max_new_tokens must be between 1 and {limit}")
        src_ids = self.encode_source(tokens)
        with torch.inference_mode():
            result = greedy_decode(self.model, src_ids, int(max_new_tokens))
        tgt_tokens = tuple(self.tgt_vocab.decode(result.tgt_ids))
        steps = []
        for t, probs in enumerate(result.step_probs):
            ids, top_probs, entropy = top_k_step(probs, top_k)
            chosen = int(result.tgt_ids[t + 1])
            steps.append(DecodeStep(
                index=t,
                input_tokens=tgt_tokens[: t + 1],
                token=tgt_tokens[t + 1],
                token_id=chosen,
                prob=float(probs[chosen]),
                top_tokens=tuple(self.tgt_vocab.decode(ids)),
                top_ids=ids,
                top_probs=top_probs,
                entropy=entropy,
            ))
        return DecodeTrace(
            src_text=text,
            src_tokens=(*tokens, EOS),
            tgt_tokens=tgt_tokens,
            steps=tuple(steps),
            encoder_attentions=result.encoder_attentions,
            decoder_attentions=result.decoder_attentions,
            cross_attentions=result.cross_attentions,
            step_probs=result.step_probs,
            finished=result.finished,
            unknown_words=tuple(self.src_vocab.unknown(tokens)),
        )

    @property
    def examples(self) -> list[str]:
        """Example sentences of the model's task (empty if the task is unknown)."""
        from .tasks import TASKS, get_task

        task = self.card.get("task")
        return list(get_task(task).EXAMPLES) if task in TASKS else []

    def mask_views(self, src_tokens: list[str], tgt_tokens: list[str], pad: int = 0
                   ) -> dict[str, np.ndarray]:
        """The model's masks for a sentence pair right-padded with ``pad`` ``<pad>`` tokens
        on both sides (as when it shares a batch with longer sentences).

        Returns:
            ``masks.mask_views`` of the padded ids: bool arrays, True = blocked.
        """
        pad_id = self.config.pad_id
        return mask_views(self.src_vocab.encode(src_tokens) + [pad_id] * pad,
                          self.tgt_vocab.encode(tgt_tokens) + [pad_id] * pad, pad_id)

    def positional_encoding(self, length: int) -> np.ndarray:
        """The model's sinusoidal table for ``length`` positions: (length, D) float32."""
        if not 1 <= length <= self.config.max_len:
            raise ValueError(f"length must be in [1, {self.config.max_len}], got {length}")
        return self.model.positional.pe[:length].numpy().astype(np.float32)


def pretrained_root() -> Path:
    """The folder whose sub-folders are the named models.

    ``$ATTENTION_PRETRAINED_DIR`` when it is set and not empty (read at every call, so a
    test or a deployment can point the app at another folder without reloading modules),
    else the repository's ``pretrained/`` (``PRETRAINED_DIR``).
    """
    env = os.environ.get(PRETRAINED_ENV, "").strip()
    return Path(env).expanduser() if env else PRETRAINED_DIR


def available_models(root: Path | None = None) -> list[str]:
    """Names of the model folders (sorted), whether or not they load.

    Args:
        root: where to look; default ``pretrained_root()``, i.e. ``$ATTENTION_PRETRAINED_DIR``
            if set, else the repository's ``pretrained/``. Hidden folders are skipped.
    """
    root = pretrained_root() if root is None else Path(root)
    try:
        return sorted(p.name for p in root.iterdir()
                      if p.is_dir() and not p.name.startswith("."))
    except OSError:  # missing, not a folder, or unreadable: no models
        return []


def load_pretrained(name_or_path: str | Path) -> Translator:
    """Load a pretrained model by name or by folder path.

    A ``str`` without a path separator that names a folder of ``pretrained_root()``
    (``$ATTENTION_PRETRAINED_DIR`` if set, else the repository's ``pretrained/``, read at
    call time) loads that folder, even if the working directory has a folder of that name;
    anything else must be a path to a pretrained folder.

    Raises:
        CheckpointError: no such model, or a damaged folder (the message names the file).
    """
    root = pretrained_root()
    name = str(name_or_path)
    is_name = isinstance(name_or_path, str) and not ("/" in name or "\\" in name)
    if is_name and not name.startswith(".") and name in available_models(root):
        path = root / name
    elif Path(name_or_path).is_dir():
        path = Path(name_or_path)
    else:
        raise CheckpointError(
            f"no pretrained model {_short(name)} in {root}; available: "
            f"{', '.join(available_models(root)) or 'none'}"
        )
    model, src_vocab, tgt_vocab, card = load_checkpoint(path)
    return Translator(model, src_vocab, tgt_vocab, card, name=path.name)
