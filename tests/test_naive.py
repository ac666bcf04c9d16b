"""Tests of micrograph.naive: the naive chain rule (eq. 6.53), store (eq. 6.52) and checkpointing.

Oracles: Algorithm 6.2 (``Graph(z).backprop()[w]``), central finite differences on plain floats (the
catalogue's), a plain *recursive* implementation of equation 6.53 written here (the definition that
``naive_grad`` runs on an explicit stack: same value, same counts), and an independent count of the edges
of G'. Catalogue cases and random DAGs (hypothesis) go through every check.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.3, figure 6.9,
equations 6.50-6.53.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from typing import Any

import pytest
from catalogue import CATALOGUE, Case
from hypothesis import given
from strategies import DAG_SETTINGS, dag_cases

import micrograph
from micrograph import DomainError, Graph, Value
from micrograph.checkpoint import checkpoint_grad
from micrograph.families import chain, ladder
from micrograph.naive import naive_cost, naive_grad
from micrograph.store import CountedGradient, store_grad

# ---------------------------------------------------------------------------------------------
# Oracles written independently of micrograph.naive.


def depends_on(z: Value, w: Value) -> set[Value]:
    """The nodes of z's graph that depend on w (G' of Algorithm 6.5), by a fixed-point sweep."""
    nodes: list[Value] = []
    seen = {z}
    stack = [z]
    while stack:
        u = stack.pop()
        nodes.append(u)
        for x in u.inputs:
            if x not in seen:
                seen.add(x)
                stack.append(x)
    dep = {w} if w in seen else set()
    changed = True
    while changed:
        changed = False
        for u in nodes:
            if u not in dep and any(x in dep for x in u.inputs):
                dep.add(u)
                changed = True
    return dep


def pruned_edges(z: Value, w: Value) -> int:
    """The number of edges (x -> u) of G': x depends on w (u then does too)."""
    dep = depends_on(z, w)
    return sum(1 for u in dep if u is not w for x in u.inputs if x in dep)


def recursive_naive(z: Value, w: Value) -> tuple[float, int, int]:
    """Equation 6.53 by plain recursion on the expression, no table: (dz/dw, local derivatives, recomputed).

    D(w) = 1; D(u) = sum_k du/dx_k * D(x_k) over the arguments that depend on w; each local derivative
    recomputes u's inputs and u itself from the leaves. Python's own stack: small graphs only.
    """
    dep = depends_on(z, w)
    counts = [0, 0]

    def value(u: Value) -> float:
        if u.op is None:
            return u.data
        args = [value(x) for x in u.inputs]
        counts[1] += 1
        return float(u.op.f(*args))

    def D(u: Value) -> float:
        if u is w:
            return 1.0
        total = 0.0
        for k, x in enumerate(u.inputs):
            if x in dep:
                args = [value(y) for y in u.inputs]
                counts[1] += 1
                out = u.op.f(*args)
                local = u.op.derivs[k](*args, out)
                counts[0] += 1
                total += local * D(x)
        return total

    return (D(z) if z in dep else 0.0), counts[0], counts[1]


def close(a: float, b: float, rel: float = 1e-9, abs_: float = 1e-12) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


def small(case: Case) -> bool:
    """Cases whose naive sum is cheap enough for the recursive oracle."""
    z, xs = case.build_values()
    return all(naive_cost(z, x)["recomputed"] < 200_000 for x in xs)


# ---------------------------------------------------------------------------------------------
# The three methods agree with Algorithm 6.2 and with finite differences.


def check_case(case: Case) -> None:
    z, xs = case.build_values()
    table = Graph(z).backprop()
    for k, w in enumerate(xs):
        expected = table[w] if w in table else 0.0
        fd = case.finite_difference(k)
        results = [
            naive_grad(z, w, max_operations=None),
            store_grad(z, w),
            checkpoint_grad(z, w),
            checkpoint_grad(z, w, k=1),
            checkpoint_grad(z, w, k=2),
            checkpoint_grad(z, w, k=10**6),
        ]
        for r in results:
            assert r.complete and r.stopped is None
            assert r.value is not None
            assert close(r.value, expected), (case, w.label, r, expected)
            assert close(r.value, fd, rel=1e-5, abs_=1e-6), (case, w.label, r, fd)
        store = results[1]
        edges = pruned_edges(z, w)
        assert store.local_derivatives == edges
        assert store.recomputed == 0
        assert store.peak_values == len(Graph(z).nodes)
        graph = Graph(z)
        for r in results[2:]:
            assert r.local_derivatives == edges
            # never more memory than storing everything, never more than one extra forward pass
            assert r.peak_values <= len(graph.nodes)
            assert r.recomputed <= len(graph.nodes) - graph.n_inputs
        assert results[-1].recomputed == 0 and results[-1].peak_values == len(graph.nodes)  # k >= n: store
        value, local, recomputed = recursive_naive(z, w)
        naive = results[0]
        assert close(naive.value, value)  # type: ignore[arg-type]
        assert (naive.local_derivatives, naive.recomputed) == (local, recomputed)
        cost = naive_cost(z, w)
        assert (cost["local_derivatives"], cost["recomputed"], cost["edges"]) == (local, recomputed, edges)


@pytest.mark.parametrize("case", [c for c in CATALOGUE if small(c)], ids=lambda c: c.name)
def test_catalogue_all_methods_agree(case: Case) -> None:
    check_case(case)


@DAG_SETTINGS
@given(dag_cases(max_vars=3, max_steps=7))
def test_random_dags_all_methods_agree(case: Case) -> None:
    check_case(case)


def test_figure_6_9_chain_of_three_tanh() -> None:
    w = Value(0.5, label="w")
    z = w.tanh().tanh().tanh()
    result = micrograph.naive_grad(z, w)
    assert result.method == "naive" and result.complete
    assert result.value == pytest.approx(Graph(z).backprop()[w], rel=1e-12)
    assert (result.local_derivatives, result.recomputed) == (3, 6)  # figure 6.9: 3 edges, 1 + 2 + 3
    assert micrograph.store_grad(z, w).operations == 3


def test_paths_are_counted_through_repeated_arguments() -> None:
    # a * a has two edges: two paths from a to z, each with local derivative a
    a = Value(-1.25, label="a")
    z = a * a
    r = naive_grad(z, a)
    assert r.value == pytest.approx(2 * -1.25)
    assert naive_cost(z, a)["paths"] == 2
    assert r.local_derivatives == 2 and r.recomputed == 2  # each recomputes a * a
    assert store_grad(z, a).local_derivatives == 2


def test_constant_and_other_variable_edges_are_not_counted() -> None:
    x, y = Value(0.7, label="x"), Value(-0.3, label="y")
    z = (x * 2.0 + y.exp()) * y
    for method in (naive_grad, store_grad, checkpoint_grad):
        r = method(z, x)
        assert r.value == pytest.approx(2 * -0.3)
        assert r.local_derivatives == 3  # x -> (x*2) -> (+) -> (*): the edges from 2, y, exp(y) are not in G'
    assert Graph(z).backprop().evaluations == Graph(z).num_edges == 7


def test_z_independent_of_w_and_w_is_z() -> None:
    x, w = Value(0.3), Value(0.9)
    z = x.tanh() * 3.0
    for method in (naive_grad, store_grad, checkpoint_grad):
        r = method(z, w)
        assert r.value == 0.0 and r.complete and r.local_derivatives == 0
        assert method(z, z).value == 1.0
    assert naive_grad(z, w).recomputed == 0
    assert naive_cost(z, w) == {"paths": 0, "local_derivatives": 0, "recomputed": 0, "edges": 0}


def test_interior_node_as_w() -> None:
    w = Value(0.4, label="w")
    t = w.sin()
    z = t * t + t.exp() * w
    expected = Graph(z).backprop()[t]
    for method in (naive_grad, store_grad, checkpoint_grad):
        assert method(z, t).value == pytest.approx(expected, rel=1e-12)


def test_result_is_frozen_and_counts_operations() -> None:
    r = naive_grad(*chain(4))
    assert isinstance(r, CountedGradient)
    assert r.operations == r.local_derivatives + r.recomputed == 4 + 10
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.value = 1.0  # type: ignore[misc]


# ---------------------------------------------------------------------------------------------
# The budget.


def test_budget_stops_a_deep_ladder_with_a_message() -> None:
    z, w = ladder(30)
    r = naive_grad(z, w, max_operations=100_000)
    assert not r.complete and r.value is None
    assert r.operations == 100_000  # stops exactly at the budget
    assert r.stopped is not None
    assert "max_operations=100,000" in r.stopped
    assert "of the 1,073,741,824 paths" in r.stopped
    cost = naive_cost(z, w)
    assert f"{cost['local_derivatives'] + cost['recomputed']:,} operations" in r.stopped
    assert "%" in r.stopped


def test_str_says_what_it_cost() -> None:
    z, w = chain(3)
    assert str(naive_grad(z, w)) == (
        "naive: dz/dw = 0.533912, 3 local derivatives + 6 recomputed = 9 operations, at most 2 values held"
    )
    assert str(store_grad(z, w)).startswith("store: dz/dw = 0.533912, 3 local derivatives + 0 recomputed")
    z, w = ladder(20)
    text = str(naive_grad(z, w, max_operations=1_000))
    assert text.startswith("naive: dz/dw = not computed, 0 local derivatives + 1,000 recomputed")
    assert "of the 1,048,576 paths" in text


def test_naive_cost_of_a_deep_ladder_without_running_it() -> None:
    z, w = ladder(40)
    cost = naive_cost(z, w)
    assert cost["paths"] == 2**40
    assert cost["local_derivatives"] == 4 * (2**40 - 1)
    assert cost["recomputed"] == 9 * 40 * 2**40 - 10 * (2**40 - 1)  # about 4e14: out of reach
    assert cost["edges"] == 160


def test_budget_message_for_astronomical_counts() -> None:
    z, w = ladder(300)  # 2**300 paths: counted in floats for the message
    r = naive_grad(z, w, max_operations=10_000)
    assert r.stopped is not None and "of the ~2.04e+90 paths" in r.stopped
    z, w = ladder(1_100)  # 2**1100 overflows a float
    r = naive_grad(z, w, max_operations=10_000)
    assert r.stopped is not None and "of the >1e308 paths" in r.stopped


def test_time_budget_stops() -> None:
    z, w = ladder(40)
    r = naive_grad(z, w, max_operations=None, max_seconds=0.05)
    assert not r.complete and r.value is None
    assert r.stopped is not None and "max_seconds=0.05" in r.stopped
    assert r.operations > 0


def test_a_budget_that_suffices_completes() -> None:
    z, w = ladder(5)
    need = naive_cost(z, w)
    total = need["local_derivatives"] + need["recomputed"]
    exact = naive_grad(z, w, max_operations=total)
    assert exact.complete and exact.operations == total
    short = naive_grad(z, w, max_operations=total - 1)
    assert not short.complete and short.operations == total - 1


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"max_operations": 0}, ValueError),
        ({"max_operations": -5}, ValueError),
        ({"max_operations": 1.5}, TypeError),
        ({"max_operations": True}, TypeError),
        ({"max_seconds": 0}, ValueError),
        ({"max_seconds": "1"}, TypeError),
    ],
)
def test_bad_budgets(kwargs: dict[str, Any], error: type[Exception]) -> None:
    z, w = chain(3)
    with pytest.raises(error, match="naive_grad"):
        naive_grad(z, w, **kwargs)


@pytest.mark.parametrize("method", [naive_grad, store_grad, checkpoint_grad, naive_cost])
def test_non_values_are_rejected(method: Any) -> None:
    z, w = chain(2)
    with pytest.raises(TypeError, match="z must be a Value"):
        method(1.0, w)
    with pytest.raises(TypeError, match=r"w must be a Value, got float 0\.5"):
        method(z, 0.5)


def test_bad_checkpoint_k() -> None:
    z, w = chain(5)
    with pytest.raises(ValueError, match="k must be at least 1"):
        checkpoint_grad(z, w, k=0)
    with pytest.raises(TypeError, match="k must be an int"):
        checkpoint_grad(z, w, k="3")  # type: ignore[arg-type]


def test_local_derivative_outside_its_domain() -> None:
    w = Value(0.0, label="w")
    z = w.sqrt()  # sqrt(0) = 0 exists, its derivative 0.5 / sqrt(0) does not
    for method in (naive_grad, store_grad, checkpoint_grad):
        with pytest.raises(DomainError, match="sqrt"):
            method(z, w)


def test_leaf_changed_out_of_domain_is_reported() -> None:
    w = Value(2.0, label="w")
    z = w.log().tanh()
    w.data = -1.0  # the graph is recomputed from the leaves: log(-1) has no value
    for method in (naive_grad, store_grad, checkpoint_grad):
        with pytest.raises(DomainError, match="log"):
            method(z, w)


# ---------------------------------------------------------------------------------------------
# Depth and memory.


@pytest.mark.slow
def test_deep_chains_at_the_default_recursion_limit() -> None:
    depth = 5_000
    assert sys.getrecursionlimit() < depth
    z, w = chain(depth)
    expected = Graph(z).backprop()[w]
    store = store_grad(z, w)
    assert store.value == pytest.approx(expected, rel=1e-12)
    assert store.local_derivatives == depth and store.peak_values == depth + 1
    ckpt = checkpoint_grad(z, w)
    assert ckpt.value == pytest.approx(expected, rel=1e-12)
    assert ckpt.local_derivatives == depth
    assert ckpt.peak_values <= 2 * math.isqrt(depth + 1) + 2
    # the naive rule needs 12.5 million operations here: a budget stops it, without recursion errors
    stopped = naive_grad(z, w, max_operations=50_000)
    assert not stopped.complete
    # and a 2,000-deep chain is summed completely: d(d + 1)/2 = 2,001,000 recomputations
    z, w = chain(2_000)
    naive = naive_grad(z, w, max_operations=None)
    assert naive.complete and naive.recomputed == 2_001_000 and naive.peak_values == 2
    assert naive.value == pytest.approx(Graph(z).backprop()[w], rel=1e-12)


def test_deep_ladder_store_and_checkpoint() -> None:
    z, w = ladder(3_000)  # 9,001 nodes, 2**3000 paths
    expected = Graph(z).backprop()[w]
    assert store_grad(z, w).value == pytest.approx(expected, rel=1e-9, abs=1e-300)
    r = checkpoint_grad(z, w)
    assert r.value == pytest.approx(expected, rel=1e-9, abs=1e-300)
    assert r.local_derivatives == 4 * 3_000


def test_memory_store_holds_n_values_recompute_constant_on_chains() -> None:
    for depth in (1, 10, 100, 1_000):
        z, w = chain(depth)
        n = len(Graph(z).nodes)
        assert store_grad(z, w).peak_values == n == depth + 1
        # the naive rule on a chain holds 2 values whatever the depth: u's input and u (O(1) memory)
        assert naive_grad(z, w, max_operations=None).peak_values == 2


def test_memory_recompute_grows_with_depth_on_the_ladder() -> None:
    # where each level takes two arguments that depend on w, the recomputation holds one pending
    # argument per level: O(depth) memory (depth + 1 values), still far below store's 3 depth + 1
    for depth in (2, 4, 8, 12):
        z, w = ladder(depth)
        assert naive_grad(z, w, max_operations=None).peak_values == depth + 1
        assert store_grad(z, w).peak_values == 3 * depth + 1


def chain_checkpoint_closed_form(n: int, k: int) -> tuple[int, int]:
    """(peak_values, recomputed) on a chain of n nodes in segments of k: checkpoint_grad's docstring."""
    m = -(-n // k)
    if m == 1:
        return n, 0
    r = n - (m - 1) * k
    return max(m - 2 + k, m - 1 + r), (m - 1) * (k - 1) - 1 if k > 1 else 0


def test_checkpoint_on_chains_closed_form_and_sqrt_memory() -> None:
    for depth in (1, 2, 3, 8, 15, 24, 63, 99, 400, 2_000):
        z, w = chain(depth)
        n = depth + 1
        default = checkpoint_grad(z, w)
        k = math.isqrt(n - 1) + 1
        assert k * k >= n > (k - 1) * (k - 1)  # k = ceil(sqrt(n))
        assert (default.peak_values, default.recomputed) == chain_checkpoint_closed_form(n, k)
        assert default.local_derivatives == depth
        # about sqrt(n) memory for at most one extra forward pass
        assert default.peak_values <= 2 * k
        assert default.recomputed <= depth
        for kk in (1, 2, 5, n, n + 3):
            r = checkpoint_grad(z, w, k=kk)
            assert (r.peak_values, r.recomputed) == chain_checkpoint_closed_form(n, kk)
    z, w = chain(2_000)
    r = checkpoint_grad(z, w)
    # k = 45: 43 checkpoints below a full 45-node segment: 88 values instead of store's 2,001,
    # for 1,935 recomputed values (less than one extra forward pass of 2,000)
    assert (r.peak_values, r.recomputed) == (88, 1_935)
    assert store_grad(z, w).peak_values == 2_001


def test_checkpoint_trades_memory_for_recomputation() -> None:
    z, w = chain(400)
    store, ckpt, naive = store_grad(z, w), checkpoint_grad(z, w), naive_grad(z, w, max_operations=None)
    assert naive.peak_values < ckpt.peak_values < store.peak_values
    assert store.operations < ckpt.operations < naive.operations
