"""``micrograph tour``: every lesson, picture and page into one directory, with an index.html.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from lessons.cli.common import UserError, path

__all__ = ["add", "run"]


def _lesson_list(text: str) -> list[int]:
    try:
        return [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected lesson numbers such as 1,2,6, got {text!r}") from None


def add(sub: Any) -> None:
    """Declare ``tour`` and its arguments."""
    t = sub.add_parser(
        "tour",
        help="run every lesson and write all diagrams, plots and an index.html",
        description="Run every lesson's steps and write each diagram (SVG), the plots (PNG), "
        "the step-through HTML pages and an index.html that links them all.",
    )
    t.add_argument(
        "--out",
        default="out",
        type=path,
        help="output directory (created if missing, in an existing one; default: out)",
    )
    t.add_argument(
        "--force",
        action="store_true",
        help="replace an earlier tour in --out (never files the tour did not write)",
    )
    t.add_argument(
        "--lessons",
        type=_lesson_list,
        default=None,
        metavar="N,N,...",
        help="only these lessons (default: all)",
    )
    t.add_argument("--quiet", action="store_true", help="no progress bar (shown on a terminal only)")


def run(args: argparse.Namespace) -> int:
    """Run the tour into ``--out``; 0, or a UserError for an unknown lesson or an output refused."""
    import lessons
    from lessons.publish import tour

    if args.lessons == []:
        raise UserError(
            f"--lessons: no lesson given; give numbers such as 1,2,6 (the lessons are "
            f"{', '.join(map(str, lessons.LESSONS))})"
        )
    bad = [n for n in (args.lessons or []) if n not in lessons.LESSONS]
    if bad:
        raise UserError(
            f"--lessons: there is no lesson {bad[0]}; the lessons are {', '.join(map(str, lessons.LESSONS))}"
        )
    out = Path(args.out)
    t0 = time.perf_counter()
    try:
        result = tour.run(
            out, progress=not args.quiet and sys.stderr.isatty(), only=args.lessons, replace=args.force
        )
    except (FileExistsError, FileNotFoundError, NotADirectoryError) as e:
        raise UserError(str(e)) from None
    seconds = time.perf_counter() - t0
    print(
        f"The tour ran {result.lessons} lessons, {result.steps} steps, in {seconds:.1f} s and wrote "
        f"{len(result.files)} files to {out}/."
    )
    print(f"Start here: {out / tour.INDEX}   (open it in a browser; every picture is linked from it)")
    return 0
