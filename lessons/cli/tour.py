"""``micrograph tour``: every lesson, picture and page into one directory, with an index.html.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
from pathlib import Path

from lessons.cli.common import Parser, UserError, force_option, out_option, quiet_option

__all__ = ["add", "run"]


def _lesson_list(text: str) -> list[int]:
    try:
        return [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected lesson numbers such as 1,2,6, got {text!r}") from None


def add(t: Parser) -> None:
    """Declare ``tour``'s arguments."""
    out_option(t, "output directory (created if missing, in an existing one; default: out)", default="out")
    force_option(t, "replace an earlier tour in --out (never files the tour did not write)")
    t.add_argument(
        "--lessons",
        type=_lesson_list,
        default=None,
        metavar="N,N,...",
        help="only these lessons (default: all)",
    )
    quiet_option(t)


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
    print(f"Start here: {out / tour.INDEX} (open it in a browser: it links every picture)")
    if result.left:
        said = f"Not written here, for want of what each needs: {'; '.join(result.left)}."
        print(textwrap.fill(said, width=79, break_long_words=False, break_on_hyphens=False))
    return 0
