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
from typing import TYPE_CHECKING, Any

from micrograph.meta import CONSTANT, NodeMeta
from micrograph.order import topological_order

if TYPE_CHECKING:
    from micrograph.engine import Value

__all__ = ["reduce_node", "deepcopy_node"]

_new = object.__new__


def reduce_node(node: Value) -> tuple[Any, tuple[Any, ...]]:
    """Pickle a node with its whole graph as a flat list in topological order (no recursion).

    A leaf is pickled as itself, so leaves keep their identity across everything in one pickle (the
    parameters of a model and the graphs built from them). An inner node is pickled with a copy of its
    ancestors: two outputs pickled together share their leaves but not their inner nodes (pickle a
    :class:`~micrograph.graph.Graph`, or the one output, to keep a graph whole). Operations are pickled
    by name.
    """
    cls = type(node)
    if node._a is None:
        return _leaf, (cls, node.data, node.grad, node.label, node.meta)
    order = topological_order((node,))
    position = {v: k for k, v in enumerate(order)}
    records: list[Any] = []
    for v in order:
        if v._a is None:
            records.append(v)  # a leaf: pickled as itself (memoized by pickle: one object)
        else:
            b = v._b
            records.append(
                (v.op, position[v._a], -1 if b is None else position[b], v.data, v.grad, v.label, v.meta)
            )
    return _rebuild, (cls, records)


def deepcopy_node(node: Value, memo: dict[int, Any]) -> Value:
    """A copy of the node and its whole graph, iteratively; nodes copied before (``memo``) are reused."""
    for v in topological_order((node,)):
        if id(v) in memo:
            continue
        new = _new(type(v))
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
    v = _new(cls)
    v.data, v.grad, v.op, v._a, v._b, v._info = data, grad, None, None, None, None
    v.meta = CONSTANT if meta is not None and meta.constant and meta.call is None and not label else meta
    v.label = label
    return v


def _rebuild(cls: type[Value], records: list[Any]) -> Value:
    """A graph again, from :func:`reduce_node`'s flat list; returns its last node (the one pickled)."""
    nodes: list[Value] = []
    for record in records:
        if isinstance(record, cls):
            nodes.append(record)
            continue
        op, a, b, data, grad, label, meta = record
        v = _new(cls)
        v.data, v.grad, v.op, v._info = data, grad, op, None
        v.meta = meta
        v.label = label
        v._a = nodes[a]
        v._b = None if b < 0 else nodes[b]
        nodes.append(v)
    return nodes[-1]
