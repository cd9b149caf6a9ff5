"""``GenerationSettings``: every decoding option in one frozen, hashable object, in Hugging
Face ``generate()``'s names (as ``transformers.GenerationConfig``). It is the one validator
of those options, the cache key of a decoding, and their one URL encoding
(``to_query`` / ``from_query``), so a link holds stable, language-independent values:
``strategy=beam&num_beams=4``.

Every bound of a numeric setting is in ``BOUNDS``, the one table of them: the settings, the
sidebar's widgets (``ui.controls.RANGES``, so a link's value is shown exactly when it is
valid) and the decoding functions' own argument checks (``check``) all read it.

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
# The query parameters of each strategy (besides ``strategy``), in the order links list them.
STRATEGY_FIELDS = {"greedy": (), "beam": ("num_beams", "length_penalty"),
                   "sampling": ("temperature", "top_k", "top_p", "seed")}
# Any strategy's, when not their default.
QUERY_FIELDS = ("src_lang", "tgt_lang", "task", "chat", "max_new_tokens",
                "no_repeat_ngram_size", "repetition_penalty")
MAX_SEED = 2**31 - 1  # a sampling seed and a positional seed: what a 32-bit int holds


def _is_int(value) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return (_is_int(value) or isinstance(value, float | np.floating)) and math.isfinite(value)


def _text(number: float) -> str:
    return str(number) if isinstance(number, int) else f"{number:g}"


@dataclass(frozen=True)
class Bound:
    """The values one numeric setting takes: ``low`` <= value <= ``high``, both included,
    whole numbers where ``integer`` (never a bool, NaN or infinity).

    Attributes:
        low, high: the bounds; ``high`` None where the setting has none of its own
            (``max_new_tokens``: the model's, ``GenerationSettings.check_for``).
        integer: whole numbers only.
        step: the sidebar widget's step (``ui.controls``); None: no widget.
        off: the value that turns the setting off, where one does (said in messages).
    """

    low: int | float
    high: int | float | None
    integer: bool = False
    step: int | float | None = None
    off: int | float | None = None

    def holds(self, value, high: float | None = None) -> bool:
        """Whether ``value`` is a number of this kind within [low, high] (``high``: a
        model's own upper bound, where the table has none)."""
        top = self.high if high is None else high
        ok = _is_int(value) if self.integer else _is_number(value)
        return ok and self.low <= value and (top is None or value <= top)

    def describe(self, high: float | None = None) -> str:
        """What ``holds`` accepts, for a message: "an integer from 1 to 8"."""
        top = self.high if high is None else high
        kind = "an integer" if self.integer else "a number"
        span = f">= {_text(self.low)}" if top is None else \
            f"from {_text(self.low)} to {_text(top)}"
        return f"{kind} {span}" + ("" if self.off is None else f" ({_text(self.off)} = off)")


# Every bound of a decoding setting, and the only one: GenerationSettings checks against it,
# ui.controls builds its widgets from it (so a link's value is valid in the settings exactly
# when the sidebar can show it), and the decoding functions (strategies, processors, the
# padded batch) check their arguments with ``check``. Float bounds are floats, so that a
# widget's numbers are of one type.
BOUNDS = {
    "num_beams": Bound(1, 8, integer=True, step=1),  # 1 is greedy; beam search is 2 and up
    "length_penalty": Bound(0.0, 2.0, step=0.1),  # 0: the plain sum of log p; > 1 favours long
    "temperature": Bound(0.0, 2.0, step=0.05),  # 0 is greedy; above 1 flattens the distribution
    "top_k": Bound(0, 100, integer=True, step=1, off=0),
    "top_p": Bound(0.05, 1.0, step=0.05, off=1.0),
    "seed": Bound(0, MAX_SEED, integer=True, step=1),
    "max_new_tokens": Bound(1, None, integer=True),  # at most the model's max_len - 1
    "no_repeat_ngram_size": Bound(0, 6, integer=True, step=1, off=0),
    "repetition_penalty": Bound(1.0, 2.0, step=0.05, off=1.0),  # stronger garbles the output
    "positional_seed": Bound(0, MAX_SEED, integer=True),
}


def check(name: str, value, error: type[Exception] = InputError, *,
          high: float | None = None, optional: bool = False) -> None:
    """Raise ``error`` unless ``BOUNDS[name]`` holds ``value`` (``high``: a model's own upper
    bound, as ``Bound.holds``; ``optional``: None is accepted too): the one message of a
    setting out of range, for ``GenerationSettings`` and the decoding functions alike.

    Raises:
        error: "temperature must be a number from 0 to 2; got 3".
    """
    bound = BOUNDS[name]
    if not (optional and value is None or bound.holds(value, high)):
        what = ("None or " if optional else "") + bound.describe(high)
        raise error(f"{name} must be {what}; got {_short(value, 30)}")


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
    chat: bool = False  # an instruct model's chat template around the prompt (one user turn)
    positional: str = "normal"  # the positional-encoding experiment: normal, none, shuffled
    positional_seed: int = 0  # the seed of the "shuffled" permutation

    def __post_init__(self) -> None:
        types = {f.name: f.type for f in fields(self)}
        for name in BOUNDS:  # the numbers; None where the field's type allows it
            check(name, getattr(self, name), optional="None" in types[name])
        checks = [
            ("early_stopping", self.early_stopping is None
             or isinstance(self.early_stopping, bool), "True, False or None"),
            ("do_sample", isinstance(self.do_sample, bool), "True or False"),
            ("src_lang", self.src_lang is None or isinstance(self.src_lang, str),
             "None or a language code"),
            ("tgt_lang", self.tgt_lang is None or isinstance(self.tgt_lang, str),
             "None or a language code"),
            ("task", self.task is None or isinstance(self.task, str), "None or a task name"),
            ("chat", isinstance(self.chat, bool), "True or False"),
            ("positional", self.positional in POSITIONAL_MODES,
             f"one of {', '.join(POSITIONAL_MODES)}"),
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

    def check_for(self, max_len: int, languages: tuple[str, ...] = (),
                  n_forced: int = 0, tasks: Collection[str] = (), *,
                  chat: bool = False) -> None:
        """The checks that depend on the model: ``max_new_tokens`` within its positions
        (1 .. max_len - 1, and no fewer than the ``n_forced`` tokens of a prefix), the
        languages among its ``languages`` (none for a one-pair model), the task among
        its ``tasks`` (e.g. ``ModelInfo.task_prefixes``, by name; none for most models), and
        the chat template only where the model has one (``chat``:
        ``ModelInfo.chat_template``).

        Raises:
            InputError: naming the setting and what the model allows.
        """
        limit, low = max_len - 1, max(BOUNDS["max_new_tokens"].low, n_forced)
        if self.max_new_tokens is not None and not low <= self.max_new_tokens <= limit:
            raise InputError(f"max_new_tokens must be an integer from {low} to {limit}")
        for lang in (self.src_lang, self.tgt_lang):
            if lang is not None and lang not in languages:
                have = ", ".join(languages) or "none: it translates one language pair"
                raise InputError(f"This model has no language {_short(lang, 20)} "
                                 f"(languages: {have}).")
        if self.task is not None and self.task not in tasks:
            have = ", ".join(tasks) or "none"
            raise InputError(f"This model has no task {_short(self.task, 40)} (tasks: {have}).")
        if self.chat and not chat:
            raise InputError("This model has no chat template: its tokenizer writes none.")

    def to_query(self) -> dict[str, str]:
        """The URL encoding: ``strategy`` (unless greedy) and the settings of that strategy
        and the languages that differ from where the strategy starts (``STARTS``), as
        strings. ``from_query`` reads it back to equal settings, starting from the same
        ``STARTS`` (the positional experiment is not a link's)."""
        default = STARTS[self.strategy]
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
        base = STARTS[strategy]
        changes: dict[str, object] = {}
        types = {f.name: f.type for f in fields(cls)}
        for name in (*STRATEGY_FIELDS[strategy], *QUERY_FIELDS):
            if name not in params:
                continue
            text, value = str(params[name]).strip(), None
            try:
                if types[name] == "bool":
                    value = {"true": True, "false": False}[text.lower()]
                elif "int" in types[name]:
                    value = int(text)
                elif "float" in types[name]:
                    value = float(text)
                else:
                    value = text
                base.replace(**changes, **{name: value})
            except (ValueError, KeyError, InputError):
                dropped.append(name)
                continue
            changes[name] = value
        return base.replace(**changes), tuple(dropped)


# Where each strategy starts: a link's base and the sidebar's defaults (``ui.controls``).
# Sampling starts where the default models write sense: of the settings that keep 90 % of
# greedy decoding's right share on the classroom set's CALIBRATION half in both directions,
# the one whose samples vary most (``benchmarks/sampling.py``; figures in docs/models.md).
# At temperature 1 and no top-p, half as many samples were right (27 % against 53 %).
STARTS = {"greedy": GenerationSettings(), "beam": GenerationSettings(num_beams=4),
          "sampling": GenerationSettings(do_sample=True, temperature=0.3, top_p=0.9, seed=0)}
