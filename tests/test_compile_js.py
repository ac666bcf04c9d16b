"""The compiler's JavaScript dialect: G, B and local derivatives as straight-line JavaScript, run by Node.

Oracles: the engine's own Algorithm 6.1 (``evaluate``), Algorithm 6.2 (``run_algorithm_6_2``), the derivative
rules called on floats (``Op.local_derivative``), and ``Op.__call__``'s DomainError for the domain of every
operation. The generated code is run by Node.js (``nodejs`` from Debian, installed by .ci/run).
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from typing import Any

import pytest
from catalogue import CATALOGUE, Case
from hypothesis import given
from strategies import DAG_SETTINGS, dag_cases

from micrograph import Graph, Value, grad
from micrograph.backprop import run_algorithm_6_2
from micrograph.compile_javascript import compile_javascript
from micrograph.errors import DomainError
from micrograph.forward import evaluate
from micrograph.ops import OPS, Op, pow_const

NODE = shutil.which("node") or shutil.which("nodejs")
pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed (apt-get install nodejs)")


def run_node(script: str) -> Any:
    """Run a JavaScript program with Node and return what it printed, parsed as JSON."""
    assert NODE is not None
    done = subprocess.run([NODE, "-e", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _number(x: Any) -> float:
    return math.nan if x is None else float(x)


def _program_for(z: Value) -> tuple[Graph, Any, list[Value], list[tuple[int, int, Value | float]]]:
    """G, its JavaScript program with B for every node of G and every edge's local derivative."""
    g = Graph(z)
    table = grad(z, g.nodes)  # B: grad_table[u(i)] for every node of G (Algorithms 6.5/6.6)
    derivs = []
    for i, v in enumerate(g.nodes):
        if v.op is not None:
            for k in range(len(v.inputs)):
                derivs.append((i, k, v.op.local_derivative(k, v.inputs, v)))
    extra = [*table, *(d for _, _, d in derivs if isinstance(d, Value))]
    return g, compile_javascript(g, extra), table, derivs


def _check_case(case: Case, points: list[list[float]]) -> None:
    z, xs = case.build_values()
    g, program, table, derivs = _program_for(z)
    inputs = []
    for point in points:
        values = {x: p for x, p in zip(xs, point)}
        inputs.append([values.get(v, v.data) for v in g.nodes[: g.n_inputs]])
    script = (
        program.source
        + f"var out = []; var xs = {json.dumps(inputs)};"
        + f"for (var r = 0; r < xs.length; r++) {{ var u = new Float64Array({program.size});"
        + "forward_backward(xs[r], u); out.push(Array.from(u)); }"
        + "console.log(JSON.stringify(out));"
    )
    results = run_node(script)
    for point, x, slots in zip(points, inputs, results):
        expected = evaluate(g, x)
        saved = [v.data for v in g.nodes]
        for v, d in zip(g.nodes, expected):
            v.data = d
        try:
            grads, _ = run_algorithm_6_2(g)
        finally:
            for v, d in zip(g.nodes, saved):
                v.data = d
        for i in range(len(g.nodes)):
            value = _number(slots[i])
            assert value == pytest.approx(expected[i], rel=1e-12, abs=1e-12), (case.name, point, i)
            got = _number(slots[program.slot[table[i]]])
            assert got == pytest.approx(grads[i], rel=1e-9, abs=1e-12), (case.name, point, i)
        for i, k, d in derivs:
            node = g.nodes[i]
            args = tuple(expected[g.index[p]] for p in node.inputs)
            want = node.op.local_derivative(k, args, expected[i])
            got = float(d) if not isinstance(d, Value) else _number(slots[program.slot[d]])
            assert got == pytest.approx(want, rel=1e-12, abs=1e-12), (case.name, point, i, k)


@pytest.mark.slow  # seconds: run by make test-slow (and CI), keeping make test within minutes
def test_catalogue_in_javascript_matches_algorithms_6_1_and_6_2() -> None:
    for case in CATALOGUE:
        _check_case(case, [case.point, case.other_point])


@DAG_SETTINGS
@given(case=dag_cases())
def test_random_dags_in_javascript_match_the_engine(case: Case) -> None:
    _check_case(case, [case.point, case.other_point])


def _domain_cases() -> list[tuple[Op, tuple[float, ...]]]:
    edge = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.0, -3.0]
    edge += [1e-300, 700.0, 710.0, -750.0, 1e200, -1e200]
    cases: list[tuple[Op, tuple[float, ...]]] = []
    ops = [*OPS.values(), pow_const(2.0), pow_const(3.0), pow_const(-1.0), pow_const(-1.5), pow_const(0.5)]
    for op in ops:
        if op.arity == 1:
            cases += [(op, (x,)) for x in edge]
        else:
            cases += [(op, (x, y)) for x in edge for y in edge[:10]]
    return cases


def _python_says(op: Op, args: tuple[float, ...]) -> float | str:
    """``op(*args)``, or what its template must give instead: ``"NaN"`` where ``f`` finds no value (outside
    the domain), the infinity where ``f`` overflows (an infinite result, or OverflowError)."""
    try:
        return op(*args)
    except DomainError as e:
        if e.result is not None:
            return "NaN" if math.isnan(e.result) else "Infinity" if e.result > 0 else "-Infinity"
    try:
        op.f(*args)
    except OverflowError:
        return "Infinity"  # math.exp(710.0), 1e200 ** 2: the sign of a finite base's power overflowing
    except (ValueError, ZeroDivisionError):
        return "NaN"
    raise AssertionError(f"{op.name}{args}: a DomainError that neither f nor its result explains")


def test_every_operation_has_a_javascript_template_with_the_same_domain() -> None:
    """Where Op.__call__ raises DomainError the template gives NaN if no value exists and the infinity if
    f overflows (the explorer's status tells them apart), elsewhere f's value."""
    cases = _domain_cases()
    body = ",".join(
        "function(){var u=["
        + ",".join(json.dumps(a) for a in args)
        + "]; return "
        + op.js.format(*(f"u[{k}]" for k in range(op.arity)))
        + ";}"  # type: ignore[union-attr]
        for op, args in cases
    )
    script = (
        f"var fs = [{body}]; console.log(JSON.stringify(fs.map(function (f) {{"
        "var x = f(); return isFinite(x) ? x : String(x); })));"
    )
    results = run_node(script)
    for (op, args), got in zip(cases, results):
        want = _python_says(op, args)
        if isinstance(want, str):
            assert got == want or (want == "Infinity" and got == "-Infinity"), (op.name, args, got, want)
        else:
            assert not isinstance(got, str), (op, args, got)
            assert got == pytest.approx(want, rel=1e-13, abs=1e-300), (op, args)


def test_first_non_finite_slot_is_the_node_outside_its_domain() -> None:
    x = Value(4.0, label="x")
    y = (x - 3.0).log()  # log of a negative number at x = 2
    z = (y * x).tanh()
    g, program, _, _ = _program_for(z)
    inputs = [2.0 if v is x else v.data for v in g.nodes[: g.n_inputs]]
    script = (
        program.source + f"var u = new Float64Array({program.size}); forward_backward({inputs}, u);"
        "var k = -1; for (var i = 0; i < u.length; i++) { if (!isFinite(u[i])) { k = i; break; } }"
        "console.log(JSON.stringify(k));"
    )
    with pytest.raises(DomainError, match="log"):
        g.forward({x: 2.0})
    assert run_node(script) == g.index[y]


def test_source_holds_no_label_and_refuses_foreign_operations() -> None:
    x = Value(1.0, label="</script><b>x")
    z = (x * 2.0).tanh()
    program = compile_javascript(Graph(z), grad(z, [x]))
    assert "</script>" not in program.source and "<b>" not in program.source
    assert "Math.tanh(u[" in program.source
    foreign = Op("twice", "2·", 1, lambda a: 2 * a, (lambda a, out: 2.0,))
    w = foreign(x)
    with pytest.raises(ValueError, match="no JavaScript template"):
        compile_javascript(Graph(w))
    with pytest.raises(TypeError, match="Graph"):
        compile_javascript(z)  # type: ignore[arg-type]
