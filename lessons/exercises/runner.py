"""The judge's side of the wall: runs a student's solution in a separate interpreter, one case at a time.

The solution runs in :mod:`lessons.exercises.child`, started with ``subprocess`` as a fresh interpreter (not
a fork: nothing of the judge is in its memory). The runner sends each case as one JSON line and reads one
JSON line back; everything else the child does is watched from here and limited from here, where the child
cannot reach:

* **CPU time per case**, read from the kernel's accounting of the child (``/proc/PID/stat``), so a loaded
  machine, which slows the wall clock, does not fail a correct solution; where there is no ``/proc``, the
  wall clock of the case stands in;
* **a wall-clock limit for the whole check**, on the runner's own clock (no message from the child moves
  it), and a wall-clock limit per case that catches a solution that waits (``time.sleep``) instead of
  computing;
* **memory**, the child's resident size read the same way (and a hard address-space limit set in the child);
* **output**: the child's standard output and error are read continuously and kept capped (the first and
  last lines, with how many were cut), so a print loop neither blocks the child nor floods the report;
* **answers**: one line per request, of at most :data:`MAX_ANSWER` bytes, with the request's id; anything
  else ends the case as a protocol failure.

When a case is stopped (a limit, a crash, ``os._exit``, a broken answer), the child is killed with its whole
process group and a new one is started for the next case, so every case runs and is scored. The same
request-answer protocol can be spoken by a Web Worker in a browser: the judge only needs :meth:`Runner.run`.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import collections
import itertools
import json
import os
import re
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Limits", "Stop", "Runner", "Output", "TIME_LIMIT", "WALL_LIMIT", "MEMORY_LIMIT", "MAX_ANSWER"]

TIME_LIMIT = 3.0
"""CPU seconds one case may use (a correct solution needs a small fraction of a second)."""

WALL_LIMIT = 120.0
"""Wall-clock seconds the whole check may take, however busy the machine."""

MEMORY_LIMIT = 1 << 30
"""Bytes of resident memory the child may use (1 GiB)."""

MAX_ANSWER = 64 << 20
"""Bytes one answer may have (a grad_table of a million entries fits)."""

MAX_NESTING = 100
"""Levels of brackets one answer may nest (an answer nests fewer than 50; json.loads recurses per level)."""

_ROOT = str(Path(__file__).resolve().parent.parent.parent)
_CHILD = str(Path(__file__).resolve().with_name("child.py"))
_POLL = 0.02


@dataclass(frozen=True)
class Limits:
    """The limits of one check.

    Attributes:
        cpu: CPU seconds per case (> 0).
        wall: wall-clock seconds for the whole check (> 0).
        memory: bytes of resident memory (>= 64 MiB).
        case_wall: wall-clock seconds per case; by default ten times ``cpu``, at least 10 s.

    Raises:
        ValueError: a limit that is not a finite positive number, or is out of range.
    """

    cpu: float = TIME_LIMIT
    wall: float = WALL_LIMIT
    memory: int = MEMORY_LIMIT
    case_wall: float = 0.0

    def __post_init__(self) -> None:
        for name, value, top in (("cpu", self.cpu, 3600.0), ("wall", self.wall, 86400.0)):
            if not (isinstance(value, (int, float)) and 0 < value <= top):
                raise ValueError(
                    f"the {name} time limit must be a number of seconds in (0, {top:g}], got {value!r}"
                )
        if not (isinstance(self.memory, int) and 64 << 20 <= self.memory <= 1 << 40):
            raise ValueError(
                f"the memory limit must be between 64 MiB and 1 TiB in bytes, got {self.memory!r}"
            )
        if not self.case_wall:
            object.__setattr__(self, "case_wall", max(10.0, 10 * self.cpu))


@dataclass(frozen=True)
class Stop:
    """Why a case got no answer: ``cpu``, ``wait``, ``wall``, ``memory``, ``crash``, ``protocol``, ``large``.

    Attributes:
        kind: the reason. detail: a sentence for the report. seconds: the CPU (or wall) seconds used.
    """

    kind: str
    detail: str
    seconds: float = 0.0


@dataclass
class Output:
    """What the solution printed, capped: the first and the last lines, and how many were cut."""

    head: list[str] = field(default_factory=list)
    tail: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=20))
    lines: int = 0
    size: int = 0
    _partial: bytes = b""

    KEEP = 20
    WIDTH = 200

    def feed(self, data: bytes) -> None:
        self.size += len(data)
        *complete, self._partial = (self._partial + data).split(b"\n")
        if len(self._partial) > 4 * self.WIDTH:
            complete.append(self._partial)
            self._partial = b""
        for raw in complete:
            self._add(raw)

    def _add(self, raw: bytes) -> None:
        line = raw.decode("utf-8", errors="replace")
        if len(line) > self.WIDTH:
            line = line[: self.WIDTH] + "…"
        self.lines += 1
        if len(self.head) < self.KEEP:
            self.head.append(line)
        else:
            self.tail.append(line)

    def close(self) -> None:
        if self._partial:
            self._add(self._partial)
            self._partial = b""

    @property
    def cut(self) -> int:
        """How many lines are in neither the head nor the tail."""
        return self.lines - len(self.head) - len(self.tail)

    def text(self) -> str:
        """The kept lines, with a line saying how many were cut between them."""
        middle = [f"... {self.cut:,} more line(s) not shown ..."] if self.cut else []
        return "\n".join([*self.head, *middle, *self.tail])


def _proc_stat(pid: int) -> tuple[float, int] | None:
    """(CPU seconds, resident bytes) of a process from /proc, or None where there is no /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks, int(fields[21]) * os.sysconf("SC_PAGE_SIZE")


_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_STEP = [1 if c in b"[{" else -1 if c in b"]}" else 0 for c in range(256)]
_NOT_BRACKETS = bytes(c for c in range(256) if not _STEP[c])


def _nesting(line: bytes) -> int:
    """How deeply the brackets of a JSON line nest (those inside its strings left out), without parsing it."""
    brackets = _STRING.sub(b"", line).translate(None, _NOT_BRACKETS)
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0)


class _Child:
    """One interpreter running the student's code, with its pipes."""

    def __init__(self, exercise: str, limits: Limits, output: Output) -> None:
        read_answers, write_answers = os.pipe()
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT", "TMPDIR")}
        env["PYTHONHASHSEED"] = "0"
        env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = "1"
        cpu_cap = int(limits.wall) + 5
        argv = [
            sys.executable,
            "-I",
            "-B",
            _CHILD,
            _ROOT,
            exercise,
            str(write_answers),
            str(4 * limits.memory),
            str(cpu_cap),
        ]
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=(write_answers,),
            env=env,
            cwd=os.path.abspath(os.sep),
            start_new_session=True,
        )
        os.close(write_answers)
        self.answers = read_answers
        self.output = output
        self.buffer = bytearray()
        assert self.proc.stdin is not None and self.proc.stdout is not None
        for f in (self.proc.stdin.fileno(), self.proc.stdout.fileno(), read_answers):
            os.set_blocking(f, False)

    def kill(self) -> None:
        """Kill the child and its process group; close the pipes."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.kill()
        self.proc.wait()
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

    def exchange(self, message: dict[str, Any], limits: Limits, deadline: float) -> dict[str, Any] | Stop:
        """Send one request and wait for its answer, within the limits; the answer, or why there is none."""
        data = (json.dumps(message, allow_nan=True) + "\n").encode("utf-8")
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(self.answers, selectors.EVENT_READ, "answer")
        sel.register(stdout.fileno(), selectors.EVENT_READ, "output")
        sel.register(stdin.fileno(), selectors.EVENT_WRITE, "request")
        start = time.monotonic()
        stat = _proc_stat(self.proc.pid)
        cpu0 = stat[0] if stat else 0.0
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
                            return answer
                stop = self._watch(limits, deadline, start, cpu0)
                if stop is not None:
                    return stop
        finally:
            sel.close()

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
        if _nesting(line) > MAX_NESTING:
            return Stop(
                "protocol",
                f"the process running the solution sent an answer nested more than {MAX_NESTING} levels deep",
            )
        try:
            answer = json.loads(line)
        except ValueError:
            return Stop("protocol", "the process running the solution sent something that is not an answer")
        if not isinstance(answer, dict) or answer.get("id") != want:
            return Stop("protocol", "the process running the solution sent an answer to a question not asked")
        return answer

    def _watch(self, limits: Limits, deadline: float, start: float, cpu0: float) -> Stop | None:
        now = time.monotonic()
        if now > deadline:
            return Stop(
                "wall", f"the whole check's time limit ({limits.wall:g} s of wall-clock time) was reached"
            )
        stat = _proc_stat(self.proc.pid)
        if stat is None:  # no /proc: the wall clock of the case stands in for its CPU time
            if now - start > limits.cpu:
                return Stop("cpu", f"the case ran longer than {limits.cpu:g} s", now - start)
            return None
        cpu, rss = stat
        if cpu - cpu0 > limits.cpu:
            return Stop("cpu", f"the case used more than {limits.cpu:g} s of CPU time", cpu - cpu0)
        if rss > limits.memory:
            return Stop("memory", f"the solution used more than {limits.memory >> 20} MiB of memory")
        if now - start > limits.case_wall:
            return Stop("wait", f"the case waited {limits.case_wall:g} s without finishing", now - start)
        return None


class Runner:
    """Runs one solution, case by case, in a child interpreter that it restarts after a stopped case.

    Args:
        exercise: the exercise's name (which modules the child blocks, which call it makes).
        source: the solution's source text. filename: its name in tracebacks.
        limits: the check's :class:`Limits`.

    Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, exercise: str, source: str, filename: str, limits: Limits) -> None:
        self.exercise = exercise
        self.source = source
        self.filename = filename
        self.limits = limits
        self.deadline = time.monotonic() + limits.wall
        self.output = Output()
        self.child: _Child | None = None
        self.loaded: dict[str, Any] | Stop | None = None
        self.counter = 0

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Stop the child, if one runs."""
        if self.child is not None:
            self.child.kill()
            self.child = None
        self.output.close()

    def load(self) -> dict[str, Any] | Stop:
        """Start a child and load the solution in it: its answer (``ok``, or the error), or a Stop."""
        if self.child is not None:
            self.child.kill()
        self.child = _Child(self.exercise, self.limits, self.output)
        answer = self._exchange({"op": "load", "source": self.source, "filename": self.filename})
        self.loaded = answer
        return answer

    def run(self, request: dict[str, Any]) -> dict[str, Any] | Stop:
        """One case: the solution's answer as plain data, or a :class:`Stop` saying why there is none."""
        if time.monotonic() > self.deadline:
            return Stop(
                "wall", f"the whole check's time limit ({self.limits.wall:g} s) was reached before this case"
            )
        if self.child is None:
            loaded = self.load()
            if isinstance(loaded, Stop) or not loaded.get("ok"):
                return (
                    loaded
                    if isinstance(loaded, Stop)
                    else Stop("crash", "the solution could not be loaded again")
                )
        return self._exchange({"op": "case", **request})

    def _exchange(self, message: dict[str, Any]) -> dict[str, Any] | Stop:
        assert self.child is not None
        self.counter += 1
        message["id"] = self.counter
        answer = self.child.exchange(message, self.limits, self.deadline)
        if isinstance(answer, Stop):
            self.child.kill()
            self.child = None
        return answer
