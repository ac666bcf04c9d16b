"""A class at a glance: pass rates per exercise and the most common recognised mistakes.

:func:`summarise` reads many result files: the JSON a check prints (``micrograph exercise check FILE
--format json``) and the ``results.json`` that :mod:`lessons.exercises.platforms` writes for Gradescope or
PrairieLearn (they carry the check's exercise, points and mistakes in ``extra_data``). A directory stands
for every ``*.json`` file under it. Each file is one student's result; a file that cannot be read or is not
a micrograph result is skipped with a one-line note, never a traceback. Every file is read within bounds
(:func:`lessons.exercises.jsonfile.read_json`: a regular file, not a symlink, at most :data:`MAX_BYTES`,
nested at most :data:`MAX_DEPTH` deep), so ``/dev/zero``, a FIFO or a 100,000-deep array is a note too.

Scores are summed and averaged per exercise against that exercise's own maximum (the points of its cases,
:func:`lessons.exercises.judges.outline`): each result counts as its share of its own maximum (0 when it
has none, as a submission that could not be checked), so results of different maxima never mix.

A *recognised mistake* is one the checker names with a code and a hint (``overwrite``: the sum over
consumers replaced instead of added, ...); the report counts, per exercise, how many students made each,
and names it in words (the ``words`` of the judge's row, :func:`lessons.exercises.judges.words`), so a
teacher sees which of the book's sentences the class missed.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import functools
import math
import os
import textwrap
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from lessons.exercises import EXERCISES, judges
from lessons.exercises.jsonfile import JSONFileError, read_json
from viz import style
from viz.plots import save_figure

__all__ = [
    "StudentResult", "ExerciseRow", "MistakeRow", "Summary", "summarise", "read_result", "exercise_maximum",
    "WIDTH", "MAX_BYTES", "MAX_DEPTH",
]  # fmt: skip

WIDTH = 80
MAX_BYTES = 8 * 1024 * 1024
"""A file larger than this is not read (a check's result is a few kilobytes; results.json at most 1 MB)."""
MAX_DEPTH = 32
"""A file nested deeper than this is not read (a result is 4 deep)."""


@dataclass(frozen=True)
class StudentResult:
    """One student's result of one exercise, from either file form.

    Attributes:
        path: the file it was read from. exercise: the exercise's name. passed: every case passed.
        score, max_score: points. mistakes: the recognised mistakes' codes, each once.
        hint: the first failure's hint ("" if none).
    """

    path: str
    exercise: str
    passed: bool
    score: float
    max_score: float
    mistakes: tuple[str, ...]
    hint: str


@dataclass(frozen=True)
class ExerciseRow:
    """One exercise over the class: students (result files), how many passed, the mean points.

    Attributes:
        max_score: the exercise's own maximum (:func:`exercise_maximum`).
        mean_score: the mean of each student's share of their result's maximum, times ``max_score``.
    """

    exercise: str
    students: int
    passed: int
    mean_score: float
    max_score: float

    @property
    def pass_rate(self) -> float:
        """The fraction of students who passed, in [0, 1]."""
        return self.passed / self.students if self.students else 0.0


@dataclass(frozen=True)
class MistakeRow:
    """A recognised mistake: the exercise, its code, how many students made it, the checker's hint, and
    what it is in words (the phrase the report shows)."""

    exercise: str
    mistake: str
    students: int
    hint: str
    words: str


@dataclass
class Summary:
    """The class report: per exercise, per mistake, and what was skipped.

    Attributes:
        exercises: one row per exercise with results, in the book's order (``EXERCISES``).
        mistakes: the recognised mistakes, the most common first.
        results: every result read. notes: one line per file skipped, saying why.
    """

    exercises: list[ExerciseRow]
    mistakes: list[MistakeRow]
    results: list[StudentResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def text(self, top: int = 10) -> str:
        """The report as a table for an 80-column terminal: pass rates, mean scores, the top mistakes.

        Args:
            top: how many mistakes to list at most.
        """
        skipped = (
            f" ({len(self.notes)} file{'s' if len(self.notes) != 1 else ''} skipped)" if self.notes else ""
        )
        lines = [
            f"Class report: {len(self.results)} result{'s' if len(self.results) != 1 else ''} read{skipped}."
        ]
        if self.exercises:
            lines += ["", f"{'exercise':<14}{'students':>8}{'passed':>8}{'pass rate':>11}  mean score"]
            for row in self.exercises:
                share = row.mean_score / row.max_score if row.max_score else 0.0
                mean = f"{row.mean_score:.1f} of {row.max_score:g} ({share:.0%})"
                lines.append(
                    f"{row.exercise:<14}{row.students:>8}{row.passed:>8}{row.pass_rate:>11.0%}  {mean}"
                )
        lines += self._mistake_lines(top)
        if self.notes:
            lines += ["", "Skipped:"] + [f"  {note}" for note in self.notes]
        return "\n".join(lines)

    def _mistake_lines(self, top: int) -> list[str]:
        if not self.mistakes:
            return ["", "No recognised mistake."] if self.results else []
        lines = [
            "",
            "The most common recognised mistakes:",
            f"{'exercise':<14}{'mistake':<42}{'students':>8}",
        ]
        for row in self.mistakes[:top]:
            lines.append(f"{row.exercise:<14}{row.words:<42}{row.students:>8}")
            if row.hint:
                lines += textwrap.wrap(
                    f"hint: {row.hint}",
                    WIDTH,
                    initial_indent="    ",
                    subsequent_indent="      ",
                    break_long_words=False,
                )
        if len(self.mistakes) > top:
            lines.append(f"... and {len(self.mistakes) - top} more")
        return lines

    def __str__(self) -> str:
        return self.text()

    def bar_chart(self, path: str | os.PathLike[str], *, top: int = 8, overwrite: bool = True) -> Path:
        """Draw the pass rate per exercise and the most common mistakes as bars; write it to ``path``.

        Args:
            path: a ``.png`` file (``.svg`` and ``.pdf`` work too).
            top: how many mistakes to draw at most.
            overwrite: replace a file at ``path``.

        Returns:
            The path written (atomically).

        Raises:
            ValueError: no result to draw, or an unknown suffix. FileExistsError: the file exists and
            ``overwrite`` is False.
        """
        if not self.exercises:
            raise ValueError("no result to draw: the class report read no micrograph result")
        mistakes = self.mistakes[:top]
        fig = Figure(
            figsize=(11, max(3.2, 0.45 * max(len(self.exercises), len(mistakes)) + 1.6)), layout="constrained"
        )
        FigureCanvasAgg(fig)  # this figure's own canvas: no global backend, no window
        left, right = fig.subplots(1, 2)
        names = [row.exercise for row in self.exercises][::-1]
        rates = [100 * row.pass_rate for row in self.exercises][::-1]
        bars = left.barh(names, rates, color=style.PLOT_COLORS["backprop"])
        left.bar_label(bars, [f"{r.passed} of {r.students}" for r in self.exercises][::-1], padding=3)
        left.set_xlim(0, 118)
        left.set_xlabel("students who passed (%)")
        left.set_title("Pass rate per exercise")
        if mistakes:
            labels = [f"{row.exercise}: {row.words}" for row in mistakes][::-1]
            counts = [row.students for row in mistakes][::-1]
            bars = right.barh(labels, counts, color=style.WRONG_EDGE["color"])
            right.bar_label(bars, padding=3)
            right.set_xlim(0, max(counts) * 1.15 + 0.5)
            right.xaxis.get_major_locator().set_params(integer=True)
            right.set_xlabel("students")
        else:
            right.text(0.5, 0.5, "no recognised mistake", ha="center", va="center", transform=right.transAxes)
            right.set_axis_off()
        right.set_title("The most common recognised mistakes")
        fig.suptitle(f"Class report: {len(self.results)} results")
        save_figure(fig, path, overwrite=overwrite)
        return Path(path)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _from_check(data: dict[str, Any]) -> tuple[dict[str, Any], list[str], str]:
    """(fields, mistakes, hint) of a check's own JSON."""
    given = data.get("first_failure")
    failure: dict[str, Any] = given if isinstance(given, dict) else {}
    cases = [c for c in data.get("cases") or [] if isinstance(c, dict)]
    codes = [failure.get("mistake")] + [c.get("mistake") for c in cases]
    hint = str(failure.get("hint") or "") if failure.get("mistake") else ""  # the hint of that mistake only
    return data, [c for c in codes if isinstance(c, str) and c], hint


def _from_platform(data: dict[str, Any]) -> tuple[dict[str, Any], list[str], str]:
    """(fields, mistakes, hint) of a platform's results.json, from its extra_data."""
    extra = data["extra_data"]
    codes = extra.get("mistakes") if isinstance(extra.get("mistakes"), list) else [extra.get("mistake")]
    hint = str(extra.get("hint") or "") if extra.get("mistake") else ""
    return extra, [c for c in codes if isinstance(c, str) and c], hint


def _parse(data: Any) -> tuple[dict[str, Any], list[str], str] | str:
    """The fields of either form, or why the data is not a micrograph result."""
    if not isinstance(data, dict):
        return f"not a micrograph result (a JSON {type(data).__name__}, not an object)"
    if isinstance(data.get("extra_data"), dict) and "exercise" in data["extra_data"]:
        if data.get("gradable") is False or data["extra_data"].get("graded") is False:
            return "not graded (micrograph refused to grade the submission: a setup for the staff to fix)"
        return _from_platform(data)
    if "exercise" in data and "cases" in data:
        return _from_check(data)
    return "not a micrograph result (no exercise named in it)"


def read_result(path: str | os.PathLike[str]) -> StudentResult | str:
    """One result file as a :class:`StudentResult`, or a one-line note saying why it is skipped.

    Args:
        path: a check's JSON or a platform's results.json.

    Returns:
        The result, or the note (a str starting with "skipped").
    """
    p = Path(path)
    try:
        data = read_json(p, max_bytes=MAX_BYTES, max_depth=MAX_DEPTH)
    except JSONFileError as e:
        return f"skipped {p}: {e.why}"
    except OSError as e:
        return f"skipped {p}: cannot read it ({e.strerror or e})"
    parsed = _parse(data)
    if isinstance(parsed, str):
        return f"skipped {p}: {parsed}"
    fields, mistakes, hint = parsed
    exercise = fields.get("exercise")
    if not isinstance(exercise, str) or exercise not in EXERCISES:
        return f"skipped {p}: {str(exercise)[:40]!r} is not an exercise ({', '.join(EXERCISES)})"
    score, top = _number(fields.get("score")), _number(fields.get("max_score"))
    if score is None or top is None or not 0 <= score <= top:
        return f"skipped {p}: its score is not a number from 0 to its max_score"
    passed = fields.get("passed")
    if not isinstance(passed, bool):
        return f"skipped {p}: it does not say whether the check passed"
    return StudentResult(str(p), exercise, passed, score, top, tuple(dict.fromkeys(mistakes)), hint)


def _files(paths: Iterable[str | os.PathLike[str]]) -> Iterable[Path]:
    """Each path, or every ``*.json`` under a directory (sorted), each file once."""
    seen: set[Path] = set()
    for given in paths:
        p = Path(given)
        found = sorted(q for q in p.rglob("*.json") if q.is_file()) if p.is_dir() else [p]
        for q in found:
            key = q.resolve()
            if key not in seen:
                seen.add(key)
                yield q


def summarise(paths: Iterable[str | os.PathLike[str]]) -> Summary:
    """Summarise a class's results: per exercise the students, pass rate and mean score; the most
    common recognised mistakes with the checker's hint.

    Args:
        paths: result files (a check's JSON, a platform's results.json) or directories holding them.

    Returns:
        A :class:`Summary`; files that are not micrograph results are in its ``notes``, one line each.
    """
    results: list[StudentResult] = []
    notes: list[str] = []
    for path in _files(paths):
        got = read_result(path)
        if isinstance(got, str):
            notes.append(got)
        else:
            results.append(got)
    rows = []
    for name in EXERCISES:
        mine = [r for r in results if r.exercise == name]
        if mine:
            top = exercise_maximum(name)
            shares = [r.score / r.max_score if r.max_score > 0 else 0.0 for r in mine]
            rows.append(
                ExerciseRow(
                    name, len(mine), sum(r.passed for r in mine), top * math.fsum(shares) / len(mine), top
                )
            )
    return Summary(rows, _mistake_rows(results), results, notes)


@functools.cache
def exercise_maximum(exercise: str) -> float:
    """The points of every case of an exercise (the same for every seed), what a full check scores.

    Raises ValueError for an unknown exercise.
    """
    return math.fsum(points for _, points in judges.outline(exercise))


def _mistake_rows(results: list[StudentResult]) -> list[MistakeRow]:
    """Each (exercise, mistake) with how many students made it, the most common first; its hint is the
    one the checker gave most often with it as the first failure."""
    counts: Counter[tuple[str, str]] = Counter()
    hints: dict[tuple[str, str], Counter[str]] = {}
    for r in results:
        for code in r.mistakes:
            counts[r.exercise, code] += 1
        if r.mistakes and r.hint:
            hints.setdefault((r.exercise, r.mistakes[0]), Counter())[r.hint] += 1
    order = {name: k for k, name in enumerate(EXERCISES)}
    keys = sorted(counts, key=lambda key: (-counts[key], order[key[0]], key[1]))
    return [
        MistakeRow(
            e, m, counts[e, m], hints[e, m].most_common(1)[0][0] if (e, m) in hints else "", _words(e, m)
        )
        for e, m in keys
    ]


def _words(exercise: str, code: str) -> str:
    """The mistake in words; a code no judge here gives is shown quoted, cut to 24 characters."""
    return judges.words(exercise, code) or f"unknown code {code[:24]!r}"
