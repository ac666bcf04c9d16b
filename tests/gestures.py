"""A reader's gestures over a drawing in chromium (Playwright): the wheel that scrolls the page past it, and
Ctrl+wheel that zooms it. The pages that pan and zoom (the explorer, a lesson's pictures, the site) are each
tested with these same gestures.
"""

from __future__ import annotations

from typing import Any


def _mouse_to_middle(page: Any, target: Any) -> None:
    box = target.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def wheel_scrolls_the_page(page: Any, target: Any) -> None:
    """Turn the mouse wheel over the middle of ``target`` (a locator of the page or of a frame in it),
    towards the end of the page that is further, and wait until the page has scrolled: a reader scrolling
    past a drawing."""
    at = page.evaluate("window.scrollY")
    _mouse_to_middle(page, target)
    page.mouse.wheel(0, -300 if at > 0 else 300)
    page.wait_for_function("y => window.scrollY !== y", arg=at)


def ctrl_wheel(page: Any, target: Any) -> None:
    """One notch of the mouse wheel towards the reader, Ctrl held, over the middle of ``target``: a
    drawing's zoom in."""
    _mouse_to_middle(page, target)
    page.keyboard.down("Control")
    page.mouse.wheel(0, -100)
    page.keyboard.up("Control")
