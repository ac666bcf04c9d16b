"""Value: the node u(i) of the book's computational graph, and its operators, with micrograd's surface.

A :class:`Value` holds a scalar ``data``, its gradient ``grad``, the operation ``op`` that produced it
(None for a leaf, one of the first n_i nodes u(1)..u(n_i)), and its parents ``inputs``, Pa(u): an ordered
tuple in argument order, with repeats (``a * a`` has two edges to ``a``). Operators and methods build new
nodes from the operation table in :mod:`micrograph.ops`; nothing else stores how to differentiate a node.

Nodes hold no reference cycles (a node refers only to its parents), so a graph is freed by reference
counting the moment the last reference to its output goes, without the garbage collector.

What a node does with its whole graph is written in modules of its own, below this one, which the class
takes as its methods: back-propagation in the push form (``backward``, ``_backward``:
:mod:`micrograph.push`), pickling and copying (:mod:`micrograph.pickling`), micrograd's lecture surface
(:mod:`micrograph.lecture`).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1 (computational graphs).
"""

from __future__ import annotations

import copy
import numbers
import operator
import sys
from collections.abc import Callable, Sequence
from typing import Any

from micrograph import compile_nodes, lecture, pickling, push
from micrograph.errors import NOT_FINITE, DomainError, to_float, typed_repr
from micrograph.meta import CONSTANT, NodeMeta
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
    Op,
    pow_const,
)

__all__ = ["Value", "apply", "as_value", "sum_nodes"]

_new = object.__new__


# The operators and functions that build their node with ``apply`` are made from the table's operation by
# one definition each; ``+``, ``*`` and relu, the hot ones, are compiled from the table by compile_nodes.
def _operator(op: Op, *, reflected: bool = False) -> Callable[[Value, Any], Value]:
    """``x op y`` (``y op x`` if reflected) as the node of ``op``; NotImplemented for a non-number."""

    def method(self: Value, other: Any) -> Value:
        o = _wrap(other)
        if o is NotImplemented:
            return NotImplemented
        return apply(op, (o, self) if reflected else (self, o))

    method.__name__ = f"__{'r' if reflected else ''}{'truediv' if op.name == 'div' else op.name}__"
    method.__qualname__ = f"Value.{method.__name__}"
    return method


def _comparison(compare: Callable[[float, Any], bool]) -> Callable[[Value, Any], bool]:
    """A comparison of ``.data`` with a Value's ``.data`` or a number: a plain bool, no node."""

    def method(self: Value, other: Any) -> bool:
        o = _data(other)
        return NotImplemented if o is NotImplemented else compare(self.data, o)

    method.__name__ = f"__{compare.__name__}__"
    method.__qualname__ = f"Value.{method.__name__}"
    return method


def _function(op: Op, doc: str) -> Callable[[Value], Value]:
    """The method ``x.name()`` building the node op(x), with ``doc`` as what ``help(Value)`` shows of it."""

    def method(self: Value) -> Value:
        return apply(op, (self,))

    method.__name__ = op.name
    method.__qualname__ = f"Value.{op.name}"
    method.__doc__ = doc
    return method


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
            data = to_float(data, "Value()")
        if not isinstance(label, str):
            raise TypeError(f"Value(label=...) must be a str, got {typed_repr(label)}")
        self.data = data
        self.grad = 0.0
        self.op = None
        self._a = None
        self._b = None
        self._info = label or None
        if _children or _op:
            built = lecture.by_hand(data, _children, _op)
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
            raise TypeError(f"Value.label must be a str, got {typed_repr(label)}")
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
            raise TypeError(f"Value.meta must be a NodeMeta or None, got {typed_repr(meta)}")
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

    # --- arithmetic: + and *, the hot operations, compiled from the table (micrograph.compile_nodes) ----
    __add__ = compile_nodes.operator(ADD, globals())

    def __radd__(self, other: Any) -> Value:
        o = _wrap(other)
        return NotImplemented if o is NotImplemented else o.__add__(self)

    __mul__ = compile_nodes.operator(MUL, globals())

    def __rmul__(self, other: Any) -> Value:
        o = _wrap(other)
        return NotImplemented if o is NotImplemented else o.__mul__(self)

    __sub__ = _operator(SUB)
    __rsub__ = _operator(SUB, reflected=True)
    __truediv__ = _operator(DIV)
    __rtruediv__ = _operator(DIV, reflected=True)

    def __pow__(self, other: Any) -> Value:
        if isinstance(other, Value):
            return apply(POW, (self, other))
        if isinstance(other, numbers.Real):
            return apply(pow_const(to_float(other, "the exponent of x ** c")), (self,))
        return NotImplemented

    __rpow__ = _operator(POW, reflected=True)

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
    __lt__ = _comparison(operator.lt)
    __le__ = _comparison(operator.le)
    __gt__ = _comparison(operator.gt)
    __ge__ = _comparison(operator.ge)

    # --- functions ---------------------------------------------------------------------------
    relu = compile_nodes.function(
        RELU,
        globals(),
        """max(0, x): the rectified linear unit (section 6.3.1). Its derivative is the step H(x).

        Raises:
            DomainError: if x is not finite (inf or nan), as every operation does.
        """,
    )

    tanh = _function(TANH, "tanh(x), computed stably (no overflow at x = ±1000); derivative 1 - tanh(x)².")
    sigmoid = _function(
        SIGMOID, "σ(x) = 1 / (1 + exp(-x)), computed stably for large |x|; derivative σ(x)(1 - σ(x))."
    )
    exp = _function(EXP, "exp(x). Raises :class:`DomainError` if the result overflows (x > 709.78).")
    log = _function(LOG, "The natural logarithm. Raises :class:`DomainError` for x <= 0.")
    sqrt = _function(SQRT, "The square root. Raises :class:`DomainError` for x < 0.")
    sin = _function(SIN, "sin(x), x in radians.")
    cos = _function(COS, "cos(x), x in radians.")

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

    # --- what a node does with its whole graph, in modules of its own --------------------------------
    backward = push.backward  # back-propagation from this node, the push form of section 6.5.6
    _backward = push.push_to_parents  # micrograd's one step: this node pushes into its parents
    __reduce__ = pickling.reduce_node  # pickled with its graph, as a flat list in topological order
    __deepcopy__ = pickling.deepcopy_node  # copied with its graph, iteratively
    _prev = property(lecture.parents_as_set)  # micrograd's names for the parents and the operation
    _op = property(lecture.symbol)


def _wrap(x: Any) -> Any:
    """A Value as is; a real number as a new constant leaf; anything else NotImplemented."""
    t = x.__class__
    if t is Value:
        return x
    if t is float or t is int or (isinstance(x, numbers.Real) and not isinstance(x, Value)):
        v = _new(Value)
        v.data = x if t is float else to_float(x, "a number in an expression")
        v.grad = 0.0
        v.op = None
        v._a = None
        v._b = None
        v._info = CONSTANT
        return v
    return NotImplemented


def _data(x: Any) -> Any:
    """What a comparison compares: a Value's ``.data``, a real number, or NotImplemented."""
    if x.__class__ is Value:
        return x.data
    if isinstance(x, numbers.Real):
        return x
    return NotImplemented


def as_value(x: Any) -> Value:
    """``x`` if it is a Value, else ``x`` wrapped as a constant leaf.

    Raises:
        TypeError: if x is neither a Value nor a real number.
    """
    v = _wrap(x)
    if v is NotImplemented:
        raise TypeError(f"expected a Value or a real number, got {typed_repr(x)}")
    return v  # type: ignore[no-any-return]


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
            raise DomainError(op, args, reason=NOT_FINITE)
    try:
        d = op.f(*[a.data for a in args])
    except (ArithmeticError, ValueError) as e:
        raise DomainError(op, args, reason=e) from None
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
