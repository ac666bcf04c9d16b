"""The tour's pages in the one page shell (viz.page): a policy that admits only their own inline scripts.

A lesson page and the index carry the Content-Security-Policy; opened from disk in Debian's chromium
(Playwright), a lesson page still shows its pictures (viz.pictures' script, inlined) and its plots (PNG files
beside it), and a script added to the page (inline, a handler, a file beside it) does not run, where the
same page without the policy runs all three.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import CHROMIUM, open_watched

from lessons.publish import tour
from viz.page import html_page

needs_chromium = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"chromium is not at {CHROMIUM}")
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")

POLICY = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">')
ADDED = (
    "<script>alert('inline')</script><img src='nowhere.png' onerror=\"alert('handler')\">"
    "<script src='added.js'></script>"
)
"""What an attacker would add to a page: an inline script, a handler, a script file beside the page."""


def _digest(script: str) -> str:
    return base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")


def _inline_scripts(page: str) -> list[str]:
    return re.findall(r"<script>(.*?)</script>", page, re.S)


@pytest.fixture(scope="module")
def toured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tour of lesson 3 (drawings, and plots as PNG files beside its page)."""
    out = tmp_path_factory.mktemp("tour") / "tour"
    tour.run(out, progress=False, only=[3])
    return out


@needs_dot
def test_the_lesson_page_and_the_index_admit_only_their_own_inline_scripts(toured: Path) -> None:
    lesson = (toured / "lesson3" / tour.INDEX).read_text(encoding="utf-8")
    index = (toured / tour.INDEX).read_text(encoding="utf-8")
    for page in (lesson, index):
        assert page.startswith("<!DOCTYPE html>\n") and page.count("Content-Security-Policy") == 1
        policy = POLICY.search(page)
        assert policy is not None and policy.group(1).startswith("default-src 'none'; ")
        admitted = set(re.findall(r"'sha256-([^']+)'", policy.group(1)))
        assert admitted == {_digest(s) for s in _inline_scripts(page)}
        assert "<script src" not in page and " src='../" not in page
    scripts = _inline_scripts(lesson)
    assert len(scripts) == 2 and scripts[1] == "micrographPictures.showAll();"
    assert "var micrographPictures = " in scripts[0]
    assert "img-src 'self' data:;" in lesson  # the plots' PNG files beside the page
    assert _inline_scripts(index) == [] and "script-src 'none'" in index
    assert not (toured / "pictures.js").exists()  # the script is in each page: no file to admit


def test_a_page_refuses_a_script_that_would_end_its_element() -> None:
    with pytest.raises(ValueError, match="</script"):
        html_page(title="t", css="", body="", script=("ok();", "s = '</SCRIPT>'"))
    page = html_page(title="<t>", css="", body="<p>b</p>", script=("a();", "b();"))
    assert "<title>&lt;t&gt;</title>" in page and page.index("a();") < page.index("b();")
    assert f"script-src 'sha256-{_digest('a();')}' 'sha256-{_digest('b();')}'" in page


def _copy(toured: Path, tmp_path: Path, policy: bool) -> Path:
    """Lesson 3's directory copied, its page with :data:`ADDED` in it (and without its policy)."""
    where = tmp_path / ("kept" if policy else "dropped")
    shutil.copytree(toured / "lesson3", where)
    page = (where / tour.INDEX).read_text(encoding="utf-8")
    page = page.replace("</body>", ADDED + "\n</body>")
    if not policy:
        page = POLICY.sub("", page)
    (where / tour.INDEX).write_text(page, encoding="utf-8")
    (where / "added.js").write_text("alert('file');\n", encoding="utf-8")
    return where / tour.INDEX


@needs_chromium
@needs_dot
@pytest.mark.slow
def test_a_lesson_page_from_disk_shows_its_pictures_and_plots(browser: Any, toured: Path) -> None:
    page, events = open_watched(browser, toured / "lesson3" / tour.INDEX)
    page.wait_for_selector(".mg-picture .mg-picture-pane")
    figures = page.locator("figure.mg-picture")
    assert figures.count() >= 3 and page.locator(".mg-picture-pane").count() == figures.count()
    plots = page.locator("img")
    assert plots.count() >= 2
    page.wait_for_function("() => Array.from(document.images).every(i => i.complete)")
    assert page.evaluate("Array.from(document.images).every(i => i.naturalWidth > 0)")
    assert events["errors"] == [] and events["dialogs"] == []
    page.close()


@needs_chromium
@needs_dot
@pytest.mark.slow
def test_a_script_added_to_a_lesson_page_does_not_run(browser: Any, toured: Path, tmp_path: Path) -> None:
    page, events = open_watched(browser, _copy(toured, tmp_path, policy=True))
    page.wait_for_selector(".mg-picture .mg-picture-pane")  # the page's own scripts ran
    page.wait_for_timeout(300)
    assert events["dialogs"] == []
    assert sum("Content Security Policy" in e for e in events["errors"]) >= 3, events["errors"]
    page.close()
    # the same page without its policy: all three run (so the test above can fail)
    page, events = open_watched(browser, _copy(toured, tmp_path, policy=False))
    page.wait_for_selector(".mg-picture .mg-picture-pane")
    page.wait_for_timeout(300)
    assert sorted(events["dialogs"]) == ["file", "handler", "inline"]
    page.close()
