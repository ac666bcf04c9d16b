"""Graph: the computational graph G as the topologically ordered node list u(1)..u(n).

A :class:`Graph` is built once from an output node z = u(n). Its ``nodes`` are every ancestor of z in a
topological order with the leaves first: ``nodes[:n_inputs]`` are the inputs u(1)..u(n_i) and
``nodes[-1]`` is z. The order is found iteratively (no recursion over the graph), so graphs a million
nodes deep work at Python's default recursion limit.

The graph is a snapshot of structure: re-running Algorithm 6.1 (:meth:`Graph.forward`) and Algorithm 6.2
(:meth:`Graph.backprop`) replays the stored order without building any node.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.1-6.5.6.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Union

from micrograph.backprop import BackpropObserver, GradTable, backprop
from micrograph.engine import Value
from micrograph.errors import short_repr, to_float, typed_repr
from micrograph.forward import ForwardObserver, forward
from micrograph.memory import paused_gc
from micrograph.ops import Op
from micrograph.order import topological_order

__all__ = ["Graph", "SubGraph", "as_values", "get_operation", "get_consumers", "get_inputs", "node_name"]


def node_name(i: int) -> str:
    """The book's name of the node u(i), counted from 1: ``node_name(1)`` is ``"u1"``.

    Every name u1..un that micrograph writes (drawings, messages, the explorer, the exercises) is this one.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1 (u(1)..u(n)).
    """
    return f"u{i}"


Inputs = Union[Mapping[Value, Any], Sequence[Any]]
"""What Algorithm 6.1 takes: ``{leaf: number}`` or a sequence of numbers in ``Graph.leaves`` order."""

Step = tuple[int, Callable[..., float], int, int]
"""One step of Algorithm 6.1, ``(i, f(i), a, b)``: u(i) = f(i)(u(a)) or f(i)(u(a), u(b)); b = -1 if unary."""

ConsumerEdge = tuple[int, int, Callable[..., Any], int, int]
"""An edge out of u(j) to a consumer, ``(i, k, rule, a, b)``: u(i) takes u(j) as its argument k, ``rule`` is
du(i)/du(j) from the operation table, and Pa(u(i)) = (u(a)[, u(b)]) (b = -1 if unary)."""


class _NodeList:
    """What G and G' share: the nodes in topological order, counted and iterated as ``nodes`` is."""

    __slots__ = ()
    nodes: list[Value]

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[Value]:
        return iter(self.nodes)


class Graph(_NodeList):
    """The computational graph G of an output node z, as the ordered node list u(1)..u(n).

    Args:
        output: the node z = u(n) whose ancestors make up the graph.

    Raises:
        TypeError: if ``output`` is not a :class:`~micrograph.engine.Value`.

    Attributes:
        nodes (list[Value]): u(1)..u(n) in topological order, leaves first.
        n_inputs (int): n_i, the number of leaves (variables and constants).
        output (Value): u(n), the node the graph was built from.
        num_edges (int): the number of edges, one per argument of every node (``a * a`` counts two).
        index (dict[Value, int]): the 0-based position of every node in ``nodes`` (u(i) is index i - 1).

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1 and Algorithm 6.1.
    """

    __slots__ = (
        "nodes", "n_inputs", "output", "num_edges", "index", "_parents", "_consumers", "_consumer_edges",
        "_program",
    )  # fmt: skip

    def __init__(self, output: Value) -> None:
        if not isinstance(output, Value):
            raise TypeError(f"Graph() takes the output Value z, got {typed_repr(output)}")
        with paused_gc():
            self._build(output)

    def _build(self, output: Value) -> None:
        order = topological_order((output,))
        leaves = [v for v in order if v.op is None]
        inner = [v for v in order if v.op is not None]
        n_i = len(leaves)
        self.nodes: list[Value] = leaves + inner
        self.n_inputs: int = n_i
        self.output: Value = output
        # Positions: leaves are u(1)..u(n_i); every other node follows its parents, so their positions
        # are known when it is reached.
        index = self.index = dict(zip(leaves, range(n_i)))
        parents: list[tuple[int, ...]] = [()] * n_i
        append = parents.append
        for pos, v in enumerate(inner, n_i):
            b = v._b
            if b is None:
                append((index[v._a],))
            else:
                append((index[v._a], index[b]))
            index[v] = pos
        self._parents = parents
        self.num_edges: int = sum(map(len, parents))
        self._consumers: list[list[ConsumerEdge]] | None = None  # built on first use by consumers()
        self._consumer_edges: list[list[tuple[int, int]]] | None = None  # built on first use, as above
        self._program: list[Step] | None = None  # built on first use by program()

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as its output z (see :meth:`Value.__reduce__`) and rebuilt: the same u(1)..u(n)."""
        return Graph, (self.output,)

    # --- the book's names -----------------------------------------------------------------------
    @property
    def leaves(self) -> list[Value]:
        """u(1)..u(n_i): the graph's inputs (the book's x_1..x_{n_i}), variables and constants, in the order
        Algorithm 6.1 sets them. (A node's own parents are ``Value.inputs``, the book's ``get_inputs``.)"""
        return self.nodes[: self.n_inputs]

    @property
    def variables(self) -> list[Value]:
        """The leaves that are not implicit constants: what a user usually sets."""
        return [v for v in self.nodes[: self.n_inputs] if not v.is_constant]

    def __contains__(self, node: object) -> bool:
        return node in self.index

    def __repr__(self) -> str:
        return f"Graph(n={len(self.nodes)}, n_inputs={self.n_inputs}, num_edges={self.num_edges})"

    def name(self, node: Value) -> str:
        """The book's name of a node in this graph: ``"u1"`` for u(1), and so on.

        Raises:
            ValueError: if the node is not in the graph.
        """
        return node_name(self._position(node) + 1)

    def _position(self, node: Any) -> int:
        try:
            return self.index[node]
        except (KeyError, TypeError):
            raise ValueError(f"{short_repr(node)} is not a node of this graph ({self!r})") from None

    def get_consumers(self, node: Value) -> list[Value]:
        """The children of ``node`` in G: the nodes that take it as an argument, each once, in order.

        Raises:
            ValueError: if the node is not in the graph.
        """
        j = self._position(node)
        nodes = self.nodes
        return [nodes[i] for i in dict.fromkeys(edge[0] for edge in self.consumers()[j])]

    @property
    def consumer_edges(self) -> list[list[tuple[int, int]]]:
        """For every node j, the edges out of it: (i, k) for each u(i) that takes u(j) as argument k.

        A view of :meth:`consumers` (the one consumer index), in the same order. Built once and cached, as
        :meth:`consumers` is: callers read ``consumer_edges[j]`` once per node or per edge, and building the
        view each time would make that quadratic in the graph's size. The lists are shared: not to be changed.
        """
        if self._consumer_edges is None:
            self._consumer_edges = [[(edge[0], edge[1]) for edge in edges] for edges in self.consumers()]
        return self._consumer_edges

    @property
    def parents(self) -> list[tuple[int, ...]]:
        """For every node i, the positions of its parents Pa(u(i)) in argument order."""
        return self._parents

    def consumers(self) -> list[list[ConsumerEdge]]:
        """The consumer index: for every node u(j), its edges to consumers, as :data:`ConsumerEdge` tuples.

        Algorithm 6.2 sums over exactly these edges (``i: j in Pa(u(i))``). Ordered by consumer position i,
        then argument k. Built once and cached, so replaying Algorithm 6.2 on new numbers builds nothing.
        """
        if self._consumers is None:
            nodes = self.nodes
            with paused_gc():  # one small tuple per edge, no cycles
                consumers: list[list[ConsumerEdge]] = [[] for _ in nodes]
                for i, pa in enumerate(self._parents):
                    if not pa:
                        continue
                    op = nodes[i].op
                    if len(pa) == 2:
                        a, b = pa
                        consumers[a].append((i, 0, op.rule(0), a, b))
                        consumers[b].append((i, 1, op.rule(1), a, b))
                    else:
                        consumers[pa[0]].append((i, 0, op.rule(0), pa[0], -1))
                self._consumers = consumers
        return self._consumers

    def program(self) -> list[Step]:
        """Algorithm 6.1's steps i = n_i+1..n as :data:`Step` tuples ``(i, f(i), a, b)``, cached."""
        if self._program is None:
            nodes, parents = self.nodes, self._parents
            with paused_gc():  # one tuple per node, no cycles
                self._program = [
                    (i, nodes[i].op.f, parents[i][0], parents[i][1] if len(parents[i]) > 1 else -1)
                    for i in range(self.n_inputs, len(nodes))
                ]
        return self._program

    # --- pruning ---------------------------------------------------------------------------------
    def prune(self, targets: Value | Iterable[Value]) -> SubGraph:
        """G': the nodes of G that are descendants of a node in T (every node of G is an ancestor of z).

        Constants and branches that do not depend on T are left out, as Algorithm 6.5 prescribes.

        Args:
            targets: T, the nodes to differentiate with respect to, a Value or an iterable of them (nodes
                outside G are ignored; an empty T gives an empty G').

        Raises:
            TypeError: T is neither a Value nor an iterable of Values (the message names the item, ``T[1]``).

        Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, Algorithm 6.5.
        """
        descendant = [False] * len(self.nodes)
        for V in as_values(targets, "G.prune(T)", "T", empty=True):
            j = self.index.get(V)
            if j is not None:
                descendant[j] = True
        # In topological order a node's parents are decided before it: it descends
        # from T if one of them does.
        for i, pa in enumerate(self._parents):
            if not descendant[i]:
                descendant[i] = any(descendant[j] for j in pa)
        return SubGraph(self, [v for v, d in zip(self.nodes, descendant) if d])

    # --- the algorithms --------------------------------------------------------------------------
    def forward(self, values: Inputs | None = None, *, observe: ForwardObserver | None = None) -> float:
        """Algorithm 6.1: set the inputs, recompute every node in order, return u(n)'s value.

        See :func:`micrograph.forward.forward`.
        """
        return forward(self, values, observe=observe)

    def backprop(self, seed: float = 1.0, *, observe: BackpropObserver | None = None) -> GradTable:
        """Algorithm 6.2: the grad_table {node: dz/dnode} for every node; touches no ``.grad``.

        See :func:`micrograph.backprop.backprop`. The seed is checked and converted as
        :meth:`Value.backward` does: the table holds Python floats whatever number type the seed is.

        Raises:
            TypeError: the seed is not a real number (None, a string, an array, a complex number).
            ValueError: the seed is not finite, or too large for a float (10**400).
            DomainError: as :func:`micrograph.backprop.backprop`.
        """
        return backprop(self, _seed(seed, "Graph.backprop(seed)"), observe=observe)


def _seed(seed: Any, where: str) -> float:
    """grad_table[u(n)] as a float: a finite real number (a NumPy scalar is converted, as by ``Value``)."""
    x = seed if type(seed) is float else to_float(seed, where)
    if not math.isfinite(x):
        raise ValueError(f"{where}: the seed dz/dz must be a finite number, got {x!r}")
    return x


class SubGraph(_NodeList):
    """G', the pruned graph of Algorithm 6.5: the nodes of G on a path from a target in T to z.

    Attributes:
        graph (Graph): G, the graph it was pruned from.
        nodes (list[Value]): the nodes of G' in G's topological order.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, Algorithm 6.5.
    """

    __slots__ = ("graph", "nodes", "_members")

    def __init__(self, graph: Graph, nodes: list[Value]) -> None:
        self.graph = graph
        self.nodes = nodes
        self._members = set(nodes)

    def __contains__(self, node: object) -> bool:
        return node in self._members

    def __repr__(self) -> str:
        return f"SubGraph(n={len(self.nodes)} of {len(self.graph.nodes)})"

    def get_consumers(self, node: Value) -> list[Value]:
        """The consumers of ``node`` that are in G', each once, in topological order."""
        return [c for c in self.graph.get_consumers(node) if c in self._members]


def get_operation(node: Value) -> Op | None:
    """``get_operation(V)`` of section 6.5.6: the operation that computes V (None for an input)."""
    return node.op  # type: ignore[no-any-return]


def get_consumers(node: Value, graph: Graph | SubGraph) -> list[Value]:
    """``get_consumers(V, G)`` of section 6.5.6: the children of V in the graph G (or G')."""
    return graph.get_consumers(node)


def get_inputs(node: Value, graph: Graph | SubGraph | None = None) -> tuple[Value, ...]:
    """``get_inputs(V, G)`` of section 6.5.6: the parents of V, in argument order.

    The book passes G'; micrograph returns all of V's arguments, including those outside G' (such as
    the constant in ``2 * x``), because ``op.bprop`` needs every argument to compute a local derivative.
    """
    return node.inputs


def as_values(x: Any, where: str, name: str, *, empty: bool = False) -> list[Value]:
    """``x``, one Value or a sequence of them (the targets T of a derivative, say), as a list.

    Args:
        x: a Value, or an iterable of Values (not a string).
        where: the caller, for messages, e.g. ``"grad(z, T)"``.
        name: the argument's name, for messages, e.g. ``"T"``.
        empty: whether an empty ``x`` is allowed (nodes to highlight, say); else it is a ValueError.

    Returns:
        The Values, in order.

    Raises:
        TypeError: x is neither a Value nor an iterable (a string counts as neither), or an item of it is
            not a Value (the message names its position, ``T[1]``).
        ValueError: x is empty and ``empty`` is False.
    """
    if isinstance(x, Value):
        return [x]
    if isinstance(x, (str, bytes)) or not isinstance(x, Iterable):
        raise TypeError(f"{where}: {name} must be a Value or a sequence of Values, got {typed_repr(x)}")
    try:
        items = list(x)
    except TypeError:  # an iterable type whose object is not (a 0-d NumPy array)
        raise TypeError(
            f"{where}: {name} must be a Value or a sequence of Values, got {typed_repr(x)}"
        ) from None
    if not items and not empty:
        raise ValueError(f"{where}: {name} is empty; give at least one Value to differentiate by")
    for k, v in enumerate(items):
        if not isinstance(v, Value):
            raise TypeError(f"{where}: {name}[{k}] must be a Value, got {typed_repr(v)}")
    return items
