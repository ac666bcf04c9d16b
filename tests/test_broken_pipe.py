"""The ``micrograph`` command when its standard output closes early (``micrograph lesson 2 | head -3``).

A reader that goes away is not an error of the user's: the command prints nothing on stderr and exits
with status 141, as a program killed by SIGPIPE (the note on SIGPIPE in Python's ``signal`` docs).
Each test runs the command in a child process on a real pipe.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
SIGPIPE_STATUS = 141

COMMANDS = [
    ["lesson", "2"],
    ["lesson", "1", "--expr", "x*y + exp(x)", "--at", "x=1", "--at", "y=2"],
    ["lesson"],
    ["--help"],
    ["render", "--help"],
    ["--version"],
]


def run_with_closed_reader(args: list[str]) -> tuple[int, str]:
    """Run ``python -m micrograph ARGS`` with a pipe as stdout whose reading end is closed at once."""
    p = subprocess.Popen(
        [sys.executable, "-m", "micrograph", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        cwd=ROOT,
    )
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()  # the reader goes away before the first line is written
    err = p.stderr.read().decode("utf-8", "replace")
    return p.wait(timeout=120), err


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a) for a in COMMANDS])
def test_a_closed_stdout_is_quiet_and_exits_as_sigpipe(args: list[str]) -> None:
    status, err = run_with_closed_reader(args)
    assert err == ""
    assert status == SIGPIPE_STATUS


def test_lesson_2_into_head() -> None:
    python = shlex.quote(sys.executable)
    command = f"{python} -m micrograph lesson 2 | head -3; echo status=${{PIPESTATUS[0]}} >&2"
    r = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=120
    )
    lines = r.stdout.splitlines()
    assert len(lines) == 3
    assert lines[1].startswith("Lesson 2:")
    # head may close the pipe before or after micrograph's last write: both end quietly
    assert r.stderr.strip() in (f"status={SIGPIPE_STATUS}", "status=0")


def test_errors_still_reach_stderr_with_a_closed_stdout() -> None:
    status, err = run_with_closed_reader(["lesson", "99"])
    assert status == 2
    assert err.startswith("micrograph: error:") and err.count("\n") == 1
