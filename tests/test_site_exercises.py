"""The exercises in the site's page (Debian's chromium, offline): a solution typed into the page and checked
there (the student's code in a Web Worker, the judge in the page's Python) gets the report
``micrograph exercise check`` gives; a case that runs forever is stopped, the others scored; a solution
that loops everywhere stops within the page's budget; numpy is said to be missing before the check; the
editor, made on first use, holds the draft even when its tab was opened while the page loaded.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from exercise_solutions import CORRECT, mutant
from site_browser import OfflinePages
from site_page import expect, type_solution

ROOT = Path(__file__).resolve().parent.parent
WRONG_BACKPROP = mutant(
    CORRECT["backprop"],
    ("            for C in G.get_consumers(v)", "            for C in G.get_consumers(v)[:1]"),
)  # only the first consumer's term: a mistake the judge recognises


def _check(page: Any, source: str) -> str:
    type_solution(page, source)
    assert page.evaluate("localStorage.getItem('micrograph.draft.backprop')") == source  # the draft kept
    page.get_by_role("button", name="Check").click()
    page.wait_for_function(
        "() => /PASS|FAIL|could not/.test(document.getElementById('check-status').textContent)",
        timeout=120_000,
    )
    return str(page.locator("#report").text_content())


def _without_time(text: str) -> str:
    return re.sub(r"\(\d+\.\d s\)", "(T s)", text)


@pytest.mark.slow
def test_exercise_wrong_then_correct(page: Any, tmp_path: Path) -> None:
    from lessons import exercises

    wrong = tmp_path / "backprop.py"
    wrong.write_text(WRONG_BACKPROP)
    expected = exercises.check("backprop", wrong, record=False, drawing=None).text("page")
    report = _check(page, WRONG_BACKPROP)
    assert page.locator("#check-status").text_content().startswith("FAIL")
    assert _without_time(report) == _without_time(expected)
    assert "grad_table[u2 (x)] holds only the term(s) of its first consumer, u4" in report
    assert page.locator("#failure svg").count() == 1  # the failure's drawing, laid out in the page

    report = _check(page, CORRECT["backprop"])
    assert page.locator("#check-status").text_content().startswith("PASS")
    assert "All 14 checks passed" in report
    times = page.evaluate("window.micrographTimes")
    print(
        f"\na correct backprop checked in {times['check'] / 1000:.2f} s, of which "
        f"{times['checkWorkerWait'] / 1000:.2f} s waiting for its worker to start Python"
    )
    progress = json.loads(page.evaluate("localStorage.getItem('micrograph.progress')"))
    assert progress["backprop"] == {"passed": True, "passed_earlier": True, "score": 14, "max_score": 14}
    assert "passed" in (page.locator("#progress li", has_text="backprop").get_attribute("class") or "")


@pytest.mark.slow
def test_a_case_that_runs_forever_is_stopped_and_the_others_scored(page: Any) -> None:
    looping = mutant(
        CORRECT["backprop"],
        ("    nodes = G.nodes", "    nodes = G.nodes\n    while len(nodes) > 3000:\n        pass"),
    )
    report = _check(page, looping)
    assert "13 of 14 checks passed" in report
    assert re.search(r"FAIL  time against size: long graphs of 400 to 3,200 nodes", report)
    assert "ran longer than" in report


@pytest.mark.slow
def test_a_solution_that_loops_everywhere_stops_within_the_page_s_budget(page: Any) -> None:
    looping = "def backprop(G):\n    while True:\n        pass\n"
    report = _check(page, looping)
    assert "[not-run]" in report
    assert "A busy loop" in " ".join(report.split())
    assert "--seed" not in report and "save_svg" not in report  # the page's own words


@pytest.mark.slow
def test_numpy_is_said_to_be_missing_before_check(page: Any) -> None:
    page.get_by_role("button", name="Exercises").click()
    page.get_by_label("Exercise", exact=True).select_option("mlp_backward")
    assert not page.locator("#numpy-note").is_visible()
    page.locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.insert_text("\nimport numpy\n")
    assert page.locator("#numpy-note").is_visible()
    assert "numpy is not available in this page" in page.locator("#numpy-note").text_content()


@pytest.mark.slow
def test_the_exercises_tab_opened_while_the_page_loads_holds_the_draft_once_ready(
    browser: Any, url: str
) -> None:
    """The editor is made on first use: the tab clicked before the exercises are known makes none, and
    the page makes it, holding the first exercise's template, once it is ready."""
    pages = OfflinePages(browser, url)
    context, page, _ = pages.open(early=lambda p: p.get_by_role("button", name="Exercises").click())
    try:
        assert page.locator("#exercises").is_visible()
        expect(page.locator(".cm-content")).to_contain_text("# micrograph exercise: derivatives")
        assert page.locator(".cm-editor").count() == 1
    finally:
        context.close()
    assert pages.errors == [], pages.errors
