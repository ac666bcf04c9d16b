"""What a student's solution may call: the operation table's rules, counted.

The exercises ask the student to write the book's algorithms, not the derivative of every operation: a
local derivative du(i)/du(j) comes from micrograph's operation table (``Op.local_derivative``), the one
place derivative rules are written. These two functions call it and count the calls, so the checker can
compare the number of evaluations with the book's (one per edge for Algorithm 6.2, the closed forms of
figure 6.9 for the naive chain rule of equation 6.53).

* :func:`local_derivative` ``(node, k, args=None, out=None)``: du/dx_k for the operation that computes
  ``node``, at ``args`` and ``out`` (by default the values stored in the graph);
* :func:`evaluate` ``(node, args)``: f(args), the operation that computes ``node`` applied to numbers.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 and 6.5.6 (``op.bprop``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from micrograph.engine import Value

__all__ = ["local_derivative", "evaluate", "reset_counts", "counts", "calls", "NAN_READ"]

NAN_READ = "a value is nan"
"""The words of the error for a nan given to a tool, which the naive exercise's judge names as a stored value
read (there the nodes that are not leaves hold nan)."""

_counts = {"local_derivatives": 0, "evaluations": 0}
_calls: list[tuple[Value, int]] = []
_RECORD_LIMIT = 100_000  # the checker reads the order of the first calls; a long run keeps counting only


def reset_counts() -> None:
    """Set both counters to zero and forget the calls (the checker does this before each case)."""
    _counts["local_derivatives"] = 0
    _counts["evaluations"] = 0
    _calls.clear()


def counts() -> dict[str, int]:
    """``{"local_derivatives": ..., "evaluations": ...}`` since the last :func:`reset_counts`."""
    return dict(_counts)


def calls() -> list[tuple[Value, int]]:
    """The (node, k) of each :func:`local_derivative` call in order (the first 100,000)."""
    return list(_calls)


def _operation(node: Any, where: str) -> Any:
    if not isinstance(node, Value):
        raise TypeError(
            f"{where}: node must be a Value (a node u(i) of the graph), got {type(node).__name__}"
        )
    if node.op is None:
        raise ValueError(f"{where}: {node!r} is an input (a leaf): no operation computes it")
    return node.op


def local_derivative(
    node: Value, k: int, args: Sequence[float] | None = None, out: float | None = None
) -> float:
    """du/dx_k: the derivative of ``node``'s operation with respect to its argument number k (0-based).

    Args:
        node: u(i), a node computed by an operation (not a leaf).
        k: the argument position, 0 for the first parent, 1 for the second (``a * a`` has k = 0 and 1).
        args: the values of the arguments x_0, x_1; by default those stored in the parents (``.data``).
        out: the value of u(i) itself; by default ``node.data``. Some rules use it (tanh' = 1 - out²).

    Returns:
        The local derivative, a float.

    Raises:
        TypeError: ``node`` is not a Value. ValueError: ``node`` is a leaf, k is not an argument position, or
            a value is nan (a stored value read where the exercise recomputes them).
        DomainError: the derivative does not exist at these values (sqrt at 0 ...).

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.2
    (the factor ∂u(i)/∂u(j) of each term).
    """
    op = _operation(node, "local_derivative(node, k)")
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < len(node.inputs):
        raise ValueError(
            f"local_derivative(node, k): {node!r} ({op.name}) has {len(node.inputs)} argument(s), "
            f"so k is 0{' or 1' if len(node.inputs) == 2 else ''}; got k={k!r}"
        )
    values = tuple(p.data for p in node.inputs) if args is None else tuple(float(a) for a in args)
    value = node.data if out is None else float(out)
    _no_nan((*values, value), f"local_derivative(node, k) for {node!r}")
    _counts["local_derivatives"] += 1
    if len(_calls) < _RECORD_LIMIT:
        _calls.append((node, k))
    return float(op.local_derivative(k, values, value))


def evaluate(node: Value, args: Sequence[float]) -> float:
    """f(args): the operation that computes ``node`` applied to the numbers ``args`` (counted).

    Equation 6.53 recomputes every subexpression; this is how a solution recomputes one node from its
    arguments' values.

    Args:
        node: u(i), a node computed by an operation.
        args: the values of its arguments, in argument order.

    Returns:
        The operation's value, a float.

    Raises:
        TypeError, ValueError: as :func:`local_derivative` (an argument that is nan too). DomainError: outside
        the operation's domain.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.2, equation 6.53.
    """
    op = _operation(node, "evaluate(node, args)")
    values = tuple(float(a) for a in args)
    if len(values) != len(node.inputs):
        raise ValueError(
            f"evaluate(node, args): {op.name} takes {len(node.inputs)} argument(s), got {len(values)}"
        )
    _no_nan(values, f"evaluate(node, args) for {node!r}")
    _counts["evaluations"] += 1
    return float(op(*values))


def _no_nan(values: Sequence[float], where: str) -> None:
    """Refuse nan: where an exercise recomputes values (the naive chain rule), the nodes that are not leaves
    hold nan in place of a stored value, so a nan here is a stored value read."""
    if any(x != x for x in values):
        raise ValueError(
            f"{where}: {NAN_READ}, the value a node that is not a leaf holds where the exercise recomputes "
            "values: recompute it from the leaves (tools.evaluate) and give args and out"
        )
