"""``+``, ``*``, relu and a neuron's weighted sum compiled from the operation table: the hot node builders.

Every node of G is built as :func:`micrograph.engine.apply` builds it: compute u = op.f(Pa(u)), check it,
link the node to its parents. An eager training step builds most of its nodes with ``+``, ``*`` and relu
(a neuron's b + w_1 x_1 + ... + w_n x_n and its activation, once per neuron and example), and ``apply``
costs each of them a tuple of the arguments, a loop over them and a call of ``op.f`` through the table.
This module writes those steps out as Python source for the three operations and compiles them once, at
import:

* :func:`node_source`: the statements that build the node ``out = op(*args)``, its value written out by
  the operation's code template (``ADD.code`` is ``"{0} + {1}"``), so that no formula is written here;
* :func:`operator`: ``Value.__add__`` and ``Value.__mul__``: a number wrapped as a constant leaf, then
  those statements; :func:`function`: ``Value.relu``;
* :func:`weighted_sum`: a neuron's pre-activation, each product and each sum built by those statements, so
  that no operator is dispatched per node.

The methods are compiled in the engine's globals, whose names their text uses (``Value``, ``_new``,
``_wrap``, ``DomainError``, ``NOT_FINITE``, the operations), as if written in the class. The text of each
function is registered with :mod:`linecache`, so that ``inspect.getsource``, tracebacks and debuggers show
the lines that run, and lesson 2 shows them. Tests hold the nodes equal to ``apply``'s, value, parents and
errors.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1 (computational graphs).
"""

from __future__ import annotations

import linecache
from collections.abc import Callable, Sequence
from operator import mul
from textwrap import indent
from typing import TYPE_CHECKING, Any

from micrograph.errors import DomainError
from micrograph.ops import ADD, MUL, RELU, Op

if TYPE_CHECKING:
    from micrograph.engine import Value

__all__ = ["METHODS", "function", "node_source", "operator", "weighted_sum"]

METHODS = {ADD: "__add__", MUL: "__mul__", RELU: "relu"}
"""The operations compiled here and the method of :class:`~micrograph.engine.Value` each is compiled as.
In the text an operation is named as the engine imports it, ``op.name.upper()`` (``ADD``)."""


def node_source(op: Op, args: Sequence[str], out: str) -> str:
    """The statements that build the node ``out = op(*args)`` from Values, as :func:`apply` builds it.

    The value ``d`` is ``op.code`` written out on the arguments' ``.data``. A sum or a product that is not
    finite, or a ReLU's argument that is not (``nan > 0.0`` is false, so its result would be 0.0), raises
    DomainError naming the operation and its arguments, and then no node is built.

    Args:
        op: ADD, MUL (two arguments) or RELU (one).
        args: the names of the parents in the text. out: the name of the new node.

    Returns:
        Python statements, one per line, not indented.

    Raises:
        KeyError: for an operation other than ADD, MUL and RELU.
    """
    _method(op, op.arity)
    name, code = op.name.upper(), str(op.code)  # these operations' code templates are set in the table
    a, b = (*args, "None")[:2]
    if op.arity == 2:
        check = f"""\
d = {code.format(f"{a}.data", f"{b}.data")}
if d - d != 0.0:
    raise DomainError({name}, ({a}, {b}), result=d)
"""
    else:
        check = f"""\
x = {a}.data
if x - x != 0.0:
    raise DomainError({name}, ({a},), reason=NOT_FINITE)
d = {code.format("x")}
"""
    return f"""{check}\
{out} = _new(Value)
{out}.data = d
{out}.grad = 0.0
{out}.op = {name}
{out}._a = {a}
{out}._b = {b}
{out}._info = None
"""


def operator(op: Op, namespace: dict[str, Any]) -> Callable[[Value, Any], Value]:
    """``Value.__add__`` or ``Value.__mul__``: ``self op other``, the node of :func:`node_source`.

    A real number ``other`` is wrapped as a constant leaf (``_wrap``); anything else gives NotImplemented,
    so that Python tries the other operand.

    Args:
        op: ADD or MUL.
        namespace: the globals of the node's module (:mod:`micrograph.engine`), whose names the text uses.

    Raises:
        KeyError: for an operation other than ADD and MUL.
    """
    method = _method(op, 2)
    text = f"""\
def {method}(self, other):
    if other.__class__ is not Value:
        other = _wrap(other)
        if other is NotImplemented:
            return NotImplemented
{indent(node_source(op, ("self", "other"), "out"), " " * 4)}\
    return out
"""
    return _compiled(text, method, f"Value.{method}", namespace)  # type: ignore[no-any-return]


def function(op: Op, namespace: dict[str, Any], doc: str) -> Callable[[Value], Value]:
    """``Value.relu``: ``op(self)``, the node of :func:`node_source`, with the docstring ``doc``.

    Args:
        op: RELU.
        namespace: the globals of the node's module (:mod:`micrograph.engine`), whose names the text uses.
        doc: the method's docstring.

    Raises:
        KeyError: for an operation other than RELU.
    """
    method = _method(op, 1)
    text = f"""\
def {method}(self):
{indent(node_source(op, ("self",), "out"), " " * 4)}\
    return out
"""
    compiled = _compiled(text, method, f"Value.{method}", namespace)
    compiled.__doc__ = doc
    return compiled  # type: ignore[no-any-return]


def weighted_sum(value: type[Value]) -> Callable[[Value, Sequence[Value], Sequence[Any]], Value]:
    """A neuron's pre-activation b + w_1 x_1 + ... + w_n x_n, with the nodes that ``+`` and ``*`` build.

    The sum is micrograd's ``sum(map(mul, w, x), b)``, node for node: each product then each partial sum,
    built by :func:`node_source`'s statements where both factors are Values; a number (wrapped as a
    constant leaf), a weight set to a number, or a bias set to one go through the operators.

    Args:
        value: the node's class, :class:`~micrograph.engine.Value`.

    Returns:
        ``weighted_sum(b, w, x)``: b the bias, w the weights, x as many Values or real numbers. It raises
        DomainError for a product or a sum that is not finite and TypeError for an element of x that is
        not a number, as ``*`` and ``+`` raise them.
    """
    text = f"""\
def weighted_sum(b, w, x):
    if b.__class__ is not Value:  # a bias set to a number: the operators
        return sum(map(mul, w, x), b)
    total = b
    for wi, xi in zip(w, x):
        if xi.__class__ is Value is wi.__class__:
{indent(node_source(MUL, ("wi", "xi"), "t"), " " * 12)}\
        else:  # a number (wrapped as a constant leaf), or a weight set to one: the operators
            total = total + wi * xi
            continue
{indent(node_source(ADD, ("total", "t"), "out"), " " * 8)}\
        total = out
    return total
"""
    namespace = {
        "__name__": __name__, "Value": value, "_new": object.__new__, "DomainError": DomainError, "ADD": ADD,
        "MUL": MUL, "mul": mul,
    }  # fmt: skip
    compiled = _compiled(text, "weighted_sum", "weighted_sum", namespace)
    compiled.__doc__ = weighted_sum.__doc__
    return compiled  # type: ignore[no-any-return]


def _method(op: Op, arity: int) -> str:
    """The name of the method that ``op`` of ``arity`` arguments is compiled as; KeyError for another."""
    if op not in METHODS or op.arity != arity:
        raise KeyError(f"micrograph.compile_nodes compiles no method of {arity} arguments for {op.name}")
    return METHODS[op]


def _compiled(text: str, name: str, qualname: str, namespace: dict[str, Any]) -> Any:
    """The function ``name`` that ``text`` defines, with ``namespace`` as its globals, its qualified name
    ``qualname``, and its text in :mod:`linecache` under the file name ``<qualname, compiled by
    micrograph/compile_nodes.py>``, which ``inspect`` and tracebacks read."""
    filename = f"<{qualname}, compiled by micrograph/compile_nodes.py>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    defined: dict[str, Any] = {}
    exec(compile(text, filename, "exec"), namespace, defined)  # text from the table's own code templates
    function = defined[name]
    function.__qualname__ = qualname
    return function
