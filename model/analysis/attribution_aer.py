"""Does attention or attribution align words better? Corpus AER of alignments taken from each
attribution method beside every cross-attention head's (issue 35).

On a grammar model the en_zh grammar knows the true links of each sentence (``alignment``).
Each method gives, for every step, one score per source token; the step's character is
linked to the word with the largest score, exactly as a head's links are taken from its
attention row (``alignment.head_links``: pieces summed into words, ``</s>`` left out, the
step that *outputs* the character). Methods:

- the best head (lowest corpus AER of all L x H) and each layer's mean of the heads;
- value zeroing (Mohebbi et al. 2023; ``value_zeroing``), layer by layer: source token j's
  score at step t is the cosine distance of the step's output when j's values are zeroed;
- gradient x input and integrated gradients (``attribution.attribute``, Captum): the
  absolute attribution of each source token's embedding to the step's chosen token.

As in ``alignment.head_aer``, the grammar's own translation is teacher-forced, the counts
are summed over sentences (corpus AER, Och & Ney 2003), and sentences outside the grammar
are skipped. Ferrando & Costa-jussà (2021) report attention's alignments as weak but its
predictive role as strong; this table measures our own models.

    python -m model.analysis.attribution_aer pretrained/en-zh [--n 50] [--no-ig]

The table numbers layers and heads from 1, as the app does (``viz.convention``); the
arrays keep 0-based indices.

Shape letters: L layers, H heads, T steps, S source tokens.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable

import numpy as np
import torch

from .alignment import corpus_aer, gold_pair, grammar_word_ids, head_links, link_counts
from .attribution import attribute
from .value_zeroing import value_zeroing

GRADIENTS = {"input_x_gradient": "gradient x input",
             "integrated_gradients": "integrated gradients"}  # attribution.METHODS: names


def number(index: int) -> int:
    """The number a person reads for the 0-based layer or head ``index``: ``index + 1``, as
    the app's views number them (``viz.convention.layer_number`` / ``head_number``, which
    model/ may not import)."""
    return index + 1


def _links_of(scores: np.ndarray, words: tuple[int, ...]):
    """The links of one (T, S) score map (``head_links`` of a single 'head')."""
    return head_links(np.abs(scores)[None, None], words)[0, 0]


def attribution_aer(translator, sentences: Iterable[str], integrated: bool = True
                    ) -> tuple[dict[str, float], int]:
    """Corpus AER of every method (module docstring) over ``sentences``.

    Args:
        translator: a ``Translator`` of ours (``load_pretrained``) with a grammar.
        sentences: English sentences; those outside the grammar are skipped.
        integrated: also integrated gradients (a few seconds a sentence on the grammar
            models).

    Returns:
        ({method name: AER in [0, 1]}, the number of sentences scored). Names: "best head
        (layer l, head h)", "mean of the heads, layer l", "value zeroing, layer l",
        "gradient x input", "integrated gradients"; l and h numbered from 1 (``number``).

    Raises:
        ValueError: no sentence has gold links, or the model is not one of ours.
    """
    if translator.info.backend != "ours":
        raise ValueError("attribution AER needs one of this app's own models")
    totals: dict[str, np.ndarray] = {}
    n = 0

    def add(name: str, links, gold) -> None:
        totals[name] = totals.get(name, 0) + link_counts(links, gold, gold)

    for sentence in sentences:
        pair, reference = gold_pair(sentence), translator.grammar_translation(sentence)
        if pair is None or reference is None:
            continue
        trace = translator.teacher_force(sentence, reference)
        words = grammar_word_ids(trace.src_labels, pair.src)
        gold = frozenset(pair.alignment)
        L, H = trace.cross_attentions.shape[:2]
        for (layer, head), links in head_links(trace.cross_attentions, words).items():
            add(f"head {number(layer)}.{number(head)}", links, gold)
        for layer in range(L):
            add(f"mean of the heads, layer {number(layer)}",
                _links_of(trace.cross_attentions[layer].mean(axis=0), words), gold)
        src, tgt = torch.as_tensor(trace.src_ids), torch.as_tensor(trace.tgt_ids)
        vz = value_zeroing(translator.model, src, tgt[:-1])
        for layer in range(L):
            add(f"value zeroing, layer {number(layer)}", _links_of(vz.cross[layer], words),
                gold)
        for method, name in list(GRADIENTS.items())[:2 if integrated else 1]:
            add(name, _links_of(attribute(translator.model, src, tgt, method).source, words),
                gold)
        n += 1
    if not n:
        raise ValueError("no sentence has gold links (the model has no grammar, or every "
                         "sentence is outside it)")
    aer = {name: float(corpus_aer(c)) for name, c in totals.items()}
    heads = {k: v for k, v in aer.items() if k.startswith("head ")}
    best = min(heads, key=heads.get)
    out = {f"best head (layer {best.split()[1].replace('.', ', head ')})": heads[best]}
    out.update({k: v for k, v in aer.items() if not k.startswith("head ")})
    return out, n


def table(model_name: str, aer: dict[str, float], n: int) -> str:
    """The Markdown table of ``attribution_aer``'s result (``aer``, over ``n`` sentences)
    for the model ``model_name``, as docs/views.md shows it: one row per method, AER to
    three decimals, layers and heads numbered from 1."""
    rows = [f"| Alignment from ({model_name}, {n} held-out sentences) | AER |", "| --- | --- |"]
    rows += [f"| {name} | {value:.3f} |" for name, value in aer.items()]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Print the table for a model's first ``--n`` held-out sentences."""
    from model import load_pretrained
    from model.core.heldout import heldout_pairs

    ap = argparse.ArgumentParser(prog="python -m model.analysis.attribution_aer",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("model", help="a model folder with a grammar (pretrained/en-zh)")
    ap.add_argument("--n", type=int, default=50, help="held-out sentences (default 50)")
    ap.add_argument("--no-ig", action="store_true", help="leave out integrated gradients")
    args = ap.parse_args(argv)
    translator = load_pretrained(args.model)
    sentences = [src for src, _ in heldout_pairs(translator.card, args.n)]
    aer, n = attribution_aer(translator, sentences, integrated=not args.no_ig)
    print(table(translator.name, aer, n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
