"""The site's page scrolls as one page (``micrograph site``, served on localhost, in Debian's chromium).

At 1280x800 and 390x844: the explorer's frame is as tall as the explorer's page, so nothing scrolls inside
it; the wheel over its drawings scrolls the site's page and Ctrl+wheel zooms them; on a phone G's first view
shows its inputs. A lesson's pictures (lesson 3's ladder, lesson 1 on a sum of 60 terms) keep their text at
least 9 px high: beside the text, below it, or in a pane that pans and zooms, which the wheel scrolls past.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 and 6.5.6, figure 6.9.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gestures import ctrl_wheel, wheel_scrolls_the_page
from site_browser import READY_MS, OfflinePages, served
from test_explore_as_a_page import SCROLLED_INSIDE
from test_explore_screens import SCREENS, _inputs_in_first_view
from test_picture_panes import TEXT_HEIGHTS

from micrograph import Graph, Value
from micrograph.expr import build

pytestmark = pytest.mark.slow

SUM_35 = " + ".join(f"tanh(x*{k} + y)*y" for k in range(1, 36))
"""A sum of 35 products (211 nodes, B 208): G and B both within the page's 300 nodes."""
SUM_60 = " + ".join(f"x*{k}" for k in range(1, 61))


@pytest.fixture(scope="module")
def page(browser: Any, site_dir: Path) -> Iterator[Any]:
    """The site built by ``micrograph site``, served, loaded once (it boots Python) with every request off
    localhost blocked; no script error may happen in it, and its policy may refuse nothing."""
    out = site_dir
    with served(out) as url:
        pages = OfflinePages(browser, url)
        context, page, _ = pages.open()
        yield page
        assert pages.blocked == [] and pages.errors == [] and pages.refusals == []
        context.close()


def _screen(page: Any, screen: str) -> None:
    """The page at the size of ``screen``, once it has wrapped the lesson's text again for it (app.js does
    so 150 ms after a resize, with Python: its controls are disabled meanwhile)."""
    page.set_viewport_size(dict(zip(("width", "height"), SCREENS[screen])))
    page.wait_for_timeout(400)
    page.wait_for_function("() => !document.getElementById('start').disabled")


def _explore(page: Any, screen: str) -> Any:
    """The explorer of SUM_35 drawn at the size of ``screen``: the frame's locator, once it fits its page."""
    _screen(page, screen)
    page.evaluate("window.scrollTo(0, 0)")
    page.get_by_role("button", name="Explorer").click()
    section = page.locator("#explorer")
    section.get_by_label("Expression").fill(SUM_35)
    section.get_by_label("Values").fill("x=0.1, y=0.2")
    page.evaluate("() => { const f = document.getElementById('explorer-frame'); f.src = 'about:blank'; "
                  "f.style.height = ''; }")  # fmt: skip
    page.get_by_role("button", name="Draw G and B").click()
    frame = page.frame_locator("#explorer-frame")
    frame.locator(".mg-pane-b g[data-bnode]").first.wait_for(timeout=READY_MS)
    page.wait_for_function("() => document.getElementById('explorer-frame').style.height !== ''")
    inside = page.locator("#explorer-frame").element_handle().content_frame()
    inside.wait_for_function(  # the frame has taken the height its page said last
        "() => document.documentElement.scrollHeight <= document.documentElement.clientHeight"
    )
    return frame


def _scale(frame: Any, pane: str) -> float:
    return float(frame.locator(pane).get_attribute("data-scale"))


@pytest.mark.parametrize("screen", list(SCREENS))
def test_the_explorers_frame_fits_its_page_and_the_wheel_scrolls_the_site(page: Any, screen: str) -> None:
    frame = _explore(page, screen)
    inner = frame.locator("html").evaluate(
        "h => [h.scrollHeight, h.clientHeight, document.body.getBoundingClientRect().height]"
    )
    assert inner[0] <= inner[1]  # nothing scrolls inside the frame: it is as tall as its page
    assert inner[1] > SCREENS[screen][1] / 2  # ... and the page is all there, not cut
    assert frame.locator("html").evaluate(SCROLLED_INSIDE) == []
    if screen == "phone":  # G's first view: its inputs
        z = build(SUM_35, {"x": Value(0.1, label="x"), "y": Value(0.2, label="y")})
        assert len(_inputs_in_first_view(frame, Graph(z))) == 2  # x and y: side by side
    height = page.locator("#explorer-frame").evaluate("f => f.clientHeight")
    assert abs(height - inner[1]) <= 1 and inner[2] <= height
    for pane in (".mg-pane-g", ".mg-pane-b"):
        frame.locator(pane).scroll_into_view_if_needed()
        k = _scale(frame, pane)
        wheel_scrolls_the_page(page, frame.locator(pane))
        assert _scale(frame, pane) == k
        frame.locator(pane).scroll_into_view_if_needed()
        ctrl_wheel(page, frame.locator(pane))
        frame.locator(f"{pane}[data-scale]").wait_for()
        assert _scale(frame, pane) > k


def _lesson(page: Any, number: int, step: int, expr: str = "", at: str = "") -> Any:
    page.evaluate("window.scrollTo(0, 0)")  # the tabs, above the explorer's frame, stay put as it resizes
    page.get_by_role("button", name="Lessons", exact=True).click()
    page.get_by_label("Lesson", exact=True).select_option(str(number))
    page.wait_for_function(
        "n => document.getElementById('lesson-text').textContent.startsWith(`Lesson ${n}:`)", arg=number
    )
    if expr:
        page.locator("#lessons").get_by_label("Expression").fill(expr)
        page.locator("#lessons").get_by_label("Values").fill(at)
        page.get_by_role("button", name="Start lesson").click()
        page.wait_for_function("e => new URLSearchParams(location.search).get('expr') === e", arg=expr)
    if page.locator("#lesson-text").get_attribute("data-index") != str(step):
        page.get_by_label("Go to step").fill(str(step))
        page.get_by_role("button", name="Go", exact=True).click()
        page.wait_for_function(f"() => document.getElementById('lesson-text').dataset.index === '{step}'")
    picture = page.locator("#lesson-picture")
    picture.locator(".mg-picture-pane > svg, .mg-picture-pane > iframe").wait_for()
    return picture


def _text_heights(page: Any, picture: Any) -> list[float]:
    """The height on screen of each text of the picture: inline, or in its frame (a drawing of more than
    100 kB), whose own heights are scaled as the frame is on screen."""
    if picture.locator(".mg-picture-pane > svg").count():
        return picture.evaluate(TEXT_HEIGHTS)  # type: ignore[no-any-return]
    frame = picture.locator("iframe.drawing")
    scale = frame.evaluate("f => f.getBoundingClientRect().width / f.offsetWidth")
    inside = page.frame_locator("#lesson-picture iframe.drawing").locator("svg")
    inside.locator("text").first.wait_for()
    heights = inside.evaluate(
        "s => Array.from(s.querySelectorAll('text')).map(t => t.getBoundingClientRect().height)"
    )
    return [h * scale for h in heights if h > 0]


@pytest.mark.parametrize("screen", list(SCREENS))
def test_a_lessons_pictures_stay_legible(page: Any, screen: str) -> None:
    _screen(page, screen)
    ladder = _lesson(page, 3, 4)
    heights = _text_heights(page, ladder)
    assert heights and min(heights) >= 9.0
    assert ladder.evaluate("e => e.classList.contains('mg-panned')") == (screen == "phone")
    assert ladder.bounding_box()["width"] <= SCREENS[screen][0]
    drawing = _lesson(page, 1, 1, SUM_60, "x=0.5")
    assert drawing.evaluate("e => e.classList.contains('mg-panned')")  # 60 terms: wider than any screen
    heights = _text_heights(page, drawing)
    assert len(heights) >= 60 and min(heights) >= 9.0
    pane = drawing.locator(".mg-picture-pane")
    pane.scroll_into_view_if_needed()
    k = float(pane.get_attribute("data-scale"))
    wheel_scrolls_the_page(page, pane)
    assert float(pane.get_attribute("data-scale")) == k
    ctrl_wheel(page, pane)
    assert float(pane.get_attribute("data-scale")) > k
    assert page.evaluate(SCROLLED_INSIDE) == []
