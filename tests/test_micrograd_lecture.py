"""Code from Karpathy's micrograd lecture runs unchanged on micrograph Values: its ``trace`` and
``draw_dot`` read the read-only attributes ``_prev`` and ``_op``."""

from __future__ import annotations

import html
import math
import shutil

import pytest
from graphviz import Digraph

from micrograph import Graph, Value

# --- the lecture's notebook code, as written there --------------------------------------------------


def trace(root):  # type: ignore[no-untyped-def]
    # builds a set of all nodes and edges in a graph
    nodes, edges = set(), set()

    def build(v):  # type: ignore[no-untyped-def]
        if v not in nodes:
            nodes.add(v)
            for child in v._prev:
                edges.add((child, v))
                build(child)

    build(root)
    return nodes, edges


def draw_dot(root):  # type: ignore[no-untyped-def]
    dot = Digraph(format="svg", graph_attr={"rankdir": "LR"})  # LR = left to right

    nodes, edges = trace(root)
    for n in nodes:
        uid = str(id(n))
        # for any value in the graph, create a rectangular ('record') node for it
        dot.node(name=uid, label="{ %s | data %.4f | grad %.4f }" % (n.label, n.data, n.grad), shape="record")  # noqa: UP031 - as the lecture writes it
        if n._op:
            # if this value is a result of some operation, create an op node for it
            dot.node(name=uid + n._op, label=n._op)
            # and connect this node to it
            dot.edge(uid + n._op, uid)

    for n1, n2 in edges:
        # connect n1 to the op node of n2
        dot.edge(str(id(n1)), str(id(n2)) + n2._op)

    return dot


# --- the lecture's neuron ------------------------------------------------------------------------------


def _neuron() -> Value:
    x1 = Value(2.0, label="x1")
    x2 = Value(0.0, label="x2")
    w1 = Value(-3.0, label="w1")
    w2 = Value(1.0, label="w2")
    b = Value(6.8813735870195432, label="b")
    x1w1 = x1 * w1
    x1w1.label = "x1*w1"
    x2w2 = x2 * w2
    x2w2.label = "x2*w2"
    x1w1x2w2 = x1w1 + x2w2
    x1w1x2w2.label = "x1*w1 + x2*w2"
    n = x1w1x2w2 + b
    n.label = "n"
    o = n.tanh()
    o.label = "o"
    o.backward()
    return o


def test_trace_finds_every_node_and_edge_of_the_graph() -> None:
    o = _neuron()
    nodes, edges = trace(o)
    g = Graph(o)
    assert nodes == set(g.nodes)
    assert len(edges) == g.num_edges  # no node of the neuron takes the same parent twice
    assert o._op and o._prev == set(o.inputs)
    leaf = g.leaves[0]
    assert leaf._op == "" and leaf._prev == set()


def test_op_is_micrograds_symbol_and_builds_the_node_again_by_hand() -> None:
    a, b = Value(2.0, label="a"), Value(-0.5, label="b")
    for c, said in [(a + b, "+"), (a * b, "*"), (b.tanh(), "tanh"), (b.exp(), "exp"), (a.relu(), "ReLU"),
                    (a**2, "**2"), (a**-1, "**-1"), (a**0.5, "**0.5")]:  # fmt: skip
        assert c._op == said
        again = Value(c.data, tuple(c._prev), c._op)  # micrograd's lecture builds a node so
        assert again.op is c.op or (again.op.name, again.op.param) == (c.op.name, c.op.param), said
        assert again.data == c.data and set(again.inputs) == set(c.inputs), said
    assert (a - b)._op == "−" and a.sin()._op == "sin"  # operations micrograd has not: the table's symbol


def test_prev_and_op_are_read_only() -> None:
    o = _neuron()
    with pytest.raises(AttributeError):
        o._prev = set()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        o._op = "+"  # type: ignore[misc]


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
def test_draw_dot_renders_the_lecture_picture() -> None:
    o = _neuron()
    svg = html.unescape(draw_dot(o).pipe(format="svg").decode("utf-8"))  # Graphviz writes - as &#45;
    assert "data 0.7071" in svg and "grad 1.0000" in svg  # o = tanh(n) = 0.7071, do/do = 1
    assert "grad 0.5000" in svg  # dn: 1 - o^2 = 0.5, as in the lecture
    assert "grad -1.5000" in svg  # dx1 = w1 * 0.5


# --- stepping back-propagation by hand, as the lecture does, against micrograd itself ----------------

micrograd_engine = pytest.importorskip("micrograd.engine")


class _Closures:
    """The oracle: micrograd's semantics as the lecture teaches them (the pip package has no tanh). Each
    node keeps a closure that adds out.grad × local derivative into its parents' grads; tanh is computed
    as the lecture computes it, (exp(2x) - 1) / (exp(2x) + 1)."""

    def __init__(self, data: float) -> None:
        self.data, self.grad = data, 0.0
        self._backward = lambda: None

    def __add__(self, other: _Closures) -> _Closures:
        out = _Closures(self.data + other.data)

        def push() -> None:
            self.grad += out.grad
            other.grad += out.grad

        out._backward = push
        return out

    def __mul__(self, other: _Closures) -> _Closures:
        out = _Closures(self.data * other.data)

        def push() -> None:
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad

        out._backward = push
        return out

    def tanh(self) -> _Closures:
        e = math.exp(2 * self.data)
        out = _Closures((e - 1) / (e + 1))

        def push() -> None:
            self.grad += (1 - out.data**2) * out.grad

        out._backward = push
        return out

    def backward(self) -> None:  # the lecture's order for this neuron: o, n, b, the sums, the products
        self.grad = 1.0
        for node in self._order:  # type: ignore[attr-defined]
            node._backward()


def _lecture_neuron(V):  # type: ignore[no-untyped-def]
    """The lecture's neuron o = tanh(x1*w1 + x2*w2 + b), built with the Value class V, nodes by name."""
    x1, x2, w1, w2, b = V(2.0), V(0.0), V(-3.0), V(1.0), V(6.8813735870195432)
    x1w1 = x1 * w1
    x2w2 = x2 * w2
    x1w1x2w2 = x1w1 + x2w2
    n = x1w1x2w2 + b
    o = n.tanh()
    if V is _Closures:
        o._order = [o, n, b, x1w1x2w2, x2w2, x1w1, w2, x2, w1, x1]
    return dict(x1=x1, x2=x2, w1=w1, w2=w2, b=b, x1w1=x1w1, x2w2=x2w2, x1w1x2w2=x1w1x2w2, n=n, o=o)


def _grads(nodes):  # type: ignore[no-untyped-def]
    return {name: v.grad for name, v in nodes.items()}


def _step_by_hand(nodes):  # type: ignore[no-untyped-def]
    """The lecture's manual cells: o.grad = 1.0, then each node's _backward() from o down to the leaves."""
    nodes["o"].grad = 1.0
    for name in ("o", "n", "b", "x1w1x2w2", "x2w2", "x1w1"):
        nodes[name]._backward()


def test_stepping_back_propagation_by_hand_gives_micrograds_numbers() -> None:
    ours, theirs = _lecture_neuron(Value), _lecture_neuron(_Closures)
    _step_by_hand(ours)
    _step_by_hand(theirs)
    assert _grads(ours) == pytest.approx(_grads(theirs), rel=1e-12, abs=1e-15)
    assert _grads(ours)["x1"] == pytest.approx(-1.5) and _grads(ours)["w2"] == 0.0
    fresh = _lecture_neuron(Value)
    fresh["o"].backward()  # the one call does the same pushes
    assert _grads(fresh) == pytest.approx(_grads(ours), rel=1e-12)


def test_each_manual_step_pushes_exactly_that_nodes_gradient() -> None:
    ours, theirs = _lecture_neuron(Value), _lecture_neuron(_Closures)
    for nodes in (ours, theirs):
        nodes["o"].grad = 1.0
    for name in ("o", "n", "b", "x1w1x2w2", "x2w2", "x1w1"):  # cell by cell, compared after each
        ours[name]._backward()
        theirs[name]._backward()
        assert _grads(ours) == pytest.approx(_grads(theirs), rel=1e-12, abs=1e-15), name


def test_the_notebook_in_order_backward_then_by_hand_accumulates_as_micrograd_does() -> None:
    ours, theirs = _lecture_neuron(Value), _lecture_neuron(_Closures)
    for nodes in (ours, theirs):
        nodes["o"].backward()  # the notebook runs o.backward() before the manual cells
        _step_by_hand(nodes)
    assert _grads(ours) == pytest.approx(_grads(theirs), rel=1e-12, abs=1e-15)


def test_random_graphs_stepped_by_hand_in_reverse_order_equal_backward() -> None:
    import random

    from micrograph.order import topological_order

    rng = random.Random(23)
    for _ in range(50):
        leaves = [Value(rng.uniform(-2, 2)) for _ in range(3)]
        nodes = list(leaves)
        for _ in range(rng.randint(1, 12)):
            a, b = rng.choice(nodes), rng.choice(nodes)
            nodes.append(rng.choice([a + b, a * b, a.tanh(), (a * 0.3).exp(), a.relu(), a**2]))
        z = nodes[-1]
        order = topological_order([z])
        z.grad = 1.0
        for node in reversed(order):
            node._backward()
        by_hand = [v.grad for v in order]
        for v in order:
            v.grad = 0.0
        z.backward()
        assert by_hand == pytest.approx([v.grad for v in order], rel=1e-12, abs=1e-15)


def test_backward_of_a_leaf_does_nothing_and_a_missing_derivative_changes_nothing() -> None:
    from micrograph.errors import DomainError

    w = Value(2.0)
    w._backward()
    assert w.grad == 0.0
    x = Value(0.0)
    y = x.sqrt()
    x.grad = 5.0
    y.grad = 1.0
    with pytest.raises(DomainError, match="sqrt"):
        y._backward()
    assert x.grad == 5.0


def test_the_lectures_constructor_builds_the_node_by_its_operation() -> None:
    a, b = Value(2.0, label="a"), Value(-3.0, label="b")
    for made, want in [
        (Value(-1.0, (a, b), "+"), a + b),
        (Value(-6.0, (a, b), "*"), a * b),
        (Value(math.tanh(2.0), (a,), "tanh"), a.tanh()),
        (Value(math.exp(2.0), (a,), "exp"), a.exp()),
        (Value(0.0, (b,), "ReLU"), b.relu()),
        (Value(8.0, (a,), "**3"), a**3),
    ]:
        assert made.data == want.data and made.op is want.op and made.inputs == want.inputs
    c = Value(-6.0, (a, b), "*")
    c.backward()
    assert (a.grad, b.grad) == (-3.0, 2.0)
    with pytest.raises(ValueError, match=r"not 1\.0; write the operation itself: a \+ b"):
        Value(1.0, (a, b), "+")
    with pytest.raises(ValueError, match="write the operation itself"):
        Value(1.0, (a, b), "-")
    with pytest.raises(TypeError, match="tuple of Values"):
        Value(1.0, (1.0, 2.0), "+")


def test_abs_and_comparisons_as_pytorch_users_expect() -> None:
    x, y = Value(-2.0), Value(3.0)
    assert (x < y, x <= y, x > y, x >= y) == (True, True, False, False)
    assert (x < 0, 0 > x, y >= 3, 3.5 > y) == (True, True, True, True)
    assert type(x < y) is bool  # a plain bool, no node
    assert sorted([y, x]) == [x, y] and max(x, y) is y
    assert x != Value(-2.0) and x == x  # == is identity: a Value is a dict key
    with pytest.raises(TypeError):
        _ = x < "a"  # type: ignore[operator]
    for v, grad in [(-2.0, -1.0), (3.0, 1.0), (0.0, 0.0)]:  # PyTorch: d|x|/dx = sign(x), 0 at 0
        w = Value(v)
        a = abs(w)
        a.backward()
        assert a.data == abs(v) and w.grad == grad


def test_repeated_backward_adds_dz_du_each_time_as_pytorch_does() -> None:
    x, y = Value(2.0), Value(3.0)
    z = (x * y) * x
    z.backward()
    z.backward()
    assert (x.grad, y.grad) == (24.0, 8.0)  # twice dz/dx = 2xy = 12 and dz/dy = x^2 = 4
    mx, my = micrograd_engine.Value(2.0), micrograd_engine.Value(3.0)
    mz = (mx * my) * mx
    mz.backward()
    mz.backward()
    assert mx.grad == 30.0  # micrograd pushes the intermediate's old gradient again (engine's docstring)
    assert "30 in micrograd" in " ".join((Value.backward.__doc__ or "").split())
