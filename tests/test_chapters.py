"""The lesson's chapters (ui.chapters) on the shipped models: each question's right answer
is what the model really does, checked against an independent computation, and each
figure highlights that answer; every text of every chapter fills in from its values in
both languages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from hf_tiny import tiny_folder

from model import GenerationSettings
from model.analysis.headstats import head_stats
from model.analysis.picks import distinct_heads, is_content
from model.analysis.value_zeroing import value_zeroing
from model.core.heldout import HELDOUT_SIZE
from ui import cache
from ui.chapters import BUILDERS, HEADS_TRIED, Chapter, Live
from ui.i18n import placeholders, t
from ui.lesson import TEXT_FIELDS, chapters
from ui.text import code_span, token_row

ROOT = Path(__file__).resolve().parents[1] / "pretrained"
MODELS = ("en-zh-everyday", "en-zh")
SENTENCES = {"en-zh-everyday": ("why do we work ?", "The museum opened in 1925.",
                                "My grandmother was born in Beijing in 1956."),
             "en-zh": ("why do we work ?", "the teacher reads a book .",
                       "i go to school tomorrow .")}


def live(model: str, sentence: str) -> Live:
    key = cache.model_key(ROOT / model)
    translator = cache.load_model(*key)
    return Live(translator, cache.decode(key, sentence, GenerationSettings()), key)


CASES = [(m, s) for m in MODELS for s in SENTENCES[m]]


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
    _, made = built
    assert [c["id"] for c in chapters()] == list(BUILDERS)
    for chapter in chapters():
        c = made[chapter["id"]]
        assert c.why is None
        ids = [o for o, _ in c.options]
        assert c.answer in ids and len(set(ids)) == len(ids) >= 2
        for name in TEXT_FIELDS:
            entry = chapter.get(f"{name}_{c.variant}", chapter[name])
            for lang in ("en", "zh"):
                assert placeholders(entry[lang]) <= set(c.values), (chapter["id"], name, lang)
                entry[lang].format(**c.values)


def test_whole_counts_the_steps(built):
    lv, made = built
    assert made["whole"].answer == str(len(lv.trace.steps))
    listed = made["whole"].values["output"]  # the reveal lists one token per step
    assert listed == token_row([s.label for s in lv.trace.steps]) and "`<s>`" not in listed
    assert lv.trace.step_labels[0] == f"<s> → {lv.trace.tgt_labels[1]}"


def test_the_heads_chapter_claims_only_what_the_shares_say(built):
    lv, made = built
    c = made["heads"]
    values = head_stats(lv.trace, "encoder", lv.translator.info.eos_token).values
    picks = distinct_heads({"positional": values["previous"], "eos": values["eos"],
                            "spread": values["entropy"]})
    for job, stat in (("positional", "previous"), ("eos", "eos")):
        share, claim = float(values[stat][picks[job]]), c.values[f"{job}_claim"]
        assert f"{share:.0%}" in claim and c.values[f"{job}_share"] == f"{share:.0%}"
        assert ("mostly" in claim or "most of its weight" in claim) == (share >= 0.5), claim
        if "more than any other head" in claim:
            assert share >= np.nanmax(values[stat]) and share < 0.5, claim


def test_one_head_and_cross_outline_the_heaviest_key_of_the_asked_row(built):
    lv, made = built
    tr = lv.trace
    for cid, maps in (("one_head", tr.encoder_attentions), ("cross", tr.cross_attentions)):
        c = made[cid]
        z, cells = figure_mark(c)
        np.testing.assert_allclose(z, maps[c.values["layer"], c.values["head"]], atol=1e-6)
        ((row, col),) = cells
        assert col == int(np.argmax(z[row])) == int(c.answer)


def test_cross_picks_the_most_confident_head_then_the_next(built):
    lv, made = built
    stats = head_stats(lv.trace, "cross", lv.translator.info.eos_token).values["confidence"]
    c0, c1 = made["cross"], BUILDERS["cross"](lv, 1)
    first = stats[c0.values["layer"], c0.values["head"]]
    second = stats[c1.values["layer"], c1.values["head"]]
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


def test_heads_name_the_positional_head_rightly(built):
    lv, made = built
    c = made["heads"]
    stats = head_stats(lv.trace, "encoder", lv.translator.info.eos_token).values["previous"]
    _, cells = figure_mark(c)
    shares = sorted(stats[int(r), int(h)] for r, h in cells)
    assert len(cells) == 3 and stats.max() == shares[-1]
    assert c.answer == "positional"


def test_decoding_positions_and_heads_off_answers_are_what_the_model_does(built):
    lv, made = built
    tr, model = lv.trace, lv.translator
    greedy = model.generate(tr.src_text).output_text
    beam = model.generate(tr.src_text, GenerationSettings(num_beams=4)).output_text
    assert made["decoding"].answer == ("same" if greedy == beam else "changed")
    off = model.generate(tr.src_text, GenerationSettings(positional="none")).output_text
    assert made["positions"].answer == ("same" if off == tr.output_text else "changed")
    c = made["heads_off"]
    np.testing.assert_allclose(np.asarray(c.figure.data[0].y, dtype=np.float64),
                               [s.prob for s in tr.steps], atol=1e-6)  # the bars before
    kept = cache.kept_heads(lv.key, HELDOUT_SIZE)
    assert kept is not None  # both shipped models keep their held-out figures
    ranked = sorted(((float(v[layer, head]), (kind, layer, head))
                     for kind, v in kept.importance.items()
                     for layer, head in np.ndindex(v.shape) if np.isfinite(v[layer, head])),
                    reverse=True)
    ranked = [(kind, int(layer), int(head)) for _, (kind, layer, head) in ranked]

    def without(sentence: str, off: tuple) -> str:
        return model.generate(sentence, heads_off=(off,)).output_text

    changing = [h for h in ranked[:HEADS_TRIED] if without(tr.src_text, h) != tr.output_text]
    off = changing[0] if changing else ranked[0]
    assert c.values["head"] == t("lesson_head_name", layer=off[1], head=off[2])
    assert c.values["rank"] == (ranked.index(off) + 1 if changing else 0)
    assert c.answer == ("changed" if changing else "same")
    assert c.variant == ("" if changing else "none")
    ablated = without(tr.src_text, off)
    assert c.values["ablated"].replace("\\", "") == ablated or (not ablated
                                                                and c.values["ablated"] == "—")
    if c.sentence is not None:  # the sentence offered: there the head does change it
        assert not changing and without(c.sentence, off) != model.generate(c.sentence).output_text


def test_positions_outline_the_followed_word_row():
    lv = live("en-zh-everyday", "The museum opened in 1925.")
    c = BUILDERS["positions"](lv, 0)
    fig = c.figure
    outline = fig.data[1]
    pos = c.values["pos"]
    assert is_content(lv.trace.src_labels[pos])
    assert min(outline.y) == pos - 0.5 and max(outline.y) == pos + 0.5
    np.testing.assert_allclose(np.asarray(fig.data[0].z),
                               lv.translator.positional_encoding(len(lv.trace.src_tokens)),
                               atol=1e-6)


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
                chapter["id"] == "positions" and translator.info.positional_scheme == "relative")
            continue
        assert c.answer in [o for o, _ in c.options] and c.figure is not None
        assert chapter["id"] != "sublayers"  # not taken apart
        for name in TEXT_FIELDS:
            entry = chapter.get(f"{name}_{c.variant}", chapter[name])
            for lang in ("en", "zh"):
                entry[lang].format(**c.values)


def test_the_minimal_pair_parts_and_its_answer_is_the_rows_largest(built):
    lv, made = built
    c = made["minimal_pair"]
    a, b = (lv.translator.generate(s) for s in (c.sentence, c.compare))
    assert a.output_text != b.output_text  # the pair really is translated differently
    (j,) = [int(y) for y in figure_mark(c)[1][0][:1]]  # the outlined row: the changed word
    row = b.encoder_attentions[-1].mean(axis=0)[j]  # computed again, from the model
    others = [k for k in range(len(row)) if k != j and is_content(b.src_labels[k])]
    assert c.answer == str(max(others, key=lambda k: row[k]))
    assert c.values["weight"] == f"{row[int(c.answer)]:.0%}"
    assert b.src_labels[j] not in a.src_labels  # it is the word that was changed


def test_attention_story_sets_attention_against_value_zeroing_from_the_model(built):
    lv, made = built
    c, tr = made["attention_story"], lv.trace
    k, layer = c.values["k"], c.values["layer"]
    assert layer == tr.cross_attentions.shape[0] - 1
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
