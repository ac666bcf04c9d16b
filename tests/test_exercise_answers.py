"""An answer from the student's side is judged once it fits its exercise's schema; it never crashes the judge.

The process running the solution answers each case with a JSON line, and the solution can write any line to
the answer's descriptor. Each finding below once crashed the judge (a traceback, and a score of 0 for every
case): an integer too large for a float, NaN counts, an exponent that is a list, a line nested 200,000 deep,
counts that are strings, references to nodes that do not exist, an error that is a list, missing fields.
Now each is that case's FAIL with one sentence, and the other cases are scored as usual.

The tests drive the judge directly with forged answers (the engine's right answer, changed:
tests/exercise_answers.py); tests/test_exercise_answers_json.py throws arbitrary JSON at every exercise and
checks real solution files end to end.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from exercise_answers import DELETE, HUGE, change, first, right, shown_to_the_user

from lessons import exercises
from lessons.exercises import judges
from lessons.exercises.failures import load_failure
from lessons.exercises.judge import judge_case, judging
from lessons.exercises.limits import Output
from lessons.exercises.report import Report
from lessons.exercises.verdict import Foreign, NodeRef, close, decode, differ, shown
from micrograph.ops import OPS

NAMES = judges.NAMES


@pytest.mark.parametrize("name", NAMES)
def test_the_right_answer_as_the_child_sends_it_passes(name: str) -> None:
    """The schemas accept what an honest child sends: the engine's answer passes on every case."""
    for case in judges.cases(name, 0):
        if "growth" in case.request:  # judged on its times: tests/test_exercise_algorithms.py
            continue
        assert judge_case(case, right(case)) is None, case.name


def test_counts_the_solution_reports_about_itself_are_never_read() -> None:
    case = first("naive", 2)
    answer = right(case)
    answer["reported"], answer["counts"] = answer["counts"], {"local_derivatives": 0, "evaluations": 0}
    failure = judge_case(case, answer)  # the tools counted nothing: what the solution says it did is ignored
    assert failure is not None and failure.mistake == "uncounted", failure


# --- an integer too large for a float: a wrong answer, shown as one ------------------------------------


def _huge_backprop(answer: dict[str, Any]) -> None:
    pairs = answer["result"]["dict"]
    pairs[-1][1] = HUGE  # grad_table[u(n)], the first entry the judge reads


def _huge_mlp(answer: dict[str, Any]) -> None:
    grad_b = answer["result"][1]["dict"]
    grad_b[-1][1][0] = HUGE  # grad_b[l][0], the first number the judge reads


HUGE_IN: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "derivatives": (lambda a: a["result"].__setitem__(0, HUGE), "returned an integer of 401 digits"),
    "topo": (lambda a: a["result"].insert(0, HUGE), "item 0 of your order, an integer of 401 digits"),
    "forward": (lambda a: a["result"].__setitem__(-1, HUGE), "yours an integer of 401 digits"),
    "backprop": (_huge_backprop, "grad_table[u(n)] = an integer of 401 digits"),
    "build_grad": (
        lambda a: a["result"].__setitem__(0, {"plain": HUGE}),
        "returned an integer of 401 digits",
    ),
    "mlp_backward": (_huge_mlp, "yours an integer of 401 digits"),
    "naive": (lambda a: a.__setitem__("result", -HUGE), "= a negative integer of 401 digits"),
}


@pytest.mark.parametrize("name", NAMES)
def test_an_integer_too_large_for_a_float_is_a_wrong_answer(name: str) -> None:
    case = first(name)
    answer = right(case)
    change, says = HUGE_IN[name]
    change(answer)
    failure = judge_case(case, answer)
    assert failure is not None and failure.mistake != "answer", failure
    assert says in failure.headline, failure.headline
    assert failure.actual in (None, "an integer of 401 digits", "a negative integer of 401 digits")
    assert says in shown_to_the_user(failure)


def test_numbers_are_shown_compared_and_decoded_whatever_they_are() -> None:
    assert shown(HUGE) == "an integer of 401 digits"
    assert shown(-HUGE) == "a negative integer of 401 digits"
    assert shown(10**5000) == "an integer of about 5,001 digits"  # more digits than Python writes out
    assert shown([HUGE, 1]) == "[an integer of 401 digits, 1]"
    assert shown(2.5) == "2.5" and shown(math.nan) == "nan"
    assert not close(HUGE, 1e308) and not close(HUGE, math.inf) and close(2**60, float(2**60))
    assert differ(1.0, HUGE) == [] and differ(1.0, 1.0000001)[0].startswith("The two agree")
    deep: Any = 1
    for _ in range(200_000):
        deep = [deep]
    assert shown(deep).startswith("[[[[") and len(shown(deep)) <= 60
    assert isinstance(decode(deep), list)  # and no RecursionError
    assert decode({"dict": 5}) == Foreign("{'dict': 5}")
    assert decode({"dict": [[[1], 2]]}) == {Foreign("[1]"): 2}
    assert decode({"node": "x"}) == Foreign("?") and decode({"node": 3}) == NodeRef(3)
    assert decode({"value": [1], "label": None}) == Foreign("a node that is not in G (value [1])")
    assert decode({"value": HUGE, "label": None}).text.endswith("(value an integer of 401 digits)")


# --- answers that do not fit the schema: that case's FAIL, in one sentence --------------------------------


def _deep(levels: int) -> Any:
    value: Any = 0.0
    for _ in range(levels):
        value = [value]
    return value


UNREADABLE: list[tuple[str, int, Callable[[dict[str, Any]], None], str]] = [
    # (exercise, case, change to the right answer, the sentence)
    (
        "naive",
        0,
        change(("counts", "local_derivatives"), math.nan),
        "counts.local_derivatives is nan, not a whole",
    ),
    (
        "backprop",
        0,
        change(("counts", "local_derivatives"), "x"),
        "counts.local_derivatives is 'x', not a whole",
    ),
    ("backprop", 0, change(("counts", "evaluations"), -1), "counts.evaluations is -1, a negative count"),
    ("backprop", 0, change(("counts", "evaluations"), HUGE), "an integer of 401 digits, more than any count"),
    ("backprop", 0, change(("counts",), [1, 2]), "counts is [1, 2], not a dict"),
    ("backprop", 0, change(("counts",), DELETE), "the answer has no 'counts'"),
    ("backprop", 0, change(("ok",), DELETE), "the answer has no 'ok'"),
    ("backprop", 0, change(("ok",), "yes"), "ok is 'yes', not true or false"),
    ("backprop", 0, change(("calls",), [[0, 7]]), "calls[0].k is 7, not one of 0, 1"),
    ("backprop", 0, change(("calls",), [[0, 0]] * 401), "calls has 401 items, more than 400"),
    (
        "backprop",
        0,
        change(("result",), {"dict": [[{"node": 99}, 1.0]]}),
        "result.dict[0][0].node is 99, not one",
    ),
    (
        "backprop",
        0,
        change(("result",), {"dict": [[{"node": True}, 1.0]]}),
        ".node is True, not one of the 2",
    ),
    ("backprop", 0, change(("result",), {"dict": [[1, 2, 3]]}), "result.dict[0] is [1, 2, 3], not a [key"),
    (
        "backprop",
        0,
        change(("result",), {"dict": 1, "node": 0}),
        "result is {'dict': 1, 'node': 0}, not plain",
    ),
    ("backprop", 0, change(("result",), _deep(200_000)), "result is nested more than 64 levels deep"),
    ("backprop", 0, change(("result",), ["x" * 20_001]), "result[0] is a string of 20,001 characters"),
    (
        "backprop",
        0,
        change(("mutation",), [99, "data", 1.0, 2.0]),
        "mutation.node is 99, not one of the 2 nodes",
    ),
    ("backprop", 0, change(("mutation",), [0, "data", "1", 2.0]), "mutation.old is '1', not a number"),
    ("backprop", 0, change(("mutation",), [0, "data", 1.5]), "mutation is [0, 'data', 1.5], not a list of 4"),
    ("topo", 0, change(("result", 0), {"node": "x"}), "result[0].node is 'x', not one of the 2 nodes"),
    ("topo", 0, change(("result", 0), {"node": 0.5}), "result[0].node is 0.5, not one of the 2 nodes"),
    (
        "forward",
        0,
        change(("result", 0), {"value": "x", "label": ""}),
        "result[0].value is 'x', not a number",
    ),
    ("forward", 0, change(("result", 0), {"value": HUGE, "label": ""}), "a number a float holds"),
    ("derivatives", 0, change(("result",), [1.0] * 7), "result has 7 items, more than 6"),
    (
        "derivatives",
        0,
        change(("result", 0), {"node": 0}),
        "result[0].node is 0, not a node: this case has no graph",
    ),
    ("mlp_backward", 0, change(("mutation",), [0, "net", 1, 2]), "mutation.old is 1, not one of None"),
    ("build_grad", 1, change(("B", 0, 1), [1, 2]), "B[0].param is [1, 2], not a number"),
    ("build_grad", 1, change(("B", 0, 1), math.nan), "B[0].param is nan, not a finite number"),
    (
        "build_grad",
        1,
        change(("B", 0, 2), [["b", 5]]),
        "B[0].parents[0][1] is 5, not a node of B built before",
    ),
    ("build_grad", 1, change(("B", 0, 2), [["g", 99]]), "B[0].parents[0][1] is 99, not a position of G's 3"),
    ("build_grad", 1, change(("B", 0, 2), [["x", 0]]), "B[0].parents[0] is ['x', 0], not a node"),
    (
        "build_grad",
        1,
        change(("B", 0, 3), HUGE),
        "B[0].data is an integer of 401 digits, not a number a float",
    ),
    ("build_grad", 1, change(("B", 0, 5), "no"), "B[0].constant is 'no', not true or false"),
    (
        "build_grad",
        1,
        change(("result", 0), ["b", 10**6]),
        "result[0][1] is 1000000, not a node of B (B[0] to",
    ),
    ("build_grad", 1, change(("entries", 0, 0), 99), "entries[0].position is 99, not a position of G's 3"),
    ("build_grad", 1, change(("calls",), 2.5), "calls is 2.5, not a whole number"),
    ("build_grad", 1, change(("seed_kept",), 1), "seed_kept is 1, not true or false"),
]


@pytest.mark.parametrize(
    ("name", "index", "change", "says"),
    UNREADABLE,
    ids=[f"{name}: {says}" for name, _, _, says in UNREADABLE],
)
def test_an_answer_that_does_not_fit_its_schema_fails_its_case(
    name: str, index: int, change: Callable[[dict[str, Any]], None], says: str
) -> None:
    case = first(name, index)
    answer = right(case)
    change(answer)
    failure = judge_case(case, answer)
    assert failure is not None and failure.mistake == "answer", failure
    assert failure.headline.startswith("the answer could not be read: "), failure.headline
    assert says in failure.headline, failure.headline
    assert len(failure.headline) < 200 and "\n" not in failure.headline
    assert says in shown_to_the_user(failure)


def test_the_message_of_a_count_that_is_text() -> None:
    case = first("backprop")
    answer = right(case)
    answer["counts"]["local_derivatives"] = "x"
    failure = judge_case(case, answer)
    assert failure is not None
    assert (
        failure.headline
        == "the answer could not be read: counts.local_derivatives is 'x', not a whole number."
    )


def test_a_b_node_with_the_wrong_number_of_parents_fails_its_case() -> None:
    case = first("build_grad", 1)
    answer = right(case)
    k = next(k for k, r in enumerate(answer["B"]) if r[0] in OPS and OPS[r[0]].arity == 2 and r[1] is None)
    answer["B"][k][2] = answer["B"][k][2][:1]
    failure = judge_case(case, answer)
    assert failure is not None and failure.mistake == "answer"
    op = answer["B"][k][0]
    assert f"B[{k}] is a node of {op} with 1 parent(s); {op} takes 2" in failure.headline


def test_a_b_that_cannot_be_differentiated_again_at_g_s_values_fails_its_case() -> None:
    """B's value right, plus sqrt(u1 - u1) = 0, whose derivative does not exist: a FAIL, not a DomainError."""
    case = first("build_grad")
    answer = right(case)
    B, k, r0 = answer["B"], len(answer["B"]), answer["result"][0]
    B.append(["sub", None, [["g", 0], ["g", 0]], 0.0, None, False])
    B.append(["sqrt", None, [["b", k]], 0.0, None, False])
    B.append(["add", None, [r0, ["b", k + 1]], 0.0, None, False])
    answer["result"][0] = ["b", k + 2]
    answer["entries"] = [[j, ["b", k + 2] if ref == r0 else ref] for j, ref in answer["entries"]]
    failure = judge_case(case, answer)
    assert failure is not None and failure.mistake == "not-differentiable", failure
    assert failure.headline.startswith("your B for dz/da cannot be differentiated again at G's values")
    assert "sqrt" in failure.headline


ERRORS: list[tuple[Any, str]] = [
    ([], "error is [], not a dict"),
    ("boom", "error is 'boom', not a dict"),
    ({}, "error has no 'kind'"),
    ({"kind": 3}, "error.kind is 3, not one of 'exception'"),
    ({"kind": "exception", "key": [1]}, "error.key is [1], not an integer"),
    ({"kind": "exception", "message": None}, "error.message is None, not a string"),
    ({"kind": "recursion", "recursion_limit": "1000"}, "error.recursion_limit is '1000', not an integer"),
    ({"kind": "syntax", "line": HUGE}, "error.line is an integer of 401 digits, not an integer"),
    ({"kind": "missing-entry", "key": {"x": 1}}, "error.key is {'x': 1}, not an integer"),
]


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [(n, *e) for n in NAMES for e in ERRORS[:2]] + [("backprop", *e) for e in ERRORS[2:]],
)
def test_an_error_of_the_wrong_shape_fails_its_case(name: str, value: Any, says: str) -> None:
    failure = judge_case(first(name), {"ok": False, "error": value})
    assert failure is not None and failure.mistake == "answer" and says in failure.headline, failure


def test_an_answer_that_is_not_a_dict_fails_its_case() -> None:
    for answer in ([], "ok", 1, None, [{"ok": True}]):
        failure = judge_case(first("forward"), answer)  # type: ignore[arg-type]
        assert failure is not None and failure.mistake == "answer"
        assert failure.headline.startswith(f"the answer could not be read: the answer is {shown(answer)}")


def test_a_forged_load_answer_fails_every_case_with_its_sentence() -> None:
    failure = load_failure({"ok": False, "error": ["x"]}, "/tmp/backprop.py")
    assert failure is not None and failure.mistake == "answer"
    assert failure.case == "loading backprop.py"
    assert failure.headline == "the answer could not be read: error is ['x'], not a dict."
    assert load_failure({"ok": True}, "backprop.py") is None


def test_one_unreadable_answer_fails_only_its_own_case() -> None:
    """The judge's loop with answers forged here: case 3's does not fit, the 11 others are right."""
    cases = [c for c in judges.cases("backprop", 0) if "growth" not in c.request]
    loop = judging(exercises.EXERCISES["backprop"], iter(cases), "", "backprop.py", seed=0, output=Output())
    question = next(loop)
    assert question[0] == "load"
    answer: dict[str, Any] = {"ok": True}
    try:
        for number in range(len(cases)):
            question = loop.send(answer)
            cpu = {"cpu": cases[number].cpu} if cases[number].cpu else {}
            assert question == ("case", {**cases[number].request, **cpu})
            answer = right(cases[number])
            if number == 3:
                answer["counts"] = {"local_derivatives": "x", "evaluations": 0}
        loop.send(answer)
        raise AssertionError("the loop asked more questions than there are cases")
    except StopIteration as done:
        report: Report = done.value
    assert [c.passed for c in report.cases] == [n != 3 for n in range(len(cases))], report.text()
    assert report.score == len(cases) - 1 and report.max_score == len(cases)
    assert report.failure is not None and report.failure.mistake == "answer"
    assert report.failure.case == cases[3].name
