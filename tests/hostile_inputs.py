"""What people type, table-driven: used by the AppTest, API and browser tests.

Each entry is (name, text, outcome, expected): ``outcome`` is ``"message"`` (the app shows a
short explanation and draws no chart), ``"decode"`` (the app decodes, flagging unknown words
if any) or ``"exact"`` (the app decodes to ``expected`` exactly). For ``"message"``,
``expected`` is a phrase the message must contain. The outcomes are those of a word-level
model (the grammar models); ``for_model`` gives a subword model's.
"""

from __future__ import annotations

from model.core.vocab import normalize_text

GOOD = "why do we work ?"
GOOD_ZH = "我们为什么工作？"

HOSTILE_INPUTS: list[tuple[str, str, str, str]] = [
    ("empty", "", "message", "empty"),
    ("spaces only", "       ", "message", "empty"),
    ("tabs and newlines", "\t\n  \n\t", "message", "empty"),
    ("10,000 characters", "why do we work ? " * 588 + "a" * 4, "message", "characters long"),
    ("1,000,000 characters", "a" * 1_000_000, "message", "characters long"),
    ("100 words", "we " * 100, "message", "tokens"),
    ("emoji only", "🙂🙂🙂 🚀", "message", "no words"),
    ("emoji with words", "why do we work ? 🙂", "decode", ""),
    ("right-to-left text", "مرحبا بالعالم", "message", "vocabulary"),
    ("bidi override", "\u202ewhy do we work ?\u202c", "exact", GOOD_ZH),
    ("zero-width only", "\u200b\u200c\u200d\ufeff", "message", "empty"),
    ("zero-width inside words", "wh\u200by do w\u200de work ?", "exact", GOOD_ZH),
    ("NUL character", "why do we\x00 work ?", "exact", GOOD_ZH),
    ("control characters", "\x07\x1b[31mwhy do we work ?\x1b[0m", "decode", ""),
    ("script tag", "<script>alert(1)</script>", "message", "vocabulary"),
    ("img onerror", '<img src=x onerror="alert(1)"> why do we work ?', "decode", ""),
    ("bold tag around words", "<b>we</b> eat rice .", "decode", ""),
    ("markdown emphasis", "**why** do _we_ work ?", "decode", ""),
    ("markdown link", "[click](javascript:alert(1))", "message", "vocabulary"),
    ("latex", "$\\frac{a}{b}$ why do we work ?", "decode", ""),
    ("streamlit directives", ":red[why] do we work ? :smile:", "decode", ""),
    ("only punctuation", "?!.,;:", "message", "no words"),
    ("only unknown words", "zxq blorf wibble", "message", "vocabulary"),
    ("digits only", "123 456 7890", "message", "vocabulary"),
    ("mixed scripts", "why 我们 work ?", "decode", ""),
    ("full-width letters", "ＷＨＹ ＤＯ ＷＥ ＷＯＲＫ？", "exact", GOOD_ZH),
    ("combining accents", "whý dó wé wórk ?", "exact", GOOD_ZH),
    ("cyrillic look-alike", "wһy do we work ?", "decode", ""),
    ("upper case, no spaces before ?", "WHY DO WE WORK?", "exact", GOOD_ZH),
    ("surrounding whitespace", "   why do we work ?   ", "exact", GOOD_ZH),
    ("sql injection", "'; DROP TABLE users; --", "decode", ""),
    ("one very long word", "w" * 250, "message", "vocabulary"),
    ("unknown words and a full stop", "zxq blorf wibble .", "message", "vocabulary"),
    ("301 characters", "a" * 301, "message", "characters long"),
    ("296 characters with padding", " " * 280 + GOOD, "exact", GOOD_ZH),
    ("backtick fences", "``why`` do ```we``` work ?", "decode", ""),
    ("markdown heading and quote", "# > why do we work ?", "decode", ""),
    ("html entity", "&lt;script&gt; why do we work ?", "decode", ""),
    ("emoji shortcode and icon", ":material/home: :smile: why do we work ?", "decode", ""),
    ("autolink", "www.example.com why do we work ?", "decode", ""),
    ("30 unknown words", " ".join("zq" + chr(97 + i % 26) + chr(97 + i // 26) for i in range(30))
     + " " + GOOD, "decode", ""),
]


def for_model(text: str, outcome: str, expected: str, subword: bool) -> tuple[str, str]:
    """(outcome, expected) for a word-level or a subword model. A subword model has no
    unknown words: what a word-level model refuses as outside its vocabulary, it decodes;
    and it keeps case, so only a text that normalises to ``GOOD`` itself must give
    ``GOOD_ZH`` exactly."""
    if not subword:
        return outcome, expected
    if outcome == "message" and expected == "vocabulary":
        return "decode", ""
    if outcome == "exact" and normalize_text(text).strip() != GOOD:
        return "decode", ""
    return outcome, expected
