"""The course commands of ``micrograph exercise``: ``autograder`` and ``report``.

::

    micrograph exercise autograder NAME --platform {gradescope,prairielearn} --out DIR [--seed N] [--force]
    micrograph exercise report RESULTS... [--chart FILE.png] [--force]

Each subcommand is a pair: ``add_*_parser(subparsers)`` adds its parser to the ``exercise`` command's
subparsers, and ``run_*_command(args)`` runs it and returns the exit status: 0 done, 2 bad input (one line
on stderr, ``micrograph: error: ...``, never a traceback).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from lessons.exercises import EXERCISES
from lessons.exercises.platforms import PLATFORMS

__all__ = ["add_autograder_parser", "run_autograder_command", "add_report_parser", "run_report_command"]

PROG = "micrograph"

_AUTOGRADER_EPILOG = """\
Gradescope: upload DIR/autograder.zip on the assignment's "Configure Autograder" page (base image
Ubuntu 22.04 or later). Students submit NAME.py; each submission is checked with the seed given here
(vary it to grade with random cases the students have not seen) and scored case by case.
PrairieLearn: DIR/README.md says where the grading script, the Dockerfile and the info.json options go.

  micrograph exercise autograder backprop --platform gradescope --out autograder/
  micrograph exercise autograder backprop --platform prairielearn --out pl/ --seed 7
"""

_REPORT_EPILOG = """\
RESULTS are the files a check writes (micrograph exercise check FILE --format json > alice.json) or the
results.json files of Gradescope or PrairieLearn written by micrograph's autograder, or directories
holding them (every *.json inside is read). Files that are not micrograph results are skipped, each with
a note.

  micrograph exercise report results/ --chart class.png
"""


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value


def add_autograder_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``autograder`` to the ``exercise`` command's subparsers; return its parser."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "autograder",
        help="write what a teacher uploads to grade an exercise on Gradescope or PrairieLearn",
        description="Write the autograder of exercise NAME for a course platform into DIR: for Gradescope "
        "setup.sh, run_autograder, micrograph's wheel and autograder.zip; for PrairieLearn the grading "
        "script, a Dockerfile, the wheel and a README. Existing files are kept unless --force.",
        epilog=_AUTOGRADER_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("name", metavar="NAME", help=f"the exercise: {', '.join(EXERCISES)}")
    p.add_argument("--platform", required=True, choices=PLATFORMS, help="the course platform")
    p.add_argument(
        "--out", required=True, metavar="DIR", help="the directory to write into (made if missing)"
    )
    p.add_argument(
        "--seed", type=_seed, default=0, metavar="N", help="the seed of the check's random cases (default: 0)"
    )
    p.add_argument("--force", action="store_true", help="replace files that exist in DIR")
    return p


def _error(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2


def run_autograder_command(args: argparse.Namespace) -> int:
    """Run ``micrograph exercise autograder``: 0 written, 2 bad input (one line on stderr)."""
    from lessons.exercises.autograder import AutograderError, write_autograder

    if args.name not in EXERCISES:
        return _error(f"there is no exercise {args.name!r}; the exercises are {', '.join(EXERCISES)}")
    out = Path(args.out)
    try:
        written = write_autograder(args.name, args.platform, out, force=args.force, seed=args.seed)
    except FileExistsError as e:
        return _error(f"{e}; use --force to replace them")
    except (ValueError, NotADirectoryError, AutograderError) as e:
        return _error(str(e))
    except OSError as e:
        where = f" {e.filename}" if e.filename else ""
        return _error(f"cannot write{where}: {e.strerror or e}")
    for path in written:
        print(f"wrote {path}")
    if args.platform == "gradescope":
        print(f"Upload {out / 'autograder.zip'} on Gradescope's Configure Autograder page (Ubuntu 22.04")
        print(f"or later); students submit {args.name}.py; the random cases use seed {args.seed}.")
    else:
        print(f"Next: {out / 'README.md'} says where each file goes in your PrairieLearn course.")
    return 0


def add_report_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``report`` to the ``exercise`` command's subparsers; return its parser."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "report",
        help="summarise a class: pass rates per exercise, the most common recognised mistakes",
        description="Summarise many students' results: per exercise the students, pass rate and mean "
        "score, and the most common recognised mistakes with the checker's hint (a table; a bar chart "
        "with --chart).",
        epilog=_REPORT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("results", nargs="+", metavar="RESULTS", help="result files or directories of them")
    p.add_argument("--chart", metavar="FILE.png", help="also draw the pass rates and mistakes as bars")
    p.add_argument("--force", action="store_true", help="replace the chart's file if it exists")
    return p


def run_report_command(args: argparse.Namespace) -> int:
    """Run ``micrograph exercise report``: 0 reported, 2 bad input (one line on stderr)."""
    from lessons.exercises.classreport import summarise

    missing = [r for r in args.results if not Path(r).exists()]
    if missing:
        return _error(f"no file or directory {missing[0]!r}")
    chart = Path(args.chart) if args.chart else None
    if chart is not None:
        if chart.suffix.lower() not in (".png", ".svg", ".pdf"):
            return _error(f"--chart {args.chart!r}: give a file name ending in .png (or .svg, .pdf)")
        if (chart.exists() or chart.is_symlink()) and not args.force:
            return _error(f"{chart} exists; use --force to replace it")
    summary = summarise(args.results)
    if not summary.results:
        first = f" ({summary.notes[0]})" if summary.notes else ""
        return _error(f"no micrograph result among the files given{first}")
    print(summary.text())
    if chart is not None:
        try:
            summary.bar_chart(chart, overwrite=args.force)
        except (ValueError, FileExistsError) as e:
            return _error(str(e))
        except OSError as e:
            return _error(f"cannot write {chart}: {e.strerror or e}")
        print(f"wrote {chart}")
    return 0
