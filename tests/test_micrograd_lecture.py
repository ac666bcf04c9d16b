"""Code from Karpathy's micrograd lecture runs unchanged on micrograph Values: its ``trace`` and
``draw_dot`` read the read-only attributes ``_prev`` and ``_op``."""

from __future__ import annotations

import html
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
