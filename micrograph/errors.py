"""The errors micrograph raises: a value outside an operation's domain, a number that is not real."""

from __future__ import annotations

import math
import numbers
import reprlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from micrograph.ops import Op

__all__ = [
    "DomainError", "NOT_FINITE", "NO_FLOAT", "check_graph", "describe", "is_node", "overflowed", "to_float",
]  # fmt: skip

NOT_FINITE = "an argument is not finite (operations take finite numbers only)"
"""The reason a DomainError gives when an operation meets inf or nan: leaves may hold them, operations not."""

NO_FLOAT = "no finite float holds it"
"""What every message adds where a value exists but overflows (a DomainError's ``overflows``)."""


def overflowed(e: BaseException) -> bool:
    """Whether an operation's or a rule's failure is an overflow (the value exists, no float holds it),
    not a value that does not exist: ``OverflowError``, or a :class:`DomainError` that says so."""
    return isinstance(e, OverflowError) or bool(getattr(e, "overflows", False))


def is_node(x: Any) -> bool:
    """True for a node of a graph (a :class:`~micrograph.engine.Value` or a stand-in with its fields).

    The errors are the engine's lowest layer, below the node class, so a node is recognised by its fields
    (``data``, ``op``, ``inputs``) rather than by its class.
    """
    return hasattr(x, "data") and hasattr(x, "op") and hasattr(x, "inputs")


_SHORT = reprlib.Repr()  # a wrong argument as a message shows it: a node whole, a long list or text cut short
_SHORT.maxother, _SHORT.maxstring, _SHORT.maxlist, _SHORT.maxtuple = 200, 60, 3, 3
_SHORT.maxdict = _SHORT.maxset = _SHORT.maxfrozenset = _SHORT.maxdeque = _SHORT.maxarray = 3


def short_repr(x: Any) -> str:
    """A value as a message shows it: its repr, cut short (a list as its first 3 items, a string of a million
    characters as its first 60), so that the message stays one short line."""
    return _SHORT.repr(x)


def typed_repr(x: Any) -> str:
    """What a message says a wrong argument was: its type and :func:`short_repr` (``list [Value(data=2.0,
    grad=0.0), ...]``)."""
    return f"{type(x).__name__} {short_repr(x)}"


def check_graph(graph: Any, where: str) -> None:
    """Refuse anything but a Graph G, naming ``where``: the output z itself is the usual mistake.

    A Graph is recognised by its fields (``nodes``, ``n_inputs``, ``program``), as :func:`is_node`
    recognises a node, since this layer lies below the Graph class.

    Raises:
        TypeError: ``graph`` is not a Graph (the message shows how to make one: ``Graph(z)``).
    """
    if not (hasattr(graph, "nodes") and hasattr(graph, "n_inputs") and hasattr(graph, "program")):
        raise TypeError(f"{where} takes a Graph (e.g. Graph(z)), got {typed_repr(graph)}")


def describe(node: Any, name: str | None = None) -> str:
    """A short description of a node for error messages: its kind, label, and book name if known.

    Examples: ``"leaf 'x'"``, ``"constant"``, ``"tanh node 'h'"``, ``"u5 (sub node)"``.

    Args:
        node: a :class:`~micrograph.engine.Value` or a plain number.
        name: the node's book name in a graph (``"u5"``), if known.
    """
    if not is_node(node):
        return f"the number {node!r}"
    kind = "constant" if node.is_constant else ("leaf" if node.op is None else f"{node.op.name} node")
    text = kind + (f" {node.label!r}" if node.label else "")
    return f"{name} ({text})" if name else text


def to_float(x: Any, where: str) -> float:
    """A real number (int, float, NumPy scalar, Fraction ...) as a float, or a message naming ``where``.

    Raises:
        TypeError: x is not a real number (None, a string, an array, a complex number, a Value).
        ValueError: x is too large for a float (10**400).
    """
    if isinstance(x, numbers.Real):
        try:
            return float(x)
        except OverflowError:
            raise ValueError(
                f"{where}: {_shown(x)} is too large for a float (at most about 1.8e308)"
            ) from None
        except (TypeError, ValueError):
            pass
    raise TypeError(f"{where} takes a real number (int, float or NumPy scalar), got {typed_repr(x)}")


def _shown(x: Any) -> str:
    """A number for a message, shortened if its text is long (an int of 400 digits)."""
    text = repr(x)
    return text if len(text) <= 40 else f"{text[:12]}...{text[-6:]} ({len(text)} digits)"


class _NotFinite(OverflowError):
    """Raised inside Algorithms 6.1 and 6.2 when a value, a term or a sum is inf or nan.

    Private to the engine's loops: they catch it with the arithmetic errors of the operations and turn it
    into a :class:`DomainError` that names the node; the class, not the text, says what happened.
    """

    def __init__(self) -> None:
        super().__init__("not finite")


_GENERIC_REASONS = {"", "math domain error", "math range error", "float division by zero", "not finite"}


class DomainError(ValueError):
    """An operation was applied outside its domain, or its result was not finite.

    Raised when a node is built (nothing is added to the graph), by Algorithm 6.1 when a graph is
    re-evaluated (no node's value is changed), and by Algorithm 6.2 when a local derivative does not exist.

    Attributes:
        op: the :class:`~micrograph.ops.Op` that failed.
        values: the input values (floats), in argument order.
        nodes: the input nodes (Values), or None when the operation was applied to plain numbers.
        result: the non-finite result, when that was the problem; else None.
        overflows: True where the value exists but no finite float holds it (an infinite result, or
            ``OverflowError``: ``exp(710.0)``, ``1e200 ** 2``), False where it does not exist.

    Args:
        op: the operation; args: its inputs (Values or numbers), in argument order.
        reason: what the numeric function said, added when it tells more than the domain does: its text, or
            the exception it raised (an ``OverflowError`` means the value exists but overflows).
        result: the non-finite result, when that was the problem.
        overflows: the value exists, too large for a float (as a ``reason`` that is an ``OverflowError``).
        where: where it happened (``"Algorithm 6.1 at u5"``), put in front of the message.
        names: the inputs' book names (``"u3"``), for the message.
        message: a whole message that replaces the standard one (the inputs are still listed).
    """

    def __init__(
        self,
        op: Op,
        args: Sequence[Any],
        *,
        reason: str | BaseException | None = None,
        result: float | None = None,
        overflows: bool = False,
        where: str | None = None,
        names: Sequence[str | None] | None = None,
        message: str | None = None,
    ) -> None:
        self.op = op
        self.nodes: tuple[Any, ...] | None = tuple(args) if any(is_node(a) for a in args) else None
        self.values = tuple(a.data if is_node(a) else a for a in args)
        self.result = result
        if isinstance(reason, BaseException):
            overflows = overflows or (result is None and isinstance(reason, OverflowError))
            reason = str(reason)
        self.overflows = overflows or (result is not None and math.isinf(result))
        shown = ", ".join(repr(float(v)) for v in self.values)
        if op.param is not None:  # x ** c: show the constant exponent as a second argument
            shown += f", {op.param!r}"
        call = f"{op.name}({shown})"
        if result is not None:
            msg = f"{call} = {result!r} is not finite"
        elif overflows:
            msg = f"{call} overflows: {NO_FLOAT}"
        else:
            msg = f"{call} is outside the domain of {op.name} ({op.domain})"
            if reason and reason not in _GENERIC_REASONS and reason not in op.domain:
                msg += f": {reason}"
        if message:
            msg = message
        elif where:
            msg = f"{where}: {msg}"
        if self.nodes is not None:
            names = names or [None] * len(self.nodes)
            msg += "; inputs: " + ", ".join(describe(n, nm) for n, nm in zip(self.nodes, names))
        super().__init__(msg)
