"""The shell of every HTML page micrograph writes: the step-through page, the explorer, the tour's pages.

Every page inlines its scripts and style and loads nothing from the network; each ``<script>`` is admitted
by its SHA-256 digest in a Content-Security-Policy, so no other script (a label typed as ``<script>``, an
injected handler, a script file beside the page) can run. Scripts are inlined rather than loaded from a
file: a page opened from disk has a ``file:`` address, where Chromium's ``'self'`` admits every file of
the disk, and a file's digest (``integrity``) is refused there (it needs CORS), so only an inline script
can be admitted alone.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Sequence

__all__ = ["html_page", "content_security_policy"]

_END_TAG = re.compile(r"</script", re.I)


def _digest(script: str) -> str:
    return base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")


def content_security_policy(*scripts: str, local_images: bool = False) -> str:
    """The policy of a micrograph page: no network, inline style, and only ``scripts`` may run (none: no
    script at all); images are ``data:`` addresses, or also files beside the page with ``local_images``."""
    allowed = " ".join(f"'sha256-{_digest(s)}'" for s in scripts) or "'none'"
    images = "'self' data:" if local_images else "data:"
    return f"default-src 'none'; style-src 'unsafe-inline'; img-src {images}; script-src {allowed}"


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
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{css}</style></head>\n"
        f"<body{attrs}>{body}{tags}\n</body></html>\n"
    )
