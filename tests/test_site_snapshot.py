"""The page's Python starts from the image of its memory that the build saved, and without it when it must.

``micrograph site`` runs ``site/src/snapshot.mjs`` in Node on the staged site: Pyodide started with its memory
snapshot enabled, micrograph made ready as the page's worker makes it (``site/src/python_setup.js``), what
every start of the page computes first computed (``lessons.publish.web.prepare``), the memory saved
gzip-compressed as ``pyodide/snapshot.gz``. The page's worker (``site/src/python.js``) starts
Pyodide from that image, which skips the interpreter's start and micrograph's imports; a site whose image is
missing or that this Pyodide refuses starts Python the plain way and works the same. The page says which ran
(``window.micrographTimes.snapshot``). Time to interactive is measured in ``make bench`` (benchmarks/site.py),
not here.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path
from typing import Any

import pytest
from site_browser import OfflinePages, served
from site_page import expect

from lessons.publish import site, web

pytestmark = pytest.mark.slow


def _opened_works(pages: OfflinePages) -> bool:
    """Open the page, check that it is ready and shows lesson 1's first step; whether Python started from
    the saved image."""
    context, page, _ = pages.open()
    try:
        expect(page.locator("#status")).to_contain_text("Ready: micrograph")
        expect(page.locator("#lesson-text")).to_contain_text("u(1)")
        assert page.locator("#lesson-picture svg").count() == 1
        started: Any = page.evaluate("window.micrographTimes.snapshot")
        assert isinstance(started, bool)
        return started
    finally:
        context.close()
        assert pages.blocked == [] and pages.errors == [], (pages.blocked, pages.errors)


def test_the_build_saves_pythons_memory_with_micrograph_imported(site_dir: Path) -> None:
    image = gzip.decompress((site_dir / site.SNAPSHOT).read_bytes())
    assert len(image) > 1 << 20  # a WebAssembly memory of megabytes
    assert b"lessons.publish.web" in image  # micrograph's page module is in it, imported
    assert web.catalogue().encode() in image  # and what every start of the page computes first (prepare)
    assert b"lessons.l1_forward" in image
    assert site.site_size(site_dir) <= site.BUDGET


def test_the_page_starts_python_from_the_saved_image(browser: Any, url: str) -> None:
    assert _opened_works(OfflinePages(browser, url)) is True


@pytest.mark.parametrize("image", ["missing", "refused"])
def test_without_a_usable_image_python_starts_the_plain_way(
    browser: Any, site_dir: Path, tmp_path: Path, image: str
) -> None:
    copy = tmp_path / "site"
    shutil.copytree(site_dir, copy)
    if image == "missing":
        (copy / site.SNAPSHOT).unlink()
    else:  # gzip of bytes that are no image of Pyodide's memory
        (copy / site.SNAPSHOT).write_bytes(gzip.compress(b"not a memory image" * 1000))
    with served(copy) as address:
        assert _opened_works(OfflinePages(browser, address)) is False
