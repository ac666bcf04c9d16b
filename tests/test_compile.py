"""The compiler (micrograph.compile): straight-line code for G and B gives Algorithms 6.1/6.2's numbers.

Oracles: the interpreted Algorithm 6.1 (``Graph.forward``) and Algorithm 6.2 (``Graph.backprop``) on the
same graph, on the whole catalogue, on random DAGs (hypothesis), and at a second point (new numbers,
same structure: the replay the compiler exists for); where they raise, the compiled call raises the same.
The code it writes is tested in tests/test_compile_source.py, training on it in tests/test_compile_train.py.
"""

from __future__ import annotations

import math

import pytest
from catalogue import CATALOGUE, Case
from compile_checks import check_as_interpreted, check_case, close, interpreted, same_float
from hypothesis import given
from hypothesis import strategies as st
from strategies import DAG_SETTINGS, as_case, dag_cases, recipes

from micrograph import DomainError, Graph, Value, compile_graph, grad
from micrograph.compile import CompiledGraph
from micrograph.ops import OPS, POW, Op

# --- same numbers ------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CATALOGUE, ids=[c.name for c in CATALOGUE])
def test_catalogue_matches_algorithms_6_1_and_6_2(case: Case) -> None:
    check_case(case)


@pytest.mark.parametrize("case", CATALOGUE[::3], ids=[c.name for c in CATALOGUE[::3]])
def test_catalogue_split_into_parts_matches(case: Case) -> None:
    check_case(case, part_size=2)


@DAG_SETTINGS
@given(dag_cases())
def test_random_dags_match(case: Case) -> None:
    check_case(case)


@DAG_SETTINGS
@given(dag_cases(max_steps=12))
def test_random_dags_in_small_parts_match(case: Case) -> None:
    check_case(case, part_size=3)


@DAG_SETTINGS
@given(
    recipes(max_vars=3, max_steps=14),
    st.sampled_from([1, 4, 5000]),
    st.lists(st.floats(-40.0, 40.0, allow_nan=False, allow_infinity=False), min_size=3, max_size=3),
)
def test_random_dags_equal_the_interpreter_bit_for_bit_or_raise_its_error(
    recipe: tuple[tuple[float, ...], tuple[tuple[str, int, int], ...]], part_size: int, point: list[float]
) -> None:
    """Forward values and gradients as Algorithms 6.1 and 6.2 compute them, to the last bit, wherever
    they are defined (points up to 40 make powers and products overflow), and their error elsewhere;
    with respect to the variables, an inner node and z itself; in one function or in parts."""
    case = as_case(recipe)
    try:
        z, xs = case.build_values()
    except DomainError:
        return  # the recipe leaves the domain at its own point: nothing to compile
    g = Graph(z)
    wrt = [*xs, g.nodes[len(g.nodes) // 2], z]
    f = compile_graph(g, wrt, part_size=part_size)
    check_as_interpreted(g, f, dict(zip(xs, point)), wrt)


@DAG_SETTINGS
@given(recipes(max_vars=2, max_steps=8), st.sampled_from([1, 5000]))
def test_gradient_graphs_of_random_dags_compile_to_the_interpreters_numbers(
    recipe: tuple[tuple[float, ...], tuple[tuple[str, int, int], ...]], part_size: int
) -> None:
    """B of a random DAG is an ordinary graph (tanh', sigma', xlogy, step, x ** c ...): compiled with its
    own gradients, bit for bit as Algorithms 6.1 and 6.2 on it (section 6.5.10's second derivatives)."""
    case = as_case(recipe)
    try:
        z, xs = case.build_values()
        dz = grad(z, xs[0])
    except DomainError:
        return
    if not isinstance(dz, Value) or dz.op is None:
        return  # a constant derivative: nothing to compile
    g = Graph(dz)
    f = compile_graph(g, xs, part_size=part_size)
    for point in (case.point, case.other_point):
        values = {x: p for x, p in zip(xs, point) if x in g}  # B need not read every variable
        check_as_interpreted(g, f, values, xs)


def test_every_value_a_checked_value_needs_is_checked_where_an_operation_could_hide_it() -> None:
    """Op.passes_non_finite's claims, probed: an inf or nan argument at a position it marks gives an inf, a
    nan or an error, in the operation's f and in its code template (what compiled code runs)."""
    others = [0.0, -0.0, 1.0, -1.0, 2.5, -7.0, 1e-300, 1e300, -1e300]
    claimed = 0
    for op in OPS.values():
        for k in range(op.arity):
            if not op.passes_non_finite[k]:
                continue
            claimed += 1
            run = [op.f]
            if op.code is not None:
                template = op.code.format(*[f"a{m}" for m in range(op.arity)])
                run.append(eval(f"lambda a0, a1=0.0: {template}", {"math": math}))  # the table's own text
            for fn in run:
                for bad in (math.inf, -math.inf, math.nan):
                    for other in others:
                        args = [other] * op.arity
                        args[k] = bad
                        try:
                            out = fn(*args)
                        except (ArithmeticError, ValueError):
                            continue
                        assert not math.isfinite(out), (op.name, k, args, out)
    assert claimed >= 12
    assert not OPS["relu"].passes_non_finite[0] and not OPS["div"].passes_non_finite[1]
    assert Op("mine", "m", 1, lambda v: v, (lambda v, out: 1.0,)).passes_non_finite == (False,)


def test_second_derivative_compiles_b_as_an_ordinary_graph() -> None:
    x = Value(0.7, label="x")
    y = Value(-0.4, label="y")
    z = (x * y).tanh() * x + (x * x).sin()
    dz_dx = grad(z, x)
    g = Graph(dz_dx)  # B is an ordinary graph: compile it, differentiate it again
    f = compile_graph(g, [x, y])
    for point in ({x: 0.7, y: -0.4}, {x: -1.1, y: 0.3}):
        value, grads = f(point)
        g.forward(point)
        table = g.backprop()
        assert close(value, g.output.data)
        assert close(grads[0], table[x]) and close(grads[1], table[y])


# --- errors are the interpreter's ---------------------------------------------------------------------


def _same_error(g: Graph, f: CompiledGraph, values: dict[Value, float]) -> str:
    with pytest.raises(DomainError) as compiled:
        f(values)
    with pytest.raises(DomainError) as expected:
        g.forward(values)
        g.backprop()
    assert str(compiled.value) == str(expected.value)
    return str(compiled.value)


def test_domain_errors_are_those_of_algorithms_6_1_and_6_2() -> None:
    x = Value(2.0, label="x")
    y = Value(3.0, label="y")
    z = (x * y).log() + (y / (x - 1.0)) + (y - 1.0).sqrt() + (x * 10.0).exp()
    g = Graph(z)
    f = compile_graph(g, [x, y])
    assert "log" in _same_error(g, f, {x: -2.0})  # log of a negative number, naming the node
    assert "div" in _same_error(g, f, {x: 1.0, y: 1.5})  # division by zero
    assert "sqrt" in _same_error(g, f, {y: 0.5})  # sqrt of a negative number
    assert "exp" in _same_error(g, f, {x: 100.0})  # overflow
    assert "u" in _same_error(g, f, {x: -2.0})
    s = Value(4.0, label="s")
    r = (s - 4.0 + 1.0).sqrt() * s  # fine forward; at s = 3 the sqrt argument is 0: its derivative 0.5/0
    g2 = Graph(r)
    f2 = compile_graph(g2, [s])
    assert "Algorithm 6.2" in _same_error(g2, f2, {s: 3.0})


def test_non_finite_intermediate_is_caught_even_when_masked() -> None:
    x = Value(1e-20, label="x")
    z = (x * 1e300 * 1e10).relu() * 0.0 + x  # for x < 0 relu masks -inf; Algorithm 6.1 still rejects it
    g = Graph(z)
    f = compile_graph(g, [x])
    _same_error(g, f, {x: -1.0})


@DAG_SETTINGS
@given(
    st.sampled_from(CATALOGUE),
    st.lists(st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False), min_size=4, max_size=4),
)
def test_anywhere_the_compiled_function_raises_exactly_when_the_interpreter_does(
    case: Case, point: list[float]
) -> None:
    z, xs = case.build_values()
    g = Graph(z)
    f = compile_graph(g, xs)
    check_as_interpreted(g, f, dict(zip(xs, point)), xs, lambda a, b: close(a, b) or same_float(a, b))


def test_an_overflowing_local_derivative_behaves_as_in_algorithm_6_2() -> None:
    # d(x/y)/dy = -out / y = -1e300 / 1e-100 overflows in B: the compiled call hands the case to the
    # interpreter, so it returns (or raises) exactly what Algorithms 6.1 and 6.2 do
    x = Value(1.0, label="x")
    y = Value(2.0, label="y")
    z = x / y
    g = Graph(z)
    f = compile_graph(g, [x, y])  # B is built at these values, where every derivative exists
    check_as_interpreted(g, f, {x: 1e200, y: 1e-100}, [x, y])


def test_no_derivative_into_a_constant_is_evaluated() -> None:
    # B is built on G' (Algorithm 6.5 prunes G to the nodes between wrt and z), so the local derivative
    # into a constant leaf, d(x ** y)/dy = out * log(x) with no real value at x < 0, is never computed
    x = Value(-3.0, label="x")
    z = POW(x, 2.0)  # the exponent is a constant leaf
    f = compile_graph(Graph(z), [x])
    assert f({x: -3.0}) == (9.0, [-6.0])
    assert f({x: -0.5}) == (0.25, [-1.0])


# --- deep graphs -----------------------------------------------------------------------------------


@pytest.mark.parametrize("part_size", [5000, 40, 7])
def test_a_node_with_thousands_of_consumers_sums_its_terms_in_statements_of_a_few(part_size: int) -> None:
    x = Value(0.5, label="x")
    z = x * 1.0
    for k in range(3000):  # grad_table[x] is a sum of 3001 terms: one expression would overflow the compiler
        z = z + x * float(k % 7)
    g = Graph(z)
    f = compile_graph(g, [x], part_size=part_size)
    assert f.source.count(" + ") < 4 * 3001  # partial sums of a few terms, no term twice
    for point in (0.5, -2.0):
        value, grads = f({x: point})
        assert value == g.forward({x: point}) and grads == [g.backprop()[x]]


@pytest.mark.slow
def test_a_100000_node_chain_compiles_in_parts() -> None:
    x = Value(0.5, label="x")
    u = x
    for _ in range(20_000):  # 5 nodes per step: u * 0.999 (+ its constant), + 0.1 (+ its constant), relu
        u = (u * 0.999 + 0.1).relu()
    g = Graph(u)
    assert len(g.nodes) == 100_001
    f = compile_graph(g, [x])
    assert f.parts > 1
    value, grads = f({x: 0.25})
    z, expected = interpreted(g, [x], [0.25])
    assert close(value, z) and close(grads[0], expected[0])
