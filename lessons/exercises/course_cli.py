"""The course commands of ``micrograph exercise``: ``autograder`` and ``report``.

::

    micrograph exercise autograder NAME --platform {gradescope,prairielearn} --out DIR [--seed N]
                                   [--secret-file PATH] [--force]
    micrograph exercise report RESULTS... [--chart FILE.png] [--force]

:mod:`micrograph.cli` builds their arguments; ``run_*_command(args)`` runs one and returns the exit status:
0 done, 2 bad input (one line on stderr, ``micrograph: error: ...``, never a traceback).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lessons.exercises import EXERCISES

__all__ = ["run_autograder_command", "run_report_command"]

PROG = "micrograph"


def _error(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2


def run_autograder_command(args: argparse.Namespace) -> int:
    """Run ``micrograph exercise autograder``: 0 written, 2 bad input (one line on stderr)."""
    from lessons.exercises.autograder import AutograderError, autograder_secret, write_autograder
    from lessons.exercises.grading import SECRET_FILE

    if args.name not in EXERCISES:
        return _error(f"there is no exercise {args.name!r}; the exercises are {', '.join(EXERCISES)}")
    out = Path(args.out)
    secret_file = args.secret_file
    try:
        secret, whence = autograder_secret(out, secret_file, args.force)
    except OSError as e:
        where = f"--secret-file {secret_file}" if secret_file else f"cannot read {out / SECRET_FILE}"
        return _error(f"{where}: {e.strerror or e}")
    except ValueError as e:
        return _error(
            f"--secret-file {secret_file}: {e}" if secret_file else f"{e}; remove it to make a new one"
        )
    try:
        written = write_autograder(
            args.name, args.platform, out, force=args.force, seed=args.seed, secret=secret
        )
    except FileExistsError as e:
        return _error(f"{e}; use --force to replace them")
    except (ValueError, NotADirectoryError, AutograderError) as e:
        return _error(str(e))
    except OSError as e:
        where = f" {e.filename}" if e.filename else ""
        return _error(f"cannot write{where}: {e.strerror or e}")
    for path in written:
        print(f"wrote {path}")
    print(
        f"The secret each student's cases come from is in {out / SECRET_FILE} ({whence}); keep it private. "
        f"To write this autograder again with the same cases: --secret-file {out / SECRET_FILE}."
    )
    if args.platform == "gradescope":
        print(f"Upload {out / 'autograder.zip'} on Gradescope's Configure Autograder page (Ubuntu 22.04")
        print(
            f"or later); students submit {args.name}.py; each student's random cases come from their own "
            f"seed (the fixed seed {args.seed} where no student identity is found)."
        )
    else:
        print(f"Next: {out / 'README.md'} says where each file goes in your PrairieLearn course.")
    return 0


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
