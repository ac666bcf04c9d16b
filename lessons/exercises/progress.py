"""The student's own record of their exercises, in ``.micrograph-progress.json`` in the current directory.

It is a record for self-study, not a grade: the student's own machine writes it and the student can edit
it. A course grades with the platform outputs of ``micrograph exercise check --format gradescope`` or
``--format prairielearn``, which the judge computes from the solution itself.

The file sits with the student's exercise files, is small JSON, and is read by ``micrograph exercise list``.
Only the judging process writes it (never the process that runs the student's code), under an exclusive
lock on a lock file beside it (mode 0600: a solution that runs as another user cannot open it), reading the
file again inside the lock, so checks run at the same time in one directory lose nothing. The lock is
waited for at most :data:`LOCK_TIMEOUT` seconds: a process of the student's that holds it (``flock`` needs
only a read-only open) cannot stop a check from ending. The file is written atomically, never through a
symlink, and keeps its permission bits. Its form::

    {"version": 2, "exercises": {"backprop": {"passed": true, "last": "failed", "score": 9.0,
     "max_score": 12.0, "when": "2026-11-23T01:00:00Z", "checks": 12, "sha256": "..."}}}

``last``, ``score`` and ``sha256`` are the latest verdict and the hash of the solution it was given;
``passed`` says a check passed at least once (then or earlier).

Every read is bounded (:data:`MAX_BYTES`, :data:`MAX_DEPTH`, regular files only) and checked against this
form. A file that fails is never replaced: :func:`read` and :func:`record` raise :class:`ProgressError`
with one line saying which file and why, so a verdict is never lost silently.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from lessons.exercises.jsonfile import JSONFileError, read_json
from viz.files import write_atomic

__all__ = ["PROGRESS_FILE", "ProgressError", "read", "record", "LOCK_TIMEOUT", "MAX_BYTES", "MAX_DEPTH"]

PROGRESS_FILE = ".micrograph-progress.json"

MAX_BYTES = 1024 * 1024
"""The largest progress file read (seven exercises take about 2 KB)."""

MAX_DEPTH = 8
"""The deepest nesting read (the file's form is 3 deep)."""

LOCK_TIMEOUT = 5.0
"""Seconds a check waits for the lock before saying that its verdict was not recorded."""

_POLL = 0.05


class ProgressError(Exception):
    """The progress file cannot be read or written; the message is one line naming the file and why."""


def _path(directory: str | os.PathLike[str] | None) -> Path:
    return Path(directory if directory is not None else ".") / PROGRESS_FILE


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` + ``.lock`` (POSIX ``flock``), waited for at most LOCK_TIMEOUT s.

    Raises:
        ProgressError: the lock file cannot be opened (a symlink, not a regular file, no permission) or
            another process holds the lock longer than :data:`LOCK_TIMEOUT`.
    """
    try:
        import fcntl
    except ImportError:  # no flock (Windows): the atomic write alone
        yield
        return
    lock = path.with_name(path.name + ".lock")
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(lock, flags, 0o600)
    except OSError as e:
        why = "it is a symbolic link" if e.errno == errno.ELOOP else (e.strerror or str(e))
        raise ProgressError(f"cannot open the lock file {lock}: {why}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ProgressError(f"the lock file {lock} is not a regular file")
        if stat.S_IMODE(st.st_mode) & 0o077 and st.st_uid == os.geteuid():
            os.fchmod(fd, 0o600)  # a lock file of an earlier version, open to others: made private
        deadline = time.monotonic() + LOCK_TIMEOUT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise ProgressError(
                        f"another process has held the lock {lock} for {LOCK_TIMEOUT:g} s"
                    ) from None
                time.sleep(_POLL)
        yield
    finally:
        os.close(fd)


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


_FIELDS: dict[str, Callable[[Any], bool]] = {
    "passed": lambda v: isinstance(v, bool),
    "last": lambda v: v in ("passed", "failed"),
    "score": lambda v: _number(v) and v >= 0,
    "max_score": lambda v: _number(v) and v >= 0,
    "when": lambda v: isinstance(v, str) and len(v) <= 64,
    "checks": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
    "sha256": lambda v: isinstance(v, str) and len(v) <= 128,
}
"""Each field of an exercise's entry and the test its value passes; ``passed`` is required."""


def _checked(data: Any) -> dict[str, dict[str, Any]]:
    """The entries of a parsed progress file, or a ValueError saying what breaks the form."""
    if not isinstance(data, dict):
        raise ValueError(f"a JSON {type(data).__name__}, not an object")
    version = data.get("version")
    if isinstance(version, bool) or version not in (1, 2):
        raise ValueError(f"version {str(version)[:20]!r}, not 1 or 2")
    exercises = data.get("exercises")
    if not isinstance(exercises, dict):
        raise ValueError('no "exercises" object')
    for name, entry in exercises.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("passed"), bool):
            raise ValueError(f"the entry of {name[:40]!r} has no passed: true or false")
        for key, valid in _FIELDS.items():
            if key in entry and not valid(entry[key]):
                raise ValueError(f"the entry of {name[:40]!r} has a bad {key!r}: {str(entry[key])[:40]!r}")
    return exercises


def read(directory: str | os.PathLike[str] | None = None) -> dict[str, dict[str, Any]]:
    """{exercise: {"passed", "last", "score", ...}} from the progress file; {} if there is none.

    Args:
        directory: where the file is; the current directory by default.

    Raises:
        ProgressError: the file is there but is not a progress file: a symlink, not a regular file, larger
            than :data:`MAX_BYTES`, nested deeper than :data:`MAX_DEPTH`, not JSON, or not of the form
            above. The message is one line naming the file.
    """
    p = _path(directory)
    try:
        data = read_json(p, max_bytes=MAX_BYTES, max_depth=MAX_DEPTH)
    except FileNotFoundError:
        return {}
    except JSONFileError as e:
        why = e.why
    else:
        try:
            return _checked(data)
        except ValueError as e:
            why = str(e)
    raise ProgressError(
        f"{p} is not a progress file ({why}); move it away and the next check starts a new one"
    )


def record(exercise: str, report: Any, directory: str | os.PathLike[str] | None = None) -> Path:
    """Record a check's verdict as the exercise's latest; ``passed`` stays true once a check passed.

    Args:
        exercise: the exercise's name.
        report: the check's :class:`~lessons.exercises.report.Report` (its verdict, score and hash).
        directory: where the file is; the current directory by default.

    Returns:
        The file written.

    Raises:
        ProgressError: the verdict was not recorded, and the message says why in one line: the file is a
            symlink, is not a progress file (see :func:`read`; it is left as it is, so no earlier verdict is
            lost), the lock was held too long or cannot be opened, or the file cannot be written.
    """
    p = _path(directory)
    if p.is_symlink():
        raise ProgressError(f"{p} is a symbolic link; not writing through it")
    with _locked(p):
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
        except OSError as e:
            raise ProgressError(f"cannot write {p}: {e.strerror or e}") from None
