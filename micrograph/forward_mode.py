"""Forward mode: Jacobian-vector products from the same operation table (section 6.5.9).

Back-propagation (reverse mode) multiplies the local derivatives from the output back to the inputs.
Forward mode multiplies them the other way: every node u carries, next to its value, its tangent
u' = sum_k du/dx_k * x_k' (a dual number u + u' epsilon), starting from a direction v on the inputs. One
forward pass gives J v for every output at once; n passes (v = e_1 .. e_n) give the whole Jacobian of
f: R^n -> R^m, against m passes of back-propagation (one per output). The local derivatives du/dx_k are
the operation table's rules (:meth:`micrograph.ops.Op.local_derivative`), the same ones Algorithm 6.2
evaluates: no derivative formula is written here.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.9 (forward mode), 6.5.10.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from micrograph.engine import Value
from micrograph.errors import DomainError, to_float, typed_repr
from micrograph.graph import Graph, as_values
from micrograph.order import topological_order

__all__ = ["JVP", "jvp", "jacobian_forward", "jacobian_reverse"]


@dataclass(frozen=True)
class JVP:
    """The result of one forward-mode pass.

    Attributes:
        values: the outputs' values f(x), in the order given.
        tangents: J v, one number per output.
        evaluations: how many local derivatives du/dx_k the pass evaluated: one per edge of the graph
            below the outputs whose tail depends on the inputs (edges with a zero tangent are skipped).
    """

    values: tuple[float, ...]
    tangents: tuple[float, ...]
    evaluations: int


def _direction(v: Any, n: int) -> list[float]:
    """The direction v as n finite floats: one real number (for one input) or a sequence of n of them.

    Raises:
        TypeError: v is neither a real number nor a sequence, or a component is not a real number (a bool,
            None, a Decimal, a string).
        ValueError: v has another length than n, or a component is not finite (nan, inf).
    """
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        vs = [v]
    elif isinstance(v, (str, bytes, bool)) or not isinstance(v, Iterable):
        raise TypeError(
            f"jvp: v must be a real number (one input) or a sequence of them, one per input; got "
            f"{typed_repr(v)}"
        )
    else:
        try:
            vs = list(v)
        except TypeError:  # a 0-d NumPy array
            raise TypeError(
                f"jvp: v must be a real number or a sequence of them, got {typed_repr(v)}"
            ) from None
    if len(vs) != n:
        raise ValueError(f"jvp: v has {len(vs)} components but inputs has {n} nodes")
    out = []
    for k, vk in enumerate(vs):
        if isinstance(vk, bool) or not isinstance(vk, numbers.Real):
            raise TypeError(f"jvp: v[{k}] must be a real number, got {typed_repr(vk)}")
        x = to_float(vk, f"jvp: v[{k}]")
        if not math.isfinite(x):
            raise ValueError(f"jvp: v[{k}] must be finite, got {x!r}")
        out.append(x)
    return out


def _as_list(x: Value | Sequence[Value], what: str, where: str = "jvp") -> list[Value]:
    return as_values(x, where, what)


def jvp(outputs: Value | Sequence[Value], inputs: Value | Sequence[Value], v: float | Sequence[float]) -> JVP:
    """J v by forward mode: every node's tangent from its parents', with the table's local derivatives.

    Args:
        outputs: the output node(s) f_1..f_m of the graph.
        inputs: the nodes x_1..x_n the Jacobian is taken with respect to (usually leaves).
        v: the direction, one number per input (a single number for a single input).

    Returns:
        A :class:`JVP` with the outputs' values, J v and the number of local derivatives evaluated.

    Raises:
        TypeError: an output or input that is not a Value; v, or a component of it, that is not a real
            number (a bool, None, a Decimal, a string).
        ValueError: empty outputs or inputs; v with another length than inputs; a component of v that is
            not finite.
        DomainError: a local derivative that does not exist at the current values (``log'`` at 0 ...), or
            a tangent that is not finite (it overflowed), as :meth:`Value.backward` refuses a gradient.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.9.
    """
    outs = _as_list(outputs, "outputs")
    ins = _as_list(inputs, "inputs")
    tangent: dict[Value, float] = {}
    for x, vk in zip(ins, _direction(v, len(ins))):
        tangent[x] = tangent.get(x, 0.0) + vk
    evaluations = 0
    for u in topological_order(outs):
        # an input keeps its direction v; other leaves are constants: tangent 0
        if u in tangent or u.op is None:
            continue
        args = tuple(p.data for p in u.inputs)
        total = 0.0
        seen_any = False
        for k, p in enumerate(u.inputs):
            tp = tangent.get(p)
            if tp is None:
                continue
            try:
                # the table's rule, as Algorithm 6.2 calls it
                d = u.op.local_derivative(k, args, u.data)
            except (ArithmeticError, ValueError) as e:
                reason = f"its derivative in argument {k + 1}: {e}"
                raise DomainError(u.op, list(args), reason=reason) from None
            evaluations += 1
            total += d * tp
            seen_any = True
        if seen_any:
            # refused, as Value.backward refuses a gradient that is not finite
            if not math.isfinite(total):
                raise _overflowed(u, args, total)
            tangent[u] = total
    return JVP(tuple(o.data for o in outs), tuple(tangent.get(o, 0.0) for o in outs), evaluations)


def _overflowed(u: Value, args: tuple[float, ...], total: float) -> DomainError:
    """The error for a tangent that is not finite: the node, its arguments and the tangent."""
    shown = ", ".join(repr(a) for a in args)
    return DomainError(
        u.op, list(args),
        message=f"jvp: the tangent of the node {u.op.name}({shown}) is not finite ({total!r}): "
        "the product of its local derivatives and the direction overflowed",
    )  # fmt: skip


def jacobian_forward(outputs: Sequence[Value], inputs: Sequence[Value]) -> tuple[list[list[float]], int]:
    """The m x n Jacobian by n forward-mode passes, v = e_1 .. e_n (column j is J e_j).

    Returns:
        ``(J, evaluations)``: J as a list of m rows, and the local derivatives evaluated in all n passes.

    Raises:
        As :func:`jvp`.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.9.
    """
    ins = _as_list(inputs, "inputs", "jacobian_forward")
    outs = _as_list(outputs, "outputs", "jacobian_forward")
    J = [[0.0] * len(ins) for _ in outs]
    evaluations = 0
    for j in range(len(ins)):
        r = jvp(outs, ins, [1.0 if k == j else 0.0 for k in range(len(ins))])
        evaluations += r.evaluations
        for i, t in enumerate(r.tangents):
            J[i][j] = t
    return J, evaluations


def jacobian_reverse(outputs: Sequence[Value], inputs: Sequence[Value]) -> tuple[list[list[float]], int]:
    """The m x n Jacobian by m passes of back-propagation (Algorithm 6.2), one per output (row i).

    Returns:
        ``(J, evaluations)``: J as a list of m rows, and the local derivatives evaluated in all m passes
        (each pass evaluates one per edge of that output's graph).

    Raises:
        As :func:`jvp`; DomainError as :meth:`Graph.backprop`.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 and 6.5.9.
    """
    ins = _as_list(inputs, "inputs", "jacobian_reverse")
    outs = _as_list(outputs, "outputs", "jacobian_reverse")
    J: list[list[float]] = []
    evaluations = 0
    for o in outs:
        table = Graph(o).backprop()  # Algorithm 6.2
        evaluations += table.evaluations
        J.append([table.get(x, 0.0) for x in ins])
    return J, evaluations
