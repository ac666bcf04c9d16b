"""The frames of Algorithms 6.1 and 6.2: one model of a step for every view that shows one.

The step-through page (:mod:`viz.steps`), the explorer (:mod:`viz.explore`), the animation
(:mod:`viz.animate`) and the lessons show these frames; their words are :mod:`viz.narration`'s.

Every frame observes the engine's own algorithms as they run: :func:`micrograph.forward.evaluate`
(Algorithm 6.1) reports each u(i) it computes and :func:`micrograph.backprop.run_algorithm_6_2`
(Algorithm 6.2) reports each iteration j with the terms of its sum. Nothing here computes a value,
builds a node of the graph or knows a derivative. The frame's local-derivative formula
(``∂u4/∂u3 = 1 − u4 × u4``) is that same rule called on placeholder nodes named after the arguments, so it
shows what the rule computes, not a second table of derivatives. The frames of Algorithms 6.5 and 6.6 are
:mod:`viz.symbolic_frames`'.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithms 6.1 and 6.2.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from micrograph import pseudocode
from micrograph.backprop import BackpropStep, run_algorithm_6_2
from micrograph.engine import Value
from micrograph.forward import evaluate, input_values
from micrograph.graph import Graph
from viz.narration import Numbers, frame_text
from viz.words import formula, node_names

__all__ = ["frames", "observe", "Observed", "Frame", "ALGORITHM_6_1", "ALGORITHM_6_2", "derivative_formula"]

ALGORITHM_6_1 = list(pseudocode.ALGORITHM_6_1.lines)
"""Algorithm 6.1 (forward propagation), line by line as the book prints it (from micrograph.pseudocode)."""

ALGORITHM_6_2 = list(pseudocode.ALGORITHM_6_2.lines)
"""Algorithm 6.2 (back-propagation, simplified), line by line as the book prints it (from pseudocode)."""


@dataclass
class Frame:
    """One step of Algorithm 6.1 or 6.2.

    Attributes:
        algorithm: ``"6.1"`` or ``"6.2"``.
        lines: the pseudo-code lines being executed (0-based indices into ALGORITHM_6_1 / ALGORITHM_6_2).
        node: the position of the node being computed (u(node + 1)), or None.
        values: u(i) known so far, one per node (None: not computed yet).
        grads: grad_table so far, one per node (None: not filled yet); all None during Algorithm 6.1.
        explanation: what happens, in words and numbers (plain text).
        terms: for a step of Algorithm 6.2, one (i, k, grad_table[u(i)], du(i)/du(j), formula) per edge.
    """

    algorithm: str
    lines: tuple[int, ...]
    node: int | None
    values: list[float | None]
    grads: list[float | None]
    explanation: str
    terms: list[tuple[int, int, float, float, str]] = field(default_factory=list)


def derivative_formula(node: Value, k: int, names: Mapping[Value, str]) -> str:
    """The local derivative ∂u(i)/∂(argument k) as the operation's rule writes it, e.g. ``1 − u4 × u4``.

    The rule ``node.op.derivs[k]`` is called on placeholder leaves named after the node's arguments and
    output (carrying their values, so the rule's domain checks pass); the nodes it builds are written
    out as an expression. Returns ``""`` if the rule cannot be shown this way.
    """
    op = node.op
    if op is None:
        return ""
    args = [Value(p.data, label=names.get(p, "?")) for p in node.inputs]
    out = Value(node.data, label=names.get(node, "?"))
    try:
        d = op.derivs[k](*args, out)
    except (ArithmeticError, ValueError, TypeError):
        return ""
    if not isinstance(d, Value):
        return _short(float(d))
    return _expression(d)


def _short(x: float) -> str:
    return f"{x:g}"


def _expression(root: Value) -> str:
    """Infix text of a small expression tree whose leaves are labelled placeholders or constants.

    Iterative (post-order with an explicit stack); a binary argument that is itself binary is bracketed.
    """
    text: dict[Value, str] = {}
    stack: list[tuple[Value, bool]] = [(root, False)]
    while stack:
        v, ready = stack.pop()
        if v in text:
            continue
        if v.op is None:
            text[v] = v.label if v.label else _short(v.data)
            continue
        if not ready:
            stack.append((v, True))
            stack.extend((p, False) for p in v.inputs)
            continue
        shown = {p: (f"({text[p]})" if p.op is not None and p.op.arity == 2 else text[p]) for p in v.inputs}
        text[v] = formula(v, shown)
    return text[root]


@dataclass
class Observed:
    """Algorithms 6.1 and 6.2 as the engine ran them once on a graph: the frames and the numbers reported.

    Attributes:
        frames: one :class:`Frame` per step (see :func:`observe`), their ``explanation`` not yet written.
        values: u(i) for every node, as Algorithm 6.1 computed them.
        grads: grad_table[u(i)] for every node, as Algorithm 6.2 filled it.
        derivatives: {(i, k): ∂u(i)/∂(argument k of u(i))} for every edge, as Algorithm 6.2 evaluated them.
    """

    frames: list[Frame]
    values: list[float]
    grads: list[float | None]
    derivatives: dict[tuple[int, int], float]


def observe(graph: Graph) -> Observed:
    """The frames of Algorithm 6.1 then Algorithm 6.2 on ``graph``, the engine's own loops watched once.

    Algorithm 6.1: one frame per input u(1)..u(n_i) (line 2), one per computed node u(i) (lines 5-6),
    one for ``return u(n)``. Algorithm 6.2: one frame for ``grad_table[u(n)] ← 1``, one per loop
    iteration j = n-1 down to 1 (line 7, the node u(j) and its terms), one for the return. No text is
    written here: a view writes each frame's once, with :func:`viz.narration.frame_text`, its numbers
    formatted (:func:`frames`) or left as holes for a page to fill (the explorer).

    Raises:
        DomainError: an operation or a local derivative is undefined at the graph's values.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithms 6.1, 6.2.
    """
    nodes = graph.nodes
    n, n_i = len(nodes), graph.n_inputs
    names = node_names(graph)
    out: list[Frame] = []

    # --- Algorithm 6.1 -------------------------------------------------------------------------
    x = input_values(graph, None)  # the inputs x_i are the leaves' current values
    u: list[float | None] = [None] * n
    for i in range(n_i):  # for i = 1, ..., n_i: u(i) <- x_i
        u[i] = x[i]
        out.append(Frame("6.1", (0, 1), i, list(u), [None] * n, ""))

    def forward_step(i: int, value: float) -> None:  # observes Algorithm 6.1: u(i) <- f(i)(A(i))
        u[i] = value
        out.append(Frame("6.1", (4, 5), i, list(u), [None] * n, ""))

    values = evaluate(graph, observe=forward_step)  # the engine's Algorithm 6.1, watched
    out.append(Frame("6.1", (7,), n - 1, list(u), [None] * n, ""))

    # --- Algorithm 6.2 -------------------------------------------------------------------------
    table: list[float | None] = [None] * n
    table[n - 1] = 1.0  # grad_table[u(n)] <- 1
    out.append(Frame("6.2", (0, 1, 2, 3), n - 1, list(values), list(table), ""))
    derivatives: dict[tuple[int, int], float] = {}

    def backward_step(step: BackpropStep) -> None:  # observes one iteration j of Algorithm 6.2
        terms = [
            (t.i, t.k, t.grad_i, t.derivative, derivative_formula(nodes[t.i], t.k, names)) for t in step.terms
        ]
        derivatives.update(((t.i, t.k), t.derivative) for t in step.terms)
        table[step.j] = step.total
        out.append(Frame("6.2", (4, 7), step.j, list(values), list(table), "", terms))

    run_algorithm_6_2(graph, values=values, observe=backward_step)  # the engine's Algorithm 6.2, watched
    out.append(Frame("6.2", (9,), None, list(values), list(table), ""))
    return Observed(out, values, table, derivatives)


def frames(z: Value | Graph) -> list[Frame]:
    """The frames of Algorithm 6.1 then Algorithm 6.2 on the graph of z (:func:`observe`), each with its
    explanation: :func:`viz.narration.frame_text` at the graph's values.

    Raises:
        DomainError: an operation or a local derivative is undefined at the graph's values.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithms 6.1, 6.2.
    """
    graph = z if isinstance(z, Graph) else Graph(z)
    run = observe(graph)
    names = node_names(graph)
    said = Numbers(run.values, run.grads, run.derivatives)
    for f in run.frames:
        f.explanation = frame_text(f, graph, names, said)
    return run.frames
