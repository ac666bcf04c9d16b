"""What a node is besides its operation: a label, a constant, a node of a backward subgraph B.

Most nodes need none of this (their ``Value._info`` slot is None, or their label alone): a
:class:`NodeMeta` is kept by implicit constants (one record, :data:`CONSTANT`, shared by all of them) and by
the nodes that :func:`~micrograph.grad` builds (one record per call, shared by its nodes), which is how a
view tells G from B and names B's nodes after G's, and by the nodes an MLP builds (their role in Algorithm
6.3, layer and neuron), which is how a view draws the network by layers or neurons.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, figure 6.10.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from micrograph.engine import Value

__all__ = ["NodeMeta", "CONSTANT"]


class NodeMeta:
    """What a node is besides its operation: a constant, part of a backward subgraph B, or a part of an MLP.

    Attributes:
        constant: the node is a number wrapped implicitly (``x * 2`` wraps ``2``), not a user variable.
        call: for nodes of B, the serial number of the :func:`~micrograph.grad` call that built them.
        grad_of: for the nodes of B that are a gradient dz/du (a grad_table entry), the forward nodes u.
        label: the node's label (``Value.label``), kept here for a node that has a NodeMeta.
        z: for nodes of B, the output z of the graph G whose derivative built them.
        targets: for nodes of B, the targets T of that call, in order. With ``z`` they let a view name
            B's nodes after G's (u(n+1), ... in B's order, as figure 6.10 is drawn); both are nodes of G,
            so a node of B refers back to G and never G to B (no reference cycle).
        role: for a node an MLP built, what it is in Algorithm 6.3 (one of :data:`micrograph.mlp.ROLES`:
            ``"input"``, ``"weight"``, ``"bias"``, ``"a"``, ``"h"``, ``"loss"``, ``"regularizer"``,
            ``"cost"``), else ``""``. Views collapse the scalars of a layer or a neuron by it.
        layer: the layer k (1..l; 0 for an input x) of such a node, or None.
        neuron: the neuron m of layer k (0-based, as the labels ``a1[0]``; the feature for an input), or None.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, figure 6.10; section
    6.5.4, Algorithm 6.3 (the roles).
    """

    __slots__ = ("constant", "call", "grad_of", "label", "z", "targets", "role", "layer", "neuron")

    def __init__(
        self,
        constant: bool = False,
        call: int | None = None,
        grad_of: tuple[Value, ...] = (),
        label: str = "",
        z: Value | None = None,
        targets: tuple[Value, ...] = (),
        role: str = "",
        layer: int | None = None,
        neuron: int | None = None,
    ):
        self.constant = constant
        self.call = call
        self.grad_of = grad_of
        self.label = label
        self.z = z
        self.targets = targets
        self.role = role
        self.layer = layer
        self.neuron = neuron

    def __repr__(self) -> str:
        role = f", role={self.role!r}, layer={self.layer}, neuron={self.neuron}" if self.role else ""
        return (
            f"NodeMeta(constant={self.constant}, call={self.call}, grad_of={len(self.grad_of)} node(s){role})"
        )


CONSTANT = NodeMeta(constant=True)
"""The record of every implicit constant (the ``2`` of ``x * 2``): one object, shared."""
