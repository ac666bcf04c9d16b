"""Algorithm 6.2: back-propagation over the ordered node list, with the grad_table (symbol-to-number).

This module holds the loop of Algorithm 6.2 once, in the book's pull form. micrograd's ``Value.backward``
uses the push form of section 6.5.6's prose instead (:meth:`micrograph.engine.Value.backward`); both call the
same rules of the operation table, and a test holds them equal. :meth:`Graph.backprop` runs it over G; the
store-versus-recompute comparison (:func:`micrograph.store.store_grad`) runs it over G', checkpointing
(:func:`micrograph.checkpoint.checkpoint_grad`) one segment at a time; views (the step-through pages, lessons,
the exercise checker) watch it through an ``observe`` callback that receives each iteration's terms; the
compiler writes the same sums as code, walking :func:`sweep`. The derivative rules are those of the
operation table :mod:`micrograph.ops`; Algorithms 6.5/6.6 run the same rules on nodes
(:mod:`micrograph.symbolic`).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 and 6.5.6, Algorithm 6.2.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from micrograph.errors import NO_FLOAT, DomainError, _NotFinite, check_graph, overflowed
from micrograph.memory import paused_gc

if TYPE_CHECKING:
    from micrograph.graph import ConsumerEdge as Edge
    from micrograph.graph import Graph

__all__ = [
    "GradTable",
    "Term",
    "BackpropStep",
    "BackpropObserver",
    "backprop",
    "run_algorithm_6_2",
    "sweep",
]


class Term(NamedTuple):
    """One term of Algorithm 6.2's sum for grad_table[u(j)]: grad_table[u(i)] × du(i)/du(j).

    Attributes:
        i: the consumer u(i+1) (0-based position in ``graph.nodes``).
        k: the argument position at which u(i+1) takes u(j+1) (``a * a`` gives two terms, k = 0 and 1).
        grad_i: grad_table[u(i)], dz/du(i), a float.
        derivative: the local derivative du(i)/du(j), from the operation table's rule.
        product: ``grad_i * derivative``, the term as it was added.
    """

    i: int
    k: int
    grad_i: float
    derivative: float
    product: float


class BackpropStep(NamedTuple):
    """One iteration j of Algorithm 6.2's loop: grad_table[u(j)] ← Σ_i grad_table[u(i)] ∂u(i)/∂u(j).

    Attributes:
        j: the node u(j+1) whose entry was computed (0-based position in ``graph.nodes``).
        terms: the terms of the sum, one per edge out of u(j), in the order they were added.
        total: the sum, the new grad_table[u(j)].
    """

    j: int
    terms: tuple[Term, ...]
    total: float


BackpropObserver = Callable[[BackpropStep], Any]
"""Called by Algorithm 6.2 once per iteration, from j = n-1 down to 1, with a :class:`BackpropStep`."""


class GradTable(dict):  # type: ignore[type-arg]
    """The grad_table of Algorithm 6.2: {node u(j): dz/du(j) as a float}, for every node of G.

    Attributes:
        graph (Graph): the graph it was computed on.
        evaluations (int): how many local derivatives du(i)/du(j) Algorithm 6.2 evaluated: one per edge,
            so it equals ``graph.num_edges``.
    """

    def __init__(self, graph: Graph, values: list[float], evaluations: int) -> None:
        super().__init__(zip(graph.nodes, values))
        self.graph = graph
        self.evaluations = evaluations

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled with its graph, the entries in the graph's order: the keys are the rebuilt nodes."""
        return GradTable, (self.graph, [self[v] for v in self.graph.nodes], self.evaluations)

    SHOWN = 40
    """At most this many entries are listed by ``repr`` (the first and last halves, in the graph's order)."""

    def __repr__(self) -> str:
        """``grad_table[u1] (x) = 0.54...``: one line per node with the book's names u(i), in G's order."""
        graph = self.graph
        nodes = [v for v in graph.nodes if v in self]
        half = self.SHOWN // 2
        shown = nodes if len(nodes) <= self.SHOWN else [*nodes[:half], None, *nodes[-half:]]
        lines = [f"GradTable of {graph!r}:"]
        for v in shown:
            if v is None:
                lines.append(f"  ... {len(nodes) - 2 * half} more entries")
                continue
            label = f" ({v.label})" if v.label else ""
            lines.append(f"  grad_table[{graph.name(v)}]{label} = {self[v]!r}")
        return "\n".join(lines)

    __str__ = __repr__


def run_algorithm_6_2(
    graph: Graph,
    seed: float = 1.0,
    *,
    values: Sequence[float] | Mapping[int, float] | None = None,
    members: Sequence[bool] | None = None,
    segment: tuple[int, int] | None = None,
    known: list[float] | None = None,
    observe: BackpropObserver | None = None,
    where: str = "Algorithm 6.2",
) -> tuple[list[float], int]:
    """Algorithm 6.2's loop over ``graph.nodes``: the grad_table as a list and the count of evaluations.

    The loop of the book, line by line. :func:`backprop` wraps its result in a dict; the other parameters
    let the comparisons and views run this same loop rather than a copy of it.

    Checkpointing runs it one segment of positions at a time, from the last segment to the first: the sum
    for grad_table[u(j)] is split by where its consumers u(i) are. With ``segment=(lo, hi)`` the loop
    takes only the terms of the consumers lo <= i < hi, and visits the nodes of the segment and their
    parents before it (whose entries are then partial: the rest of their sum comes from an earlier
    segment); ``known`` carries the entries from one call to the next.

    Args:
        graph: G, whose values (``.data``) are those of a forward pass (Algorithm 6.1 or node building).
        seed: grad_table[u(n)], 1.0 for dz/dz (when ``known`` is given, ``known[n - 1]`` holds it instead).
        values: the forward values to use instead of the nodes' ``.data``: a list aligned with
            ``graph.nodes`` (as :func:`micrograph.forward.evaluate` returns), or ``{position: value}``
            holding at least the values that the edges visited need.
        members: restrict the loop to a subgraph such as G' (flags aligned with ``graph.nodes``): the other
            entries stay 0.0 and their edges are not evaluated. The consumers of a node of G' are in G'.
        segment: ``(lo, hi)``, 0-based positions: only the edges into consumers lo <= i < hi (see above).
        known: the grad_table so far, a list aligned with ``graph.nodes``: each entry is added to, and this
            list is returned. None starts from zeros with ``seed`` for u(n).
        observe: called once per iteration with a :class:`BackpropStep` (the terms of the sum).
        where: the name put in front of an error message.

    Returns:
        ``(grad_table, evaluations)``: ``grad_table[j]`` is dz/du(j+1); ``evaluations`` the number of local
        derivatives evaluated (one per edge of G, of the subgraph, or of the segment).

    Raises:
        DomainError: a local derivative does not exist at these values (sqrt or x ** 0.5 at 0 ...), or a
            gradient overflows; the message names the edge u(j) -> u(i), the operation and the values.
            For a constant leaf (a number wrapped by an operator) no error is raised: its entry is NaN.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.2.
    """
    u = [v.data for v in graph.nodes] if values is None else values  # the values of a forward pass
    n = len(graph.nodes)
    order, consumers = sweep(graph, segment)
    if known is None:
        grad_table = [0.0] * n
        grad_table[n - 1] = seed  # grad_table[u(n)] <- 1
    else:
        grad_table = known
    evaluations = 0
    terms: list[Term] = []
    i = -1
    with paused_gc():
        for j in order:
            if members is not None and not members[j]:
                continue
            # grad_table[u(j)] <- sum over i with j in Pa(u(i)) of
            #     grad_table[u(i)] * du(i)/du(j)
            total = grad_table[j]
            try:
                for i, k, rule, a, b in consumers[j]:
                    # du(i)/du(j): the operation's rule, Op.local_derivative inlined
                    d = rule(u[a], u[i]) if b < 0 else rule(u[a], u[b], u[i])
                    term = grad_table[i] * d
                    total += term
                    if observe is not None:
                        terms.append(Term(i, k, grad_table[i], d, term))
                # inf or nan: a local derivative, a term or the sum overflowed
                if total - total != 0.0:
                    raise _NotFinite
            except (ArithmeticError, ValueError) as e:
                # an error naming the edge u(j) -> u(i), or NaN for a constant
                total = _failed(graph, u, grad_table, consumers[j], i, j, e, where)
            evaluations += len(consumers[j])
            grad_table[j] = total
            if observe is not None:
                observe(BackpropStep(j, tuple(terms), total))
                terms.clear()
    # return {grad_table[u(i)] | i = 1, ..., n_i} (and every other entry)
    return grad_table, evaluations


def sweep(
    graph: Graph, segment: tuple[int, int] | None = None
) -> tuple[Sequence[int], Sequence[list[Edge]] | Mapping[int, list[Edge]]]:
    """Algorithm 6.2's iterations: the positions j in the order of its loop, and each one's edges.

    What the loop of :func:`run_algorithm_6_2` walks, and what the compiler's Python dialect of it
    (:func:`micrograph.compile_graph`) walks to write the same sums as statements: for j = n-1 down to 1
    (0-based n-2 down to 0), the edges ``(i, k, rule, a, b)`` of :meth:`Graph.consumers` from u(j) to its
    consumers u(i), in the order the sum adds them.

    Args:
        graph: G.
        segment: ``(lo, hi)``, 0-based positions: the nodes of the segment and their parents before it
            (u(n) left out), each with its edges into consumers lo <= i < hi only (checkpointing).

    Returns:
        ``(order, edges)``: the positions j from the last, and ``edges[j]`` for each.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.2.
    """
    all_edges = graph.consumers()
    n = len(graph.nodes)
    if segment is None:
        return range(n - 2, -1, -1), all_edges  # for j = n - 1 down to 1
    lo, hi = segment
    visited = set(range(lo, min(hi, n - 1)))
    visited.update(j for pa in graph.parents[lo:hi] for j in pa)
    edges = {j: [e for e in all_edges[j] if lo <= e[0] < hi] for j in visited}
    return sorted(visited, reverse=True), edges


def backprop(graph: Graph, seed: float = 1.0, *, observe: BackpropObserver | None = None) -> GradTable:
    """Algorithm 6.2: back-propagation from u(n); the grad_table {node: dz/dnode} for every node of G.

    Touches no node's ``.grad`` (:meth:`Value.backward` adds this table into them).

    Args:
        graph: G, holding the values of a forward pass.
        seed: grad_table[u(n)], 1.0 for dz/dz.
        observe: called once per iteration j = n-1..1 with a :class:`BackpropStep`: the terms of the sum
            grad_table[u(j)] = Σ grad_table[u(i)] ∂u(i)/∂u(j) and its total.

    Returns:
        A :class:`GradTable`; its ``evaluations`` equals ``graph.num_edges``.

    Raises:
        TypeError: ``graph`` is not a Graph (a Value z: pass ``Graph(z)``).
        DomainError: a local derivative does not exist at these values.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.2.
    """
    check_graph(graph, "backprop")
    table, evaluations = run_algorithm_6_2(graph, seed, observe=observe)
    return GradTable(graph, table, evaluations)


def _failed(
    graph: Graph,
    u: Sequence[float] | Mapping[int, float],
    grad_table: list[float],
    edges: list[Edge],
    i: int,
    j: int,
    e: Exception,
    where: str,
) -> float:
    """grad_table[u(j)] where its sum failed: NaN for a constant, else the DomainError naming the edge.

    A constant is not a variable: nothing depends on its derivative, which may not exist (d(x ** y)/dy at
    x < 0 for a constant y), so its entry is NaN rather than an error.

    Raises:
        DomainError: u(j) is not a constant: naming the edge u(j) -> u(i) whose local derivative failed,
            or the term or sum that overflowed (see :func:`_overflow_error`).
    """
    nodes, name = graph.nodes, graph.name
    if nodes[j].is_constant:
        return math.nan
    if isinstance(e, _NotFinite):
        raise _overflow_error(graph, u, grad_table, edges, j, where) from None
    node = nodes[i]
    reason = "" if isinstance(e, DomainError) else str(e)
    exists = not overflowed(e)
    at = (
        f"{where}: the local derivative d{name(node)}/d{name(nodes[j])} "
        + (f"does not exist at {name(node)}" if exists else f"overflows at {name(node)}")
        + (f" (label {node.label!r})" if node.label else "")
    )
    pa = graph.parents[i]
    param = [] if node.op.param is None else [repr(node.op.param)]  # x ** c: c shown as DomainError does
    shown = f"{node.op.name}({', '.join([*(repr(u[p]) for p in pa), *param])})"
    raise DomainError(
        node.op, [nodes[p] for p in pa], reason=reason, where=at, names=[name(nodes[p]) for p in pa],
        message=None if exists else f"{at} = {shown}: {NO_FLOAT}", overflows=not exists,
    ) from None  # fmt: skip


def _overflow_error(
    graph: Graph,
    u: Sequence[float] | Mapping[int, float],
    grad_table: list[float],
    edges: list[Edge],
    j: int,
    where: str,
) -> DomainError:
    """grad_table[u(j)] is not finite: the first term that overflowed, or else the sum (its last term)."""
    nodes, parents, name = graph.nodes, graph.parents, graph.name
    d = grad_table_i = total = 0.0
    overflowed = False
    i = j
    for i, k, _, _, _ in edges:
        d = nodes[i].op.local_derivative(k, tuple(u[p] for p in parents[i]), u[i])
        grad_table_i = grad_table[i]
        term = grad_table_i * d
        total += term
        if term - term != 0.0:
            overflowed = True
            total = term
            break
    node = nodes[i]
    pa = parents[i]
    u_i, u_j = name(node), name(nodes[j])
    says = "overflows" if math.isinf(total) else "is not a number"  # nan: a nan value, or inf - inf
    what = (
        f"the term grad_table[{u_i}] × d{u_i}/d{u_j} = {grad_table_i!r} × {d!r} {says}"
        if overflowed
        else f"the sum of its {len(edges)} terms {says}; the last is"
    )
    at = f"{node.op.name}({', '.join(repr(u[p]) for p in pa)})"
    message = f"{where}: grad_table[{u_j}] is not finite: {what} at {at}"
    names = [name(nodes[p]) for p in pa]
    return DomainError(
        node.op, [nodes[p] for p in pa], message=message, names=names, overflows=math.isinf(total)
    )
