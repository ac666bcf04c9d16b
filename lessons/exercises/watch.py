"""The limits of one exchange with the solution's process, watched from the judge's side.

:class:`Watch` is what :class:`lessons.exercises.runner.Runner` holds over one request and its answer: the
case's CPU seconds (its own, within what is left of the check's budget), the time it waits, the check's
wall clock and the memory of all the solution's processes, read from the kernel's accounting
(:mod:`lessons.exercises.processes`) where the solution cannot reach; and the exchange's CPU time measured
to the nanosecond, which a growth case fits (:attr:`Watch.seconds`).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from lessons.exercises.limits import Limits, Stop
from lessons.exercises.processes import TICK, running, sleeping

if TYPE_CHECKING:
    from lessons.exercises.runner import Runner, _Child

__all__ = ["Watch", "TREE_POLL"]

TREE_POLL = 0.1
"""Seconds between two reads of the solution's processes (CPU time, memory) during an exchange."""


class Watch:
    """The limits of one exchange: its CPU seconds (the case's, within what is left of the budget), its
    waiting, the check's wall clock, memory; it charges what the exchange used to the runner's budget."""

    def __init__(self, runner: Runner, cpu: float, wait: float) -> None:
        self.runner = runner
        self.cpu_limit = cpu
        self.wait_limit = wait
        self.start_wall = 0.0
        self.cpu0 = 0.0
        self.sleep0: float | None = 0.0
        self.cpu = 0.0
        self.slept = 0.0
        self.rss = 0
        self.next_tree = 0.0
        self.ran0: float | None = None
        self.ran: float | None = None
        self.pid = 0

    def start(self, child: _Child) -> None:
        self.start_wall = time.monotonic()
        self.cpu0 = child.tree.usage()[0]
        self._follow(child.tree.worker())

    def _follow(self, pid: int) -> None:
        """Measure the waiting and the run time of ``pid``, the process running the solution, from now (the
        child's first process in its PID namespace replaces the child when the child encloses itself)."""
        self.pid = pid
        self.sleep0 = sleeping(pid)
        self.ran0 = running(pid)

    @property
    def seconds(self) -> float:
        """The CPU seconds the solution spent on the exchange, measured here, outside its process, for a
        growth case to fit how its time grows: the run time of the child's threads, to the nanosecond, where
        the kernel's accounting in ticks of all its processes agrees with it to two ticks, else that
        accounting (the time of a thread or a process that has ended shows only there). Without schedstat,
        the exchange's CPU time as its limit counts it."""
        if self.ran is None or self.cpu - self.ran > 2 * TICK:
            return self.cpu
        return self.ran

    def check(self, child: _Child, *, final: bool = False) -> Stop | None:
        """Why the exchange must stop now, or None; ``final`` charges its use to the budget and stops
        nothing."""
        runner, limits = self.runner, self.runner.limits
        now = time.monotonic()
        if runner.interrupted:
            return Stop("stopped", f"the check was stopped ({runner.interrupted})")
        if now >= self.next_tree or final:
            self.next_tree = now + TREE_POLL
            cpu, self.rss, _ = child.tree.usage()
            self.cpu = max(self.cpu, cpu - self.cpu0)
            if child.tree.worker() != self.pid:
                self._follow(child.tree.worker())
            slept = sleeping(self.pid)
            if slept is not None and self.sleep0 is not None:
                self.slept = max(self.slept, slept - self.sleep0)
        if self.sleep0 is None:  # no schedstat: the wall clock of the exchange stands in for its CPU time
            self.cpu = max(self.cpu, now - self.start_wall)
        if final:
            ran = running(self.pid)
            if ran is not None and self.ran0 is not None:
                self.ran = max(0.0, ran - self.ran0)
            runner.budget.charge(self.cpu + self.slept)
            return None
        return self._over(now, limits)

    def _over(self, now: float, limits: Limits) -> Stop | None:
        runner = self.runner
        stop = None
        if now > runner.budget.deadline:
            stop = Stop(
                "wall", f"the whole check's time limit ({limits.wall:g} s of wall-clock time) was reached"
            )
        elif self.rss > limits.memory:  # before the CPU time: filling memory costs CPU time too
            stop = Stop("memory", f"the solution used more than {limits.memory >> 20} MiB of memory")
        elif self.cpu > self.cpu_limit:
            stop = Stop("cpu", f"the case used more than {self.cpu_limit:.3g} s of CPU time", self.cpu)
        elif self.slept > self.wait_limit:
            stop = Stop("wait", f"the case waited {self.slept:.3g} s without computing", self.slept)
        elif now - self.start_wall > limits.case_wall:
            stop = Stop(
                "wait", f"the case ran {limits.case_wall:g} s of wall-clock time", now - self.start_wall
            )
        elif runner.budget.spent + self.cpu + self.slept > limits.budget:
            stop = Stop(
                "budget",
                f"the check's time budget ({limits.budget:g} s of CPU time and waiting) was spent "
                "during this case",
                self.cpu,
            )
        if stop is not None:
            runner.budget.charge(self.cpu + self.slept)
        return stop
