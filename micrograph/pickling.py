"""Pickling and copying a node with its whole graph, iteratively: ``Value.__reduce__`` and ``__deepcopy__``.

Python's default way to pickle or deep-copy an object follows its references recursively, one stack frame
per parent: a chain of 100,000 nodes would overflow the stack. Here a node's graph is written as one flat
list in topological order (:func:`~micrograph.order.topological_order`), each node referring to its
parents by position; copying walks the same order. A leaf is pickled as itself, so leaves keep their
identity across everything in one pickle (a model's parameters and the graphs built from them);
operations are pickled by name (:meth:`Op.__reduce__ <micrograph.ops.Op.__reduce__>`).

The functions read and write the node's fields only: this module sits below the node's class, which takes
them as its methods, and the class itself is passed along in the pickle.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1 (the graph as a list of
nodes, each with its parents).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, TypeGuard

from micrograph.meta import CONSTANT, NodeMeta
from micrograph.order import topological_order

if TYPE_CHECKING:
    from micrograph.engine import Value

__all__ = ["reduce_node", "deepcopy_node"]


def reduce_node(node: Value) -> tuple[Any, tuple[Any, ...]]:
    """Pickle a node with its whole graph as a flat list in topological order (no recursion).

    A leaf is pickled as itself, so leaves keep their identity across everything in one pickle (the
    parameters of a model and the graphs built from them). An inner node is pickled with a copy of its
    ancestors: two outputs pickled together share their leaves but not their inner nodes (pickle a
    :class:`~micrograph.graph.Graph`, or the one output, to keep a graph whole). A node of B is pickled
    with the nodes of G its record names (:class:`~micrograph.meta.NodeMeta`: z, the targets, the node
    whose gradient it is), in the same list, so each is written once and B still names them after a round
    trip. Operations are pickled by name.
    """
    cls = type(node)
    if node._a is None and not _names_nodes(node._info):
        return _leaf, (cls, node.data, node.grad, node.label, node.meta)
    order = _with_named(node)
    position = {v: k for k, v in enumerate(order)}
    metas: list[tuple[Any, ...]] = []
    meta_index: dict[int, int] = {}  # id of a NodeMeta shared by several nodes -> its place in metas
    records: list[Any] = []
    for v in order:
        info: Any = v._info
        if _names_nodes(info):
            k = meta_index.get(id(info))
            if k is None:
                k = meta_index[id(info)] = len(metas)
                metas.append(_meta_record(info, position))
            info = k  # the record, by its place in metas
        elif v._a is None:
            records.append(v)  # a leaf: pickled as itself (memoized by pickle: one object)
            continue
        a, b = v._a, v._b
        records.append(
            (v.op, -1 if a is None else position[a], -1 if b is None else position[b], v.data, v.grad, info)
        )
    return _rebuild, (cls, records, metas, position[node])


def _names_nodes(info: object) -> TypeGuard[NodeMeta]:
    """Whether a node's record names other nodes (a node of B: z, the targets, grad_of)."""
    return isinstance(info, NodeMeta) and (info.z is not None or bool(info.targets) or bool(info.grad_of))


def _named(info: NodeMeta) -> list[Value]:
    return [*info.grad_of, *([] if info.z is None else [info.z]), *info.targets]


def _with_named(node: Value) -> list[Value]:
    """node's ancestors, and the nodes their records name with theirs, each after its parents."""
    outputs = [node]
    while True:
        order = topological_order(outputs)
        inside = set(order)
        named = {id(u): u for v in order if _names_nodes(v._info) for u in _named(v._info) if u not in inside}
        if not named:
            return order
        outputs += named.values()


def _meta_record(info: NodeMeta, position: dict[Value, int]) -> tuple[Any, ...]:
    """A node of B's record, the nodes it names as their places in the flat list."""
    z = -1 if info.z is None else position[info.z]
    grad_of = tuple(position[u] for u in info.grad_of)
    targets = tuple(position[u] for u in info.targets)
    return (info.constant, info.call, grad_of, info.label, z, targets, info.role, info.layer, info.neuron)


def deepcopy_node(node: Value, memo: dict[int, Any]) -> Value:
    """A copy of the node and its whole graph, iteratively; nodes copied before (``memo``) are reused."""
    for v in topological_order((node,)):
        if id(v) in memo:
            continue
        new = object.__new__(type(v))
        new.data, new.grad, new.op = v.data, v.grad, v.op
        new._a = None if v._a is None else memo[id(v._a)]
        new._b = None if v._b is None else memo[id(v._b)]
        memo[id(v)] = new
        info = v._info
        shared = info is None or info.__class__ is str or info is CONSTANT  # immutable, or shared by all
        new._info = info if shared else copy.deepcopy(info, memo)
    return memo[id(node)]  # type: ignore[no-any-return]


def _leaf(cls: type[Value], data: float, grad: float, label: str, meta: NodeMeta | None) -> Value:
    """A leaf again, from its pickled fields (an implicit constant gets the one shared record back)."""
    v = object.__new__(cls)
    v.data, v.grad, v.op, v._a, v._b, v._info = data, grad, None, None, None, None
    v.meta = CONSTANT if meta is not None and meta.constant and meta.call is None and not label else meta
    v.label = label
    return v


def _rebuild(cls: type[Value], records: list[Any], metas: Any = (), root: int = -1) -> Value:
    """A graph again, from :func:`reduce_node`'s flat list; returns the node pickled (``root``).

    The nodes first, then the records of B's nodes, which name nodes anywhere in the list."""
    nodes: list[Value] = []
    for record in records:
        if isinstance(record, cls):
            nodes.append(record)
            continue
        op, a, b, data, grad, info = record[0], record[1], record[2], record[3], record[4], record[5:]
        v = object.__new__(cls)
        v.data, v.grad, v.op, v._info = data, grad, op, None
        if len(info) == 2:  # a file written before the records of B were kept apart: its label and meta
            v.meta = info[1]
            v.label = info[0]
        else:
            v._info = info[0]  # None, a label, a NodeMeta, or the place of B's record (set below)
        v._a = None if a < 0 else nodes[a]
        v._b = None if b < 0 else nodes[b]
        nodes.append(v)
    built = [
        NodeMeta(constant, call, tuple(nodes[u] for u in grad_of), label, None if z < 0 else nodes[z],
                 tuple(nodes[u] for u in targets), role, layer, neuron)
        for constant, call, grad_of, label, z, targets, role, layer, neuron in metas
    ]  # fmt: skip
    for v in nodes:
        if type(v._info) is int:
            v._info = built[v._info]
    return nodes[root]
