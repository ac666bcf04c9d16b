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
    """The command exits 2 with one line of error naming ``says`` (then, for an expression, the expression
    and a caret under the place, indented), never a traceback; returns what it wrote to standard error."""
    status, _, err = main(args, capsys)
    assert status == 2, err
    first, *excerpt = err.splitlines()
    assert first.startswith("micrograph: error: ") and says in first, err
    assert len(excerpt) in (0, 2) and all(line.startswith("  ") for line in excerpt), err
    return err
