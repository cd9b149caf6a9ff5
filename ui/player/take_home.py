"""The take-home page: one self-contained HTML file that steps through a decoding offline, in
any browser, with no Python (issue 34). It holds the trace document
(``model.decoding.document``, with the pinyin of the labels of the model's Chinese side:
the target of an en -> zh model, the source of a zh -> en one), the player
(``ui/player/player.js``, ``player.html`` and ``player.css``, as the app's in-browser
stepping uses them, ``ui.player.in_browser``), plotly.js (plotly's own ``plotly.min.js``) and
the page's strings in one language, with a short legend of each view in both, and the
verdict line the app shows under the translation (``verdict_lines``: confident, or what to
check and which words look left out). A
Content-Security-Policy allows no request at all: the file works from ``file://`` with the
network off.

    python -m ui.player.take_home "Why do we work?" --out why.html [--lang zh] [--model NAME]

NAME: a folder name of ``pretrained/``, a folder, or a hub name in the local Hugging Face cache
(``model.load_pretrained``); the default is the app's default model.

The app's header offers the same file ("HTML page" / "HTML 网页"), built only when clicked.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from functools import lru_cache
from pathlib import Path
from string import Template

from model import DecodeTrace
from model.analysis.verdict import Verdict, judge_trace
from model.backends.records import ModelInfo
from model.decoding.document import dumps, to_document
from viz.convention import display_settings

from ..i18n import HTML_LANG, text_in
from ..pinyin import chinese_sides, side_readings
from ..verdict import missing_item, negation_item, repeated_item, signal_names

PLAYER = Path(__file__).parent
VIEW_KINDS = ("encoder", "decoder", "cross")  # the attention views the player draws
# A decoder-only model's names for them (its one map cut at the prompt, as the app's views)
ONE_STACK_NAMES = {"encoder": "prompt", "decoder": "continuation", "cross": "to_prompt"}
MAX_BYTES = 8 * 1024 * 1024  # the page's budget (issue 34): plotly.js is about 4.8 MB of it


@lru_cache(maxsize=1)
def plotly_js() -> str:
    """plotly's own ``plotly.min.js`` (the one ``fig.to_html(include_plotlyjs=True)`` inlines),
    read once per process."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def page_strings(lang: str, architecture: str = "encoder-decoder") -> dict:
    """The player's strings in ``lang`` ("en" or "zh"): every ``home_*`` string of the
    catalogue, the layer and head pickers' options as the app's views name them
    (``layer_option``, ``head_option``), the views' names and explanations (a decoder-only
    model's: ``ONE_STACK_NAMES``), and the legend of each view in both languages
    (``legend``: [{"title", "texts"}])."""
    from ..i18n import STRINGS

    names = ONE_STACK_NAMES if architecture == "decoder-only" else {}

    # the templates themselves: the player fills in their {fields} (str.format's syntax)
    out = {key: entry.get(lang, entry["en"]) for key, entry in STRINGS.items()
           if key.startswith("home_") or key in ("layer_option", "head_option")}  # the app's
    for kind in VIEW_KINDS:
        view = names.get(kind, kind)
        out[f"view_{kind}"] = text_in(f"tab_{view}", lang)
        out[f"explain_{kind}"] = text_in(f"explain_{view}", lang)
    order = ("en", "zh") if lang == "en" else ("zh", "en")
    out["legend"] = [{"title": " · ".join(text_in(f"tab_{names.get(kind, kind)}", o)
                                          for o in order),
                      "texts": [text_in(f"explain_{names.get(kind, kind)}", o) for o in order]}
                     for kind in VIEW_KINDS]
    return out


def _script_json(value) -> str:
    """JSON safe inside a ``<script>`` element: ``<`` written as ``\\u003c`` (so no
    ``</script>`` or ``<!--`` in a sentence can end or bend the element)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def verdict_lines(v: Verdict, lang: str) -> list[str]:
    """The app's verdict ``v`` (``ui.verdict.verdict_banner``) as plain text lines in ``lang``:
    its headline (confident, or "Check this translation:" and the signals that fire), then
    several sentences typed, the numbers missing, the words not in the translation with the
    dictionary's hints (``ui.verdict.missing_item``: *Chengdu (the dictionary: 成都、成渝)*),
    a negation dropped and a word said twice (``negation_item``, ``repeated_item``),
    the words hardly looked at and the words barely seen in training. Text, never markup:
    the page escapes it."""
    sep = text_in("word_separator", lang)
    lines = [text_in("verdict_summary", lang, signals=signal_names(v, lang)) if v.flagged
             else text_in("home_verdict_ok", lang)]
    zh = v.source_language == "zh"
    if v.sentences:
        lines.append(text_in("home_verdict_sentences", lang, n=len(v.sentences)))
    if v.numbers:
        lines.append(text_in("home_verdict_number", lang, numbers=sep.join(v.numbers)))
    if v.untranslated:
        lines.append(text_in("home_verdict_untranslated", lang, words=sep.join(
            missing_item(m, lang, zh=zh, quote=str) for m in v.untranslated)))
    if v.negation:
        lines.append(text_in("home_verdict_negation", lang, items=sep.join(
            negation_item(n, lang, markdown=False) for n in v.negation)))
    if v.repeated:
        lines.append(text_in("home_verdict_repeated", lang, items=sep.join(
            repeated_item(r, lang, markdown=False) for r in v.repeated)))
    named = {m.word for m in v.untranslated}  # named once, as the app does
    if low := [w for _, w, _ in v.left_out if w not in named]:
        lines.append(text_in("home_verdict_left_out", lang, words=sep.join(low)))
    if v.rare:
        lines.append(text_in("home_verdict_rare", lang, words=sep.join(
            text_in("verdict_rare_item", lang, word=w, n=n) for w, n in v.rare)))
    return lines


def page_verdict(trace: DecodeTrace, info: ModelInfo | None) -> Verdict:
    """The verdict of ``trace`` as the app judges it (``verdict.judge_trace``) for a model
    of ``info`` (its training counts and source language; None: English, no counts)."""
    if info is None:
        return judge_trace(trace, None, "en")
    return judge_trace(trace, info.train_counts, info.source_language or "en")


def page_html(trace: DecodeTrace, model: str, lang: str = "en", *,
              info: ModelInfo | None = None, verdict: Verdict | None = None) -> str:
    """The take-home page of ``trace`` (decoded by ``model``, a name as the app lists it) in
    ``lang`` ("en" or "zh"), with the pinyin of the labels of the model's Chinese side
    (``pinyin.chinese_sides(info)``: ``src_pinyin`` for a zh -> en model, ``tgt_pinyin``
    for an en -> zh one; ``info`` None: en -> zh), and the verdict line (``verdict_lines``
    of ``verdict``, the one the app shows; None: ``page_verdict``), escaped.

    Raises:
        ValueError: ``lang`` is neither "en" nor "zh".
    """
    if lang not in HTML_LANG:
        raise ValueError(f"lang must be one of {sorted(HTML_LANG)}, got {lang!r}")
    src, tgt = side_readings(trace, chinese_sides(info))
    doc = to_document(trace, display_settings(), model, tgt_pinyin=tgt, src_pinyin=src)
    template = Template((PLAYER / "page.html").read_text(encoding="utf-8"))
    verdict = verdict or page_verdict(trace, info)
    return template.substitute(
        verdict_class="flagged" if verdict.flagged else "confident",
        verdict="\n".join(f"<p>{html.escape(line)}</p>" for line in verdict_lines(verdict, lang)),
        html_lang=HTML_LANG[lang],
        title=html.escape(text_in("home_title", lang, sentence=trace.src_text)),
        css=(PLAYER / "player.css").read_text(encoding="utf-8"),
        body=(PLAYER / "player.html").read_text(encoding="utf-8"),
        document=_script_json(dumps(doc)),
        strings=_script_json(page_strings(lang, trace.architecture)),
        plotly=plotly_js().replace("</script", "<\\/script"),
        player=(PLAYER / "player.js").read_text(encoding="utf-8"))


def file_name(trace: DecodeTrace) -> str:
    """A file name for the page of ``trace``: the sentence's first letters and digits."""
    stem = "".join(c if c.isalnum() else "-" for c in trace.src_text.lower())
    stem = "-".join(p for p in stem.split("-") if p)[:40] or "decoding"
    return f"attention-{stem}.html"


def main(argv: list[str] | None = None) -> int:
    """Command line (module docstring): decode SENTENCE greedily with the model and write the
    page; a bad model or sentence is one line on stderr and exit status 2."""
    from model import CheckpointError, InputError, load_pretrained
    from model.backends.load import DEFAULT_MODELS

    ap = argparse.ArgumentParser(prog="python -m ui.player.take_home",
                                 description="Write a decoding as one offline HTML page.")
    ap.add_argument("sentence")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--lang", choices=sorted(HTML_LANG), default="en")
    ap.add_argument("--model", default=DEFAULT_MODELS[0])  # as load_pretrained reads it
    args = ap.parse_args(argv)
    try:
        translator = load_pretrained(args.model)
        trace = translator.generate(args.sentence)
    except (CheckpointError, InputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    page = page_html(trace, args.model, args.lang, info=translator.info)
    args.out.write_text(page, encoding="utf-8")
    print(f"wrote {args.out} ({len(page.encode('utf-8')) / 2**20:.1f} MB): "
          f"{trace.src_text} -> {trace.output_text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
