"""The class report a teacher reads: results in the three forms summarised, each exercise's pass rate and
mean score, the most common recognised mistakes in words with their hints, the files that are not results,
the text and the chart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_exercise_platforms import case, sample, syntax_error

from lessons.exercises import judges
from lessons.exercises.classreport import summarise
from lessons.exercises.grading import refused_result
from lessons.exercises.platforms import to_gradescope, to_prairielearn


def class_results(d: Path) -> Path:
    """Six students' results in the three forms, and five files that are not results."""
    forward_failing = sample()
    forward_failing.update(
        exercise="forward",
        score=4.0,
        max_score=12.0,
        seed=0,
        cases=[case(f"c{k}", True) for k in range(4)]
        + [case(f"order {k}", False, mistake="stale") for k in range(8)],
    )
    forward_failing["first_failure"] = dict(
        forward_failing["first_failure"],
        case="order 0",
        mistake="stale",
        hint="compute u(i) from its parents, in order",
    )
    forward_passing = sample()
    forward_passing.update(
        exercise="forward",
        passed=True,
        score=12.0,
        max_score=12.0,
        first_failure=None,
        cases=[case(f"c{k}", True) for k in range(12)],
    )
    backprop_passing = sample()
    backprop_passing.update(
        passed=True, score=12.0, first_failure=None, cases=[case(f"c{k}", True) for k in range(12)]
    )
    carol = sample()
    carol.update(
        score=6.0, cases=[case(f"c{k}", k < 6, mistake="" if k < 6 else "overwrite") for k in range(12)]
    )
    (d / "carol").mkdir(parents=True)
    (d / "dave").mkdir()
    files: dict[str, Any] = {
        "alice.json": sample(),
        "bob.json": backprop_passing,
        "carol/results.json": to_gradescope(carol),
        "dave/results.json": to_prairielearn(forward_failing),
        "erin.json": forward_passing,
        "frank.json": syntax_error(),
        "foreign.json": {"name": "x"},
        "list.json": [1, 2],
        "unknown.json": dict(sample(), exercise="calculus"),
        "bad-score.json": dict(sample(), score=float("nan")),
        # refused by the autograder (a setup for the staff to fix): no student's score
        "refused-gs/results.json": refused_result("gradescope", "backprop", "the packages are readable", 0)[
            0
        ],
        "refused-pl/results.json": refused_result("prairielearn", "backprop", "the packages are readable", 0)[
            0
        ],
    }
    (d / "refused-gs").mkdir()
    (d / "refused-pl").mkdir()
    for name, data in files.items():
        (d / name).write_text(json.dumps(data))
    (d / "broken.json").write_text("{not json")
    (d / "binary.json").write_bytes(b"\xff\xfe\x00\x01")
    (d / "notes.txt").write_text("not read: not .json")
    return d


def test_the_class_report_numbers(tmp_path: Path) -> None:
    d = class_results(tmp_path / "class")
    s = summarise([d, d / "alice.json"])  # alice given twice is read once
    assert len(s.results) == 6
    rows = {r.exercise: r for r in s.exercises}
    assert [r.exercise for r in s.exercises] == ["forward", "backprop"]  # the book's order
    b, f = rows["backprop"], rows["forward"]
    assert (b.students, b.passed, b.pass_rate) == (4, 1, 0.25)
    most_b, most_f = (sum(points for _, points in judges.outline(e)) for e in ("backprop", "forward"))
    assert b.mean_score == pytest.approx((9 + 12 + 6 + 0) / 4 / 12 * most_b) and b.max_score == most_b
    assert (f.students, f.passed, f.pass_rate, f.max_score) == (2, 1, 0.5, most_f)
    assert f.mean_score == pytest.approx(8 / 12 * most_f)  # each result a share of its own maximum
    got = [(m.exercise, m.mistake, m.students, m.hint, m.words) for m in s.mistakes]
    assert got == [
        (
            "backprop",
            "overwrite",
            2,
            "add each consumer's term into grad_table[u(j)] instead of replacing it",
            "terms overwritten, not added",
        ),
        (
            "forward",
            "stale",
            1,
            "compute u(i) from its parents, in order",
            "read parent.data, not this pass's u[j]",
        ),
        ("backprop", "syntax", 1, "", "a syntax error"),
    ]
    assert len(s.notes) == 8
    notes = "\n".join(s.notes)
    for why in [
        "refused-gs/results.json: not graded (micrograph refused to grade the submission",
        "refused-pl/results.json: not graded (micrograph refused to grade the submission",
        "foreign.json: not a micrograph result (no exercise named in it)",
        "list.json: not a micrograph result (a JSON list, not an object)",
        "unknown.json: 'calculus' is not an exercise",
        "broken.json: not JSON",
        "binary.json: not text (UTF-8)",
        "bad-score.json: its score is not a number",
    ]:
        assert why in notes, why
    assert all(n.startswith("skipped ") and "\n" not in n for n in s.notes)


def test_the_class_report_text(tmp_path: Path) -> None:
    s = summarise([class_results(tmp_path)])
    text = s.text()
    lines = text.splitlines()
    assert lines[0] == "Class report: 6 results read (8 files skipped)."
    assert "exercise      students  passed  pass rate  mean score" in lines
    most_b, most_f = (sum(points for _, points in judges.outline(e)) for e in ("backprop", "forward"))
    assert f"forward              2       1        50%  {8 / 12 * most_f:.1f} of {most_f:g} (67%)" in lines
    assert f"backprop             4       1        25%  {27 / 48 * most_b:.1f} of {most_b:g} (56%)" in lines
    assert "The most common recognised mistakes:" in lines
    i = lines.index("The most common recognised mistakes:")
    assert lines[i + 1 : i + 6] == [
        "exercise      mistake                                   students",
        "backprop      terms overwritten, not added                     2",
        "    hint: add each consumer's term into grad_table[u(j)] instead of replacing it",
        "forward       read parent.data, not this pass's u[j]           1",
        "    hint: compute u(i) from its parents, in order",
    ]
    assert (
        lines[i + 6] == "backprop      a syntax error                                   1"
    )  # no hint with it
    assert lines[-9] == "Skipped:"
    assert max(len(line) for line in lines if not line.startswith("  skipped")) <= 80
    assert str(s) == text


def test_the_class_report_chart(tmp_path: Path) -> None:
    s = summarise([class_results(tmp_path / "c")])
    path = s.bar_chart(tmp_path / "class.png")
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width > 1200 and height > 400
    with pytest.raises(FileExistsError):
        s.bar_chart(path, overwrite=False)
    with pytest.raises(ValueError, match="no result to draw"):
        summarise([]).bar_chart(tmp_path / "none.png")
