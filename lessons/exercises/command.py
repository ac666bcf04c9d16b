"""What ``micrograph exercise`` does: ``list``, ``start NAME``, ``check FILE``, and the course tools.

:mod:`micrograph.cli` builds the subcommand's arguments (without importing the exercises, so ``--help``
stays cheap) and calls :func:`run`. A usage mistake raises :class:`UsageError`, which the command reports as
one line with exit status 2.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["run", "UsageError", "FORMATS"]

FORMATS = ("text", "json", "gradescope", "prairielearn")
"""What ``check --format`` prints: the report for a terminal, its JSON, or a platform's results.json."""


class UsageError(Exception):
    """A mistake in the command line (reported as one line, exit status 2)."""


def _exercise_of(path: Path, given: str | None, names: Any) -> str:
    """The exercise a file is: --exercise, else its marker line, else its name (backprop.py)."""
    if given is not None:
        if given not in names:
            raise UsageError(f"there is no exercise {given!r}; the exercises are {', '.join(names)}")
        return given
    from lessons.exercises.source import read_submission

    try:
        head = read_submission(path).splitlines()[:5]
    except (OSError, ValueError) as e:
        raise UsageError(str(e)) from None
    for line in head:
        if line.startswith("# micrograph exercise:"):
            name = line.split(":", 1)[1].strip()
            if name in names:
                return name
    if path.stem in names:
        return path.stem
    raise UsageError(
        f"cannot tell which exercise {path} is: name it after one ({', '.join(names)}), keep the template's "
        "first line, or pass --exercise NAME"
    )


def _start(args: argparse.Namespace) -> int:
    from lessons import exercises

    if args.name not in exercises.EXERCISES:
        raise UsageError(
            f"there is no exercise {args.name!r}; the exercises are {', '.join(exercises.EXERCISES)}"
        )
    target = Path(args.dir)
    if not target.is_dir():
        raise UsageError(f"{args.dir!r} is not a directory")
    try:
        path = exercises.start(args.name, target)
    except FileExistsError:
        raise UsageError(
            f"{target / (args.name + '.py')} exists; not overwriting it (move it away to start again)"
        ) from None
    except OSError as e:
        raise UsageError(f"cannot write into {args.dir!r}: {e.strerror or e}") from None
    print(f"wrote {path}: fill in the TODOs, then run  micrograph exercise check {path}")
    return 0


def _printed(report: Any, fmt: str, platforms: Any) -> str:
    if fmt == "text":
        return str(report.text())
    if fmt == "json":
        return str(report.to_json())
    import json

    svg = report.failure.svg if report.failure is not None else None
    convert = platforms.to_gradescope if fmt == "gradescope" else platforms.to_prairielearn
    return json.dumps(convert(report.as_dict(), svg), indent=2, ensure_ascii=False)


def _check(args: argparse.Namespace) -> int:
    import lessons.exercises.platforms as platforms  # loaded before any solution runs
    from lessons import exercises
    from lessons.exercises.limits import IsolationError

    path = Path(args.file)
    if path.is_symlink():
        raise UsageError(f"{args.file} is a symlink; the check reads only a file itself")
    if not path.is_file():
        raise UsageError(f"no file {args.file!r} to check")
    name = _exercise_of(path, args.exercise, exercises.EXERCISES)
    kw: dict[str, Any] = {"seed": args.seed}
    if args.time_limit is not None:
        kw["time_limit"] = args.time_limit
    if args.wall_limit is not None:
        kw["wall_limit"] = args.wall_limit
    if args.budget is not None:
        kw["budget"] = args.budget
    if args.memory_limit is not None:
        kw["memory_limit"] = args.memory_limit << 20
    try:
        report = exercises.check(name, path, record=not args.no_progress, **kw)  # its drawing: next to FILE
    except IsolationError as e:
        raise UsageError(f"cannot check {args.file}: {e}") from None
    except (FileNotFoundError, ValueError) as e:
        raise UsageError(str(e)) from None
    fmt = "json" if args.json else args.format
    print(_printed(report, fmt, platforms), flush=True)
    if report.record_note and fmt != "text":  # the text ends with it; JSON on stdout stays JSON
        print(f"micrograph: your verdict was not recorded: {report.record_note}", file=sys.stderr)
    return 0 if report.passed else 1


def run(args: argparse.Namespace) -> int:
    """Run ``micrograph exercise ACTION``; the exit status (0, 1 for a failed check).

    Raises:
        UsageError: a mistake in the command line, or a progress file that ``list`` cannot read.
    """
    from lessons import exercises

    if args.action == "list":
        from lessons.exercises.progress import ProgressError

        try:
            print(exercises.list())
        except ProgressError as e:
            raise UsageError(str(e)) from None
        return 0
    if args.action == "start":
        return _start(args)
    if args.action == "check":
        return _check(args)
    import lessons.exercises.course_cli as course_cli

    if args.action == "autograder":
        return course_cli.run_autograder_command(args)
    return course_cli.run_report_command(args)
