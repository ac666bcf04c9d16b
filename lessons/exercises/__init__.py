"""Exercises: the student writes the book's algorithms, and micrograph shows exactly where they go wrong.

::

    >>> from lessons import exercises
    >>> exercises.list()                             # the exercises, the book's algorithms, passed?
    >>> exercises.start("backprop")                  # writes backprop.py: a template; never overwrites
    >>> exercises.check("backprop", "backprop.py")   # or a function: exercises.check("backprop", my_backprop)

The same from a shell: ``micrograph exercise list | start NAME | check FILE [--json]``.

A check runs the solution on graphs chosen to catch the real mistakes (a node used twice, a reused inner node,
constants, figure 6.9's chain, every operation, random DAGs from a seed the report prints, a ladder with 2^40
paths, a chain 2,000 deep, long graphs timed against their size) and compares it with micrograph's own
algorithms, the answer key. Every case runs and is scored. At the first failure the report says which node is
wrong, the expected and actual values, for Algorithm 6.2 the terms of the sum and which one differs, a hint
naming the book's sentence for the mistakes it recognises, and draws G with the wrong node and edge in red
(inline in Jupyter; next to the student's file from the shell).

The solution runs in a separate interpreter (:mod:`lessons.exercises.runner`) that holds no answer and
cannot import micrograph's own implementation of the algorithm; it gets each case as plain data and
answers with plain data, and the verdict is computed in this process (:mod:`lessons.exercises.judge`).
Limits on CPU time per case, wall-clock time, memory and output are enforced from outside it. The
verdict is kept in ``.micrograph-progress.json`` in the current directory, which :func:`list` reads: a
record for the student, not a grade.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from lessons.exercises import judges, progress
from lessons.exercises.exercise import Exercise
from lessons.exercises.judge import judge_solution
from lessons.exercises.limits import BUDGET, MEMORY_LIMIT, TIME_LIMIT, WALL_LIMIT, Limits
from lessons.exercises.report import Failure, Report
from lessons.exercises.runner import stop_on_signals
from lessons.exercises.source import read_submission, solution_source
from lessons.exercises.templates import MARKER_LINE, template
from viz.files import write_atomic

__all__ = [
    "EXERCISES", "Exercise", "Report", "Failure", "list", "start", "check", "reference", "exercise_of",
    "SVG_MARKER",
]  # fmt: skip

EXERCISES: dict[str, Exercise] = judges.EXERCISES
"""The exercises by name, in the order of the book's section 6.5 (the order ``list`` shows), as their table
registers them (:data:`lessons.exercises.judges.TABLE`)."""

SVG_MARKER = "<!-- micrograph exercise: drawing of a failure -->\n"
"""The first line of a failure drawing written next to a student's file (only such a file is replaced)."""


def _exercise(name: Any) -> Exercise:
    if not isinstance(name, str) or name not in EXERCISES:
        raise ValueError(f"there is no exercise {name!r}; the exercises are {', '.join(EXERCISES)}")
    return EXERCISES[name]


class Listing(str):
    """The text of :func:`list`; shows itself as the text in a REPL."""

    def __repr__(self) -> str:
        return str(self)


def list(directory: str | os.PathLike[str] | None = None) -> Listing:
    """The exercises, the book's algorithm each covers, and where you are with each.

    The status is the latest verdict, ``passed`` or ``failed`` (with ``passed earlier`` on the line below
    when an earlier check passed), else ``started`` (NAME.py is in the directory) or empty.

    Args:
        directory: where the progress file is; the current directory by default.

    Raises:
        lessons.exercises.progress.ProgressError: the progress file is there but cannot be read as one (the
            message, one line, names it and says why).
    """
    done = progress.read(directory)
    lines = [f"{'exercise':<13}{'status':<8}{'book':<23}what you write"]
    for e in EXERCISES.values():
        state = done.get(e.name)
        started = (Path(directory if directory is not None else ".") / e.file).exists()
        if state is None:
            mark = "started" if started else ""
        else:
            mark = state.get("last") or ("passed" if state["passed"] else "failed")
        lines.append(f"{e.name:<13}{mark:<8}{e.book:<23}{e.title}")
        if mark == "failed" and state is not None and state["passed"]:
            lines.append(f"{'':<13}passed earlier; the latest check failed")
    lines += [
        "",
        "micrograph exercise start NAME   writes NAME.py, a template to fill in;",
        "micrograph exercise check NAME.py  checks it against micrograph's engine.",
        f"Your latest verdicts are in {progress.PROGRESS_FILE}: a record, not a grade.",
    ]
    return Listing("\n".join(lines))


def start(name: str, directory: str | os.PathLike[str] = ".") -> Path:
    """Write the template NAME.py into ``directory``: the signature, the book's pseudo-code, TODOs.

    Raises:
        ValueError: an unknown exercise.
        FileExistsError: the file exists (a template never overwrites the student's work).
        FileNotFoundError: the directory does not exist.
    """
    e = _exercise(name)
    path = Path(directory) / e.file
    if path.exists() or path.is_symlink():
        raise FileExistsError(f"{path} exists; not overwriting it (move it away to start again)")
    return write_atomic(path, template(e.name).encode("utf-8"), overwrite=False)


def exercise_of(path: str | os.PathLike[str]) -> str | None:
    """The exercise a solution file is: the template's marker line among its first five lines, else the
    file's name (``backprop.py``), else None.

    Raises:
        FileNotFoundError: no regular file at ``path``, or a symlink (never followed). ValueError: a file
            larger than a solution can be (:data:`lessons.exercises.source.MAX_SOURCE`).
    """
    p = Path(path)
    for line in read_submission(p).splitlines()[:5]:
        if line.startswith(MARKER_LINE):
            name = line.split(":", 1)[1].strip()
            if name in EXERCISES:
                return name
    return p.stem if p.stem in EXERCISES else None


def reference(name: str) -> Any:
    """micrograph's own functions in the exercise's shape, to compare your results with in a REPL.

    They are the engine's algorithms, so :func:`check` refuses them: the exercise asks for the algorithm
    written out. Raises ValueError for an unknown exercise.
    """
    return _exercise(name).judging.reference()


def check(
    name: str,
    solution: Any,
    *,
    time_limit: float = TIME_LIMIT,
    wall_limit: float = WALL_LIMIT,
    memory_limit: int = MEMORY_LIMIT,
    budget: float = BUDGET,
    seed: int = 0,
    record: bool = True,
    drawing: str | os.PathLike[str] | None = "auto",
    isolated: bool = False,
) -> Report:
    """Check a solution: every case run and scored, the first failure diagnosed.

    The solution runs in a separate interpreter that holds no answer and cannot reach micrograph's own
    implementation of the algorithm; only plain data comes back, and the verdict is computed here
    (:mod:`lessons.exercises.judge`).

    Args:
        name: the exercise (see :data:`EXERCISES`).
        solution: the student's file (a path), a module, a dict {function name: function}, or, for an
            exercise with one function, the function itself (``check("backprop", my_backprop)``; its source
            must be findable: a file, or a Jupyter or IPython cell).
        time_limit: CPU seconds one case may use before it is stopped (> 0).
        wall_limit: wall-clock seconds the whole check may take (> 0).
        memory_limit: bytes of memory the solution may use (at least 64 MiB).
        budget: seconds of CPU time and waiting the whole check may spend on the solution (> 0); the cases
            left when it is spent are not run and score 0.
        seed: the seed of the random cases (a non-negative integer); the report prints it.
        record: keep the verdict in the progress file of the current directory (a record for the student,
            not a grade). When it cannot be kept, the report's ``record_note`` says why (one line, also
            at the end of its text); the verdict itself is unchanged.
        drawing: where to write the failure's drawing (SVG). ``"auto"``: next to the student's file when
            the solution is a file (``backprop.py`` -> ``backprop.failure.svg``), none for a function (Jupyter
            shows it inline; ``report.save_svg(path)`` writes it). None: none. A file there is replaced only
            if it is an earlier failure drawing, and never through a symlink.
        isolated: refuse to run the solution unless it is enclosed, where the check runs as an ordinary
            user (:class:`~lessons.exercises.limits.Limits`' ``isolated``): a result meant for grading.
            Where Linux lets the user make namespaces the solution is enclosed either way: micrograph's
            files hidden, every file system but the check's own directory read-only, ``/proc`` covered.

    Returns:
        A :class:`Report` (true if every case passed); print it, or ``.to_json()``.

    Raises:
        ValueError: an unknown exercise, a limit out of range, or a negative seed. FileNotFoundError: no such
        file (or a symlink, which is not followed). IsolationError: the check runs as root and cannot run the
        solution as another user, or ``isolated`` and it cannot enclose the solution, so it refuses to
        grade. TypeError: a solution whose source cannot be
        found (a lambda, a function typed at the plain
        python prompt), or a lone function for an exercise that asks for several.
    """
    e = _exercise(name)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**31:
        raise ValueError(f"seed must be an integer from 0 to 2**31 - 1, got {seed!r}")
    limits = Limits(cpu=time_limit, wall=wall_limit, memory=memory_limit, budget=budget, isolated=isolated)
    source, filename = solution_source(e.functions, solution)
    is_path = isinstance(solution, (str, os.PathLike))
    with stop_on_signals():
        report = judge_solution(e, judges.cases(e.name, seed), source, filename, seed=seed, limits=limits)
    failure = report.failure
    if drawing == "auto":
        drawing = Path(solution).with_name(f"{Path(solution).stem}.failure.svg") if is_path else None
    if drawing is not None and failure is not None and failure.svg:
        report.svg_path, note = _write_drawing(Path(drawing), failure.svg)
        if note:
            failure.drawing_note = note
    if record:
        try:
            progress.record(e.name, report)
        except progress.ProgressError as error:
            report.record_note = str(error)
    return report


def _write_drawing(path: Path, svg: str) -> tuple[str | None, str]:
    """Write the drawing: (the path, "") or, where it would replace the student's own file, follow a
    symlink or cannot be written, (None, why)."""
    if path.is_symlink():
        return None, f"{path} is a symlink; not writing through it"
    ours = path.exists()
    if ours:
        try:
            ours = path.read_text(encoding="utf-8", errors="replace").startswith(SVG_MARKER)
        except OSError as e:
            return None, f"cannot read {path}: {e.strerror or e}"
        if not ours:
            return None, f"{path} exists and is not a failure drawing; not overwriting it"
    try:  # a new drawing is created exclusively: a file made while the check ran is not replaced
        write_atomic(path, (SVG_MARKER + svg).encode("utf-8"), overwrite=ours)
    except FileExistsError:
        return None, f"{path} appeared while the check ran; not overwriting it"
    except OSError as e:
        return None, f"cannot write {path}: {e.strerror or e}"
    return str(path), ""
