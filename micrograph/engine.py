"""Value: the node u(i) of the book's computational graph, with micrograd's surface.

A :class:`Value` holds a scalar ``data``, its gradient ``grad``, the operation ``op`` that produced it
(None for a leaf, one of the first n_i nodes u(1)..u(n_i)), and its parents ``inputs``, Pa(u): an ordered
tuple in argument order, with repeats (``a * a`` has two edges to ``a``). Operators and methods build new
nodes from the operation table in :mod:`micrograph.ops`; nothing else stores how to differentiate a node.

Nodes hold no reference cycles (a node refers only to its parents), so a graph is freed by reference
counting the moment the last reference to its output goes, without the garbage collector.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1 (computational graphs).
"""

from __future__ import annotations

import copy
import math
import numbers
import re
import sys
from collections.abc import Iterable, Sequence
from typing import Any, Union

from micrograph.errors import DomainError
from micrograph.memory import paused_gc
from micrograph.ops import (
    ADD,
    COS,
    DIV,
    EXP,
    LOG,
    MUL,
    NEG,
    POW,
    RELU,
    SIGMOID,
    SIN,
    SQRT,
    SUB,
    TANH,
    pow_const,
)

__all__ = ["Value", "NodeMeta", "apply", "as_value", "as_values", "sum_nodes", "topological_order"]

Number = Union[int, float]


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


_CONSTANT = NodeMeta(constant=True)
_new = object.__new__


class Value:
    """A scalar node u(i) of the computational graph G, micrograd-compatible.

    Args:
        data: the value, an int, float or NumPy scalar (stored as a float).
        _children: micrograd's lecture form ``Value(5.0, (a, b), '+')``: the parents of a node built by hand.
        _op: with ``_children``, the operation as micrograd writes it: ``'+'``, ``'*'``, ``'tanh'``,
            ``'exp'``, ``'ReLU'`` or ``'**c'``. The node is built by that operation of the table (so it can
            be back-propagated, drawn and differentiated again), and ``data`` must be its value.
        label: a name for drawings and error messages (keyword only).

    Raises:
        TypeError: if ``data`` is not a real number (a string, a complex number, a list, a Value ...), or
            ``_children`` is not a tuple of Values.
        ValueError: ``_op`` is not one of micrograd's operations, does not take that many parents, or
            ``data`` is not the value the operation gives on the parents (the message says what to write).

    Attributes:
        data (float): the node's value.
        grad (float): the gradient accumulated by :meth:`backward` (0.0 until then).
        op (Op | None): the operation f(i) that produced the node; None for a leaf (an input).
        inputs (tuple[Value, ...]): the parents Pa(u(i)) in argument order; ``()`` for a leaf.
        label (str): the user's name for the node, or ``""``.
        meta (NodeMeta | None): whether it is a constant or a node of a backward subgraph B.

    Values hash by identity and ``==`` is identity: a Value can be a dict key (the grad_table is one).
    Arithmetic with ``+ - * / **``, unary ``-``, the reflected forms (``2 * x``) and ``+=`` build new nodes;
    numbers are wrapped as constant leaves. ``x ** c`` with a number c is one node with an arity-1
    operation (as in micrograd); ``x ** y`` with a Value y is a node with two parents.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1.
    """

    # The parents are two slots, not a tuple: a tuple would be a second object per node for the cyclic
    # garbage collector to track and walk (every operation has one or two arguments). The label and the
    # NodeMeta share one slot, ``_info``: None (most nodes), the label (a str), or a NodeMeta holding the
    # label. Six slots make a node 80 bytes instead of 96: less memory for every phase to walk.
    __slots__ = ("data", "grad", "op", "_a", "_b", "_info")
    __array_ufunc__ = None  # NumPy defers to the reflected operators: np.float64(2) * x is a Value

    data: float
    grad: float
    op: Any
    _a: Any  # the first parent (a Value), None for a leaf
    _b: Any  # the second parent (a Value), None for a leaf or a one-argument operation
    _info: str | NodeMeta | None

    def __init__(
        self, data: Any, _children: tuple[Value, ...] = (), _op: str = "", *, label: str = ""
    ) -> None:
        if type(data) is not float:
            data = _to_float(data, "Value()")
        if not isinstance(label, str):
            raise TypeError(f"Value(label=...) must be a str, got {type(label).__name__} {label!r}")
        self.data = data
        self.grad = 0.0
        self.op = None
        self._a = None
        self._b = None
        self._info = label or None
        if _children or _op:
            built = _by_hand(data, _children, _op)
            self.op, self._a, self._b = built.op, built._a, built._b

    # --- what a node is ------------------------------------------------------------------------
    @property
    def inputs(self) -> tuple[Value, ...]:
        """Pa(u): the parents in argument order, with repeats (``a * a`` gives ``(a, a)``); ``()`` for a leaf.

        The book's ``get_inputs(V)``. Read-only: a node's parents are fixed when it is built.
        """
        a = self._a
        if a is None:
            return ()
        b = self._b
        return (a,) if b is None else (a, b)

    @property
    def is_leaf(self) -> bool:
        """True for an input u(1)..u(n_i): a node with no operation."""
        return self.op is None

    @property
    def label(self) -> str:
        """The user's name for the node, or ``""`` (drawings and error messages show it).

        Raises (on assignment):
            TypeError: if the label is not a str.
        """
        info = self._info
        if info is None:
            return ""
        return info if info.__class__ is str else info.label  # type: ignore[union-attr]

    @label.setter
    def label(self, label: str) -> None:
        if not isinstance(label, str):
            raise TypeError(f"Value.label must be a str, got {type(label).__name__} {label!r}")
        info = self._info
        if isinstance(info, NodeMeta):
            if info.label != label:
                info = copy.copy(info)  # a NodeMeta may be shared by several nodes
                info.label = label
                self._info = info
        else:
            self._info = label or None

    @property
    def meta(self) -> NodeMeta | None:
        """Whether the node is a constant or a node of a backward subgraph B; None for most nodes."""
        info = self._info
        return info if isinstance(info, NodeMeta) else None

    @meta.setter
    def meta(self, meta: NodeMeta | None) -> None:
        label = self.label
        if meta is None:
            self._info = label or None
            return
        if not isinstance(meta, NodeMeta):
            raise TypeError(f"Value.meta must be a NodeMeta or None, got {type(meta).__name__} {meta!r}")
        if meta.label != label:
            meta = copy.copy(meta)  # the label is the node's own
            meta.label = label
        self._info = meta

    @property
    def is_constant(self) -> bool:
        """True for a number wrapped implicitly by an operator (the ``2`` in ``x * 2``)."""
        info = self._info
        return isinstance(info, NodeMeta) and info.constant

    @property
    def in_backward(self) -> bool:
        """True for a node that :func:`~micrograph.grad` built: a node of a backward subgraph B."""
        meta = self.meta
        return meta is not None and meta.call is not None

    @property
    def grad_of(self) -> Value | None:
        """For a node of B that is a gradient dz/du, the forward node u (the first, if several)."""
        meta = self.meta
        return meta.grad_of[0] if meta is not None and meta.grad_of else None

    def __repr__(self) -> str:
        extra = f", label={self.label!r}" if self.label else ""
        if self.op is not None:
            extra += f", op={self.op.name!r}"
        return f"Value(data={self.data!r}, grad={self.grad!r}{extra})"

    # --- arithmetic: the hot operations are written out for speed ------------------------------
    def __add__(self, other: Any) -> Value:
        if other.__class__ is not Value:
            other = _wrap(other)
            if other is NotImplemented:
                return NotImplemented
        d = self.data + other.data
        if d - d != 0.0:
            raise DomainError(ADD, (self, other), result=d)
        out = _new(Value)
        out.data = d
        out.grad = 0.0
        out.op = ADD
        out._a = self
        out._b = other
        out._info = None
        return out

    def __radd__(self, other: Any) -> Value:
        o = _wrap(other)
        return NotImplemented if o is NotImplemented else o.__add__(self)

    def __mul__(self, other: Any) -> Value:
        if other.__class__ is not Value:
            other = _wrap(other)
            if other is NotImplemented:
                return NotImplemented
        d = self.data * other.data
        if d - d != 0.0:
            raise DomainError(MUL, (self, other), result=d)
        out = _new(Value)
        out.data = d
        out.grad = 0.0
        out.op = MUL
        out._a = self
        out._b = other
        out._info = None
        return out

    def __rmul__(self, other: Any) -> Value:
        o = _wrap(other)
        return NotImplemented if o is NotImplemented else o.__mul__(self)

    def __sub__(self, other: Any) -> Value:
        o = _wrap(other)
        return NotImplemented if o is NotImplemented else apply(SUB, (self, o))

    def __rsub__(self, other: Any) -> Value:
        o = _wrap(other)
        return NotImplemented if o is NotImplemented else apply(SUB, (o, self))

    def __truediv__(self, other: Any) -> Value:
        o = _wrap(other)
        return NotImplemented if o is NotImplemented else apply(DIV, (self, o))

    def __rtruediv__(self, other: Any) -> Value:
        o = _wrap(other)
        return NotImplemented if o is NotImplemented else apply(DIV, (o, self))

    def __pow__(self, other: Any) -> Value:
        if isinstance(other, Value):
            return apply(POW, (self, other))
        if isinstance(other, numbers.Real):
            return apply(pow_const(_to_float(other, "the exponent of x ** c")), (self,))
        return NotImplemented

    def __rpow__(self, other: Any) -> Value:
        o = _wrap(other)
        return NotImplemented if o is NotImplemented else apply(POW, (o, self))

    def __neg__(self) -> Value:
        return apply(NEG, (self,))

    def __pos__(self) -> Value:
        return self

    def __abs__(self) -> Value:
        """|x| = relu(x) + relu(-x), built from the table's operations (no operation of its own): its
        derivative is the sign of x, and 0 at x = 0, as in PyTorch."""
        return self.relu() + (-self).relu()

    # --- comparisons: of .data, a plain bool, as PyTorch users expect (no node is built) -------------
    # ``==`` is not among them: it stays identity, so that a Value can be a key of the grad_table.
    def __lt__(self, other: Any) -> bool:
        o = _data(other)
        return NotImplemented if o is NotImplemented else self.data < o

    def __le__(self, other: Any) -> bool:
        o = _data(other)
        return NotImplemented if o is NotImplemented else self.data <= o

    def __gt__(self, other: Any) -> bool:
        o = _data(other)
        return NotImplemented if o is NotImplemented else self.data > o

    def __ge__(self, other: Any) -> bool:
        o = _data(other)
        return NotImplemented if o is NotImplemented else self.data >= o

    # --- functions ---------------------------------------------------------------------------
    def relu(self) -> Value:
        """max(0, x): the rectified linear unit (section 6.3.1). Its derivative is the step H(x).

        Raises:
            DomainError: if x is not finite (inf or nan), as every operation does.
        """
        d = self.data
        if d - d != 0.0:
            raise DomainError(
                RELU, (self,), reason="an argument is not finite (operations take finite numbers only)"
            )
        out = _new(Value)
        out.data = d if d > 0.0 else 0.0
        out.grad = 0.0
        out.op = RELU
        out._a = self
        out._b = None
        out._info = None
        return out

    def tanh(self) -> Value:
        """tanh(x), computed stably (no overflow at x = ±1000); derivative 1 - tanh(x)²."""
        return apply(TANH, (self,))

    def sigmoid(self) -> Value:
        """σ(x) = 1 / (1 + exp(-x)), computed stably for large |x|; derivative σ(x)(1 - σ(x))."""
        return apply(SIGMOID, (self,))

    def exp(self) -> Value:
        """exp(x). Raises :class:`DomainError` if the result overflows (x > 709.78)."""
        return apply(EXP, (self,))

    def log(self) -> Value:
        """The natural logarithm. Raises :class:`DomainError` for x <= 0."""
        return apply(LOG, (self,))

    def sqrt(self) -> Value:
        """The square root. Raises :class:`DomainError` for x < 0."""
        return apply(SQRT, (self,))

    def sin(self) -> Value:
        """sin(x), x in radians."""
        return apply(SIN, (self,))

    def cos(self) -> Value:
        """cos(x), x in radians."""
        return apply(COS, (self,))

    # --- pickling and copying: iterative, so a million-node graph works ---------------------------
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickle a node with its whole graph as a flat list in topological order (no recursion).

        A leaf is pickled as itself, so leaves keep their identity across everything in one pickle (the
        parameters of a model and the graphs built from them). An inner node is pickled with a copy of its
        ancestors: two outputs pickled together share their leaves but not their inner nodes (pickle a
        :class:`~micrograph.graph.Graph`, or the one output, to keep a graph whole). Operations are pickled
        by name.
        """
        if self._a is None:
            return _leaf, (self.data, self.grad, self.label, self.meta)
        order = topological_order((self,))
        position = {node: k for k, node in enumerate(order)}
        records: list[Any] = []
        for node in order:
            if node._a is None:
                records.append(node)  # a leaf: pickled as itself (memoized by pickle: one object)
            else:
                b = node._b
                records.append(
                    (node.op, position[node._a], -1 if b is None else position[b], node.data, node.grad,
                     node.label, node.meta)
                )  # fmt: skip
        return _rebuild, (records,)

    def __deepcopy__(self, memo: dict[int, Any]) -> Value:
        """A copy of the node and its whole graph, iteratively; nodes copied before (``memo``) are reused."""
        for node in topological_order((self,)):
            if id(node) in memo:
                continue
            new = _new(Value)
            new.data, new.grad, new.op = node.data, node.grad, node.op
            new._a = None if node._a is None else memo[id(node._a)]
            new._b = None if node._b is None else memo[id(node._b)]
            memo[id(node)] = new
            info = node._info
            shared = info is None or info.__class__ is str or info is _CONSTANT  # immutable, or shared by all
            new._info = info if shared else copy.deepcopy(info, memo)
        return memo[id(self)]  # type: ignore[no-any-return]

    def __copy__(self) -> Value:
        """A new node with the same value, operation and parents (the parents are shared, not copied)."""
        new = _new(Value)
        new.data, new.grad, new.op, new._a, new._b = self.data, self.grad, self.op, self._a, self._b
        new._info = self._info
        return new

    @staticmethod
    def apply_op(op: Any, args: tuple[Any, ...]) -> Value:
        """How an :class:`~micrograph.ops.Op` called on Values builds its node: :func:`apply`."""
        return apply(op, args)

    # --- back-propagation ----------------------------------------------------------------------
    def backward(self, gradient: float = 1.0) -> None:
        """Back-propagate from this node: add dz/du into every ancestor u's ``.grad`` (micrograd's surface).

        This is back-propagation in the push form that section 6.5.6 of the book describes in words: "we
        begin by observing that the gradient with respect to z is given by dz/dz = 1. We can then compute
        the gradient with respect to each parent of z in the graph by multiplying the current gradient by
        the Jacobian of the operation that produced z. [...] For any node that may be reached by going
        backwards from z through two or more paths, we simply sum the gradients arriving from different
        paths at that node." Walking the nodes in reverse topological order, a node's gradient is complete
        when it is reached, and it pushes grad × du/dx_k into each parent. It computes the sums of
        Algorithm 6.2 (:meth:`Graph.backprop`, where each node *pulls* from its consumers) with the same
        rules of the operation table, but needs no consumer index and no node positions. The terms of a sum
        are added in the opposite order (last consumer first), so a gradient of three or more terms can
        differ from ``Graph.backprop``'s in the last bit (about 1e-16 relative); with one or two terms the
        two are equal bit for bit.

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
            ValueError: the graph has a cycle (made through the parent slots); no ``.grad`` is changed.

        Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6 (with Algorithm 6.2).
        """
        if type(gradient) is not float:
            gradient = _to_float(gradient, "backward(gradient)")
        with paused_gc():  # the order and the pushes create nothing that can form a cycle
            order, held = _reverse_order(self)
            self.grad = gradient
            try:
                # every consumer of a node comes before it: its gradient is complete when it is reached
                (_push_all or _make_push_all())(order)
            except (ArithmeticError, ValueError):
                _unmark(order, held)
                self._locate_failure(gradient)
                return
            except BaseException:  # interrupted (Ctrl-C): the gradients as they were before the call
                _unmark(order, held)
                raise
            for node, old in held:  # the earlier gradients, added back (IEEE addition is commutative)
                node.grad += old

    def _locate_failure(self, gradient: float) -> None:
        """After a failed push: run Algorithm 6.2 on this graph, whose DomainError names the failing edge.

        If Algorithm 6.2 succeeds (a local derivative into a constant does not exist: its entry is NaN, and
        constants are not variables), its grad_table is added into the nodes instead.
        """
        # The one import against the layers (graph.py is built on this module): micrograd's surface puts
        # back-propagation on the node, while Algorithm 6.2 lives with the graph it walks.
        from micrograph.graph import Graph

        graph = Graph(self)
        for node, g in graph.backprop(gradient).items():
            node.grad += g

    def _backward(self) -> None:
        """micrograd's step of back-propagation by hand: this node pushes its gradient into its parents.

        Adds ``self.grad × du/dx_k`` into the ``.grad`` of each parent x_k, exactly what micrograd's
        per-node closure does, so the lecture's ``o.grad = 1.0; o._backward(); n._backward(); ...`` gives
        micrograd's numbers. It is the push that :meth:`backward` runs for every node, compiled once per
        operation from the table's rule (no closure per node); on a leaf it does nothing. Nothing is
        checked but the rule's domain: stepping by hand, the order is yours (a node's gradient must be
        complete before it pushes, as in the book's section 6.5.6).

        Raises:
            DomainError: the local derivative does not exist here (sqrt at 0); no ``.grad`` is changed.

        Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6; Karpathy, micrograd.
        """
        op = self.op
        if op is None:
            return
        parents = self.inputs
        before = [p.grad for p in parents]
        try:
            (op._push or op.push_function())(self, self.grad)
        except (ArithmeticError, ValueError):
            for p, g in zip(parents, before):
                p.grad = g
            raise DomainError(
                op, parents, where="_backward", reason="its local derivative does not exist here"
            ) from None

    @property
    def _prev(self) -> set[Value]:
        """micrograd's name for the node's parents, as a set (read-only), for the lecture's ``trace``."""
        return set(self.inputs)

    @property
    def _op(self) -> str:
        """micrograd's name for the operation's symbol (read-only); ``""`` for a leaf, as in micrograd."""
        return "" if self.op is None else str(self.op.symbol)


def topological_order(outputs: Iterable[Value]) -> list[Value]:
    """Every ancestor of ``outputs`` (themselves included), each after all of its parents.

    An iterative depth-first search with an explicit stack, so the depth of the graph is not limited
    by Python's recursion limit. The order is deterministic: parents are visited in argument order.

    Args:
        outputs: the nodes to start from.

    Returns:
        The nodes in post-order: a topological order of the graph.

    Raises:
        TypeError: if an output is not a Value.
    """
    order: list[Value] = []
    seen: set[Value] = set()
    add, append = seen.add, order.append
    for root in outputs:
        if not isinstance(root, Value):
            raise TypeError(f"a graph is built from Value nodes, got {type(root).__name__} {root!r}")
        if root in seen:
            continue
        add(root)
        # The stack is the current path of the depth-first search. A node stays on top until every
        # parent has been seen; a parent seen earlier is finished (in a DAG it cannot be on the path),
        # so the node is emitted after all of its parents. Parents are read from the two slots directly.
        stack = [root]
        push, pop = stack.append, stack.pop
        while stack:
            node = stack[-1]
            p = node._a
            if p is not None and p not in seen:
                add(p)
                push(p)
                continue
            p = node._b
            if p is not None and p not in seen:
                add(p)
                push(p)
                continue
            pop()
            append(node)
    return order


def _leaf(data: float, grad: float, label: str, meta: NodeMeta | None) -> Value:
    """A leaf again, from its pickled fields."""
    v = _new(Value)
    v.data, v.grad, v.op, v._a, v._b, v._info = data, grad, None, None, None, None
    v.meta = _CONSTANT if meta is not None and meta.constant and meta.call is None and not label else meta
    v.label = label
    return v


def _rebuild(records: list[Any]) -> Value:
    """A graph again, from :meth:`Value.__reduce__`'s flat list; returns its last node (the one pickled)."""
    nodes: list[Value] = []
    for record in records:
        if isinstance(record, Value):
            nodes.append(record)
            continue
        op, a, b, data, grad, label, meta = record
        v = _new(Value)
        v.data, v.grad, v.op, v._info = data, grad, op, None
        v.meta = meta
        v.label = label
        v._a = nodes[a]
        v._b = None if b < 0 else nodes[b]
        nodes.append(v)
    return nodes[-1]


# The operations whose pushes Value.backward inlines, most frequent first: the rest are called.
_INLINED = (ADD, MUL, RELU, TANH)
_push_all: Any = None


def _make_push_all() -> Any:
    """Compile ``push_all(order)``: the push form's loop, each node pushing g × du/dx_k into its parents.

    The loop is generated once from the operation table: for the operations in ``_INLINED`` their
    :meth:`~micrograph.ops.Op.push_source` statements are written into the loop (no call per node); any
    other operation's compiled ``push_function`` is called. Either way the arithmetic is the table's rule,
    so the results equal calling the rules, bit for bit.

    Raises (from the compiled loop): OverflowError for a gradient that is not finite at a node that is
    not a constant; ArithmeticError or ValueError from a rule (a derivative that does not exist).
    """
    global _push_all
    namespace: dict[str, Any] = {"math": math}
    branches = []
    for k, op in enumerate(_INLINED):
        body, names = op.push_source()
        for name, value in names.items():  # each operation's helpers under names of their own
            if value is math:
                continue
            own = f"_op{k}{name}"
            body = [re.sub(rf"\b{re.escape(name)}\b", own, line) for line in body]
            namespace[own] = value
        namespace[f"_op{k}"] = op
        branches.append(f"        {'if' if k == 0 else 'elif'} op is _op{k}:\n")
        branches += [f"            {line}\n" for line in body]
    source = (
        f"def push_all(order, {', '.join(f'_op{k}=_op{k}' for k in range(len(_INLINED)))}):  # locals\n"
        "    for node in order:\n"
        "        g = node.grad\n"
        "        if g - g != 0.0 and not node.is_constant:  # a constant's derivative may not exist\n"
        "            raise OverflowError('not finite')\n"
        "        op = node.op\n"
        + "".join(branches)
        + "        elif op is not None:  # a leaf has no parents\n"
        "            (op._push or op.push_function())(node, g)\n"
    )
    exec(compile(source, "<Value.backward push loop>", "exec"), namespace)  # text from the table's rules
    _push_all = namespace["push_all"]
    return _push_all


# The marks of _reverse_order's search, each a float 0.0 of its own, told apart by identity: _OPEN for a
# node whose parents are being searched, _DONE for a node in the order. No other .grad is ever one of
# these objects (a sum makes a new float), and a node in the order needs no reset afterwards: its
# gradient is already the 0.0 that the pushes add into.
_OPEN = float("0")
_DONE = float("0")


def _reverse_order(z: Value) -> tuple[list[Value], list[tuple[Value, float]]]:
    """The ancestors of z in reverse topological order (z first), each ``.grad`` set to zero.

    :func:`topological_order`'s depth-first search, for ``backward`` only, where speed matters most. A
    node's state is kept in its ``.grad`` (its old gradient is set aside first): no set of seen nodes is
    built, which on a large graph is the costliest part of the search. A node is opened once, when it
    first reaches the top of the stack: its unfinished parents are pushed, both at once (a parent pushed
    twice is skipped when it comes up finished). It is finished (appended to the order) when it is on top
    again, so every node comes after its parents; the order is then reversed. A node whose parents are
    all finished is finished when it is opened.

    Returns:
        The order, and the nodes that held a non-zero gradient with those gradients.

    Raises:
        ValueError: the graph has a cycle (made through the parent slots); every ``.grad`` is restored.
    """
    order: list[Value] = []
    held: list[tuple[Value, float]] = []
    keep, append = held.append, order.append
    opened, done = _OPEN, _DONE
    stack = [z]
    push, pop = stack.append, stack.pop
    try:
        while stack:
            node = stack[-1]
            g = node.grad
            if g is not opened:
                if g is done:  # pushed twice, finished since
                    pop()
                    continue
                if g:
                    keep((node, g))
                a = node._a  # the opened nodes are the path: an opened parent closes a cycle
                if a is not None:
                    b = node._b
                    if b is not None and b.grad is not done:
                        if b.grad is opened:
                            raise _cycle(node)
                        node.grad = opened
                        push(b)
                        if a.grad is not done:
                            if a.grad is opened:
                                raise _cycle(node)
                            push(a)
                        continue
                    if a.grad is not done:
                        if a.grad is opened:
                            raise _cycle(node)
                        node.grad = opened
                        push(a)
                        continue
            pop()
            node.grad = done
            append(node)
    except BaseException:  # interrupted: every node marked so far gets its gradient back
        _unmark(order, held, stack)
        raise
    order.reverse()
    return order, held


def _cycle(node: Value) -> ValueError:
    return ValueError(
        f"the graph has a cycle: the node {node!r} is its own ancestor (a node's parents must be built "
        "before it; were its parent slots changed by hand?)"
    )


def _unmark(order: list[Value], held: list[tuple[Value, float]], more: Iterable[Value] = ()) -> None:
    """Undo :func:`_reverse_order` (and any pushes since): each node's ``.grad`` as it was before."""
    for node in order:
        node.grad = 0.0
    for node in more:  # the stack: opened nodes, and pushed ones not yet opened (their .grad untouched)
        if node.grad is _OPEN or node.grad is _DONE:
            node.grad = 0.0
    for node, old in held:
        node.grad = old


def to_float(x: Any, where: str) -> float:
    """A real number (int, float, NumPy scalar, Fraction ...) as a float, or a message naming ``where``.

    Raises:
        TypeError: x is not a real number (None, a string, an array, a complex number, a Value).
        ValueError: x is too large for a float (10**400).
    """
    return _to_float(x, where)


def _to_float(x: Any, where: str) -> float:
    if isinstance(x, numbers.Real) and not isinstance(x, Value):
        try:
            return float(x)
        except OverflowError:
            raise ValueError(
                f"{where}: {_shown(x)} is too large for a float (at most about 1.8e308)"
            ) from None
        except (TypeError, ValueError):
            pass
    raise TypeError(f"{where} takes a real number (int, float or NumPy scalar), got {type(x).__name__} {x!r}")


def _shown(x: Any) -> str:
    """A number for a message, shortened if its text is long (an int of 400 digits)."""
    text = repr(x)
    return text if len(text) <= 40 else f"{text[:12]}...{text[-6:]} ({len(text)} digits)"


def _wrap(x: Any) -> Any:
    """A Value as is; a real number as a new constant leaf; anything else NotImplemented."""
    t = x.__class__
    if t is Value:
        return x
    if t is float or t is int or (isinstance(x, numbers.Real) and not isinstance(x, Value)):
        v = _new(Value)
        v.data = x if t is float else _to_float(x, "a number in an expression")
        v.grad = 0.0
        v.op = None
        v._a = None
        v._b = None
        v._info = _CONSTANT
        return v
    return NotImplemented


def _data(x: Any) -> Any:
    """What a comparison compares: a Value's ``.data``, a real number, or NotImplemented."""
    if x.__class__ is Value:
        return x.data
    if isinstance(x, numbers.Real):
        return x
    return NotImplemented


_LECTURE_OPS = {"+": ADD, "*": MUL, "tanh": TANH, "exp": EXP, "ReLU": RELU, "relu": RELU}
"""micrograd's operation symbols (its ``_op``) and the operations of the table they name."""


def _by_hand(data: float, children: Any, symbol: Any) -> Value:
    """The node ``Value(data, children, symbol)`` of micrograd's lecture, built by the table's operation.

    Raises:
        TypeError, ValueError: as :class:`Value` says.
    """
    where = f"Value({data!r}, {children!r}, {symbol!r})"
    if not isinstance(children, (tuple, list)) or not all(isinstance(c, Value) for c in children):
        raise TypeError(f"{where}: the children must be a tuple of Values, such as (a, b)")
    if isinstance(symbol, str) and symbol.startswith("**"):
        try:
            op = pow_const(float(symbol[2:]))
        except ValueError:
            op = None
    else:
        op = _LECTURE_OPS.get(symbol) if isinstance(symbol, str) else None
    instead = "write the operation itself: a + b, a * b, a.tanh(), a.exp(), a.relu() or a**2"
    if op is None or op.arity != len(children):
        raise ValueError(
            f"{where}: micrograph builds a node by its operation ({', '.join(_LECTURE_OPS)} or **c, with one "
            f"parent per argument); {instead}"
        )
    node = apply(op, tuple(children))
    if not math.isclose(node.data, data, rel_tol=1e-9, abs_tol=1e-12):
        raise ValueError(f"{where}: {symbol} of the children is {node.data!r}, not {data!r}; {instead}")
    return node


def as_value(x: Any) -> Value:
    """``x`` if it is a Value, else ``x`` wrapped as a constant leaf.

    Raises:
        TypeError: if x is neither a Value nor a real number.
    """
    v = _wrap(x)
    if v is NotImplemented:
        raise TypeError(f"expected a Value or a real number, got {type(x).__name__} {x!r}")
    return v  # type: ignore[no-any-return]


def as_values(x: Any, where: str, name: str) -> list[Value]:
    """``x``, one Value or a sequence of them (the targets T of a derivative, say), as a non-empty list.

    Args:
        x: a Value, or an iterable of Values (not a string).
        where: the caller, for messages, e.g. ``"grad(z, T)"``.
        name: the argument's name, for messages, e.g. ``"T"``.

    Returns:
        The Values, in order.

    Raises:
        TypeError: x is neither a Value nor an iterable (a string counts as neither), or an item of it is
            not a Value (the message names its position, ``T[1]``).
        ValueError: x is empty.
    """
    if isinstance(x, Value):
        return [x]
    if isinstance(x, (str, bytes)) or not isinstance(x, Iterable):
        got = f"{type(x).__name__} {x!r}"
        raise TypeError(f"{where}: {name} must be a Value or a sequence of Values, got {got}")
    try:
        items = list(x)
    except TypeError:  # an iterable type whose object is not (a 0-d NumPy array)
        raise TypeError(
            f"{where}: {name} must be a Value or a sequence of Values, got {type(x).__name__} {x!r}"
        ) from None
    if not items:
        raise ValueError(f"{where}: {name} is empty; give at least one Value to differentiate by")
    for k, v in enumerate(items):
        if not isinstance(v, Value):
            raise TypeError(f"{where}: {name}[{k}] must be a Value, got {type(v).__name__} {v!r}")
    return items


def apply(op: Any, args: tuple[Any, ...]) -> Value:
    """Build the node u = op(args): compute its value with ``op.f``, check it, link it to its parents.

    Numbers among ``args`` are wrapped as constant leaves. Nothing is built if the check fails.

    Args:
        op: an :class:`~micrograph.ops.Op` of arity ``len(args)``.
        args: the parents, Values or numbers, in argument order.

    Raises:
        DomainError: if the inputs are outside the operation's domain or the result is not finite.
        TypeError: if an argument is neither a Value nor a real number.
    """
    args = tuple(as_value(a) for a in args)
    for a in args:
        if a.data - a.data != 0.0:  # inf or nan: no operation takes a non-finite argument
            raise DomainError(
                op, args, reason="an argument is not finite (operations take finite numbers only)"
            )
    try:
        d = op.f(*[a.data for a in args])
    except (ArithmeticError, ValueError) as e:
        raise DomainError(op, args, reason=str(e)) from None
    if d - d != 0.0:
        raise DomainError(op, args, result=d)
    out = _new(Value)
    out.data = float(d)
    out.grad = 0.0
    out.op = op
    out._a = args[0]
    out._b = args[1] if len(args) > 1 else None
    out._info = None
    return out


def sum_nodes(terms: Sequence[Value]) -> Value:
    """t1 + t2 + ... + tk as a left-leaning chain of additions, with no constant 0 node in front.

    An empty sum is a new constant 0 leaf. Used wherever the book writes a sum of nodes (Algorithm 6.6's
    G <- sum_i G(i), a loss over examples).

    Raises:
        TypeError: if a term is neither a Value nor a real number.
    """
    if not terms:
        return as_value(0.0)
    total = as_value(terms[0])
    for t in terms[1:]:
        total = total + t
    return total


# Python compiled to WebAssembly (Pyodide, in the site's page) runs on the browser's call stack, about 1 MB:
# freeing the output of a chain 10,000 deep frees its parent inside its own release, and so on down, deep
# enough to overflow it. There, a node being freed hands its parents to a list that is emptied in a loop, so
# releasing a graph takes constant stack. Elsewhere the interpreter's own stack suffices and nodes carry
# no finalizer (it would slow every release).
_RELEASED: list[Any] = []
_RELEASING = [False]


def _release_parents(node: Value) -> None:
    """``Value.__del__`` under Pyodide: the parents are released by the loop, not inside this release."""
    _RELEASED.append(node._a)
    _RELEASED.append(node._b)
    node._a = node._b = None
    if _RELEASING[0]:
        return
    _RELEASING[0] = True
    try:
        while _RELEASED:
            _RELEASED.pop()
    finally:
        _RELEASING[0] = False


if sys.platform == "emscripten":
    Value.__del__ = _release_parents  # type: ignore[attr-defined]
