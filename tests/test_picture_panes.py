"""The lessons' pictures on the tour's pages, kept legible (viz.pictures), in Debian's chromium (Playwright).

At 1280x800 and 390x844: every text of lesson 3's drawings (the ladder of step 4 among them) and of a sum of
60 terms is at least 9 px high on screen; a drawing too wide for its place pans and zooms in a pane (the
explorer's own pane code) whose least zoom keeps that height; the wheel over it scrolls the page, Ctrl+wheel
zooms it; nothing scrolls inside the pane. The tour's step-through pages (viz.steps) show each frame's
drawing the same way: at 390x844, every frame's text is at least 9 px high and the page is no wider than the
screen (the hint wrapped, the pseudo-code scrolling in its own block); at 1280x800 every drawing is at 1:1.
The script's join and the inline SVG are checked without a browser.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, figure 6.9.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import CHROMIUM
from gestures import ctrl_wheel, wheel_scrolls_the_page

from lessons.publish import tour
from micrograph import Graph
from micrograph.expr import build
from viz.dot import digraph
from viz.page import html_page
from viz.pictures import inline_svg, pictures_script
from viz.render import pipe_svg

SCREENS = {"desktop": (1280, 800), "phone": (390, 844)}
SUM_60 = " + ".join(f"x*{k}" for k in range(1, 61))

needs_chromium = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"chromium is not at {CHROMIUM}")
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")


def _graph(text: str) -> Graph:
    return Graph(build(text, {"x": 0.5, "y": 2.0}))


def test_the_script_defines_two_names_and_joins_every_module() -> None:
    script = pictures_script()
    assert "var micrographD3 = " in script and "var micrographPictures = " in script
    assert not re.search(r"^\s*(import|export)\b", script, re.M)
    assert "Ctrl+wheel or pinch to zoom" in script  # its words come from Python


@needs_dot
def test_an_inline_drawing_has_no_prolog_and_no_ids_unless_it_refers_to_one() -> None:
    svg = pipe_svg(digraph(_graph("tanh(x*y)")))
    assert svg.lstrip().startswith("<?xml") and ' id="' in svg
    inline = inline_svg(svg)
    assert inline.startswith("<svg") and ' id="' not in inline and inline.count("<g") == svg.count("<g")
    kept = inline_svg(
        '<?xml version="1.0"?>\n<svg><defs><linearGradient id="l"/></defs><g fill="url(#l)"/></svg>'
    )
    assert kept.startswith("<svg") and 'id="l"' in kept


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Lesson 3's page of the tour, and a page of one drawing, the sum of 60 terms, as the tour shows one."""
    out = tmp_path_factory.mktemp("tour")
    tour.run(out / "tour", progress=False, only=[3])
    made = {"lesson3": out / "tour" / "lesson3" / tour.INDEX}
    drawing = inline_svg(pipe_svg(digraph(_graph(SUM_60))))
    made["sum_60"] = out / "sum.html"
    made["sum_60"].write_text(
        html_page(
            title="60 terms",
            css="",
            body=f"<p>A sum of 60 terms.</p><figure class='mg-picture'>{drawing}</figure>"
            "<p style='height: 1200px'>The page goes on.</p>",
            script=(pictures_script(), "micrographPictures.showAll();"),
        ),
        encoding="utf-8",
    )
    return made


@pytest.fixture(scope="module")
def step_pages(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The step-through pages the tour writes (lessons 1, 2 and 6: Algorithms 6.1/6.2, and 6.5/6.6)."""
    out = tmp_path_factory.mktemp("steps") / "tour"
    tour.run(out, progress=False, only=[1, 2, 6])
    return sorted(out.glob("steps_*.html"))


TEXT_HEIGHTS = """box => Array.from(box.querySelectorAll("svg text"))
  .map(t => t.getBoundingClientRect().height).filter(h => h > 0)"""
"""The height on screen of each text of a picture (those drawn: a height above 0)."""


def _open(
    browser: Any, path: Path, screen: str, ready: str = ".mg-picture .mg-picture-pane"
) -> tuple[Any, list[str]]:
    """The page at ``path`` on ``screen`` (the phone a touch screen), once ``ready`` (a selector) is in it,
    and its script errors."""
    width, height = SCREENS[screen]
    page = browser.new_page(viewport={"width": width, "height": height}, has_touch=screen == "phone")
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.resolve().as_uri())
    page.wait_for_selector(ready)
    return page, errors


def _scale(page: Any, picture: Any) -> float:
    return float(picture.locator(".mg-picture-pane").get_attribute("data-scale"))


@needs_chromium
@needs_dot
@pytest.mark.slow
@pytest.mark.parametrize("screen", list(SCREENS))
@pytest.mark.parametrize("name", ["lesson3", "sum_60"])
def test_every_picture_is_legible_and_a_wide_one_pans_and_zooms(
    browser: Any, pages: dict[str, Path], name: str, screen: str
) -> None:
    page, errors = _open(browser, pages[name], screen)
    pictures = page.locator(".mg-picture")
    assert pictures.count() >= 1
    for k in range(pictures.count()):
        heights = pictures.nth(k).evaluate(TEXT_HEIGHTS)
        assert heights and min(heights) >= 9.0, (k, min(heights))
        pane = pictures.nth(k).locator(".mg-picture-pane")
        assert pane.evaluate("p => p.scrollTop === 0 && p.scrollLeft === 0 && p.scrollWidth <= p.clientWidth")
        assert pane.bounding_box()["width"] <= SCREENS[screen][0]
    wide = page.locator(".mg-picture.mg-panned")
    if name == "lesson3":  # the ladder (step 4) pans on a phone, and is whole at 1:1 or less on a desktop
        ladder = page.locator("#step4 .mg-picture")
        assert ("mg-panned" in ladder.get_attribute("class")) == (screen == "phone")
    if screen == "desktop" and name == "lesson3":
        assert wide.count() == 0
        assert errors == []
        return
    assert wide.count() >= 1
    picture = wide.first
    picture.scroll_into_view_if_needed()
    k0 = _scale(page, picture)
    wheel_scrolls_the_page(page, picture.locator(".mg-picture-pane"))
    assert _scale(page, picture) == k0
    ctrl_wheel(page, picture.locator(".mg-picture-pane"))
    assert _scale(page, picture) > k0
    for _ in range(12):  # zoom out as far as it goes: never below legible
        picture.get_by_role("button", name="Zoom out").click()
    assert _scale(page, picture) == pytest.approx(k0)
    assert min(picture.evaluate(TEXT_HEIGHTS)) >= 9.0
    # from the keyboard: the pane takes the focus, the arrows pan it, + zooms
    picture.locator(".mg-picture-pane").focus()
    before = picture.locator("svg g.mg-zoom").get_attribute("transform")
    page.keyboard.press("ArrowRight")
    assert picture.locator("svg g.mg-zoom").get_attribute("transform") != before
    page.keyboard.press("+")
    assert _scale(page, picture) == pytest.approx(k0 * 1.25)
    assert errors == []
    page.close()


LAID_OUT = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
"""Resolves once the page has been laid out twice: a frame just shown has had its picture laid out (a
ResizeObserver's callback runs before the next paint)."""

OUTSIDE = """width => Array.from(document.querySelectorAll(
    ".nav, .nav > *, section.frame.current .algo, section.frame.current table, section.frame.current p"))
  .filter(e => e.getBoundingClientRect().right > width + 0.5).map(e => e.className || e.tagName)"""
"""What on screen reaches past the right edge of a window ``width`` px wide (the hint, the pseudo-code's
block, a table, a paragraph of text)."""


@needs_chromium
@needs_dot
@pytest.mark.slow
@pytest.mark.parametrize("screen", list(SCREENS))
def test_every_frame_of_the_tours_step_pages_is_legible_and_fits_the_screen(
    browser: Any, step_pages: list[Path], screen: str
) -> None:
    assert {p.name for p in step_pages} >= {"steps_lesson1.html", "steps_figure_6_10_alg66.html"}
    width = SCREENS[screen][0]
    for path in step_pages:
        page, errors = _open(browser, path, screen, ready="section.frame.current")
        assert page.is_visible(".help.keys") == (screen == "desktop")  # a phone has no arrow keys
        total = page.locator("section.frame").count()
        for k in range(1, total + 1):
            if k > 1:
                page.locator("#next").click()
            page.evaluate(LAID_OUT)
            where = (path.name, f"frame {k} of {total}")
            frame = page.locator("section.frame.current")
            assert frame.get_attribute("id") == f"frame{k}", where
            heights = frame.evaluate(TEXT_HEIGHTS)
            assert heights and min(heights) >= 9.0, (*where, min(heights))
            assert page.evaluate("document.documentElement.scrollWidth") <= width, where
            assert page.evaluate(OUTSIDE, width) == [], where
            algo = frame.locator(".algo")  # wider than the screen: scrolls in its own block
            assert algo.evaluate(
                "a => a.scrollWidth <= a.clientWidth || getComputedStyle(a).overflowX === 'auto'"
            )
            picture = frame.locator(".mg-picture")
            assert picture.count() == 1, where
            if screen == "desktop":  # at 1:1, as before the pictures were kept legible
                assert "mg-panned" not in (picture.get_attribute("class") or ""), where
                assert _scale(page, picture) == pytest.approx(4 / 3, abs=1e-3), where
        assert errors == []
        page.close()
