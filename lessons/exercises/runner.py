"""The judge's side of the wall: runs a student's solution in a separate interpreter, one case at a time.

The solution runs in :mod:`lessons.exercises.child`, started with ``subprocess`` as a fresh interpreter (not
a fork: nothing of the judge is in its memory) from the check's private directory
(:mod:`lessons.exercises.sandbox`), as a user of its own where the judge is root. The runner sends each case
as one JSON line and reads one JSON line back; everything else the child does is watched from here and
limited from here, where the child cannot reach:

* **CPU time**, read from the kernel's accounting of every process of the solution
  (:mod:`lessons.exercises.processes`), so a loaded machine, which slows the wall clock, does not fail a
  correct solution: a limit per case (each case's own, scaled to its size) and a **budget for the whole
  check** (:data:`BUDGET`), after which the remaining cases are not run and score 0, so the worst solution's
  whole check fits a grading platform's time limit;
* **waiting**: time the solution spends neither running nor waiting for a processor (``time.sleep``) counts
  against the budget too, and a case that waits :data:`WAIT_LIMIT` seconds is stopped; a wall-clock limit for
  the whole check, on the runner's own clock, bounds everything else;
* **memory**, the resident size of all the solution's processes (and a hard address-space limit in each);
* **processes**: whatever the solution starts is killed at the end of every case and no later than the end
  of the check, orphans included (the judge is a subreaper and not dumpable); a signal that stops the check
  (SIGTERM, SIGINT) kills them too, and the cases not run yet are reported as such;
* **output**: the child's standard output and error are read continuously and kept capped (the first and
  last lines, with how many were cut), so a print loop neither blocks the child nor floods the report;
* **answers**: one line per request, of at most :data:`MAX_ANSWER` bytes, with the request's id; anything
  else ends the case as a protocol failure.

When a case is stopped (a limit, a crash, ``os._exit``, a broken answer), the child is killed with all its
processes and a new one is started for the next case, so every case runs and is scored. The same
request-answer protocol can be spoken by a Web Worker in a browser: the judge only needs :meth:`Runner.run`.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from lessons.exercises.jsonfile import nesting
from lessons.exercises.limits import MAX_ANSWER, MAX_NESTING, Budget, IsolationError, Limits, Output, Stop
from lessons.exercises.processes import Tree, protect_judge
from lessons.exercises.sandbox import Sandbox, fresh_uid, numpy_path, view
from lessons.exercises.watch import Watch

__all__ = ["Runner", "stop_on_signals"]

_POLL = 0.02


class _Child:
    """One interpreter running the student's code, with its pipes and the processes it starts."""

    def __init__(self, exercise: str, limits: Limits, output: Output, sandbox: Sandbox, token: str) -> None:
        numpy = numpy_path() if sandbox.numpy else None  # out of sight for an exercise that refuses it
        read_answers, write_answers = os.pipe()
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")}
        env["PYTHONHASHSEED"] = "0"
        env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = "1"
        env["TMPDIR"] = env["HOME"] = str(sandbox.tmp)
        name, _, value = token.partition("=")
        env[name] = value
        argv = [
            sys.executable,
            "-I",
            "-S",
            "-B",
            str(sandbox.child),
            str(sandbox.lib),
            exercise,
            str(write_answers),
            str(4 * limits.memory),
            str(int(limits.wall) + 5),
            "-" if sandbox.uid is None else str(sandbox.uid),
            json.dumps(view(sandbox, limits.isolated, numpy)),
            *([numpy] if numpy else []),
        ]
        self.tree = Tree(token, sandbox.uid)
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pass_fds=(write_answers,),
                env=env,
                cwd=str(sandbox.tmp),
                start_new_session=True,
            )
        except OSError as e:
            os.close(read_answers)
            os.close(write_answers)
            raise IsolationError(
                f"cannot start Python ({sys.executable}) to run the solution: {e.strerror or e}"
            ) from None
        self.tree.follow(self.proc.pid)
        os.close(write_answers)
        self.answers = read_answers
        self.output = output
        self.buffer = bytearray()
        self.killed = False
        assert self.proc.stdin is not None and self.proc.stdout is not None
        for f in (self.proc.stdin.fileno(), self.proc.stdout.fileno(), read_answers):
            os.set_blocking(f, False)

    def kill(self) -> None:
        """Kill the child and every process it started; close the pipes."""
        self.killed = True
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.tree.kill()
        self.proc.kill()
        self.proc.wait()
        self.tree.kill()  # what started while the child was dying
        self._drain()
        for f in (self.proc.stdin, self.proc.stdout):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass
        try:
            os.close(self.answers)
        except OSError:
            pass

    def end_case(self) -> None:
        """Kill every process the solution started during the case; the child itself serves the next."""
        self.tree.kill(keep_root=True)

    def _drain(self) -> None:
        out = self.proc.stdout
        if out is None or out.closed:
            return
        while True:
            try:
                data = os.read(out.fileno(), 65536)
            except (BlockingIOError, OSError):
                return
            if not data:
                return
            self.output.feed(data)

    def exchange(self, message: dict[str, Any], watch: Watch) -> dict[str, Any] | Stop:
        """Send one request and wait for its answer, within the limits; the answer, or why there is none."""
        if self._answered_ahead():
            return Stop(
                "protocol", "the process running the solution answered a question before it was asked"
            )
        data = (json.dumps(message, allow_nan=True) + "\n").encode("utf-8")
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(self.answers, selectors.EVENT_READ, "answer")
        sel.register(stdout.fileno(), selectors.EVENT_READ, "output")
        sel.register(stdin.fileno(), selectors.EVENT_WRITE, "request")
        watch.start(self)
        sent = 0
        try:
            while True:
                for key, _ in sel.select(_POLL):
                    if key.data == "request":
                        sent += self._write(stdin.fileno(), data[sent:])
                        if sent >= len(data):
                            sel.unregister(stdin.fileno())
                    elif key.data == "output":
                        if not self._read_output(stdout.fileno()):
                            sel.unregister(stdout.fileno())
                    else:
                        answer = self._read_answer(message.get("id"))
                        if answer is not None:
                            watch.check(self, final=True)
                            return answer
                stop = watch.check(self)
                if stop is not None:
                    return stop
        finally:
            sel.close()

    def _answered_ahead(self) -> bool:
        """Whether an answer waits before its question is sent (written ahead, its time not measured)."""
        try:
            data = os.read(self.answers, 1 << 20)
        except (BlockingIOError, InterruptedError):
            data = b""
        except OSError:
            return False
        self.buffer += data
        return bool(self.buffer)

    @staticmethod
    def _write(fd: int, data: bytes) -> int:
        try:
            return os.write(fd, data[:65536])
        except (BlockingIOError, InterruptedError):
            return 0
        except BrokenPipeError:
            return len(data)  # the child is gone: its end of the answer pipe says so

    def _read_output(self, fd: int) -> bool:
        try:
            data = os.read(fd, 65536)
        except (BlockingIOError, InterruptedError):
            return True
        if data:
            self.output.feed(data)
        return bool(data)

    def _read_answer(self, want: Any) -> dict[str, Any] | Stop | None:
        try:
            data = os.read(self.answers, 1 << 20)
        except (BlockingIOError, InterruptedError):
            return None
        if not data:
            self.proc.wait()
            self._drain()
            code = self.proc.returncode
            how = f"was killed by signal {-code}" if code < 0 else f"ended (exit code {code})"
            return Stop("crash", f"the process running the solution {how} without answering")
        self.buffer += data
        if len(self.buffer) > MAX_ANSWER:
            return Stop("large", f"the solution's answer is larger than {MAX_ANSWER >> 20} MiB")
        if b"\n" not in self.buffer:
            return None
        line, _, rest = bytes(self.buffer).partition(b"\n")
        self.buffer = bytearray(rest)
        if nesting(line.decode("utf-8", errors="replace")) > MAX_NESTING:
            return Stop(
                "protocol",
                f"the process running the solution sent an answer nested more than {MAX_NESTING} levels deep",
            )
        try:
            answer = json.loads(line)
        except (ValueError, RecursionError):
            return Stop("protocol", "the process running the solution sent something that is not an answer")
        if not isinstance(answer, dict) or answer.get("id") != want:
            return Stop("protocol", "the process running the solution sent an answer to a question not asked")
        return answer


_ACTIVE: set[Runner] = set()
_ACTIVE_LOCK = threading.Lock()


def _on_signal(signum: int, frame: Any) -> None:
    with _ACTIVE_LOCK:
        runners = list(_ACTIVE)
    for runner in runners:
        runner.interrupt(signal.Signals(signum).name)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """While inside: SIGTERM and SIGINT (what ``timeout``, a grading platform and Ctrl-C send) stop every
    running check: the solution's processes are killed, the cases not run yet are reported as such, and
    the check returns its report. Only in the main thread (elsewhere it does nothing)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.signal(s, _on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


class Runner:
    """Runs one solution, case by case, in a child interpreter that it restarts after a stopped case.

    Args:
        exercise: the exercise's name (which modules the child blocks, which call it makes, whether it gives
            the solution micrograph's nodes and numpy: :class:`Sandbox`).
        source: the solution's source text. filename: its name in tracebacks.
        limits: the check's :class:`Limits`.

    Use as a context manager, or call :meth:`close`: nothing the solution started outlives it.

    Creating a Runner makes the calling process (the judge: the command, or a Python session that calls
    ``exercises.check``) not dumpable and a child subreaper for the rest of its life (Linux): no process of
    its user can then trace it or open its descriptors, and orphans of the processes it starts are
    re-parented to it, which reaps those it kills.
    """

    def __init__(self, exercise: str, source: str, filename: str, limits: Limits) -> None:
        self.exercise = exercise
        self.source = source
        self.filename = filename
        self.limits = limits
        self.budget = Budget(limits, time.monotonic())
        self.output = Output()
        self.child: _Child | None = None
        self.loaded: dict[str, Any] | Stop | None = None
        self.counter = 0
        self.question: dict[str, Any] = {"source": source, "filename": filename}
        self.interrupted = ""
        protect_judge()
        root = sys.platform.startswith("linux") and hasattr(os, "geteuid") and os.geteuid() == 0
        from lessons.exercises import EXERCISES  # what the exercise gives: micrograph's nodes, numpy

        given = EXERCISES[exercise].judging
        numpy = "numpy" in given.imports.modules
        self.sandbox = Sandbox(fresh_uid() if root else None, given.nodes, numpy)
        self.token = f"MICROGRAPH_CHECK={secrets.token_hex(16)}"
        with _ACTIVE_LOCK:
            _ACTIVE.add(self)

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Stop the child and every process it started; remove its files."""
        with _ACTIVE_LOCK:
            _ACTIVE.discard(self)
        if self.child is not None:
            self.child.kill()
            self.child = None
        self.sandbox.close()
        self.output.close()

    def interrupt(self, why: str) -> None:
        """Stop the check now (a signal): kill the solution's processes; the cases left are not run."""
        self.interrupted = self.interrupted or why
        child = self.child
        if child is not None:
            try:
                os.killpg(child.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            child.tree.kill(rounds=5)

    def load(self, question: dict[str, Any] | None = None) -> dict[str, Any] | Stop:
        """Start a child and load the solution in it: its answer (``ok``, or the error), or a Stop.

        Args:
            question: the judge's load question (the source, its file name, the exercise's allow-list of
                imports ...), kept for the reloads after a stopped case; by default the source and its name.
        """
        if question is not None:
            self.question = dict(question)
        if self.child is not None:
            self.child.kill()
            self.child = None
        refused = self._refused()
        if refused is not None:
            return refused
        self.child = _Child(self.exercise, self.limits, self.output, self.sandbox, self.token)
        enclosed = self._exchange(
            {**self.question, "op": "enclose"},
            cpu=max(self.limits.cpu, 5.0),
            wait=max(self.limits.wait, 10.0),
        )
        if isinstance(enclosed, Stop):  # stopped, or out of time, before the solution was loaded
            self.loaded = enclosed
            return enclosed
        if not enclosed.get("ok"):  # a refusal written before any of the solution's code ran
            error = enclosed.get("error")
            why = error.get("message") if isinstance(error, dict) else None
            raise IsolationError(str(why or "the solution's process could not be enclosed"))
        answer = self._exchange(
            {**self.question, "op": "load"},
            cpu=min(self.budget.remaining, max(self.limits.cpu, 5.0)),
            wait=max(self.limits.wait, 10.0),
        )
        self.loaded = answer
        return answer

    def _refused(self) -> Stop | None:
        return self.budget.refused(time.monotonic(), self.interrupted)

    def run(self, request: dict[str, Any], cpu: float = 0.0) -> dict[str, Any] | Stop:
        """One case: the solution's answer as plain data, or a :class:`Stop` saying why there is none.

        Args:
            request: the case as plain data; its key ``cpu``, if any, is the case's CPU seconds and is not
                sent; nor is ``timed``: when true, the answer's ``seconds`` is the CPU time of the exchange
                measured here (:attr:`Watch.seconds`), whatever the solution's side sent.
                cpu: the case's CPU seconds (0: the limits' ``cpu``); the case gets at most the limits'
                ``cpu`` and what is left of the budget.
        """
        request = dict(request)
        cpu = float(request.pop("cpu", 0.0) or cpu)
        timed = bool(request.pop("timed", False))
        refused = self._refused()
        if refused is not None:
            return refused
        if self.child is None:
            loaded = self.load()
            if isinstance(loaded, Stop) or not loaded.get("ok"):
                return (
                    loaded
                    if isinstance(loaded, Stop)
                    else Stop("crash", "the solution could not be loaded again")
                )
            refused = self._refused()
            if refused is not None:
                return refused
        return self._exchange(
            {"op": "case", **request},
            cpu=self.budget.case_seconds(cpu),
            wait=self.limits.wait,
            timed=timed,
        )

    def _exchange(
        self, message: dict[str, Any], *, cpu: float, wait: float, timed: bool = False
    ) -> dict[str, Any] | Stop:
        assert self.child is not None
        self.counter += 1
        message["id"] = self.counter
        watch = Watch(self, cpu, wait)
        answer = self.child.exchange(message, watch)
        if timed and isinstance(answer, dict):
            answer["seconds"] = watch.seconds
        if isinstance(answer, Stop) or self.interrupted:
            self.child.kill()
            self.child = None
            if self.interrupted and not isinstance(answer, Stop):
                answer = Stop("stopped", f"the check was stopped ({self.interrupted})")
        else:
            self.child.end_case()
        return answer
