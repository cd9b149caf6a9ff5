"""How often each source word and piece occurred in a model's training data.

A model folder may hold ``train_counts.json``: ``{"words": {word: count}, "pieces": {piece:
count}, "pairs": n}``, written by the trainer (and by ``python -m model.training.counts``
for a folder trained before). The verdict on a translation names the words the model barely
saw (``analysis.verdict``); a Hugging Face folder has no such file, and the verdict says so.

A *word* is a run of letters (with inner apostrophes: ``don't``), lower-cased after NFKC
(``Hangzhou`` and ``hangzhou`` are one word); digits are not words (every digit is its own
piece). Chinese, Japanese and Korean characters are not words either: written without
spaces, a run of them is a clause, not a word, and a Chinese source's rarely seen characters
come from its pieces (one character each, ``analysis.verdict.rare_characters``); a Chinese
sentence's words are the Latin ones it holds (``我想买iPhone`` -> ``["iphone"]``).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import CheckpointError

COUNTS_FILE = "train_counts.json"
MAX_COUNTS_BYTES = 20_000_000  # a larger file is refused, not read
WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")
# Han (with extension A and compatibility ideographs), kana and Hangul: never part of a word.
CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


def words(text: str) -> list[str]:
    """The words of ``text`` as they are counted (module docstring), in order:
    ``"Zhang Wei's 3 books"`` -> ``["zhang", "wei's", "books"]``."""
    return [w.lower() for w in WORD.findall(CJK.sub(" ", unicodedata.normalize("NFKC", text)))]


@dataclass(frozen=True)
class TrainCounts:
    """A model's training counts.

    Attributes:
        words: word (``words``) -> occurrences in the training sources.
        pieces: source piece (the tokenizer's own string, ``Ġlearn``) -> occurrences.
        pairs: training pairs counted.
    """

    words: Mapping[str, int] = field(repr=False)
    pieces: Mapping[str, int] = field(repr=False)
    pairs: int

    def word(self, word: str) -> int:
        """Occurrences of ``word`` (lower-cased as counted); 0 for a word never seen."""
        return self.words.get(word.lower(), 0)


def count_sources(sources: Iterable[str], piece_lists: Iterable[Iterable[str]] = ()
                  ) -> TrainCounts:
    """The counts of training source sentences ``sources`` and of their pieces
    (``piece_lists``: one list of piece strings per sentence; empty for a word-level model)."""
    word_counts: Counter[str] = Counter()
    n = 0
    for text in sources:
        word_counts.update(words(text))
        n += 1
    piece_counts: Counter[str] = Counter()
    for ps in piece_lists:
        piece_counts.update(ps)
    return TrainCounts(dict(word_counts), dict(piece_counts), n)


def write_counts(folder: Path, counts: TrainCounts) -> Path:
    """Write ``folder/train_counts.json`` (words and pieces sorted by count, then text)."""
    def ordered(c: Mapping[str, int]) -> dict[str, int]:
        return dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))

    path = Path(folder) / COUNTS_FILE
    path.write_text(json.dumps({"pairs": counts.pairs, "words": ordered(counts.words),
                                "pieces": ordered(counts.pieces)}, ensure_ascii=False),
                    encoding="utf-8")
    return path


def read_counts(folder: Path) -> TrainCounts | None:
    """``folder/train_counts.json``, or None when there is none.

    Raises:
        CheckpointError: a file over MAX_COUNTS_BYTES, not UTF-8 JSON, or without
            ``pairs`` (an integer >= 0) and ``words`` / ``pieces`` objects of non-negative
            integers.
    """
    path = Path(folder) / COUNTS_FILE
    if not path.is_file():
        return None
    if path.stat().st_size > MAX_COUNTS_BYTES:
        raise CheckpointError(f"{COUNTS_FILE} is over {MAX_COUNTS_BYTES:,} bytes")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{COUNTS_FILE} cannot be read as JSON ({exc})") from exc

    def valid(c) -> bool:
        return isinstance(c, dict) and all(
            isinstance(k, str) and type(v) is int and v >= 0 for k, v in c.items())

    if (not isinstance(data, dict) or type(data.get("pairs")) is not int or data["pairs"] < 0
            or not valid(data.get("words")) or not valid(data.get("pieces"))):
        raise CheckpointError(f"{COUNTS_FILE}: expected pairs (an integer) and words and "
                              "pieces (objects of counts)")
    return TrainCounts(data["words"], data["pieces"], data["pairs"])
