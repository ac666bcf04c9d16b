"""The README's screenshot of the browser site, ``docs/site.png``: lesson 2 part-way, a step with its drawing.

Run from the repository's root (it needs what ``micrograph site`` needs, npm and PyPI, and Debian's
chromium with Playwright)::

    python docs/screenshots.py                 # builds the site into a temporary directory
    python docs/screenshots.py --site site-out # or uses one built already (make site)

The page is opened at 1280x800 on ``?lesson=2``, offline (every request off localhost blocked), moved to
step :data:`STEP` with the page's own "Go to step", and photographed once the step's drawing is laid out.
The picture is written beside its target and moved into place, so an interrupted run leaves the old one.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for _p in (str(ROOT), str(ROOT / "tests")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

LESSON = 2
STEP = 5
"""Lesson 2's step 5: the loop of Algorithm 6.2 at j = 2, the grad_table filled from u(n) down to u3."""
SIZE = (1280, 800)


def shoot(site_dir: Path, out: Path) -> str:
    """Photograph lesson :data:`LESSON` at step :data:`STEP` of the site in ``site_dir`` into ``out``.

    Returns:
        The page's "Step k of n" text.

    Raises:
        RuntimeError: the page asked for files off localhost, raised a script error, or shows no drawing.
    """
    from conftest import launch_chromium
    from playwright.sync_api import sync_playwright
    from site_browser import OfflinePages, served

    from viz.files import write_atomic

    with served(site_dir) as url, sync_playwright() as p:
        browser = launch_chromium(p)
        pages = OfflinePages(browser, url)
        context, page, _ = pages.open(f"?lesson={LESSON}", viewport=SIZE)
        page.wait_for_function("() => document.getElementById('lesson-text').dataset.index === '1'")
        page.get_by_label("Go to step").fill(str(STEP))
        page.get_by_role("button", name="Go", exact=True).click()
        page.wait_for_function(f"() => document.getElementById('lesson-text').dataset.index === '{STEP}'")
        page.locator("#lesson-picture svg").wait_for()
        where = str(page.locator("#where").text_content())
        write_atomic(out, page.screenshot())
        context.close()
        browser.close()
    if pages.blocked or pages.errors:
        raise RuntimeError(f"the page asked for {pages.blocked} off localhost; script errors: {pages.errors}")
    return where


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--site", type=Path, help="a site built already (default: build one now)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "site.png", help="the PNG to write")
    args = parser.parse_args(argv)
    if args.out.is_symlink():
        print(f"screenshots: {args.out} is a symlink; not writing through it", file=sys.stderr)
        return 2
    if args.site is not None:
        where = shoot(args.site, args.out)
    else:
        from lessons.publish import site

        with tempfile.TemporaryDirectory() as tmp:
            site.build_site(Path(tmp) / "site", log=lambda s: print(s, file=sys.stderr))
            where = shoot(Path(tmp) / "site", args.out)
    print(f"wrote {args.out}: lesson {LESSON}, {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
