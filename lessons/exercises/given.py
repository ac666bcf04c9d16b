"""What a student's solution is given and what it gives back, on the solution's side of the wall.

G as an exercise gives it (:class:`Graph`: u(1)..u(n), n_i and the book's get_consumers, get_inputs,
get_operation, and nothing that runs an algorithm), built from the judge's records; and the solution's result
as plain data (:class:`Plain`: numbers, lists, node positions in place of nodes; B as records). It runs in
the child interpreter (:mod:`lessons.exercises.child`) and in the page's Web Worker, before the import guard
is in place: standard library only at import.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3-6.5.6.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = [
    "Plain",
    "Graph",
    "SubGraph",
    "build_nodes",
    "graph_of",
    "snapshot",
    "mutation",
    "number",
    "records_of_B",
    "reference",
    "ENGINE_ONLY",
    "MAX_ITEMS",
    "MAX_B",
]

ENGINE_ONLY = ("backprop", "forward", "prune", "program", "consumers", "consumer_edges")
"""Methods of micrograph's Graph that run an algorithm: absent from the graph a solution is given."""


MAX_ITEMS = 2_000_000


class Plain:
    """Converts what a solution returned into JSON data: numbers, strings, lists, dicts, node references."""

    def __init__(self, refs: dict[int, int]) -> None:
        self.refs = refs  # id(node) -> its position in G
        self.items = 0

    def __call__(self, x: Any, depth: int = 0) -> Any:
        self.items += 1
        if self.items > MAX_ITEMS or depth > 12:
            raise ValueError("the result is too large or too deeply nested")
        if x is None or isinstance(x, (bool, str)):
            return x if not isinstance(x, str) else x[:200]
        if isinstance(x, float):
            return float.__float__(x)  # a float subclass: its stored number, not what its methods say
        if isinstance(x, int):
            return int.__int__(x)
        node = self.node(x)
        if node is not None:
            return node
        if isinstance(x, dict):
            return {"dict": [[self(k, depth + 1), self(v, depth + 1)] for k, v in list(x.items())]}
        if isinstance(x, (list, tuple)):
            return [self(v, depth + 1) for v in x]
        return self.other(x, depth)

    def node(self, x: Any) -> Any:
        engine = sys.modules.get("micrograph.engine")
        if engine is not None and isinstance(x, engine.Value):
            pos = self.refs.get(id(x))
            return (
                {"node": pos}
                if pos is not None
                else {"value": float.__float__(float(x.data)), "label": x.label}
            )
        return None

    def other(self, x: Any, depth: int) -> Any:
        tolist = getattr(type(x), "tolist", None)  # numpy arrays and scalars
        if tolist is not None and callable(tolist):
            return self(tolist(x), depth + 1)
        import numbers

        if isinstance(x, numbers.Real):
            return float(x)
        if isinstance(x, numbers.Complex):
            return {"object": f"complex {x!r}"[:200]}
        return {"object": f"{type(x).__name__} {x!r}"[:200]}


# ---------------------------------------------------------------------------------------------------------
# Plain data in: graphs as records.


def build_nodes(records: list[list[Any]]) -> dict[int, Any]:
    """Nodes from records ``[id, op, param, [parent ids], data, label, constant]`` (parents listed first or
    not: nodes are made first and linked after, so a shuffled list reveals no order)."""
    from micrograph import engine, meta, ops

    made: dict[int, Any] = {}
    for rid, opname, param, _args, data, label, constant in records:
        v = engine._new(engine.Value)
        v.data, v.grad, v._a, v._b, v._info = float(data), 0.0, None, None, None
        v.op = (
            None
            if opname is None
            else (ops.pow_const(param) if param is not None else ops.op_by_name(opname))
        )
        if constant:
            v._info = meta.CONSTANT
        elif label:
            v.label = label
        made[rid] = v
    for rid, _opname, _param, args, *_ in records:
        if args:
            made[rid]._a = made[args[0]]
            made[rid]._b = made[args[1]] if len(args) > 1 else None
    return made


class Graph:
    """G as an exercise gives it: u(1)..u(n), n_i, and the book's get_consumers, get_inputs, get_operation.

    It has what the templates document and nothing that runs an algorithm: no ``backprop``, ``forward``
    or ``prune``.

    Attributes:
        nodes: u(1)..u(n), the leaves first. n_inputs: n_i. output: u(n) = z. num_edges: the edges.
        index: {node: 0-based position}. parents: for each node, its parents' positions in argument order.
    """

    def __init__(self, nodes: list[Any], n_inputs: int, members: list[int] | None = None) -> None:
        self.nodes = nodes
        self.n_inputs = n_inputs
        self.output = nodes[-1]
        self.index = {v: i for i, v in enumerate(nodes)}
        self.parents = [tuple(self.index[p] for p in v.inputs) for v in nodes]
        self.num_edges = sum(map(len, self.parents))
        keep = set(range(len(nodes))) if members is None else set(members)
        self._consumers: list[list[Any]] = [[] for _ in nodes]
        for i, pa in enumerate(self.parents):
            if i in keep:
                for j in dict.fromkeys(pa):
                    self._consumers[j].append(nodes[i])

    def __getattr__(self, name: str) -> Any:
        if name in ENGINE_ONLY:
            raise AttributeError(
                f"G.{name} is micrograph's own algorithm; it is not available while your code is checked"
            )
        raise AttributeError(f"the graph has no attribute {name!r}")

    @property
    def leaves(self) -> list[Any]:
        """u(1)..u(n_i)."""
        return self.nodes[: self.n_inputs]

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Any:
        return iter(self.nodes)

    def __contains__(self, node: object) -> bool:
        return node in self.index

    def __repr__(self) -> str:
        return f"Graph(n={len(self.nodes)}, n_inputs={self.n_inputs}, num_edges={self.num_edges})"

    def name(self, node: Any) -> str:
        """``"u1"`` for u(1), and so on."""
        return f"u{self._position(node) + 1}"

    def _position(self, node: Any) -> int:
        try:
            return self.index[node]
        except (KeyError, TypeError):
            raise ValueError(f"{node!r} is not a node of this graph") from None

    def get_consumers(self, node: Any) -> list[Any]:
        """The nodes that take ``node`` as an argument, each once, in order (section 6.5.6)."""
        return list(self._consumers[self._position(node)])

    def get_inputs(self, node: Any) -> tuple[Any, ...]:
        """The parents of ``node`` in argument order, with repeats (section 6.5.6)."""
        self._position(node)
        return tuple(node.inputs)

    def get_operation(self, node: Any) -> Any:
        """The operation that computes ``node``; None for an input (section 6.5.6)."""
        self._position(node)
        return node.op


class SubGraph(Graph):
    """G' of Algorithm 6.5: the nodes of G on a path from a target to z; consumers restricted to them."""

    def __init__(self, graph: Graph, members: list[int]) -> None:
        super().__init__(graph.nodes, graph.n_inputs, members)
        self.graph = graph
        self._members = {graph.nodes[i] for i in members}
        self.nodes = [graph.nodes[i] for i in members]

    def __contains__(self, node: object) -> bool:
        return node in self._members

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Any:
        return iter(self.nodes)


def graph_of(request: dict[str, Any]) -> tuple[Graph, dict[int, Any]]:
    made = build_nodes(request["records"])
    nodes = [made[i] for i in range(len(made))]
    return Graph(nodes, request["n_inputs"]), made


def snapshot(nodes: list[Any]) -> list[tuple[Any, ...]]:
    return [(v.data, v.grad, v.op, id(v._a), id(v._b), v._info) for v in nodes]


def mutation(nodes: list[Any], before: list[tuple[Any, ...]]) -> list[Any]:
    """[position, field, old, new] of the first node the solution changed, or []."""
    fields = ("data", "grad", "op", "inputs", "inputs", "label")
    for j, (v, old) in enumerate(zip(nodes, before)):
        new = (v.data, v.grad, v.op, id(v._a), id(v._b), v._info)
        for name, a, b in zip(fields, old, new):
            same = a is b or a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)
            if not same:
                plain = name in ("data", "grad")
                return [j, name, number(a) if plain else None, number(b) if plain else None]
    return []


def number(x: Any) -> Any:
    try:
        return float.__float__(float(x))
    except (TypeError, ValueError, OverflowError):
        return None


MAX_B = 200_000


def records_of_B(G: Graph, roots: list[Any]) -> dict[str, Any]:
    """The nodes of B reachable from ``roots`` as records, parents first (an iterative search): G's nodes are
    referred to by position (``["g", j]``), B's by their index in the records (``["b", k]``)."""
    from micrograph import engine

    ids: dict[int, int] = {}
    records: list[list[Any]] = []
    for root in roots:
        if not isinstance(root, engine.Value) or root in G.index or id(root) in ids:
            continue
        stack: list[tuple[Any, bool]] = [(root, False)]
        opened: set[int] = set()
        while stack:
            v, ready = stack.pop()
            if id(v) in ids or v in G.index:
                continue
            if ready:
                ids[id(v)] = len(records)
                op = v.op
                records.append(
                    [
                        None if op is None else op.name,
                        None if op is None else op.param,
                        [reference(G, ids, p) for p in v.inputs],
                        float.__float__(float(v.data)),
                        v.label,
                        v.is_constant,
                    ]
                )
                if len(records) > MAX_B:
                    raise ValueError(f"B has more than {MAX_B:,} nodes")
                continue
            if id(v) in opened:
                raise ValueError("B has a cycle: a node is its own ancestor")
            opened.add(id(v))
            stack.append((v, True))
            stack.extend((p, False) for p in v.inputs if id(p) not in ids and p not in G.index)

    def ref(x: Any) -> Any:
        if isinstance(x, engine.Value):
            return reference(G, ids, x)
        return {"plain": Plain({})(x)}

    return {"records": records, "ref": ref}


def reference(G: Graph, ids: dict[int, int], v: Any) -> list[Any]:
    """``["g", j]`` for u(j+1) of G, ``["b", k]`` for B's k-th record."""
    j = G.index.get(v)
    return ["g", j] if j is not None else ["b", ids[id(v)]]
