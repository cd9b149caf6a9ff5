"""The language switch (English / 简体中文), driven by AppTest with the real app and model (no
mocks), and the string table behind it (``ui.i18n``)."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import fields
from pathlib import Path

import pytest
from apptest_helpers import (
    APP,
    DEFAULT_CHARTS,
    GRAMMAR_MODEL,
    chart_title,
    charts,
    enter,
    run_app,
    split_code_spans,
)
from streamlit.testing.v1 import AppTest

from model.decoding.settings import STARTS
from ui.i18n import (
    LANGUAGES,
    STRINGS,
    VIEW_KEYS,
    VIEWS,
    VIZ_LABELS,
    LocalText,
    placeholders,
    viz_labels,
)
from ui.lesson.texts import lesson_file
from viz import ENGLISH, VizText
from viz.convention import head_number, layer_number

ROOT = Path(__file__).resolve().parents[1]
ZH = "简体中文"
HAN = re.compile(r"[\u4e00-\u9fff]")
ZH_TABS = [STRINGS[VIEW_KEYS[view]]["zh"] for view in VIEWS]
EN_TABS = [STRINGS[VIEW_KEYS[view]]["en"] for view in VIEWS]


def zh(key: str, **fmt) -> str:
    return STRINGS[key]["zh"].format(**fmt)


def in_chinese(at: AppTest | None = None) -> AppTest:
    """``at`` (default: a fresh app) switched to Chinese with the sidebar radio."""
    at = at or run_app()
    at.radio(key="lang").set_value(ZH).run()
    assert not at.exception, at.exception
    return at


def view_names(at: AppTest) -> list[str]:
    """The view picker's options as the page shows them."""
    return at.button_group(key="view").options


def sidebar_labels(at: AppTest) -> list[str]:
    return [w.label for kind in ("radio", "selectbox", "text_input", "slider", "number_input")
            for w in getattr(at.sidebar, kind)]


def titles(at: AppTest) -> list[str]:
    return [chart_title(f) for f in charts(at)]


# -- the table -----------------------------------------------------------------------------------


def test_every_string_has_both_languages_with_the_same_placeholders():
    for table in (STRINGS, VIZ_LABELS):
        for key, entry in table.items():
            assert set(entry) == {"en", "zh"}, key
            assert entry["en"].strip() and entry["zh"].strip(), key
    for key, entry in STRINGS.items():  # str.format templates
        assert placeholders(entry["en"]) == placeholders(entry["zh"]), key
        for lang in ("en", "zh"):  # well formed, and no field is left unfilled
            assert "{" not in re.sub(r"\{\{|\}\}", "", entry[lang]).format(
                **dict.fromkeys(placeholders(entry[lang]), 1)), key
    for key, entry in VIZ_LABELS.items():  # "{n}" and Plotly's "%{y}"
        found = [sorted(re.findall(r"%?\{[^}]*\}", entry[lang])) for lang in ("en", "zh")]
        assert found[0] == found[1], key
    for key, entry in STRINGS.items():  # Chinese text is Chinese (a few are symbols alike)
        letters = re.sub(r"\{[^}]*\}", "", entry["en"])
        if re.search(r"[A-Za-z]{3,}", letters) and entry["en"] != "{error}":
            assert HAN.search(entry["zh"]) or entry["zh"] == entry["en"], key
    assert list(LANGUAGES.values()) == ["en", "zh"]


#: The one name of a head by its number in each language ("Head" at a sentence's start).
HEAD_NAME = {"en": re.compile(r"[Hh]ead \{\w*\}"), "zh": re.compile(r"第 \{\w*\} 个头")}
#: Any naming of a head by its number, in any form (in Chinese, 头 before a head's field
#: or a digit, 第 … 头, … 号头; a count such as "{n} 个头" is no name).
HEAD_NAMED = {
    "en": re.compile(r"(?i)\bhead\s*#?\s*\{\w*\}|\bH\{|\{\w*\}(?:st|nd|rd|th) head\b"),
    "zh": re.compile(r"头\s*(?:\{(?:head|n|h)\}|\d)|第\s*\{\w*\}\s*个?\s*头|\{\w*\}\s*号头"),
}


def _texts(entry) -> list[dict]:
    """The {"en", "zh"} texts inside a table entry of strings.toml or lesson.toml."""
    if isinstance(entry, dict):
        if set(entry) == {"en", "zh"} and all(isinstance(v, str) for v in entry.values()):
            return [entry]
        return [text for value in entry.values() for text in _texts(value)]
    if isinstance(entry, list):
        return [text for value in entry for text in _texts(value)]
    return []


def test_a_head_has_one_name_in_each_language():
    """Every text of the catalogue (ui/strings.toml's interface and chart texts, the lesson's
    chapters) that names a head by its number names it one way in each language: "head 3"
    and "第 3 个头", as the head pickers' options (``i18n.head_label``) and the charts' panel
    titles (``[viz.head]``) do; never "头 3" beside "第 3 个头" (issue 54)."""
    entries = [*_texts(STRINGS), *_texts(VIZ_LABELS), *_texts(lesson_file())]
    assert len(entries) > len(STRINGS)  # the lesson's texts are read too
    named = 0
    for entry in entries:
        for lang in ("en", "zh"):
            for found in HEAD_NAMED[lang].finditer(entry[lang]):
                named += 1
                assert HEAD_NAME[lang].fullmatch(found[0]), (lang, found[0], entry[lang])
    assert named >= 20  # the check is not vacuous
    for lang in ("en", "zh"):
        for text in (STRINGS["head_option"][lang], VIZ_LABELS["head"][lang]):
            assert HEAD_NAME[lang].fullmatch(text), text
    assert HEAD_NAMED["zh"].search("头 {head}") and HEAD_NAMED["zh"].search("第{n}头")
    assert HEAD_NAMED["en"].search("H{head}") and HEAD_NAMED["en"].search("the {n}th head")


def test_the_viz_table_names_every_field_of_viz_text_and_its_english_is_the_default():
    """``[viz.FIELD]`` has one entry per ``VizText`` field, no other, and its English is
    the field's default, so the figures in English are the builders' own."""
    assert set(VIZ_LABELS) == {f.name for f in fields(VizText)}
    for f in fields(VizText):
        assert VIZ_LABELS[f.name]["en"] == f.default == getattr(ENGLISH, f.name), f.name
    for entry in VIZ_LABELS.values():  # "{n}" is the only str.format field, if any
        for lang in ("en", "zh"):
            assert placeholders(re.sub(r"%\{[^}]*\}", "", entry[lang])) <= {"n"}, entry
    for name in ("head", "dim", "dim_sin", "dim_cos"):
        assert "{n}" in VIZ_LABELS[name]["zh"], name


def test_viz_labels_are_the_sessions_language_built_once_per_language():
    def script():
        import streamlit as st

        from ui.i18n import viz_labels

        first = viz_labels()
        st.markdown(f"{first.query}|{first.head.format(n=3)}|{first is viz_labels()}")
        st.session_state["lang"] = "简体中文"
        second = viz_labels()
        st.markdown(f"{second.query}|{second.head.format(n=3)}|{second is viz_labels()}")

    at = AppTest.from_function(script).run()
    assert not at.exception
    assert [m.value for m in at.markdown] == ["Query|Head 3|True", "查询|第 3 个头|True"]
    assert viz_labels() == ENGLISH  # no session: English
    zh_text = VizText(**{name: entry["zh"] for name, entry in VIZ_LABELS.items()})
    assert zh_text.hover_weight == "权重：" and zh_text.kept == "保留"


# Calls whose first argument is text the user reads, and keyword arguments that are.
_TEXT_CALLS = {"markdown", "caption", "info", "warning", "error", "success", "title", "header",
               "subheader", "button", "selectbox", "radio", "slider", "text_input",
               "text_area", "number_input", "multiselect", "expander", "spinner", "toast"}
_TEXT_KWARGS = {"title", "help", "placeholder", "label", "query_label", "key_label",
                "row_label", "col_label", "page_title"}


def _english_literal(node: ast.AST) -> str | None:
    """The English words of a string literal or an f-string's literal parts, if any."""
    parts = ([node] if isinstance(node, ast.Constant) else
             [v for v in node.values if isinstance(v, ast.Constant)]
             if isinstance(node, ast.JoinedStr) else [])
    text = " ".join(p.value for p in parts if isinstance(p.value, str))
    return text if re.search(r"[A-Za-z]{3,}", text) else None


def test_no_english_interface_text_is_written_outside_the_table():
    """Labels, messages, help texts and figure titles in app.py and ui/ all come from
    ``t(...)``: none is an English string literal."""
    found = []
    for path in [ROOT / "app.py", *sorted((ROOT / "ui").rglob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            args = [kw.value for kw in node.keywords if kw.arg in _TEXT_KWARGS]
            if name in _TEXT_CALLS and node.args:
                args.append(node.args[0])
            found += [f"{path.name}:{a.lineno}: {text!r}" for a in args
                      if (text := _english_literal(a))]
    assert not found, found


def test_the_spinners_of_the_cached_functions_follow_the_language():
    """``LocalText`` is the English text, but Streamlit shows ``str()`` of it, in the
    session's language, in a cached function's spinner (``clean_text`` is what it uses)."""

    def script():
        import streamlit as st
        from streamlit.string_util import clean_text

        from ui.i18n import LocalText

        text = LocalText("spinner_decoding")
        st.markdown(clean_text(text))
        st.session_state["lang"] = "简体中文"
        st.markdown(clean_text(text))

    at = AppTest.from_function(script).run()
    assert not at.exception
    assert [m.value for m in at.markdown] == ["Decoding…", "正在解码…"]
    assert LocalText("spinner_loading") == "Loading the model…"


# -- switching -----------------------------------------------------------------------------------


def test_switching_to_chinese_changes_sidebar_views_step_panel_and_figures():
    at = run_app()
    assert at.radio(key="lang").label == "Language / 语言"
    assert at.radio(key="lang").options == ["English", ZH]
    assert at.radio(key="lang").value == "English"
    assert at.sidebar.radio[0].label == "Language / 语言"  # the first thing in the sidebar
    assert view_names(at) == EN_TABS
    in_chinese(at)
    labels = sidebar_labels(at)
    assert zh("sentence") in labels and zh("model") in labels and zh("strategy") in labels
    assert "English sentence" not in labels and "Model" not in labels
    assert at.radio(key="strategy").options == [zh("strategy_greedy"), zh("strategy_beam"),
                                                  zh("strategy_sampling")]
    assert at.sidebar.title[0].value == zh("app_title")
    assert view_names(at) == ZH_TABS and at.button_group(key="view").label == zh("view")
    markdown = [p for m in at.markdown for p in m.value.split("\n\n")]  # paragraphs
    assert zh("step_of", k=1, n=9) in markdown
    assert any(m.startswith(zh("decoder_input_so_far")) for m in markdown)
    assert at.button(key="next_step").label == zh("next")
    assert at.button(key="prev_step").label == zh("previous")
    assert at.selectbox(key="step_layer").options[:2] == ["第 1 层", "第 2 层"]
    assert zh("step_overview_title", k=1, layer=layer_number(0)) in titles(at)
    # the default view
    grid = zh("view_all_heads_title", view=zh("tab_cross"), layer=layer_number(0))
    assert grid in titles(at) and len(charts(at)) == DEFAULT_CHARTS
    step = next(f for f in charts(at)
                if chart_title(f) == zh("step_overview_title", k=1, layer=layer_number(0)))
    panels = [a["text"] for a in step["layout"]["annotations"]]
    assert panels[0] == zh("top_probs_title", n=10) and panels[1].startswith("查询")
    assert step["layout"]["xaxis"]["title"]["text"] == "概率"  # a viz builder's own label
    assert zh("explain_cross") in [c.value for c in at.caption]
    assert at.text_input(key="sentence").value == "why do we work ?"  # input is kept


def test_the_choice_survives_reruns_and_other_widgets_keep_their_choices():
    at = run_app()
    at.radio(key="strategy").set_value("beam").run()
    at.session_state["view"] = "cross"
    at.run()
    at.selectbox(key="cross_layer").select(2).run()
    at.selectbox(key="cross_head").select(5).run()
    at.selectbox(key="speed").select("2 s").run()
    in_chinese(at)
    for _ in range(2):
        assert at.radio(key="lang").value == ZH
        assert at.session_state["view"] == "cross"  # the same view, by its id
        assert at.button_group(key="view").formatted_values == [zh("tab_cross")]
        assert at.radio(key="strategy").value == "beam"
        assert at.selectbox(key="cross_layer").value == 2
        assert at.selectbox(key="cross_head").value == 5
        assert at.selectbox(key="speed").value == "2 s"
        assert at.selectbox(key="speed").options == ["0.5 秒", "1 秒", "2 秒"]
        assert zh("view_head_title", view=zh("tab_cross"), layer=layer_number(2),
                  head=head_number(5)) in titles(at)
        assert zh("beam_header", n=4) in [s.value for s in at.main.subheader]
        at.run()
        assert not at.exception
    at.radio(key="lang").set_value("English").run()  # and back
    assert not at.exception and view_names(at) == EN_TABS
    assert at.session_state["view"] == "cross"
    assert at.selectbox(key="cross_head").value == 5
    assert "Cross-attention, layer 3, head 6" in titles(at)  # shown from 1


def test_a_view_can_be_chosen_by_its_english_or_chinese_name_in_chinese_mode():
    at = in_chinese()
    at.session_state["view"] = "masks"  # what the English tests (and benchmarks) set
    at.run()
    assert not at.exception and at.session_state["view"] == "masks"
    assert zh("batch_header") in [s.value for s in at.subheader]
    at.session_state["view"] = zh("tab_encoder")  # a name, as a link may hold: its id
    at.run()
    assert not at.exception and at.session_state["view"] == "encoder"
    assert zh("view_all_heads_title", view=zh("tab_encoder"), layer=layer_number(0)) in titles(at)


# -- every view in Chinese -----------------------------------------------------------------------


def test_every_view_renders_in_chinese():
    at = in_chinese()
    at.slider(key="step").set_value(4).run()
    for view, label in zip(VIEWS, ZH_TABS, strict=True):
        at.session_state["view"] = view
        at.run()
        assert not at.exception, (view, at.exception)
        assert at.session_state["view"] == view and not at.error
        assert at.button_group(key="view").formatted_values == [label]
        assert any(HAN.search(t) for t in titles(at)), view
    # inside one head: every kind, with the step titles and the table's columns
    at.session_state["view"] = "inside"
    at.run()
    for kind in ("encoder", "decoder", "cross"):
        at.selectbox(key="ih_kind").select(kind).run()
        assert not at.exception
    markdown = [m.value for m in at.markdown]
    for step in ("ih_step1", "ih_step2", "ih_step3", "ih_step4", "ih_step5", "ih_step6"):
        assert zh(step) in markdown
    (table,) = at.dataframe
    assert list(table.value.columns) == ["键", "q·k", "÷ √d_k", "被屏蔽", "权重"]
    assert zh("ih_weights_title") in titles(at)
    # the positional-encoding experiment
    at.session_state["view"] = "positional"
    at.run()
    at.radio(key="pe_mode").set_value("shuffled").run()
    assert not at.exception
    assert any(m.startswith(zh("pe_mode_normal")) for m in [m.value for m in at.markdown])
    assert any(t.endswith("（打乱位置）") for t in titles(at))
    # the padded batch
    at.session_state["view"] = "masks"
    at.run()
    assert any(s.value.startswith("每个句子在批次中的译文") for s in at.success)
    columns = [list(d.value.columns) for d in at.dataframe]
    assert [zh("col_sentence"), zh("col_in_batch"), zh("col_alone")] == columns[-1][:3]


def test_beam_search_and_sampling_in_chinese():
    at = in_chinese()
    at.radio(key="strategy").set_value("beam").run()
    assert not at.exception
    assert zh("beam_tree_title") in titles(at)
    (table,) = at.dataframe
    assert list(table.value.columns) == ["假设", "log p", "得分", "词元数", "已结束"]
    assert any(c.value.startswith("解码方式：束搜索，束宽 4") for c in at.caption)
    at.selectbox(key="hypothesis").select(1).run()
    assert not at.exception
    tree = next(f for f in charts(at) if chart_title(f) == zh("beam_tree_title"))
    assert {t.get("name") for t in tree["data"]} >= {"选中的假设", "保留"}
    at.radio(key="strategy").set_value("sampling").run()
    at.button(key="sample_again").click().run()
    assert not at.exception and at.session_state["seed"] == 1
    assert at.button(key="sample_again").label == zh("sample_again")
    start = STARTS["sampling"].temperature  # where the sidebar's sampling starts
    assert any(c.value.startswith(f"解码方式：采样（温度 {start:.2f}") for c in at.caption)


def test_branch_and_reference_in_chinese():
    at = in_chinese(run_app(GRAMMAR_MODEL))  # its output and vocabulary are the grammar's
    at.slider(key="step").set_value(2).run()
    at.session_state["branch_open"] = True  # the branch controls are built while open
    at.run()
    at.button(key="branch_go").click().run()
    assert not at.exception
    assert zh("branch_header", k=2) in [s.value for s in at.subheader]
    assert any(m.value.startswith("**分支：第 2 步改用") for m in at.markdown)
    assert sum(t == zh("seq_probs_title") for t in titles(at)) == 2
    at.button(key="branch_close").click().run()
    at.text_input(key="reference").input("我们为什么学习？").run()
    assert not at.exception
    (note,) = [i.value for i in at.info if i.value.startswith("第一处不同在第 6 个位置")]
    assert "`学`" in note and "`工`" in note
    at.text_input(key="reference").input("hello").run()  # a model message: English, led in
    (warning,) = at.warning
    assert warning.value.startswith("无法给这个参考译文打分。")
    assert "cannot produce" in warning.value


def test_sentence_messages_in_chinese():
    at = in_chinese(run_app(GRAMMAR_MODEL))  # a word-level model flags unknown words
    enter(at, "why do we wrok ?")
    (warning,) = at.warning
    assert warning.value.startswith(zh("unknown_some")) and "可以试试 `work`、" in warning.value
    enter(at, "zxq blorf .")
    assert at.warning[0].value.startswith(zh("unknown_all")) and not charts(at)
    enter(at, "")
    assert at.info[0].value.startswith("这个句子无法翻译。") and not at.exception
    hostile = "<b>x</b> **y** [a](b) :red[z]"
    enter(at, hostile)
    for el in [*at.markdown, *at.warning, *at.info, *at.caption]:
        outside = split_code_spans(el.value)[1]
        assert "<b>" not in outside and "**y**" not in outside and "[a](b)" not in outside
    enter(at, "why do we work ?")
    assert len(charts(at)) == DEFAULT_CHARTS and not at.warning


# -- the URL -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "expected"), [
    (ZH, ZH), ("zh", ZH), ("zh-CN", ZH), ("English", "English"),
    ("xx", "English"), ("", "English"), ("<script>", "English"),
])
def test_the_lang_query_parameter_picks_the_language_and_a_bad_one_falls_back(value, expected):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["lang"] = value
    at.run()
    assert not at.exception, at.exception
    assert at.radio(key="lang").value == expected
    english = expected == "English"
    assert view_names(at)[0] == ("Positional encoding" if english else "位置编码")
    assert at.text_input(key="sentence").label == ("English sentence" if english else "英文句子")
    assert len(charts(at)) == DEFAULT_CHARTS and not at.error


# -- nothing English left ------------------------------------------------------------------------


def _visible_text(at: AppTest) -> list[str]:
    """The text a reader sees: widget labels, help, placeholders and options, Markdown,
    view and expander labels, and the figures' titles, axis and legend labels, hover text."""
    out = []

    def walk(node):
        proto = getattr(node, "proto", None)
        if proto is not None:
            for field, value in proto.ListFields():
                if field.name in ("label", "body", "help", "placeholder"):
                    if not str(value).startswith("$$"):  # a formula is notation
                        out.append(str(value))
                elif field.name == "options":  # strings, or a button group's options
                    out.extend(str(getattr(v, "content", v)) for v in value)
                elif field.name == "spec":
                    out.extend(_figure_text(json.loads(value)))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    out += [e.label for e in at.expander]
    return out


def _figure_text(fig: dict) -> list[str]:
    layout, out = fig["layout"], []
    for value in layout.values():
        if isinstance(value, dict) and isinstance(value.get("title"), dict):
            out.append(value["title"].get("text", ""))  # title, axes, legend, colour axis
        if isinstance(value, dict) and isinstance(value.get("colorbar"), dict):
            out.append(value["colorbar"].get("title", {}).get("text", ""))
    out += [a.get("text", "") for a in layout.get("annotations", [])]
    for trace in fig["data"]:
        out += [trace.get("name") or "", trace.get("hovertemplate") or ""]
        bar = trace.get("colorbar") or {}
        out += [bar.get("title", {}).get("text", ""), *bar.get("ticktext", [])]
    return out


# Notation and names that both languages write the same way (pos: the positional-encoding
# formula's, PE(pos, 2i)).
NOTATION = re.compile(r"\b(sin|cos|pos|[Ss]oftmax|log|BLEU|key_padding_mask|subsequent_mask|"
                      r"memory|num_beams|length_penalty|d_model|d_k|True|False|Top|top|"
                      r"Hugging Face|save_pretrained|safetensors|pytorch_model|bin|weights_only)\b")


def _english_pieces() -> list[str]:
    """The fixed English parts of every translated string (placeholders cut out) that hold
    a word of three letters or more besides notation, longest first."""
    pieces = set()
    for table in (STRINGS, VIZ_LABELS):
        for entry in table.values():
            for piece in re.split(r"%?\{[^}]*\}", entry["en"]):
                piece = piece.strip(" \n:,.()-…*")
                if re.search(r"[A-Za-z]{3,}", NOTATION.sub("", piece)):
                    pieces.add(piece)
    return sorted(pieces, key=len, reverse=True)


def _examples() -> set[str]:
    """Every shipped model's example sentences: data a reader picks from, not interface
    text (``"... so we came home and cooked noodles."`` holds the table's ``and``)."""
    return {e for card in (ROOT / "pretrained").glob("*/card.json")
            for e in json.loads(card.read_text(encoding="utf-8")).get("examples", [])}


def _english_left(texts: list[str], pieces: list[str]) -> list[tuple[str, str]]:
    """(piece, the text's start) for every piece found as whole words in a text that is
    not an example sentence. Each piece's pattern is compiled once, and tried only on a
    text that holds the piece (a new pattern per text and piece overflowed ``re``'s cache:
    every search compiled again, 49 s of a quiet run)."""
    patterns = [(piece, re.compile(rf"(?<![A-Za-z_]){re.escape(piece)}(?![A-Za-z_])"))
                for piece in pieces]
    left = []
    examples = _examples()
    for text in (t for t in texts if t not in examples):
        for piece, pattern in patterns:
            if piece in text and pattern.search(text):
                left.append((piece, text[:120]))
    return left


def test_no_english_from_the_table_is_left_in_chinese():
    pieces = _english_pieces()
    assert "English sentence" in pieces and "Probability" in pieces and "Head" in pieces
    at = in_chinese()
    pages = {"default": _visible_text(at)}
    at.session_state["view"] = "cross"
    at.run()
    at.selectbox(key="cross_head").select(3).run()
    pages["cross-attention"] = _visible_text(at)
    at.session_state["view"] = "inside"
    at.run()
    at.selectbox(key="ih_kind").select("decoder").run()
    at.slider(key="step").set_value(3).run()
    pages["inside one head"] = _visible_text(at)
    at.session_state["view"] = "masks"
    at.run()
    pages["masks"] = _visible_text(at)
    at.radio(key="strategy").set_value("beam").run()
    pages["beam search"] = _visible_text(at)
    assert not at.exception
    for page, texts in pages.items():
        assert len(texts) > 50 and any(HAN.search(t) for t in texts), page
        left = _english_left(texts, pieces)
        assert not left, (page, left)
    # ...while the English page has them, so the check does find them
    english = _visible_text(run_app())
    assert {p for p, _ in _english_left(english, pieces)} >= {
        "English sentence", "Decoding step", "Probability", "Positional encoding"}
