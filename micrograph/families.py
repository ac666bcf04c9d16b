"""Families of graphs on which the naive chain rule blows up, with the closed forms of its costs.

Two families, each a function of a depth d returning ``(z, w)``:

* :func:`chain`, figure 6.9 of the book: z = f(f(...f(w))), d operations. One path from w to z, but the
  naive chain rule (equation 6.53) recomputes f(w), f(f(w)), ... at every step: d(d + 1)/2
  recomputations against back-propagation's d local derivatives (equation 6.52). Quadratic.
* :func:`ladder`: each level uses the previous one twice, u(i) = sin(u(i-1)) + cos(u(i-1)) (a node used
  twice, "f(u) + g(u)"). 2**d paths from w to z: the naive rule's cost is exponential, back-propagation's is
  4d local derivatives.

:func:`expected_counts` gives the closed forms, :func:`blowup_rows` and :func:`memory_rows` the measured
tables that the plots and lessons draw.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.3, figure 6.9,
equations 6.50-6.53.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

from micrograph.checkpoint import checkpoint_grad
from micrograph.engine import Value
from micrograph.errors import typed_repr
from micrograph.naive import naive_grad
from micrograph.ops import OPS
from micrograph.store import CountedGradient, store_grad

__all__ = ["chain", "ladder", "FAMILIES", "expected_counts", "blowup_rows", "memory_rows"]


def _depth(depth: Any, where: str) -> int:
    if isinstance(depth, bool) or not isinstance(depth, numbers.Integral):
        raise TypeError(f"{where}: depth must be an int, got {typed_repr(depth)}")
    if depth < 0:
        raise ValueError(f"{where}: depth must be >= 0, got {depth!r}")
    return int(depth)


_UNARY = sorted(name for name, op in OPS.items() if op.arity == 1)


def chain(depth: int, f: str = "tanh", w: float = 0.5) -> tuple[Value, Value]:
    """Figure 6.9's chain: x = f(w), y = f(x), z = f(y), ..., ``depth`` applications of f.

    Labels: the leaf is ``"w"``; the last three levels are ``"x"``, ``"y"``, ``"z"`` as in the figure
    (``"z"`` is always the output), earlier levels ``"h1"``, ``"h2"``, ... The graph has depth + 1 nodes
    and depth edges. A chain of depth 0 is w itself.

    Args:
        depth: d, the number of operations, an int >= 0.
        f: the name of a one-argument operation of the table: ``"tanh"`` (default), ``"sigmoid"``,
            ``"sin"``, ``"cos"``, ``"exp"``, ``"log"``, ``"sqrt"``, ``"relu"``, ``"step"``, ``"neg"``.
        w: the value of the leaf w.

    Returns:
        ``(z, w)``: the output node and the leaf.

    Raises:
        TypeError: if depth is not an int.
        ValueError: if depth < 0 or f is not a one-argument operation.
        DomainError: if f leaves its domain along the chain (``exp`` overflows after a few levels,
            ``log`` of a negative number ...).

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.2, figure 6.9.
    """
    d = _depth(depth, "chain")
    op = OPS.get(f) if isinstance(f, str) else None
    if op is None or op.arity != 1:
        raise ValueError(f"chain: f must be the name of a one-argument operation, one of {_UNARY}; got {f!r}")
    leaf = Value(w, label="w")
    u = leaf
    for i in range(1, d + 1):
        u = op(u)
        back = d - i  # 0 for z, 1 for y, 2 for x
        u.label = ("z", "y", "x")[back] if back < 3 else f"h{i}"
    return u, leaf


def ladder(depth: int, w: float = 0.5) -> tuple[Value, Value]:
    """A ladder where each level uses the previous one twice: level(i) = sin(level(i-1)) + cos(level(i-1)),
    level(0) = w.

    Level i has three nodes, ``s{i}`` = sin(level(i-1)), ``c{i}`` = cos(level(i-1)) and their sum, labelled
    ``"level {i}"`` (the last ``"z"``; not ``u{i}``, which names the graph's i-th node), and four edges. Two
    paths lead from one level to the next, so 2**depth from w to z. The values stay in [-sqrt(2), sqrt(2)]
    and the derivative shrinks by a factor of about 0.65 per level, so finite differences can check it at
    moderate depth.

    Args:
        depth: d, the number of levels, an int >= 0.
        w: the value of the leaf w.

    Returns:
        ``(z, w)``: the output node and the leaf.

    Raises:
        TypeError: if depth is not an int.
        ValueError: if depth < 0.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.2 (repeated
    subexpressions, equations 6.50-6.53).
    """
    d = _depth(depth, "ladder")
    leaf = Value(w, label="w")
    level = leaf
    for i in range(1, d + 1):
        s, c = level.sin(), level.cos()
        s.label, c.label = f"s{i}", f"c{i}"
        level = s + c
        level.label = "z" if i == d else f"level {i}"
    return level, leaf


FAMILIES: dict[str, Callable[[int], tuple[Value, Value]]] = {"chain": chain, "ladder": ladder}
"""The families by name: ``FAMILIES[name](depth) -> (z, w)``."""


def expected_counts(family: str, depth: int) -> dict[str, int]:
    """The closed forms of every count for a family at depth d.

    Keys (G is the whole graph, G' = G for both families, since every node depends on w):

    ============================ ======================== ==================================
    key                          chain                    ladder
    ============================ ======================== ==================================
    ``nodes``                    d + 1                    3d + 1
    ``edges``                    d                        4d
    ``paths``                    1                        2**d
    ``naive_local_derivatives``  d                        4 (2**d - 1)
    ``naive_recomputed``         d (d + 1) / 2            9 d 2**d - 10 (2**d - 1)
    ``naive_operations``         d + d (d + 1) / 2        the sum of the two above
    ``naive_peak``               2 (0 at d = 0)           max(3, d + 1) (0 at d = 0)
    ``store_local_derivatives``  d                        4d
    ``store_peak``               d + 1                    3d + 1
    ============================ ======================== ==================================

    Derivations (see :func:`micrograph.naive.naive_grad` for what is counted). The naive rule evaluates
    the local derivative of an edge (x -> u) once per path from u to z, N(u) times, and each evaluation
    recomputes u's expression tree, T(u) operations. Chain: N = 1 and T(u(i)) = i, so the recomputations
    are 1 + 2 + ... + d = d(d + 1)/2. Ladder: N(u(i)) = N(s(i)) = N(c(i)) = 2**(d-i) and
    T(u(i)) = 3 (2**i - 1), T(s(i)) = T(c(i)) = 1 + T(u(i-1)); summing 2**(d-i) (2 T(u(i)) + 2 T(s(i)))
    over the levels gives 9 d 2**d - 10 (2**d - 1). Back-propagation evaluates one local derivative per
    edge and stores every node's value. The naive rule's peak: the values of a node's arguments and its
    own value (2 for a one-argument node), plus the pending arguments of the ladder's recomputation,
    one per level.

    Args:
        family: ``"chain"`` or ``"ladder"``.
        depth: d, an int >= 0.

    Returns:
        A dict of exact ints with the keys above.

    Raises:
        ValueError: if the family is unknown or depth < 0.
        TypeError: if depth is not an int.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.2, figure 6.9,
    equations 6.50-6.53.
    """
    d = _depth(depth, "expected_counts")
    if family == "chain":
        counts = {
            "nodes": d + 1,
            "edges": d,
            "paths": 1,
            "naive_local_derivatives": d,
            "naive_recomputed": d * (d + 1) // 2,
            "naive_peak": 2 if d else 0,
        }
    elif family == "ladder":
        p = 2**d
        counts = {
            "nodes": 3 * d + 1,
            "edges": 4 * d,
            "paths": p,
            "naive_local_derivatives": 4 * (p - 1),
            "naive_recomputed": 9 * d * p - 10 * (p - 1),
            "naive_peak": max(3, d + 1) if d else 0,
        }
    else:
        raise ValueError(f"expected_counts: unknown family {family!r}; the families are {sorted(FAMILIES)}")
    counts["naive_operations"] = counts["naive_local_derivatives"] + counts["naive_recomputed"]
    counts["store_local_derivatives"] = counts["edges"]
    counts["store_peak"] = counts["nodes"]
    return counts


def blowup_rows(family: str, max_depth: int, *, max_operations: int = 2_000_000) -> list[dict[str, Any]]:
    """The naive chain rule against back-propagation, measured at depths 1..max_depth.

    Each row: ``{"depth", "paths", "naive_ops", "backprop_ops", "naive_complete", "naive_peak",
    "store_peak"}``. ``naive_ops`` is :func:`~micrograph.naive.naive_grad`'s ``local_derivatives +
    recomputed``; ``backprop_ops`` is :func:`~micrograph.store.store_grad`'s local derivatives (one per
    edge; it recomputes nothing). When the budget stops the naive rule, ``naive_ops`` and ``naive_peak``
    are the closed forms of :func:`expected_counts` and ``naive_complete`` is False (plots draw those
    points as extrapolated). Since the naive cost grows with depth, once it is stopped at one depth the
    deeper ones are not run at all, only extrapolated.

    Args:
        family: ``"chain"`` or ``"ladder"``.
        max_depth: the largest depth, an int >= 1.
        max_operations: the naive rule's budget per depth.

    Returns:
        ``max_depth`` rows, depth 1 first.

    Raises:
        ValueError: if the family is unknown or max_depth < 1.
        TypeError: if max_depth is not an int.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.2, figure 6.9.
    """
    if family not in FAMILIES:
        raise ValueError(f"blowup_rows: unknown family {family!r}; the families are {sorted(FAMILIES)}")
    top = _depth(max_depth, "blowup_rows")
    if top < 1:
        raise ValueError(f"blowup_rows: max_depth must be >= 1, got {max_depth!r}")
    rows = []
    stopped = False
    for d in range(1, top + 1):
        z, w = FAMILIES[family](d)
        expected = expected_counts(family, d)
        store = store_grad(z, w)
        naive: CountedGradient | None = None
        if not stopped:  # stopped at a smaller depth: not run
            naive = naive_grad(z, w, max_operations=max_operations)
        stopped = naive is None or not naive.complete
        if naive is None or stopped:  # the closed forms, drawn as extrapolated
            naive_ops = expected["naive_operations"]
            naive_peak = expected["naive_peak"]
        else:
            naive_ops, naive_peak = naive.operations, naive.peak_values
        rows.append(
            {
                "depth": d,
                "paths": expected["paths"],
                "naive_ops": naive_ops,
                "backprop_ops": store.operations,
                "naive_complete": not stopped,
                "naive_peak": naive_peak,
                "store_peak": store.peak_values,
            }
        )
    return rows


def memory_rows(n_max: int, *, f: str = "tanh") -> list[dict[str, Any]]:
    """Store against recompute against checkpoint on chains of length n = 1..n_max: memory and operations.

    Each row: ``{"n", "store_peak", "recompute_peak", "checkpoint_peak", "store_ops", "recompute_ops",
    "checkpoint_ops"}``, n being the chain's length (its number of operations; the graph has n + 1 nodes,
    w included). ``*_peak`` is the peak number of forward values held, ``*_ops`` the local derivatives
    plus the recomputed values: back-propagation holds all n + 1 values for n operations; the naive rule
    (recompute) holds 2 for n + n(n + 1)/2; checkpointing (segments of ceil(sqrt(n + 1)) nodes) holds
    about 2 sqrt(n) for about 2n.

    The naive rule runs at every length: the whole table costs about n_max**3 / 6 operations, a few
    seconds at n_max = 300.

    Args:
        n_max: the longest chain, an int >= 1.
        f: the chain's operation (see :func:`chain`).

    Returns:
        ``n_max`` rows, n = 1 first.

    Raises:
        ValueError: if n_max < 1.
        TypeError: if n_max is not an int.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.3; checkpointing:
    Chen, Xu, Zhang & Guestrin (2016), "Training deep nets with sublinear memory cost".
    """
    top = _depth(n_max, "memory_rows")
    if top < 1:
        raise ValueError(f"memory_rows: n_max must be >= 1, got {n_max!r}")
    rows = []
    for n in range(1, top + 1):
        z, w = chain(n, f)
        store = store_grad(z, w)
        naive = naive_grad(z, w, max_operations=None)
        ckpt = checkpoint_grad(z, w)
        rows.append(
            {
                "n": n,
                "store_peak": store.peak_values,
                "recompute_peak": naive.peak_values,
                "checkpoint_peak": ckpt.peak_values,
                "store_ops": store.operations,
                "recompute_ops": naive.operations,
                "checkpoint_ops": ckpt.operations,
            }
        )
    return rows
