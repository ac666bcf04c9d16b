"""The limits of an exercise check, and what the runner reports about the solution's side.

The constants are the check's defaults (per case, for the whole check, memory, answers); :class:`Limits`
holds one check's; :class:`Stop` says why a case got no answer; :class:`Output` keeps what the solution
printed, capped; :class:`IsolationError` is the check's refusal to grade where the solution cannot be kept
apart from the judge. The runner (:mod:`lessons.exercises.runner`) enforces them, the judge reads them, and
the site's page uses the same numbers in its own clock (:data:`lessons.publish.site.CHECK_LIMITS`).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5 (the exercises' checker).
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field

__all__ = [
    "Budget",
    "Limits",
    "Stop",
    "IsolationError",
    "Output",
    "TIME_LIMIT",
    "BUDGET",
    "WAIT_LIMIT",
    "WALL_LIMIT",
    "MEMORY_LIMIT",
    "MAX_ANSWER",
    "MAX_NESTING",
]

TIME_LIMIT = 3.0
"""The most CPU seconds one case may use; each case sets its own, scaled to its size, at most this (a correct
solution needs a small fraction)."""

BUDGET = 15.0
"""Seconds of CPU time and waiting that the whole check may spend running the solution, its start-ups
included: the worst solution's check costs this much, plus the judge's own work."""

WAIT_LIMIT = 5.0
"""Seconds one case may spend waiting (sleeping, reading) instead of computing: long enough that a loaded
machine's disk, which makes a process wait too, does not stop a correct solution."""

WALL_LIMIT = 90.0
"""Wall-clock seconds the whole check may take, however busy the machine."""

MEMORY_LIMIT = 1 << 30
"""Bytes of resident memory the solution's processes may use together (1 GiB)."""

MAX_ANSWER = 4 << 20
"""Bytes one answer may have: some thirty times the most a correct solution sends (backprop's grad_table of
the 3,200-deep chain, about 130 kB). Reading one costs the judge many times its size (a 64 MiB answer of
empty objects took it 2 GiB), and the judge's memory has no limit of its own."""

MAX_NESTING = 100
"""Levels of brackets one answer may nest (an answer nests fewer than 50; json.loads recurses per level)."""


@dataclass(frozen=True)
class Limits:
    """The limits of one check.

    Attributes:
        cpu: the most CPU seconds a case may use (> 0): its own limit, at most this.
        wall: wall-clock seconds for the whole check (> 0).
        memory: bytes of resident memory (>= 64 MiB).
        budget: seconds of CPU time and waiting for the whole check (> 0); :data:`BUDGET` by default.
        wait: seconds one case may wait instead of computing (> 0).
        case_wall: wall-clock seconds per case, a last bound; by default ten times ``cpu``, at least 10 s.
        isolated: where the check runs as an ordinary user, refuse to run the solution unless it is enclosed
            (:mod:`lessons.exercises.enclosure`: micrograph's files hidden, the user's files read-only), as a
            result meant for grading must be; False runs it anyway where Linux does not let the user make
            namespaces (a student's own check). As root the solution always runs as a user of its own.

    Raises:
        ValueError: a limit that is not a finite positive number, or is out of range.
    """

    cpu: float = TIME_LIMIT
    wall: float = WALL_LIMIT
    memory: int = MEMORY_LIMIT
    budget: float = BUDGET
    wait: float = WAIT_LIMIT
    case_wall: float = 0.0
    isolated: bool = False

    def __post_init__(self) -> None:
        for name, value, top in (
            ("cpu", self.cpu, 3600.0),
            ("wall", self.wall, 86400.0),
            ("budget", self.budget, 86400.0),
            ("wait", self.wait, 3600.0),
        ):
            if isinstance(value, bool) or not (isinstance(value, (int, float)) and 0 < value <= top):
                raise ValueError(
                    f"the {name} time limit must be a number of seconds in (0, {top:g}], got {value!r}"
                )
        if not (isinstance(self.memory, int) and 64 << 20 <= self.memory <= 1 << 40):
            raise ValueError(
                f"the memory limit must be between 64 MiB and 1 TiB in bytes, got {self.memory!r}"
            )
        if not self.case_wall:
            object.__setattr__(self, "case_wall", max(10.0, 10 * self.cpu))


class Budget:
    """The clock of one check: its wall-clock deadline, its time budget and what the cases spent of it.

    The command line's runner (:class:`lessons.exercises.runner.Runner`, CPU seconds and waiting) and the
    browser page's (:class:`lessons.publish.web_check.ExerciseCheck`, its worker's clock) keep it alike and
    refuse a case in the same words.

    Args:
        limits: the check's limits (``wall``, ``budget``, ``cpu``).
        now: the clock's reading at the start of the check, in seconds (``time.monotonic()``, or the page's
            ``performance.now() / 1000``).
    """

    def __init__(self, limits: Limits, now: float) -> None:
        self.limits = limits
        self.deadline = now + limits.wall
        self.spent = 0.0

    @property
    def remaining(self) -> float:
        """Seconds of the budget not spent yet."""
        return max(0.0, self.limits.budget - self.spent)

    def refused(self, now: float, interrupted: str = "") -> Stop | None:
        """Why the next case must not start at ``now`` (the check stopped, past its deadline, its budget
        spent), or None."""
        if interrupted:
            return Stop("stopped", f"not run: the check was stopped ({interrupted})")
        if now > self.deadline:
            return Stop(
                "wall", f"the whole check's time limit ({self.limits.wall:g} s) was reached before this case"
            )
        if self.remaining <= 0.01:
            return Stop("budget", f"not run: the check's time budget ({self.limits.budget:g} s) was spent")
        return None

    def case_seconds(self, cpu: float = 0.0) -> float:
        """The seconds a case may take: its own (``cpu``; 0: the limits' ``cpu``), at most the limits' and
        what is left of the budget."""
        return min(cpu or self.limits.cpu, self.limits.cpu, self.remaining)

    def charge(self, seconds: float) -> None:
        """Count ``seconds`` a case (or a start of the solution) used against the budget."""
        self.spent += max(0.0, seconds)


class IsolationError(Exception):
    """The solution cannot be run apart from the judge: the check refuses to grade it (never as root)."""


@dataclass(frozen=True)
class Stop:
    """Why a case got no answer.

    Attributes:
        kind: ``cpu`` (its CPU limit), ``wait`` (it waited), ``wall`` (the check's wall clock), ``budget``
            (the check's time budget was spent before it), ``stopped`` (the check was stopped by a signal),
            ``memory``, ``crash``, ``protocol``, ``large``, ``isolation`` (the solution could not be run apart
            from the judge). detail: a sentence for the report. seconds: the CPU (or wall) seconds used.
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
