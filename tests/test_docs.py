"""The README and the pages under docs/: every relative link reaches a file, every ``#anchor``
a heading (as GitHub names a heading's anchor), and README's test command is the one CI runs.

README.md is the teacher's quick start and an index of docs/*.md; the reference lives in
those pages, so a page renamed or a heading reworded must not leave a dead link behind."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+\1")
# [text](target) and ![alt](target); a target may carry a "title" after a space
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def prose_lines(text: str) -> list[str]:
    """The page's lines outside fenced code blocks, with inline code spans blanked out."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(CODE_SPAN.sub("", line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup and punctuation dropped, lower case, spaces to
    hyphens (letters of any script, digits, ``_`` and ``-`` kept)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading's anchor on the page, a repeated one numbered as GitHub does (-1, -2)."""
    seen: dict[str, int] = {}
    out = set()
    for line in prose_lines(page.read_text(encoding="utf-8")):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def relative_links(page: Path) -> list[str]:
    found = []
    for line in prose_lines(page.read_text(encoding="utf-8")):
        for target in LINK.findall(line):
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, mailto: ...
                found.append(target)
    return found


def test_the_pages_exist_and_readme_links_every_docs_page():
    docs = [p for p in PAGES if p.parent.name == "docs"]
    assert docs, "no docs/*.md pages"
    linked = set(relative_links(ROOT / "README.md"))
    for page in docs:
        assert any(t.split("#")[0] == f"docs/{page.name}" for t in linked), (
            f"README.md has no link to docs/{page.name}")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_reaches_a_file_and_its_heading(page):
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        goal = (page.parent / path).resolve() if path else page
        if not goal.exists():
            broken.append(f"{target}: no file {goal.relative_to(ROOT)}")
        elif anchor and goal.suffix == ".md" and anchor not in anchors(goal):
            broken.append(f"{target}: no heading with anchor #{anchor} in {goal.name}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_slug_follows_github():
    assert slug("Sentences teachers bring: numbers, names, rare words, long input") == (
        "sentences-teachers-bring-numbers-names-rare-words-long-input")
    assert slug("Quick start for a class · 课堂快速上手") == "quick-start-for-a-class--课堂快速上手"
    assert slug("Data and credits") == "data-and-credits"


def test_readme_test_command_is_the_one_ci_runs():
    """.ci/run runs README's "Run the tests" command verbatim (after making the venv itself)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Run the tests", 1)[1]
    command = section.split("```bash", 1)[1].split("```", 1)[0].strip()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1].strip()
    assert command == f"python3 -m venv .venv && {ci}"


def test_architecture_names_every_module():
    # docs/architecture.md is the map of the code: every Python file outside tests/ (an
    # __init__.py aside) is named there by its file name, so a new module cannot hide.
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    skip = {".venv", ".git", "tests", "runs", "data"}
    files = [p for p in ROOT.rglob("*.py")
             if not skip & set(p.relative_to(ROOT).parts) and p.name != "__init__.py"]
    assert files, "no modules found"
    missing = sorted(str(p.relative_to(ROOT)) for p in files if p.name not in text)
    assert missing == [], "name these in docs/architecture.md"
