"""The lessons' pictures on a page: legible, and panned and zoomed as the explorer's drawings are.

A picture (a Graphviz drawing) is shown at 1:1 where its place holds it, shrunk to its place while its
smallest text stays at least 9 px high, and otherwise at that legible scale in a pane that pans and zooms
(``static/explorer/picture.js``, on the explorer's own pane code ``pan.js`` and d3-zoom). The site's page,
the tour's lesson pages and the step-through pages (:func:`viz.steps`, each frame's drawing) load
:func:`pictures_script`, one classic script that defines ``micrographD3`` and ``micrographPictures``
(``show(box)``, ``showAll()``); :func:`inline_svg` makes a drawing's SVG fit to sit in a page beside others.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import json
import re

from viz.explore import WORDS
from viz.explore_page import d3_zoom, join_modules
from viz.style import PICTURE_CSS

__all__ = ["PICTURE_MODULES", "PICTURE_WORDS", "pictures_script", "inline_svg"]

PICTURE_MODULES = ("words", "pan", "picture")
"""The modules of ``static/explorer`` the pictures' script joins, each after those it imports."""

PICTURE_WORDS = {
    "zoom_in": WORDS["zoom_in"],
    "zoom_out": WORDS["zoom_out"],
    "picture": "drawing: drag to pan, Ctrl+wheel or pinch to zoom; arrow keys pan, + and - zoom",
    "picture_help": "drag to pan; Ctrl+wheel or pinch to zoom (the wheel scrolls the page)",
}
"""What a picture's pane says: its buttons, its accessible name, its help line."""

_PROLOG = re.compile(r"^.*?(?=<svg\b)", re.S)
_ID = re.compile(r'\sid="[^"]*"')


def pictures_script() -> str:
    """d3-zoom (vendored from npm) and the pictures' modules as one classic script.

    It defines ``micrographD3`` and ``micrographPictures``, whose ``show(box)`` lays out the drawing in
    ``box`` (an element holding an inline ``<svg>``) and ``showAll()`` every element of class
    ``mg-picture`` in the page.

    Raises:
        ValueError: a module's imports or exports are not of the forms :func:`viz.explore_page.join_modules`
            reads.
    """
    words, css = json.dumps(PICTURE_WORDS, ensure_ascii=False), json.dumps(PICTURE_CSS)
    return (
        d3_zoom()
        + "\n"
        + join_modules(PICTURE_MODULES, "micrographPictureModules")
        + f"var micrographPictures = micrographPictureModules.pictures(micrographD3, {words}, {css});\n"
    )


def inline_svg(svg: str) -> str:
    """A drawing's SVG as it may sit inline in an HTML page among others: from its ``<svg`` tag on (no XML
    prolog, doctype or comment before it), and without ids (Graphviz numbers every drawing's groups alike)
    unless the drawing refers to one (a gradient's ``url(#...)``, a ``href="#..."``)."""
    body = _PROLOG.sub("", svg, count=1)
    return body if "url(#" in body or 'href="#' in body else _ID.sub("", body)
