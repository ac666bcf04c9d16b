"""The topological order of a graph: every node after its parents, by an iterative depth-first search.

This is the order u(1)..u(n) that the book's algorithms walk (section 6.5.1: "the nodes ... in an order
such that we can compute their outputs one after the other"): :class:`~micrograph.graph.Graph` numbers the
nodes by it, ``Value.backward`` walks it from the end (section 6.5.6), pickling writes a graph in it.

The search reads a node's two parent slots and nothing else, so this module sits below the node's class
(:class:`~micrograph.engine.Value` appears only in annotations) and changes no node.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.1 and 6.5.3.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from micrograph.errors import is_node, typed_repr

if TYPE_CHECKING:
    from micrograph.engine import Value

__all__ = ["topological_order"]


def topological_order(outputs: Iterable[Value]) -> list[Value]:
    """Every ancestor of ``outputs`` (themselves included), each after all of its parents.

    An iterative depth-first search with an explicit stack, so the depth of the graph is not limited by
    Python's recursion limit (a chain of a million nodes is ordered like any other). The stack is the
    current path from an output: the node at its end stays there until each of its parents is finished
    (a parent not finished yet is added to the path and searched first), and is then finished, appended to
    the order. Parents are visited in argument order, so the order is deterministic.

    The path is kept in a list of fixed length, ``path[:depth]``, which is doubled when the path fills it.
    In a graph without a cycle a path never holds a node twice; a cycle (made by changing a node's parent
    slots by hand) makes the path repeat itself without end, which the check at each doubling finds.

    Args:
        outputs: the nodes to start from.

    Returns:
        The nodes in post-order: a topological order of the graph, each node once.

    Raises:
        TypeError: if an output is not a Value.
        ValueError: the graph has a cycle (the message names a node that is its own ancestor).
    """
    order: list[Value] = []
    finished: set[Value] = set()
    append, finish = order.append, finished.add
    for root in outputs:
        if not is_node(root):
            raise TypeError(f"a graph is built from Value nodes, got {typed_repr(root)}")
        if root in finished:
            continue
        path = [root] * 64
        size = len(path)
        node, depth = root, 1
        while True:
            parent = node._a
            if parent is None or parent in finished:
                parent = node._b
                if parent is None or parent in finished:  # every parent finished: so is the node
                    finish(node)
                    append(node)
                    depth -= 1
                    if not depth:
                        break
                    node = path[depth - 1]  # back to the node before it on the path
                    continue
            if depth == size:  # the path fills its list: no node may be on it twice
                _no_repeat(path)
                path += path
                size += size
            path[depth] = node = parent  # the parent is searched next
            depth += 1
    return order


def _no_repeat(path: list[Value]) -> None:
    """Check that the search's path holds no node twice.

    Raises:
        ValueError: a node is on the path twice: it is its own ancestor.
    """
    seen: set[Value] = set()
    for node in path:
        if node in seen:
            raise ValueError(
                f"the graph has a cycle: the node {node!r} is its own ancestor (a node's parents must be "
                "built before it; were its parent slots changed by hand?)"
            )
        seen.add(node)
