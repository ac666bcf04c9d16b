"""Arbitrary JSON from the student's side never crashes the judge, and real solution files that answer with
an integer of 401 digits or a line nested 200,000 deep lose that case only.

hypothesis throws arbitrary JSON at every exercise (the whole answer, its fields, one part of the right
answer); two tests check real solution files end to end.
"""

from __future__ import annotations

import copy
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from exercise_answers import HUGE, change, first, right, shown_to_the_user
from exercise_solutions import CORRECT
from hypothesis import given
from hypothesis import strategies as st

from lessons import exercises
from lessons.exercises import judges
from lessons.exercises.judge import judge_case
from lessons.exercises.limits import MAX_NESTING
from lessons.exercises.report import Failure
from lessons.exercises.verdict import Case

NAMES = judges.NAMES


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
    change(path, data.draw(JSON, label="value"))(answer)
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
