"""``micrograph site``: build the static site of the lessons and exercises, and serve it.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lessons.cli.common import Parser, UserError, force_option, integer, out_option

__all__ = ["add", "run"]


def add(si: Parser) -> None:
    """Declare ``site``'s arguments."""
    out_option(si, "the site's directory (default: site-out)", default="site-out")
    force_option(si, "replace a site built earlier in --out")
    si.add_argument("--serve", action="store_true", help="serve --out on localhost (built first if missing)")
    si.add_argument("--port", type=integer(0, 65535), default=8000, help="--serve's port (default 8000)")


def run(args: argparse.Namespace) -> int:
    """Build the site (unless --serve finds one already), then serve it with --serve; 0, or a UserError
    for a site that cannot be built or served, or an --out refused (as :func:`lessons.publish.site.build_site`
    says)."""
    from lessons.publish import site
    from lessons.publish.swap import SITE

    out = Path(args.out)
    try:
        if not (args.serve and (out / SITE.marker).is_file() and not args.force):
            size = site.build_site(out, force=args.force, log=lambda s: print(s, file=sys.stderr))
            print(f"wrote {out}: {size / (1 << 20):.1f} MiB (budget {site.BUDGET >> 20} MiB)")
        if args.serve:
            try:
                site.serve(out, args.port)
            except KeyboardInterrupt:
                pass
    except (site.SiteError, FileExistsError, FileNotFoundError, NotADirectoryError) as e:
        raise UserError(str(e)) from None
    return 0
