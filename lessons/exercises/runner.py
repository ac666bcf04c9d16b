"""Running a student's solution in a child process with a time limit.

The whole check runs in a child process (``multiprocessing`` with the ``fork`` start method where the
system has it, so a function typed in a REPL or a notebook is there without being pickled): loading the
student's file, their code, the engine's answer key and the drawing. The child reports each case as it
starts; the parent restarts its clock at each, and stops the child when one case runs longer than the time
limit (an infinite loop), reporting which case it was. If the child dies (``os._exit``, a crash), that is
reported too. Only plain data comes back (:class:`~lessons.exercises.report.Failure` is strings and numbers).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import contextlib
import importlib.util
import multiprocessing
import os
import sys
import time
import traceback
import types
from pathlib import Path
from typing import Any

from lessons.exercises.checking import Checker, Fail, student_traceback
from lessons.exercises.report import Failure

__all__ = ["run", "load_file", "TIME_LIMIT"]

TIME_LIMIT = 3.0
"""Seconds one case may run before the solution is stopped (a correct solution needs a small fraction)."""


def load_file(path: str | os.PathLike[str], exercise: str) -> types.ModuleType:
    """Import the student's file as a module (in the child process: its top-level code runs there).

    Raises:
        Fail: the file could not be read or raised while it was imported (its traceback attached).
    """
    p = Path(path)
    spec = importlib.util.spec_from_file_location(f"micrograph_exercise_{exercise}", p)
    if spec is None or spec.loader is None:
        raise Fail(Failure(f"loading {p.name}", f"{p} cannot be imported as a Python file.", mistake="load"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        with contextlib.redirect_stdout(sys.stderr):  # the student's prints never mix with --json output
            spec.loader.exec_module(module)
    except SyntaxError as e:
        lines = "".join(traceback.format_exception_only(type(e), e))
        raise Fail(
            Failure(
                f"loading {p.name}",
                f"{p.name} has a syntax error (line {e.lineno}).",
                mistake="syntax",
                traceback=lines,
            )
        ) from None
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        raise Fail(
            Failure(
                f"loading {p.name}",
                f"importing {p.name} raised {type(e).__name__}: {e}",
                mistake="load",
                traceback=student_traceback(e),
            )
        ) from None
    return module


def _child(conn: Any, exercise: str, solution: Any, is_path: bool) -> None:
    from lessons.exercises.checks import CHECKERS

    checker = Checker(progress=lambda name: conn.send(("case", name)))
    failure: Failure | None = None
    try:
        ns = load_file(solution, exercise) if is_path else solution
        CHECKERS[exercise](ns, checker)
    except Fail as e:
        failure = e.failure
        if not failure.case:
            failure.case = checker.current
    except BaseException as e:
        failure = Failure(
            checker.current or "checking",
            f"the checker failed: {type(e).__name__}: {e}",
            mistake="checker-error",
            traceback="".join(traceback.format_exception(e)),
        )
    conn.send(("done", checker.checks, failure))
    conn.close()


def _context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


def run(
    exercise: str, solution: Any, *, is_path: bool, time_limit: float = TIME_LIMIT
) -> tuple[list[tuple[str, bool]], Failure | None, float]:
    """Check ``solution`` for ``exercise`` in a child process.

    Args:
        exercise: the exercise's name.
        solution: a path to the student's file (``is_path``), or the namespace holding their function(s).
        is_path: whether ``solution`` is a path.
        time_limit: seconds one case may take.

    Returns:
        ``(checks, failure, seconds)``: the cases run and whether each passed, the first failure (None if
        every case passed), the wall time.
    """
    start = time.monotonic()
    ctx = _context()
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, exercise, solution, is_path), daemon=True)
    proc.start()
    send.close()
    checks: list[tuple[str, bool]] = []
    case = "loading the solution"
    deadline = time.monotonic() + time_limit
    failure: Failure | None = None
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not receive.poll(remaining):
                failure = Failure(
                    case,
                    f"the solution was stopped after {time_limit:g} s on this case: it did not return.",
                    details=[
                        "An infinite loop (a while loop whose condition never changes, an index that never "
                        "reaches its end), or work that grows exponentially (every path recomputed)."
                    ],
                    mistake="timeout",
                )
                if checks and checks[-1][0] == case:
                    checks[-1] = (case, False)
                else:
                    checks.append((case, False))
                break
            try:
                message = receive.recv()
            except EOFError:
                proc.join(2.0)
                failure = Failure(
                    case,
                    f"the process running the solution ended (exit code {proc.exitcode}) "
                    "without finishing the check: the solution called os._exit or crashed Python.",
                    mistake="crash",
                )
                checks.append((case, False))
                break
            if message[0] == "case":
                case = message[1]
                deadline = time.monotonic() + time_limit
            else:
                _, checks, failure = message
                break
    finally:
        receive.close()
        proc.join(0.5)
        if proc.is_alive():
            proc.terminate()
            proc.join(1.0)
            if proc.is_alive():
                proc.kill()
                proc.join()
    return checks, failure, time.monotonic() - start
