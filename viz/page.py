"""The shell of micrograph's self-contained HTML pages: the step-through page and the explorer.

Both pages inline everything (drawings, style, script) and load nothing from the network; their one
``<script>`` is admitted by its SHA-256 digest in a Content-Security-Policy, so no other script (a label
typed as ``<script>``, an injected handler) can run.
"""

from __future__ import annotations

import base64
import hashlib
import html

__all__ = ["html_page", "content_security_policy"]


def content_security_policy(script: str) -> str:
    """The policy of a micrograph page: no network, inline style, and only ``script`` may run."""
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{digest}'"


def html_page(*, title: str, css: str, body: str, script: str, body_attrs: str = "") -> str:
    """One self-contained HTML page.

    Args:
        title: the page's title (plain text; escaped here).
        css: the stylesheet, inlined.
        body: the body's HTML (already escaped by the caller).
        script: the one script, inlined at the end of the body and admitted by its digest.
        body_attrs: attributes of ``<body>`` (HTML, e.g. ``data-frame="1"``).

    Returns:
        The page's text, ending with a newline.
    """
    attrs = f" {body_attrs}" if body_attrs else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy(script)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{css}</style></head>\n"
        f"<body{attrs}>{body}\n<script>{script}</script>\n</body></html>\n"
    )
