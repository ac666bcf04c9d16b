"""micrograd's lecture surface on the node: a node built by hand, and micrograd's names for its fields.

Karpathy's lecture builds nodes by hand (``Value(5.0, (a, b), '+')``) and draws graphs with a ``trace``
that reads ``v._prev`` (the parents, as a set) and ``v._op`` (the operation's symbol). These are the
node's micrograd names for what micrograph keeps as ``inputs`` and ``op``: a node built by hand is built by
the operation of the table micrograd's symbol names, so it can be back-propagated, drawn and
differentiated again like any other. (``backward`` and ``_backward`` are :mod:`micrograph.push`'s.)

The functions read the node's fields only: this module sits below the node's class, which takes them as
its constructor's by-hand form and its properties ``_prev`` and ``_op``.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1; Karpathy, micrograd.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from micrograph.errors import is_node
from micrograph.ops import ADD, EXP, MUL, RELU, TANH, Op, pow_const

if TYPE_CHECKING:
    from micrograph.engine import Value

__all__ = ["LECTURE_OPS", "by_hand", "parents_as_set", "symbol"]

LECTURE_OPS = {"+": ADD, "*": MUL, "tanh": TANH, "exp": EXP, "ReLU": RELU, "relu": RELU}
"""micrograd's operation symbols (its ``_op``) and the operations of the table they name."""


def by_hand(data: float, children: Any, symbol: Any) -> Value:
    """The node ``Value(data, children, symbol)`` of micrograd's lecture, built by the table's operation.

    Raises:
        TypeError: ``children`` is not a tuple (or list) of Values.
        ValueError: ``symbol`` is not one of micrograd's operations, does not take that many children, or
            ``data`` is not the value the operation gives on the children (the message says what to write).
    """
    where = f"Value({data!r}, {children!r}, {symbol!r})"
    if not isinstance(children, (tuple, list)) or not all(is_node(c) for c in children):
        raise TypeError(f"{where}: the children must be a tuple of Values, such as (a, b)")
    op: Op | None
    if isinstance(symbol, str) and symbol.startswith("**"):
        try:
            op = pow_const(float(symbol[2:]))
        except ValueError:
            op = None
    else:
        op = LECTURE_OPS.get(symbol) if isinstance(symbol, str) else None
    instead = "write the operation itself: a + b, a * b, a.tanh(), a.exp(), a.relu() or a**2"
    if op is None or op.arity != len(children):
        raise ValueError(
            f"{where}: micrograph builds a node by its operation ({', '.join(LECTURE_OPS)} or **c, with one "
            f"parent per argument); {instead}"
        )
    node: Value = op(*children)  # an operation called on Values builds the node
    if not math.isclose(node.data, data, rel_tol=1e-9, abs_tol=1e-12):
        raise ValueError(f"{where}: {symbol} of the children is {node.data!r}, not {data!r}; {instead}")
    return node


def parents_as_set(u: Value) -> set[Value]:
    """micrograd's name for the node's parents, as a set (read-only), for the lecture's ``trace``."""
    return set(u.inputs)


_SYMBOLS = {ADD: "+", MUL: "*", TANH: "tanh", EXP: "exp", RELU: "ReLU"}
"""micrograd's symbol of each of its operations, as its ``_op`` reads (``Value(d, (a, b), c._op)`` works)."""


def symbol(u: Value) -> str:
    """micrograd's name for the operation's symbol (read-only): ``"*"``, ``"**2"`` as micrograd writes
    them, the table's symbol for an operation micrograd has not (``"−"``, ``"sin"``); ``""`` for a leaf."""
    op = u.op
    if op is None:
        return ""
    if op.name == "pow" and op.param is not None:  # x ** c, the table's "^2": micrograd's f'**{other}'
        return "**" + str(op.symbol).removeprefix("^")
    return _SYMBOLS.get(op, str(op.symbol))
