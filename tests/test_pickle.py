"""Values, Graphs, grad_tables and B pickle and deep-copy iteratively: a 1e5-deep chain works.

Operations are pickled by name (their rules are lambdas); leaves keep their identity within one pickle.
"""

from __future__ import annotations

import copy
import math
import pickle

import pytest
from catalogue import CATALOGUE

from micrograph import Graph, Value, grad
from micrograph.nn import MLP


def _same_graph(a: Value, b: Value) -> None:
    ga, gb = Graph(a), Graph(b)
    assert len(ga.nodes) == len(gb.nodes) and ga.parents == gb.parents
    for u, v in zip(ga.nodes, gb.nodes):
        assert u is not v
        assert (u.data, u.grad, u.op, u.label, u.is_constant, u.in_backward) == (
            v.data, v.grad, v.op, v.label, v.is_constant, v.in_backward,
        )  # fmt: skip


@pytest.mark.parametrize("copier", ["pickle", "deepcopy"])
def test_catalogue_graphs_and_their_b_round_trip(copier: str) -> None:
    def again(x: object) -> object:
        return pickle.loads(pickle.dumps(x)) if copier == "pickle" else copy.deepcopy(x)

    for case in CATALOGUE:
        z, xs = case.build_values()
        z.backward()
        z2 = again(z)
        assert isinstance(z2, Value)
        _same_graph(z, z2)
        for B in grad(z, xs):
            B2 = again(B)
            _same_graph(B, B2)
            # the copy is a working graph: Algorithm 6.1 re-evaluates it, grad differentiates it
            assert Graph(B2).forward() == pytest.approx(B.data, rel=1e-12, abs=1e-15)


@pytest.mark.slow
def test_a_100000_deep_chain_pickles_and_deep_copies() -> None:
    x = Value(0.3, label="x")
    u = x
    for _ in range(100_000):
        u = (u * 0.999 + 0.001).tanh()
    for z2 in (pickle.loads(pickle.dumps(u)), copy.deepcopy(u)):
        g = Graph(z2)
        assert len(g.nodes) == len(Graph(u).nodes)
        assert g.forward() == u.data
        z2.backward()
        assert g.leaves[0].label == "x" and math.isfinite(g.leaves[0].grad)


def test_leaves_keep_their_identity_within_one_pickle() -> None:
    model = MLP(2, [3, 1], seed=0)
    out = model([0.5, -1.0])
    params, out2 = pickle.loads(pickle.dumps((model.parameters(), out)))
    leaves = set(Graph(out2).leaves)
    assert all(p in leaves for p in params)  # the very same objects
    m2 = pickle.loads(pickle.dumps(model))
    assert [p.data for p in m2.parameters()] == [p.data for p in model.parameters()]


def test_deepcopy_keeps_identity_across_objects() -> None:
    x = Value(1.5, label="x")
    y = (x * x).tanh()
    z = y + x
    z2, y2, x2 = copy.deepcopy((z, y, x))
    assert Graph(z2).leaves[0] is x2
    assert y2 in Graph(z2)


def test_graph_and_grad_table_pickle_with_their_nodes() -> None:
    x = Value(0.7, label="x")
    z = (x * x.sin()).exp()
    g = Graph(z)
    table = g.backprop()
    g2, t2 = pickle.loads(pickle.dumps((g, table)))
    assert [v.data for v in g2.nodes] == [v.data for v in g.nodes]
    assert [t2[v] for v in t2.graph.nodes] == [table[v] for v in g.nodes]
    assert t2.evaluations == table.evaluations


def test_an_operation_outside_the_table_is_refused_clearly() -> None:
    from micrograph.ops import Op

    odd = Op("odd", "odd", 1, lambda x: x, (lambda x, out: 1.0,))
    z = odd(Value(1.0))
    with pytest.raises(pickle.PicklingError, match=r"not in micrograph.s table"):
        pickle.dumps(z)


def _with_named(z: Value) -> list[Value]:
    """z's graph and every node its nodes' records name (z, targets, grad_of), with their ancestors."""
    from micrograph.order import topological_order

    outputs, seen = [z], {id(z)}
    for v in topological_order(outputs):
        if v.meta is not None:
            for u in (*v.meta.grad_of, *v.meta.targets, *([v.meta.z] if v.meta.z is not None else [])):
                if id(u) not in seen:
                    seen.add(id(u))
                    outputs.append(u)
    return topological_order(outputs)


@pytest.mark.parametrize("copier", ["pickle", "deepcopy"])
def test_b_keeps_the_nodes_of_g_it_names_once_each_and_pickles_in_linear_size(copier: str) -> None:
    """A node of B names nodes of G (z, the targets, grad_of): they are written once, not with a copy of
    their ancestors each (a 2,000-deep chain's B was 68 MB), and B names them, not copies, afterwards."""
    sizes = []
    for depth in (500, 1000, 2000):
        w = Value(0.5, label="w")
        z = w
        for _ in range(depth):
            z = z.tanh()
        second = grad(grad(z, w), w)  # B of B: its records name nodes of B too
        before = _with_named(second)
        copied = pickle.loads(pickle.dumps(second)) if copier == "pickle" else copy.deepcopy(second)
        after = _with_named(copied)
        assert len(after) == len(before) and {id(v) for v in after}.isdisjoint(id(v) for v in before)
        assert [(v.data, v.op, v.label, v.in_backward) for v in after] == [
            (v.data, v.op, v.label, v.in_backward) for v in before
        ]
        sizes.append(len(pickle.dumps(second)))
    assert sizes[2] < 2.5 * sizes[1] < 6.25 * sizes[0]  # each doubling at most 2.5x: linear, not quadratic


def test_a_pickle_written_before_b_kept_its_records_apart_still_loads() -> None:
    """The earlier format: each inner node a 7-tuple (op, a, b, data, grad, label, meta), the last the one
    pickled; what an old file holds is ``_rebuild(Value, records)``."""
    from micrograph.ops import MUL, TANH
    from micrograph.pickling import _rebuild

    class Old:
        def __reduce__(self) -> tuple[object, ...]:
            x, y = Value(0.5, label="x"), Value(-2.0, label="y")
            return _rebuild, (
                Value,
                [x, y, (MUL, 0, 1, -1.0, 0.0, "", None), (TANH, 2, -1, -0.76, 0.0, "z", None)],
            )

    z = pickle.loads(pickle.dumps(Old()))
    assert (z.label, z.op, z.data) == ("z", TANH, -0.76) and z.inputs[0].op is MUL
    assert [p.label for p in z.inputs[0].inputs] == ["x", "y"] and z.inputs[0].label == ""
