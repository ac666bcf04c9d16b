"""The student's own record of their exercises, in ``.micrograph-progress.json`` in the current directory.

It is a record for self-study, not a grade: the student's own machine writes it and the student can edit
it. A course grades with the platform outputs of ``micrograph exercise check --format gradescope`` or
``--format prairielearn``, which the judge computes from the solution itself.

The file sits with the student's exercise files, is small JSON, and is read by ``micrograph exercise list``.
Only the judging process writes it (never the process that runs the student's code), under an exclusive
lock on a lock file beside it, reading the file again inside the lock, so checks run at the same time in one
directory lose nothing; it is written atomically and never through a symlink. Its form::

    {"version": 2, "exercises": {"backprop": {"passed": true, "last": "failed", "score": 9.0,
     "max_score": 12.0, "when": "2026-11-23T01:00:00Z", "checks": 12, "sha256": "..."}}}

``passed`` stays true once a check passed; ``last``, ``score`` and ``sha256`` are the latest verdict and
the hash of the solution it was given.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from viz.render import write_atomic

__all__ = ["PROGRESS_FILE", "read", "record"]

PROGRESS_FILE = ".micrograph-progress.json"


def _path(directory: str | os.PathLike[str] | None) -> Path:
    return Path(directory if directory is not None else ".") / PROGRESS_FILE


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[bool]:
    """An exclusive lock on ``path`` + ``.lock`` (POSIX ``flock``); yields False if it cannot be taken."""
    try:
        import fcntl
    except ImportError:
        yield True
        return
    lock = path.with_name(path.name + ".lock")
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError:
        yield False
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield True
    finally:
        os.close(fd)


def read(directory: str | os.PathLike[str] | None = None) -> dict[str, dict[str, Any]]:
    """{exercise: {"passed", "last", "score", ...}} from the progress file; {} if none or unreadable."""
    p = _path(directory)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    exercises = data.get("exercises") if isinstance(data, dict) else None
    return {k: v for k, v in exercises.items() if isinstance(v, dict)} if isinstance(exercises, dict) else {}


def record(exercise: str, report: Any, directory: str | os.PathLike[str] | None = None) -> Path | None:
    """Record a check's verdict; a pass is kept even if a later check fails ("passed" stays true).

    Args:
        exercise: the exercise's name.
        report: the check's :class:`~lessons.exercises.report.Report` (its verdict, score and hash).
        directory: where the file is; the current directory by default.

    Returns:
        The file written, or None when it could not be (a symlink, an unwritable directory, no lock):
        progress is a convenience and never stops a check.
    """
    p = _path(directory)
    if p.is_symlink():
        return None
    with _locked(p) as locked:
        if not locked:
            return None
        exercises = read(directory)
        old = exercises.get(exercise, {})
        exercises[exercise] = {
            "passed": bool(report.passed or old.get("passed")),
            "last": "passed" if report.passed else "failed",
            "score": report.score,
            "max_score": report.max_score,
            "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "checks": len(report.cases),
            "sha256": report.sha256,
        }
        data = json.dumps({"version": 2, "exercises": exercises}, indent=2, sort_keys=True) + "\n"
        try:
            return write_atomic(p, data.encode("utf-8"))
        except OSError:
            return None
