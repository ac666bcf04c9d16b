"""The built site's page in the browser tests: the site built once for the session, served on localhost for
each module, and one page of it per module, brought back to the state it loads in before each test.

Its fixtures (``site_dir``, ``url``, ``shared_page``, ``page``) are registered by tests/conftest.py; a module
that needs another page (tests/test_site_worker.py: one per test, its long tasks watched) defines its own.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from site_browser import OfflinePages, served

from lessons.publish import site


def build_or_skip(out: Path) -> None:
    """Build the site into ``out`` (``micrograph site``: npm and PyPI); skip the test where they cannot be
    reached, but fail in CI, which needs them."""
    try:
        site.build_site(out, log=lambda s: None)
    except site.SiteError as e:
        message = f"the site could not be built: {e}"
        if os.environ.get("CI"):
            pytest.fail(message + " (CI needs npm and the npm registry)")
        pytest.skip(message)


@pytest.fixture(scope="session")
def site_dir(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The site, built once for the whole run, by the first of pytest-xdist's workers that needs it (the
    others wait on a lock and serve the same directory); tests copy it before they change it."""
    from filelock import FileLock

    if worker_id == "master":  # not under xdist
        out = tmp_path_factory.mktemp("site") / "site"
        build_or_skip(out)
        return out
    shared = tmp_path_factory.getbasetemp().parent  # the run's directory, above each worker's own
    out, built = shared / "site", shared / "site.built"
    with FileLock(str(shared / "site.lock")):
        if not built.exists():
            if out.exists():  # a build that failed in another worker
                shutil.rmtree(out)
            build_or_skip(out)
            built.touch()
            print(f"\nsite size: {site.site_size(out) / (1 << 20):.1f} MiB")
    return out


@pytest.fixture(scope="module")
def url(site_dir: Path) -> Iterator[str]:
    """The built site's address on localhost, served while the module runs."""
    with served(site_dir) as address:
        yield address


def expect(locator: Any) -> Any:
    """Playwright's assertions, which wait for the page: its answers come from Python in a Web Worker."""
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def type_solution(page: Any, source: str) -> None:
    """The backprop exercise opened in the Exercises tab, its editor's text replaced by ``source``."""
    page.get_by_role("button", name="Exercises").click()
    page.get_by_label("Exercise", exact=True).select_option("backprop")
    page.locator(".cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(source)


class SharedPage:
    """The site's page, loaded once for the module (loading boots Python in the page: the slow part), and
    brought back before each test to the state it loads in; loaded again after a test failed in it."""

    def __init__(self, browser: Any, url: str) -> None:
        self.pages = OfflinePages(browser, url)
        self.context: Any = None
        self.page: Any = None
        self.failed = True  # nothing loaded yet

    def open(self) -> None:
        if self.context is not None:
            self.context.close()
        self.context, self.page, seconds = self.pages.open()
        self.failed = False
        print(f"\ntime to interactive: {seconds:.1f} s (page's own measure "
              f"{self.page.evaluate('window.micrographTimes.interactive') / 1000:.1f} s)")  # fmt: skip

    def reset(self) -> None:
        """The state the page loads in: lesson 1 on its example in the Lessons tab, the explorer's form at its
        defaults with nothing drawn, the first exercise on its template, nothing stored, the address bare."""
        p = self.page
        p.set_viewport_size({"width": 1280, "height": 800})
        p.evaluate(RESET)
        p.get_by_label("Lesson", exact=True).select_option("1")  # the lesson form refilled and started
        p.wait_for_function(
            "() => document.getElementById('lesson-text').textContent.startsWith('Lesson 1:')"
        )

    def close(self) -> None:
        if self.context is not None:
            self.context.close()


RESET = """() => {
  const $ = (id) => document.getElementById(id);
  localStorage.clear();
  history.replaceState(null, "", location.pathname);
  $("tab-lessons").click();
  for (const id of ["x-expr", "x-at"]) $(id).value = $(id).defaultValue;
  $("x-predict").checked = false;
  $("explorer-note").textContent = "";
  $("explorer-frame").src = "about:blank";
  $("exercise").selectedIndex = 0;
  $("exercise").dispatchEvent(new Event("change"));
  $("check-status").textContent = "";
}"""
"""What a test may have changed outside the lesson form, put back as the page loads it (app.js)."""


@pytest.fixture(scope="module")
def shared_page(browser: Any, url: str) -> Iterator[SharedPage]:
    shared = SharedPage(browser, url)
    yield shared
    shared.close()


@pytest.fixture
def page(shared_page: SharedPage, request: pytest.FixtureRequest) -> Iterator[Any]:
    """The site's page, ready, with every request off localhost blocked (and recorded): none may be made,
    no script error may happen, and its Content-Security-Policy may refuse nothing, during the test."""
    pages = shared_page.pages
    blocked, errors, refusals = len(pages.blocked), len(pages.errors), len(pages.refusals)  # a load's too
    if shared_page.failed:
        shared_page.open()
    shared_page.reset()
    yield shared_page.page
    report = getattr(request.node, "rep_call", None)
    shared_page.failed = report is None or report.failed
    assert pages.blocked[blocked:] == [], f"the page asked for files off localhost: {pages.blocked[blocked:]}"
    assert pages.errors[errors:] == [], pages.errors[errors:]
    assert pages.refusals[refusals:] == [], f"the page's policy refused: {pages.refusals[refusals:]}"
