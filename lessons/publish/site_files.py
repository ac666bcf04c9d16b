"""The files a built site's page loads, and which of them the site lacks.

A page whose module script imports a file that is not there never runs at all: the browser fetches the whole
module graph before it evaluates any of it, so ``app.js`` cannot even report the failure. ``micrograph site``
therefore reads what it built before it reports success, starting from ``index.html``:

* in HTML: ``<script src>``, ``<link href>``, ``<a href>``, ``<img src>``, ``<iframe src>``;
* in each JavaScript file reached: ``import``/``export ... from "./x.js"``, ``import "./x.js"`` and
  ``import("./x.js")`` (relative to that file), ``fetch("x")`` and ``new Worker("x")`` with a literal
  address (relative to the site's root, where the page and its worker are);
* in a stylesheet: ``url(x)``;
* in ``pyodide/``: each file name Pyodide's loader appends to its ``indexURL`` (``pyodide.asm.mjs``,
  ``pyodide.asm.wasm``, ``python_stdlib.zip``, ``pyodide-lock.json``): a name ending ``.mjs``, ``.wasm``,
  ``.zip`` or ``.json`` written in one of its scripts;
* in ``manifest.json``: micrograph's wheel and the other wheels, which the page fetches from ``wheels/``.

Addresses with a scheme (``data:``, ``https:``), built at run time (``${...}``) or bare module names are not
files of the site and are not followed.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import html.parser
import json
import os
import posixpath
import re
from collections import deque
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

__all__ = ["Missing", "missing_files"]

_IMPORT = re.compile(r"""(?:\bfrom|\bimport)\s*\(?\s*(["'])(\.{0,2}/[^"'\s]*)\1""")
"""A static or dynamic import of a relative module specifier (minified or not)."""

_LOAD = re.compile(r"""\b(fetch|new\s+(?:Shared)?Worker)\s*\(\s*(["'])([^"'\s]+)\2\s*[,)]""")
"""An address fetched or started as a worker, written whole as one literal (``fetch("wheels/" + name)``
is the manifest's to name)."""

_CSS_URL = re.compile(r"""url\(\s*(["']?)([^"')\s]+)\1\s*\)""")

_PYODIDE_NAME = re.compile(r"(?<![\w./-])[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.(?:mjs|wasm|zip|json)\b")
"""A file name Pyodide's loader appends to its ``indexURL``."""

_HTML_ATTRIBUTES = {"script": "src", "link": "href", "a": "href", "img": "src", "iframe": "src"}


class Missing(NamedTuple):
    """A file the page loads that the site lacks: ``name`` (relative to the site), loaded by ``by`` (``how``:
    "imports", "fetches", "names" ...)."""

    name: str
    by: str
    how: str

    def __str__(self) -> str:
        return f"{self.name} ({self.by} {self.how} it)"


class _Links(html.parser.HTMLParser):
    """The addresses of an HTML page's scripts, stylesheets, links, pictures and frames."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        wanted = _HTML_ATTRIBUTES.get(tag)
        for key, value in attrs:
            if key == wanted and value:
                how = {"script": "loads as a script", "link": "links", "a": "links"}.get(tag, "shows")
                self.found.append((value, how))


def _local(address: str, base: str) -> str | None:
    """The site-relative file an address names, resolved against ``base`` (a directory of the site, ``""``
    for the root); None for an address off the site, built at run time, or a bare module name."""
    if "${" in address or address.startswith("#"):
        return None
    parts = urlsplit(address)
    if parts.scheme or parts.netloc or not parts.path:
        return None
    path = parts.path if parts.path.startswith("/") else posixpath.join("/", base, parts.path)
    path = posixpath.normpath(path).lstrip("/")
    return None if path.startswith("..") else path


def _references(name: str, text: str) -> list[tuple[str | None, str]]:
    """The site-relative files that the file ``name`` (its ``text``) loads, each with how it loads them."""
    base = posixpath.dirname(name)
    suffix = posixpath.splitext(name)[1]
    found: list[tuple[str | None, str]] = []
    if suffix in (".html", ".htm"):
        links = _Links()
        links.feed(text)
        found += [(_local(address, base), how) for address, how in links.found]
    elif suffix in (".js", ".mjs"):
        found += [(_local(m.group(2), base), "imports") for m in _IMPORT.finditer(text)]
        for m in _LOAD.finditer(text):
            how = "fetches" if m.group(1) == "fetch" else "starts as a worker"
            found.append((_local(m.group(3), ""), how))
        if base == "pyodide" or base.startswith("pyodide/"):
            found += [(posixpath.join(base, n.group(0)), "names") for n in _PYODIDE_NAME.finditer(text)]
    elif suffix == ".css":
        found += [(_local(m.group(2), base), "uses") for m in _CSS_URL.finditer(text)]
    elif name == "manifest.json":
        manifest = json.loads(text)
        wheels = [manifest.get("micrograph"), *manifest.get("wheels", [])]
        found += [(f"wheels/{w}", "names") for w in wheels if isinstance(w, str)]
    return found


def missing_files(directory: str | os.PathLike[str], page: str = "index.html") -> list[Missing]:
    """Every file that the site's ``page`` loads, directly or through the files it loads, and that
    ``directory`` lacks, in the order they are found (breadth first from the page).

    Args:
        directory: a built site.
        page: the page the reading starts from, relative to ``directory``.

    Returns:
        The missing files (an empty list: the page has every file it asks for).
    """
    root = Path(directory)
    seen = {page}
    queue = deque([page])
    missing = [] if (root / page).is_file() else [Missing(page, "the site", "serves")]
    while queue:
        name = queue.popleft()
        path = root / name
        if not path.is_file() or path.suffix in (".wasm", ".zip", ".whl"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for target, how in _references(name, text):
            if target is None or target in seen:
                continue
            seen.add(target)
            if (root / target).is_file():
                queue.append(target)
            else:
                missing.append(Missing(target, name, how))
    return missing
