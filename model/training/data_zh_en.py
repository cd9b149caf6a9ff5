"""The Chinese -> English corpus: the everyday corpus's real pairs reversed, prepared
reproducibly from the same pip packages and the same fixed split rules.

    python -m model.training.data_zh_en                    # writes data/zh-en/ and its manifest

Every file is ``Chinese<TAB>English``. TRAIN, VALID and TEST come from ``data.build_parts``
(Tatoeba TEST = zh_id % 10 == 0, VALID = % 10 == 1; HSK by sentence number the same way), so
no TEST pair of either direction is ever trained on. What changes in this direction:

- the synthetic grammar is left out (its English is half typed as ``why do we work ?``, which
  an English *target* must not learn), and so are the English spelling slips (noise belongs
  in a source, never in the target the model learns to write);
- number sentences also come with Chinese numerals in the source (``我十五岁了。`` ->
  ``I am 15 years old.``; years digit by digit: 一九九八年), ``ZH_NUMERALS`` of them;
- the classroom part keeps its direction-free pairs: Chinese names (李明 -> Li Ming), Chinese
  places and school words swapped into real sentences;
- the zh-en classroom set (``resources/classroom_set_zh_en.tsv``) is held out too.
"""

from __future__ import annotations

import argparse
import random
import re
from pathlib import Path

from . import synthetic
from .classroom_set import read_set
from .data import MIX, SPLIT_RULES, build_parts, norm_key, print_manifest, write_corpus

ZH_EN_DIR = Path(__file__).resolve().parents[2] / "data" / "zh-en"
ZH_NUMERALS = 15_000  # number pairs whose Chinese writes its numbers in Chinese numerals
TESTS = ("test_tatoeba", *(f"test_hsk{lv}" for lv in range(1, 7)), "test_numbers", "test_long")
_DIGITS = re.compile(r"\d+")

ZH_EN_RULES = {
    "direction": "every pair of the everyday corpus's files reversed (Chinese, English), "
                 "by the same split rules: TEST and VALID are the en-zh model's, so neither "
                 "direction trains on the other's TEST",
    "train_mix": f"the en-zh train_mix.tsv reversed, less the synthetic grammar and the "
                 f"English spelling slips, plus {ZH_NUMERALS:,} number pairs of the train "
                 f"frames (seed 20) whose Chinese writes each number in Chinese numerals "
                 f"(cn2an; a year digit by digit), held-out rows removed, shuffled (seed 0)",
    "classroom_zh_en": "resources/classroom_set_zh_en.tsv: never trained on (every TRAIN pair "
                       "whose Chinese or English equals one of its rows is removed)",
}


def chinese_numerals(zh: str) -> str:
    """``zh`` with each run of digits written in Chinese numerals: a four-digit number
    before 年 digit by digit (``1998年`` -> ``一九九八年``), any other number as
    ``cn2an.an2cn`` reads it (``365`` -> ``三百六十五``)."""
    import cn2an

    def written(m: re.Match) -> str:
        digits = m.group()
        if len(digits) == 4 and zh[m.end():m.end() + 1] == "年":
            return "".join("零一二三四五六七八九"[int(d)] for d in digits)
        return cn2an.an2cn(str(int(digits)))

    return _DIGITS.sub(written, zh)


def build_zh_en() -> dict[str, list[tuple[str, str]]]:
    """Every split of the Chinese -> English corpus (module docstring), each pair
    (Chinese, English)."""
    out, grammar = build_parts()
    made = set(grammar[0]) | set(grammar[1]) | set(grammar[2])
    noise = set(out["train_mix_noise"])
    mix = [(z, e) for e, z in out["train_mix"] if (e, z) not in noise and (e, z) not in made]
    numbers = synthetic.number_pairs(ZH_NUMERALS, "train", 20, stage=3, repeats=MIX["repeats"])
    mix += [(chinese_numerals(z), e) for e, z in numbers]
    zh_en = {"train_mix": mix,
             "valid": [(z, e) for e, z in out["valid"] if (e, z) not in made]}
    zh_en.update({name: [(z, e) for e, z, *_ in out[name]] for name in TESTS})
    held = [row for name, rows in zh_en.items() if name != "train_mix" for row in rows]
    held += [(i.zh, i.en) for i in read_set(direction="zh-en")]
    held += [(z, e) for e, z, *_ in out["test_terms"]]
    held_zh, held_en = {norm_key(r[0]) for r in held}, {norm_key(r[1]) for r in held}
    zh_en["train_mix"] = [(z, e) for z, e in mix
                          if norm_key(z) not in held_zh and norm_key(e) not in held_en]
    random.Random(0).shuffle(zh_en["train_mix"])
    return zh_en


def prepare_zh_en(out_dir: Path = ZH_EN_DIR) -> dict:
    """Build the corpus, write its files and ``manifest.json`` into ``out_dir``
    (``data.write_corpus``).

    Returns:
        The manifest (counts, sources, licences, split rules, sha256 of each file).
    """
    return write_corpus(Path(out_dir), build_zh_en(), {
        "name": "zh-en-everyday", "columns": ["Chinese", "English"],
        "split_rules": {**SPLIT_RULES, **ZH_EN_RULES}})


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point: ``python -m model.training.data_zh_en [--out DIR]``."""
    ap = argparse.ArgumentParser(description="Prepare the Chinese -> English corpus.")
    ap.add_argument("--out", type=Path, default=ZH_EN_DIR)
    args = ap.parse_args(argv)
    manifest = prepare_zh_en(args.out)
    print_manifest(manifest, args.out)


if __name__ == "__main__":
    main()
