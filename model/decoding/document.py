"""The trace document: one decoding (``DecodeTrace``) as versioned JSON, for readers outside
Python (the take-home page's player, ``ui/player/``). Its JSON Schema is
``trace_document.schema.json`` beside this file (``SCHEMA_FILE``).

What it holds: how to draw it (``display``: the numbering of layers and heads, the attention
colour scale and range, the weights' number format, as ``viz.convention.display_settings``
decides them for every renderer; model/ does not import viz, so the caller passes it), the
sentence and translation, the source and target tokens with their labels
(and, when the caller gives them, the pinyin of the source labels, ``src_pinyin``, and of
the target labels, ``tgt_pinyin``: whichever side is Chinese), the decoding settings
(``GenerationSettings.to_query``: stable ids), every step's chosen token, probability,
entropy and top-k, every layer's and head's encoder self-, decoder self- and cross-attention
(a decoder-only model's ``architecture``: its one (L, H, N, N) self-attention under
``decoder``, N = S + T, and null for the other two), and with beam search the beam tree
and n-best list. Not the full next-token distributions (T x V floats): the top-k is what a
reader shows.

Attention weights are stored as integers: round(weight x 10^decimals), each array flattened
in C order with its shape beside it (``{"shape": [L, H, S, S], "decimals": 4, "data": [...]}``),
so a weight comes back within 0.5 x 10^-decimals (5e-5 with the default 4 decimals; a 40-token
sentence of a 4-layer, 8-head model is then under 1 MB of JSON). Probabilities are rounded to
6 decimals.

Shape letters: S source length, T decoder steps, L layers, H heads, K top-k.

>>> doc = to_document(trace, display_settings(), model="en-zh-everyday")  # doctest: +SKIP
>>> back = read_document(json.loads(dumps(doc)))               # doctest: +SKIP
>>> np.abs(back.cross_attentions - trace.cross_attentions).max() <= 5e-5  # doctest: +SKIP
True
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .trace import DecodeTrace, one_map

FORMAT = "attention-trace"
VERSION = 3  # 2: ``display`` (the display convention) added; 3: ``architecture``
SCHEMA_FILE = Path(__file__).with_name("trace_document.schema.json")
KINDS = ("encoder", "decoder", "cross")  # the attention arrays, as the document names them
ARCHITECTURES = ("encoder-decoder", "decoder-only")
PROB_DECIMALS = 6
DISPLAY_FIELDS = ("first_number", "colorscale", "zmin", "zmax", "weight_format",
                  "present_font_px", "line_em")  # viz.convention


def _array(a: np.ndarray, decimals: int) -> dict:
    """``a`` as ``{"shape", "decimals", "data"}``: integers round(a x 10^decimals), C order."""
    a = np.asarray(a, dtype=np.float64)
    return {"shape": list(a.shape), "decimals": decimals,
            "data": np.rint(a * 10.0 ** decimals).astype(np.int64).ravel().tolist()}


def _prob(p: float) -> float:
    return round(float(p), PROB_DECIMALS)


def _check_pinyin(pinyin: Sequence[str] | None, tokens: Sequence[str], side: str) -> None:
    """Raise ``ValueError`` unless ``pinyin`` is None or one string per token of ``side``."""
    if pinyin is not None and len(pinyin) != len(tokens):
        raise ValueError(f"{side}_pinyin has {len(pinyin)} entries for {len(tokens)} "
                         f"{'source' if side == 'src' else 'target'} tokens")


def _attention(trace: DecodeTrace, decimals: int) -> dict:
    """The document's ``attention``: each kind's array (``_array``), or a decoder-only
    trace's one map under ``decoder`` and null for the other two."""
    if trace.architecture == "decoder-only":
        return {"encoder": None, "decoder": _array(one_map(trace), decimals), "cross": None}
    return {kind: _array(getattr(trace, f"{kind}_attentions"), decimals) for kind in KINDS}


def to_document(trace: DecodeTrace, display: Mapping, model: str = "", *,
                tgt_pinyin: Sequence[str] | None = None,
                src_pinyin: Sequence[str] | None = None, decimals: int = 4) -> dict:
    """The document of ``trace`` (JSON types; ``dumps`` writes it).

    Args:
        trace: the decoding: encoder (L, H, S, S), decoder (L, H, T, T), cross
            (L, H, T, S), or a decoder-only trace's one (L, H, N, N) map (``one_map``).
        display: the display convention (``viz.convention.display_settings()``), kept as
            it is (``DISPLAY_FIELDS``).
        model: the model's name, as the app lists it.
        tgt_pinyin: (T + 1,) the pinyin of each target label ("" where none), or None.
        src_pinyin: (S,) the pinyin of each source label ("" where none), or None.
        decimals: the attention weights' decimals (the round trip's precision).

    Raises:
        ValueError: ``display`` without one of its fields, ``decimals`` outside 1..8, or
            ``tgt_pinyin`` / ``src_pinyin`` of another length than its side's tokens.
    """
    missing = set(DISPLAY_FIELDS) - set(display)
    if missing:
        raise ValueError(f"display needs {sorted(missing)}")
    if not 1 <= decimals <= 8:
        raise ValueError(f"decimals must be 1..8, got {decimals}")
    _check_pinyin(tgt_pinyin, trace.tgt_tokens, "tgt")
    _check_pinyin(src_pinyin, trace.src_tokens, "src")
    steps = [{"token": s.token, "label": s.label, "token_id": int(s.token_id),
              "prob": _prob(s.prob), "entropy": round(float(s.entropy), 4),
              "forced": bool(s.forced), "top_labels": list(s.top_labels),
              "top_ids": [int(i) for i in s.top_ids],
              "top_probs": [_prob(p) for p in s.top_probs]} for s in trace.steps]
    doc = {
        "format": FORMAT, "version": VERSION, "architecture": trace.architecture,
        "model": model, "display": dict(display),
        "src_text": trace.src_text, "output_text": trace.output_text or "",
        "src_tokens": list(trace.src_tokens), "src_labels": list(trace.src_labels),
        "src_words": [int(w) for w in trace.src_words],
        "tgt_tokens": list(trace.tgt_tokens), "tgt_labels": list(trace.tgt_labels),
        "tgt_pinyin": list(tgt_pinyin) if tgt_pinyin is not None else None,
        "src_pinyin": list(src_pinyin) if src_pinyin is not None else None,
        "settings": trace.settings.to_query(), "finished": bool(trace.finished),
        "teacher_forced": bool(trace.teacher_forced), "n_forced": int(trace.n_forced),
        "heads_off": [list(k) for k in trace.heads_off],
        "steps": steps,
        "attention": _attention(trace, decimals),
        "beam": None,
    }
    if trace.beam is not None:
        b = trace.beam
        doc["beam"] = {
            "num_beams": b.num_beams, "length_penalty": b.length_penalty,
            "steps": [[{"step": c.step, "parent": c.parent, "token_id": int(c.token_id),
                        "label": c.label, "logprob": round(float(c.logprob), 6),
                        "status": c.status} for c in cands] for cands in b.steps],
            "hypotheses": [{"tokens": list(h.tokens), "text": h.text,
                            "logprob": round(float(h.logprob), 6),
                            "score": round(float(h.score), 6), "finished": h.finished,
                            "end": list(h.end)} for h in b.hypotheses]}
    return doc


def dumps(doc: Mapping) -> str:
    """``doc`` as compact JSON text (UTF-8 characters kept, no NaN)."""
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


@dataclass(frozen=True)
class TraceDocument:
    """A document read back (``read_document``): its fields, the attention arrays as float32.

    Attributes:
        raw: the document itself (every field, as JSON types).
        encoder_attentions: (L, H, S, S); decoder_attentions: (L, H, T, T);
        cross_attentions: (L, H, T, S); a decoder-only document's decoder (L, H, N, N),
        N = S + T, and None for the other two.
        probs: (T,) each step's chosen-token probability.
        top_probs: T arrays (K,) of each step's top-k probabilities.
    """

    raw: dict
    encoder_attentions: np.ndarray | None
    decoder_attentions: np.ndarray
    cross_attentions: np.ndarray | None
    probs: np.ndarray
    top_probs: tuple[np.ndarray, ...]

    @property
    def src_labels(self) -> list[str]:
        return self.raw["src_labels"]

    @property
    def tgt_labels(self) -> list[str]:
        return self.raw["tgt_labels"]


def _need(ok: bool, what: str) -> None:
    if not ok:
        raise ValueError(f"not a trace document: {what}")


def _read_array(node, name: str) -> np.ndarray:
    _need(isinstance(node, dict) and {"shape", "decimals", "data"} <= set(node),
          f"attention.{name} needs shape, decimals and data")
    shape, data = node["shape"], node["data"]
    _need(isinstance(shape, list) and len(shape) == 4
          and all(isinstance(n, int) and n >= 0 for n in shape), f"attention.{name}.shape")
    _need(isinstance(data, list) and len(data) == math.prod(shape),
          f"attention.{name}.data has {len(data) if isinstance(data, list) else 'no'} "
          f"numbers for shape {shape}")
    _need(isinstance(node["decimals"], int) and 1 <= node["decimals"] <= 8,
          f"attention.{name}.decimals")
    return (np.asarray(data, dtype=np.float64) / 10.0 ** node["decimals"]).astype(
        np.float32).reshape(shape)


def read_document(doc: Mapping | str) -> TraceDocument:
    """Read a trace document (a dict, or its JSON text) and check what its readers rely on.

    A document without ``src_pinyin`` (written before it was added) is read as one whose
    ``src_pinyin`` is null.

    Raises:
        ValueError: not JSON, another format or version, a missing field, arrays whose
            shapes disagree with the tokens (S source tokens, T steps), or pinyin that is
            not one string per label of its side; the message names it.
    """
    if isinstance(doc, str):
        try:
            doc = json.loads(doc)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a trace document: not JSON ({exc.msg})") from None
    _need(isinstance(doc, dict), "not a JSON object")
    _need(doc.get("format") == FORMAT, f"format must be {FORMAT!r}")
    _need(doc.get("version") == VERSION, f"version {doc.get('version')!r}, this reader "
          f"reads {VERSION}")
    for field in ("display", "src_labels", "tgt_labels", "steps", "attention"):
        _need(field in doc, f"no {field}")
    one_stack = doc.get("architecture") == "decoder-only"
    _need(doc.get("architecture") in ARCHITECTURES, f"architecture must be one of "
          f"{ARCHITECTURES}")
    att = doc["attention"]
    _need(isinstance(att, dict), "attention must be an object")
    s, t = len(doc["src_labels"]), len(doc["steps"])
    if one_stack:
        _need(att.get("encoder") is None and att.get("cross") is None,
              "a decoder-only document has no encoder or cross attention")
        enc = cross = None
        dec = _read_array(att.get("decoder"), "decoder")
        _need(dec.shape[2:] == (s + t, s + t), f"decoder attention {dec.shape} for "
              f"{s} prompt tokens and {t} steps (N = S + T)")
    else:
        arrays = {kind: _read_array(att.get(kind), kind) for kind in KINDS}
        enc, dec, cross = arrays["encoder"], arrays["decoder"], arrays["cross"]
        _need(enc.shape[2:] == (s, s), f"encoder attention {enc.shape} for {s} source tokens")
        _need(dec.shape[2:] == (t, t), f"decoder attention {dec.shape} for {t} steps")
        _need(cross.shape[2:] == (t, s), f"cross attention {cross.shape} for {t} steps, {s} "
              f"source tokens")
        _need(dec.shape[:2] == cross.shape[:2], "decoder and cross attention have different "
              "layers or heads")
    _need(len(doc["tgt_labels"]) == t + 1, f"{len(doc['tgt_labels'])} target labels for {t} "
          f"steps (T + 1: <s> and every step's token)")
    for side, n in (("src", s), ("tgt", t + 1)):
        pinyin = doc.get(f"{side}_pinyin")
        _need(pinyin is None or (isinstance(pinyin, list) and len(pinyin) == n
                                 and all(isinstance(p, str) for p in pinyin)),
              f"{side}_pinyin must be null or {n} strings, one per {side}_labels entry")
    probs = np.asarray([st["prob"] for st in doc["steps"]], dtype=np.float32)
    top = tuple(np.asarray(st["top_probs"], dtype=np.float32) for st in doc["steps"])
    return TraceDocument(doc, enc, dec, cross, probs, top)
