"""An answer from the student's side is judged once it fits its exercise's schema; it never crashes the judge.

The process running the solution answers each case with a JSON line, and the solution can write any line to
the answer's descriptor. Each finding below once crashed the judge (a traceback, and a score of 0 for every
case): an integer too large for a float, NaN counts, an exponent that is a list, a line nested 200,000 deep,
counts that are strings, references to nodes that do not exist, an error that is a list, missing fields.
Now each is that case's FAIL with one sentence, and the other cases are scored as usual.

Most tests drive the judge directly with forged answers (the engine's right answer, changed); hypothesis
throws arbitrary JSON at every exercise; two tests check real solution files end to end.
"""

from __future__ import annotations

import copy
import json
import math
import textwrap
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from exercise_solutions import CORRECT
from hypothesis import given
from hypothesis import strategies as st

from lessons import exercises
from lessons.exercises import given as harness
from lessons.exercises import judges
from lessons.exercises.failures import load_failure
from lessons.exercises.judge import judge_case, judging
from lessons.exercises.judges.derivatives import DERIVATIVE_RULES
from lessons.exercises.limits import MAX_NESTING, Output
from lessons.exercises.report import CaseResult, Failure, Report
from lessons.exercises.verdict import Case, Foreign, NodeRef, close, decode, differ, shown
from micrograph import backprop, grad
from micrograph.forward import evaluate
from micrograph.naive import naive_cost
from micrograph.ops import OPS

HUGE = 10**400
"""An integer no float holds."""

NAMES = judges.NAMES


def first(name: str, index: int = 0) -> Case:
    """Case ``index`` of an exercise (seed 0)."""
    for i, case in enumerate(judges.cases(name, 0)):
        if i == index:
            return case
    raise IndexError(index)


def _mlp_answer(request: dict[str, Any]) -> Any:
    """The correct solution's (grad_W, grad_b), run here on the net the child would build."""
    namespace: dict[str, Any] = {}
    exec(CORRECT["mlp_backward"], namespace)
    acts = [None if a is None else OPS[a] for a in request["activations"]]

    def f_prime(k: int, a: float, h: float) -> float:
        op = acts[k]
        return 1.0 if op is None else float(op.local_derivative(0, (a,), h))

    keys = ("l", "W", "b", "a", "h", "g", "lam")
    net = types.SimpleNamespace(**{k: request[k] for k in keys}, f_prime=f_prime)
    return namespace["backward_mlp"](net)


def right(case: Case) -> dict[str, Any]:
    """The right answer to a case as the child sends it (plain data made by the child's own converter)."""
    request, graph = case.request, case.graph
    assert case.exercise is not None
    name = case.exercise.name
    if name == "derivatives":
        opname, k = next((op, k) for f, op, k in DERIVATIVE_RULES if f == request["function"])
        derivative = OPS[opname].local_derivative
        return {"ok": True, "result": [float(derivative(k, tuple(a), out)) for a, out in request["points"]]}
    if name == "mlp_backward":
        return {"ok": True, "result": harness.Plain({})(_mlp_answer(request)), "mutation": []}
    assert graph is not None
    convert = harness.Plain({id(v): j for j, v in enumerate(graph.nodes)})
    if name == "topo":
        rid = {pos: r for r, pos in case.extra["ref_to_pos"].items()}
        return {"ok": True, "result": [{"node": rid[j]} for j in range(len(graph.nodes))], "mutation": []}
    if name == "forward":
        return {"ok": True, "result": evaluate(graph, request["x"]), "mutation": []}
    if name == "backprop":
        counts = {"local_derivatives": graph.num_edges, "evaluations": 0}
        return {"ok": True, "result": convert(backprop(graph)), "mutation": [], "counts": counts, "calls": []}
    if name == "naive":
        w = graph.nodes[request["w"]]
        cost = naive_cost(graph.output, w)
        counts = {"local_derivatives": cost["local_derivatives"], "evaluations": cost["recomputed"]}
        value = backprop(graph)[w]
        return {"ok": True, "result": value, "mutation": [], "counts": counts, "reported": None}
    assert name == "build_grad"
    results = grad(graph.output, [graph.nodes[j] for j in request["targets"]])
    B = harness.records_of_B(graph, results)
    return {
        "ok": True,
        "result": [B["ref"](r) for r in results],
        "entries": [[j, B["ref"](r)] for j, r in zip(request["targets"], results)],
        "B": B["records"],
        "seed_kept": True,
        "calls": len(results),
        "mutation": [],
    }


def shown_to_the_user(failure: Failure) -> str:
    """The report of one failed case as text, and its JSON read back: what a student and a teacher see."""
    case = CaseResult(failure.case, False, 0.0, 1.0, failure.headline, failure.mistake)
    report = Report("backprop", "backprop", [case], failure, seed=0)
    json.loads(report.to_json())
    return " ".join(report.text().split())  # the lines as wrapped, joined again


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
    assert differ(1.0, HUGE) == "" and differ(1.0, 1.0000001).startswith("The two agree")
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


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(answer: dict[str, Any]) -> None:
        where: Any = answer
        for part in path[:-1]:
            where = where[part]
        if value is DELETE:
            del where[path[-1]]
        else:
            where[path[-1]] = value

    return change


DELETE = object()
"""Remove the field instead of setting it."""

UNREADABLE: list[tuple[str, int, Callable[[dict[str, Any]], None], str]] = [
    # (exercise, case, change to the right answer, the sentence)
    (
        "naive",
        0,
        _set(("counts", "local_derivatives"), math.nan),
        "counts.local_derivatives is nan, not a whole",
    ),
    (
        "backprop",
        0,
        _set(("counts", "local_derivatives"), "x"),
        "counts.local_derivatives is 'x', not a whole",
    ),
    ("backprop", 0, _set(("counts", "evaluations"), -1), "counts.evaluations is -1, a negative count"),
    ("backprop", 0, _set(("counts", "evaluations"), HUGE), "an integer of 401 digits, more than any count"),
    ("backprop", 0, _set(("counts",), [1, 2]), "counts is [1, 2], not a dict"),
    ("backprop", 0, _set(("counts",), DELETE), "the answer has no 'counts'"),
    ("backprop", 0, _set(("ok",), DELETE), "the answer has no 'ok'"),
    ("backprop", 0, _set(("ok",), "yes"), "ok is 'yes', not true or false"),
    ("backprop", 0, _set(("calls",), [[0, 7]]), "calls[0].k is 7, not one of 0, 1"),
    ("backprop", 0, _set(("calls",), [[0, 0]] * 401), "calls has 401 items, more than 400"),
    (
        "backprop",
        0,
        _set(("result",), {"dict": [[{"node": 99}, 1.0]]}),
        "result.dict[0][0].node is 99, not one",
    ),
    ("backprop", 0, _set(("result",), {"dict": [[{"node": True}, 1.0]]}), ".node is True, not one of the 2"),
    ("backprop", 0, _set(("result",), {"dict": [[1, 2, 3]]}), "result.dict[0] is [1, 2, 3], not a [key"),
    ("backprop", 0, _set(("result",), {"dict": 1, "node": 0}), "result is {'dict': 1, 'node': 0}, not plain"),
    ("backprop", 0, _set(("result",), _deep(200_000)), "result is nested more than 64 levels deep"),
    ("backprop", 0, _set(("result",), ["x" * 20_001]), "result[0] is a string of 20,001 characters"),
    (
        "backprop",
        0,
        _set(("mutation",), [99, "data", 1.0, 2.0]),
        "mutation.node is 99, not one of the 2 nodes",
    ),
    ("backprop", 0, _set(("mutation",), [0, "data", "1", 2.0]), "mutation.old is '1', not a number"),
    ("backprop", 0, _set(("mutation",), [0, "data", 1.5]), "mutation is [0, 'data', 1.5], not a list of 4"),
    ("topo", 0, _set(("result", 0), {"node": "x"}), "result[0].node is 'x', not one of the 2 nodes"),
    ("topo", 0, _set(("result", 0), {"node": 0.5}), "result[0].node is 0.5, not one of the 2 nodes"),
    ("forward", 0, _set(("result", 0), {"value": "x", "label": ""}), "result[0].value is 'x', not a number"),
    ("forward", 0, _set(("result", 0), {"value": HUGE, "label": ""}), "a number a float holds"),
    ("derivatives", 0, _set(("result",), [1.0] * 7), "result has 7 items, more than 6"),
    (
        "derivatives",
        0,
        _set(("result", 0), {"node": 0}),
        "result[0].node is 0, not a node: this case has no graph",
    ),
    ("mlp_backward", 0, _set(("mutation",), [0, "net", 1, 2]), "mutation.old is 1, not one of None"),
    ("build_grad", 1, _set(("B", 0, 1), [1, 2]), "B[0].param is [1, 2], not a number"),
    ("build_grad", 1, _set(("B", 0, 1), math.nan), "B[0].param is nan, not a finite number"),
    ("build_grad", 1, _set(("B", 0, 2), [["b", 5]]), "B[0].parents[0][1] is 5, not a node of B built before"),
    ("build_grad", 1, _set(("B", 0, 2), [["g", 99]]), "B[0].parents[0][1] is 99, not a position of G's 3"),
    ("build_grad", 1, _set(("B", 0, 2), [["x", 0]]), "B[0].parents[0] is ['x', 0], not a node"),
    ("build_grad", 1, _set(("B", 0, 3), HUGE), "B[0].data is an integer of 401 digits, not a number a float"),
    ("build_grad", 1, _set(("B", 0, 5), "no"), "B[0].constant is 'no', not true or false"),
    ("build_grad", 1, _set(("result", 0), ["b", 10**6]), "result[0][1] is 1000000, not a node of B (B[0] to"),
    ("build_grad", 1, _set(("entries", 0, 0), 99), "entries[0].position is 99, not a position of G's 3"),
    ("build_grad", 1, _set(("calls",), 2.5), "calls is 2.5, not a whole number"),
    ("build_grad", 1, _set(("seed_kept",), 1), "seed_kept is 1, not true or false"),
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


# --- arbitrary JSON: the judge never raises -------------------------------------------------------------

KEYS = [
    "ok", "id", "error", "kind", "result", "counts", "local_derivatives", "evaluations", "mutation", "calls",
    "reported", "B", "entries", "seed_kept", "dict", "node", "value", "label", "object", "plain", "key",
    "message", "type", "traceback", "recursion_limit", "name", "line",
]  # fmt: skip

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=4)
    | st.sampled_from([HUGE, -HUGE, 2**53 + 1, 0, 1, -1, "g", "b", "pow", "add", "exception", "data", "net"])
)


def _tagged(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Plain data's tagged dicts and build_grad's references, with anything inside."""
    return (
        st.fixed_dictionaries({"dict": st.lists(st.lists(children, min_size=2, max_size=2), max_size=3)})
        | st.builds(lambda j: {"node": j}, st.integers(-2, 40))
        | st.fixed_dictionaries({"value": children, "label": children})
        | st.fixed_dictionaries({"object": children})
        | st.fixed_dictionaries({"plain": children})
        | st.tuples(st.sampled_from(["g", "b"]), st.integers(-1, 40)).map(list)
    )


JSON = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=3), children, max_size=4)
        | _tagged(children)
    ),
    max_leaves=24,
)
"""Any JSON value, leaning to the shapes the answers have."""

CASES = {name: first(name, 1 if name == "build_grad" else 0) for name in NAMES}
RIGHT = {name: right(case) for name, case in CASES.items()}


def _never_raises(case: Case, answer: Any) -> Failure | None:
    failure = judge_case(case, answer)
    if failure is not None:
        assert isinstance(failure, Failure) and failure.headline
        shown_to_the_user(failure)
    return failure


@pytest.mark.parametrize("name", NAMES)
@given(answer=JSON)
def test_any_json_value_as_the_answer_is_a_failure(name: str, answer: Any) -> None:
    assert _never_raises(CASES[name], answer) is not None


@pytest.mark.parametrize("name", NAMES)
@given(ok=st.booleans(), values=st.dictionaries(st.sampled_from(KEYS), JSON, max_size=8))
def test_any_json_in_the_answer_s_fields_is_a_failure(name: str, ok: bool, values: dict[str, Any]) -> None:
    assert _never_raises(CASES[name], {**values, "ok": ok}) is not None


def _parts(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value (the paths to its items), breadth first, at most 400."""
    out: list[tuple[Any, ...]] = []
    todo = [(value, path)]
    while todo and len(out) < 400:
        v, p = todo.pop(0)
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else []
        for key, item in items:
            out.append((*p, key))
            todo.append((item, (*p, key)))
    return out


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_any_json_in_place_of_one_part_of_the_right_answer_never_raises(name: str, data: Any) -> None:
    case = CASES[name]
    answer = copy.deepcopy(RIGHT[name])
    path = data.draw(st.sampled_from(_parts(answer)), label="path")
    _set(path, data.draw(JSON, label="value"))(answer)
    _never_raises(case, answer)


# --- end to end: real solution files --------------------------------------------------------------------

LAST_CASE_HUGE = {
    "derivatives": "def sqrt_dx(x, out):\n    return 10 ** 400\n",
    "topo": """
        _right, _seen = topological_order, []
        def topological_order(z):
            _seen.append(z)
            order = _right(z)
            return order if len(_seen) < LAST else [10 ** 400, *order]
    """,
    "forward": """
        _right, _seen = forward, []
        def forward(G, x):
            _seen.append(G)
            u = _right(G, x)
            if len(_seen) == LAST:
                u[-1] = 10 ** 400
            return u
    """,
    "backprop": """
        _right, _seen = backprop, []
        def backprop(G):
            _seen.append(G)
            table = _right(G)
            if len(_seen) == LAST:
                table[G.nodes[-1]] = 10 ** 400
            return table
    """,
    "mlp_backward": """
        _right, _seen = backward_mlp, []
        def backward_mlp(net):
            _seen.append(net)
            grad_W, grad_b = _right(net)
            if len(_seen) == LAST:
                grad_b[net.l][0] = 10 ** 400
            return grad_W, grad_b
    """,
    "naive": """
        _right, _depth, _seen = naive_grad, [0], []
        def naive_grad(z, w):  # the correct one recurses through this name: only the outer call is changed
            if _depth[0] == 0:
                _seen.append(z)
            _depth[0] += 1
            try:
                value = _right(z, w)
            finally:
                _depth[0] -= 1
            return 10 ** 400 if _depth[0] == 0 and len(_seen) == LAST else value
    """,
    "build_grad": """
        _right, _depth, _seen = build_grad, [0], []
        def build_grad(V, G, G_prime, grad_table):
            if not _seen or _seen[-1] is not G:
                _seen.append(G)
            _depth[0] += 1
            try:
                node = _right(V, G, G_prime, grad_table)
            finally:
                _depth[0] -= 1
            return 10 ** 400 if _depth[0] == 0 and len(_seen) == LAST else node
    """,
}
"""Appended to the correct solution: right on every case but the last, which holds 10 ** 400."""


@pytest.mark.parametrize("name", NAMES)
def test_a_solution_right_but_for_a_huge_integer_in_its_last_case_loses_that_case_only(
    name: str, tmp_path: Path
) -> None:
    n = sum(1 for _ in judges.cases(name, 0))
    path = tmp_path / f"{name}.py"
    tail = textwrap.dedent(LAST_CASE_HUGE[name]).replace("LAST", str(n))
    path.write_text(CORRECT[name] + "\n" + tail, encoding="utf-8")
    report = exercises.check(name, path, record=False, drawing=None)
    assert [c.passed for c in report.cases] == [True] * (n - 1) + [False], report.text()
    assert report.score == n - 1 and report.max_score == n
    assert report.failure is not None and report.failure.mistake != "answer"
    assert "an integer of 401 digits" in report.failure.headline, report.failure.headline
    assert "an integer of 401 digits" in " ".join(report.text().split())  # the wrapped lines joined
    json.loads(report.to_json())


def test_a_line_nested_200000_deep_on_the_answer_descriptor_fails_only_its_case(tmp_path: Path) -> None:
    sizes = [len(c.graph.nodes) for c in judges.cases("backprop", 0) if c.graph is not None]
    size = next(s for s in sizes if sizes.count(s) == 1 and s > 2)  # one case, known by its graph's size
    source = CORRECT["backprop"] + textwrap.dedent(f"""
        import collections  # the allow-list refuses os and sys by name; what is loaded stays reachable
        os, sys = collections._sys.modules["os"], collections._sys
        _right = backprop
        def backprop(G):
            if len(G.nodes) == {size}:
                os.write(int(sys.argv[3]), b"[" * 200_000 + b"]" * 200_000 + b"\\n")
            return _right(G)
    """)
    path = tmp_path / "backprop.py"
    path.write_text(source, encoding="utf-8")
    report = exercises.check("backprop", path, record=False, drawing=None)
    graphs = [c for c in judges.cases("backprop", 0) if c.graph is not None]
    passed = {c.name: c.passed for c in report.cases}
    assert [passed[c.name] for c in graphs] == [s != size for s in sizes], report.text()
    assert report.score == len(report.cases) - 1
    failure = report.failure
    assert failure is not None and failure.mistake == "protocol"
    assert failure.headline == (
        "the solution's answer could not be read: the process running the solution sent an answer nested "
        f"more than {MAX_NESTING} levels deep."
    )
