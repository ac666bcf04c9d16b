"""The benchmark script runs: its parts that need no browser, at the smallest sizes, print tables of numbers.

``make bench`` runs the whole benchmark and judges the targets (``benchmarks/run.py`` prints each with its
figure, docs/performance.md keeps them); a timing is never asserted here, the machine being shared. What is
asserted is what does not depend on the machine: each part prints its table with a number in every cell it
measures, finite and positive where it is a time or a size; the chain has the nodes its recipe makes; a
micrograph node takes less memory than a micrograd node; every variant of micrograd's demo step computes
micrograd's losses. The parts left to ``make bench``: other Pythons' demo step (``versions``), the exercise
checker's seconds (``exercises``, its checks are tested in tests/test_exercise*.py), and the explorer's and
the site's pages in chromium (``explorer``, ``site``, their pages tested in tests/test_explore_browser.py and
tests/test_site.py).
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PARTS = ["chain", "memory", "demo", "engines", "gc"]
NUMBER = re.compile(r"^(?:[<>]=?\s*)?(-?(?:[\d,]*\.?\d+(?:e[-+]?\d+)?|nan|inf))\s*(?:x|us|ms|s|MB|MiB)?$")
"""A measured cell: a number (or nan, or inf, to be refused), a unit or an "x" after it, a <= before it."""
MAY_BE_ZERO = ("diff", "collector", "collections")
"""Columns whose numbers may be 0: a loss difference, the time in and the number of full collections."""

Table = tuple[str, list[str], list[list[str]]]


def _tables(text: str) -> list[Table]:
    """Every table of the output: (the line above its blank line, i.e. its title or "Targets", header, rows).

    Raises:
        AssertionError: a table without its separator line, or a row with another number of cells.
    """
    tables: list[Table] = []
    lines = text.splitlines()
    k = 0
    while k < len(lines):
        if not lines[k].startswith("|"):
            k += 1
            continue
        start = k
        while k < len(lines) and lines[k].startswith("|"):
            k += 1
        cells = [[c.strip() for c in line.strip()[1:-1].split("|")] for line in lines[start:k]]
        header, separator, rows = cells[0], cells[1], cells[2:]
        assert all(set(c) == {"-"} for c in separator), lines[start + 1]
        assert all(len(r) == len(header) for r in rows), lines[start:k]
        title = next((t for t in reversed(lines[:start]) if t.strip() and not t.startswith(" ")), "")
        tables.append((title, header, rows))
    return tables


def _number(cell: str) -> float | None:
    found = NUMBER.match(cell)
    return float(found.group(1).replace(",", "")) if found else None


@pytest.fixture(scope="module")
def output() -> str:
    only = [a for part in PARTS for a in ("--only", part)]
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", *only],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow
def test_each_part_prints_a_table_of_finite_positive_numbers(output: str) -> None:
    tables = _tables(output)
    titles = [t for t, _, _ in tables if t != "Targets"]
    assert [t.split(".")[0] for t in titles] == ["1", "2", "3", "4", "5"], titles
    for title, header, rows in tables:
        if title == "Targets":
            assert header[:3] == ["target", "goal", "measured"], header
            assert all(r[-1] in ("met", "NOT met", "-") for r in rows), rows
            continue
        assert rows, title
        for row in rows:
            numbers = {h: _number(c) for h, c in zip(header[1:], row[1:])}
            assert any(v is not None for v in numbers.values()), (title, row)
            for column, value in numbers.items():
                if value is None:
                    continue
                assert math.isfinite(value), (title, column, row)
                assert value > 0 or (value == 0 and any(w in column for w in MAY_BE_ZERO)), (
                    title,
                    column,
                    row,
                )


def _rows(output: str, number: str) -> tuple[list[str], list[list[str]]]:
    _, header, rows = next(t for t in _tables(output) if t[0].startswith(number + "."))
    return header, rows


@pytest.mark.slow
def test_the_figures_that_do_not_depend_on_the_machine(output: str) -> None:
    header, rows = _rows(output, "1")
    assert [(r[0], r[1]) for r in rows] == [("1e+03", "1,666"), ("1e+04", "16,666")]  # 5 nodes per 3 ops, + x
    header, rows = _rows(output, "2")
    per_node = {r[0]: _number(r[header.index("bytes/node")]) for r in rows}
    assert per_node["micrograph"] < per_node["micrograd 0.1.0"], per_node
    header, rows = _rows(output, "3")
    assert [r[0] for r in rows] == [
        "micrograd 0.1.0",
        "micrograph eager",
        "micrograph replay",
        "micrograph compiled",
        "plain floats, by hand",
        "plain floats, skipping zeros",
    ]
    diffs = {r[0]: _number(r[header.index("loss rel. diff")]) for r in rows}
    assert all(d is not None and d <= 1e-9 for d in diffs.values()), (
        diffs
    )  # micrograd's losses, every variant
    header, rows = _rows(output, "4")
    assert [r[0] for r in rows][:2] == ["micrograph", "micrograd 0.1.0"]


def test_the_report_is_written_between_the_markers_and_the_rest_kept(tmp_path: Path) -> None:
    md = tmp_path / "performance.md"
    head = "# Performance\n\nprose before\n\n"
    tail = "\n\n## Later\n\nprose after\n"
    begin, end = "<!-- the last run of make bench: begin -->", "<!-- the last run of make bench: end -->"
    md.write_text(f"{head}{begin}\n\nthe run before\n\n{end}{tail}", encoding="utf-8")
    md.chmod(0o640)
    run = [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--only", "memory"]
    done = subprocess.run([*run, "--write", str(md)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    text = md.read_text(encoding="utf-8")
    assert text.startswith(head + begin + "\n\n```text\nmicrograph benchmark (quick)") and text.endswith(
        f"```\n\n{end}{tail}"
    )
    assert "the run before" not in text and done.stdout.strip() in text  # what was printed, whole
    assert md.stat().st_mode & 0o777 == 0o640
    (tmp_path / "other.md").write_text("no markers\n", encoding="utf-8")
    refused = subprocess.run([*run, "--write", str(tmp_path / "other.md")], capture_output=True, text=True,
                             timeout=600, cwd=ROOT)  # fmt: skip
    assert refused.returncode == 2 and "holding the line" in refused.stderr.splitlines()[-1]
    assert (tmp_path / "other.md").read_text(encoding="utf-8") == "no markers\n"
