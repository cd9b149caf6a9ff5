"""``GenerationSettings``: every decoding option in one frozen, hashable object, in Hugging
Face ``generate()``'s names (as ``transformers.GenerationConfig``). It is the one validator
of those options, the cache key of a decoding, and their one URL encoding
(``to_query`` / ``from_query``), so a link holds stable, language-independent values:
``strategy=beam&num_beams=4``.

>>> s = GenerationSettings(num_beams=4)
>>> s.strategy, s.to_query()
('beam', {'strategy': 'beam', 'num_beams': '4'})
>>> settings, dropped = GenerationSettings.from_query({"strategy": "sampling", "top_p": "2"})
>>> settings.strategy, settings.top_p, dropped
('sampling', 1.0, ('top_p',))
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, fields

import numpy as np

from ..core.layers import POSITIONAL_MODES
from ..errors import InputError
from ..errors import short_repr as _short

STRATEGIES = ("greedy", "beam", "sampling")  # the strategy ids, as links hold them
# Every bound of a decoding setting lives here; ui.controls.RANGES (what the sidebar offers)
# reads them, and a test checks that everything it offers is valid.
MAX_BEAMS = 8
MAX_SEED = 2**31 - 1  # the sidebar's number box and a link's seed: one bound for both
MAX_REPETITION_PENALTY = 10.0  # what GenerationSettings accepts (Hugging Face: any > 0)
OFFERED_REPETITION_PENALTY = 2.0  # what the sidebar offers: stronger only garbles the output
OFFERED_NO_REPEAT_NGRAM = 6  # the sidebar's largest no_repeat_ngram_size
# The query parameters of each strategy (besides ``strategy``), in the order links list them.
STRATEGY_FIELDS = {"greedy": (), "beam": ("num_beams", "length_penalty"),
                   "sampling": ("temperature", "top_k", "top_p", "seed")}
# Any strategy's, when not their default.
QUERY_FIELDS = ("src_lang", "tgt_lang", "task", "max_new_tokens", "no_repeat_ngram_size",
                "repetition_penalty")


def _is_int(value) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return (_is_int(value) or isinstance(value, float | np.floating)) and math.isfinite(value)


@dataclass(frozen=True)
class GenerationSettings:
    """How to decode: greedy by default, beam search when ``num_beams`` > 1, sampling when
    ``do_sample`` (Holtzman et al. 2020 for ``top_p``; Fan et al. 2018 for ``top_k``).

    Every field is checked when the object is made (``__post_init__``); the checks that
    depend on a model (its length limit, its languages) are ``check_for``. Numbers are
    stored as plain ``int`` / ``float``, so equal settings hash and cache alike.

    Raises:
        InputError: the first field out of range, named as in ``generate()``.
    """

    num_beams: int = 1  # beams kept at each step; 1 = no beam search
    length_penalty: float = 1.0  # a hypothesis scores sum(log p) / length ** length_penalty
    early_stopping: bool | None = None  # beam search: True stops once num_beams finished;
    # False when the live beams cannot beat them; None = the model's own setting
    do_sample: bool = False  # draw each token from the (filtered) distribution
    temperature: float = 1.0  # logits / temperature before sampling; 0 = greedy
    top_k: int = 0  # sample among the k most probable tokens; 0 = off
    top_p: float = 1.0  # sample within the smallest set of probability >= top_p; 1 = off
    seed: int | None = None  # the sampling's random seed (reproducible draws)
    max_new_tokens: int | None = None  # the most tokens to produce; None = the model's
    no_repeat_ngram_size: int = 0  # no n-gram of this many tokens twice; 0 = off
    repetition_penalty: float = 1.0  # a token already output: log p x this; 1 = off
    src_lang: str | None = None  # a multilingual model's source language
    tgt_lang: str | None = None  # its target language (forced first, forced_bos_token_id)
    task: str | None = None  # a T5-style model's task: its prefix goes before the sentence
    positional: str = "normal"  # the positional-encoding experiment: normal, none, shuffled
    positional_seed: int = 0  # the seed of the "shuffled" permutation

    def __post_init__(self) -> None:
        checks = [
            ("num_beams", _is_int(self.num_beams) and 1 <= self.num_beams <= MAX_BEAMS,
             f"an integer from 1 to {MAX_BEAMS}"),
            ("length_penalty", _is_number(self.length_penalty), "a finite number"),
            ("early_stopping", self.early_stopping is None
             or isinstance(self.early_stopping, bool), "True, False or None"),
            ("do_sample", isinstance(self.do_sample, bool), "True or False"),
            ("temperature", _is_number(self.temperature) and self.temperature >= 0,
             "a number >= 0"),
            ("top_k", _is_int(self.top_k) and self.top_k >= 0, "an integer >= 0 (0 = off)"),
            ("top_p", _is_number(self.top_p) and 0 < self.top_p <= 1, "in (0, 1] (1 = off)"),
            ("seed", self.seed is None or _is_int(self.seed) and 0 <= self.seed <= MAX_SEED,
             f"None or an integer from 0 to {MAX_SEED}"),
            ("max_new_tokens", self.max_new_tokens is None or _is_int(self.max_new_tokens)
             and self.max_new_tokens >= 1, "None or an integer >= 1"),
            ("no_repeat_ngram_size", _is_int(self.no_repeat_ngram_size)
             and self.no_repeat_ngram_size >= 0, "an integer >= 0 (0 = off)"),
            ("repetition_penalty", _is_number(self.repetition_penalty)
             and 0 < self.repetition_penalty <= MAX_REPETITION_PENALTY,
             f"a number in (0, {MAX_REPETITION_PENALTY:g}] (1 = off)"),
            ("src_lang", self.src_lang is None or isinstance(self.src_lang, str),
             "None or a language code"),
            ("tgt_lang", self.tgt_lang is None or isinstance(self.tgt_lang, str),
             "None or a language code"),
            ("task", self.task is None or isinstance(self.task, str), "None or a task name"),
            ("positional", self.positional in POSITIONAL_MODES,
             f"one of {', '.join(POSITIONAL_MODES)}"),
            ("positional_seed", _is_int(self.positional_seed)
             and 0 <= self.positional_seed <= MAX_SEED, f"an integer from 0 to {MAX_SEED}"),
        ]
        for name, ok, what in checks:
            if not ok:
                raise InputError(f"{name} must be {what}; got {_short(getattr(self, name), 30)}")
        if self.do_sample and self.num_beams > 1:
            raise InputError("choose beam search (num_beams > 1) or sampling (do_sample), "
                             "not both")
        for f in fields(self):  # plain Python numbers of the field's type: equal settings
            value = getattr(self, f.name)  # hash alike (4 and np.int64(4); 1 and 1.0)
            if f.type.startswith("float"):
                object.__setattr__(self, f.name, float(value))
            elif _is_int(value):
                object.__setattr__(self, f.name, int(value))

    @property
    def strategy(self) -> str:
        """The strategy's id: ``"greedy"``, ``"beam"`` or ``"sampling"`` (``STRATEGIES``)."""
        return "beam" if self.num_beams > 1 else "sampling" if self.do_sample else "greedy"

    def replace(self, **changes) -> GenerationSettings:
        """A copy with ``changes`` (field names), checked like a new object.

        Raises:
            InputError: an unknown field name, or a value out of range.
        """
        unknown = sorted(set(changes) - {f.name for f in fields(self)})
        if unknown:
            raise InputError(f"unknown generation setting {_short(unknown[0], 30)}")
        return dataclasses.replace(self, **changes)

    def resolved(self, default_max_new_tokens: int, default_early_stopping: bool
                 ) -> GenerationSettings:
        """These settings as a decoding runs them: ``max_new_tokens`` and ``early_stopping``
        left to the model (None) filled with its own (``ModelInfo.default_max_new_tokens``,
        ``ModelInfo.early_stopping``). The one place both are resolved, for ``generate``
        and ``translate_batch`` alike.

        Raises:
            InputError: a default out of range (a ``max_new_tokens`` below 1).
        """
        return self.replace(
            max_new_tokens=default_max_new_tokens if self.max_new_tokens is None
            else self.max_new_tokens,
            early_stopping=bool(default_early_stopping) if self.early_stopping is None
            else self.early_stopping)

    def logits_processor(self, target):
        """The decoding's processor chain for these resolved settings: the target side's
        (``target.processor(max_new_tokens, tgt_lang)``: its forced tokens) then the
        settings' own (``processors.for_settings``: repetition penalty, no-repeat n-grams),
        a ``processors.LogitsProcessor`` or None.

        Raises:
            ValueError: settings not ``resolved`` (no ``max_new_tokens``).
        """
        from .processors import chain, for_settings

        if self.max_new_tokens is None:
            raise ValueError("resolve the settings first (GenerationSettings.resolved)")
        return chain(target.processor(self.max_new_tokens, self.tgt_lang), for_settings(self))

    def check_for(self, max_len: int, languages: tuple[str, ...] = (),
                  n_forced: int = 0, tasks: Collection[str] = ()) -> None:
        """The checks that depend on the model: ``max_new_tokens`` within its positions
        (1 .. max_len - 1, and no fewer than the ``n_forced`` tokens of a prefix), the
        languages among its ``languages`` (none for a one-pair model), and the task among
        its ``tasks`` (e.g. ``ModelInfo.task_prefixes``, by name; none for most models).

        Raises:
            InputError: naming the setting and what the model allows.
        """
        limit = max_len - 1
        if self.max_new_tokens is not None and not (
                max(1, n_forced) <= self.max_new_tokens <= limit):
            raise InputError(f"max_new_tokens must be an integer from {max(1, n_forced)} to "
                             f"{limit}")
        for lang in (self.src_lang, self.tgt_lang):
            if lang is not None and lang not in languages:
                have = ", ".join(languages) or "none: it translates one language pair"
                raise InputError(f"This model has no language {_short(lang, 20)} "
                                 f"(languages: {have}).")
        if self.task is not None and self.task not in tasks:
            have = ", ".join(tasks) or "none"
            raise InputError(f"This model has no task {_short(self.task, 40)} (tasks: {have}).")

    def to_query(self) -> dict[str, str]:
        """The URL encoding: ``strategy`` (unless greedy) and the settings of that strategy
        and the languages that differ from their defaults, as strings. ``from_query`` reads
        it back to equal settings (the positional experiment is not a link's)."""
        default = GenerationSettings()
        query = {} if self.strategy == "greedy" else {"strategy": self.strategy}
        for name in (*STRATEGY_FIELDS[self.strategy], *QUERY_FIELDS):
            value = getattr(self, name)
            if value != getattr(default, name) or name == "num_beams":
                query[name] = str(value)
        return query

    @classmethod
    def from_query(cls, params: Mapping[str, str], aliases: Mapping[str, str] | None = None
                   ) -> tuple[GenerationSettings, tuple[str, ...]]:
        """Settings from URL query parameters (``to_query``'s), and the names of those that
        could not be used (a bad number, a value out of range, a setting of another
        strategy is simply ignored). Each setting is checked alone, so one bad value drops
        only itself.

        Args:
            params: query parameter -> value (other parameters are ignored).
            aliases: other spellings of the strategy ids (e.g. the labels older links held:
                ``{"Beam search": "beam", "束搜索": "beam"}``).
        """
        raw = params.get("strategy")
        strategy = raw if raw in STRATEGIES else (aliases or {}).get(raw or "", "greedy")
        dropped = [] if raw is None or raw in STRATEGIES or raw in (aliases or {}) \
            else ["strategy"]
        base = {"beam": cls(num_beams=4), "sampling": cls(do_sample=True, seed=0)}.get(
            strategy, cls())
        changes: dict[str, object] = {}
        types = {f.name: f.type for f in fields(cls)}
        for name in (*STRATEGY_FIELDS[strategy], *QUERY_FIELDS):
            if name not in params:
                continue
            text, value = str(params[name]).strip(), None
            try:
                if "int" in types[name]:
                    value = int(text)
                elif "float" in types[name]:
                    value = float(text)
                else:
                    value = text
                base.replace(**changes, **{name: value})
            except (ValueError, InputError):
                dropped.append(name)
                continue
            changes[name] = value
        return base.replace(**changes), tuple(dropped)
