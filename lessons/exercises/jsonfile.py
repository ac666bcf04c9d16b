"""Reading a small JSON file that anyone may have written: a regular file, bounded in size and depth.

The progress file (``.micrograph-progress.json``) sits in the student's directory and the class report
reads whatever files a teacher collected, so neither may be trusted to be small, flat or even a file.
:func:`read_json` opens the path without following a symbolic link and without blocking (a FIFO would
otherwise wait for a writer), refuses anything but a regular file (``/dev/zero`` would never end), reads at
most ``max_bytes``, measures how deeply the brackets nest before :func:`json.loads` sees the text (the
parser recurses once per level, so a 100,000-deep file would raise RecursionError), and only then parses.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import errno
import itertools
import json
import os
import re
import stat
from typing import Any

__all__ = ["read_json", "nesting", "JSONFileError"]

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
"""A JSON string, escapes included: brackets inside one do not nest."""

_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
)


class JSONFileError(ValueError):
    """A file that cannot be read as JSON within the limits.

    Attributes:
        path: the file, as given. why: what is wrong with it, a few words (``"not JSON (...)"``,
            ``"nested deeper than 32 levels"``, ``"a FIFO (named pipe), not a regular file"`` ...).
    """

    def __init__(self, path: str | os.PathLike[str], why: str) -> None:
        super().__init__(f"{os.fspath(path)}: {why}")
        self.path = os.fspath(path)
        self.why = why


def _size(n: int) -> str:
    return f"{n // 2**20} MB" if n % 2**20 == 0 else f"{n // 1024} KB" if n % 1024 == 0 else f"{n} bytes"


def nesting(text: str) -> int:
    """How deeply the brackets of a JSON text nest, strings left out (C-speed loops: regex, accumulate)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0)


def _read_bytes(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    except OSError as e:
        if isinstance(e, FileNotFoundError):
            raise
        if e.errno == errno.ELOOP:
            raise JSONFileError(path, "a symbolic link; not followed") from None
        raise JSONFileError(path, f"cannot read it ({e.strerror or e})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((words for test, words in _KINDS if test(mode)), "not a file")
            raise JSONFileError(path, f"{kind}, not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(fd, max_bytes + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as e:
        raise JSONFileError(path, f"cannot read it ({e.strerror or e})") from None
    finally:
        os.close(fd)
    if size > max_bytes:
        raise JSONFileError(path, f"larger than {_size(max_bytes)}")
    return b"".join(chunks)


def read_json(path: str | os.PathLike[str], *, max_bytes: int, max_depth: int) -> Any:
    """The JSON value in the file at ``path``, read within limits.

    Args:
        path: the file. It is opened without following a symbolic link and without blocking.
        max_bytes: the largest file read (a larger one is refused, after reading at most one byte more).
        max_depth: the deepest nesting of arrays and objects accepted (``{"a": [1]}`` is 2 deep).

    Returns:
        The parsed value (dicts, lists, str, int, float, bool, None).

    Raises:
        FileNotFoundError: there is no file at ``path``.
        JSONFileError: anything else: a symbolic link, not a regular file (a directory, a FIFO, a device
            such as ``/dev/zero``), unreadable, larger than ``max_bytes``, not UTF-8, nested deeper than
            ``max_depth``, or not JSON. Its message is one line naming the file.
    """
    data = _read_bytes(path, max_bytes)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise JSONFileError(path, "not text (UTF-8)") from None
    if nesting(text) > max_depth:
        raise JSONFileError(path, f"nested deeper than {max_depth} levels")
    try:
        return json.loads(text)
    except RecursionError:  # a second guard: the parser recurses once per level
        raise JSONFileError(path, f"nested deeper than {max_depth} levels") from None
    except ValueError as e:
        raise JSONFileError(path, f"not JSON ({str(e).splitlines()[0]})") from None
