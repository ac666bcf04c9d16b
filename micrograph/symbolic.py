"""Symbol-to-symbol back-propagation: Algorithms 6.5 and 6.6, and Hessian-vector products (section 6.5.10).

:func:`grad` (Algorithm 6.5) prunes G to G' and calls :func:`build_grad` (Algorithm 6.6) for its nodes.
``build_grad`` runs the derivative rules of the operation table :mod:`micrograph.ops` on nodes rather than
numbers (``op.bprop``), so each gradient it returns is a node of the backward subgraph B: an ordinary graph
that Algorithm 6.1 re-evaluates for new inputs, that can be drawn, and that ``grad`` differentiates again.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.5, 6.5.6 and 6.5.10.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple, overload

from micrograph.engine import Value, as_value, sum_nodes
from micrograph.errors import DomainError, typed_repr
from micrograph.graph import Graph, SubGraph, as_values, get_consumers, get_inputs, get_operation
from micrograph.memory import paused_gc
from micrograph.meta import NodeMeta

__all__ = ["grad", "build_grad", "hessian_vector_product", "BuildGradCall", "BuildGradObserver"]


Derivatives = tuple[tuple[int, "Value | float"], ...]
"""The local derivatives one term G(i) of Algorithm 6.6 is formed from: ``(k, du(C)/d(argument k))`` for
each argument position k of the consumer C that is V (see :meth:`micrograph.ops.Op.bprop`)."""


class BuildGradCall(NamedTuple):
    """One call of Algorithm 6.6, ``build_grad(V, G, G', grad_table)``, as it returned.

    Attributes:
        V: the variable whose gradient was built.
        consumers: C, V's consumers in G' (``get_consumers(V, G')``), in topological order.
        inputs: for each consumer C, ``get_inputs(C, G')``: its arguments, in argument order.
        D: for each consumer C, the node grad_table[C] that ``op.bprop`` received.
        terms: for each consumer C, G(i) = ``op.bprop(get_inputs(C, G'), V, D)``, or None where every
            local derivative is exactly 0 (a step function's).
        G_V: the node dz/dV, the sum of the terms; now grad_table[V].
        new_nodes: the nodes of B this call added, in topological order.
        derivatives: for each consumer C, the local derivatives its term was formed from: ``(k, d)`` for
            each argument position k of C that is V, d = du(C)/d(argument k) as the operation's rule
            returned it (a node of B or of G, or a number; :meth:`micrograph.ops.Op.bprop`).
    """

    V: Value
    consumers: tuple[Value, ...]
    inputs: tuple[tuple[Value, ...], ...]
    D: tuple[Value, ...]
    terms: tuple[Value | None, ...]
    G_V: Value
    new_nodes: tuple[Value, ...]
    derivatives: tuple[Derivatives, ...]


BuildGradObserver = Callable[[BuildGradCall], Any]
"""Called once per call of Algorithm 6.6 (after it has built dz/dV) with a :class:`BuildGradCall`."""


_calls = itertools.count(1)


def build_grad(
    V: Value,
    G: Graph,
    G_prime: SubGraph,
    grad_table: dict[Value, Value],
    *,
    observe: BuildGradObserver | None = None,
) -> Value:
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
        observe: called once per call of this algorithm (the unrolled recursive calls too), after it has
            built dz/dV, with a :class:`BuildGradCall`: V, its consumers, their inputs, the terms, the sum
            and the nodes of B that call added.

    Returns:
        The node of B holding dz/dV.

    Raises:
        TypeError: G is not a Graph, G_prime neither a SubGraph nor a Graph, or grad_table not a dict; the
            message names the argument and what it got.
        ValueError: G_prime is neither G nor pruned from G; z, G's output, has no entry in grad_table (seed
            it with 1, as Algorithm 6.5 does); V is not a node of G (or not a Value).
        DomainError: a local derivative does not exist at the current values; the message names the
            operation whose derivative it is and the node of G.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, Algorithm 6.6.
    """
    if V in grad_table:
        return grad_table[V]
    _check_arguments(G, G_prime, grad_table)  # wrong arguments: a named error
    consumers = get_consumers(V, G_prime)
    if any(C not in grad_table for C in consumers):
        _build_consumers_first(V, G, G_prime, grad_table, observe)
    terms: list[Value | None] = []
    derivatives: list[Derivatives] = []  # each term's (k, d), for observe
    for C in consumers:
        op = get_operation(C)
        assert op is not None  # a consumer is computed by an operation
        # a grad_table lookup: every consumer is built first
        D = build_grad(C, G, G_prime, grad_table)
        local: list[tuple[int, Value | float]] = []  # G(i)'s (k, d) pairs
        try:
            G_i = op.bprop(get_inputs(C, G_prime), V, D, C, local)
        except DomainError as e:
            raise _derivative_error(G, C, V, e) from None
        # None: every local derivative is exactly 0 (a step function's)
        terms.append(G_i)
        derivatives.append(tuple(local))
    G_V = sum_nodes([t for t in terms if t is not None])  # G <- sum_i G(i)
    grad_table[V] = G_V
    if observe is not None:
        observe(
            BuildGradCall(
                V,
                tuple(consumers),
                tuple(get_inputs(C, G_prime) for C in consumers),
                tuple(grad_table[C] for C in consumers),
                tuple(terms),
                G_V,
                tuple(_new_nodes(G, G_V, grad_table, V)),
                tuple(derivatives),
            )
        )
    return G_V  # "insert G and the operations creating it into G": the new nodes consume G's nodes


def _check_arguments(G: Graph, G_prime: Graph | SubGraph, grad_table: dict[Value, Value]) -> None:
    """Refuse arguments :func:`build_grad` cannot run on, naming the argument: one test when they are right
    (it runs once per node of G'), each argument looked at only when it fails.

    Raises:
        TypeError, ValueError: as :func:`build_grad` says.
    """
    try:
        pruned_from_G = G_prime is G or G_prime.graph is G  # type: ignore[union-attr]
        if pruned_from_G and isinstance(grad_table, dict) and G.output in grad_table:
            return
    except AttributeError:  # G or G_prime is no graph
        pass
    where = "build_grad(V, G, G_prime, grad_table)"
    kinds: tuple[tuple[str, object, type | tuple[type, ...], str], ...] = (
        ("G", G, Graph, "a Graph"),
        ("G_prime", G_prime, (SubGraph, Graph), "a SubGraph (G.prune(T)) or G itself"),
        ("grad_table", grad_table, dict, "a dict"),
    )
    for name, value, kind, wanted in kinds:
        if not isinstance(value, kind):
            raise TypeError(f"{where}: {name} must be {wanted}, got {typed_repr(value)}")
    if G_prime is not G and getattr(G_prime, "graph", None) is not G:
        raise ValueError(f"{where}: G_prime, {G_prime!r}, was not pruned from G, {G!r}")
    raise ValueError(
        f"{where}: grad_table has no entry for z ({G.name(G.output)}, G's output); seed it first, "
        "grad_table[z] = as_value(1.0), as Algorithm 6.5 does"
    )


def _new_nodes(G: Graph, G_V: Value, grad_table: dict[Value, Value], V: Value) -> list[Value]:
    """The nodes of B reachable from G_V that no earlier entry of the grad_table reaches: those just built."""
    older = {node for U, node in grad_table.items() if U is not V}
    found: list[Value] = []
    seen: set[Value] = set()
    stack = [G_V]
    while stack:
        node = stack.pop()
        if node in seen or node in G.index or node in older:
            continue
        seen.add(node)
        found.append(node)
        stack.extend(node.inputs)
    return [v for v in reversed(found)]


def _derivative_error(G: Graph, C: Value, V: Value, e: DomainError) -> DomainError:
    """A rule failed while building B: name whose derivative does not exist, not the helper op that failed.

    Where the operation itself is defined at its arguments (log at 1e-320), what failed is its derivative
    (1/x overflows), and the message says so rather than that the arguments are outside the domain."""
    op = C.op
    where = (
        f"Algorithm 6.6: the derivative of {op.name} at {G.name(C)} with respect to {G.name(V)} "
        f"{'overflows' if e.overflows else 'does not exist'} here ({e.op.name} failed while building it)"
    )
    names = [G.name(p) for p in C.inputs]
    try:
        defined = math.isfinite(op.f(*(p.data for p in C.inputs)))
    except (ArithmeticError, ValueError):
        defined = False
    if defined:  # inside the domain: the derivative's own step is not finite
        failed = ", ".join(repr(float(v)) for v in e.values)
        said = f"{e.op.name}({failed}) = {e.result!r} is not finite" if e.result is not None else str(e)
        message = f"{where}: {said.split('; inputs: ')[0]}"
        return DomainError(op, list(C.inputs), message=message, names=names, overflows=e.overflows)
    return DomainError(op, list(C.inputs), where=where, names=names)


def _build_consumers_first(
    V: Value, G: Graph, G_prime: SubGraph, grad_table: dict[Value, Value], observe: BuildGradObserver | None
) -> None:
    """The recursion of Algorithm 6.6 unrolled: build_grad for the nodes of G' after V, from z down.

    In reverse topological order every node's consumers come before it, so each of these calls finds its
    consumers' gradients in the grad_table and recurses no deeper than a lookup, however deep G is.
    """
    position = G.index[V]
    for U in reversed(G_prime.nodes):
        if G.index[U] <= position:
            break
        if U not in grad_table:
            build_grad(U, G, G_prime, grad_table, observe=observe)


@overload
def grad(z: Value, T: Value, *, observe: BuildGradObserver | None = None) -> Value: ...
@overload
def grad(z: Value, T: Sequence[Value], *, observe: BuildGradObserver | None = None) -> list[Value]: ...
def grad(
    z: Value, T: Value | Sequence[Value], *, observe: BuildGradObserver | None = None
) -> Value | list[Value]:
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
        observe: called once per call of Algorithm 6.6 with a :class:`BuildGradCall` (see
            :func:`build_grad`), from z down.

    Returns:
        The gradient node for a single target, a list of them (in T's order) for a sequence. A target that
        z does not depend on gets a constant 0 node.

    Raises:
        TypeError: if z or a target is not a Value.
        ValueError: if T is an empty sequence.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, Algorithms 6.5 and 6.6.
    """
    if not isinstance(z, Value):
        raise TypeError(f"grad(z, T): z must be a Value, got {typed_repr(z)}")
    single = isinstance(T, Value)
    targets = as_values(T, "grad(z, T)", "T")
    with paused_gc():  # building B allocates many nodes that cannot form cycles
        G = Graph(z)
        # G' <- G pruned to ancestors of z and descendants of nodes in T
        G_prime = G.prune(targets)
        grad_table: dict[Value, Value] = {}
        grad_table[z] = as_value(1.0)  # grad_table[z] <- 1
        # build_grad's recursion unrolled once: each node after its consumers
        for U in reversed(G_prime.nodes):
            build_grad(U, G, G_prime, grad_table, observe=observe)
        for V in targets:
            if V in G_prime:
                build_grad(V, G, G_prime, grad_table, observe=observe)
            else:  # z does not depend on V
                grad_table[V] = as_value(0.0)
        _mark_backward(G, grad_table, targets, next(_calls))
    # return grad_table restricted to T
    result = [grad_table[V] for V in targets]
    return result[0] if single else result


def _mark_backward(G: Graph, grad_table: dict[Value, Value], targets: Sequence[Value], call: int) -> None:
    """Mark every node built by this call (those reachable from the grad_table and not in G) as part of B.

    Each node learns which G it belongs to (G's output z) and the call's targets T, from which the views
    name B's nodes u(n+1), u(n+2), ... after G's (:func:`viz.words.node_names`); all but the grad_table
    entries share one record. A node that is several grad_table entries at once (an addition passes its D
    on unchanged) lists them targets first, then the rest, each from the entry nearest z (the one it was
    built as) to those the additions passed it on to: its caption is one entry dz/du, the first.
    """
    position = G.index

    def nearest_z_first(entries: Iterable[Value]) -> list[Value]:
        return sorted(entries, key=lambda V: position.get(V, -1), reverse=True)

    grad_of: dict[Value, dict[Value, None]] = {}  # node -> the entries it is, in order (a dict as a set)
    for V in nearest_z_first(dict.fromkeys(targets)):
        grad_of.setdefault(grad_table[V], {})[V] = None
    for V in nearest_z_first(grad_table):
        grad_of.setdefault(grad_table[V], {})[V] = None
    z, T = G.output, tuple(dict.fromkeys(targets))
    plain = NodeMeta(call=call, z=z, targets=T)
    constant = NodeMeta(constant=True, call=call, z=z, targets=T)
    stack = [node for node in grad_of if node not in G.index]
    seen = set(stack)
    while stack:
        node = stack.pop()
        was_constant = node.is_constant
        of = grad_of.get(node)
        if of:
            node.meta = NodeMeta(constant=was_constant, call=call, grad_of=tuple(of), z=z, targets=T)
        else:
            node.meta = constant if was_constant else plain
        for p in node.inputs:
            if p not in seen and p not in G.index:
                seen.add(p)
                stack.append(p)


def _vector_component(x: Any, k: int) -> float:
    if isinstance(x, Value):
        return x.data
    if isinstance(x, (int, float)) or (hasattr(x, "__float__") and not isinstance(x, (str, bytes))):
        return float(x)
    raise TypeError(f"hessian_vector_product: v[{k}] must be a number or a Value, got {typed_repr(x)}")


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
        TypeError: as :func:`grad`; ``wrt`` or ``v`` that is not a sequence; a component of v that is not a
            number or a Value.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.10, equation 6.59.
    """
    if isinstance(wrt, Value) or isinstance(wrt, (str, bytes)) or not isinstance(wrt, Iterable):
        raise TypeError(
            f"hessian_vector_product: wrt must be a sequence of Values (e.g. [x, y]), got {typed_repr(wrt)}"
        )
    if isinstance(v, (str, bytes)) or not isinstance(v, Iterable):
        raise TypeError(f"hessian_vector_product: v must be a sequence of numbers, got {typed_repr(v)}")
    wrt = list(wrt)
    v = [
        _vector_component(vi, k) for k, vi in enumerate(v)
    ]  # v is a fixed vector: a Value gives its current value
    if len(v) != len(wrt):
        raise ValueError(
            f"hessian_vector_product: v has {len(v)} components but wrt has {len(wrt)} variables"
        )
    g = grad(z, wrt)
    gv = sum_nodes([gi * vi for gi, vi in zip(g, v)])
    return grad(gv, wrt)
