"""The naive chain rule against back-propagation: repeated subexpressions, store against recompute.

Section 6.5.2 of the book takes the chain w -> x = f(w) -> y = f(x) -> z = f(y) of figure 6.9 and writes
dz/dw two ways:

* equation 6.52, ``f'(y) f'(x) f'(w)``: each subexpression x, y is computed once, stored, and reused.
  That is what back-propagation does (Algorithm 6.2): :func:`store_grad`.
* equation 6.53, ``f'(f(f(w))) f'(f(w)) f'(w)``: every subexpression is recomputed from w wherever it is
  needed. That is the naive chain rule, the sum over every path from w to z of the product of the local
  derivatives along it (equations 6.50-6.51): :func:`naive_grad`. It needs almost no memory, but on a
  chain of depth d it evaluates d(d + 1)/2 subexpressions instead of d, and on a graph where subexpressions
  are shared it sums over exponentially many paths.

Between the two, :func:`checkpoint_grad` keeps only every k-th forward value and recomputes the pieces in
between during the backward pass (Algorithms 6.1 and 6.2, run one segment at a time): about sqrt(n)
values for about one extra forward pass. The book does
not describe it; the idea is Griewank's checkpointing (Griewank 1992, "Achieving logarithmic growth of
temporal and spatial complexity in reverse automatic differentiation"; the ``revolve`` schedule,
Griewank & Walther 2000), brought to deep networks by Chen, Xu, Zhang & Guestrin (2016), "Training deep
nets with sublinear memory cost".

Every method returns a :class:`CountedGradient`: the derivative and what it cost. The counts mean:

* ``local_derivatives``: evaluations of a local derivative du(i)/du(j), one operation table rule
  ``op.local_derivative(k, args, out)`` each. Only edges of G' count (the edges out of the nodes that
  depend on w, as in Algorithm 6.5); an edge from a constant or from another variable contributes nothing
  to dz/dw.
* ``recomputed``: forward subexpressions u(i) = f(i)(...) evaluated with ``op.f`` *beyond the one
  forward pass* that computes z. The naive rule does no stored pass, so all of its evaluations count.
* ``peak_values``: the peak number of forward values (values of nodes u(i), leaves included once they are
  read) held at once. Derivative numbers are not counted: every method keeps some (the grad_table, the
  naive recursion's partial products); this is the store-versus-recompute side of the trade-off.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.3, figure 6.9,
equations 6.50-6.53, Algorithms 6.1-6.2.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Container
from dataclasses import dataclass
from typing import Any

from micrograph.backprop import run_algorithm_6_2
from micrograph.engine import Value
from micrograph.errors import DomainError
from micrograph.forward import evaluate, evaluate_segment
from micrograph.graph import Graph, SubGraph
from micrograph.memory import paused_gc

__all__ = ["CountedGradient", "naive_grad", "store_grad", "checkpoint_grad", "naive_cost"]


@dataclass(frozen=True)
class CountedGradient:
    """A derivative dz/dw and what it cost: operations and memory.

    Attributes:
        method: ``"naive"`` (equation 6.53, recompute), ``"store"`` (equation 6.52, back-propagation) or
            ``"checkpoint"`` (store every k-th value, recompute the rest).
        value: dz/dw as a float; None if the budget stopped the computation.
        local_derivatives: local derivatives du(i)/du(j) evaluated (edges of G' only).
        recomputed: forward subexpressions evaluated beyond the one forward pass that computes z.
        peak_values: the peak number of forward values held at once.
        complete: False if the budget stopped the computation.
        stopped: None, or why it stopped and how far it got.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.2, equations 6.52-6.53.
    """

    method: str
    value: float | None
    local_derivatives: int
    recomputed: int
    peak_values: int
    complete: bool
    stopped: str | None

    @property
    def operations(self) -> int:
        """``local_derivatives + recomputed``: the operations counted in plots and budgets."""
        return self.local_derivatives + self.recomputed

    def __str__(self) -> str:
        """One line for lessons and the terminal, e.g. ``naive: dz/dw = 0.533912, 3 local derivatives
        + 6 recomputed = 9 operations, at most 2 values held``."""
        value = "not computed" if self.value is None else f"{self.value:.6g}"
        text = (
            f"{self.method}: dz/dw = {value}, {self.local_derivatives:,} local derivatives + "
            f"{self.recomputed:,} recomputed = {self.operations:,} operations, "
            f"at most {self.peak_values:,} values held"
        )
        return text if self.stopped is None else f"{text} ({self.stopped})"


class _Stop(Exception):
    """Raised inside :func:`naive_grad` when its budget is spent."""


def _check_nodes(where: str, z: Any, w: Any) -> None:
    if not isinstance(z, Value):
        raise TypeError(f"{where}(z, w): z must be a Value, got {type(z).__name__} {z!r}")
    if not isinstance(w, Value):
        raise TypeError(f"{where}(z, w): w must be a Value, got {type(w).__name__} {w!r}")


def _edge_error(node: Value, k: int, args: list[float], e: Exception, where: str) -> DomainError:
    """The local derivative du/dx_k of ``node`` does not exist at these input values."""
    reason = str(e) or type(e).__name__
    what = f"{where}: the local derivative of {node.op.name} with respect to argument {k}"
    if node.label:
        what += f" (node label {node.label!r})"
    return DomainError(node.op, args, reason=reason, where=what + " does not exist")


def _forward_error(node: Value, args: list[float], e: Exception, where: str) -> DomainError:
    what = f"{where}: recomputing {node.op.name}" + (f" (node label {node.label!r})" if node.label else "")
    return DomainError(node.op, args, reason=str(e) or type(e).__name__, where=what)


# -------------------------------------------------------------------------------------------------
# Equation 6.53: the naive chain rule, recomputing everything.


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
            raise TypeError(f"naive_grad: max_operations must be an int or None, got {max_operations!r}")
        if max_operations <= 0:
            raise ValueError(f"naive_grad: max_operations must be positive, got {max_operations!r}")
    if max_seconds is not None:
        if isinstance(max_seconds, bool) or not isinstance(max_seconds, numbers.Real):
            raise TypeError(f"naive_grad: max_seconds must be a number or None, got {max_seconds!r}")
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
                u, p = stack.pop()  # p = the product of the local derivatives from z down to u
                if u is w:  # D(w) = 1: one path complete, its product is p
                    total += p
                    paths_done += 1
                    continue
                branches = [
                    (x, p * run.local_derivative(u, k)) for k, x in enumerate(u.inputs) if x in G_prime
                ]
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


def _pruned(graph: Graph, w: Value, G_prime: SubGraph | None = None) -> list[bool]:
    """G' (the nodes that depend on w) as flags aligned with ``graph.nodes``."""
    in_G = [False] * len(graph.nodes)
    index = graph.index
    for v in (G_prime if G_prime is not None else graph.prune([w])).nodes:
        in_G[index[v]] = True
    return in_G


# -------------------------------------------------------------------------------------------------
# Equation 6.52: store every forward value (back-propagation).


def store_grad(z: Value, w: Value) -> CountedGradient:
    """dz/dw the back-propagation way (equation 6.52): one stored forward pass, one local derivative per edge.

    Algorithm 6.1 computes every value u(1)..u(n) from the leaves' ``.data`` and keeps all of them; then
    Algorithm 6.2's loop runs over the nodes of G' (those that depend on w), from z down:
    grad_table[u(j)] = sum over consumers u(i) of grad_table[u(i)] * du(i)/du(j), each local derivative
    evaluated once with the operation table's rule on the stored values.

    Counts: ``local_derivatives`` = the number of edges of G' (:func:`naive_cost`'s ``edges``);
    ``recomputed`` = 0; ``peak_values`` = n, every forward value of G. The value equals Algorithm 6.2's
    ``Graph(z).backprop()[w]`` (which evaluates every edge of G, G' and the rest).

    Args:
        z: the output node, a Value.
        w: the node to differentiate with respect to.

    Returns:
        A :class:`CountedGradient` with ``method="store"``, always complete. 0.0 if z does not depend on w.

    Raises:
        TypeError: if z or w is not a Value.
        DomainError: if a value or a local derivative does not exist at the leaves' current values.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.3, equation 6.52,
    Algorithms 6.1 and 6.2.
    """
    _check_nodes("store_grad", z, w)
    graph = Graph(z)
    in_G = _pruned(graph, w)
    u = evaluate(graph, where="store_grad")  # Algorithm 6.1: every forward value, kept
    # Algorithm 6.2 over G' (the nodes that depend on w), on the stored values
    grad_table, evaluations = run_algorithm_6_2(graph, values=u, members=in_G, where="store_grad")
    value = grad_table[graph.index[w]] if in_G[-1] else 0.0
    return CountedGradient("store", value, evaluations, 0, len(u), True, None)


# -------------------------------------------------------------------------------------------------
# Checkpointing: store every k-th value, recompute the segments in between.


def checkpoint_grad(z: Value, w: Value, k: int | None = None) -> CountedGradient:
    """dz/dw storing about every k-th forward value and recomputing the rest during the backward pass.

    The nodes u(1)..u(n), in topological order, are cut into segments of k nodes. The forward pass runs
    Algorithm 6.1 one segment at a time (:func:`micrograph.forward.evaluate_segment`) and keeps only the
    *checkpoints*: the values that a later segment uses (on a chain, the last value of every segment),
    and, at its end, the values of the last segment. The backward pass then takes the segments from the
    last to the first: it recomputes the segment's values from the checkpoints (every segment but the
    last), runs Algorithm 6.2 on the segment (:func:`micrograph.backprop.run_algorithm_6_2` with
    ``segment=``: the terms grad_table[u(i)] * du(i)/du(j) of the segment's consumers u(i) in G', each
    local derivative once, added to the entries that later segments gave), and drops the segment's values.

    On a chain of n nodes with the default k = ceil(sqrt(n)), that holds about 2 sqrt(n) values at peak
    (the checkpoints below the current segment plus the segment itself) instead of n, for about one
    extra forward pass (each value outside the checkpoints and the last segment is recomputed once).
    k = 1 stores every used value; k >= n is one segment: back-propagation with every value stored.
    Exactly, on a chain of n >= 2 nodes cut into m = ceil(n/k) >= 2 segments, the last of r = n - (m-1)k
    nodes: ``peak_values`` = max(m - 2 + k, m - 1 + r) and ``recomputed`` = (m - 1)(k - 1) - 1 for
    k >= 2 (each earlier segment recomputes its k nodes but its checkpoint, and the first holds the leaf
    w, which is read, not computed), 0 for k = 1.

    Counts: ``local_derivatives`` = the number of edges of G' (as :func:`store_grad`); ``recomputed`` =
    the values recomputed during the backward pass; ``peak_values`` = the peak number of forward values
    held (measured, forward and backward pass), see :mod:`micrograph.naive`.

    Not in the book: checkpointing is Griewank's (1992; the ``revolve`` schedule of Griewank & Walther
    2000); Chen, Xu, Zhang & Guestrin (2016), "Training deep nets with sublinear memory cost", apply it
    with sqrt(n) segments to deep networks.

    Args:
        z: the output node, a Value.
        w: the node to differentiate with respect to.
        k: the segment length, a positive int; None for ceil(sqrt(n)), n the number of nodes of G.

    Returns:
        A :class:`CountedGradient` with ``method="checkpoint"``, always complete; the value equals
        :func:`store_grad`'s up to rounding (the same products, summed in another order).

    Raises:
        TypeError: if z or w is not a Value, or k is not an int.
        ValueError: if k < 1, or a leaf holds inf or nan and an operation takes it (as Algorithm 6.1).
        DomainError: if a value or a local derivative does not exist at the leaves' current values, or a
            gradient overflows.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3 (Algorithms 6.1, 6.2),
    with checkpointing from Griewank (1992) and Chen et al. (2016).
    """
    _check_nodes("checkpoint_grad", z, w)
    graph = Graph(z)
    n = len(graph.nodes)
    k = _segment_length(n, k)
    in_G = _pruned(graph, w)
    segments = [(lo, min(n, lo + k)) for lo in range(0, n, k)]
    checkpoints = _checkpoints(graph, k)
    held: dict[int, float] = {}  # the forward values held, by position
    grad_table = [0.0] * n
    grad_table[n - 1] = 1.0  # grad_table[u(n)] <- 1
    peak = recomputed = evaluations = 0
    with paused_gc():
        for lo, hi in segments:  # the forward pass, Algorithm 6.1 segment by segment: it keeps checkpoints
            evaluate_segment(graph, lo, hi, held, where="checkpoint_grad")
            peak = max(peak, len(held))
            if hi < n:  # the last segment's values stay for the backward pass
                _drop(held, lo, hi, checkpoints)
        for lo, hi in reversed(segments):  # the backward pass, from the last segment
            recomputed += evaluate_segment(graph, lo, hi, held, where="checkpoint_grad")
            peak = max(peak, len(held))
            # Algorithm 6.2's sums, the terms of this segment's consumers, added to what later segments gave
            _, counted = run_algorithm_6_2(
                graph, values=held, members=in_G, segment=(lo, hi), known=grad_table, where="checkpoint_grad"
            )
            evaluations += counted
            _drop(held, lo, hi, ())  # the segment is done: its values (checkpoints included) go
    value = grad_table[graph.index[w]] if in_G[-1] else 0.0
    return CountedGradient("checkpoint", value, evaluations, recomputed, peak, True, None)


def _segment_length(n: int, k: Any) -> int:
    """checkpoint_grad's k, checked; ceil(sqrt(n)) for None."""
    if k is None:
        return max(1, math.isqrt(n - 1) + 1) if n > 1 else 1  # ceil(sqrt(n))
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"checkpoint_grad: k must be an int or None, got {type(k).__name__} {k!r}")
    if k < 1:
        raise ValueError(f"checkpoint_grad: k must be at least 1, got {k!r}")
    return int(k)


def _checkpoints(graph: Graph, k: int) -> set[int]:
    """The positions whose value a later segment of k nodes uses: the values the forward pass keeps."""
    last_use = [-1] * len(graph.nodes)  # the last consumer of every node, in topological order
    for i, pa in enumerate(graph.parents):
        for j in pa:
            last_use[j] = i
    return {j for j, i in enumerate(last_use) if i >= 0 and i // k > j // k}


def _drop(held: dict[int, float], lo: int, hi: int, keep: Container[int]) -> None:
    """Forget the values of positions lo..hi-1, but those in ``keep``."""
    for p in range(lo, hi):
        if p not in keep:
            held.pop(p, None)
