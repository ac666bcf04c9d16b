"""Tests of micrograph.families: figure 6.9's chain and the ladder, their closed forms and tables.

The closed forms of :func:`expected_counts` are checked three ways: against the counts measured by
running the naive chain rule and back-propagation, against :func:`naive_cost`'s dynamic programming at
depths too large to run, and against the structure of the graph (nodes, edges, paths).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.2, figure 6.9,
equations 6.50-6.53.
"""

from __future__ import annotations

import math

import pytest

from micrograph import Graph, Value
from micrograph.checkpoint import checkpoint_grad
from micrograph.families import FAMILIES, blowup_rows, chain, expected_counts, ladder, memory_rows
from micrograph.naive import naive_cost, naive_grad
from micrograph.store import store_grad


def count_paths(z: Value, w: Value) -> int:
    """Paths from w to z, counted by walking every path (small graphs only): an independent oracle."""
    count = 0
    stack = [z]
    while stack:
        u = stack.pop()
        if u is w:
            count += 1
        else:
            stack.extend(u.inputs)
    return count


@pytest.mark.parametrize("depth", range(0, 31))
def test_chain_counts_measured_equal_closed_forms(depth: int) -> None:
    z, w = chain(depth)
    e = expected_counts("chain", depth)
    naive, store = naive_grad(z, w), store_grad(z, w)
    assert naive.local_derivatives == e["naive_local_derivatives"] == depth
    assert naive.recomputed == e["naive_recomputed"] == depth * (depth + 1) // 2  # figure 6.9: quadratic
    assert naive.operations == e["naive_operations"]
    assert naive.peak_values == e["naive_peak"]
    assert store.local_derivatives == e["store_local_derivatives"] == e["edges"] == Graph(z).num_edges
    assert store.peak_values == e["store_peak"] == e["nodes"] == len(Graph(z).nodes)
    assert count_paths(z, w) == e["paths"] == 1


@pytest.mark.parametrize("depth", range(0, 11))
def test_ladder_counts_measured_equal_closed_forms(depth: int) -> None:
    z, w = ladder(depth)
    e = expected_counts("ladder", depth)
    naive, store = naive_grad(z, w), store_grad(z, w)
    assert naive.local_derivatives == e["naive_local_derivatives"] == 4 * (2**depth - 1)
    assert naive.recomputed == e["naive_recomputed"]
    assert naive.peak_values == e["naive_peak"]
    assert store.local_derivatives == e["edges"] == 4 * depth == Graph(z).num_edges
    assert store.peak_values == e["nodes"] == 3 * depth + 1 == len(Graph(z).nodes)
    assert count_paths(z, w) == e["paths"] == 2**depth


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_closed_forms_equal_dynamic_programming_at_large_depths(family: str) -> None:
    for depth in (0, 1, 2, 17, 64, 300):
        z, w = FAMILIES[family](depth)
        e = expected_counts(family, depth)
        cost = naive_cost(z, w)
        assert cost["paths"] == e["paths"]
        assert cost["local_derivatives"] == e["naive_local_derivatives"]
        assert cost["recomputed"] == e["naive_recomputed"]
        assert cost["edges"] == e["edges"]
    assert expected_counts("ladder", 300)["paths"] == 2**300  # exact integers, not floats


def test_expected_counts_keys_and_errors() -> None:
    keys = {
        "nodes", "edges", "paths", "naive_local_derivatives", "naive_recomputed", "naive_operations",
        "naive_peak", "store_local_derivatives", "store_peak",
    }  # fmt: skip
    assert set(expected_counts("chain", 3)) == keys == set(expected_counts("ladder", 3))
    with pytest.raises(ValueError, match=r"unknown family 'tree'.*\['chain', 'ladder'\]"):
        expected_counts("tree", 3)
    with pytest.raises(ValueError, match="depth must be >= 0"):
        expected_counts("chain", -1)
    with pytest.raises(TypeError, match="depth must be an int"):
        expected_counts("chain", 2.0)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# The families themselves.


def test_chain_is_figure_6_9() -> None:
    z, w = chain(3)
    assert [v.label for v in Graph(z).nodes] == ["w", "x", "y", "z"]
    assert z.data == pytest.approx(math.tanh(math.tanh(math.tanh(0.5))))
    z, w = chain(6, "sigmoid", w=-0.2)
    assert [v.label for v in Graph(z).nodes] == ["w", "h1", "h2", "h3", "x", "y", "z"]
    assert all(v.op.name == "sigmoid" for v in Graph(z).nodes[1:])
    assert w.data == -0.2
    z, w = chain(0)
    assert z is w


@pytest.mark.parametrize("f", ["tanh", "sigmoid", "sin", "cos", "exp", "sqrt", "neg", "relu"])
def test_chain_derivative_every_function(f: str) -> None:
    z, w = chain(3, f, w=0.5)
    h = 1e-6

    def at(x: float) -> float:
        return chain(3, f, w=x)[0].data

    fd = (at(0.5 + h) - at(0.5 - h)) / (2 * h)
    for method in (naive_grad, store_grad, checkpoint_grad):
        r = method(z, w)
        assert r.value == pytest.approx(Graph(z).backprop()[w], rel=1e-12)
        assert r.value == pytest.approx(fd, rel=1e-6, abs=1e-8)


def test_chain_bad_arguments() -> None:
    with pytest.raises(ValueError, match=r"one-argument operation.*'mul'"):
        chain(3, "mul")
    with pytest.raises(ValueError, match="one-argument"):
        chain(3, "softplus")
    with pytest.raises(ValueError, match="depth must be >= 0"):
        chain(-2)
    with pytest.raises(TypeError, match="depth must be an int"):
        chain(True)


def test_ladder_structure_and_derivative() -> None:
    z, w = ladder(2)
    assert [v.label for v in Graph(z).nodes] == ["w", "s1", "c1", "level 1", "s2", "c2", "z"]
    u1 = math.sin(0.5) + math.cos(0.5)
    assert z.data == pytest.approx(math.sin(u1) + math.cos(u1))
    h = 1e-6
    for depth in (1, 6, 12):

        def at(x: float, depth: int = depth) -> float:
            return ladder(depth, w=x)[0].data

        fd = (at(0.5 + h) - at(0.5 - h)) / (2 * h)
        z, w = ladder(depth)
        for method in (naive_grad, store_grad, checkpoint_grad):
            r = method(z, w)
            assert r.value == pytest.approx(Graph(z).backprop()[w], rel=1e-9, abs=1e-15)
            assert r.value == pytest.approx(fd, rel=1e-5, abs=1e-9)
    with pytest.raises(ValueError, match="depth must be >= 0"):
        ladder(-1)


# ---------------------------------------------------------------------------------------------
# The tables for plots and lessons.


def test_blowup_rows_ladder_extrapolates_after_the_budget() -> None:
    rows = blowup_rows("ladder", 14, max_operations=50_000)
    assert [r["depth"] for r in rows] == list(range(1, 15))
    assert set(rows[0]) >= {
        "depth",
        "naive_ops",
        "backprop_ops",
        "naive_complete",
        "naive_peak",
        "store_peak",
    }
    for r in rows:
        e = expected_counts("ladder", r["depth"])
        assert r["naive_ops"] == e["naive_operations"]  # measured or, when stopped, the closed form
        assert r["naive_complete"] == (e["naive_operations"] <= 50_000)
        assert r["backprop_ops"] == 4 * r["depth"]
        assert r["naive_peak"] == e["naive_peak"]
        assert r["store_peak"] == 3 * r["depth"] + 1
        assert r["paths"] == 2 ** r["depth"]
    assert rows[0]["naive_complete"] and not rows[-1]["naive_complete"]


def test_blowup_rows_chain_is_quadratic() -> None:
    rows = blowup_rows("chain", 20)
    assert all(r["naive_complete"] for r in rows)
    assert [r["naive_ops"] for r in rows] == [d + d * (d + 1) // 2 for d in range(1, 21)]
    assert [r["backprop_ops"] for r in rows] == list(range(1, 21))
    assert {r["naive_peak"] for r in rows} == {2}


def test_blowup_rows_errors() -> None:
    with pytest.raises(ValueError, match="unknown family"):
        blowup_rows("tree", 3)
    with pytest.raises(ValueError, match="max_depth must be >= 1"):
        blowup_rows("chain", 0)


def test_memory_rows() -> None:
    rows = memory_rows(40)
    assert [r["n"] for r in rows] == list(range(1, 41))
    for r in rows:
        n = r["n"]
        assert r["store_peak"] == n + 1  # every value of the chain's n + 1 nodes
        assert r["recompute_peak"] == 2  # O(1)
        k = math.isqrt(n) + 1  # ceil(sqrt(n + 1))
        assert r["checkpoint_peak"] <= 2 * k
        assert r["store_ops"] == n
        assert r["recompute_ops"] == n + n * (n + 1) // 2
        assert n <= r["checkpoint_ops"] <= 2 * n  # at most one extra forward pass
    last = rows[-1]
    assert last["recompute_peak"] < last["checkpoint_peak"] < last["store_peak"]
    assert last["store_ops"] < last["checkpoint_ops"] < last["recompute_ops"]
    with pytest.raises(ValueError, match="n_max must be >= 1"):
        memory_rows(0)
