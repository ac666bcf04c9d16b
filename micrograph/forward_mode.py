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

from collections.abc import Sequence
from dataclasses import dataclass

from micrograph.engine import Value, as_values, topological_order
from micrograph.errors import DomainError
from micrograph.graph import Graph

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


def _as_list(x: Value | Sequence[Value], what: str) -> list[Value]:
    return as_values(x, "jvp", what)


def jvp(outputs: Value | Sequence[Value], inputs: Value | Sequence[Value], v: float | Sequence[float]) -> JVP:
    """J v by forward mode: every node's tangent from its parents', with the table's local derivatives.

    Args:
        outputs: the output node(s) f_1..f_m of the graph.
        inputs: the nodes x_1..x_n the Jacobian is taken with respect to (usually leaves).
        v: the direction, one number per input (a single number for a single input).

    Returns:
        A :class:`JVP` with the outputs' values, J v and the number of local derivatives evaluated.

    Raises:
        TypeError: an output or input that is not a Value; a component of v that is not a real number.
        ValueError: empty outputs or inputs; v with another length than inputs.
        DomainError: a local derivative that does not exist at the current values (``log'`` at 0 ...).

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.9.
    """
    outs = _as_list(outputs, "outputs")
    ins = _as_list(inputs, "inputs")
    vs = [v] if isinstance(v, (int, float)) and not isinstance(v, bool) else list(v)  # type: ignore[arg-type]
    if len(vs) != len(ins):
        raise ValueError(f"jvp: v has {len(vs)} components but inputs has {len(ins)} nodes")
    tangent: dict[Value, float] = {}
    for k, (x, vk) in enumerate(zip(ins, vs)):
        if isinstance(vk, bool) or not isinstance(vk, (int, float)):
            raise TypeError(f"jvp: v[{k}] must be a real number, got {type(vk).__name__} {vk!r}")
        tangent[x] = tangent.get(x, 0.0) + float(vk)
    evaluations = 0
    for u in topological_order(outs):
        if u in tangent or u.op is None:
            continue  # an input keeps its direction v; any other leaf is a constant (tangent 0)
        args = tuple(p.data for p in u.inputs)
        total = 0.0
        seen_any = False
        for k, p in enumerate(u.inputs):
            tp = tangent.get(p)
            if tp is None:
                continue
            try:
                d = u.op.local_derivative(k, args, u.data)  # the table's rule, as Algorithm 6.2 calls it
            except (ArithmeticError, ValueError) as e:
                reason = f"its derivative in argument {k + 1}: {e}"
                raise DomainError(u.op, list(args), reason=reason) from None
            evaluations += 1
            total += d * tp
            seen_any = True
        if seen_any:
            tangent[u] = total
    return JVP(tuple(o.data for o in outs), tuple(tangent.get(o, 0.0) for o in outs), evaluations)


def jacobian_forward(outputs: Sequence[Value], inputs: Sequence[Value]) -> tuple[list[list[float]], int]:
    """The m x n Jacobian by n forward-mode passes, v = e_1 .. e_n (column j is J e_j).

    Returns:
        ``(J, evaluations)``: J as a list of m rows, and the local derivatives evaluated in all n passes.

    Raises:
        As :func:`jvp`.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.9.
    """
    ins = _as_list(list(inputs), "inputs")
    outs = _as_list(list(outputs), "outputs")
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
    ins = _as_list(list(inputs), "inputs")
    outs = _as_list(list(outputs), "outputs")
    J: list[list[float]] = []
    evaluations = 0
    for o in outs:
        table = Graph(o).backprop()  # Algorithm 6.2
        evaluations += table.evaluations
        J.append([table.get(x, 0.0) for x in ins])
    return J, evaluations
