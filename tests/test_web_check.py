"""The page's exercise check (lessons/publish/web_check.py) judges as ``micrograph exercise check`` does.

The page only carries the judge's questions to the student's worker and reports, by its clock, what
happened. Here the student's worker is the command line's own child (:class:`lessons.exercises.runner.Runner`)
and the clock is simulated, so the page's verdicts are compared with the command line's on the same solutions,
and the budget, the deadline and a stopped worker are driven case by case.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from exercise_solutions import CORRECT, mutant

from lessons import exercises
from lessons.exercises.limits import Limits, Stop
from lessons.exercises.runner import Runner
from lessons.publish.web_check import PAGE_LIMITS, ExerciseCheck

WRONG = mutant(
    CORRECT["backprop"],
    ("            for C in G.get_consumers(v)", "            for C in G.get_consumers(v)[:1]"),
)


def _page(name: str, source: str, worker: Any, start: float = 100.0) -> tuple[dict[str, Any], list[dict]]:
    """Drive a check as the page does: ``worker(message, seconds)`` answers each question as the student's
    worker would (a dict: ``answer``/``timeout``/``failed`` and the ``seconds`` it took). Returns the result
    (with ``headlines``, each case's, from the judge's report) and the actions the page was given."""
    clock = start
    check = ExerciseCheck(name, source, clock)
    actions = []
    action = json.loads(check.action(clock))
    while not action.get("done"):
        actions.append(action)
        happened = worker(json.loads(action["ask"]), action["seconds"])
        started = 0.5 if action["fresh"] else 0.0
        clock += happened["seconds"] + started + happened.pop("later", 0.0)  # later: the page was elsewhere
        check.event(json.dumps({**happened, "started": started}))
        action = json.loads(check.action(clock))
    result = json.loads(check.result())
    assert check.report is not None
    result["headlines"] = [c.headline for c in check.report.cases]
    return result, actions


def _child_worker(runner: Runner) -> Any:
    """The command line's child as the page's student worker: its answers, its stops as the page sees them."""

    def worker(message: dict[str, Any], seconds: float) -> dict[str, Any]:
        answer = runner.load(message) if message["op"] == "load" else runner.run(message)
        if isinstance(answer, Stop):
            return {"timeout": True, "seconds": seconds} if answer.kind in ("cpu", "wait") else {
                "failed": answer.detail, "seconds": 0.1}  # fmt: skip
        return {"answer": json.dumps(answer), "printed": "", "seconds": 0.05}

    return worker


@pytest.mark.parametrize("source", [CORRECT["backprop"], WRONG], ids=["correct", "first-consumer-only"])
def test_the_page_scores_and_reports_as_the_command_line(tmp_path: Path, source: str) -> None:
    path = tmp_path / "backprop.py"
    path.write_text(source)
    command = exercises.check("backprop", path, record=False, drawing=None)
    with Runner("backprop", source, "backprop.py", Limits()) as runner:
        page, actions = _page("backprop", source, _child_worker(runner))
    assert (page["passed"], page["score"], page["max_score"]) == (
        command.passed,
        command.score,
        command.max_score,
    )
    assert actions[0]["fresh"] and not any(a["fresh"] for a in actions[1:])  # one worker, kept
    same = [line for line in command.text("page").splitlines() if "PASS" in line or "FAIL" in line]
    assert same and all(line in page["text"] for line in same)


def test_a_case_that_runs_out_of_time_gets_a_new_worker_and_the_page_s_words() -> None:
    asked: list[str] = []

    def worker(message: dict[str, Any], seconds: float) -> dict[str, Any]:
        asked.append(message["op"])
        if message["op"] == "load":
            return {"answer": json.dumps({"ok": True}), "seconds": 0.05}
        return {"timeout": True, "seconds": seconds}

    page, actions = _page("backprop", CORRECT["backprop"], worker)
    assert page["score"] == 0 and not page["passed"]
    text = " ".join(page["text"].split())
    own = next(a for a in actions if json.loads(a["ask"])["op"] == "case")
    assert f"the case ran longer than {own['seconds']:.1f} s of the page's clock" in text
    assert asked[:3] == ["load", "case", "load"]  # a timed-out worker is replaced and the solution reloaded
    assert [a["fresh"] for a in actions[:3]] == [True, False, True]
    assert "--seed" not in text and "save_svg" not in text  # the page's words, not the command line's
    # the budget: every case's seconds and every restart are charged until it is spent; the last case gets
    # what is left of it, and the cases after it are not run
    cases = [a for a in actions if json.loads(a["ask"])["op"] == "case"]
    loads = len(actions) - len(cases)  # each took 0.05 s, and each start but the first 0.5 s
    charged = sum(a["seconds"] for a in cases) + 0.05 * loads + 0.5 * (loads - 1)
    assert charged == pytest.approx(PAGE_LIMITS.budget, abs=0.2)
    assert cases[-1]["seconds"] < cases[0]["seconds"]
    assert page["text"].count("[not-run]") == 14 - len(cases) > 0
    assert f"budget ({PAGE_LIMITS.budget:g} s of the page's clock) was spent during this case" in " ".join(
        page["headlines"]
    )


def test_the_whole_check_s_deadline_refuses_the_cases_after_it() -> None:
    def worker(message: dict[str, Any], seconds: float) -> dict[str, Any]:
        if message["op"] == "load":
            return {"answer": json.dumps({"ok": True}), "seconds": 0.05}
        # quick failures, after which the page's clock has moved on (a tab in the background, a laptop asleep)
        return {"failed": "out of memory", "seconds": 0.1, "later": PAGE_LIMITS.wall / 3}

    page, actions = _page("backprop", CORRECT["backprop"], worker)
    said = " ".join(page["headlines"])
    assert "the solution's interpreter failed: out of memory" in said
    assert f"the whole check's time limit ({PAGE_LIMITS.wall:g} s) was reached before this case" in said
    assert len([a for a in actions if json.loads(a["ask"])["op"] == "case"]) <= 4


def test_a_solution_that_cannot_be_loaded_again_is_said_so() -> None:
    loads = []

    def worker(message: dict[str, Any], seconds: float) -> dict[str, Any]:
        if message["op"] == "load":
            loads.append(1)
            ok = len(loads) == 1
            return {"answer": json.dumps({"ok": ok} if ok else {"ok": False, "error": "x"}), "seconds": 0.05}
        return {"timeout": True, "seconds": seconds}

    page, _ = _page("backprop", CORRECT["backprop"], worker)
    assert "the solution could not be loaded again" in " ".join(page["headlines"])


def test_the_protocol_is_refused_out_of_order() -> None:
    check = ExerciseCheck("backprop", CORRECT["backprop"], 0.0)
    with pytest.raises(RuntimeError, match="no action was asked for"):
        check.event(json.dumps({"answer": "{}", "seconds": 0.0}))
    with pytest.raises(RuntimeError, match="the check is not over"):
        check.result()
    check.action(0.0)
    with pytest.raises(ValueError, match="not a report of what happened"):
        check.event("[1, 2]")


def test_a_growth_case_stopped_on_its_largest_graph_is_named_by_the_smaller_ones_on_the_page() -> None:
    from lessons.publish.web_check import PAGE_SLOWER

    source = CORRECT["topo"]
    with Runner("topo", source, "topo.py", Limits()) as runner:
        child = _child_worker(runner)

        def worker(message: dict[str, Any], seconds: float) -> dict[str, Any]:
            n = len(message.get("records", ()))
            if n == 3_200:
                return {"timeout": True, "seconds": seconds}
            happened = child(message, seconds)
            if n >= 400:  # a long graph: the page's clock of a time that grows as n²
                happened["seconds"] = 0.5 * PAGE_SLOWER * (n / 1_600) ** 2
            return happened

        page, actions = _page("topo", source, worker)
    text = " ".join(page["text"].split())
    assert page["score"] == page["max_score"] - 1, text
    # after the stop the smaller graphs share what is left of the case's seconds (6 s, 3 spent), each
    # question still capped at the page's limit: the stop is counted in the command line's seconds
    long = [(len(json.loads(a["ask"]).get("records", ())), a["seconds"]) for a in actions]
    assert [(n, t) for n, t in long if n == 1_600] == [(1_600, pytest.approx(3.0 * PAGE_SLOWER))]
    assert "right order on the smaller graphs; its time grows as n^2.0" in text
    assert "1,600 nodes 0.5 s; on 3,200 nodes it was stopped: the case ran longer than" in text
