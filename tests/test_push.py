"""Value.backward, the push form of section 6.5.6: its order, its plain loop and the compiled one, held equal.

``micrograph.push.backward`` walks the topological order from z and lets each node push into its parents;
its pushes run as the plain loop or as one loop compiled from the same rules (``micrograph.compile_push``).
The two must leave every ``.grad`` identical, bit for bit, whatever the graph, the earlier gradients and the
seed, and fail the same way where a derivative does not exist.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6.
"""

from __future__ import annotations

import itertools
import math
import random
import struct
from collections.abc import Callable
from typing import Any

import pytest
from catalogue import VALUES as NS
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import Recipe, interpret, recipes

import micrograph.push
from micrograph import DomainError, Graph, Value
from micrograph.compile_push import INLINED, push_function, push_loop, reverse_order
from micrograph.engine import apply, as_value
from micrograph.ops import LOG, OPS, POW, SQRT, XLOGY, pow_const
from micrograph.order import topological_order

# --- the order: every node after its parents, without recursion -------------------------------------------


@settings(max_examples=60, deadline=None)
@given(recipe=recipes(max_vars=3, max_steps=12), held=st.lists(st.sampled_from([0.0, -0.0, 1.5, math.nan])))
def test_both_searches_put_every_node_after_its_parents_once_in_the_same_order(
    recipe: Recipe, held: list[float]
) -> None:
    """topological_order, and compile_push.reverse_order (which backward runs) is it reversed, node for node,
    setting aside the same earlier gradients."""
    values, _ = recipe
    xs = [Value(v) for v in values]
    try:
        z = interpret(recipe)(NS, *xs)
    except ArithmeticError:
        return
    order = topological_order([z])
    position = {node: k for k, node in enumerate(order)}
    assert len(position) == len(order) and order[-1] is z
    assert all(position[parent] < position[node] for node in order for parent in node.inputs)
    assert set(xs) <= set(position)
    for node, g in zip(order[::-1], held):
        node.grad = g
    before = [(node, node.grad) for node in order if node.grad]
    fast, kept = reverse_order(z)
    assert fast == order[::-1]
    assert sorted((id(n), repr(g)) for n, g in kept) == sorted((id(n), repr(g)) for n, g in before)
    assert all(node.grad == 0.0 for node in fast)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "plain"])
def test_a_cycle_is_refused_by_both_searches_and_changes_no_gradient(
    compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(micrograph.push, "COMPILED", compiled)
    x = Value(0.5)
    a = x * 2.0
    b = a.tanh() + x
    c = b * a
    a._a = c  # a cycle made through the private parent slots: a -> c -> a
    for node, g in ((x, 3.0), (a, -1.0), (b, 0.0), (c, 2.0)):
        node.grad = g
    with pytest.raises(ValueError, match="the graph has a cycle"):
        c.backward()
    assert (x.grad, a.grad, b.grad, c.grad) == (3.0, -1.0, 0.0, 2.0)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "plain"])
@pytest.mark.parametrize("slot", ["_a", "_b"])
def test_a_node_that_is_its_own_parent_is_a_cycle_for_both_searches(
    compiled: bool, slot: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(micrograph.push, "COMPILED", compiled)
    x = Value(0.5)
    u = x * 2.0
    z = u + x
    setattr(u, slot, u)
    x.grad = 3.0
    with pytest.raises(ValueError, match="the graph has a cycle"):
        z.backward()
    assert (x.grad, u.grad, z.grad) == (3.0, 0.0, 0.0)


@pytest.mark.slow
def test_a_million_node_chain_is_ordered_and_back_propagated_by_both_loops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    x = Value(0.5)
    u = x
    for _ in range(500_000):  # a million operations, two a step, no constant
        u = (u * x).tanh()
    assert len(topological_order([u])) == 1_000_001
    u.backward()
    compiled = x.grad
    x.grad = 0.0
    monkeypatch.setattr(micrograph.push, "COMPILED", False)
    u.backward()
    assert x.grad == compiled and math.isfinite(compiled)


# --- the two loops: identical gradients, bit for bit -------------------------------------------------------

_BUILDERS: list[tuple[int, Callable[..., Value]]] = [
    (2, lambda a, b: a + b),
    (2, lambda a, b: a - b),
    (2, lambda a, b: a * b),
    (2, lambda a, b: a / b),
    (2, lambda a, b: a**b),
    (2, lambda a, b: apply(XLOGY, (a, b))),
    (2, lambda a, b: apply(POW, (a, 2.5))),  # x ** y with a constant exponent: its d/dy goes to a constant
    (2, lambda a, b: 2.0**a + b),  # a constant base
    (1, lambda a: -a),
    (1, lambda a: a.relu()),
    (1, lambda a: a.tanh()),
    (1, lambda a: a.sigmoid()),
    (1, lambda a: a.exp()),
    (1, lambda a: a.log()),
    (1, lambda a: a.sqrt()),
    (1, lambda a: a.sin()),
    (1, lambda a: a.cos()),
    (1, lambda a: a**2),
    (1, lambda a: a**0.5),
    (1, lambda a: a**-1.5),
    (1, lambda a: a * 3.0),
    (1, lambda a: OPS["tanh_grad"](a)),
    (1, lambda a: OPS["tanh_grad2"](a)),
    (1, lambda a: OPS["sigmoid_grad"](a)),
    (1, lambda a: OPS["step"](a)),
]
"""Every operation of the table (and the x ** c family), on any arguments: some give a DomainError when the
node is built (the step is skipped), some a derivative that does not exist (sqrt at 0, x ** 0.5 at 0,
d(x ** y)/dy at x < 0), some a gradient that overflows."""

_NUMBERS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 3.0, 1e-300, 1e150, -1e150, 700.0, 2.0**0.5]

_WRITTEN_OUT: list[tuple[int, Callable[..., Value]]] = [
    (2, lambda a, b: a + b),
    (2, lambda a, b: a * b),
    (1, lambda a: a.relu()),
    (1, lambda a: (a * -1.0).relu()),  # off where a > 0: a zero gradient below it
    (1, lambda a: a.tanh()),
]
"""The operations the compiled loop writes out (and skips on a zero gradient): half the graphs of the test of
several calls are built from these alone."""


@st.composite
def graphs(
    draw: Any, builders: list[tuple[int, Callable[..., Value]]] = _BUILDERS
) -> tuple[Value, list[Value], float, list[float]]:
    """A random graph built from the table's operations, its nodes, a seed and earlier gradients for them."""
    number = st.one_of(st.sampled_from(_NUMBERS), st.floats(-5.0, 5.0, allow_nan=False))
    nodes = [Value(draw(number)) for _ in range(draw(st.integers(1, 3)))]
    for _ in range(draw(st.integers(1, 14))):
        arity, build = draw(st.sampled_from(builders))
        args = [nodes[draw(st.integers(0, len(nodes) - 1))] for _ in range(arity)]
        try:
            nodes.append(build(*args))
        except DomainError:
            continue  # outside the operation's domain: no node
    z = nodes[-1]
    every = topological_order([z])
    seed = draw(st.sampled_from([1.0, -1.0, 0.0, 2.5, 1e300]))
    earlier = [draw(st.sampled_from([0.0, 0.0, -0.0, 1.0, -3.5, 1e308])) for _ in every]
    return z, every, seed, earlier


def _bits(nodes: list[Value]) -> list[bytes]:
    return [struct.pack("<d", v.grad) for v in nodes]


def _run(z: Value, nodes: list[Value], seed: float, earlier: list[float], calls: int) -> tuple[Any, ...]:
    """Set the earlier gradients, call backward ``calls`` times; the error (type and text) and every bit."""
    for v, g in zip(nodes, earlier):
        v.grad = g
    outcome = []
    for _ in range(calls):
        try:
            z.backward(seed)
            outcome.append(None)
        except (DomainError, ValueError) as e:
            outcome.append((type(e), str(e)))
    return tuple(outcome), _bits(nodes)


@settings(max_examples=200, deadline=None)
@given(case=graphs(), calls=st.integers(1, 2))
def test_the_compiled_loop_and_the_plain_loop_leave_the_same_bits(
    case: tuple[Value, list[Value], float, list[float]], calls: int
) -> None:
    z, nodes, seed, earlier = case
    compiled = _run(z, nodes, seed, earlier, calls)
    micrograph.push.COMPILED = False
    try:
        plain = _run(z, nodes, seed, earlier, calls)
    finally:
        micrograph.push.COMPILED = True
    assert plain == compiled


@settings(max_examples=300, deadline=None)
@given(
    case=st.one_of(graphs(_WRITTEN_OUT), graphs()),
    starts=st.lists(
        st.tuples(st.integers(0, 1000), st.sampled_from([1.0, 0.0, -2.5])), min_size=2, max_size=4
    ),
    fresh=st.booleans(),
)
def test_backward_from_several_nodes_of_one_graph_leaves_the_same_bits_in_both_loops(
    case: tuple[Value, list[Value], float, list[float]], starts: list[tuple[int, float]], fresh: bool
) -> None:
    """Calls from different nodes with their own seeds, gradients kept between them: what one call leaves in
    a node (a zero gradient that no push reached, say) must not change what the next call searches and
    pushes. ``fresh``: every gradient 0.0 before the first call, as in a new graph."""
    _, nodes, _, earlier = case
    if fresh:
        earlier = [0.0] * len(nodes)

    def run() -> tuple[Any, ...]:
        for v, g in zip(nodes, earlier):
            v.grad = g
        outcome = []
        for k, seed in starts:
            try:
                nodes[k % len(nodes)].backward(seed)
                outcome.append(None)
            except (DomainError, ValueError) as e:
                outcome.append((type(e), str(e)))
        return tuple(outcome), _bits(nodes)

    compiled = run()
    micrograph.push.COMPILED = False
    try:
        plain = run()
    finally:
        micrograph.push.COMPILED = True
    assert plain == compiled


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "plain"])
def test_both_loops_name_the_edge_whose_derivative_does_not_exist_and_change_nothing(
    compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(micrograph.push, "COMPILED", compiled)
    x = Value(0.0, label="x")
    y = Value(2.0, label="y")
    z = apply(SQRT, (x,)) * y
    x.grad, y.grad = 0.25, -0.0
    with pytest.raises(DomainError, match=r"du3/du1") as e:
        z.backward()
    assert "sqrt" in str(e.value)
    assert (x.grad, y.grad, z.grad) == (0.25, 0.0, 0.0)
    one, big = Value(1.0, label="one"), Value(1e200, label="big")
    w = one * big  # finite values; from the seed 1e200, dw/d(one) = 1e200 * 1e200 overflows
    with pytest.raises(DomainError, match="not finite"):
        w.backward(1e200)
    assert (one.grad, big.grad, w.grad) == (0.0, 0.0, 0.0)


def test_a_constant_with_no_derivative_gets_nan_from_both_loops(monkeypatch: pytest.MonkeyPatch) -> None:
    grads = []
    for compiled in (True, False):
        monkeypatch.setattr(micrograph.push, "COMPILED", compiled)
        x = Value(-2.0, label="x")
        z = apply(POW, (x, 3.0))  # d/dy into the constant 3.0 needs log(-2): none; dz/dx exists
        z.backward()
        constant = z.inputs[1]
        grads.append((x.grad, constant.grad))
    assert grads[0][0] == grads[1][0] == 3.0 * 4.0
    assert all(math.isnan(c) for _, c in grads)


# --- the compiled loop is the table's rules, written out ---------------------------------------------------


def _ops_under_test() -> list[object]:
    return [*OPS.values(), pow_const(2.0), pow_const(3.0), pow_const(-1.0), pow_const(0.5), pow_const(-2.5)]


@pytest.mark.parametrize("op", _ops_under_test(), ids=repr)
def test_push_function_equals_the_rules_bit_for_bit(op: Any) -> None:
    rng = random.Random(7)
    for _ in range(200):
        args = [Value(rng.uniform(0.05, 3.0)) for _ in range(op.arity)]
        try:
            node = op(*args)
        except ValueError:
            continue
        g = rng.uniform(-2.0, 2.0)
        expected = [
            g * op.local_derivative(k, tuple(a.data for a in args), node.data) for k in range(op.arity)
        ]
        push_function(op)(node, g)
        assert [a.grad for a in args] == expected


def test_the_loop_holds_its_frequent_operations_written_out_and_calls_the_others() -> None:
    loop = push_loop()
    assert push_loop() is loop  # compiled once
    for k, op in enumerate(INLINED):
        assert loop.__globals__[f"_op{k}"] is op
    x = Value(0.3)
    builds = (lambda v: v + v * 2.0, lambda v: (v * v).relu(), lambda v: v.tanh() * v, lambda v: v.exp() / v)
    for build in builds:
        z = build(x)
        table = Graph(z).backprop()
        x.grad = 0.0
        z.backward()
        assert x.grad == pytest.approx(table[x], rel=1e-15)


def test_the_search_called_before_caches_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """On CPython 3.10 backward first calls its search many times on a leaf of its own (compile_push's
    _CALLS_BEFORE_CACHES); forced here on any version, the gradients are those of the plain loop."""
    import micrograph.compile_push as compile_push

    monkeypatch.setattr(compile_push, "_CALLS_BEFORE_CACHES", 5)
    monkeypatch.setattr(compile_push, "_search_cold", [True])
    x, y = Value(0.5), Value(-1.5)
    z = (x * y + x.tanh()).relu() * y + x
    x.grad = 0.25
    z.backward()
    assert compile_push._search_cold == [False]
    a, b = Value(0.5), Value(-1.5)
    c = (a * b + a.tanh()).relu() * b + a
    a.grad = 0.25
    with micrograph.push.plain_loop():
        c.backward()
    assert (x.grad, y.grad, z.grad) == (a.grad, b.grad, c.grad)


def test_a_rule_that_branches_on_a_value_is_called() -> None:
    from micrograph.ops import Op

    odd = Op("odd", "odd", 1, lambda x: x * x, (lambda x, out: 2.0 * x if x > 0 else -2.0 * x,))
    x = Value(-1.5)
    z = odd(x)
    z.backward()
    assert x.grad == 3.0


# --- interrupted: every gradient as it was --------------------------------------------------------------


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "plain"])
def test_an_interrupted_backward_leaves_every_gradient_as_it_was(
    compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    x, y = Value(0.5, label="x"), Value(-1.5, label="y")
    z = (x * y + x.tanh()) * y
    x.grad = 0.25
    monkeypatch.setattr(micrograph.push, "COMPILED", compiled)
    pushed = []
    real = Value._backward
    loop = push_loop()

    def interrupted_step(node: Value) -> None:  # the plain loop: some pushes done, then Ctrl-C
        if len(pushed) == 2:
            raise KeyboardInterrupt
        pushed.append(node)
        real(node)

    def interrupted_loop(order: list[Value]) -> None:  # the compiled loop: the same
        loop(order[:2])
        raise KeyboardInterrupt

    monkeypatch.setattr(Value, "_backward", interrupted_step)
    monkeypatch.setattr(micrograph.compile_push, "push_loop", lambda: interrupted_loop)
    with pytest.raises(KeyboardInterrupt):
        z.backward()
    assert [(v, v.grad) for v in Graph(z).nodes] == [(v, 0.25 if v is x else 0.0) for v in Graph(z).nodes]
    monkeypatch.undo()
    z.backward()  # nothing was left behind: the next call sees every node
    assert x.grad == 0.25 + (y.data + (1 - math.tanh(0.5) ** 2)) * y.data
    assert y.grad == x.data * y.data + (x.data * y.data + math.tanh(0.5))


def test_an_interrupted_search_changes_no_gradient() -> None:
    class Interrupting:
        """A parent whose parents cannot be read: the search stops with Ctrl-C on reaching it."""

        grad = 0.0

        @property
        def _a(self) -> Any:
            raise KeyboardInterrupt

    x, y = Value(0.5), Value(2.0)
    x.grad, y.grad = 3.0, 0.0
    u = x * y
    w = u + x
    w._a = Interrupting()
    z = w * u
    z.grad = 7.0
    with pytest.raises(KeyboardInterrupt):
        z.backward()
    assert (x.grad, y.grad, u.grad, z.grad) == (3.0, 0.0, 0.0, 7.0)


def test_both_loops_on_a_leaf_and_on_a_small_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    for compiled in (True, False):
        monkeypatch.setattr(micrograph.push, "COMPILED", compiled)
        c = as_value(2.0)
        c.backward()
        assert c.grad == 1.0
        x = Value(3.0)
        z = apply(LOG, (x,)) * x
        z.backward()
        assert x.grad == Graph(z).backprop()[x]


# --- a zero gradient: nothing pushed, nothing left behind ---------------------------------------------------


def test_a_zero_gradient_pushes_nothing_and_leaves_no_mark_for_the_next_backward() -> None:
    x, y = Value(2.0, label="x"), Value(3.0, label="y")
    u = x * y
    off = (u * -1.0).relu()  # a ReLU that is off: dz/du = 0, and u and x reached only through it
    z = off + y
    z.backward()
    assert (x.grad, y.grad, u.grad, off.grad, z.grad) == (0.0, 1.0, 0.0, 1.0, 1.0)
    w = u * x  # a new graph through the same u and x, without resetting them: both are searched again
    w.backward()
    assert (x.grad, u.grad) == (2 * 2.0 * 3.0, 2.0)
    assert y.grad == 1.0 + 2.0 * 2.0


_EXTREMES = [0.0, -0.0, 1e-320, -1e-320, 1e308, -1e308, math.inf, -math.inf, 710.0, -710.0]


@pytest.mark.parametrize("op", INLINED, ids=repr)
def test_the_operations_written_out_have_finite_derivatives_wherever_their_node_exists(op: Any) -> None:
    """push_loop leaves out a zero gradient's pushes through these operations: its terms are +-0.0 only if
    every local derivative is finite (0 x inf would be nan)."""
    for args in itertools.product(_EXTREMES, repeat=op.arity):
        try:
            node = op(*(Value(a) for a in args))
        except DomainError:
            continue  # no node here
        for k in range(op.arity):
            derivative = op.local_derivative(k, args, node.data)
            assert math.isfinite(derivative), (op, args, k, derivative)


@pytest.mark.parametrize("compiled", [True, False])
def test_a_gradient_that_overflows_where_it_accumulates_is_refused_and_nothing_changes(
    monkeypatch: pytest.MonkeyPatch, compiled: bool
) -> None:
    """Two calls without zero_grad() add 1e308 to 1e308: the sum overflows where each push did not."""
    monkeypatch.setattr(micrograph.push, "COMPILED", compiled)
    x, y = Value(1.0, label="x"), Value(2.0, label="y")
    z = x * 1e308 + y
    z.backward()
    before = [(v, v.grad) for v in (x, y, z)]
    with pytest.raises(OverflowError, match=r"accumulated in .*'x'.* 1e\+308 held before this call"):
        z.backward()
    assert [(v, v.grad) for v in (x, y, z)] == before
    for bad in (math.nan, math.inf):
        with pytest.raises(ValueError, match=r"backward\(gradient\): the seed dz/dz must be a finite"):
            z.backward(bad)
    assert [(v, v.grad) for v in (x, y, z)] == before
