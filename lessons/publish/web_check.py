"""An exercise check in the site's page: the judge of ``micrograph exercise check``, driven by the page.

The page (``site/src/app.js``) runs two Web Workers: the page's Python, which holds this judge, and the
student's, which runs the solution (:class:`lessons.exercises.child.Child`, the same per-message core as the
command line's child) and holds no answer key. The page only carries messages between them and times the
student's worker with its clock: every decision and every word is made here, from the command line's own
rules (:class:`lessons.exercises.limits.Budget`: a case's seconds, the check's budget and deadline, the
sentences a refused case gets), so the page and the command line judge alike.

The page asks for an action, does it, and reports what happened:

* :meth:`ExerciseCheck.action` gives ``{"ask": QUESTION, "seconds": S, "fresh": BOOL}``: send the JSON
  ``QUESTION`` to the student's worker (a new one when ``fresh``) and wait at most ``S`` seconds of the
  page's clock; or ``{"done": true}``: the report is ready (:meth:`ExerciseCheck.result`);
* :meth:`ExerciseCheck.event` takes what happened: ``{"answer": JSON, "printed": TEXT}``, ``{"timeout":
  true}`` (the worker was terminated after ``S`` seconds) or ``{"failed": TEXT}`` (its interpreter failed),
  with ``seconds`` (how long the question took) and ``started`` (how long a fresh worker took to start).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import Any

from lessons.exercises import EXERCISES, judges
from lessons.exercises.judge import judging
from lessons.exercises.limits import BUDGET, TIME_LIMIT, WALL_LIMIT, Budget, Limits, Output, Stop
from lessons.exercises.report import Report

__all__ = ["PAGE_SLOWER", "PAGE_LIMITS", "ExerciseCheck"]

PAGE_SLOWER = 2.0
"""How much more time a case may take in the page than on the command line: Python compiled to WebAssembly
runs slower than CPython, and a browser gives no CPU time of a worker, only its clock."""

PAGE_LIMITS = Limits(cpu=TIME_LIMIT * PAGE_SLOWER, budget=BUDGET * PAGE_SLOWER, wall=WALL_LIMIT)
"""The page's limits of a check, the command line's in the page's clock: a case's seconds (its own CPU
limit, or the default, times :data:`PAGE_SLOWER`), the budget of the whole check likewise, and the
wall-clock limit of the whole check."""

LOAD_SECONDS = 5.0 * PAGE_SLOWER
"""Seconds loading the solution may take (the command line gives it at least 5 s of CPU time)."""

Question = tuple[str, dict[str, Any]]


class ExerciseCheck:
    """One check of a solution in the page, driven by the page one action at a time.

    Args:
        name: the exercise (see :data:`lessons.exercises.EXERCISES`).
        source: the solution's text, as typed in the page's editor.
        now: the page's clock, in seconds, when the check starts (``performance.now() / 1000``).
        seed: the seed of the random cases (the report prints it).
        limits: the check's limits in the page's clock (:data:`PAGE_LIMITS`).

    Raises:
        KeyError: an unknown exercise.
    """

    FILENAME = "{name}.py"

    def __init__(
        self, name: str, source: str, now: float, seed: int = 0, limits: Limits = PAGE_LIMITS
    ) -> None:
        e = EXERCISES[name]
        self.output = Output()
        self.loop: Generator[Question, dict[str, Any] | Stop, Report] = judging(
            e,
            judges.cases(e.name, seed),
            source,
            self.FILENAME.format(name=name),
            seed=seed,
            output=self.output,
        )
        self.limits = limits
        self.budget = Budget(limits, now)
        self.report: Report | None = None
        self.pending: Question | None = None  # the judge's question the page is to ask next
        self.load: dict[str, Any] = {}  # the judge's load question, asked again of a new worker
        self.worker = False  # whether the page holds a student's worker with the solution loaded
        self.first = True  # the first worker's start is not charged (the page starts it ahead of time)
        self.asked: dict[str, Any] = {}  # what the page was last asked to do
        self._judge(None)

    def _judge(self, received: dict[str, Any] | Stop | None) -> None:
        """Hand ``received`` to the judge (None: start it); keep its next question, or its report."""
        try:
            self.pending = next(self.loop) if received is None else self.loop.send(received)
        except StopIteration as done:
            self.report, self.pending = done.value, None

    def action(self, now: float) -> str:
        """What the page does next, as JSON (see the module's text), at the page's clock ``now``."""
        while self.pending is not None:
            op, request = self.pending
            refused = self.budget.refused(now)
            if refused is not None:
                self._judge(refused)
                continue
            message = {"op": op, **request}
            if op == "load":
                self.load = message
                return self._ask(message, min(self.budget.remaining, LOAD_SECONDS), fresh=True, kind="load")
            if not self.worker:  # the last case stopped the worker: a new one, with the solution loaded again
                return self._ask(
                    self.load, min(self.budget.remaining, LOAD_SECONDS), fresh=True, kind="reload"
                )
            own = float(message.pop("cpu", 0.0) or 0.0) * PAGE_SLOWER
            timed = bool(message.pop("timed", False))
            seconds = self.budget.case_seconds(own)
            # cut: the budget left, not the case's own seconds or the limits' (its cap), set its seconds
            cut = seconds < min(own or self.limits.cpu, self.limits.cpu)
            return self._ask(message, seconds, fresh=False, kind="case", cut=cut, timed=timed)
        return json.dumps({"done": True})

    def _ask(
        self,
        message: dict[str, Any],
        seconds: float,
        *,
        fresh: bool,
        kind: str,
        cut: bool = False,
        timed: bool = False,
    ) -> str:
        """The action of asking ``message``; ``cut``: its seconds are what is left of the budget, less than
        the case's own; ``timed``: the answer's ``seconds`` is the question's time by the page's clock (a
        growth case's, :func:`lessons.exercises.judge.judging`)."""
        self.asked = {"kind": kind, "seconds": seconds, "fresh": fresh, "cut": cut, "timed": timed}
        return json.dumps({"ask": json.dumps(message, allow_nan=True), "seconds": seconds, "fresh": fresh})

    def event(self, happened: str) -> None:
        """What the page reports of the last action (JSON, see the module's text); charged to the budget.

        Raises:
            RuntimeError: no action was asked for.
            ValueError: ``happened`` is not such a report.
        """
        asked, self.asked = self.asked, {}
        if not asked:
            raise RuntimeError("no action was asked for: call action() first")
        data = json.loads(happened)
        if not isinstance(data, dict):
            raise ValueError(f"not a report of what happened: {happened[:80]!r}")
        seconds, started = float(data.get("seconds", 0.0)), float(data.get("started", 0.0))
        self.budget.charge(seconds + (0.0 if self.first else started))  # a restart is charged, as on the
        if asked["fresh"]:  # command line
            self.first = False
        self.output.feed(str(data.get("printed", "")).encode("utf-8"))
        received = self._received(data, asked, seconds)
        self.worker = isinstance(received, dict)
        if asked["kind"] == "reload":
            if isinstance(received, Stop) or not received.get("ok"):
                self.worker = False
                self._judge(Stop("crash", "the solution could not be loaded again"))
            return  # loaded again: the pending case is asked next
        self._judge(received)

    def _received(self, data: dict[str, Any], asked: dict[str, Any], seconds: float) -> dict[str, Any] | Stop:
        """The worker's answer as the judge takes it, or the :class:`Stop` of a terminated worker."""
        if "answer" in data:
            answer = json.loads(str(data["answer"]))
            if not isinstance(answer, dict):
                return Stop("protocol", "the answer was not a message")
            if asked.get("timed"):  # in the command line's seconds, which the growth case's bounds are in
                answer["seconds"] = seconds / PAGE_SLOWER
            return answer
        if "failed" in data:
            return Stop("crash", f"the solution's interpreter failed: {str(data['failed'])[:200]}", seconds)
        limit = float(asked["seconds"])
        if asked["cut"]:
            return Stop(
                "budget",
                f"the check's time budget ({self.limits.budget:g} s of the page's clock) was spent during "
                "this case",
                seconds,
            )
        if asked.get("timed"):  # in the command line's seconds, as a timed answer's: the growth case
            seconds /= PAGE_SLOWER  # shares what is left of its own seconds after this stop
        return Stop("cpu", f"the case ran longer than {limit:.1f} s of the page's clock", seconds)

    def result(self) -> str:
        """The verdict as JSON: ``passed, score, max_score, text`` (``micrograph exercise check``'s report, in
        the page's words), ``seconds`` (the check's own time, as the report says it), ``svg`` (the failure's
        drawing, "" if none).

        Raises:
            RuntimeError: the check is not over (:meth:`action` has not said ``done``).
        """
        if self.report is None:
            raise RuntimeError("the check is not over: do every action first")
        r = self.report
        svg = r.failure.svg if r.failure is not None and r.failure.svg else ""
        return json.dumps(
            {
                "passed": r.passed,
                "score": r.score,
                "max_score": r.max_score,
                "text": r.text("page"),
                "svg": svg,
                "seconds": r.seconds,
            }
        )
