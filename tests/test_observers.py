"""The algorithms' observers: what views watch is exactly what the one implementation computes.

Algorithm 6.1 reports every computed node in order; Algorithm 6.2 reports every iteration j with the terms
of its sum (one per edge out of u(j)), and the reported totals are the grad_table; Algorithm 6.6 reports
each call with V's consumers in G' and the nodes of B it added. store_grad is Algorithms 6.1 and 6.2 on G'.
"""

from __future__ import annotations

import math

from catalogue import Case
from strategies import on_catalogue_and_random_dags

from micrograph import BackpropStep, BuildGradCall, Graph, Value, grad, store_grad
from micrograph.backprop import run_algorithm_6_2
from micrograph.forward import evaluate


def _check_observers(case: Case) -> None:
    z, xs = case.build_values()
    g = Graph(z)
    seen: list[tuple[int, float]] = []
    values = evaluate(g, observe=lambda i, v: seen.append((i, v)))
    assert [i for i, _ in seen] == list(range(g.n_inputs, len(g.nodes)))
    assert all(values[i] == v == g.nodes[i].data for i, v in seen)

    steps: list[BackpropStep] = []
    table = g.backprop(observe=steps.append)
    assert [s.j for s in steps] == list(range(len(g.nodes) - 2, -1, -1))  # j = n-1 down to 1
    assert sum(len(s.terms) for s in steps) == g.num_edges == table.evaluations
    for s in steps:
        node = g.nodes[s.j]
        assert table[node] == s.total
        assert [(t.i, t.k) for t in s.terms] == g.consumer_edges[s.j]
        for t in s.terms:
            consumer = g.nodes[t.i]
            assert consumer.inputs[t.k] is node
            assert t.grad_i == table[consumer]
            assert t.product == t.grad_i * t.derivative
        total = 0.0
        for t in s.terms:
            total += t.product
        assert total == s.total
    silent, _ = run_algorithm_6_2(g)
    assert silent == [table[v] for v in g.nodes]  # observing changes nothing, bit for bit

    for x in xs:
        stored = store_grad(z, x)
        assert stored.value == table[x] or math.isclose(stored.value, table[x], rel_tol=1e-12, abs_tol=1e-12)
        in_G_prime = g.prune([x])
        assert stored.local_derivatives == sum(len(g.consumer_edges[g.index[v]]) for v in in_G_prime.nodes)

    calls: list[BuildGradCall] = []
    grads = grad(z, xs, observe=calls.append)
    G_prime = g.prune(xs)
    assert {c.V for c in calls} == set(G_prime.nodes) - {z}
    for c in calls:
        assert list(c.consumers) == G_prime.get_consumers(c.V)
        assert c.inputs == tuple(C.inputs for C in c.consumers)
        for node in c.new_nodes:
            assert node not in g.index and node.in_backward
    for x, gx in zip(xs, grads):
        assert math.isclose(gx.data, table[x], rel_tol=1e-9, abs_tol=1e-12)


test_catalogue, test_random_dags = on_catalogue_and_random_dags(_check_observers)


def test_a_reused_node_gets_one_term_per_edge() -> None:
    a = Value(0.5, label="a")
    b = a * a  # two edges from a to b
    z = b + b  # two edges from b to z
    g = Graph(z)
    steps: list[BackpropStep] = []
    g.backprop(observe=steps.append)
    by_node = {g.nodes[s.j]: s for s in steps}
    assert [(t.k, t.derivative) for t in by_node[b].terms] == [(0, 1.0), (1, 1.0)]
    assert by_node[b].total == 2.0
    assert [(t.k, t.derivative) for t in by_node[a].terms] == [(0, 0.5), (1, 0.5)]
    assert by_node[a].total == 2.0  # dz/da = 4a
