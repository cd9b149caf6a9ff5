"""The lesson's chapters (ui.lesson.chapters) on every shipped model, of either direction
(English -> Chinese, Chinese -> English), and three typed sentences each: each question's
right answer is what the model really does, checked against an independent computation, and
each figure highlights that answer; every text of every chapter fills in from its values in
both languages, names only numbers its chart and its code use, names the languages the model
reads and writes (never assumes English in, Chinese out), and never doubles a sentence's end
punctuation; chapter 2 shows a sentence whose translation needs positions (or says none was
found), chapter 10 a pair in the model's source language that the app's checks take for
right (or says, rightly, that none is)."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from pair_checks import judged, words_of

from model import GenerationSettings
from model.analysis.headstats import head_stats
from model.analysis.picks import distinct_heads, is_content
from model.analysis.value_zeroing import value_zeroing
from model.backends.records import ModelInfo
from model.core.heldout import HELDOUT_SIZE
from testkit.hf_tiny import tiny_folder
from ui import cache
from ui.i18n import STRINGS, placeholders, t
from ui.lesson import TEXT_FIELDS, chapters, samples, try_label
from ui.lesson.chapter import CLOSERS, END_MARKS, Chapter, fill, followed
from ui.lesson.chapters import BUILDERS, SAMPLES, Live, number_text
from ui.lesson.one_stack import DECODER_ONLY
from ui.lesson.picks import HEADS_TRIED, LONGER_BY, POSITION_CANDIDATES, longer_example
from ui.lesson.texts import (
    blocked_words,
    direction_text,
    is_blocked,
    language_values,
    lesson_file,
)
from ui.pairs import minimal_pairs, model_pairs
from ui.text import code_span, token_row
from viz.convention import FIRST_NUMBER, head_number, layer_number

ROOT = Path(__file__).resolve().parents[1] / "pretrained"
GRAMMAR = ("why do we work ?", "the teacher reads a book .", "i go to school tomorrow .")
SENTENCES = {"en-zh-everyday": ("why do we work ?", "The museum opened in 1925.",
                                "My grandmother was born in Beijing in 1956."),
             "en-zh": GRAMMAR, "en-zh-small": GRAMMAR,
             "zh-en-everyday": ("我们明天有数学考试。", "李明住在杭州。", "下雨了，我们待在家里。")}
MODELS = tuple(SENTENCES)
#: A sentence's end punctuation, perhaps closed (code span, quotes), then another.
DOUBLED = re.compile(f"[{re.escape(END_MARKS)}][{re.escape(CLOSERS)}]*[{re.escape(END_MARKS)}]")


def live(model: str, sentence: str) -> Live:
    key = cache.model_key(ROOT / model)
    translator = cache.load_model(*key)
    return Live(translator, cache.decode(key, sentence, GenerationSettings()), key)


CASES = [(m, s) for m in MODELS for s in SENTENCES[m]]


def test_every_shipped_model_is_tested_with_three_sentences():
    """Every shipped encoder-decoder; the decoder-only model is not offered the lesson (the
    app hides it there, tests/test_app_one_stack.py) and chapter 12 runs it on every case
    whose model reads English."""
    shipped = {p.parent.name for p in ROOT.glob("*/config.json")}
    assert shipped == {*MODELS, DECODER_ONLY} and all(len(SENTENCES[m]) == 3 for m in MODELS)


def rightly_unbuilt(chapter_id: str, c: Chapter, info) -> bool:
    """A chapter that says why it is not built, rightly so for the model of ``info``: no
    minimal pair it translates right (test_the_minimal_pair_is_translated_right_or_none_is),
    or chapter 12 on a model that does not read English (it puts the sentence through the
    English -> Chinese decoder-only model)."""
    return (chapter_id == "minimal_pair" and c.why == "lesson_no_pair") or (
        chapter_id == "one_stack" and c.why == "lesson_one_stack_english"
        and info.source_language != "en")


def visible(markdown: str) -> str:
    """Markdown as a reader sees its characters: escapes and code-span fences dropped, an
    English ellipsis as one character."""
    return re.sub(r"\\(.)", r"\1", markdown).replace("`", "").replace("...", "…")


def shown_texts(chapter: dict, c: Chapter) -> dict[tuple[str, str], str]:
    """Every text field of chapter ``c`` as shown (``fill``), in both languages, with its note
    and try-it button: (field, language) -> text."""
    out = {("note", "en"): c.note, ("button", "en"): try_label(c) or ""}
    for name in TEXT_FIELDS:
        entry = chapter.get(f"{name}_{c.variant}", chapter[name])
        for lang in ("en", "zh"):
            out[name, lang] = fill(entry[lang], c.values)
    return out


@pytest.fixture(scope="module", params=CASES, ids=lambda c: f"{c[0]}:{c[1][:12]}")
def built(request) -> tuple[Live, dict[str, Chapter]]:
    lv = live(*request.param)
    return lv, {cid: BUILDERS[cid](lv, 0) for cid in BUILDERS}


def figure_mark(chapter: Chapter) -> tuple[np.ndarray, list]:
    """The first trace's z and the outlined cells (x = column, y = row) of a figure."""
    fig = chapter.figure
    z = np.asarray(fig.data[0].z, dtype=np.float64)
    marks = [t for t in fig.data[1:] if t.mode == "markers"]
    cells = list(zip(marks[0].y, marks[0].x, strict=True)) if marks else []
    return z, cells


def test_every_chapter_has_a_builder_and_every_text_fills_in(built):
    lv, made = built
    assert [c["id"] for c in chapters()] == list(BUILDERS)
    for chapter in chapters():
        c = made[chapter["id"]]
        if rightly_unbuilt(chapter["id"], c, lv.translator.info):
            continue
        assert c.why is None
        ids = [o for o, _ in c.options]
        assert c.answer in ids and len(set(ids)) == len(ids) >= 2
        for name in TEXT_FIELDS:
            entry = chapter.get(f"{name}_{c.variant}", chapter[name])
            for lang in ("en", "zh"):
                assert placeholders(entry[lang]) <= set(c.values), (chapter["id"], name, lang)
        for where, text in shown_texts(chapter, c).items():  # a sentence's end said once
            assert not DOUBLED.search(visible(text)), (chapter["id"], where, text)


def test_fill_joins_a_sentence_and_the_templates_punctuation_once():
    assert fill("{a}。没有：{b}。", {"a": "工作？", "b": "—"}) == "工作？没有：—。"
    assert fill("Try {x}. Or", {"x": "`I go home.`"}) == "Try `I go home.` Or"
    assert fill("“{x}”. Next", {"x": "home\\."}) == "“home\\.” Next"
    assert fill("{n} steps: {row}.", {"n": 3, "row": "`a` `b`"}) == "3 steps: `a` `b`."
    # an English translation in a Chinese template, and a Chinese one in an English template
    assert fill("A：{a}。B：{b}。", {"a": "I go home\\.", "b": "我回家。"}) == (
        "A：I go home\\. B：我回家。")
    assert fill("With: {a}. Off: {b}.", {"a": "我回家。", "b": "I go\\!"}) == (
        "With: 我回家。 Off: I go\\!")
    assert fill("{a}。{b}", {"a": "I go\\.", "b": "对。"}) == "I go\\. 对。"
    lesson = [entry for chapter in chapters() for entry in chapter.values()
              if isinstance(entry, dict)]
    lesson += [entry for table in ("languages", "word_order")
               for entry in lesson_file()[table].values()]
    for entry in (*(e for k, e in STRINGS.items() if k.startswith("lesson_")), *lesson):
        for template in (entry["en"], entry["zh"]):  # a sentence in every field: said once
            names = dict.fromkeys(placeholders(template), "home.")
            assert not DOUBLED.search(visible(fill(template, names))), template
            names = dict.fromkeys(names, "x")  # else the same as str.format
            assert fill(template, names) == template.format(**names)


def test_whole_counts_the_steps(built):
    lv, made = built
    assert made["whole"].answer == str(len(lv.trace.steps))
    listed = made["whole"].values["output"]  # the reveal lists one token per step
    assert listed == token_row([s.label for s in lv.trace.steps]) and "`<s>`" not in listed
    assert lv.trace.step_labels[0] == f"<s> → {lv.trace.tgt_labels[1]}"


def test_the_heads_chapter_names_only_what_its_chart_draws(built):
    lv, made = built
    c = made["heads"]
    values = head_stats(lv.trace, "encoder", lv.translator.info.eos_token).values
    picks = distinct_heads({"positional": values["previous"], "eos": values["eos"],
                            "spread": -values["confidence"]})  # the most spread: lowest
    stats = {"positional": "previous", "eos": "eos", "spread": "confidence"}
    fig = c.figure
    names = [t("lesson_head_name", layer=layer_number(la), head=head_number(h))
             for la, h in picks.values()]
    assert list(fig.layout.xaxis.ticktext) == names  # the three heads the text names
    bars = {job: np.asarray(bar.y, dtype=np.float64) for job, bar in zip(stats, fig.data,
                                                                         strict=True)}
    for g, (job, pick) in enumerate(picks.items()):
        np.testing.assert_allclose([bars[j][g] for j in stats],
                                   [values[stats[j]][pick] for j in stats], atol=1e-6)
        share, claim = bars[job][g], c.values[f"{job}_claim"]
        assert c.values[f"{job}_share"] == f"{share:.0%}" and f"{share:.0%}" in claim
        assert ("most" in claim) == (share >= 0.5 and job != "spread"), claim
        assert c.values[job] == names[g]
    on_chart = {f"{v:.0%}" for v in np.concatenate(list(bars.values()))}
    text = " ".join(fill(c_field, c.values) for chapter in chapters() if chapter["id"] == "heads"
                    for name in ("text", "reveal") for c_field in chapter[name].values())
    assert set(re.findall(r"\d+%", text)) <= on_chart  # every share it names is drawn
    (band,) = fig.layout.shapes  # the answer's group is on the band
    assert band.x0 == list(picks).index(c.answer) - 0.5


def test_one_head_and_cross_outline_the_heaviest_key_of_the_asked_row(built):
    lv, made = built
    tr = lv.trace
    for cid, maps in (("one_head", tr.encoder_attentions), ("cross", tr.cross_attentions)):
        c = made[cid]
        z, cells = figure_mark(c)
        layer, head = (c.values[n] - FIRST_NUMBER for n in ("layer", "head"))  # read from 1
        np.testing.assert_allclose(z, maps[layer, head], atol=1e-6)
        ((row, col),) = cells
        assert col == int(np.argmax(z[row])) == int(c.answer)


def test_cross_picks_the_most_confident_head_then_the_next(built):
    lv, made = built
    stats = head_stats(lv.trace, "cross", lv.translator.info.eos_token).values["confidence"]
    c0, c1 = made["cross"], BUILDERS["cross"](lv, 1)
    first = stats[c0.values["layer"] - FIRST_NUMBER, c0.values["head"] - FIRST_NUMBER]
    second = stats[c1.values["layer"] - FIRST_NUMBER, c1.values["head"] - FIRST_NUMBER]
    assert first == np.nanmax(stats) and second <= first
    assert (c0.values["layer"], c0.values["head"]) != (c1.values["layer"], c1.values["head"])


def test_masks_count_what_torch_lets_the_step_see(built):
    lv, made = built
    c = made["masks"]
    T = len(lv.trace.steps)
    reference = torch.isinf(torch.nn.Transformer.generate_square_subsequent_mask(T)).numpy()
    z, cells = figure_mark(c)
    np.testing.assert_array_equal(z.astype(bool), reference)  # True = blocked, as torch
    k = c.values["k"]
    assert int(c.answer) == k == int((~reference[k - 1]).sum())
    assert sorted(cells) == [(k - 1, j) for j in range(k)]
    seen = list(lv.trace.decoder_input_labels[:k])  # named as the axes name them, no Ġ
    assert c.values["visible"] == token_row(seen) and "Ġ" not in c.values["visible"]


def test_heads_name_the_positional_head_rightly(built):
    lv, made = built
    c = made["heads"]
    stats = head_stats(lv.trace, "encoder", lv.translator.info.eos_token).values["previous"]
    previous = np.asarray(c.figure.data[0].y, dtype=np.float64)  # the three heads' shares
    assert previous[0] == previous.max() and np.isclose(previous[0], stats.max(), atol=1e-6)
    assert c.answer == "positional"


def test_decoding_positions_and_heads_off_answers_are_what_the_model_does(built):
    lv, made = built
    tr, model = lv.trace, lv.translator
    greedy = model.generate(tr.src_text).output_text
    beam = model.generate(tr.src_text, GenerationSettings(num_beams=4)).output_text
    assert made["decoding"].answer == ("same" if greedy == beam else "changed")
    c = made["heads_off"]
    np.testing.assert_allclose(np.asarray(c.figure.data[0].y, dtype=np.float64),
                               [s.prob for s in tr.steps], atol=1e-6)  # the bars before
    ranked = _ranked_heads(lv)
    kept = cache.kept_heads(lv.key, HELDOUT_SIZE) is not None  # the text says which order
    assert c.values["chosen_by"] == t("lesson_chosen_heldout" if kept else "lesson_chosen_sentence")

    def without(sentence: str, off: tuple) -> str:
        return model.generate(sentence, heads_off=(off,)).output_text

    changing = [h for h in ranked[:HEADS_TRIED] if without(tr.src_text, h) != tr.output_text]
    off = changing[0] if changing else ranked[0]
    assert c.values["kind"] == t(f"tab_{off[0]}")
    assert c.values["head"] == t("lesson_head_name", layer=layer_number(off[1]),
                                 head=head_number(off[2]))
    assert c.values["rank"] == (ranked.index(off) + 1 if changing else 0)
    assert c.answer == ("changed" if changing else "same")
    assert c.variant == ("" if changing else "none")
    ablated = without(tr.src_text, off)
    assert c.values["ablated"].replace("\\", "") == ablated or (not ablated
                                                                and c.values["ablated"] == "—")
    if c.sentence is not None:  # the sentence offered: there the head does change it
        assert not changing and without(c.sentence, off) != model.generate(c.sentence).output_text


def _ranked_heads(lv: Live) -> list[tuple[str, int, int]]:
    """The heads by importance on the held-out sentences the model's folder keeps, the most
    important first; for a folder without them (the placeholder Chinese -> English model),
    this sentence's cross-attention heads, the most confident first (as the chapter says)."""
    kept = cache.kept_heads(lv.key, HELDOUT_SIZE)
    if kept is None:
        conf = head_stats(lv.trace, "cross", lv.translator.info.eos_token).values["confidence"]
        scored = [(float(conf[cell]), ("cross", *cell)) for cell in np.ndindex(conf.shape)
                  if np.isfinite(conf[cell])]
    else:
        scored = [(float(v[layer, head]), (kind, layer, head))
                  for kind, v in kept.importance.items()
                  for layer, head in np.ndindex(v.shape) if np.isfinite(v[layer, head])]
    return [(kind, int(layer), int(head)) for _, (kind, layer, head) in
            sorted(scored, key=lambda sc: -sc[0])]


def _by_position_mode(model, sentence: str) -> dict[str, str]:
    """The translation with positions as trained, switched off and shuffled, from the model."""
    return {mode: model.generate(sentence, GenerationSettings(positional=mode)).output_text
            for mode in ("normal", "none", "shuffled")}


def test_positions_show_a_sentence_whose_translation_needs_positions(built):
    lv, made = built
    c, model = made["positions"], lv.translator
    shown = c.sentence
    outs = _by_position_mode(model, shown)  # computed again, from the model
    changes = outs["none"] != outs["normal"] or outs["shuffled"] != outs["normal"]
    assert c.answer == ("same" if outs["none"] == outs["normal"] else "changed")
    for field, mode in (("output", "normal"), ("off", "none"), ("shuffled", "shuffled")):
        assert visible(c.values[field]) == (outs[mode] or "—")
    tried = list(dict.fromkeys((lv.trace.src_text, *model.info.examples)))
    tried = tried[:POSITION_CANDIDATES]
    if not changes:  # none changes: the sidebar's sentence, and the chapter says so
        assert shown == lv.trace.src_text and str(len(tried)) in c.note
        assert all(len(set(_by_position_mode(model, x).values())) == 1 for x in tried)
    elif shown == lv.trace.src_text:
        assert c.note == ""
    else:  # the sidebar's sentence shows nothing: another, named in the note
        assert len(set(_by_position_mode(model, lv.trace.src_text).values())) == 1
        assert visible(shown) in visible(c.note) and shown in tried
        assert all(len(set(_by_position_mode(model, x).values())) == 1
                   for x in tried[1:tried.index(shown)])  # the first that changes
    assert len(c.figure.data[0].z) == len(cache.decode(lv.key, shown).src_tokens)


def test_decoding_button_and_text_name_the_temperatures_it_samples_at(built):
    lv, made = built
    c = made["decoding"]
    drawn = samples(lv)  # (temperature its decodings used, outputs)
    numbers = {number_text(x) for x, _ in drawn} | {number_text(SAMPLES)}
    chapter = next(ch for ch in chapters() if ch["id"] == "decoding")
    for text in (try_label(c), *(fill(chapter["try"][lang], c.values) for lang in ("en", "zh"))):
        assert set(re.findall(r"\d+(?:\.\d+)?", text)) == numbers, text
    assert all(len(outs) == SAMPLES for _, outs in drawn)  # as many as the button says
    readme = (ROOT.parent / "docs" / "teaching.md").read_text(encoding="utf-8")
    recipe = next(line for line in readme.splitlines() if "?lesson=8" in line)
    assert {number_text(x) for x, _ in drawn} <= set(re.findall(r"\d+\.\d+", recipe))


def test_sublayers_answer_and_highlight_the_last_layer(built):
    lv, made = built
    c = made["sublayers"]
    norms = lv.translator.encoder_sublayers(lv.trace)
    L = norms.stream.shape[0]
    fig = c.figure
    (band,) = fig.layout.shapes
    assert band.x0 == L - 1.5 and band.x1 == L - 0.5
    attention, ffn = (np.asarray(bar.y, dtype=np.float64)[L - 1] for bar in fig.data[1:3])
    assert c.answer == ("attention" if attention > ffn else "feed_forward")
    other = BUILDERS["sublayers"](lv, 1)  # "another word" follows another content word
    assert other.values["word"] != c.values["word"] or len(
        [w for w in lv.trace.src_labels if is_content(w)]) == 1


@pytest.mark.parametrize("family", ["marian", "bart", "t5-v1_1"])
def test_every_chapter_builds_or_says_why_for_hugging_face_models(family, tmp_path_factory):
    key = cache.model_key(tiny_folder(family, tmp_path_factory))
    translator = cache.load_model(*key)
    lv = Live(translator, cache.decode(key, "How are you today?"), key)
    tr = lv.trace
    if not tr.finished and len(tr.steps) == translator.config.max_len - 1:  # cut off
        forced = translator.teacher_force(tr.src_text, tuple(tr.tgt_tokens[1:]))
        assert forced.tgt_tokens == tr.tgt_tokens  # scored as it is, no </s> added
        np.testing.assert_allclose([s.prob for s in forced.steps], [s.prob for s in tr.steps],
                                   atol=1e-4)
    for chapter in chapters():
        c = BUILDERS[chapter["id"]](lv, 0)
        if c.why is not None:
            assert chapter["id"] == "sublayers" or (
                chapter["id"] == "positions" and translator.info.positional_scheme == "relative"
            ) or rightly_unbuilt(chapter["id"], c, translator.info)
            continue
        assert c.answer in [o for o, _ in c.options] and c.figure is not None
        assert chapter["id"] != "sublayers"  # not taken apart
        for name in TEXT_FIELDS:
            entry = chapter.get(f"{name}_{c.variant}", chapter[name])
            for lang in ("en", "zh"):
                entry[lang].format(**c.values)


@functools.cache
def _generate(key: tuple, sentence: str):
    """The model's greedy decoding of ``sentence``, from the model (once per test run)."""
    return cache.load_model(*key).generate(sentence)


def word_row(trace, j: int) -> np.ndarray:
    """How source word ``j`` attends to each word in the last encoder layer (mean of the
    heads), computed again: the mean of its tokens' rows, summed over each word's tokens."""
    A = trace.encoder_attentions[-1].mean(axis=0).astype(np.float64)  # (S, S)
    ids = np.asarray(trace.src_words)
    mean = A[ids == j].mean(axis=0)  # (S,)
    return np.array([mean[ids == k].sum() for k in range(ids.max() + 1)])


def _judged(lv: Live, pair: tuple[str, str]) -> tuple[bool, bool]:
    """``pair_checks.judged`` of ``pair``'s greedy decodings by the model of ``lv``."""
    return judged(lv.translator, *(_generate(lv.key, x) for x in pair))


def test_the_minimal_pair_is_translated_right_or_none_is(built):
    lv, made = built
    c, model = made["minimal_pair"], lv.translator
    pairs = minimal_pairs(model.info.source_language)  # the language the model reads
    assert pairs and all(re.search(r"[\u4e00-\u9fff]", a + b) for a, b in pairs) == (
        model.info.source_language == "zh")
    judged = [_judged(lv, pair) for pair in pairs]
    if c.why is not None:  # none is, and the chapter says so
        assert c.why == "lesson_no_pair" and not any(parts for _, parts in judged)
        return
    taken = pairs.index((c.sentence, c.compare))
    assert judged[taken][1] and not any(parts for _, parts in judged[:taken])  # the first
    text = next(ch["text"]["en"] for ch in chapters() if ch["id"] == "minimal_pair")
    assert c.values["verdict"] in fill(text, c.values)  # the verdict is shown
    if taken:  # the first pair passed over: said why, when it is not right
        assert bool(c.note) == (not judged[0][0]), c.note
    a, b = _generate(lv.key, c.sentence), _generate(lv.key, c.compare)
    wa, wb = words_of(a), words_of(b)
    (j,) = {k for k in range(len(wb)) if wb[k] != wa[k]}
    assert (c.values["changed_a"], c.values["changed"]) == (code_span(wa[j]), code_span(wb[j]))
    ids_a, ids_b = list(a.tgt_ids[1:]), list(b.tgt_ids[1:])
    parts = [k for k in range(min(len(ids_a), len(ids_b))) if ids_a[k] != ids_b[k]]
    step = parts[0] if parts else min(len(ids_a), len(ids_b))  # where the translations part
    assert c.values["step"] == step + 1  # counted from 1
    row, row_a = word_row(b, j), word_row(a, j)  # computed again, from the model
    assert np.isclose(row.sum(), 1.0, atol=1e-4)  # a word's row still sums to 1
    others = [k for k in range(len(wb)) if k != j and is_content(wb[k])]
    bars_a, bars_b = (np.asarray(bar.y, dtype=np.float64) for bar in c.figure.data)
    np.testing.assert_allclose(bars_b, row[others], atol=1e-5)
    np.testing.assert_allclose(bars_a, row_a[others], atol=1e-5)
    (band,) = c.figure.layout.shapes  # the tallest B bar, on the band, is the answer
    assert band.x0 + 0.5 == int(np.argmax(bars_b))
    assert c.answer == str(others[int(np.argmax(bars_b))]) == str(max(others, key=row.__getitem__))
    assert c.values["best"] == code_span(wb[int(c.answer)])
    assert c.values["weight"] == f"{row[int(c.answer)]:.0%}"
    best_a = max(others, key=row_a.__getitem__)
    assert (c.values["best_a"], c.values["weight_a"]) == (code_span(wa[best_a]),
                                                          f"{row_a[best_a]:.0%}")


def test_attention_story_sets_attention_against_value_zeroing_from_the_model(built):
    lv, made = built
    c, tr = made["attention_story"], lv.trace
    layer = tr.cross_attentions.shape[0] - 1
    k, shown = c.values["k"], c.values["layer"]
    assert shown == layer_number(layer)
    att = tr.cross_attentions[layer].mean(axis=0)[k - 1]  # (S,)
    vz = value_zeroing(lv.translator.model, torch.as_tensor(tr.src_ids),
                       torch.as_tensor(tr.tgt_ids[:-1]))  # computed again, from the model
    used = vz.cross[layer, k - 1] / vz.cross[layer, k - 1].sum()
    np.testing.assert_allclose(c.figure.data[0].y, att, atol=1e-6)  # the bars are the numbers
    np.testing.assert_allclose(c.figure.data[1].y, used, atol=1e-4)
    assert c.answer == ("same" if att.argmax() == used.argmax() else "other")
    assert c.values["att_best"] == code_span(tr.src_labels[int(att.argmax())])
    assert c.values["used_best"] == code_span(tr.src_labels[int(used.argmax())])
    assert c.values["att_weight"] == f"{att.max():.0%}"
    assert c.values["src"] == round(100 * float(vz.source_share()[layer, k - 1]))
    assert c.values["src"] + c.values["tgt"] == 100
    assert is_content(tr.tgt_labels[k])  # a step that writes a content token


#: What the chapters' texts call each shipped model's languages, in each interface language.
NAMES = {"en": {"en": "English", "zh": "Chinese"}, "zh": {"en": "英文", "zh": "中文"}}
ORDER = {"en-zh": {"en": "Chinese moves words around", "zh": "中文的词序与英文不同"},
         "zh-en": {"en": "English moves words around", "zh": "英文的词序与中文不同"}}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_texts_name_the_languages_the_model_reads_and_writes(built, language, monkeypatch):
    lv, _ = built
    info = lv.translator.info
    monkeypatch.setattr("ui.lesson.texts.lang", lambda: language)  # the session's language
    source, target = (NAMES[language][code] for code in (info.source_language,
                                                         info.target_language))
    other = NAMES[language][info.target_language]  # the language it writes, not reads
    by_id = {ch["id"]: ch for ch in chapters()}
    whole, cross = BUILDERS["whole"](lv, 0), BUILDERS["cross"](lv, 0)
    assert (whole.values["source"], whole.values["target"]) == (source, target)
    said = {cid: {name: fill(by_id[cid][name][language], made.values) for name in TEXT_FIELDS}
            for cid, made in (("whole", whole), ("cross", cross))}
    reads = {"en": f"the whole {source} sentence", "zh": f"整个{source}句子"}[language]
    asks = {"en": f"Which {source} token", "zh": f"哪个{source}词元"}[language]
    assert reads in said["whole"]["text"] and asks in said["cross"]["question"]
    assert {"en": f"whole {other} sentence", "zh": f"整个{other}句子"}[language] not in (
        said["whole"]["text"])
    direction = f"{info.source_language}-{info.target_language}"
    assert ORDER[direction][language] in said["cross"]["text"]


def test_a_language_no_table_names_gets_the_generic_words():
    info = ModelInfo(backend="huggingface", model_type="marian", subword=True,
                     positional_scheme="fixed", languages=(), task_prefixes={}, examples=(),
                     eos_token="</s>", max_source_words=10, default_max_new_tokens=10,
                     early_stopping=False, source_language="de", target_language="")
    assert language_values(info) == {"source": "source", "target": "target"}
    assert direction_text("word_order", info).startswith("The two languages")


def test_the_longer_example_counts_words_as_the_model_reads_them(built):
    lv, _ = built
    model = lv.translator

    def words(sentence: str) -> int:
        return len(set(model.source(sentence).words))

    n = words(lv.trace.src_text)
    longer = sorted((e for e in model.info.examples if words(e) >= n + LONGER_BY), key=words)
    assert longer_example(lv) == (longer[0] if longer else None)
    if lv.trace.src_text == "李明住在杭州。":  # a Chinese sentence is more than one "word"
        assert longer_example(lv) is not None and n > 2


def test_blocked_samples_match_english_words_where_they_start_and_chinese_anywhere():
    blocked = blocked_words()
    assert is_blocked("Shit, I forgot.", blocked) and is_blocked("a fucking mess", blocked)
    assert is_blocked("他是个混蛋", blocked) and not is_blocked("我们为什么工作？", blocked)
    assert not is_blocked("The class passed the assessment.", blocked)  # no word starts so
    assert not is_blocked("Scunthorpe is a town.", blocked)


@pytest.mark.parametrize("language,model", [("en", "en-zh-everyday"), ("zh", "zh-en-everyday")])
def test_every_minimal_pair_differs_in_one_word_as_the_model_reads_it(language, model):
    translator = cache.load_model(*cache.model_key(ROOT / model))
    assert translator.info.source_language == language
    pairs = minimal_pairs(language)
    assert len(pairs) >= 4
    for pair in pairs:
        a, b = (translator.source(x) for x in pair)
        wa, wb = (words_of(type("Src", (), {"src_labels": x.labels, "src_words": x.words}))
                  for x in (a, b))
        differ = [k for k in range(len(wb)) if len(wa) == len(wb) and wa[k] != wb[k]]
        assert len(wa) == len(wb) and len(differ) == 1, (pair, wa, wb)
        assert all(is_content(w[differ[0]]) for w in (wa, wb)), pair


def test_a_model_gets_the_pairs_of_the_language_it_reads_or_says_there_are_none():
    def reading(language: str) -> Live:
        info = ModelInfo(backend="huggingface", model_type="marian", subword=True,
                         positional_scheme="fixed", languages=(), task_prefixes={},
                         examples=(), eos_token="</s>", max_source_words=10,
                         default_max_new_tokens=10, early_stopping=False,
                         source_language=language, target_language="en")
        return Live(SimpleNamespace(info=info, card={}), None, ())

    assert model_pairs(reading("").translator) == minimal_pairs("en")  # not known: English's
    assert model_pairs(reading("zh").translator) == minimal_pairs("zh") != minimal_pairs("en")
    assert BUILDERS["minimal_pair"](reading("de"), 0).why == "lesson_no_pair_language"
    assert STRINGS["lesson_no_pair_language"]["zh"]


def test_the_followed_token_is_chosen_without_its_pinyin():
    plain = ["我", "们", "学", "中", "文", "。", "</s>"]
    spoken = ["我\nwǒ", "们\nmen", "学\nxué", "中\nzhōng", "文\nwén", "。", "</s>"]
    assert followed(spoken) == followed(plain) == 0  # not zhōng, the longest reading
