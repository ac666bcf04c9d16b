"""How a solution's work grows: with the number of paths (figure 6.9), and with the size of the graph.

Right numbers computed the wrong way show in the work, so two cases measure it:

* the big ladder, 2^40 paths on 121 nodes: a method that follows every path from z, however it caches its
  local derivatives, is stopped there, while the book's algorithms take a millisecond.
  :func:`paths_stop` turns that stop, after every smaller case passed, into its diagnosis (mistake
  ``paths``);
* the growth case (:func:`growth_case`): the solution asked for each long graph of 400 to 3,200 nodes (a chain
  with an edge back at every other node: no shortcut for chains applies) alone, the largest first, each
  question's CPU time measured outside the solution's process (a question under 75 ms twice, the shorter
  counting: :func:`lessons.exercises.judge.judging`). The exponent of the time against the size, fitted on
  log-log axes by least squares, is about 1 for the book's algorithms; a membership test on a list inside the
  loop makes it 2 (mistake ``growth``). Only a time large enough to measure (:data:`SIGNIFICANT`) fails the
  case, so a fast solution never fails on noise; and whatever the exponent, the largest graph's call must take
  at most :data:`LARGEST`, so padding the smaller calls hides nothing. A solution stopped on the largest
  graph is still asked the smaller ones, and an exponent above :data:`EXPONENT` fitted on them is named
  the same way; otherwise, as after a stop on a smaller graph, the solution is told both what it may be: a
  time that grows faster than the graph, or a loop that never ends on a long graph.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.3, figure 6.9.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from lessons.exercises.cases import GROWTH, growth_graphs
from lessons.exercises.cases import Case as GraphCase
from lessons.exercises.judges.mistakes import Mistake, failure
from lessons.exercises.judges.mistakes import of as rows_of
from lessons.exercises.limits import Stop
from lessons.exercises.report import Failure
from lessons.exercises.verdict import Case, Fail
from micrograph.graph import Graph
from micrograph.naive import naive_cost

__all__ = ["measured_cases", "paths_stop", "growth_mistake", "exponent"]

SIGNIFICANT = 0.15
"""CPU seconds of the largest long graph's call below which the growth case passes whatever the exponent:
the book's algorithms need a few hundredths of a second there, a membership test on a list half a second or
more, so noise never fails a solution whose time grows with the size."""

LARGEST = 0.25
"""CPU seconds the call on the largest long graph (3,200 nodes) may take, whatever the exponent: the book's
algorithms take a few hundredths of a second there, one whose work grows as n² half a second or more; a
solution that pads its smaller calls to fake a linear growth still pays for the largest one. The page
divides its clock by its slowness first (``lessons.publish.web_check.PAGE_SLOWER``)."""

EXPONENT = 1.5
"""The exponent of time against size above which the growth case fails (1 for the book's algorithms, 2 for
a membership test on a list inside the loop)."""


def growth_mistake(book: str = "") -> Mistake:
    """The ``growth`` mistake, the same in every exercise that has a growth case (its words are
    ``mistakes.toml``'s ``[scaling.growth]``) but for the book's sentence behind it, ``book`` (a key of
    :data:`lessons.exercises.report.BOOK`, "" for none)."""
    return dataclasses.replace(rows_of("scaling", ("growth",))["growth"], book=book)


Judge = Callable[[dict[str, Any]], None]

Make = Callable[[Case, Stop], Failure]

Part = Callable[[GraphCase, int], tuple[Graph, dict[str, Any], Judge, dict[str, Any]]]
"""``part(spec, number)``: a graph case's G, its request, the judge of its answer and the case's own hooks
(``number``: the case's place among the graph cases; -1 for a graph of the growth case)."""


class Tally:
    """How many of a check's cases have passed so far, as their judges saw them (judged in order)."""

    def __init__(self) -> None:
        self.made = 0
        self.passed = 0

    def add(self, judge: Judge, stopped: Make | None = None) -> tuple[Judge, dict[str, Any]]:
        """The next case's judge, counted when it passes, and its hooks for :class:`Case`'s ``extra``.

        Args:
            judge: the case's judge.
            stopped: makes the failure of the case when the runner stopped it for its CPU time after every
                earlier case passed (else the runner's own failure stands); None for no such hook.
        """
        before = self.made
        self.made += 1

        def counted(answer: dict[str, Any]) -> None:
            judge(answer)
            self.passed += 1

        if stopped is None:
            return counted, {}
        make = stopped

        def hook(case: Case, failure_: Failure, stop: Stop) -> Failure:
            if stop.kind not in ("cpu", "wall") or self.passed < before:
                return failure_
            diagnosed = make(case, stop)
            diagnosed.case = case.name
            return diagnosed

        return counted, {"stopped": hook}


def _count(paths: int) -> str:
    """A number of paths as a report writes it: ``2^40 = 1,099,511,627,776``."""
    power = paths.bit_length() - 1
    return f"2^{power} = {paths:,}" if paths > 1 and paths == 1 << power else f"{paths:,}"


def paths_stop(spec: GraphCase, graph: Graph, mistake: Mistake) -> Make | None:
    """The diagnosis of a solution stopped on the case whose paths no solution can follow one by one (None
    for another case), for :meth:`Tally.add`.

    Args:
        spec: the graph case; only one with ``paths`` set gets a diagnosis.
        graph: its G (w is its first leaf).
        mistake: the exercise's ``paths`` row: its headline is the diagnosis's, and its ``needs`` says what
            the book's algorithm does instead.
    """
    if not spec.paths:
        return None
    paths = naive_cost(graph.output, graph.nodes[0])["paths"]
    nodes, edges = len(graph.nodes), graph.num_edges

    def make(case: Case, stop: Stop) -> Failure:
        return failure(
            mistake,
            mistake.headline,
            details=[
                f"This graph has {nodes:,} nodes, {edges:,} edges and {_count(paths)} paths from w to z; "
                f"{stop.detail}, after every smaller graph had passed.",
                mistake.needs.format(nodes=f"{nodes:,}", edges=f"{edges:,}")
                + f" Work done once per path is done {_count(paths)} times here.",
            ],
        )

    return make


def exponent(sizes: list[int], seconds: list[float]) -> float:
    """The exponent k of seconds ≈ c·size^k, fitted by least squares on log-log axes."""
    xs = [math.log(n) for n in sizes]
    ys = [math.log(max(t, 1e-6)) for t in seconds]  # a call too fast to measure counts as a microsecond
    return statistics.linear_regression(xs, ys).slope


def _times(sizes: list[int], seconds: list[float]) -> str:
    return ", ".join(f"{n:,} nodes {t:.3g} s" for n, t in zip(sizes, seconds))


def growth_case(
    parts: list[tuple[dict[str, Any], Judge]],
    tally: Tally,
    mistake: Mistake,
    right: str,
    what: str,
) -> Case:
    """The growth case: the solution on the long graphs of :data:`~lessons.exercises.cases.GROWTH`, one
    request.

    Args:
        parts: for each long graph, its request and the judge of its answer, as the exercise's other cases
            have.
        tally: the check's :class:`Tally`. mistake: the exercise's ``growth`` row.
        right: what was right when only the time is wrong ("order", "values", "grad_table").
        what: how the call reads in the report.
    """
    sizes = list(GROWTH)
    span = f"long graphs of {sizes[0]:,} to {sizes[-1]:,} nodes"

    def stopped_failure(detail: str) -> Failure:  # a loop that never ends looks the same: both are named
        return Failure(
            "",
            f"right {right} on every smaller graph, but the solution was stopped on {span}: {detail}.",
            details=[
                "Either its time grows faster than the graph's size, or a loop never ends on a long graph. "
                f"A membership test on a list inside the loop makes the time grow as n²: {sizes[-1]:,} nodes "
                f"then take {sizes[-1] ** 2 // 2:,} comparisons."
            ],
            mistake="timeout",
            hint=mistake.hint,
        )

    def unread(what: str) -> Fail:
        return Fail(Failure("", f"the {what} could not be read.", mistake="protocol"))

    def judge(answer: dict[str, Any]) -> None:
        answers = answer.get("growth")
        stopped = answer.get("stopped")  # the largest graph's question was stopped: no time, no answer
        if not isinstance(answers, list) or len(answers) != len(parts):
            raise unread("solution's answer to the growth case")
        seconds = []
        for n, (_, one), got in zip(sizes, parts, answers):
            if got is None and stopped is not None and n == sizes[-1]:
                continue
            if not isinstance(got, dict):
                raise unread("solution's answer to the growth case")
            try:
                one(got)
            except Fail as e:
                e.failure.details = [f"On the long graph of {n:,} nodes.", *e.failure.details]
                raise
            t = got.get("seconds")
            if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t < 0:
                raise unread("time of the solution's call")
            seconds.append(float(t))
        if stopped is not None:  # how the time grows is measured on the smaller graphs alone
            *smaller, largest = sizes
            k = exponent(smaller, seconds)
            if max(seconds) <= SIGNIFICANT or k <= EXPONENT:  # a loop on the largest is as likely
                raise Fail(stopped_failure(str(stopped["detail"])))
            raise Fail(
                failure(
                    mistake,
                    f"right {right} on the smaller graphs; its time grows as n^{k:.1f}, where the book's "
                    "algorithm takes time proportional to the graph's size.",
                    details=[
                        f"The CPU time of {what} on {span}: {_times(smaller, seconds)}; on {largest:,} "
                        f"nodes it was stopped: {stopped['detail']}. Each doubling of n multiplied it by "
                        f"about {2**k:.1f}; proportional to n it doubles.",
                    ],
                )
            )
        k = exponent(sizes, seconds)
        if max(seconds) > SIGNIFICANT and k > EXPONENT:
            times = _times(sizes, seconds)
            raise Fail(
                failure(
                    mistake,
                    f"right {right}; its time grows as n^{k:.1f}, where the book's algorithm takes time "
                    "proportional to the graph's size.",
                    details=[
                        f"The CPU time of {what} on {span}: {times}. Each doubling of n multiplied it by "
                        f"about {2**k:.1f}; proportional to n it doubles.",
                    ],
                )
            )
        if seconds[-1] > LARGEST:  # padded to look linear, or all slow alike
            raise Fail(
                failure(
                    mistake,
                    f"right {right}; it took {seconds[-1]:.3g} s on the graph of {sizes[-1]:,} nodes, where "
                    f"the book's algorithm takes a few hundredths of a second (at most {LARGEST:g} s here).",
                    details=[f"The CPU time of {what} on {span}: {_times(sizes, seconds)}."],
                )
            )

    def make(case: Case, stop: Stop) -> Failure:
        return stopped_failure(stop.detail)

    counted, hooks = tally.add(judge, make)
    return Case(
        f"time against size: {span}",
        {"growth": [request for request, _ in parts]},
        counted,
        what=what,
        book=mistake.book or "order",
        extra=hooks,
        cpu=6.0,  # an honest n² solution is timed on all four graphs, then named, on slower Pythons too
    )


def measured_cases(
    specs: list[GraphCase],
    part: Part,
    mistakes: Mapping[str, Mistake],
    *,
    what: str,
    book: str,
    right: str = "",
) -> Iterator[Case]:
    """An exercise's cases on graphs of section 6.5 with its work measured: each graph case, with the big
    ladder's stop diagnosed (:func:`paths_stop`), then the growth case on
    :func:`~lessons.exercises.cases.growth_graphs` (:func:`growth_case`).

    Args:
        specs: the graph cases (:func:`~lessons.exercises.cases.graph_cases`). part: builds each case.
        mistakes: the exercise's rows (its ``paths``, for :func:`paths_stop`, and, for a growth case,
            ``growth``).
        what, book: as :class:`~lessons.exercises.verdict.Case`'s.
        right: what was right when only the time is wrong (``"grad_table"``); "" for no growth case.
    """
    tally = Tally()
    for number, spec in enumerate(specs):
        graph, request, judge, hooks = part(spec, number)
        counted, stop = tally.add(judge, paths_stop(spec, graph, mistakes["paths"]))
        extra = {**hooks, **stop}
        yield Case(spec.name, request, counted, graph=graph, what=what, book=book, extra=extra, cpu=spec.cpu)
    if right:
        parts = [part(spec, -1)[1:3] for spec in growth_graphs()]
        yield growth_case(parts, tally, mistakes["growth"], right, what)
