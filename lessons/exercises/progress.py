"""The student's progress: which exercises passed, in ``.micrograph-progress.json`` in the current directory.

The file sits with the student's exercise files (where ``micrograph exercise start`` writes them), is small
JSON, and is read by ``micrograph exercise list``. It is written atomically and never through a symlink.
Its form: ``{"version": 1, "exercises": {"backprop": {"passed": true, "when": "2026-11-23T01:00:00Z",
"checks": 12}}}``.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from viz.render import write_atomic

__all__ = ["PROGRESS_FILE", "read", "record"]

PROGRESS_FILE = ".micrograph-progress.json"


def _path(directory: str | os.PathLike[str] | None) -> Path:
    return Path(directory if directory is not None else ".") / PROGRESS_FILE


def read(directory: str | os.PathLike[str] | None = None) -> dict[str, dict[str, Any]]:
    """{exercise: {"passed", "when", "checks"}} from the progress file; {} if none or unreadable."""
    p = _path(directory)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    exercises = data.get("exercises") if isinstance(data, dict) else None
    return {k: v for k, v in exercises.items() if isinstance(v, dict)} if isinstance(exercises, dict) else {}


def record(
    exercise: str, passed: bool, checks: int, directory: str | os.PathLike[str] | None = None
) -> Path | None:
    """Record a check's result; a pass is kept even if a later check fails ("passed" stays true).

    Returns:
        The file written, or None when it could not be (a symlink, an unwritable directory): progress is a
        convenience and never stops a check.
    """
    p = _path(directory)
    if p.is_symlink():
        return None
    exercises = read(directory)
    old = exercises.get(exercise, {})
    entry = {
        "passed": bool(passed or old.get("passed")),
        "last": "passed" if passed else "failed",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "checks": checks,
    }
    exercises[exercise] = entry
    data = json.dumps({"version": 1, "exercises": exercises}, indent=2, sort_keys=True) + "\n"
    try:
        return write_atomic(p, data.encode("utf-8"))
    except OSError:
        return None
