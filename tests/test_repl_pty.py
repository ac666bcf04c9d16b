"""The lessons in a real pseudo-terminal: ``python -m lessons 2`` with Enter/b/q, and the Python REPL.

pexpect runs the programs under a pty, so ``sys.stdin.isatty()`` is true, exactly as for a student at a
terminal. The same commands without a terminal print every step (tested in test_lessons.py and below).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

ROOT = Path(__file__).resolve().parents[1]
# the pty's own size, not a LINES or COLUMNS of the environment (pytest-xdist's workers set them to 24 x 80)
ENV = {k: v for k, v in os.environ.items() if k not in ("LINES", "COLUMNS")}
ENV.update({"PYTHONPATH": str(ROOT), "TERM": "dumb", "PYTHON_COLORS": "0", "NO_COLOR": "1"})


pytestmark = pytest.mark.slow  # real terminals


def _spawn(*args: str, rows: int = 50) -> pexpect.spawn:
    return pexpect.spawn(
        sys.executable, list(args), cwd=str(ROOT), env=ENV, encoding="utf-8", timeout=60,
        dimensions=(rows, 160),
    )  # fmt: skip


def _ended(child: pexpect.spawn) -> None:
    """The program ends, with exit status 0."""
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_python_m_lessons_steps_with_enter_back_and_quit():
    # a screen that holds a whole step: the pager of a longer step is tests/test_lessons_pager.py's
    child = _spawn("-m", "lessons", "2", rows=200)
    child.expect(r"Step 1: The forward pass has run")
    child.expect_exact("Enter: next step")
    child.sendline("")
    child.expect(r"Step 2: Start the table at the output")
    child.expect_exact("grad_table[u(n)] ← 1")
    child.sendline("")
    child.expect(r"Step 3: Loop, j = 4")
    child.sendline("b")
    child.expect(r"Step 2: Start the table at the output")
    child.sendline("g 1")
    child.expect(r"Step 1: The forward pass has run")
    child.sendline("b")
    child.expect("first step")
    child.sendline("what?")
    child.expect("Enter: next step")
    child.sendline("q")
    _ended(child)


def test_enter_past_the_last_step_ends_the_lesson():
    child = _spawn("-m", "lessons", "6")
    for _ in range(60):  # Enter at every prompt: the next step, or the next screen of a tall one
        child.sendline("")
        if child.expect(["That was the last step", r"-- more|> $"]) == 0:
            break
    else:
        raise AssertionError("Enter never reached the end of the lesson")
    _ended(child)


def test_ctrl_d_quits_cleanly():
    child = _spawn("-m", "lessons", "1")
    child.expect_exact("Enter: next step")
    child.sendeof()
    _ended(child)
    assert "Traceback" not in (child.before or "")


def test_in_the_python_repl():
    child = _spawn("-q", "-i")
    child.expect_exact(">>> ")
    child.sendline("import lessons; l = lessons.start(2)")
    child.expect_exact(">>> ")
    child.sendline("l")
    child.expect(r"Lesson 2: Back-propagation with the grad_table")
    child.expect(r"Step 1: ")
    child.expect_exact(">>> ")
    child.sendline("l.next()")
    child.expect(r"Step 2: ")
    child.expect_exact(">>> ")
    child.sendline("l.grad_table[l.z]")
    child.expect_exact("1.0")
    child.expect_exact(">>> ")
    child.sendline("l.back(); l.back()")
    child.expect("first step")
    child.expect_exact(">>> ")
    child.sendline("l.goto(99)")
    child.expect("there is no step 99")
    child.expect_exact(">>> ")
    child.sendline("exit()")
    _ended(child)


def test_without_a_terminal_every_step_is_printed():
    done = subprocess.run(
        [sys.executable, "-m", "lessons", "2"],
        cwd=ROOT,
        env=ENV,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    assert "Step 1: " in done.stdout and "End of lesson 2" in done.stdout
    assert "[Enter]" not in done.stdout
