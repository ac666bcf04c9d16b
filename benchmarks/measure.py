"""How the benchmark measures: every measurement in a fresh interpreter, its figures as one JSON line.

:func:`run_worker` runs ``benchmarks/run.py --worker KIND ...`` in a new process (so no run inherits
another's heap or garbage-collector state) and reads the JSON object it prints; :func:`table` lays the
figures out as a Markdown table.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RUN = Path(__file__).resolve().parent / "run.py"


def run_worker(args: list[str], timeout: float = 1800, python: str | None = None) -> dict[str, Any]:
    """Run ``run.py --worker ...`` in a fresh interpreter (``python``, default this one); return its JSON."""
    cmd = [python or sys.executable, str(RUN), "--worker", *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"worker {' '.join(args)} failed:\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def command_seconds(argv: Sequence[str], out: str) -> float:
    """Seconds of ``python -m micrograph ARGV --out OUT`` in a fresh process, as a user types it (this
    checkout first on its path, OUT a file of a temporary directory).

    Raises:
        RuntimeError: the command failed (its message is micrograph's).
    """
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        t0 = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "micrograph", *argv, "--out", str(Path(tmp) / out)],
            capture_output=True, text=True, env=env, timeout=600, check=False,
        )  # fmt: skip
        seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"micrograph {argv[0]} failed: {done.stderr.strip()}")
    return seconds


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = ["| " + " | ".join(str(c).rjust(w) for c, w in zip(r, widths)) + " |" for r in rows]
    return "\n".join([line, sep, *body])
