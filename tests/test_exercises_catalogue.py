"""The catalogue of typical wrong solutions (tests/wrong_solutions.py): each must fail with its own diagnosis;
the references pass.

Each entry is written to a temporary directory and checked as ``micrograph exercise check FILE`` checks it (a
child process, the file imported there). The test asserts on what the student sees: the recognised mistake, a
phrase of the report's text, and where one is drawn, the drawing of the failure. The same check run twice
gives the same first failure (the cases are seeded).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from exercise_solutions import CORRECT, LOOP_BACKPROP, mutant
from wrong_solutions import BACKPROP, CATALOGUE, Wrong

from lessons import exercises


@pytest.mark.parametrize(
    "wrong",
    [pytest.param(w, marks=pytest.mark.slow) if w.mistake == "timeout" else w for w in CATALOGUE],
    ids=[w.name for w in CATALOGUE],
)  # a solution that loops runs every case to its time limit: slow
def test_each_wrong_solution_fails_with_its_own_diagnosis(wrong: Wrong, tmp_path: Path) -> None:
    path = tmp_path / f"{wrong.exercise}.py"
    path.write_text(textwrap.dedent(wrong.source), encoding="utf-8")
    report = exercises.check(
        wrong.exercise, path, record=False, time_limit=wrong.time_limit, drawing=tmp_path / "failure.svg"
    )
    text = report.text()
    assert not report.passed, text
    assert report.failure is not None
    assert report.failure.mistake == wrong.mistake, text
    assert wrong.says in " ".join(text.split()), text
    assert report.failure.case.startswith(wrong.case), text
    assert "lessons/exercises" not in report.failure.traceback  # the checker's frames are never shown
    assert "micrograph/" not in report.failure.traceback
    drawing = tmp_path / "failure.svg"
    if drawing.exists() and "no entry" in text:  # the drawing says what the text says, not Python's None
        assert "yours None" not in drawing.read_text(encoding="utf-8")


def test_the_catalogue_holds_at_least_15_mistakes_each_diagnosed_differently() -> None:
    assert len(CATALOGUE) >= 15
    assert len({w.mistake for w in CATALOGUE}) >= 15
    assert {w.exercise for w in CATALOGUE} == set(exercises.EXERCISES)


SOLUTIONS = [(name, CORRECT[name]) for name in exercises.EXERCISES] + [("backprop", LOOP_BACKPROP)]


@pytest.mark.parametrize(
    "name, source", SOLUTIONS, ids=[*exercises.EXERCISES, "backprop written as a loop of +="]
)
def test_a_correct_solution_passes_every_check(name: str, source: str, tmp_path: Path) -> None:
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    report = exercises.check(name, path, record=False)
    assert report.passed, report.text()
    assert len(report.checks) >= 5
    assert all(ok for _, ok in report.checks)
    assert report.score == report.max_score == len(report.cases)
    assert f"All {len(report.checks)} checks passed" in report.text()


def test_a_mutation_whose_line_is_gone_fails_loudly() -> None:
    """A mistake is a correct solution with a line changed: when that line is not in the solution (it was
    edited), building the catalogue fails naming the line, instead of checking some other program."""
    assert mutant("a\nb\n", ("b", "c\nd")) == "a\nc\nd\n"
    assert mutant("a\nb\n", ("a", "")) == "b\n"
    with pytest.raises(ValueError, match="the line 'x' is in the source 0 times, not once"):
        mutant(BACKPROP, ("x", "y"))
    with pytest.raises(ValueError, match="the line 'a' is in the source 2 times"):
        mutant("a\na\n", ("a", "b"))
    with pytest.raises(ValueError, match="replaces one line"):
        mutant(BACKPROP, ("    nodes = G.nodes\n    n = len(nodes)", ""))
