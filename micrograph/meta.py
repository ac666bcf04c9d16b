"""What a node is besides its operation: a label, a constant, a node of a backward subgraph B.

Most nodes need none of this (their ``Value._info`` slot is None, or their label alone): a
:class:`NodeMeta` is kept by implicit constants (one record, :data:`CONSTANT`, shared by all of them) and by
the nodes that :func:`~micrograph.grad` builds (one record per call, shared by its nodes), which is how a
view tells G from B and names B's nodes after G's.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, figure 6.10.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from micrograph.engine import Value

__all__ = ["NodeMeta", "CONSTANT"]


class NodeMeta:
    """What a node is besides its operation: a constant, or part of a backward subgraph B.

    Attributes:
        constant: the node is a number wrapped implicitly (``x * 2`` wraps ``2``), not a user variable.
        call: for nodes of B, the serial number of the :func:`~micrograph.grad` call that built them.
        grad_of: for the nodes of B that are a gradient dz/du (a grad_table entry), the forward nodes u.
        label: the node's label (``Value.label``), kept here for a node that has a NodeMeta.
        z: for nodes of B, the output z of the graph G whose derivative built them.
        targets: for nodes of B, the targets T of that call, in order. With ``z`` they let a view name
            B's nodes after G's (u(n+1), ... in B's order, as figure 6.10 is drawn); both are nodes of G,
            so a node of B refers back to G and never G to B (no reference cycle).

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, figure 6.10.
    """

    __slots__ = ("constant", "call", "grad_of", "label", "z", "targets")

    def __init__(
        self,
        constant: bool = False,
        call: int | None = None,
        grad_of: tuple[Value, ...] = (),
        label: str = "",
        z: Value | None = None,
        targets: tuple[Value, ...] = (),
    ):
        self.constant = constant
        self.call = call
        self.grad_of = grad_of
        self.label = label
        self.z = z
        self.targets = targets

    def __repr__(self) -> str:
        return f"NodeMeta(constant={self.constant}, call={self.call}, grad_of={len(self.grad_of)} node(s))"


CONSTANT = NodeMeta(constant=True)
"""The record of every implicit constant (the ``2`` of ``x * 2``): one object, shared."""
