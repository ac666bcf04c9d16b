"""The compiler (micrograph.compile): straight-line code for G and B gives Algorithms 6.1/6.2's numbers.

Oracles: the interpreted Algorithm 6.1 (``Graph.forward``) and Algorithm 6.2 (``Graph.backprop``) on the
same graph, on the whole catalogue, on random DAGs (hypothesis), and at a second point (new numbers,
same structure: the replay the compiler exists for).
"""

from __future__ import annotations

import math
import re

import pytest
from catalogue import CATALOGUE, Case
from hypothesis import given
from hypothesis import strategies as st
from strategies import DAG_SETTINGS, as_case, dag_cases, recipes

from micrograph import DomainError, Graph, Value, compile_graph, grad
from micrograph.compile import CompiledGraph
from micrograph.compile_emitter import FUSE, python_literal
from micrograph.compile_python import _code
from micrograph.engine import as_value
from micrograph.ops import OPS, STEP, Op


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def interpreted(g: Graph, wrt: list[Value], values: list[float]) -> tuple[float, list[float]]:
    """Algorithms 6.1 and 6.2 on the graph, the oracle (changes the nodes' .data)."""
    z = g.forward(values)
    table = g.backprop()
    return z, [table[w] if w in table else 0.0 for w in wrt]


def check_same(g: Graph, wrt: list[Value], f: CompiledGraph, values: list[float]) -> None:
    value, grads = f(values)
    z, expected = interpreted(g, wrt, values)
    assert close(value, z), (value, z)
    assert len(grads) == len(wrt)
    for k, (a, b) in enumerate(zip(grads, expected)):
        assert close(a, b), (k, a, b)


def check_case(case: Case, part_size: int = 5000) -> None:
    z, xs = case.build_values()
    g = Graph(z)
    f = compile_graph(g, xs, part_size=part_size)
    variables = g.variables
    for point in (case.point, case.other_point):
        by_var = dict(zip(xs, point))
        values = [by_var.get(v, v.data) for v in variables]  # variables order (every x is a variable of G)
        check_same(g, xs, f, values)


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


def _same_float(a: float, b: float) -> bool:
    """Equal bit for bit, but for the sign of a zero (the interpreter's sums start at 0.0), or both nan."""
    return a == b or (math.isnan(a) and math.isnan(b))


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
    values = dict(zip(xs, point))
    try:
        expected_z = g.forward(values)
        table = g.backprop()
    except DomainError as e:
        with pytest.raises(DomainError) as compiled:
            f(values)
        assert str(compiled.value) == str(e)
        return
    value, grads = f(values)
    assert _same_float(value, expected_z), (value, expected_z)
    for w, got in zip(wrt, grads):
        assert _same_float(got, table[w]), (g.name(w), got, table[w])


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
        try:
            expected_z = g.forward(values)
            table = g.backprop()
        except DomainError as e:
            with pytest.raises(DomainError) as compiled:
                f(values)
            assert str(compiled.value) == str(e)
            continue
        value, grads = f(values)
        assert _same_float(value, expected_z)
        assert all(_same_float(a, table.get(w, 0.0)) for a, w in zip(grads, xs))


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


def test_the_same_structure_gives_the_same_source() -> None:
    def build() -> tuple[Value, Value]:
        x = Value(0.5, label="x")
        u = x
        for _ in range(5):
            u = (u**2.5 + u**1.5).sigmoid() * (u**3.5).tanh() + x.relu()
        return x, u

    (x1, z1), (x2, z2) = build(), build()
    assert compile_graph(Graph(z1), [x1]).source == compile_graph(Graph(z2), [x2]).source


def test_parts_of_a_long_chain_share_their_text_and_are_compiled_once() -> None:
    x = Value(0.3, label="x")
    u = x
    for k in range(3000):
        u = (u * 0.999 + 0.1).relu() if k % 2 else (u * 1.001 - 0.05).tanh()
    g = Graph(u)
    before = _code.cache_info()
    f = compile_graph(g, [x], part_size=300)
    after = _code.cache_info()
    bodies = [part.split("\n", 1)[1] for part in f.source.split("# part ")[1:]]
    assert len(bodies) == f.parts > 20
    assert after.misses - before.misses == len(set(bodies)) <= 8  # each distinct text compiled once
    assert after.hits - before.hits == f.parts - len(set(bodies))
    check_same(g, [x], f, [0.7] + [v.data for v in g.leaves[1:]])


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


# --- calling convention ------------------------------------------------------------------------------


def _example() -> tuple[Value, Value, Value, Graph]:
    x = Value(0.3, label="x")
    w = Value(-1.2, label="w")
    z = (x * w + 2.0).tanh() * x + (x / w).exp()
    return x, w, z, Graph(z)


def test_inputs_as_mapping_sequence_or_variables_and_defaults_from_data() -> None:
    x, w, _, g = _example()
    f = compile_graph(g, [x, w])
    full = [v.data for v in g.leaves]
    full[g.index[x]] = 0.5
    by_map = f({x: 0.5})
    assert by_map == f(full)
    assert by_map == f([0.5 if v is x else v.data for v in g.variables])
    w.data = 2.0  # an SGD-style update of a leaf's .data is seen by the next call
    assert f({x: 0.5}) != by_map
    check_same(g, [x, w], f, [0.5, 2.0])
    with pytest.raises(ValueError, match="not a node of this graph"):
        f({Value(1.0): 2.0})
    with pytest.raises(ValueError, match="values"):
        f([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    with pytest.raises(ValueError, match="evaluate"):
        f.evaluate([1.0])


def test_changes_no_node() -> None:
    x, w, _, g = _example()
    f = compile_graph(g, [x, w])
    before = [(v.data, v.grad) for v in g.nodes]
    f({x: 0.9, w: 0.1})
    assert [(v.data, v.grad) for v in g.nodes] == before
    with pytest.raises(DomainError):
        f({w: 0.0})  # the interpreter re-run that produces the error restores every .data
    assert [(v.data, v.grad) for v in g.nodes] == before


def test_gradient_with_respect_to_output_inner_node_and_foreign_node() -> None:
    x, _, z, g = _example()
    inner = z.inputs[0]
    stranger = Value(5.0)
    f = compile_graph(g, [z, inner, stranger, x])
    value, grads = f()
    table = g.backprop()
    assert grads[0] == 1.0 and grads[2] == 0.0
    assert close(grads[1], table[inner]) and close(grads[3], table[x])
    assert value == z.data


def test_a_single_leaf_graph() -> None:
    x = Value(2.5)
    f = compile_graph(Graph(x), [x])
    assert f({x: 4.0}) == (4.0, [1.0])


# --- the source ---------------------------------------------------------------------------------------


def test_source_names_values_by_position_and_fuses_values_used_once() -> None:
    x, w, _, g = _example()
    f = compile_graph(g, [x, w])
    lines = [line.strip() for line in f.source.splitlines()]
    # Algorithm 6.1, lines 1-3: the inputs u(1)..u(n_i) unpacked from x, one commented line each
    unpack = [line for line in lines if re.match(r"^u\d+,  # u\(\d+\) <- x_\d+, an input", line)]
    assert [line.split(",")[0] for line in unpack] == [f"u{j}" for j in range(1, g.n_inputs + 1)]
    assert ") = x" in f.source
    statements = [line for line in lines if re.match(r"^(grad_)?u\d+ = ", line)]
    assert len(statements) == f.n_statements
    forward = [s.split(" = ")[0] for s in statements if s.startswith("u")]
    positions = [int(name[1:]) for name in forward]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    assert all(g.n_inputs < k <= len(g.nodes) for k in positions)  # uK is u(K), a value of G
    assert f"u{len(g.nodes)} = " in f.source  # z = u(n) always has a name
    assert len(forward) < len(g.nodes) - g.n_inputs  # values used once are written into their consumer
    assert "grad_u1 = " in f.source and "grad_u2 = " in f.source  # x = u(1), w = u(2): the returned ones
    assert "math.tanh(" in f.source and "math.exp(" in f.source  # templates of the operation table
    assert "f_tanh_grad(" in f.source  # tanh's rule calls the table's tanh_grad: written out, not copied
    compile(f.source, "<test>", "exec")  # the whole source is valid Python as shown


def test_a_chain_step_is_one_forward_statement_and_backward_steps_are_fused() -> None:
    x = Value(0.5, label="x")
    u = x
    for _ in range(50):
        u = (u * 0.999 + 0.1).relu()
    g = Graph(u)
    f = compile_graph(g, [x])
    body = [line.strip() for line in f.source.splitlines() if re.match(r"^\s+(grad_)?u\d+ = ", line)]
    forward = [line for line in body if line.startswith("u")]
    backward = [line for line in body if line.startswith("grad_")]
    # relu(u) * 0.999 + 0.1 is one statement; u, which relu reads twice and its derivative once, is named
    assert len(forward) == 51  # (the last relu is z)
    assert len(backward) <= 2 * 50 // FUSE + 2  # two products a step, FUSE operations a statement
    assert re.search(r"u\d+ = \(\(u(\d+) if u\1 > 0.0 else 0.0\) \* u\d+\) \+ u\d+", f.source)
    check_same(g, [x], f, [0.75] + [v.data for v in g.leaves[1:]])


def test_labels_never_go_into_the_code() -> None:
    evil = "x\nimport os; os.system('echo pwned')  # \u2028"
    x = Value(0.5, label=evil)
    y = Value(1.5, label="'''; raise SystemExit")
    z = (x * y).tanh() + x.relu()
    z.label = "__import__('os')"
    f = compile_graph(Graph(z), [x, y])
    for text in ("import os", "pwned", "SystemExit", "__import__", "'''"):
        assert text not in f.source
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_ .,:;&()[]=+-*/<>#\n")
    assert set(f.source) <= allowed, set(f.source) - allowed


def test_an_operation_outside_the_table_is_called_not_templated() -> None:
    evil = Op(
        "evil\nimport os", "e", 1, lambda v: 2.0 * v, (lambda v, out: 2.0,),
        code="__import__('os').system('echo pwned')",
    )  # fmt: skip
    x = Value(0.25)
    z = evil(x) * x
    f = compile_graph(Graph(z), [x])
    assert "__import__" not in f.source and "import os" not in f.source
    assert f({x: 3.0}) == (18.0, [12.0])


def test_numbers_are_written_with_repr_and_non_finite_ones_by_name() -> None:
    assert (
        python_literal(0.1) == "0.1" and python_literal(-2.5) == "(-2.5)" and python_literal(-0.0) == "(-0.0)"
    )
    assert (
        python_literal(math.inf) == "INF"
        and python_literal(-math.inf) == "(-INF)"
        and python_literal(math.nan) == "NAN"
    )
    c = as_value(math.inf)  # a leaf may hold inf, but no operation takes it (not even step, whose value is 1)
    with pytest.raises(DomainError, match="not finite"):
        STEP(c) * Value(0.5)
    f = compile_graph(Graph(c), [c])  # a graph of that one leaf: the literal is written by name
    assert "INF" in f.source


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


# --- training replays the compiled graph ---------------------------------------------------------------


def _train_both(make: object, data: tuple[list[list[float]], list[object]], **kw: object) -> None:
    from micrograph import nn

    runs = []
    for compiled in (False, True):
        model = make()  # type: ignore[operator]
        history = nn.train(model, data, progress=False, compile=compiled, **kw)  # type: ignore[arg-type]
        runs.append((history, [p.data for p in model.parameters()]))
    (h_eager, p_eager), (h_comp, p_comp) = runs
    for a, b in zip(h_eager.loss + h_eager.accuracy, h_comp.loss + h_comp.accuracy):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), (a, b)
    assert len(h_comp.loss) == len(h_eager.loss)
    for a, b in zip(p_eager, p_comp):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), (a, b)


def test_train_compiled_equals_eager_micrograd_demo_shape() -> None:
    from micrograph import datasets, nn

    X, y = datasets.moons(n=30, noise=0.1, seed=0)
    y_pm = [2.0 * t - 1.0 for t in y]
    _train_both(
        lambda: nn.MLP(2, [8, 8, 1], seed=1), (X, y_pm), loss="hinge", lr=1.0, epochs=3, l2=1e-4,
        schedule=lambda k: 1.0 - 0.9 * k / 100, shuffle=False,
    )  # fmt: skip


def test_train_compiled_equals_eager_cross_entropy_momentum_l1_minibatches() -> None:
    from micrograph import datasets, nn

    X, y = datasets.iris()
    _train_both(
        lambda: nn.MLP(4, [6, 3], seed=2), (X[::3], y[::3]), loss="cross_entropy", lr=0.05, epochs=2,
        batch_size=16, momentum=0.9, l2=1e-3, l1=1e-4,
    )  # fmt: skip


@pytest.mark.parametrize("part_size", [5000, 1])
def test_compiled_graph_keeps_requested_values(part_size: int) -> None:
    x = Value(0.5)
    h = (x * 3.0).tanh()
    z = h * h
    g = Graph(z)
    f = compile_graph(g, [x], keep=[h, x], part_size=part_size)
    assert (f.parts > 1) == (part_size == 1)
    value, grads, kept = f.evaluate_all([v.data for v in g.leaves])
    assert close(grads[0], g.backprop()[x])
    assert kept == [h.data, 0.5] and value == z.data
    with pytest.raises(ValueError, match="keep"):
        compile_graph(g, [x], keep=[Value(1.0)])


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
    values = dict(zip(xs, point))
    try:
        expected = interpreted(g, xs, [values.get(v, v.data) for v in g.variables])
    except DomainError as e:
        with pytest.raises(DomainError) as compiled:
            f(values)
        assert str(compiled.value) == str(e)
        return
    value, grads = f(values)
    assert close(value, expected[0])
    assert all(close(a, b) or (math.isnan(a) and math.isnan(b)) for a, b in zip(grads, expected[1]))


def test_bad_arguments_are_clear_errors() -> None:
    x, w, z, g = _example()
    with pytest.raises(TypeError, match="Graph"):
        compile_graph(z, [x])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="empty"):
        compile_graph(g, [])
    with pytest.raises(TypeError, match=r"wrt\[1\]"):
        compile_graph(g, [x, 2.0])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="part_size"):
        compile_graph(g, [x], part_size=0)
    single = compile_graph(g, w)  # a single Value is one target
    assert len(single({x: 1.0})[1]) == 1


def test_train_compiled_equals_eager_with_many_real_valued_mse_targets() -> None:
    from micrograph import nn

    X = [[0.1 * i, 0.05 * i * i - 0.3] for i in range(24)]
    y = [0.5 * x0 - x1 + 0.01 * i for i, (x0, x1) in enumerate(X)]  # 24 distinct targets: some compiled
    _train_both(
        lambda: nn.MLP(2, [5, 1], activation="tanh", seed=3), (X, y), loss="mse", lr=0.05, epochs=2,
        batch_size=8, l2=1e-3,
    )  # fmt: skip


def test_an_overflowing_local_derivative_behaves_as_in_algorithm_6_2() -> None:
    # d(x/y)/dy = -out / y = -1e300 / 1e-100 overflows in B: the compiled call hands the case to the
    # interpreter, so it returns (or raises) exactly what Algorithms 6.1 and 6.2 do
    x = Value(1.0, label="x")
    y = Value(2.0, label="y")
    z = x / y
    g = Graph(z)
    f = compile_graph(g, [x, y])  # B is built at these values, where every derivative exists
    try:
        expected = interpreted(g, [x, y], [1e200, 1e-100])
    except DomainError as e:
        with pytest.raises(DomainError) as compiled:
            f({x: 1e200, y: 1e-100})
        assert str(compiled.value) == str(e)
    else:
        assert f({x: 1e200, y: 1e-100}) == expected
        assert expected[1][1] == -math.inf


def test_no_derivative_into_a_constant_is_evaluated() -> None:
    # B is built on G' (Algorithm 6.5 prunes G to the nodes between wrt and z), so the local derivative
    # into a constant leaf, d(x ** y)/dy = out * log(x) with no real value at x < 0, is never computed
    from micrograph.ops import POW

    x = Value(-3.0, label="x")
    z = POW(x, 2.0)  # the exponent is a constant leaf
    f = compile_graph(Graph(z), [x])
    assert f({x: -3.0}) == (9.0, [-6.0])
    assert f({x: -0.5}) == (0.25, [-1.0])


def test_train_compiled_equals_eager_when_the_loss_picks_its_formula_from_values() -> None:
    # binary cross-entropy builds softplus(z) as log(1 + exp(z)) when z <= 0 and z + log(1 + exp(-z))
    # otherwise: a graph compiled at z <= 0 overflows at z = 800, where the eager step is fine
    from micrograph import nn

    X = [[800.0], [-800.0], [0.5], [-0.25]]
    y = [1, 0, 1, 0]

    def make() -> nn.MLP:
        model = nn.MLP(1, [1], seed=0)
        model.layers[0].neurons[0].w[0].data = 1.0
        model.layers[0].neurons[0].b.data = 0.0
        return model

    _train_both(make, (X, y), loss="binary_cross_entropy", lr=1e-3, epochs=2, shuffle=False)
