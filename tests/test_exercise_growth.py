"""The growth case: how the judge asks each long graph, and what it says when the largest one is stopped.

A solution whose time grows as n² may be stopped on the largest graph by the CPU limit on a slow machine
(Python 3.13 on a busy runner); the smaller graphs then still show how its time grows, and the report names
the n² instead of a bare timeout. A solution that is quick on the smaller graphs and stopped on the largest
is told it may be a loop that never ends.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from exercise_solutions import CORRECT

from lessons import exercises
from lessons.exercises import answers
from lessons.exercises.judge import AGAIN, _growth
from lessons.exercises.judges.scaling import Tally, growth_case, growth_mistake
from lessons.exercises.limits import Stop
from lessons.exercises.verdict import Case, Fail

GROWTH = "time against size: long graphs of 400 to 3,200 nodes"
CPU_STOP = Stop("cpu", "the case used more than 3 s of CPU time", 3.02)


def _drive(case: Case, replies: dict[int, list[Any]]) -> tuple[list[tuple[int, float]], Any]:
    """Run ``_growth`` on ``case``, answering each question on graph ``n`` with the next of ``replies[n]``
    (a float: an ``ok`` answer taking that many seconds); returns the questions asked, as (n, cpu), and
    the case's answer."""
    loop = _growth(case)
    asked: list[tuple[int, float]] = []
    question = next(loop)
    try:
        while True:
            n, cpu = question[1]["n"], question[1]["cpu"]
            assert question[0] == "case" and question[1]["timed"] is True
            asked.append((n, cpu))
            reply = replies[n].pop(0)
            question = loop.send(
                {"ok": True, "result": n, "seconds": reply} if isinstance(reply, float) else reply
            )
    except StopIteration as done:
        return asked, done.value


def test_a_growth_case_asks_each_graph_alone_the_largest_first_and_a_short_one_twice() -> None:
    case = Case("growth", {"growth": [{"n": 1}, {"n": 2}]}, lambda answer: None, cpu=3.0)
    # n = 2 once (0.6 s), then n = 1 twice (the second time counts)
    asked, growth = _drive(case, {2: [0.6], 1: [0.05, 0.002]})
    assert [n for n, _ in asked] == [2, 1, 1]
    assert [cpu for _, cpu in asked] == pytest.approx([3.0, 2.4, 2.35])  # the case's seconds, shared
    assert growth == {
        "ok": True,
        "growth": [{"ok": True, "result": 1, "seconds": 0.002}, {"ok": True, "result": 2, "seconds": 0.6}],
    }
    assert 0.05 < AGAIN < 0.6


def test_a_largest_graph_stopped_for_its_cpu_time_leaves_the_smaller_ones_to_measure() -> None:
    case = Case("growth", {"growth": [{"n": 1}, {"n": 2}, {"n": 3}]}, lambda answer: None, cpu=6.0)
    asked, growth = _drive(case, {3: [CPU_STOP], 2: [0.5], 1: [0.125]})
    assert asked == [(3, 6.0), (2, pytest.approx(2.98)), (1, pytest.approx(2.48))]
    assert growth == {
        "ok": True,
        "growth": [
            {"ok": True, "result": 1, "seconds": 0.125},
            {"ok": True, "result": 2, "seconds": 0.5},
            None,
        ],
        "stopped": {"detail": CPU_STOP.detail},
    }
    assert answers.problem(None, growth, case.request) == ""


def test_a_growth_case_ends_at_its_first_other_stop_or_error() -> None:
    case = Case("growth", {"growth": [{"n": 1}, {"n": 2}]}, lambda answer: None, cpu=6.0)
    memory = Stop("memory", "the solution used more than 512 MiB of memory")
    error = {"ok": False, "error": {}}
    for first in (memory, error):
        assert _drive(case, {2: [first]}) == ([(2, 6.0)], first)
    # after the largest graph's stop, a second stop gives the first; an error on a smaller graph is its own
    assert _drive(case, {2: [CPU_STOP], 1: [memory]})[1] == CPU_STOP
    assert _drive(case, {2: [CPU_STOP], 1: [error]})[1] == error
    # a stop on a smaller graph, after the largest answered, ends the case
    assert _drive(case, {2: [0.6], 1: [CPU_STOP]})[1] == CPU_STOP
    # a lone graph stopped has nothing smaller to measure
    lone = Case("growth", {"growth": [{"n": 1}]}, lambda answer: None, cpu=6.0)
    assert _drive(lone, {1: [CPU_STOP]})[1] == CPU_STOP
    loop = _growth(case)
    next(loop)
    with pytest.raises(StopIteration) as done:
        loop.send({"ok": True, "result": 2})  # a driver that did not time the question
    assert done.value.value.kind == "protocol"


def _judged(smaller: list[float]) -> Fail:
    parts = [({"n": n}, lambda answer: None) for n in (400, 800, 1_600, 3_200)]
    case = growth_case(parts, Tally(), growth_mistake(), "order", "topological_order(z)")
    answer = {
        "ok": True,
        "growth": [{"ok": True, "seconds": t} for t in smaller] + [None],
        "stopped": {"detail": CPU_STOP.detail},
    }
    with pytest.raises(Fail) as failed:
        case.judge(answer)
    return failed.value


@pytest.mark.parametrize("k", [1.8, 2.0, 3.0])
def test_a_time_growing_as_n_to_the_k_on_the_smaller_graphs_is_named_when_the_largest_is_stopped(
    k: float,
) -> None:
    failure = _judged([0.2 * 4.0**-k, 0.2 * 2.0**-k, 0.2]).failure
    assert failure.mistake == "growth"
    assert failure.headline.startswith(f"right order on the smaller graphs; its time grows as n^{k:.1f},")
    assert "on 3,200 nodes it was stopped: the case used more than 3 s of CPU time." in failure.details[0]
    assert "1,600 nodes 0.2 s" in failure.details[0]


@pytest.mark.parametrize("smaller", [[0.001, 0.002, 0.004], [0.01, 0.04, 0.14], [0.1, 0.2, 0.41]])
def test_a_largest_graph_stopped_after_quick_or_linear_smaller_ones_may_be_a_loop(
    smaller: list[float],
) -> None:
    failure = _judged(smaller).failure
    assert failure.mistake == "timeout"
    assert "stopped on long graphs of 400 to 3,200 nodes: the case used more than 3 s" in failure.headline
    assert "or a loop never ends on a long graph" in failure.details[0]


STOPPED_ON_THE_LARGEST = """
    _topological_order = topological_order
    def topological_order(z):
        order = _topological_order(z)
        while len(order) >= 3_200:  # the largest long graph only
            pass
        return order
"""

QUADRATIC_TOPO = (
    CORRECT["topo"]
    .replace("seen, stack = [], set(),", "seen, stack = [], [],")
    .replace("seen.add(", "seen.append(")
)


@pytest.mark.parametrize("topo, mistake", [(QUADRATIC_TOPO, "growth"), (CORRECT["topo"], "timeout")])
def test_a_solution_stopped_on_the_largest_graph_is_named_by_its_time_on_the_smaller_ones(
    tmp_path: Path, topo: str, mistake: str
) -> None:
    assert QUADRATIC_TOPO.count("[], [],") == 1 and "seen.add(" not in QUADRATIC_TOPO
    path = tmp_path / "topo.py"
    path.write_text(textwrap.dedent(topo) + textwrap.dedent(STOPPED_ON_THE_LARGEST), encoding="utf-8")
    report = exercises.check("topo", path, record=False, drawing=None)
    assert [c.name for c in report.cases if not c.passed] == [GROWTH], report.text()
    assert report.failure is not None and report.failure.mistake == mistake, report.text()
    text = " ".join(report.text().split())
    if mistake == "growth":
        k = re.search(r"right order on the smaller graphs; its time grows as n\^(\d\.\d)", text)
        assert k is not None and 1.7 <= float(k.group(1)) <= 2.3, text
        assert "on 3,200 nodes it was stopped: the case used more than 3 s of CPU time" in text
    else:
        assert "Either its time grows faster than the graph's size, or a loop never ends" in text
