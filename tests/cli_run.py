"""The command line run in this process, as the tests of its edges call it: its exit status and what it
printed, and the check that a mistake is refused the project's way."""

from __future__ import annotations

import pytest

from lessons import cli


def main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``micrograph ARGS...`` in this process: its exit status, standard output and standard error."""
    status = cli.main(args)
    out, err = capsys.readouterr()
    return status, out, err


def refused(args: list[str], capsys: pytest.CaptureFixture[str], says: str) -> str:
    """The command exits 2 with one line of error naming ``says``, never a traceback; returns what it wrote
    to standard error."""
    status, _, err = main(args, capsys)
    assert status == 2, err
    first, *more = err.splitlines()
    assert first.startswith("micrograph: error: ") and says in first and not more, err
    return err
