"""The first page while the server starts: the top of the default page and its first
attention heatmap, drawn from a snapshot before torch and the model are loaded.

    python -m ui.first_page          # writes ui/first_page.json from the app itself
    python -m ui.first_page --check  # exit 1 if the file is not what the app draws now

A first visit to a server that has just started (``streamlit run serve.py``) used to wait for
the warm-up: importing torch (1.3-1.9 s on a 2-core laptop), the app's modules and the model,
all while the browser loaded the page on the same two cores (issue 45). Here the default page's
header (the translation, how it was decoded, the source tokens, the verdict) and its first
chart (step 1: the next-token probabilities and where every head looks) are kept as the app
drew them (``build``: ``AppTest`` runs ``app.py`` as a first visit, one page per interface
language), and ``show_while_warming`` draws them with nothing but Streamlit (and plotly),
then waits for the warm-up and reruns the page into the full app. ``serve.py`` starts its
warm-up once that page is sent (``ui.startup``'s events), so the browser loads the page
without the warm-up on its cores.

The snapshot is used only when it is the default page's: no query parameters but ``?lang=``,
the repository's ``pretrained/`` (no ``$ATTENTION_PRETRAINED_DIR``) and the same model card
it was built with (SHA-256). ``tests/test_first_page.py`` holds that it equals what the app
draws now. Only the standard library and Streamlit are imported here: ``app.py`` reads it
first.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import sys
from pathlib import Path

import streamlit as st

from ui import startup

SNAPSHOT = Path(__file__).with_name("first_page.json")
ROOT = Path(__file__).resolve().parents[1]
PRETRAINED_DIR = ROOT / "pretrained"  # model.backends.load's (tests/test_first_page.py)
PRETRAINED_ENV = "ATTENTION_PRETRAINED_DIR"
HEADER_KINDS = {"Html": "html", "Markdown": "markdown", "Caption": "caption"}  # AppTest's -> st.*
HEADER_ENDS = {"Block", "Toggle"}  # the first of these after the header's first element
WARM_WAIT_S = 120.0  # longest wait for the warm-up before rerunning anyway


def card_digest(model: str) -> str | None:
    """SHA-256 (hex) of ``pretrained/<model>/card.json``; None when there is none."""
    try:
        return hashlib.sha256((PRETRAINED_DIR / model / "card.json").read_bytes()).hexdigest()
    except OSError:
        return None


@functools.cache
def snapshot() -> dict | None:
    """The shipped snapshot (``SNAPSHOT``), or None when it is missing, unreadable, or not
    the default page's here (another models folder, or another card than it was built
    with). Read once per process. Raises nothing."""
    if os.environ.get(PRETRAINED_ENV, "").strip():
        return None
    try:
        page = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
        return page if card_digest(page["model"]) == page["card_sha256"] else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def page_language(params: dict[str, str], page: dict) -> str | None:
    """The snapshot page's language for a first visit opened with ``params`` (the query
    parameters): "en" with none, the language ``?lang=`` names when it is the only one (its
    options and short forms as ``ui.i18n`` reads them, kept in the snapshot), else None."""
    if not params:
        return "en"
    raw = params.get("lang")
    if set(params) != {"lang"} or not isinstance(raw, str):
        return None
    if raw in page["lang_options"]:  # as ui.i18n.language_selector reads it: an option as
        return page["lang_options"][raw]  # it is, else a short form in any case and spacing
    return page["lang_aliases"].get(raw.strip().lower())


def wanted() -> str | None:
    """The language of the snapshot page this run should draw, or None: it draws one while
    ``serve.py`` is still warming up, for a page opened with no query parameters but
    ``?lang=``, when the snapshot is the default page's."""
    if not startup.WARMING.is_set() or startup.WARM.is_set():  # every later rerun: no more
        return None
    page = snapshot()
    if page is None:
        return None
    language = page_language(st.query_params.to_dict(), page)
    return language if language in page["pages"] else None


def draw(page: dict) -> None:
    """One language's snapshot page (``snapshot()["pages"][language]``): its title, header
    elements, the note that the rest follows and its first chart."""
    st.set_page_config(page_title=page["page_title"], **startup.PAGE_CONFIG)
    for kind, body in page["header"]:
        getattr(st, kind)(body)  # st.html, st.markdown or st.caption
    st.caption(page["note"])
    chart = page["chart"]
    # All of plotly's work under the imports' lock: it imports its validators lazily and
    # looks numpy up in sys.modules, neither safe while the warm-up, or another first
    # visit, imports them (a bar validated as a scatter, "partially initialized module
    # 'numpy'": tests/test_serving.py, four first visits at once).
    with startup.IMPORTS:
        import numpy  # noqa: F401
        import plotly.graph_objects as go

        st.plotly_chart(go.Figure(chart["figure"]), width=chart["width"],
                        config=chart["config"], theme=None, key="first_page_chart")


def show_while_warming() -> None:
    """When ``wanted``: draw the snapshot page, wait for the warm-up (at most
    ``WARM_WAIT_S``) and rerun the page, which then draws the app itself. Either way
    ``startup.FIRST_VISIT`` is set once that is drawn: the warm-up may start."""
    language = wanted()
    if language is not None:
        draw(snapshot()["pages"][language])
    startup.FIRST_VISIT.set()
    if language is not None:
        startup.WARM.wait(WARM_WAIT_S)
        st.rerun()


def build() -> dict:
    """The snapshot of the default page as ``app.py`` draws it for a first visit, in each
    interface language (``AppTest``; English with no query parameters, Chinese with
    ``?lang=简体中文``): per language, the header's HTML, Markdown and caption elements (up to
    the step controls), the first Plotly chart (its figure, config and width as
    ``ui.charts.chart`` sets them), the page title and the note (the string catalogue's
    ``first_page_loading``); with the default model, its card's SHA-256 and the ``?lang=``
    options and short forms ``ui.i18n`` accepts on a first load.

    Raises:
        RuntimeError: the app raised, drew no chart or there is no default model.
    """
    from model.backends.load import available_models, default_model
    from ui.i18n import LANG_KEY, LANGUAGES, URL_ALIASES

    model = default_model(available_models())
    if model is None:
        raise RuntimeError("no default model to build the first page for")
    options = {code: option for option, code in LANGUAGES.items()}
    return {"model": model, "card_sha256": card_digest(model),
            "lang_options": LANGUAGES,
            "lang_aliases": {k: LANGUAGES[v] for k, v in URL_ALIASES.items()},
            "pages": {code: _page(code, {LANG_KEY: options[code]} if code != "en" else {})
                      for code in sorted(options)}}


def _page(language: str, params: dict[str, str]) -> dict:
    """One language's page (``build``), from ``app.py`` opened with ``params``."""
    from streamlit.testing.v1 import AppTest

    from ui.i18n import text_in

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    if at.exception:
        raise RuntimeError(f"app.py raised: {at.exception[0].message}")
    header, started = [], False
    for element in at.main.children.values():
        kind = HEADER_KINDS.get(type(element).__name__)
        if kind:
            header.append([kind, element.proto.body])
            started = True
        elif started and type(element).__name__ in HEADER_ENDS:
            break
    charts = at.get("plotly_chart")
    if not charts:
        raise RuntimeError("the default page drew no chart")
    figure = json.loads(charts[0].proto.spec)
    return {"page_title": text_in("page_title", language), "header": header,
            "note": text_in("first_page_loading", language),
            "chart": {"figure": figure, "config": json.loads(charts[0].proto.config),
                      "width": "stretch" if figure["layout"].get("width") is None
                      else "content"}}


def dumps(page: dict) -> str:
    """The snapshot file's text: sorted keys, one line, a final newline."""
    return json.dumps(page, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write ``SNAPSHOT`` (or with ``--check`` compare it); 1 when ``--check`` differs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")  # compare, do not write
    args = parser.parse_args(argv)
    text = dumps(build())
    if args.check:
        same = SNAPSHOT.exists() and SNAPSHOT.read_text(encoding="utf-8") == text
        print("ui/first_page.json is " + ("current" if same else
                                          "stale: run python -m ui.first_page"))
        return 0 if same else 1
    SNAPSHOT.write_text(text, encoding="utf-8")
    print(f"wrote {SNAPSHOT} ({len(text):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
