"""The shell of every HTML page micrograph writes: the step-through page, the explorer, the tour's pages.

Every page inlines its scripts and style and loads nothing from the network; each ``<script>`` is admitted
by its SHA-256 digest in a Content-Security-Policy, so no other script (a label typed as ``<script>``, an
injected handler, a script file beside the page) can run. Scripts are inlined rather than loaded from a
file: a page opened from disk has a ``file:`` address, where Chromium's ``'self'`` admits every file of
the disk, and a file's digest (``integrity``) is refused there (it needs CORS), so only an inline script
can be admitted alone.

The site (``micrograph site``) is served, not opened from disk, and its page loads its scripts as files, so
its policy (:func:`site_policy`) admits ``'self'``. The explorer it shows is this module's page, made per
expression in the page's Python, so its digest is not known when the site is built; a document written into a
``srcdoc`` frame would inherit the site's policy and be refused. The site therefore shows it in a frame of its
own address (``explorer.html``, whose policy is :func:`frame_policy`), which writes the explorer's page into
itself: that page's own policy then admits its one script by digest, as everywhere else.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Sequence

__all__ = ["html_page", "content_security_policy", "site_policy", "frame_policy", "policy_element"]

_END_TAG = re.compile(r"</script", re.I)


def _digest(script: str) -> str:
    return base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")


_NOTHING = "default-src 'none'"
"""Nothing is loaded that a directive below does not name (a font, a plugin, a manifest, a frame ...)."""
_INLINE_STYLE = "'unsafe-inline'"
"""Style in ``<style>`` elements and ``style`` attributes: the pages' own, Graphviz's SVG, CodeMirror's."""
_CLOSED = "object-src 'none'; base-uri 'none'; form-action 'none'"
"""No plugin, no ``<base>`` that moves the page's relative addresses, no form sent anywhere (the site's forms
are read by its script)."""


def content_security_policy(*scripts: str, local_images: bool = False) -> str:
    """The policy of a micrograph page: no network, inline style, and only ``scripts`` may run (none: no
    script at all); images are ``data:`` addresses, or also files beside the page with ``local_images``."""
    allowed = " ".join(f"'sha256-{_digest(s)}'" for s in scripts) or "'none'"
    images = "'self' data:" if local_images else "data:"
    return f"{_NOTHING}; style-src {_INLINE_STYLE}; img-src {images}; script-src {allowed}"


def site_policy() -> str:
    """The policy of the site's page (``micrograph site``'s ``index.html``), served over HTTP.

    Scripts, module Web Workers, fetches and frames are the site's own files (``'self'``) only: no inline
    script, no ``eval`` and no ``'wasm-unsafe-eval'`` (the page's thread compiles no WebAssembly: Pyodide and
    Graphviz run in its workers, to which this policy does not pass), nothing from elsewhere; style is the
    site's stylesheet and inline style (CodeMirror's, the charts'); images are ``data:`` addresses.
    """
    return (
        f"{_NOTHING}; script-src 'self'; worker-src 'self'; connect-src 'self'; frame-src 'self'; "
        f"style-src 'self' {_INLINE_STYLE}; img-src data:; {_CLOSED}"
    )


def frame_policy() -> str:
    """The policy of the site's explorer frame (``explorer.html``) before it writes the explorer's page into
    itself: its own inline script, and whatever that page's own policy (:func:`content_security_policy`, which
    is enforced with this one) admits, that is only that page's script, by digest; no file, no network."""
    return f"{_NOTHING}; script-src 'unsafe-inline'; style-src {_INLINE_STYLE}; img-src data:; {_CLOSED}"


def policy_element(policy: str) -> str:
    """The ``<meta>`` element that puts ``policy`` (one of this module's, which hold no ``"``) in force in a
    page, early in its ``<head>``: it applies only to what follows it."""
    return f'<meta http-equiv="Content-Security-Policy" content="{policy}">'


def html_page(
    *,
    title: str,
    css: str,
    body: str,
    script: str | Sequence[str],
    body_attrs: str = "",
    local_images: bool = False,
) -> str:
    """One self-contained HTML page.

    Args:
        title: the page's title (plain text; escaped here).
        css: the stylesheet, inlined.
        body: the body's HTML (already escaped by the caller).
        script: the page's script, or its scripts in the order they run (none: a page without script),
            inlined at the end of the body, each admitted by its digest.
        body_attrs: attributes of ``<body>`` (HTML, e.g. ``data-frame="1"``).
        local_images: the page shows image files beside it (``<img src="step05.png">``).

    Returns:
        The page's text, ending with a newline.

    Raises:
        ValueError: a script holds ``</script``, which would end its element early.
    """
    scripts = (script,) if isinstance(script, str) else tuple(script)
    for s in scripts:
        if _END_TAG.search(s):
            raise ValueError("a page's script cannot hold '</script': it would end the script's element")
    policy = content_security_policy(*scripts, local_images=local_images)
    attrs = f" {body_attrs}" if body_attrs else ""
    tags = "".join(f"\n<script>{s}</script>" for s in scripts)
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8">{policy_element(policy)}'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{css}</style></head>\n"
        f"<body{attrs}>{body}{tags}\n</body></html>\n"
    )
