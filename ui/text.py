"""Markdown-safe text helpers and the app's explanatory copy.

Streamlit renders Markdown (and ``:emoji:`` / ``$LaTeX$`` directives) in labels and messages,
so nothing a user typed is ever put into them raw: tokens go in code spans, other strings
are backslash-escaped.
"""

from __future__ import annotations

import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&=])")
_LINE_BREAK = re.compile(r"[\r\n\x0b\x0c\x85\u2028\u2029]+")


def md_literal(text: str) -> str:
    """Escape every Markdown-active ASCII character so ``text`` shows literally."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def code_span(token: str) -> str:
    """A Markdown code span showing ``token`` literally, whatever it contains.

    Line breaks become spaces (a code span is one line). The fence is one backtick longer
    than the longest run of backticks inside, so no run can close the span early; a token
    with a backtick is padded with spaces, which CommonMark strips again.
    """
    token = _LINE_BREAK.sub(" ", token)
    longest = max((len(run) for run in re.findall(r"`+", token)), default=0)
    if longest == 0 and token.strip():
        return f"`{token}`"
    fence = "`" * (longest + 1)
    return f"{fence} {token} {fence}"


def clip(text: str, limit: int = 30) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis, so messages stay short."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def token_row(tokens) -> str:
    """Tokens as a row of code spans: ``<s>`` ``我`` ``们``."""
    return " ".join(code_span(t) for t in tokens)


TABS = (
    "Positional encoding",
    "Masks",
    "Encoder self-attention",
    "Decoder self-attention",
    "Cross-attention",
    "Inside one head",
)

EXPLAIN = {
    "Positional encoding": (
        "Attention alone ignores word order, so each token's embedding (scaled by √d_model) "
        "gets a fixed vector added that depends only on its position: "
        "PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(…). "
        "Low dimensions oscillate fast, high ones slowly, so every position has its own "
        "pattern. 位置编码：给每个位置加上一个固定的正弦/余弦向量。"
    ),
    "Masks": (
        "Masks say which keys a query may **not** look at (True = blocked, shown dark). "
        "The padding mask hides `<pad>` tokens added to make a batch rectangular; the "
        "look-ahead (sequence) mask stops decoder position t from seeing positions after "
        "t; the decoder combines both. Blocked scores get −∞ before the softmax, so their "
        "weight is exactly 0. 掩码：padding mask 与 sequence mask。"
    ),
    "Encoder self-attention": (
        "Every source token attends to every source token (rows: queries, columns: keys; "
        "each row sums to 1). This is computed once per sentence, before decoding starts. "
        "编码器自注意力。"
    ),
    "Decoder self-attention": (
        "Each decoder position attends to itself and to earlier positions only (the "
        "look-ahead mask blanks the upper triangle). Rows appear one by one as you step "
        "through decoding. 解码器自注意力（带序列掩码）。"
    ),
    "Cross-attention": (
        "Encoder-decoder attention: each decoder position (query) looks at the encoded "
        "source tokens (keys) to decide what to translate next. The last row is the step "
        "being decoded. 编码器-解码器注意力。"
    ),
    "Inside one head": (
        "One head's whole computation on your sentence: the queries, keys and values, the "
        "scores QKᵀ, their scaling by √d_k, the mask (−∞ where blocked), the softmax and the "
        "weighted sum of the values. It sits inside every attention block of figure 1 of the "
        "paper; the weights in step 5 are the model's own. 单个注意力头的完整计算。"
    ),
}
