"""Symbol-to-symbol back-propagation: Algorithms 6.5/6.6, the backward subgraph B, higher order.

``grad`` input checking, targets outside the graph, z in T, the marking of B (``in_backward``,
``grad_of``, one call number per ``grad`` call), G left untouched, ``build_grad`` as the book calls it,
derivatives of any order, and Hessian-vector products against closed forms.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.6 (Algorithms 6.5, 6.6,
figure 6.10) and 6.5.10.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
import sympy
from catalogue import Case, sympy_value
from hypothesis import given
from strategies import DAG_SETTINGS, dag_cases, on_catalogue_and_random_dags

from micrograph import Graph, Value, build_grad, grad, hessian_vector_product


def snapshot(nodes: list[Value]) -> list[tuple[Any, ...]]:
    return [(v.data, v.grad, v.op, v.inputs, v.label, v.meta) for v in nodes]


def backward_nodes(outputs: list[Value], forward: set[Value]) -> list[Value]:
    """The nodes of B reachable from ``outputs`` that are not nodes of G."""
    seen: dict[Value, None] = {}
    for out in outputs:
        for v in Graph(out).nodes:
            if v not in forward:
                seen[v] = None
    return list(seen)


# ---------------------------------------------------------------------------------------------
# bad input


def test_z_must_be_a_value() -> None:
    x = Value(1.0)
    with pytest.raises(TypeError, match=r"z must be a Value.*float 3\.0"):
        grad(3.0, x)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="str"):
        grad("z", x)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="list"):
        grad([x], x)  # type: ignore[call-overload]


def test_targets_must_be_values() -> None:
    x = Value(1.0, label="x")
    z = x * x
    with pytest.raises(TypeError, match=r"float 2\.5"):
        grad(z, 2.5)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="NoneType"):
        grad(z, None)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="str"):
        grad(z, "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"T\[1\].*str 'y'"):
        grad(z, [x, "y"])  # type: ignore[list-item]


@pytest.mark.parametrize("empty", [[], ()], ids=["list", "tuple"])
def test_empty_target_list_is_a_value_error(empty: Any) -> None:
    x = Value(1.0)
    with pytest.raises(ValueError, match="empty"):
        grad(x * x, empty)


def test_hessian_vector_product_checks_lengths() -> None:
    x, y = Value(1.0), Value(2.0)
    with pytest.raises(ValueError, match="v has 1 components but wrt has 2"):
        hessian_vector_product(x * y, [x, y], [1.0])


# ---------------------------------------------------------------------------------------------
# what grad returns


def test_single_target_gives_a_node_and_a_sequence_a_list_in_order() -> None:
    x, y = Value(2.0, label="x"), Value(-3.0, label="y")
    z = x * x * y
    dx = grad(z, x)
    assert isinstance(dx, Value) and dx.data == 2 * 2.0 * -3.0
    dy, dx2 = grad(z, (y, x))
    assert (dy.data, dx2.data) == (4.0, -12.0)
    same = grad(z, [x, x])
    assert same[0].data == same[1].data == -12.0


def test_target_z_does_not_depend_on_is_a_constant_zero() -> None:
    x, other = Value(2.0, label="x"), Value(5.0, label="other")
    z = x.exp()
    zero = grad(z, other)
    assert zero.data == 0.0 and zero.is_constant and zero.is_leaf and zero.in_backward
    dx, d_other = grad(z, [x, other])
    assert math.isclose(dx.data, math.exp(2.0), rel_tol=1e-15)
    assert d_other.data == 0.0 and d_other.is_constant
    assert Graph(d_other).forward() == 0.0


def test_z_in_T_is_one() -> None:
    x = Value(0.5, label="x")
    z = x.tanh()
    one = grad(z, z)
    assert one.data == 1.0 and one.is_constant and one.in_backward
    assert one.grad_of is z
    dz, dx = grad(z, [z, x])
    assert dz.data == 1.0 and math.isclose(dx.data, 1 - math.tanh(0.5) ** 2, rel_tol=1e-15)
    assert grad(x, x).data == 1.0  # z a leaf


@pytest.mark.parametrize("every_node", [False, True])
def test_a_gradient_an_addition_passes_on_is_named_after_the_entry_it_was_built_as(every_node: bool) -> None:
    """In tanh(x*y + exp(x)), the node tanh′(u5) is dz/du5, and the addition u5 = u3 + u4 passes it on
    as dz/du3 and dz/du4: its caption is dz/du5, the entry nearest z, also when all three are targets
    (the explorer asks for every node of G)."""
    x, y = Value(1.0, label="x"), Value(2.0, label="y")
    s = x * y + x.exp()
    z = s.tanh()
    G = Graph(z)
    T = list(G.nodes) if every_node else [x, y]
    table = grad(z, T)
    node = (
        table[T.index(s)]
        if every_node
        else next(v for v in Graph(table[1]).nodes if v.op is not None and v.op.name == "tanh_grad")
    )
    assert node.grad_of is s and node.meta is not None
    assert [G.name(u) for u in node.meta.grad_of] == ["u5", "u4", "u3"]
    assert table[T.index(x)].grad_of is x and table[T.index(y)].grad_of is y


def test_gradient_with_respect_to_a_constant_of_G() -> None:
    x = Value(1.5, label="x")
    z = x * 4.0
    four = z.inputs[1]
    assert four.is_constant
    assert grad(z, four).data == 1.5


# ---------------------------------------------------------------------------------------------
# B is marked; G is unchanged


def check_marking(case: Case) -> tuple[set[Value], set[Value]]:
    """grad leaves G unchanged, marks B with one call number, and its gradient nodes hold 6.2's numbers."""
    z, xs = case.build_values()
    G = Graph(z)
    forward = set(G.nodes)
    before = snapshot(G.nodes)
    table = G.backprop()
    results = grad(z, xs)
    assert snapshot(G.nodes) == before, "grad modified a node of G"
    assert not any(v.in_backward for v in G.nodes)
    B = backward_nodes(results, forward)
    calls = {v.meta.call for v in B}  # type: ignore[union-attr]
    assert all(v.in_backward for v in B)
    assert len(calls) == 1, calls
    for x, node in zip(xs, results):
        assert node.in_backward and node.meta is not None
        assert x in node.meta.grad_of
        assert node.grad_of in node.meta.grad_of
    # every grad_table entry of B holds Algorithm 6.2's number for the forward node(s) it is the gradient of
    G_prime = set(G.prune(xs).nodes)
    covered: set[Value] = set()
    for v in B:
        for u in v.meta.grad_of:  # type: ignore[union-attr]
            assert u in forward, "grad_of must name a node of G"
            assert u in G_prime, f"{u!r} is outside G' but has a gradient node"
            assert math.isclose(v.data, table[u], rel_tol=1e-12, abs_tol=1e-15)
            covered.add(u)
        assert v.grad_of is (v.meta.grad_of[0] if v.meta.grad_of else None)  # type: ignore[union-attr]
    assert set(xs) <= covered
    return covered, G_prime


def check_case_marking(case: Case) -> None:
    """:func:`check_marking`, and for a chain (figure 6.10) one gradient node per node of G' below z."""
    covered, G_prime = check_marking(case)
    if "chain" in case.tags:
        # figure 6.10: one gradient node per node of G' below z; z's own gradient is the constant 1,
        # which B uses only where a rule returns a node of G (exp's output: dz/dy = 1 × z)
        assert G_prime - {next(u for u in G_prime if not any(u in v.inputs for v in G_prime))} <= covered
        assert covered <= G_prime


test_B_marking_on_catalogue, test_B_marking_on_random_dags = on_catalogue_and_random_dags(check_case_marking)


def test_each_grad_call_marks_its_own_nodes_and_leaves_earlier_B_alone() -> None:
    w = Value(0.5, label="w")
    z = w.tanh().tanh()
    G = set(Graph(z).nodes)
    d1 = grad(z, w)
    B1 = backward_nodes([d1], G)
    marks1 = [(v.meta, v.meta.call) for v in B1]  # type: ignore[union-attr]
    call1 = d1.meta.call  # type: ignore[union-attr]
    d2 = grad(d1, w)
    assert [(v.meta, v.meta.call) for v in B1] == marks1  # type: ignore[union-attr]
    B2 = backward_nodes([d2], G | set(B1))
    assert B2 and all(v.in_backward and v.meta.call == d2.meta.call for v in B2)  # type: ignore[union-attr]
    assert d2.meta.call != call1  # type: ignore[union-attr]
    assert w in d2.meta.grad_of  # type: ignore[union-attr]


def test_pruned_branches_get_no_gradient_nodes() -> None:
    x, y, w = Value(0.5, label="x"), Value(2.0, label="y"), Value(0.3, label="w")
    branch = w.sin()
    z = (x * y).tanh() + branch * y
    dx = grad(z, x)
    G = set(Graph(z).nodes)
    B = backward_nodes([dx], G)
    named = {u for v in B for u in v.meta.grad_of}  # type: ignore[union-attr]
    assert w not in named and branch not in named and y not in named
    assert x in named
    assert branch not in Graph(dx)  # dz/dx does not consume the unrelated branch


def test_build_grad_as_the_book_calls_it() -> None:
    x, y = Value(0.7, label="x"), Value(-1.2, label="y")
    t = (x * y).tanh()
    z = t * t + t.exp() * x
    G = Graph(z)
    G_prime = G.prune([x])
    grad_table = {z: Value(1.0)}  # grad_table[z] <- 1
    dx = build_grad(x, G, G_prime, grad_table)
    numbers = G.backprop()
    assert math.isclose(dx.data, numbers[x], rel_tol=1e-12)
    assert grad_table[x] is dx
    for V, node in grad_table.items():  # every entry it filled in holds Algorithm 6.2's number
        assert math.isclose(node.data, numbers[V], rel_tol=1e-12)
    assert set(grad_table) <= set(G_prime.nodes)


def test_build_grad_called_by_hand_with_wrong_arguments_names_the_argument() -> None:
    x = Value(0.5, label="x")
    z = (x * x).tanh()
    z.label = "z"
    G = Graph(z)
    w = Value(3.0, label="w")
    H = Graph(w * w)
    seeded = {z: Value(1.0)}
    where = "build_grad(V, G, G_prime, grad_table): "
    wanted = "G_prime must be a SubGraph (G.prune(T)) or G itself, got"
    cases: list[tuple[tuple[Any, ...], type[Exception], str]] = [
        ((x, G, G.prune([x]), {}), ValueError, "grad_table has no entry for z (u3, G's output); seed"),
        ((x, [z], G.prune([x]), seeded), TypeError, "G must be a Graph, got list [Value(data=0.24"),
        ((x, G, None, seeded), TypeError, f"{wanted} NoneType None"),
        ((x, G, [z], seeded), TypeError, f"{wanted} list"),
        ((x, G, H.prune([w]), seeded), ValueError, "G_prime, SubGraph(n=2 of 2), was not pruned from G, G"),
        ((x, H, G.prune([x]), seeded), ValueError, "G_prime, SubGraph(n=3 of 3), was not pruned from G, G"),
        ((x, G, G.prune([x]), [z]), TypeError, "grad_table must be a dict, got list"),
    ]
    for args, error, message in cases:
        with pytest.raises(error) as raised:
            build_grad(*args)
        assert str(raised.value).startswith(where + message)
    with pytest.raises(ValueError, match="is not a node of this graph"):
        build_grad(w, G, G.prune([x]), dict(seeded))
    for G_prime in (G.prune([x]), G):  # G itself is a G' that prunes nothing
        assert build_grad(x, G, G_prime, {z: Value(1.0)}).data == G.backprop()[x]


@DAG_SETTINGS
@given(dag_cases())
def test_build_grad_called_directly_on_random_dags(case: Case) -> None:
    """Only grad_table[z] seeded, targets asked for in any order: Algorithm 6.2's numbers every time."""
    z, xs = case.build_values()
    G = Graph(z)
    numbers = G.backprop()
    G_prime = G.prune(xs)
    grad_table = {z: Value(1.0)}
    for x in reversed(xs):
        dx = build_grad(x, G, G_prime, grad_table)
        assert math.isclose(dx.data, numbers[x], rel_tol=1e-12, abs_tol=1e-15)
    for V, node in grad_table.items():
        assert V in G_prime or V is z
        assert math.isclose(node.data, numbers[V], rel_tol=1e-12, abs_tol=1e-15)


# ---------------------------------------------------------------------------------------------
# higher order


@pytest.mark.parametrize("f", ["tanh", "exp", "sin", "sigmoid"])
def test_figure_6_9_chain_to_fourth_order(f: str) -> None:
    w = Value(0.4, label="w")
    z = getattr(getattr(getattr(w, f)(), f)(), f)()
    s = sympy.Symbol("w", real=True)
    fs = {
        "tanh": sympy.tanh,
        "exp": sympy.exp,
        "sin": sympy.sin,
        "sigmoid": lambda t: 1 / (1 + sympy.exp(-t)),
    }[f]
    expr = fs(fs(fs(s)))
    d = z
    for order in range(1, 5):
        d = grad(d, w)
        expr = sympy.diff(expr, s)
        exact = sympy_value(expr, [s], [0.4])
        assert math.isclose(d.data, exact, rel_tol=1e-9), (order, d.data, exact)
        # the B of every order is an ordinary graph: re-evaluate it at a new point
        assert math.isclose(Graph(d).forward({w: 0.9}), sympy_value(expr, [s], [0.9]), rel_tol=1e-9)
        w.data = 0.4
        Graph(d).forward()


def test_hessian_vector_product_of_a_quadratic_form() -> None:
    """z = 1/2 x^T A x + b^T x has Hessian (A + A^T) / 2 exactly: H v checked against it."""
    A = [[2.0, -1.0, 0.5], [0.0, 3.0, 1.0], [1.5, 1.0, -4.0]]
    b = [0.3, -0.2, 0.1]
    xs = [Value(v, label=f"x{i}") for i, v in enumerate([0.4, -1.1, 2.0])]
    z = Value(0.0)
    for i in range(3):
        z = z + b[i] * xs[i]
        for j in range(3):
            z = z + 0.5 * A[i][j] * xs[i] * xs[j]
    v = [1.0, -2.0, 0.5]
    hv = hessian_vector_product(z, xs, v)
    for i in range(3):
        expected = sum(0.5 * (A[i][j] + A[j][i]) * v[j] for j in range(3))
        assert math.isclose(hv[i].data, expected, rel_tol=1e-14), (i, hv[i].data, expected)
    hv_nodes = hessian_vector_product(z, xs, [Value(x) for x in v])  # v may be Values
    assert [n.data for n in hv_nodes] == pytest.approx([n.data for n in hv], rel=1e-14)


def test_hessian_vector_product_equals_hessian_rows() -> None:
    """H e_k is the k-th column of the Hessian, which grad(grad(z, x_k), x) gives directly."""
    x, y = Value(0.3, label="x"), Value(-0.8, label="y")
    z = (x * y).sin() + x.exp() * y * y
    for k, var in enumerate((x, y)):
        e = [1.0 if i == k else 0.0 for i in range(2)]
        column = grad(grad(z, var), [x, y])
        hv = hessian_vector_product(z, [x, y], e)
        for a, c in zip(hv, column):
            assert math.isclose(a.data, c.data, rel_tol=1e-13, abs_tol=1e-15)


def test_hessian_vector_product_with_v_made_of_the_variables() -> None:
    """z = x^2 y: H = [[2y, 2x], [2x, 0]]; at (2, 3) with v = (x, y) = (2, 3), H v = (24, 8)."""
    x, y = Value(2.0, label="x"), Value(3.0, label="y")
    z = x * x * y
    assert [n.data for n in hessian_vector_product(z, [x, y], [2.0, 3.0])] == [24.0, 8.0]
    assert [n.data for n in hessian_vector_product(z, [x, y], [x, y])] == [24.0, 8.0]
