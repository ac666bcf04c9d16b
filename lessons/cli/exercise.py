"""``micrograph exercise``: ``list``, ``start NAME``, ``check FILE``, and the course tools ``autograder NAME``
and ``report RESULTS...``.

::

    micrograph exercise list
    micrograph exercise start backprop
    micrograph exercise check backprop.py [--format {text,json,gradescope,prairielearn}] [--seed N]
    micrograph exercise autograder NAME --platform {gradescope,prairielearn} --out DIR [--seed N]
                                   [--secret-file PATH] [--force]
    micrograph exercise report RESULTS... [--chart FILE.png] [--force]

The arguments and what the command prints are here; the work is done by the library, called with plain
arguments (:mod:`lessons.exercises`: ``list``, ``start``, ``check``, ``exercise_of``;
:mod:`lessons.exercises.autograder`; :mod:`lessons.exercises.classreport`). Exit status: 0 done (a check:
every case passed), 1 a check that failed, 2 a usage error (one line on stderr, never a traceback).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import Any

from lessons.cli.common import (
    Command,
    Parser,
    UserError,
    add_command,
    force_option,
    integer,
    out_option,
    output_file,
    path,
    seconds_option,
    seed_option,
)

__all__ = ["add", "run", "FLOW", "ACTIONS", "FORMATS", "PLATFORMS", "ProseAndExamples"]

FORMATS = ("text", "json", "gradescope", "prairielearn")
"""What ``check --format`` prints: the report for a terminal, its JSON, or a platform's results.json."""

PLATFORMS = ("gradescope", "prairielearn")
"""The course platforms ``autograder --platform`` writes for."""


class ProseAndExamples(argparse.RawDescriptionHelpFormatter):
    """A description or epilog of paragraphs: a paragraph of prose is reflowed to the terminal's width, as
    argparse's own formatter does; a paragraph of indented lines (examples of commands) is kept as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = []
        for block in text.strip("\n").split("\n\n"):
            lines = block.splitlines()
            if any(line.startswith(" ") for line in lines):
                paragraphs.append("\n".join(indent + line for line in lines))
            else:
                words = " ".join(lines)
                paragraphs.append(
                    textwrap.fill(words, width, initial_indent=indent, subsequent_indent=indent)
                )
        return "\n\n".join(paragraphs)


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
  micrograph exercise check backprop.py      # exit 0: all passed, 1: one failed
  micrograph exercise check backprop.py --seed 7           # other random cases
  micrograph exercise check backprop.py --format gradescope          # or json
  micrograph exercise autograder backprop --platform gradescope --out ag/
  micrograph exercise report results/ --chart class.png    # a class's results
"""

_AUTOGRADER_EPILOG = """\
Gradescope: upload DIR/autograder.zip on the assignment's "Configure Autograder" page (base image
Ubuntu 22.04 or later). Students submit NAME.py; each submission is scored case by case, its random cases
drawn from a seed of the student's own: HMAC-SHA256 of a secret (DIR/micrograph_secret, keep it private)
and the student's Gradescope id. The results name the seed; micrograph exercise check NAME.py --seed N
re-runs a student's check. --seed is used where no student identity is found.
PrairieLearn: DIR/README.md says where the grading script, the secret, the Dockerfile and the info.json
options go (PrairieLearn gives no identity: the student's variant of the question stands for it).

  micrograph exercise autograder backprop --platform gradescope --out ag/
  micrograph exercise autograder backprop --platform prairielearn --out pl/
"""

_REPORT_EPILOG = """\
RESULTS are the files a check writes (micrograph exercise check FILE --format json > alice.json) or the
results.json files of Gradescope or PrairieLearn written by micrograph's autograder, or directories
holding them (every *.json inside is read). Files that are not micrograph results are skipped, each with
a note.

  micrograph exercise report results/ --chart class.png
"""


# --- the arguments --------------------------------------------------------------------------------------


def add(ex: Parser) -> None:
    """Declare ``exercise``'s actions, each with its arguments."""
    actions = ex.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    actions.add_parser("list", help="the exercises, the book's algorithm each covers, your latest verdicts")
    start = actions.add_parser("start", help="write the template NAME.py (never overwrites)")
    start.add_argument("name", metavar="NAME", help="the exercise (see: micrograph exercise list)")
    start.add_argument("--dir", default=".", help="the directory to write it into (default: here)")
    for name, command in ACTIONS.items():
        add_command(actions, name, command)
    ex.set_defaults(exercise_parser=ex)


def _add_check(check: Parser) -> None:
    """Declare ``exercise check``'s arguments."""
    check.add_argument("file", metavar="FILE", help="your solution, e.g. backprop.py")
    how = check.add_mutually_exclusive_group()
    how.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        metavar="FORMAT",
        help=f"what to print: {', '.join(FORMATS[:-1])} or {FORMATS[-1]} (default: text)",
    )
    how.add_argument("--json", action="store_true", help="the same as --format json")
    seed_option(check, 2**31 - 1, "the seed of the random cases (default 0; the report prints it)")
    check.add_argument(
        "--no-progress", action="store_true", help="do not record the verdict in .micrograph-progress.json"
    )
    check.add_argument("--exercise", metavar="NAME", help="which exercise FILE is (default: from FILE)")
    seconds_option(
        check,
        "--time-limit",
        3600,
        "the most CPU seconds a case may use; each case has its own limit, at most this (default: 3)",
    )
    seconds_option(
        check,
        "--budget",
        86400,
        "seconds of CPU time and waiting for the whole check; the cases left when it is spent are not "
        "run (default: 15)",
    )
    seconds_option(check, "--wall-limit", 86400, "wall-clock seconds for the whole check (default: 90)")
    check.add_argument(
        "--memory-limit",
        type=integer(64, 1 << 20),
        metavar="MIB",
        help="MiB of memory the solution may use (default: 1024)",
    )


def _add_autograder(grader: Parser) -> None:
    """Declare ``exercise autograder``'s arguments."""
    grader.add_argument("name", metavar="NAME", help="the exercise (see: micrograph exercise list)")
    grader.add_argument("--platform", required=True, choices=PLATFORMS, help="the course platform")
    out_option(grader, "the directory to write", required=True, metavar="DIR")
    seed_option(
        grader,
        2**31 - 1,
        "the fixed seed of the random cases, used where the platform gives no student identity (default 0)",
    )
    grader.add_argument(
        "--secret-file",
        type=path,
        metavar="PATH",
        help="the secret each student's cases are derived from (at least 16 characters); default: the one "
        "already in DIR with --force, else a new random one written to DIR/micrograph_secret",
    )
    force_option(grader, "replace files that exist in DIR")


def _add_report(report: Parser) -> None:
    """Declare ``exercise report``'s arguments."""
    report.add_argument("results", nargs="+", metavar="RESULTS", help="result files or directories of them")
    report.add_argument(
        "--chart", type=path, metavar="FILE.png", help="also draw the pass rates and mistakes as bars"
    )
    force_option(report, "replace the chart's file if it exists")


# --- the actions ----------------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    """Run ``micrograph exercise ACTION``: the exit status (0, 1 for a failed check).

    Raises:
        UserError: a mistake in the command line, or a file that cannot be read or written.
    """
    if args.action is None:
        args.exercise_parser.print_help()
        return 0
    if args.action == "list":
        return _list()
    if args.action == "start":
        return _start(args.name, args.dir)
    return ACTIONS[args.action].run(args)


def _unknown(name: str) -> UserError:
    from lessons.exercises import EXERCISES

    return UserError(f"there is no exercise {name!r}; the exercises are {', '.join(EXERCISES)}")


def _list() -> int:
    from lessons import exercises
    from lessons.exercises.progress import ProgressError

    try:
        print(exercises.list())
    except ProgressError as e:
        raise UserError(str(e)) from None
    return 0


def _start(name: str, directory: str) -> int:
    from lessons import exercises

    if name not in exercises.EXERCISES:
        raise _unknown(name)
    target = Path(directory)
    if not target.is_dir():
        raise UserError(f"{directory!r} is not a directory")
    try:
        written = exercises.start(name, target)  # created exclusively: never over the student's file
    except FileExistsError:
        raise UserError(
            f"{target / (name + '.py')} exists; not overwriting it (move it away to start again)"
        ) from None
    except OSError as e:
        raise UserError(f"cannot write into {directory!r}: {e.strerror or e}") from None
    print(f"wrote {written}: fill in the TODOs, then run  micrograph exercise check {written}")
    return 0


def _which(file: str, given: str | None) -> str:
    """The exercise FILE is: --exercise, else the library's reading of the file (marker line, name)."""
    from lessons import exercises

    if given is not None:
        if given not in exercises.EXERCISES:
            raise _unknown(given)
        return given
    try:
        name = exercises.exercise_of(file)
    except (OSError, ValueError) as e:
        raise UserError(str(e)) from None
    if name is None:
        raise UserError(
            f"cannot tell which exercise {file} is: name it after one ({', '.join(exercises.EXERCISES)}), "
            "keep the template's first line, or pass --exercise NAME"
        )
    return name


def _check(args: argparse.Namespace) -> int:
    import lessons.exercises.platforms as platforms  # loaded before any solution runs
    from lessons import exercises
    from lessons.exercises.limits import IsolationError

    p = Path(args.file)
    if p.is_symlink():
        raise UserError(f"{args.file} is a symlink; the check reads only a file itself")
    if p.is_dir():
        raise UserError(f"{args.file!r} is a directory; name the solution's file in it (NAME.py)")
    if not p.is_file():
        raise UserError(f"no file {args.file!r} to check")
    name = _which(args.file, args.exercise)
    limits: dict[str, Any] = {
        "time_limit": args.time_limit,
        "wall_limit": args.wall_limit,
        "budget": args.budget,
        "memory_limit": None if args.memory_limit is None else args.memory_limit << 20,
    }
    given = {k: v for k, v in limits.items() if v is not None}  # the library's defaults otherwise
    fmt = "json" if args.json else args.format
    try:  # a result in a grading format is made only where the solution is enclosed
        report = exercises.check(
            name, p, seed=args.seed, record=not args.no_progress, isolated=fmt != "text", **given
        )
    except IsolationError as e:
        raise UserError(f"cannot check {args.file}: {e}") from None
    except (FileNotFoundError, ValueError) as e:
        raise UserError(str(e)) from None
    print(_printed(report, fmt, platforms), flush=True)
    if report.record_note and fmt != "text":  # the text ends with it; JSON on stdout stays JSON
        print(f"micrograph: your verdict was not recorded: {report.record_note}", file=sys.stderr)
    return 0 if report.passed else 1


def _printed(report: Any, fmt: str, platforms: Any) -> str:
    """The report as ``--format`` asks: its text, its JSON, or a platform's results.json."""
    if fmt == "text":
        return str(report.text())
    if fmt == "json":
        return str(report.to_json())
    from lessons.exercises.report import json_text

    svg = report.failure.svg if report.failure is not None else None
    convert = platforms.to_gradescope if fmt == "gradescope" else platforms.to_prairielearn
    return json_text(convert(report.as_dict(), svg))


def _autograder(args: argparse.Namespace) -> int:
    """Write the autograder and say what to do with it; each file created exclusively unless --force."""
    name, seed, secret_file, force = args.name, args.seed, args.secret_file, args.force
    from lessons.exercises import EXERCISES
    from lessons.exercises.autograder import AutograderError, autograder_secret, write_autograder
    from lessons.exercises.grading import SECRET_FILE

    if name not in EXERCISES:
        raise _unknown(name)
    out = Path(args.out)
    if not out.is_dir() and not out.parent.is_dir():  # the directory is created, its parents are not
        raise UserError(f"cannot create {args.out!r}: the directory {str(out.parent)!r} does not exist")
    try:
        secret, whence = autograder_secret(out, secret_file, force)
    except OSError as e:
        where = f"--secret-file {secret_file}" if secret_file else f"cannot read {out / SECRET_FILE}"
        raise UserError(f"{where}: {e.strerror or e}") from None
    except ValueError as e:
        raise UserError(
            f"--secret-file {secret_file}: {e}" if secret_file else f"{e}; remove it to make a new one"
        ) from None
    try:
        written = write_autograder(name, args.platform, out, force=force, seed=seed, secret=secret)
    except FileExistsError as e:
        raise UserError(f"{e}; use --force to replace them") from None
    except (ValueError, NotADirectoryError, AutograderError) as e:
        raise UserError(str(e)) from None
    except OSError as e:
        where = f" {e.filename}" if e.filename else ""
        raise UserError(f"cannot write{where}: {e.strerror or e}") from None
    for p in written:
        print(f"wrote {p}")
    said = [
        f"The secret each student's cases come from is in {out / SECRET_FILE} ({whence}); keep it private. "
        f"To write this autograder again with the same cases: --secret-file {out / SECRET_FILE}."
    ]
    if args.platform == "gradescope":
        said.append(
            f"Upload {out / 'autograder.zip'} on Gradescope's Configure Autograder page (Ubuntu 22.04 or "
            f"later); students submit {name}.py; each student's random cases come from their own seed (the "
            f"fixed seed {seed} where no student identity is found). Set the assignment's points to "
            f"{_most(name, seed):g}, the exercise's: each result's score is out of that."
        )
    else:
        said.append(f"Next: {out / 'README.md'} says where each file goes in your PrairieLearn course.")
    for paragraph in said:
        print(textwrap.fill(paragraph, width=79, break_long_words=False, break_on_hyphens=False))
    return 0


def _most(name: str, seed: int) -> float:
    """The points of every case of exercise ``name``, what a full check scores (the same for every seed)."""
    from lessons.exercises.judges import outline

    return sum(points for _, points in outline(name, seed))


def _report(args: argparse.Namespace) -> int:
    """Print the class report and draw its chart (created exclusively unless --force)."""
    results, chart_name, force = args.results, args.chart, args.force
    from lessons.exercises.classreport import summarise

    if "" in results:
        raise UserError("a result's file or directory name is empty")
    missing = [r for r in results if not Path(r).exists()]
    if missing:
        raise UserError(f"no file or directory {missing[0]!r}")
    chart = Path(chart_name) if chart_name else None
    if chart is not None:
        if chart.suffix.lower() not in (".png", ".svg", ".pdf"):
            raise UserError(f"--chart {chart_name!r}: give a file name ending in .png (or .svg, .pdf)")
        if (chart.exists() or chart.is_symlink()) and not force:
            raise UserError(f"{chart} exists; use --force to replace it")
        output_file(chart_name, force, (".png", ".svg", ".pdf"))  # its directory, before the results are read
    summary = summarise(results)
    if not summary.results:
        first = f" ({summary.notes[0]})" if summary.notes else ""
        raise UserError(f"no micrograph result among the files given{first}")
    print(summary.text())
    if chart is not None:
        try:
            summary.bar_chart(chart, overwrite=force)
        except FileExistsError:  # made while the results were read
            raise UserError(f"{chart} exists; use --force to replace it") from None
        except ValueError as e:
            raise UserError(str(e)) from None
        except OSError as e:
            said = e.strerror or str(e)  # the chart's own words name the file already
            said = said if said.startswith("cannot write") else f"cannot write {chart}: {said}"
            raise UserError(said) from None
        print(f"wrote {chart}")
    return 0


ACTIONS: dict[str, Command] = {
    "check": Command(
        _add_check,
        _check,
        help="check FILE; exit 0 when every case passes, 1 otherwise",
        description="Check your solution against micrograph's engine, case by case. Exit status: 0 every "
        "case passed, 1 a case failed (the report says where and why), 2 a usage error. A drawing of the "
        "first failure is written next to FILE as FILE's name with .failure.svg.",
    ),
    "autograder": Command(
        _add_autograder,
        _autograder,
        help="write what a course uploads to Gradescope or PrairieLearn for exercise NAME",
        description="Write the autograder of one exercise for a course platform: the grading scripts and "
        "micrograph's wheel (built from this checkout).",
        epilog=_AUTOGRADER_EPILOG,
        formatter_class=ProseAndExamples,
    ),
    "report": Command(
        _add_report,
        _report,
        help="a class's results: pass rates per exercise and the most common mistakes",
        description="Summarise the results of a class: per exercise the students, the pass rate and the "
        "mean score, and the recognised mistakes most often made, with their hints.",
        epilog=_REPORT_EPILOG,
        formatter_class=ProseAndExamples,
    ),
}
"""The actions ``check``, ``autograder`` and ``report``: their arguments, what they do and what ``--help``
says of them (``list`` and ``start``, a line of help each, declared in :func:`add`, run by :func:`run`)."""
