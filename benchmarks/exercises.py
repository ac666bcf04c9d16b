"""The exercise checker's cost: a correct solution's whole check, alone and eight at a time.

A check starts one interpreter for the student's code, builds every case's answer with the engine, and
judges each answer; this measures the wall time of ``lessons.exercises.check`` on the correct solutions of
``tests/exercise_solutions.py`` (the median of three runs per exercise), and of eight concurrent
``micrograph exercise check`` commands on one machine.
"""

from __future__ import annotations

import concurrent.futures
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

GOAL_S = 1.0
"""A correct solution's whole check, in seconds: "well under a second"."""


def _check_seconds(name: str, source: str, directory: Path, runs: int) -> float:
    from lessons import exercises

    path = directory / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        report = exercises.check(name, path, record=False, drawing=None)
        times.append(time.perf_counter() - start)
        if not report.passed:
            raise RuntimeError(f"the correct {name} solution failed:\n{report.text()}")
    return statistics.median(times)


def _concurrent(directory: Path, source: str, n: int) -> tuple[float, int]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for k in range(n):
        (directory / f"c{k}").mkdir()
        (directory / f"c{k}" / "backprop.py").write_text(source, encoding="utf-8")

    def one(k: int) -> int:
        done = subprocess.run(
            [sys.executable, "-m", "micrograph", "exercise", "check", "backprop.py", "--no-progress"],
            cwd=directory / f"c{k}",
            env=env,
            capture_output=True,
            timeout=600,
        )
        return done.returncode

    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(n) as pool:
        codes = list(pool.map(one, range(n)))
    return time.perf_counter() - start, sum(c == 0 for c in codes)


def section(runs: int = 3) -> tuple[str, dict[str, Any]]:
    """The exercises' table and its facts: seconds per exercise, the slowest, eight at once."""
    from exercise_solutions import CORRECT

    rows = []
    facts: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        seconds = {name: _check_seconds(name, source, Path(tmp), runs) for name, source in CORRECT.items()}
        wall, passed = _concurrent(Path(tmp), CORRECT["backprop"], 8)
    for name, s in seconds.items():
        rows.append([name, f"{s:.2f}"])
    facts.update(
        exercise_check_max_s=max(seconds.values()),
        exercise_check_slowest=max(seconds, key=seconds.get),
        exercise_concurrent_s=wall,
        exercise_concurrent_passed=passed,
    )
    width = max(len(r[0]) for r in rows)
    lines = [f"{'exercise':<{width}}  check s (median of {runs})"] + [
        f"{a:<{width}}  {b:>8}" for a, b in rows
    ]
    lines.append(f"eight concurrent checks of backprop: {wall:.1f} s wall, {passed} of 8 passed")
    return "\n".join(lines), facts


def target_rows(f: dict[str, Any]) -> list[list[Any]]:
    """The exercise targets against this run's figures."""
    if "exercise_check_max_s" not in f:
        return []
    return [
        [
            f"a correct solution's whole check (slowest: {f['exercise_check_slowest']})",
            f"<= {GOAL_S:g} s",
            f"{f['exercise_check_max_s']:.2f} s",
            f["exercise_check_max_s"] <= GOAL_S,
        ],
        [
            "eight concurrent checks of a correct solution pass",
            "8 of 8",
            f"{f['exercise_concurrent_passed']} of 8",
            f["exercise_concurrent_passed"] == 8,
        ],
    ]
