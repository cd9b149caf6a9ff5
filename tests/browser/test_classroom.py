"""Ten students on one server at the same time: every session sees only its own sentence.

The scenario is ``benchmarks.classroom`` (also run by ``python -m benchmarks.classroom``,
which records the timings in ``benchmarks/RESULTS.md``); here it runs with fewer clicks and
its timings are printed, never asserted.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

from benchmarks.classroom import (
    classroom,
    classroom_sentences,
    summary,
    unique_tokens,
)
from testkit.harness import chromium_problem

SESSIONS = 10
CLICKS = 4


def test_ten_concurrent_sessions_stay_separate_and_error_free(app_url):
    """10 browser contexts type 10 different sentences, open the cross-attention tab and step
    forward at the same time. Each must show its own source tokens (caption and chart axes)
    and never a word only another session's sentence has; no errors, no dialogs; every
    Next click must redraw its step."""
    problem = chromium_problem()
    if problem:
        pytest.fail(problem, pytrace=False)
    sentences = classroom_sentences(SESSIONS)
    assert all(unique_tokens(sentences).values())  # each has a word that could leak
    # Playwright's async API in a thread of its own: the sync fixtures of the other module
    # may still own this thread's event loop.
    with ThreadPoolExecutor(1) as pool:
        students = pool.submit(asyncio.run, classroom(app_url, sentences, CLICKS)).result()

    assert [s.sentence for s in students] == sentences
    for s in students:
        assert not s.problems, (s.sentence, s.problems)
        assert not s.dialogs, (s.sentence, s.dialogs)
        assert s.steps_total >= 2, (s.sentence, s.steps_total)
        assert len(s.click_seconds) == min(CLICKS, s.steps_total - 1), s
    fig = summary(students)
    print(f"\nclassroom: {SESSIONS} sessions, {fig['n']} Next clicks, click-to-redrawn "
          f"p50 {fig['p50']:.2f} s, p95 {fig['p95']:.2f} s, max {fig['max']:.2f} s")
