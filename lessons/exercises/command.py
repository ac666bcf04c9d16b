"""The ``micrograph exercise`` subcommand: ``list``, ``start NAME``, ``check FILE``, and the course tools.

Its parser is built here, beside its handler, and registered by :mod:`micrograph.cli`; the exercises
themselves are imported only when the subcommand runs, so ``micrograph --help`` does not load them. A usage
mistake raises :class:`UsageError`, which the command reports as one line with exit status 2.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "run", "UsageError", "FLOW", "FORMATS"]

FORMATS = ("text", "json", "gradescope", "prairielearn")
"""What ``check --format`` prints: the report for a terminal, its JSON, or a platform's results.json."""

FLOW = """\
The flow: list the exercises, start one (a template NAME.py with the book's pseudo-code and TODOs is
written into the current directory, never over an existing file), fill in the TODOs, check it. The check
runs your code, in a separate process that cannot reach micrograph's own algorithms, on graphs chosen to
catch the real mistakes and on random ones from a seed; every case is scored. At the first failure it names
the wrong node, the expected and actual values, the term of the sum that differs, a hint with the book's
sentence, and writes a drawing of the failure next to your file (NAME.failure.svg). Your latest verdicts
are kept in .micrograph-progress.json in the current directory (a record for you, not a grade).

  micrograph exercise list
  micrograph exercise start backprop
  micrograph exercise check backprop.py                        # exit 0: every case passed, 1: one failed
  micrograph exercise check backprop.py --seed 7               # other random cases
  micrograph exercise check backprop.py --format gradescope    # Gradescope's results.json (also json,
                                                               # prairielearn)
"""


class UsageError(Exception):
    """A mistake in the command line (reported as one line, exit status 2)."""


def _number(name: str, low: float, high: float) -> Any:
    """An argparse type: a finite number of seconds in (low, high]."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number of seconds, got {text!r}") from None
        if not (math.isfinite(value) and low < value <= high):
            raise argparse.ArgumentTypeError(
                f"{name} must be more than {low:g} and at most {high:g} s, got {text}"
            )
        return value

    return parse


def _integer(name: str, low: int, high: int) -> Any:
    """An argparse type: an integer in [low, high] (ASCII digits only)."""

    def parse(text: str) -> int:
        if not (text.isascii() and text.strip().lstrip("-").isdigit()):
            raise argparse.ArgumentTypeError(f"{name} must be a whole number, got {text!r}")
        value = int(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{name} must be from {low:,} to {high:,}, got {text}")
        return value

    return parse


def add_parser(sub: Any, parser_class: type[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add ``exercise`` and its actions to the command's subparsers; returns the ``exercise`` parser."""
    ex = sub.add_parser(
        "exercise",
        help="exercises: write the book's algorithms yourself and have them checked",
        description="Exercises for section 6.5: you write the book's algorithms (local derivatives, the "
        "topological order, Algorithms 6.1, 6.2, 6.4 and 6.6, the naive chain rule), micrograph checks them.",
        epilog=FLOW,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = ex.add_subparsers(dest="action", metavar="ACTION", parser_class=parser_class)
    actions.add_parser("list", help="the exercises, the book's algorithm each covers, your latest verdicts")
    start = actions.add_parser("start", help="write the template NAME.py (never overwrites)")
    start.add_argument("name", metavar="NAME", help="the exercise (see: micrograph exercise list)")
    start.add_argument("--dir", default=".", help="the directory to write it into (default: here)")
    check = actions.add_parser(
        "check",
        help="check FILE; exit 0 when every case passes, 1 otherwise",
        description="Check your solution against micrograph's engine, case by case. Exit status: 0 every "
        "case passed, 1 a case failed (the report says where and why), 2 a usage error. A drawing of the "
        "first failure is written next to FILE as FILE's name with .failure.svg.",
    )
    check.add_argument("file", metavar="FILE", help="your solution, e.g. backprop.py")
    how = check.add_mutually_exclusive_group()
    how.add_argument("--format", choices=FORMATS, default="text", help="what to print (default: text)")
    how.add_argument("--json", action="store_true", help="the same as --format json")
    check.add_argument(
        "--seed",
        type=_integer("--seed", 0, 2**31 - 1),
        default=0,
        help="the seed of the random cases (default 0; the report prints it)",
    )
    check.add_argument(
        "--no-progress", action="store_true", help="do not record the verdict in .micrograph-progress.json"
    )
    check.add_argument("--exercise", metavar="NAME", help="which exercise FILE is (default: from FILE)")
    check.add_argument(
        "--time-limit",
        type=_number("--time-limit", 0, 3600),
        metavar="S",
        help="CPU seconds one case may use (default: 3)",
    )
    check.add_argument(
        "--wall-limit",
        type=_number("--wall-limit", 0, 86400),
        metavar="S",
        help="wall-clock seconds for the whole check (default: 120)",
    )
    check.add_argument(
        "--memory-limit",
        type=_integer("--memory-limit", 64, 1 << 20),
        metavar="MIB",
        help="MiB of memory the solution may use (default: 1024)",
    )
    _add_course(actions)
    return ex


def _add_course(actions: Any) -> None:
    """The course tools: the autograder's files, the class report (their heavy imports run only when used)."""
    import lessons.exercises.course_cli as course_cli

    course_cli.add_autograder_parser(actions)
    course_cli.add_report_parser(actions)
    actions.choices["autograder"].set_defaults(course_handler=course_cli.run_autograder_command)
    actions.choices["report"].set_defaults(course_handler=course_cli.run_report_command)


def _exercise_of(path: Path, given: str | None, names: Any) -> str:
    """The exercise a file is: --exercise, else its marker line, else its name (backprop.py)."""
    if given is not None:
        if given not in names:
            raise UsageError(f"there is no exercise {given!r}; the exercises are {', '.join(names)}")
        return given
    try:
        head = path.read_text(encoding="utf-8", errors="replace").splitlines()[:5]
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror or e}") from None
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

    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"no file {args.file!r} to check")
    name = _exercise_of(path, args.exercise, exercises.EXERCISES)
    kw: dict[str, Any] = {"seed": args.seed}
    if args.time_limit is not None:
        kw["time_limit"] = args.time_limit
    if args.wall_limit is not None:
        kw["wall_limit"] = args.wall_limit
    if args.memory_limit is not None:
        kw["memory_limit"] = args.memory_limit << 20
    report = exercises.check(
        name, path, record=not args.no_progress, **kw
    )  # a failure's drawing: next to FILE
    print(_printed(report, "json" if args.json else args.format, platforms))
    return 0 if report.passed else 1


def run(args: argparse.Namespace) -> int:
    """Run ``micrograph exercise ACTION``; the exit status (0, 1 for a failed check)."""
    from lessons import exercises

    if args.action == "list":
        print(exercises.list())
        return 0
    if args.action == "start":
        return _start(args)
    if args.action == "check":
        return _check(args)
    handler = getattr(args, "course_handler", None)
    if handler is None:
        raise UsageError(f"unknown action {args.action!r}")
    return int(handler(args))
