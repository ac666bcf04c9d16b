"""The documentation site as a reader meets it: pages open in chromium, links resolve, the explorer responds.

``make docs`` (``sphinx-build -W``) builds the site into ``docs/_build/html``; ``make test`` builds it
before running the tests, so CI runs these. Without a built site they skip and say how to build it.
The checks: every page listed below opens without a script error; every link on them to a page of the
site points to a file that exists (and to an anchor that exists on it); every picture loads; each lesson
page holds the pictures of its executed notebook; figure 6.10's page embeds the explorer's saved page,
whose slider moves dz/dw to the engine's Algorithm 6.2 value at the new w.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, figure 6.10.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
from conftest import CHROMIUM_AND_DOT

from micrograph import Graph
from micrograph.families import chain
from viz.text import fmt

SITE = Path(__file__).resolve().parent.parent / "docs" / "_build" / "html"

pytestmark = [
    pytest.mark.skipif(
        not (SITE / "index.html").is_file(),
        reason=f"the documentation site is not built ({SITE} has no index.html): run `make docs`",
    ),
    *CHROMIUM_AND_DOT,
]
pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

PAGES = [
    "index.html", "install.html", "lessons.html", "_generated/lessons/lesson2.html",
    "_generated/lessons/lesson6.html", "exercises.html", "figure_6_10.html", "comparison.html",
    "performance.html", "api.html", "citing.html",
]  # fmt: skip


def open_page(browser: Any, name: str) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((SITE / name).as_uri())
    page.wait_for_load_state("load")
    return page, errors


def local_target(href: str) -> tuple[Path, str] | None:
    """The file and anchor a link points to inside the site, or None for a link elsewhere."""
    url = urlparse(href)
    if url.scheme != "file":
        return None
    return Path(unquote(url.path)), url.fragment


@pytest.mark.slow
def test_pages_open_and_links_resolve(browser: Any) -> None:
    checked = 0
    ids: dict[Path, set[str]] = {}
    other = browser.new_page()  # opens each page a link's anchor points into, once
    for name in PAGES:
        page, errors = open_page(browser, name)
        assert page.title(), name
        hrefs = page.eval_on_selector_all("a[href]", "as => as.map(a => a.href)")
        broken = page.eval_on_selector_all(
            "img", "is => is.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
        )
        assert broken == [], f"{name}: pictures that do not load: {broken}"
        for href in hrefs:
            target = local_target(href)
            if target is None:
                continue
            path, anchor = target
            assert path.is_file(), f"{name}: the link {href} points to no file"
            if anchor and path.suffix == ".html":
                if path not in ids:
                    other.goto(path.as_uri())
                    ids[path] = set(other.eval_on_selector_all("[id]", "es => es.map(e => e.id)"))
                assert unquote(anchor) in ids[path], f"{name}: no #{anchor} on {path.name} ({href})"
            checked += 1
        assert errors == [], f"{name}: script errors {errors}"
        page.close()
    other.close()
    assert checked > 50  # the navigation alone links every page from every page


@pytest.mark.slow  # seconds: run by make test-slow (and CI), keeping make test within minutes
def test_lesson_pages_show_the_executed_notebooks_pictures(browser: Any) -> None:
    for n in range(1, 9):
        page, _ = open_page(browser, f"_generated/lessons/lesson{n}.html")
        heading = page.inner_text("h1")
        assert heading.startswith(f"Lesson {n}:"), heading
        cells = page.locator("div.cell").count()
        pictures = page.locator("div.cell_output img, div.cell_output svg").count()
        assert cells > 2 and pictures >= 1, (n, cells, pictures)
        assert page.locator("div.cell_output .traceback, div.output.error").count() == 0
        page.close()


def test_embedded_explorer_responds_to_its_slider(browser: Any) -> None:
    page, errors = open_page(browser, "figure_6_10.html")
    frame = page.frame_locator("iframe#explorer")
    frame.locator("g[data-node]").first.wait_for()
    z, w = chain(3)
    name = Graph(z).name(w)
    before = frame.locator("output.mg-grad-of").first.inner_text()
    assert before == fmt(Graph(z).backprop()[w])  # figure 6.10 at w = 0.5
    slider = frame.locator(f'input.mg-slider[data-input="{name}"]')
    slider.evaluate('s => { s.value = "1.5"; s.dispatchEvent(new Event("input", {bubbles: true})); }')
    at = float(slider.evaluate("s => s.value"))
    w.data = at
    g = Graph(z)
    g.forward()
    after = frame.locator("output.mg-grad-of").first.inner_text()
    assert after != before
    assert after == fmt(g.backprop()[w]), (at, after)
    assert errors == []
    page.close()
