"""Back-propagation in the push form of section 6.5.6: ``Value.backward`` and ``Value._backward``.

micrograd's surface puts back-propagation on the node: ``z.backward()`` fills every ancestor's ``.grad``.
Section 6.5.6 of the book describes it in words: start from dz/dz = 1, walk back from z, and let each
node multiply its gradient by the local derivative of its operation for each parent, "summing the
gradients arriving from different paths". Walking the nodes in reverse topological order, a node's
gradient is complete when it is reached (all of its consumers come before it), so it can push at once.

This is the second of micrograph's two forms of back-propagation, beside Algorithm 6.2's "pull" form in
:mod:`micrograph.backprop` (each node sums what its consumers hold): both evaluate the same rules of the
operation table, and a test holds them equal. The push form needs only the order, no consumer index and
no positions, which makes it the cheaper one for a graph built to be back-propagated once.

The loop is :func:`backward`'s plain loop; :mod:`micrograph.compile_push` writes the same pushes out as
one compiled loop, and the same order as a search that keeps its marks in ``.grad``, which ``backward``
runs while :data:`COMPILED` is true (tests hold the two equal, bit for bit, on random graphs).

The functions read and write the node's fields only: this module sits below the node's class, which takes
them as its methods (``Value.backward``, ``Value._backward``).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6 (with Algorithm 6.2).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from micrograph import compile_push
from micrograph.errors import NO_FLOAT, DomainError, overflowed, to_float
from micrograph.memory import paused_gc
from micrograph.order import topological_order

if TYPE_CHECKING:
    from micrograph.engine import Value

__all__ = ["COMPILED", "backward", "plain_loop", "push_to_parents"]

COMPILED = True
"""Whether :func:`backward` runs its pushes as the loop compiled from the table's rules
(:func:`micrograph.compile_push.push_loop`), over the order found by the search written for speed
(:func:`micrograph.compile_push.reverse_order`), rather than its plain loop over
:func:`~micrograph.order.topological_order`, which is many times slower (docs/performance.md, part 3,
gives the times). The order and the results are the same bit for bit; set it False to step through the
plain loop (in a debugger, say)."""


def backward(z: Value, gradient: float = 1.0) -> None:
    """Back-propagate from this node z: add dz/du into every ancestor u's ``.grad`` (micrograd's surface).

    This is back-propagation in the push form that section 6.5.6 of the book describes in words: "we
    begin by observing that the gradient with respect to z is given by dz/dz = 1. We can then compute
    the gradient with respect to each parent of z in the graph by multiplying the current gradient by
    the Jacobian of the operation that produced z. [...] For any node that may be reached by going
    backwards from z through two or more paths, we simply sum the gradients arriving from different
    paths at that node." Walking the nodes in reverse topological order, a node's gradient is complete
    when it is reached, and it pushes grad × du/dx_k into each parent (:meth:`Value._backward`). It
    computes the sums of Algorithm 6.2 (:meth:`Graph.backprop`, where each node *pulls* from its consumers)
    with the same rules of the operation table, but needs no consumer index and no node positions. The
    terms of a sum are added in the opposite order (last consumer first), so a gradient of three or more
    terms is rounded differently: usually in the last bit (about 1e-16 relative), entirely where terms
    cancel (x*1e20 - x*1e20 + x: dz/dx is 1e20 - 1e20 + 1 = 1 in one order, 1 - 1e20 + 1e20 = 0 in the
    other); with one or two terms the two are equal bit for bit.

    Gradients accumulate across calls, as in PyTorch: each call adds exactly dz/du into every node's
    ``.grad``, so two calls leave 2 × dz/du everywhere; call ``zero_grad()`` (or set ``.grad = 0.0``)
    between steps. Nodes holding a gradient are set aside first, so the sums start from zero, and
    their old gradients are added back at the end. micrograd differs on a second call: its nodes
    push from the gradient they already hold, so an intermediate's earlier gradient is pushed again
    and counted twice below it (z = (x*y)*x at x = 2, y = 3, called twice: dz/dx is 24 here and in
    PyTorch, 30 in micrograd 0.1.0).

    Args:
        gradient: the seed dz/dz, 1.0 by default.

    Raises:
        DomainError: a local derivative does not exist (e.g. sqrt at 0) or a gradient is not finite. The
            failure is located by Algorithm 6.2, whose message names the edge u(j) -> u(i); no ``.grad``
            is changed.
        TypeError: if ``gradient`` is not a real number.
        ValueError: ``gradient`` is not finite, or the graph has a cycle (made through the parent slots);
            no ``.grad`` is changed.
        OverflowError: a gradient added to the one a node already held overflows (two calls without
            ``zero_grad()``); no ``.grad`` is changed.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6 (with Algorithm 6.2).
    """
    if type(gradient) is not float:
        gradient = to_float(gradient, "backward(gradient)")
    if gradient - gradient != 0.0:
        raise ValueError(f"backward(gradient): the seed dz/dz must be a finite number, got {gradient!r}")
    if COMPILED:  # the same order and pushes, written for speed (tests hold the two equal, bit for bit)
        with paused_gc():
            if not compile_push.backward(z, gradient):  # a push failed; every .grad is as it was
                _locate_failure(z, gradient)
        return
    order = topological_order((z,))  # each node after its parents
    # z first: each node before its parents, so after every one of its consumers
    order.reverse()
    with paused_gc():  # the pushes create nothing that can form a cycle
        # earlier gradients set aside, so the sums start from zero
        held = [(node, g) for node in order if (g := node.grad)]
        for node in order:
            node.grad = 0.0
        z.grad = gradient
        try:
            # a node's gradient is complete: its consumers have all pushed
            for node in order:
                g = node.grad
                # inf or nan: Algorithm 6.2 says where (see _locate_failure)
                if g - g != 0.0:
                    raise OverflowError("not finite")
                node._backward()  # g × du/dx_k into each parent x_k
        except (ArithmeticError, ValueError):  # a derivative that does not exist, a gradient not finite
            _restore(order, held)
            _locate_failure(z, gradient)
            return
        except BaseException:  # interrupted (Ctrl-C): the gradients as they were before the call
            _restore(order, held)
            raise
        compile_push.add_back(order, held)  # the earlier gradients, added back: .grad += old for each


@contextmanager
def plain_loop() -> Iterator[None]:
    """Within the block, :func:`backward` runs its plain loop (:data:`COMPILED` is False), then as before.

    For a view that shows the lines of ``backward`` that ran (lesson 2's push form): the compiled twin
    gives the same gradients bit for bit, but its lines are generated text.
    """
    global COMPILED
    before, COMPILED = COMPILED, False
    try:
        yield
    finally:
        COMPILED = before


def push_to_parents(u: Value) -> None:
    """micrograd's step of back-propagation by hand: this node pushes its gradient into its parents.

    Adds ``self.grad × du/dx_k`` into the ``.grad`` of each parent x_k, with du/dx_k from the operation's
    rule (:meth:`~micrograph.ops.Op.local_derivative`): what micrograd's per-node closure does, so the
    lecture's ``o.grad = 1.0; o._backward(); n._backward(); ...`` gives micrograd's numbers. It is the
    step :meth:`backward`'s plain loop takes at every node; on a leaf it does nothing. Nothing is checked
    but the rule's domain: stepping by hand, the order is yours (a node's gradient must be complete
    before it pushes, as in the book's section 6.5.6).

    Raises:
        DomainError: the local derivative does not exist here (sqrt at 0); no ``.grad`` is changed.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6; Karpathy, micrograd.
    """
    op = u.op
    if op is None:
        return
    parents = u.inputs
    args = tuple(p.data for p in parents)
    g = u.grad
    try:
        terms = [g * op.local_derivative(k, args, u.data) for k in range(len(parents))]
    except (ArithmeticError, ValueError) as e:
        if overflowed(e):
            message = f"_backward: the local derivative of {op.name} overflows here: {NO_FLOAT}"
            raise DomainError(op, parents, message=message, overflows=True) from None
        reason = "its local derivative does not exist here"
        raise DomainError(op, parents, where="_backward", reason=reason) from None
    for parent, term in zip(parents, terms):
        parent.grad += term


def _restore(order: list[Value], held: list[tuple[Value, float]]) -> None:
    """Every ``.grad`` of ``order`` as it was before :func:`backward` set the gradients aside and pushed."""
    for node in order:
        node.grad = 0.0
    for node, old in held:
        node.grad = old


def _locate_failure(z: Value, gradient: float) -> None:
    """After a failed push: run Algorithm 6.2 on z's graph, whose DomainError names the failing edge.

    If Algorithm 6.2 succeeds (a local derivative into a constant does not exist: its entry is NaN, and
    constants are not variables), its grad_table is added into the nodes instead.
    """
    # The one import against the layers (graph.py is built on the node, and this module lies below it):
    # micrograd's surface puts back-propagation on the node, while Algorithm 6.2 lives with the graph.
    from micrograph.graph import Graph

    for node, g in Graph(z).backprop(gradient).items():
        node.grad += g
