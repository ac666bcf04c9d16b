"""The judge: sends each case to where the solution runs, scores the answer, and makes the report.

The judge never runs the student's code. An exercise's module (:mod:`lessons.exercises.judges`) builds each
case with micrograph's engine and keeps the engine's answer (Algorithm 6.1, 6.2, 6.4, 6.6 ...) on this side;
the judge sends the student's side only the question as plain data (:mod:`lessons.exercises.runner`). What
comes back is plain data too (numbers, lists, node positions, the records of B); it is checked against the
exercise's schema (:mod:`lessons.exercises.answers`), then the case's own judge decodes it, compares it
with the answer key and, for a wrong answer, diagnoses it (the first wrong node, the terms of its sum, the
recognised mistake, the book's sentence, a drawing). Every case runs and is scored, so a timeout or a crash
in one case hides none of the others; the first failure is diagnosed in full.

The random cases come from ``seed``, which the report prints, so a teacher can grade with a seed the
students have not seen.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

from lessons.exercises import answers
from lessons.exercises.failures import import_failure, load_failure, raised, stopped
from lessons.exercises.limits import Limits, Output, Stop
from lessons.exercises.report import CaseResult, Failure, Report
from lessons.exercises.runner import Runner
from lessons.exercises.verdict import Case, Fail, shown

if TYPE_CHECKING:
    from lessons.exercises.exercise import Exercise

__all__ = ["judge_case", "judging", "judge_solution", "Question"]


def judge_case(case: Case, answer: dict[str, Any] | Stop) -> Failure | None:
    """The failure of one case, or None if the answer is right; an answer that does not fit its exercise's
    schema (:mod:`lessons.exercises.answers`) is that case's failure, never judged."""
    if isinstance(answer, Stop):
        hook = case.extra.get("stopped")
        return stopped(answer, case) if hook is None else hook(case, stopped(answer, case), answer)
    misfit = answers.problem(
        case.exercise.judging.answer if case.exercise is not None else None, answer, case.request
    )
    if misfit:
        return answers.failure(case.name, misfit)
    if not answer.get("ok"):
        failure = raised(answer.get("error", {}), case)
        refine = (
            case.extra.get("key_error") if failure.mistake == "missing-entry" else case.extra.get("exception")
        )
        return refine(case, failure, answer.get("error", {})) if refine is not None else failure
    try:
        case.judge(answer)
    except Fail as e:
        e.failure.case = case.name
        e.failure.actual = _as_reported(e.failure.actual)
        return e.failure
    return None


def _as_reported(x: Any) -> Any:
    """A failure's actual value as the report keeps it (JSON): a number a float holds, text, or None."""
    if x is None or isinstance(x, str):
        return x
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        try:
            float(x)
        except OverflowError:
            return shown(x)
        return x
    return shown(x)


Question = tuple[str, dict[str, Any]]
"""What the judge asks the student's side: ``("load", {"source", "filename", "imports", "exercise"})``
(``imports``: the exercise's allow-list, :meth:`~lessons.exercises.imports.Imports.request`; ``exercise``:
what that side needs of it, :meth:`~lessons.exercises.exercise.Exercise.entry`) or ``("case", request)``."""


AGAIN = 0.075
"""Seconds under which a growth case's graph is asked again and the shorter of its two times counts. The
machine can add a few tens of milliseconds to one question (memory the kernel reclaims in the process's
time, a busy neighbour's cache); added to a small chain's time, they flatten the fitted exponent enough to
pass a time that grows as n². A question this short costs little to ask twice; a longer one is large against
such a delay."""


def _growth(case: Case) -> Generator[Question, dict[str, Any] | Stop, dict[str, Any] | Stop]:
    """A growth case's answer, ``{"ok": true, "growth": [answer, ...]}`` in the order of its request's graphs.

    Each graph of ``request["growth"]`` is its own question, ``timed``: its answer's ``seconds`` is what the
    driver measured outside the solution's process (the CPU time of the exchange on the command line, the
    page's clock in the page), so nothing the solution changes in its own process changes its time. The
    largest graph is asked first: work a solution does ahead for a later question can only add to an earlier
    one's time, the time of a larger graph. A question under :data:`AGAIN` seconds is asked again. The
    graphs share the case's CPU seconds.

    A largest graph stopped for its CPU time is a time bounded below: the smaller graphs are still asked,
    so that how the time grows is measured on them; the answer then has ``None`` in that graph's place and
    ``"stopped": {"detail": ...}``, the :class:`Stop`'s sentence. Any other :class:`Stop`, or an answer that
    is not ``ok``, is the case's answer (after such a first stop, a second :class:`Stop` gives the first).
    """
    parts = case.request["growth"]
    answers: list[Any] = [None] * len(parts)
    spent = 0.0
    first: Stop | None = None
    for k in reversed(range(len(parts))):
        best: dict[str, Any] | None = None
        while best is None or best["seconds"] < AGAIN:
            cpu = max(case.cpu - spent, 0.05) if case.cpu else 0.0
            got = yield ("case", {**parts[k], "cpu": cpu, "timed": True})
            if isinstance(got, Stop) and got.kind == "cpu" and k == len(parts) - 1 > 0 and best is None:
                first = got
                spent += got.seconds  # the smaller graphs share what is left of the case's seconds
                break
            if isinstance(got, Stop) or not got.get("ok"):
                return first if first is not None and isinstance(got, Stop) else got
            seconds = got.get("seconds")
            if not isinstance(seconds, float):  # the driver's own number: a driver that does not time
                return Stop("protocol", "the time of the solution's call was not measured")
            spent += seconds
            if best is not None:
                best["seconds"] = min(best["seconds"], seconds)
                break
            best = got
        answers[k] = best
    if first is not None:
        return {"ok": True, "growth": answers, "stopped": {"detail": first.detail}}
    return {"ok": True, "growth": answers}


def judging(
    exercise: Exercise, cases: Iterator[Case], source: str, filename: str, *, seed: int, output: Output
) -> Generator[Question, dict[str, Any] | Stop, Report]:
    """The judge's loop as a generator: yields each question, receives the answer, returns the report.

    A driver sends every question to where the solution runs and sends back its answer (plain data, or a
    :class:`Stop` saying why there is none): :func:`judge_solution` drives it with the local
    :class:`Runner`; the site's page drives it with a Web Worker. The driver restarts the solution's side
    after a :class:`Stop` (a case that ran out of time) and feeds ``output`` with what the solution printed.

    Args:
        exercise, cases, source, filename, seed: as for :func:`judge_solution`.
        output: what the solution printed, fed by the driver (read when the report is made).

    Returns:
        The :class:`Report` (as the generator's return value, ``StopIteration.value``).
    """
    start = time.monotonic()
    results: list[CaseResult] = []
    imports = exercise.judging.imports
    question = {
        "source": source,
        "filename": filename,
        "imports": imports.request(),
        "exercise": exercise.entry(),
    }
    loaded = yield ("load", question)
    first = import_failure(imports, source, filename) or load_failure(loaded, filename)
    for case in cases:
        if first is not None and first.case.startswith("loading"):  # every case fails, at no cost
            failure: Failure | None = Failure(case.name, f"not run: {first.headline}", mistake=first.mistake)
        else:
            if isinstance(case.request.get("growth"), list):
                answer = yield from _growth(case)
            else:
                answer = yield ("case", {**case.request, "cpu": case.cpu} if case.cpu else case.request)
            failure = judge_case(case, answer)
        results.append(
            CaseResult(
                case.name,
                failure is None,
                case.points if failure is None else 0.0,
                case.points,
                "" if failure is None else failure.headline,
                "" if failure is None else failure.mistake,
            )
        )
        if failure is not None and first is None:
            first = failure
    output.close()
    return Report(
        exercise.name,
        exercise.heading,
        results,
        first,
        time.monotonic() - start,
        seed=seed,
        output_text=output.text(),
        output_lines=output.lines,
        output_cut=output.cut,
        sha256=hashlib.sha256(source.encode("utf-8")).hexdigest(),
    )


def judge_solution(
    exercise: Exercise, cases: Iterator[Case], source: str, filename: str, *, seed: int, limits: Limits
) -> Report:
    """Run every case of ``exercise`` on the solution and score it.

    Args:
        exercise: the exercise (:class:`~lessons.exercises.exercise.Exercise`).
        cases: the cases, built lazily (a case's answer key is built just before it runs).
        source: the solution's source text; filename: its name in tracebacks and the report.
        seed: the seed of the random cases (printed in the report).
        limits: the runner's limits.

    Returns:
        The :class:`Report`: every case with its points, the first failure diagnosed.

    Raises:
        IsolationError: the solution cannot be run apart from the judge (the judge is root and cannot make
            it another user): the check refuses to grade rather than run it as root.
    """
    with Runner(exercise.name, source, filename, limits) as runner:
        loop = judging(exercise, cases, source, filename, seed=seed, output=runner.output)
        try:
            op, request = next(loop)
            while True:
                answer = runner.load(request) if op == "load" else runner.run(request)
                op, request = loop.send(answer)
        except StopIteration as done:
            report: Report = done.value
    return report
