"""The site's Python runs off the page's thread (``site/src/python.js``): the page never freezes, and Stop
ends the work.

A product of 201 factors, ``x*x*...*x``, takes the page's Python seconds: its explorer (Graphviz lays out G
and B) and lesson 2 on it. While Python works, the page (Debian's chromium, offline, a site built by
``micrograph site``) shows that it works (a "Working…" status with the seconds spent, the buttons that would
queue more work disabled, a Stop button) and answers the student; the longest task on its thread, measured
by the browser (a PerformanceObserver of 'longtask' entries), is printed and stays under :data:`FROZEN_MS`,
far below the seconds Python holds a thread for on such work (the page's own target, 100 ms, depends on the
machine's load and is measured in ``make bench``, not asserted here). Stop terminates
the Python worker mid-work, starts a fresh one, and the page says so and works again, also mid-check.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from exercise_solutions import CORRECT
from site_browser import READY_MS, WATCH, OfflinePages, served
from site_page import type_solution

import lessons
from lessons.publish.site_files import Missing, missing_files
from micrograph import Graph, Value
from micrograph.expr import build

BIG = "*".join(["x"] * 201)
"""x*x*...*x, 201 factors: seconds of the page's Python for its explorer and for lesson 2."""

FROZEN_MS = 1000
"""Milliseconds of one long task on the page's thread that mean Python ran there: the explorer of
:data:`BIG` held it for 12.7 s when it did; off the thread the longest task is about 100 ms, more under
load."""

BUSY_BUTTONS = ("x-draw", "check", "start", "next", "back", "go", "lesson")
"""The controls that would queue work (Draw G and B, Check, Start lesson, Next, Back, Go, the lesson list),
some in a tab not shown: by their ids."""


@pytest.fixture
def page(browser: Any, url: str) -> Iterator[Any]:
    """The site's page, ready, with its long tasks watched from here on (``page.since``: the page's clock
    when the watch began), every request off localhost blocked (and recorded)."""
    pages = OfflinePages(browser, url)
    context, p, _ = pages.open()
    p.since = p.evaluate(WATCH)
    boot = [(round(s), round(d)) for s, d in p.evaluate("window.longTasks")]
    print(f"\nlong tasks while the page started ([start, duration] ms): {boot}")
    yield p
    context.close()
    assert pages.blocked == [], f"the page asked for files off localhost: {pages.blocked}"
    assert pages.errors == [], pages.errors


def _long_tasks(page: Any) -> list[tuple[int, int]]:
    """The long tasks since the watch began, as (start, duration) in whole ms."""
    tasks = page.evaluate("(since) => window.longTasks.filter(([start]) => start >= since)", page.since)
    return [(round(s), round(d)) for s, d in tasks]


def _never_froze(page: Any) -> None:
    tasks = _long_tasks(page)
    print(f"long tasks during the work ([start, duration] ms): {tasks}")
    assert [t for t in tasks if t[1] > FROZEN_MS] == [], f"the page froze for more than {FROZEN_MS} ms"


def _working(page: Any, what: str) -> None:
    """The page shows that Python works on ``what``, for a second at least, and refuses more work."""
    stop = page.get_by_role("button", name="Stop")
    stop.wait_for(state="visible", timeout=30_000)
    assert page.locator("#status").text_content() == f"Working… {what}"
    page.wait_for_function("() => /^[1-9]\\d* s$/.test(document.getElementById('elapsed').textContent)")
    for name in BUSY_BUTTONS:
        assert page.locator(f"#{name}").is_disabled(), name
    assert page.locator("body").get_attribute("data-busy") == "true"


def _idle(page: Any) -> None:
    """The work is over: no Stop, no seconds, the buttons enabled again."""
    assert page.get_by_role("button", name="Stop").is_hidden()
    assert page.locator("#elapsed").text_content() == ""
    for name in BUSY_BUTTONS:
        assert page.locator(f"#{name}").is_enabled(), name


def _words(text: str) -> str:
    """A step's text without its wrapping: the page wraps it to the columns its box holds (which breaks a
    product of 201 factors inside it)."""
    return "".join(text.split())


def _big_graph_nodes() -> int:
    return len(Graph(build(BIG, {"x": Value(1.001, label="x")})).nodes)


def _draw(page: Any, expression: str, values: str) -> None:
    """The Explorer tab asked to draw G and B of ``expression`` at ``values``."""
    page.get_by_role("button", name="Explorer").click()
    section = page.locator("#explorer")
    section.get_by_label("Expression").fill(expression)
    section.get_by_label("Values").fill(values)
    page.get_by_role("button", name="Draw G and B").click()


@pytest.mark.slow
def test_the_explorer_of_201_factors_never_freezes_the_page(page: Any) -> None:
    # Graphviz lays G out in well under a second since far edges are drawn from copies: the page's busy
    # state is held by the lesson tests below; here, that the drawing happens off the page's thread
    _draw(page, BIG, "x=1.001")
    page.get_by_role("button", name="Lessons").click()  # the page answers meanwhile
    assert page.locator("#lessons").is_visible() and page.locator("#explorer").is_hidden()
    page.get_by_role("button", name="Explorer").click()
    frame = page.frame_locator("#explorer-frame")
    frame.locator("g[data-node]").first.wait_for(timeout=READY_MS)
    assert frame.locator("g[data-node]").count() == _big_graph_nodes()  # G, laid out in the worker
    # B, three times as large, is drawn too: the page's explorer draws up to web.EXPLORER_MAX_NODES
    assert frame.locator("g[data-bnode]").count() > 2 * _big_graph_nodes()
    assert frame.get_by_text("B is not drawn").count() == 0
    page.wait_for_timeout(1000)  # the frame's page has drawn them
    _idle(page)
    assert page.locator("#status").text_content().startswith("Ready: micrograph ")
    assert page.locator("#explorer-note").text_content() == ""
    _never_froze(page)


@pytest.mark.slow
def test_lesson_2_on_201_factors_never_freezes_the_page(page: Any) -> None:
    page.get_by_label("Lesson", exact=True).select_option("2")  # lesson 2 on its own example, first
    page.wait_for_function("() => document.getElementById('lesson-text').textContent.startsWith('Lesson 2')")
    page.locator("#lessons").get_by_label("Expression").fill(BIG)
    page.locator("#lessons").get_by_label("Values").fill("x=1.001")
    page.get_by_role("button", name="Start lesson").click()
    _working(page, "starting lesson 2")
    page.wait_for_function(
        "() => document.getElementById('lesson-text').textContent.includes('x*x*x*x')", timeout=READY_MS
    )
    stepper = lessons.start(2, expr=BIG, at={"x": 1.001})
    assert _words(page.locator("#lesson-text").text_content()) == _words(stepper.show(keys=""))
    # the drawing, 0.4 MB of SVG, in a sandboxed frame of its own: laid out and painted off the page's thread
    drawing = page.frame_locator("#lesson-picture iframe.drawing")
    drawing.locator("svg g.node").first.wait_for(timeout=30_000)
    assert drawing.locator("svg g.node").count() == _big_graph_nodes()
    assert page.get_by_title("Step picture").get_attribute("sandbox") == ""
    assert page.locator("#lesson-picture").evaluate("e => e.scrollWidth <= e.clientWidth")  # fits the box
    assert "expr=x*x*x" in page.url.replace("%2A", "*")
    page.get_by_role("button", name="Next step").click()
    page.wait_for_function(
        "() => document.getElementById('lesson-text').dataset.index === '2'", timeout=READY_MS
    )
    drawing.locator("svg g.node").first.wait_for(timeout=30_000)
    stepper.goto(2)
    assert _words(page.locator("#lesson-text").text_content()) == _words(stepper.show(keys="", place="page"))
    page.wait_for_timeout(500)
    _idle(page)
    _never_froze(page)


@pytest.mark.slow
def test_stop_ends_the_work_and_the_page_works_again(page: Any) -> None:
    page.get_by_label("Lesson", exact=True).select_option("2")
    page.wait_for_function("() => document.getElementById('lesson-text').textContent.startsWith('Lesson 2')")
    page.locator("#lessons").get_by_label("Expression").fill(BIG)  # seconds of the page's Python
    page.locator("#lessons").get_by_label("Values").fill("x=1.001")
    page.get_by_role("button", name="Start lesson").click()
    _working(page, "starting lesson 2")
    page.get_by_role("button", name="Stop").click()
    assert page.locator("#lesson-note").text_content() == "Stopped: lesson 2 was not started."
    again = "Python started again and the page is ready."
    page.wait_for_function(
        f"() => document.getElementById('status').textContent.endsWith('{again}')", timeout=READY_MS
    )
    status = page.locator("#status").text_content()
    assert re.fullmatch(
        r"Stopped after \d+\.\d s \(starting lesson 2\); Python started again and the page is ready\.", status
    ), status
    # the work is over; no lesson is shown, so stepping is off and everything else on
    assert page.get_by_role("button", name="Stop").is_hidden()
    assert page.locator("#elapsed").text_content() == ""
    for name in BUSY_BUTTONS:
        assert page.locator(f"#{name}").is_enabled() == (name not in ("next", "back", "go")), name
    assert page.locator("#lesson-text").text_content() == "" and page.locator("#where").text_content() == ""
    # the fresh Python, and the student's worker started at boot for the first check: the old Python ended
    assert _workers(page, lambda w: w.count("python.js") == 1) == ["python.js", "worker.js"]
    # a lesson starts and steps in the fresh Python
    page.get_by_label("Lesson", exact=True).select_option("1")
    page.wait_for_function(
        "() => document.getElementById('lesson-text').dataset.index === '1'", timeout=READY_MS
    )
    page.get_by_role("button", name="Next step").click()
    page.wait_for_function(
        "() => document.getElementById('lesson-text').dataset.index === '2'", timeout=READY_MS
    )
    stepper = lessons.start(1)
    stepper.goto(2)
    assert _words(page.locator("#lesson-text").text_content()) == _words(stepper.show(keys="", place="page"))
    # and the explorer draws again
    _draw(page, "tanh(w)", "w=0.5")
    frame = page.frame_locator("#explorer-frame")
    frame.locator("g[data-node]").first.wait_for(timeout=60_000)
    assert frame.locator("g[data-node]").count() == 2
    assert page.locator("#status").text_content().startswith("Ready: micrograph ")
    _never_froze(page)


def _workers(page: Any, settled: Any, seconds: float = 10) -> list[str]:
    """The page's Web Workers' file names, sorted, once ``settled(names)`` holds (a terminated worker is
    reported closed a moment later), or after ``seconds``."""
    names: list[str] = []
    for _ in range(int(seconds * 10)):
        names = sorted(w.url.rsplit("/", 1)[1] for w in page.workers)
        if settled(names):
            break
        page.wait_for_timeout(100)
    return names


@pytest.mark.slow
def test_stop_mid_check_ends_both_workers_and_scores_nothing(page: Any) -> None:
    looping = CORRECT["backprop"].replace(
        "    nodes = G.nodes\n", "    nodes = G.nodes\n    while nodes:  # every case loops\n        pass\n"
    )
    assert looping != CORRECT["backprop"]
    type_solution(page, looping)
    page.get_by_role("button", name="Check").click()
    _working(page, "checking backprop")
    page.wait_for_timeout(1500)  # into the cases: the judge and the student's worker both at work
    at_work = list(page.workers)
    page.get_by_role("button", name="Stop").click()
    assert page.locator("#check-status").text_content() == (
        "Stopped: the check did not finish, and nothing was scored."
    )
    assert page.locator("#report").text_content() == ""
    assert page.evaluate("localStorage.getItem('micrograph.progress')") is None
    page.wait_for_function(
        "() => document.getElementById('status').textContent.endsWith('the page is ready.')", timeout=READY_MS
    )
    # the fresh Python and a fresh spare student's worker only: the judge and the looping solution ended
    # (Playwright reports a terminated worker closed a moment after it ends: waited for, at most 10 s)
    for _ in range(100):
        if not any(w in at_work for w in page.workers):
            break
        page.wait_for_timeout(100)
    assert [w.url for w in page.workers if w in at_work] == []
    assert _workers(page, lambda w: w == ["python.js", "worker.js"]) == ["python.js", "worker.js"]
    type_solution(page, CORRECT["backprop"])
    page.get_by_role("button", name="Check").click()
    page.wait_for_function(
        "() => /PASS|FAIL|could not/.test(document.getElementById('check-status').textContent)",
        timeout=READY_MS,
    )
    assert page.locator("#check-status").text_content().startswith("PASS")
    assert re.search(r"All (\d+) checks passed: \1 of \1 points", page.locator("#report").text_content())
    progress = json.loads(page.evaluate("localStorage.getItem('micrograph.progress')"))
    assert progress["backprop"]["passed"] is True
    _never_froze(page)


@pytest.mark.slow
@pytest.mark.parametrize(
    "without, by, how",
    [("python.js", "workers.js", "starts as a worker"), ("graphviz.js", "python.js", "imports")],
)
def test_the_build_check_reaches_the_python_worker(
    site_dir: Path, tmp_path: Path, without: str, by: str, how: str
) -> None:
    copy = tmp_path / "site"
    shutil.copytree(site_dir, copy)
    assert missing_files(copy) == []
    (copy / without).unlink()
    assert missing_files(copy) == [Missing(without, by, how)]


@pytest.mark.slow
def test_a_python_worker_that_cannot_load_is_named_on_the_page(
    browser: Any, site_dir: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "site"
    shutil.copytree(site_dir, copy)
    (copy / "graphviz.js").unlink()
    with served(copy) as address:
        context = browser.new_context()
        try:
            p = context.new_page()
            p.goto(address)
            p.wait_for_function(
                "() => document.getElementById('status').textContent.startsWith('micrograph could not')",
                timeout=READY_MS,
            )
            assert (
                p.locator("#status")
                .text_content()
                .startswith("micrograph could not start: the page's Python stopped: ")
            )
            assert p.locator("body[data-ready=true]").count() == 0
            assert p.get_by_role("button", name="Start lesson").is_disabled()
        finally:
            context.close()
