"""The naive chain rule of equation 6.53: dz/dw as a sum over paths, every subexpression recomputed.

Section 6.5.2 of the book writes dz/dw on the chain of figure 6.9 as ``f'(f(f(w))) f'(f(w)) f'(w)``
(equation 6.53): every subexpression is recomputed from w wherever it is needed, the sum over every path
from w to z of the product of the local derivatives along it (equations 6.50-6.51). :func:`naive_grad`
runs that sum, counted; :func:`naive_cost` counts it without running it. Back-propagation's way, every
value stored (equation 6.52), is :func:`micrograph.store.store_grad`, which also says what the counts of
a :class:`~micrograph.store.CountedGradient` mean.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.2, figure 6.9, equations
6.50-6.53.
"""

from __future__ import annotations

import math
import numbers
import time
from typing import Any

from micrograph.engine import Value
from micrograph.errors import DomainError, overflowed, typed_repr
from micrograph.graph import Graph
from micrograph.memory import paused_gc
from micrograph.store import CountedGradient, _check_nodes, _pruned

__all__ = ["naive_grad", "naive_cost"]


class _Stop(Exception):
    """Raised inside :func:`naive_grad` when its budget is spent."""


def _edge_error(node: Value, k: int, args: list[float], e: Exception, where: str) -> DomainError:
    """The local derivative du/dx_k of ``node`` does not exist at these input values."""
    reason = str(e) or type(e).__name__
    what = f"{where}: the local derivative of {node.op.name} with respect to argument {k}"
    if node.label:
        what += f" (node label {node.label!r})"
    return DomainError(node.op, args, reason=reason, where=what + " does not exist")


def _forward_error(node: Value, args: list[float], e: Exception, where: str) -> DomainError:
    what = f"{where}: recomputing {node.op.name}" + (f" (node label {node.label!r})" if node.label else "")
    return DomainError(node.op, args, reason=str(e) or type(e).__name__, overflows=overflowed(e), where=what)


class _Naive:
    """One run of the naive chain rule: the counters, the budget and the recomputation from the leaves."""

    __slots__ = ("local_derivatives", "recomputed", "held", "peak", "limit", "deadline", "next_check")

    def __init__(self, max_operations: int | None, max_seconds: float | None) -> None:
        self.local_derivatives = 0
        self.recomputed = 0
        self.held = 0  # forward values held right now
        self.peak = 0
        self.limit = max_operations
        self.deadline = None if max_seconds is None else time.perf_counter() + max_seconds
        self.next_check = 0

    def check(self) -> None:
        """Called before an operation when ``operations >= next_check``: stop if the budget is spent."""
        ops = self.local_derivatives + self.recomputed
        if self.limit is not None and ops >= self.limit:
            raise _Stop("max_operations")
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            raise _Stop("max_seconds")
        step = ops + 4096
        self.next_check = step if self.limit is None else min(step, self.limit)

    def value(self, u: Value) -> float:
        """The value of the subexpression u, recomputed from the leaves with no table (post-order).

        The expression is walked as a tree: a subexpression shared by two arguments is evaluated twice.
        An explicit stack replaces the recursion. Each value is counted as held from the moment it is
        read (a leaf) or computed until its consumer has been evaluated; the result stays held.
        """
        if u.op is None:
            self.held += 1
            if self.held > self.peak:
                self.peak = self.held
            return u.data
        ld = self.local_derivatives
        r = self.recomputed
        held, peak, nc = self.held, self.peak, self.next_check
        stack: list[tuple[Value, list[float]]] = [(u, [])]
        try:
            while True:
                node, args = stack[-1]
                ins = node.inputs
                if len(args) < len(ins):
                    x = ins[len(args)]
                    if x.op is None:  # a leaf: read its value
                        args.append(x.data)
                        held += 1
                        if held > peak:
                            peak = held
                    else:
                        stack.append((x, []))
                    continue
                stack.pop()
                if r + ld >= nc:
                    self.recomputed, self.held, self.peak = r, held, peak
                    self.check()
                    nc = self.next_check
                try:
                    v = node.op.f(*args)
                except (ArithmeticError, ValueError) as e:
                    raise _forward_error(node, args, e, "naive_grad") from None
                r += 1
                held -= len(args) - 1  # the arguments are released, the result is held
                if not stack:
                    return v  # type: ignore[no-any-return]
                stack[-1][1].append(v)
        finally:
            self.recomputed, self.held, self.peak = r, held, peak

    def local_derivative(self, u: Value, k: int) -> Any:
        """du/dx_k by the operation table's rule, with u's inputs and u itself recomputed from the leaves.

        The rule takes u's own value too (tanh's derivative is 1 - u**2), so the subexpression u is
        evaluated once more: T(u) evaluations in all, T(u) being the size of u's expression tree.
        """
        args = [self.value(x) for x in u.inputs]  # each held until the rule has been evaluated
        if self.recomputed + self.local_derivatives >= self.next_check:
            self.check()
        try:
            out = u.op.f(*args)
        except (ArithmeticError, ValueError) as e:
            raise _forward_error(u, args, e, "naive_grad") from None
        self.recomputed += 1
        self.held += 1
        if self.held > self.peak:
            self.peak = self.held
        if self.recomputed + self.local_derivatives >= self.next_check:
            self.check()
        try:
            d = u.op.local_derivative(k, tuple(args), out)
        except (ArithmeticError, ValueError) as e:
            raise _edge_error(u, k, args, e, "naive_grad") from None
        self.local_derivatives += 1
        self.held -= len(args) + 1
        return d


def naive_grad(
    z: Value, w: Value, *, max_operations: int | None = 10_000_000, max_seconds: float | None = None
) -> CountedGradient:
    """dz/dw by the naive chain rule of equation 6.53: a sum over paths, every subexpression recomputed.

    The recursive definition, on the expression, with no table:

    * D(w) = 1, and for a node u that depends on w, D(u) = sum_k du/dx_k * D(x_k) over the arguments
      x_k of u that depend on w (the nodes of G'); so D(z) is the sum over every path from w to z of the
      product of the local derivatives along it (equations 6.50-6.51).
    * Each local derivative du/dx_k is the operation table's rule ``op.local_derivative(k, args, out)``, whose
      inputs and out are recomputed from the leaves with ``op.f`` every time (equation 6.53 writes
      f'(f(f(w))) rather than f'(y)): nothing is stored between two uses of a subexpression.

    That recursion runs here on an explicit stack of (node, product of the local derivatives from z down
    to the node), so deep graphs work at Python's default recursion limit; the counts are those of the
    recursive definition. Where a node has several arguments, their local derivatives are evaluated
    before the first is descended into (the recursive definition interleaves them; the counts agree).

    Counts, for G' with edges (x -> u) and N(u) the number of paths from u to z, T(u) the number of
    operation nodes in u's expression tree (a shared subexpression counted once per use):

    * ``local_derivatives`` = sum over edges of N(u); ``recomputed`` = sum over edges of N(u) * T(u);
      the number of paths is N(w). :func:`naive_cost` computes all three without running the sum.
    * Chain of depth d (figure 6.9): d local derivatives and d(d + 1)/2 recomputations.
    * ``peak_values``: the forward values held at once by the recomputation: the arguments of the
      node whose local derivative is being evaluated, its own value, and the recomputation's pending
      arguments. 2 on a chain of any depth (O(1) memory); grows with depth where operations take
      two arguments that each depend on w (the ladder of :mod:`micrograph.families`: depth + 1).

    Args:
        z: the output node, a Value.
        w: the node to differentiate with respect to (usually a leaf; any node of z's graph works).
        max_operations: stop once this many operations (``local_derivatives + recomputed``) are done;
            None for no limit. The default keeps a call under about ten seconds.
        max_seconds: stop after this much wall-clock time from the call, in seconds; None for no
            limit. Building the graph (linear in its size, a few seconds for a million nodes) is not
            interrupted; the sum is checked every 4,096 operations.

    Returns:
        A :class:`CountedGradient` with ``method="naive"``. If the budget stops the sum, ``value`` is None,
        ``complete`` is False and ``stopped`` says how far it got, e.g. ``"stopped by max_operations=2,000,000
        after 2,000,000 operations (0 local derivatives, 2,000,000 recomputations), 1.1% of the
        182,452,230 operations the whole sum needs; 0 of the 1,048,576 paths from w to z summed"``
        (the ladder of depth 20: recomputing z alone, for its first local derivative, takes 3,145,725
        operations). The counts are those done when it stopped.
        If z does not depend on w the derivative is 0.0, with no operations.

    Raises:
        TypeError: if z or w is not a Value, or a budget is not a number.
        ValueError: if a budget is not positive.
        DomainError: if a recomputed value or a local derivative does not exist (a leaf's ``.data`` was
            changed so that an operation leaves its domain, or sqrt at 0 ...).

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.2, figure 6.9,
    equations 6.50-6.53.
    """
    _check_nodes("naive_grad", z, w)
    if max_operations is not None:
        if isinstance(max_operations, bool) or not isinstance(max_operations, numbers.Integral):
            raise TypeError(
                f"naive_grad: max_operations must be an int or None, got {typed_repr(max_operations)}"
            )
        if max_operations <= 0:
            raise ValueError(f"naive_grad: max_operations must be positive, got {max_operations!r}")
    if max_seconds is not None:
        if isinstance(max_seconds, bool) or not isinstance(max_seconds, numbers.Real):
            raise TypeError(
                f"naive_grad: max_seconds must be a number or None, got {typed_repr(max_seconds)}"
            )
        if not max_seconds > 0:
            raise ValueError(f"naive_grad: max_seconds must be positive, got {max_seconds!r}")
    run = _Naive(None if max_operations is None else int(max_operations), max_seconds)  # the clock starts
    graph = Graph(z)
    G_prime = graph.prune([w])  # the nodes that depend on w: only their edges carry paths from w
    total = 0.0
    paths_done = 0
    stack: list[tuple[Value, float]] = [(z, 1.0)] if z in G_prime else []
    with paused_gc():
        try:
            while stack:
                # p = the product of the local derivatives from z down to u
                u, p = stack.pop()
                if u is w:  # D(w) = 1: one path complete, its product is p
                    total += p
                    paths_done += 1
                    continue
                branches: list[tuple[Value, float]] = []
                for k, x in enumerate(u.inputs):
                    if x in G_prime:  # only the edges of G' carry paths from w
                        branches.append((x, p * run.local_derivative(u, k)))
                branches.reverse()  # argument 0 is descended into first
                stack.extend(branches)
        except _Stop as stop:
            ops = run.local_derivatives + run.recomputed
            # counted in floats: exact integers would have as many bits as the graph has levels
            cost = _naive_cost(graph, _pruned(graph, w, G_prime), w, zero=0.0)
            if stop.args[0] == "max_operations":
                why = f"stopped by max_operations={max_operations:,} after {ops:,} operations"
            else:
                why = f"stopped by max_seconds={max_seconds} after {ops:,} operations"
            whole = cost["local_derivatives"] + cost["recomputed"]
            message = (
                f"{why} ({run.local_derivatives:,} local derivatives, {run.recomputed:,} recomputations), "
                f"{100 * ops / whole:.3g}% of the {_count_text(whole)} operations the whole sum needs; "
                f"{paths_done:,} of the {_count_text(cost['paths'])} paths from w to z summed"
            )
            return CountedGradient(
                "naive", None, run.local_derivatives, run.recomputed, run.peak, False, message
            )
    return CountedGradient("naive", total, run.local_derivatives, run.recomputed, run.peak, True, None)


def naive_cost(z: Value, w: Value) -> dict[str, int]:
    """What :func:`naive_grad` will cost, counted by dynamic programming instead of by running it.

    With G' the nodes that depend on w, N(u) the number of paths from u to z in G' and T(u) the number
    of operation nodes in u's expression tree (T(leaf) = 0, T(u) = 1 + sum of T over u's arguments, with
    repeats), summed over the edges (x -> u) of G':

    * ``paths`` = N(w), the number of paths from w to z (the terms of equation 6.51);
    * ``local_derivatives`` = sum N(u): one evaluation per edge per path through its head;
    * ``recomputed`` = sum N(u) * T(u): each evaluation recomputes u's inputs and u from the leaves;
    * ``edges`` = the number of edges of G': back-propagation's count.

    The numbers are exact Python integers. They grow exponentially where subexpressions are shared
    (2**d paths for the ladder of depth d), so on graphs with millions of such levels the arithmetic on
    huge integers gets slow; :func:`naive_grad` counts in floats for its stop message. These tables
    count; they are not used to compute any derivative.

    Args:
        z: the output node.
        w: the node to differentiate with respect to.

    Returns:
        ``{"paths", "local_derivatives", "recomputed", "edges"}``, all 0 if z does not depend on w
        (and ``paths`` 1 if z is w).

    Raises:
        TypeError: if z or w is not a Value.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.2, equations 6.50-6.53.
    """
    _check_nodes("naive_cost", z, w)
    graph = Graph(z)
    return _naive_cost(graph, _pruned(graph, w), w)


def _count_text(x: float) -> str:
    """A count computed in floats, for a message: exact with commas while it can be, else rounded."""
    if x < 1e15:
        return f"{int(x):,}"
    return f"~{x:.3g}" if math.isfinite(x) else ">1e308"


def _naive_cost(graph: Graph, in_G: list[bool], w: Value, zero: Any = 0) -> dict[str, Any]:
    """:func:`naive_cost` on a graph already built, with G' as flags aligned with ``graph.nodes``.

    ``zero`` sets the arithmetic: 0 for exact integers, 0.0 for floats (fast on huge graphs, inf when
    a count overflows; the edges are always an int).
    """
    parents = graph.parents
    n = len(graph.nodes)
    one = zero + 1
    tree = [zero] * n  # T(u): operation nodes in u's expression tree
    for i in range(graph.n_inputs, n):
        tree[i] = one + sum((tree[j] for j in parents[i]), zero)
    paths = [zero] * n  # N(u): paths from u to z
    if in_G[n - 1]:
        paths[n - 1] = one
    local = recomputed = zero
    edges = 0
    for i in range(n - 1, -1, -1):
        if not in_G[i] or graph.nodes[i] is w:
            continue
        for j in parents[i]:
            if in_G[j]:
                paths[j] += paths[i]
                local += paths[i]
                recomputed += paths[i] * tree[i]
                edges += 1
    w_paths = paths[graph.index[w]] if w in graph.index else zero
    return {"paths": w_paths, "local_derivatives": local, "recomputed": recomputed, "edges": edges}
