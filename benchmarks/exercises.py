"""The exercise checker's cost: a correct solution's whole check, alone and eight at a time, and the worst.

A check starts one interpreter for the student's code, builds every case's answer with the engine, and
judges each answer; this measures the wall time of ``lessons.exercises.check`` on the correct solutions of
``tests/exercise_solutions.py`` (the median of three runs per exercise), of eight concurrent
``micrograph exercise check`` commands on one machine, and the worst case a grading platform must allow
for: a solution that loops for ever in every case (CPU seconds of the whole ``micrograph exercise check``
command, the judge and every process of the solution, from the kernel's accounting of reaped children).
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

WORST_GOAL_S = 20.0
"""CPU seconds of the whole check of a solution that loops in every case, on a 2-core machine."""

LOOPS = {
    "derivatives": "".join(
        f"def {f}(*args):\n    while True:\n        pass\n"
        for f in ("tanh_dx", "sigmoid_dx", "div_dx", "div_dy", "pow_dx", "pow_dy", "log_dx", "sqrt_dx")
    ),
    "topo": "def topological_order(z):\n    while True:\n        pass\n",
    "forward": "def forward(G, x):\n    while True:\n        pass\n",
    "backprop": "def backprop(G):\n    while True:\n        pass\n",
    "build_grad": "def build_grad(V, G, G_prime, grad_table):\n    while True:\n        pass\n",
    "mlp_backward": "import numpy\ndef backward_mlp(net):\n    while True:\n        pass\n",
    "naive": "def naive_grad(z, w):\n    while True:\n        pass\n",
}
"""A solution per exercise that loops for ever in every case (mlp_backward's loads numpy: a slower start)."""


def worst_case(directory: Path, name: str) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, exit status) of ``micrograph exercise check`` on a looping solution."""
    import resource

    path = directory / f"{name}.py"
    path.write_text(LOOPS[name], encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "micrograph", "exercise", "check", path.name, "--no-progress"],
        cwd=directory,
        env=env,
        capture_output=True,
        timeout=600,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, done.returncode


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


def section(runs: int = 3, worst: bool = True) -> tuple[str, dict[str, Any]]:
    """The exercises' table and its facts: seconds per exercise, the slowest, eight at once, and (``worst``)
    each exercise's looping solution: the CPU and wall seconds of its whole check."""
    from exercise_solutions import CORRECT

    facts: dict[str, Any] = {}
    worst_rows: dict[str, tuple[float, float, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        seconds = {name: _check_seconds(name, source, Path(tmp), runs) for name, source in CORRECT.items()}
        wall, passed = _concurrent(Path(tmp), CORRECT["backprop"], 8)
        if worst:
            for name in CORRECT:
                worst_rows[name] = worst_case(Path(tmp), name)
    facts.update(
        exercise_check_max_s=max(seconds.values()),
        exercise_check_slowest=max(seconds, key=seconds.get),
        exercise_concurrent_s=wall,
        exercise_concurrent_passed=passed,
    )
    width = max(len(name) for name in seconds)
    header = f"{'exercise':<{width}}  {'check s':>8}"
    if worst_rows:
        header += f"  {'looping: CPU s':>14}  {'wall s':>6}  {'exit':>4}"
        worst_name = max(worst_rows, key=lambda n: worst_rows[n][0])
        facts.update(exercise_worst_cpu_s=worst_rows[worst_name][0], exercise_worst_name=worst_name)
    lines = [header]
    for name, s in seconds.items():
        row = f"{name:<{width}}  {s:>8.2f}"
        if name in worst_rows:
            cpu, w, code = worst_rows[name]
            row += f"  {cpu:>14.1f}  {w:>6.1f}  {code:>4}"
        lines.append(row)
    lines.append(
        f"check s: a correct solution's whole check (median of {runs}); looping: a solution that loops in "
        "every case, the whole command's CPU and wall seconds"
    )
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
    ] + (
        [
            [
                f"a looping solution's whole check, CPU (worst: {f['exercise_worst_name']})",
                f"<= {WORST_GOAL_S:g} s",
                f"{f['exercise_worst_cpu_s']:.1f} s",
                f["exercise_worst_cpu_s"] <= WORST_GOAL_S,
            ]
        ]
        if "exercise_worst_cpu_s" in f
        else []
    )
