"""Back-propagation: Algorithm 6.2 (symbol-to-number) and Algorithms 6.5/6.6 (symbol-to-symbol).

Both run the same derivative rules, those of the operation table :mod:`micrograph.ops`. Algorithm 6.2
evaluates them on floats and fills a grad_table of numbers. Algorithm 6.5 evaluates them on Value nodes
and fills a grad_table of nodes: the backward subgraph B, an ordinary graph that can be re-evaluated for
new inputs, drawn, and differentiated again (section 6.5.10).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3, 6.5.5, 6.5.6, 6.5.10.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, overload

from micrograph.engine import NodeMeta, Value, as_value
from micrograph.errors import DomainError
from micrograph.graph import Graph, SubGraph, get_consumers, get_inputs, get_operation, paused_gc

__all__ = [
    "GradTable",
    "backprop",
    "backprop_list",
    "consumer_program",
    "grad",
    "build_grad",
    "hessian_vector_product",
]


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


EdgeProgram = list[list[tuple[int, Callable[..., Any], int, int]]]


def consumer_program(graph: Graph) -> EdgeProgram:
    """For every node u(j), its edges to consumers u(i): (i, rule for du(i)/du(j), a, b), Pa(u(i)) = (a[, b]).

    ``b`` is -1 for a one-argument operation. Built once per graph and cached on it, so replaying
    Algorithm 6.2 on the same graph (new numbers, same structure) builds nothing.
    """
    if graph._edges is None:
        nodes, parents = graph.nodes, graph.parents
        with paused_gc():
            consumers: EdgeProgram = [[] for _ in nodes]
            for i in range(graph.n_inputs, len(nodes)):
                pa = parents[i]
                derivs = nodes[i].op.derivs
                if len(pa) == 2:
                    a, b = pa
                    consumers[a].append((i, derivs[0], a, b))
                    consumers[b].append((i, derivs[1], a, b))
                else:
                    consumers[pa[0]].append((i, derivs[0], pa[0], -1))
        graph._edges = consumers
    return graph._edges  # type: ignore[no-any-return]


def backprop_list(graph: Graph, seed: float = 1.0) -> tuple[list[float], int]:
    """Algorithm 6.2 over ``graph.nodes``: the grad_table as a list aligned with the nodes, and the count.

    This is the loop of Algorithm 6.2 line by line; :func:`backprop` wraps its result in a dict.

    Args:
        graph: G, whose values (``.data``) are those of a forward pass (Algorithm 6.1 or node building).
        seed: grad_table[u(n)], 1.0 for dz/dz.

    Returns:
        ``(grad_table, evaluations)``: ``grad_table[j]`` is dz/du(j+1); ``evaluations`` the number of local
        derivatives evaluated (one per edge of G).

    Raises:
        DomainError: a local derivative does not exist at these values (sqrt or x ** 0.5 at 0 ...), or a
            gradient overflows; the message names the edge u(j) -> u(i), the operation and the values.
            For a constant leaf (a number wrapped by an operator) no error is raised: its entry is NaN.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.2.
    """
    u = [v.data for v in graph.nodes]  # the values of a forward pass (Algorithm 6.1)
    n = len(u)
    consumers = consumer_program(graph)
    grad_table = [0.0] * n
    grad_table[n - 1] = seed  # grad_table[u(n)] <- 1
    evaluations = 0
    i = -1
    for j in range(n - 2, -1, -1):  # for j = n - 1 down to 1
        # grad_table[u(j)] <- sum_{i : j in Pa(u(i))} grad_table[u(i)] * du(i)/du(j)
        total = 0.0
        try:
            for i, du_i_du_j, a, b in consumers[j]:
                total += grad_table[i] * (du_i_du_j(u[a], u[i]) if b < 0 else du_i_du_j(u[a], u[b], u[i]))
            if total - total != 0.0:  # inf or nan: a local derivative, a term or the sum overflowed
                raise OverflowError("not finite")
        except (ArithmeticError, ValueError) as e:
            if not graph.nodes[j].is_constant:
                raise _local_derivative_error(graph, u, grad_table, i, j, e) from None
            # A constant is not a variable: nothing depends on its derivative, which may not exist
            # (d(x ** y)/dy at x < 0 for a constant y). Its entry is NaN rather than an error.
            total = math.nan
        evaluations += len(consumers[j])
        grad_table[j] = total
    return grad_table, evaluations  # return {grad_table[u(j)] | j = 1, ..., n}


def backprop(graph: Graph, seed: float = 1.0) -> GradTable:
    """Algorithm 6.2: back-propagation from u(n); the grad_table {node: dz/dnode} for every node of G.

    Touches no node's ``.grad`` (:meth:`Value.backward` adds this table into them).

    Args:
        graph: G, holding the values of a forward pass.
        seed: grad_table[u(n)], 1.0 for dz/dz.

    Returns:
        A :class:`GradTable`; its ``evaluations`` equals ``graph.num_edges``.

    Raises:
        DomainError: a local derivative does not exist at these values.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.2.
    """
    table, evaluations = backprop_list(graph, seed)
    return GradTable(graph, table, evaluations)


def _local_derivative_error(
    graph: Graph, u: list[float], grad_table: list[float], i: int, j: int, e: Exception
) -> DomainError:
    nodes, parents = graph.nodes, graph.parents
    if str(e) == "not finite":  # find the edge u(j) -> u(i) whose term overflowed, if one did
        d = grad_table_i = 0.0
        overflowed = False
        for i, rule, a, b in consumer_program(graph)[j]:
            d = rule(u[a], u[i]) if b < 0 else rule(u[a], u[b], u[i])
            grad_table_i = grad_table[i]
            term = grad_table_i * d
            if term - term != 0.0:
                overflowed = True
                break
        node = nodes[i]
        pa = parents[i]
        what = (
            f"the term grad_table[u{i + 1}] × du{i + 1}/du{j + 1} = {grad_table_i!r} × {d!r} overflows"
            if overflowed
            else f"the sum of its {len(consumer_program(graph)[j])} terms overflows; the last is"
        )
        message = (
            f"Algorithm 6.2: grad_table[u{j + 1}] is not finite: {what} "
            f"at {node.op.name}({', '.join(repr(u[p]) for p in pa)})"
        )
        return DomainError(node.op, [nodes[p] for p in pa], message=message, names=[f"u{p + 1}" for p in pa])
    node = nodes[i]
    reason = "" if isinstance(e, DomainError) else str(e)
    where = f"Algorithm 6.2: the local derivative du{i + 1}/du{j + 1} does not exist at u{i + 1}" + (
        f" (label {node.label!r})" if node.label else ""
    )
    pa = parents[i]
    return DomainError(
        node.op, [nodes[p] for p in pa], reason=reason, where=where, names=[f"u{p + 1}" for p in pa]
    )


# -------------------------------------------------------------------------------------------------
# Symbol-to-symbol back-propagation: Algorithms 6.5 and 6.6.

_calls = itertools.count(1)


def build_grad(V: Value, G: Graph, G_prime: SubGraph, grad_table: dict[Value, Value]) -> Value:
    """Algorithm 6.6: the node dz/dV, built from the gradients of V's consumers in G'.

    Written as the book writes it, recursive call included, but the recursion is unrolled: when a
    consumer's gradient is missing, the nodes of G' between z and V are built first in reverse topological
    order (each finding its consumers done), so the recursive call is a table lookup and the Python stack
    never grows with the depth of G. It may be called directly with only grad_table[z] seeded.

    Args:
        V: the variable whose gradient is to be added to G and grad_table.
        G: the graph to modify (micrograph's graph is implicit: new nodes simply consume G's nodes).
        G_prime: G', the restriction of G to nodes that participate in the gradient.
        grad_table: a dict mapping nodes to their gradients (nodes of B).

    Returns:
        The node of B holding dz/dV.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, Algorithm 6.6.
    """
    if V in grad_table:
        return grad_table[V]
    consumers = get_consumers(V, G_prime)
    if any(C not in grad_table for C in consumers):
        _build_consumers_first(V, G, G_prime, grad_table)
    terms = []
    for C in consumers:
        op = get_operation(C)
        assert op is not None  # a consumer is computed by an operation; only inputs have none
        D = build_grad(C, G, G_prime, grad_table)  # a grad_table lookup: every consumer is built first
        G_i = op.bprop(get_inputs(C, G_prime), V, D, C)
        if G_i is not None:  # None: every local derivative is exactly 0 (a step function's)
            terms.append(G_i)
    G_V = _sum(terms)  # G <- sum_i G(i)
    grad_table[V] = G_V
    return G_V  # "insert G and the operations creating it into G": the new nodes consume G's nodes


def _build_consumers_first(V: Value, G: Graph, G_prime: SubGraph, grad_table: dict[Value, Value]) -> None:
    """The recursion of Algorithm 6.6 unrolled: build_grad for the nodes of G' after V, from z down.

    In reverse topological order every node's consumers come before it, so each of these calls finds its
    consumers' gradients in the grad_table and recurses no deeper than a lookup, however deep G is.
    """
    position = G.index[V]
    for U in reversed(G_prime.nodes):
        if G.index[U] <= position:
            break
        if U not in grad_table:
            build_grad(U, G, G_prime, grad_table)


def _sum(terms: list[Value]) -> Value:
    if not terms:
        return as_value(0.0)
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


@overload
def grad(z: Value, T: Value) -> Value: ...
@overload
def grad(z: Value, T: Sequence[Value]) -> list[Value]: ...
def grad(z: Value, T: Value | Sequence[Value]) -> Value | list[Value]:
    """Algorithm 6.5: dz/dV for each V in T, as new nodes of the backward subgraph B.

    Prunes G to G' (nodes that are ancestors of z and descendants of T), sets grad_table[z] to the
    constant node 1, calls :func:`build_grad` for every node of G' (from z down), and returns the
    grad_table restricted to T. Every node built is marked as part of B (:attr:`Value.in_backward`), and
    each gradient node knows the forward node it is the gradient of (:attr:`Value.grad_of`). Nothing in
    G is changed. B is an ordinary graph: ``Graph(dz_dw).forward({w: 0.9})`` re-evaluates it for new
    inputs (Algorithm 6.1), and ``grad(dz_dw, w)`` differentiates it again (section 6.5.10).

    Args:
        z: the variable to be differentiated, a Value.
        T: a target node, or a sequence of them.

    Returns:
        The gradient node for a single target, a list of them (in T's order) for a sequence. A target that
        z does not depend on gets a constant 0 node.

    Raises:
        TypeError: if z or a target is not a Value.
        ValueError: if T is an empty sequence.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, Algorithms 6.5 and 6.6.
    """
    if not isinstance(z, Value):
        raise TypeError(f"grad(z, T): z must be a Value, got {type(z).__name__} {z!r}")
    single = isinstance(T, Value)
    if single:
        targets: list[Value] = [T]  # type: ignore[list-item]
    elif isinstance(T, (str, bytes)) or not isinstance(T, Iterable):
        raise TypeError(
            f"grad(z, T): T must be a Value or a sequence of Values, got {type(T).__name__} {T!r}"
        )
    else:
        targets = list(T)
        if not targets:
            raise ValueError(
                "grad(z, T): T is empty; give at least one Value to differentiate with respect to"
            )
        for k, V in enumerate(targets):
            if not isinstance(V, Value):
                raise TypeError(f"grad(z, T): T[{k}] must be a Value, got {type(V).__name__} {V!r}")
    with paused_gc():  # building B allocates many nodes that cannot form cycles
        G = Graph(z)
        G_prime = G.prune(targets)  # G' <- G pruned to ancestors of z and descendants of nodes in T
        grad_table: dict[Value, Value] = {}
        grad_table[z] = as_value(1.0)  # grad_table[z] <- 1
        for U in reversed(G_prime.nodes):  # build_grad's recursion unrolled once: consumers first
            build_grad(U, G, G_prime, grad_table)
        for V in targets:
            if V in G_prime:
                build_grad(V, G, G_prime, grad_table)
            else:  # z does not depend on V
                grad_table[V] = as_value(0.0)
        _mark_backward(G, grad_table, next(_calls))
    result = [grad_table[V] for V in targets]  # return grad_table restricted to T
    return result[0] if single else result


def _mark_backward(G: Graph, grad_table: dict[Value, Value], call: int) -> None:
    """Mark every node built by this call (those reachable from the grad_table and not in G) as part of B."""
    grad_of: dict[Value, list[Value]] = {}
    for V, node in grad_table.items():
        grad_of.setdefault(node, []).append(V)
    plain, constant = NodeMeta(call=call), NodeMeta(constant=True, call=call)
    stack = [node for node in grad_of if node not in G.index]
    seen = set(stack)
    while stack:
        node = stack.pop()
        was_constant = node.is_constant
        of = grad_of.get(node)
        if of:
            node.meta = NodeMeta(constant=was_constant, call=call, grad_of=tuple(of))
        else:
            node.meta = constant if was_constant else plain
        for p in node.inputs:
            if p not in seen and p not in G.index:
                seen.add(p)
                stack.append(p)


def _number(x: Any, k: int) -> float:
    if isinstance(x, Value):
        return x.data
    if isinstance(x, (int, float)) or (hasattr(x, "__float__") and not isinstance(x, (str, bytes))):
        return float(x)
    raise TypeError(
        f"hessian_vector_product: v[{k}] must be a number or a Value, got {type(x).__name__} {x!r}"
    )


def hessian_vector_product(z: Value, wrt: Sequence[Value], v: Sequence[Any]) -> list[Value]:
    """H v, the Hessian of z with respect to ``wrt`` times the vector v, without forming H.

    Computes the gradient g = grad(z, wrt) as nodes of B, then differentiates the scalar g · v again:
    H v = grad((grad z)^T v, wrt). The cost is about twice a gradient's, not n times.

    Args:
        z: the scalar output, a Value.
        wrt: the variables x_1..x_n, Values.
        v: the vector, n numbers (a Value is read for its current ``.data``: v is a constant of the
            product, not differentiated, even if it was computed from the variables).

    Returns:
        n nodes (Values); their ``.data`` are the components of H v.

    Raises:
        ValueError: if ``v`` and ``wrt`` differ in length or are empty.
        TypeError: as :func:`grad`, or a component of v that is not a number or a Value.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.10, equation 6.59.
    """
    wrt = list(wrt)
    v = [_number(vi, k) for k, vi in enumerate(v)]  # v is a fixed vector: a Value gives its current value
    if len(v) != len(wrt):
        raise ValueError(
            f"hessian_vector_product: v has {len(v)} components but wrt has {len(wrt)} variables"
        )
    g = grad(z, wrt)
    gv = _sum([gi * vi for gi, vi in zip(g, v)])
    return grad(gv, wrt)
