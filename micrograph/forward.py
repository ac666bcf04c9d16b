"""Algorithm 6.1: forward propagation over the ordered node list u(1)..u(n).

This module holds the algorithm once. :func:`forward` runs it and writes the new values into the nodes;
:func:`evaluate` runs the same loop and only returns the values (the store-versus-recompute comparison
keeps them, the step-through pages read them); an ``observe`` callback sees every iteration of the loop.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.1.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any

from micrograph.engine import Value
from micrograph.errors import DomainError, _NotFinite, check_graph, short_repr, typed_repr
from micrograph.memory import paused_gc

if TYPE_CHECKING:
    from micrograph.graph import Graph, Inputs, Step

__all__ = ["forward", "evaluate", "evaluate_segment", "input_values", "ForwardObserver"]

ForwardObserver = Callable[[int, float], Any]
"""Called by Algorithm 6.1 once per computed node, ``observe(i, value)``: u(i+1) (0-based i) was just
set to ``value``. Its return value is ignored."""


def input_values(graph: Graph, values: Inputs | None) -> list[float]:
    """The values of every node as they stand, with the given inputs replaced: Algorithm 6.1, lines 1-3.

    Args:
        graph: the graph G.
        values: ``{leaf: number}`` (leaves not named keep their ``.data``), or a sequence of numbers, one per
            input u(1)..u(n_i) in ``graph.leaves`` order, or one per variable in ``graph.variables`` order
            (constants keep their value); or None to keep every input's ``.data``.

    Returns:
        A list of floats aligned with ``graph.nodes`` (non-inputs hold their current ``.data``).

    Raises:
        ValueError: a node that is not in the graph, a node that is not an input, a sequence of the
            wrong length, or a value that is not finite (inf, nan).
        TypeError: a value that is not a real number; values that are neither a mapping nor a sequence
            (a set, whose order is not the inputs').
    """
    vals = [v.data for v in graph.nodes]
    if values is None:
        return vals
    n_i = graph.n_inputs
    if isinstance(values, Mapping):
        for node, x in values.items():
            j = graph.index.get(node) if isinstance(node, Value) else None
            if j is None:
                raise ValueError(
                    f"forward: {short_repr(node)} is not a node of this graph ({graph!r}); "
                    f"its inputs are {_names(graph, graph.leaves)}"
                )
            if j >= n_i:
                raise ValueError(
                    f"forward: {graph.name(node)} ({node!r}) is not an input: it is computed by "
                    f"{node.op.name}; only {graph.name(graph.nodes[0])}..{graph.name(graph.nodes[n_i - 1])} "
                    "can be set"
                )
            vals[j] = _input_number(x, graph, j)
        return vals
    if isinstance(values, (str, bytes, AbstractSet)) or not hasattr(values, "__len__"):
        unordered = (
            " (a set has no order: give a list, in the order of the inputs)"
            if isinstance(values, AbstractSet)
            else ""
        )
        raise TypeError(
            "forward: values must be a mapping {leaf: number} or a sequence, "
            f"got {typed_repr(values)}{unordered}"
        )
    xs = list(values)
    variables = graph.variables
    if len(xs) == n_i:
        targets = list(range(n_i))
    elif len(xs) == len(variables):
        targets = [graph.index[v] for v in variables]
    else:
        raise ValueError(
            f"forward: got {len(xs)} values, but the graph has {n_i} inputs "
            f"{_names(graph, graph.leaves)} of which {len(variables)} are variables"
        )
    for j, x in zip(targets, xs):
        vals[j] = _input_number(x, graph, j)
    return vals


def evaluate(
    graph: Graph,
    values: Inputs | None = None,
    *,
    observe: ForwardObserver | None = None,
    where: str = "Algorithm 6.1",
) -> list[float]:
    """Algorithm 6.1 without writing into the nodes: the values of u(1)..u(n) as a list aligned with them.

    Args:
        graph: the graph G.
        values: see :func:`input_values`; None evaluates with the current inputs.
        observe: called as ``observe(i, value)`` after each node u(i+1) is computed (i is 0-based), in order.
        where: the name put in front of an error message (``"store_grad"`` for the comparison that uses it).

    Returns:
        A list of floats: ``result[i]`` is the value of u(i+1); ``result[-1]`` is u(n).

    Raises:
        ValueError: bad ``values`` (see :func:`input_values`), or a leaf holding a non-finite value.
        DomainError: an operation met an input outside its domain or produced a non-finite value; the
            message names the node u(i), its operation, its input values and labels.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.1.
    """
    u = input_values(graph, values)  # lines 1-3: u(i) <- x_i for i = 1..n_i
    _check_leaves(graph, u, range(graph.n_inputs), where)
    _run(graph, u, graph.program(), observe, where)
    return u  # u(n) is u[-1]


def evaluate_segment(graph: Graph, lo: int, hi: int, known: dict[int, float], *, where: str) -> int:
    """Algorithm 6.1 over the nodes u(lo+1)..u(hi) only, from the values already known (checkpointing).

    The inputs among these nodes take their ``.data`` (lines 1-3); every other node of the segment whose
    value is not in ``known`` is computed by the loop of lines 4-6, from its parents' values, which must
    be in ``known`` or in the segment. The values are written into ``known``.

    Args:
        graph: the graph G.
        lo, hi: the segment, as 0-based positions ``lo <= i < hi`` in ``graph.nodes``.
        known: ``{position: value}``, the values already held (the checkpoints); updated in place.
        where: the name put in front of an error message.

    Returns:
        The number of operations evaluated (values computed, inputs not counted).

    Raises:
        KeyError: a parent outside the segment whose value is not in ``known``.
        ValueError: an input of the segment holding a non-finite value that an operation takes.
        DomainError: as :func:`evaluate`.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.1.
    """
    n_i, nodes = graph.n_inputs, graph.nodes
    inputs = range(lo, min(hi, n_i))
    for j in inputs:  # lines 1-3, for the inputs in the segment
        if j not in known:
            known[j] = nodes[j].data
    _check_leaves(graph, known, inputs, where)
    steps = [step for step in graph.program()[max(lo - n_i, 0) : max(hi - n_i, 0)] if step[0] not in known]
    _run(graph, known, steps, None, where)
    return len(steps)


def _run(
    graph: Graph,
    u: list[float] | dict[int, float],
    steps: Sequence[Step],
    observe: ForwardObserver | None,
    where: str,
) -> None:
    """Lines 4-6 of Algorithm 6.1, the one loop: u(i) <- f(i)(A(i)) for each step, in order, into ``u``."""
    i = a = b = -1
    try:
        with paused_gc():
            for i, f, a, b in steps:  # for i = n_i + 1, ..., n
                # u(i) <- f(i)(A(i)), A(i) = {u(j) | j in Pa(u(i))}
                x = f(u[a]) if b < 0 else f(u[a], u[b])
                if x - x != 0.0:
                    raise _NotFinite
                u[i] = x
                if observe is not None:
                    observe(i, x)
    except (ArithmeticError, ValueError) as e:
        raise _domain_error(graph, u, i, a, b, e, where) from None


def forward(graph: Graph, values: Inputs | None = None, *, observe: ForwardObserver | None = None) -> float:
    """Algorithm 6.1: set the inputs u(1)..u(n_i), compute u(i) = f(i)(A(i)) for i = n_i+1..n, return u(n).

    Every node's ``.data`` is updated, but only once all of them have been computed: if an operation
    fails, no node is changed. No node is built.

    Args:
        graph: the graph G.
        values: see :func:`input_values`; None re-evaluates with the current inputs.
        observe: called as ``observe(i, value)`` after each node is computed (see :func:`evaluate`).

    Returns:
        The value of u(n), a float.

    Raises:
        TypeError: ``graph`` is not a Graph (a Value z: pass ``Graph(z)``).
        ValueError: bad ``values`` (see :func:`input_values`), or a leaf holding a non-finite value.
        DomainError: an operation met an input outside its domain or produced a non-finite value; the
            message names the node u(i), its operation, its input values and labels.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.1.
    """
    check_graph(graph, "forward")
    u = evaluate(graph, values, observe=observe)
    # commit: every node now holds its new value
    for node, x in zip(graph.nodes, u):
        node.data = x
    return u[-1]  # return u(n)


def _check_leaves(graph: Graph, u: list[float] | dict[int, float], inputs: Iterable[int], where: str) -> None:
    """Leaves may hold inf or nan (``Value(math.inf)``); no operation takes them: refused before the loop."""
    for j in inputs:
        x = u[j]
        if x - x != 0.0 and graph.consumers()[j]:
            node = graph.nodes[j]
            label = f" (label {node.label!r})" if node.label else ""
            raise ValueError(
                f"{where}: the input {graph.name(node)}{label} is {x!r}; operations take finite numbers only"
            )


def _domain_error(
    graph: Graph,
    u: list[float] | dict[int, float],
    i: int,
    a: int,
    b: int,
    e: Exception,
    where: str = "Algorithm 6.1",
) -> DomainError:
    nodes = graph.nodes
    node = nodes[i]
    pa = [a] if b < 0 else [a, b]
    args = [_Shown(nodes[j], u[j]) for j in pa]
    where = f"{where} at {graph.name(node)}" + (f" (label {node.label!r})" if node.label else "")
    result = None
    if isinstance(e, _NotFinite):
        result = node.op.f(*[u[j] for j in pa])
    return DomainError(
        node.op, args, reason=e, result=result, where=where, names=[graph.name(nodes[j]) for j in pa]
    )


class _Shown(Value):
    """A stand-in node carrying the value an input had during the failed evaluation, for the message."""

    __slots__ = ()

    def __init__(self, node: Value, data: float) -> None:
        super().__init__(data, label=node.label)
        self.op = node.op
        self.meta = node.meta


def _input_number(x: Any, graph: Graph, j: int) -> float:
    """x as the float value of the input at position j, or the error that names it."""
    if isinstance(x, numbers.Real) and not isinstance(x, bool):
        if type(x) is float and x - x == 0.0:  # the usual case: a finite float
            return x
        what = f"the value for {graph.name(graph.nodes[j])}"
        try:
            value = float(x)
        except OverflowError:
            shown = repr(x) if len(repr(x)) <= 40 else f"{repr(x)[:12]}... ({len(repr(x))} digits)"
            raise ValueError(f"forward: {what} is too large for a float: {shown}") from None
        if not math.isfinite(value):
            raise ValueError(f"forward: {what} must be finite, got {value!r}")
        return value
    what = f"the value for {graph.name(graph.nodes[j])}"
    raise TypeError(f"forward: {what} must be a real number, got {typed_repr(x)}")


def _names(graph: Graph, nodes: list[Value]) -> str:
    shown = [graph.name(v) + (f"={v.label}" if v.label else "") for v in nodes[:8]]
    return "[" + ", ".join(shown) + (", ..." if len(nodes) > 8 else "") + "]"
