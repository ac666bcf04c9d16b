"""The frames of Algorithms 6.5 and 6.6: one frame per call of build_grad, and its prose.

:func:`symbolic_frames` runs :func:`micrograph.grad` (Algorithm 6.5) once with an observer; each call of
build_grad (Algorithm 6.6) it reports, with the nodes of B it added, is a frame, described by
:func:`build_grad_call_text`. The step-through page draws them (:func:`viz.steps` with
``algorithm="6.6"``) and lesson 6 prints the same words. Nothing here builds a node or knows a derivative.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, Algorithms 6.5 and 6.6.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from micrograph import pseudocode
from micrograph.engine import Value
from micrograph.errors import typed_repr
from micrograph.graph import Graph, as_values
from micrograph.order import topological_order
from micrograph.symbolic import BuildGradCall, grad
from viz.words import clean, count, fmt, formula, node_names

__all__ = [
    "symbolic_frames",
    "build_grad_call_text",
    "build_grad_call_rows",
    "call_node_name",
    "SymbolicFrame",
    "SymbolicSteps",
    "ALGORITHM_6_5",
    "ALGORITHM_6_6",
]

ALGORITHM_6_5 = list(pseudocode.ALGORITHM_6_5.lines)
"""Algorithm 6.5 (the outermost skeleton of back-propagation), line by line as the book prints it."""

ALGORITHM_6_6 = list(pseudocode.ALGORITHM_6_6.lines)
"""Algorithm 6.6 (build_grad), line by line: micrograph's summary, not the book's words (``quoted`` False)."""

_CALL_LINES = tuple(range(1, len(ALGORITHM_6_6)))  # a call that builds: every line after the lookup


def call_node_name(v: Value, names: Mapping[Value, str]) -> str:
    """A node as the text of a call names it: its u-name as drawn, with the label of a node of G."""
    if v not in names:  # grad_table[z], the seed 1: a constant that no node of B reads, so not drawn
        return f"the constant {fmt(v.data)}" if v.is_constant else f"a node not drawn ({fmt(v.data)})"
    return f"{names[v]} ({clean(v.label)})" if v.label and not v.in_backward else names[v]


def build_grad_call_text(calls: Sequence[BuildGradCall], k: int, names: Mapping[Value, str]) -> str:
    """What one call of Algorithm 6.6, ``build_grad(V, G, G', grad_table)``, did, in words and names.

    Names V, its consumers C in G' (``get_consumers(V, G')``), each consumer's ``get_inputs(C, G')``
    and D = grad_table[C], the term G(i) that ``op.bprop`` built (its name and formula), the sum
    G = grad_table[V] with its value, and the nodes of B the call added. Paragraphs are separated by
    blank lines. The lesson on figure 6.10 and the step-through page both describe a call with this text,
    so the words are the same in the terminal and in the browser.

    Where the call adds a node numbered below one an earlier call added (B's nodes are numbered as figure
    6.10 draws B, from the targets' gradients down, not in the order they are built), the text says so.

    Args:
        calls: every call of one ``grad``, as :func:`micrograph.grad` reports them to ``observe``.
        k: the call described, 1 for the first call reported.
        names: each node's name, as the drawing beside the text names it (:func:`viz.words.node_names`
            of G with B's nodes); a node of G is shown with its label too (``u3 (y)``).

    Returns:
        Plain text (several paragraphs).

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, Algorithm 6.6.
    """

    def name(v: Value) -> str:
        return call_node_name(v, names)

    call, total = calls[k - 1], len(calls)
    new = set(call.new_nodes)
    lines = []
    for C, inputs, D, term in zip(call.consumers, call.inputs, call.D, call.terms):
        built = "builds nothing (every local derivative is 0)"
        if term is not None:
            what = f"{formula(term, names)} = {fmt(term.data)}" if term.op is None else formula(term, names)
            built = f"builds {name(term)} = {what}"
            if term not in new:  # the rule gave back a node that exists already (add passes D on)
                built = f"returns {name(term)}, a node already built ({what})"
        op = C.op.name if C.op is not None else "leaf"
        article = "an" if op[:1] in "aeiou" else "a"
        lines.append(
            f"C = {name(C)}, {article} {op}: get_inputs(C, G') = ({', '.join(name(a) for a in inputs)}), "
            f"D = grad_table[C] = {name(D)}; op.bprop {built}"
        )
    if call.new_nodes:
        added = ", ".join(names.get(v, "?") for v in call.new_nodes)
        many = count(len(call.new_nodes), "node")
        added = f"This call added {many} to B: {added}, highlighted in the picture."
        before = [_number(names.get(v, "")) for c in calls[: k - 1] for v in c.new_nodes]
        if before and any(_number(names.get(v, "")) < max(before) for v in call.new_nodes):
            added += (
                " (B's nodes are numbered as figure 6.10 draws B, from the targets' gradients down, not in "
                "the order the calls build them.)"
            )
    else:
        added = "This call added no node to B: grad_table[V] is a node that was already built."
    used = (  # the first call's only consumer is z: its entry is Algorithm 6.5's, not a call's
        "The grad_table entry it used, grad_table[z] = 1, was set by Algorithm 6.5 before any call."
        if k == 1
        else "The grad_table entries it used were built by earlier calls (or are grad_table[z] = 1): "
        "consumers come later in G, so they are done first."
    )
    return (
        f"Call {k} of {total}: build_grad(V = {name(call.V)}). get_consumers(V, G') gives "
        f"{count(len(call.consumers), 'consumer')}. For each, micrograph's op.bprop applies the "
        f"operation's one derivative rule (micrograph/ops.py) to nodes, so it builds nodes: the term G(i) = "
        f"D times the local derivative.\n\n" + "\n\n".join(lines) + "\n\n"
        f"G <- the sum of the terms: grad_table[{name(call.V)}] = {name(call.G_V)} = {fmt(call.G_V.data)}. "
        f"{added} {used}"
    )


def _number(name: str) -> int:
    """The i of a node's name u(i) (``"u7"``: 7); 0 for any other name."""
    return int(name[1:]) if name[:1] == "u" and name[1:].isdecimal() else 0


def build_grad_call_rows(call: BuildGradCall, names: Mapping[Value, str]) -> list[tuple[str, str, str]]:
    """The nodes of B one call of Algorithm 6.6 added: (name, what it computes, its value), in B's order.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, Algorithm 6.6.
    """
    return [(names.get(v, "?"), formula(v, names), fmt(v.data)) for v in call.new_nodes]


@dataclass
class SymbolicFrame:
    """One step of Algorithm 6.5 or 6.6 on the page: the start, one call of build_grad, or the return.

    Attributes:
        algorithm: ``"6.5"`` or ``"6.6"``.
        lines: the pseudo-code lines being executed (0-based indices into ALGORITHM_6_5 / ALGORITHM_6_6).
        heading: the frame's title (``Algorithm 6.6, call 2 of 3: build_grad(V = u2 (x))``).
        explanation: what happens, in words, names and numbers (paragraphs separated by blank lines).
        rows: a table under the pseudo-code: (name, what it computes, value) per row.
        highlight: the nodes drawn highlighted (G' on the first frame, the call's new nodes on a call's).
        call: the call of build_grad this frame shows, or None.
        columns: the headings of ``rows``.
    """

    algorithm: str
    lines: tuple[int, ...]
    heading: str
    explanation: str
    rows: list[tuple[str, str, str]]
    highlight: tuple[Value, ...]
    call: BuildGradCall | None = None
    columns: tuple[str, str, str] = ("node", "computes", "value")


@dataclass
class SymbolicSteps:
    """Algorithms 6.5 and 6.6 as grad ran them once on the graph of z: the frames and what they show.

    Attributes:
        z: the output.
        targets: T, the variables differentiated with respect to.
        gradients: grad's result, one node of B per target (in T's order).
        calls: every call of build_grad grad reported, in order.
        names: one name per node of G and B, as the drawings name them.
        frames: the start (Algorithm 6.5), one frame per call (Algorithm 6.6), the return (Algorithm 6.5).
    """

    z: Value
    targets: list[Value]
    gradients: list[Value]
    calls: list[BuildGradCall]
    names: dict[Value, str]
    frames: list[SymbolicFrame]


def _targets(graph: Graph, wrt: Value | Sequence[Value] | None) -> list[Value]:
    if wrt is None:
        targets = list(graph.variables)
        if not targets:
            raise ValueError(
                "steps(algorithm='6.6'): z has no variables (every input is a constant); "
                "give wrt= the Values to differentiate with respect to"
            )
        return targets
    return as_values(wrt, "steps(z, path, wrt=...)", "wrt")


def _is_are(items: Sequence[object]) -> str:
    return "is" if len(items) == 1 else "are"


def symbolic_frames(z: Value, wrt: Value | Sequence[Value] | None = None) -> SymbolicSteps:
    """The frames of Algorithm 6.5 and its calls of Algorithm 6.6 on the graph of z, as grad runs them.

    Runs :func:`micrograph.grad` once with an observer: one frame for Algorithm 6.5's start (G pruned to
    G', grad_table[z] ← 1), one per call of build_grad in the order grad reported them (V, its consumers
    in G', their inputs, D, what op.bprop built, the sum, the new nodes of B), and one for the return
    (grad_table restricted to T). Nothing here builds a node or knows a derivative.

    Args:
        z: the output, a Value.
        wrt: the targets T, a Value or a sequence of Values; by default the graph's variables (the inputs
            that are not constants, in u(i) order).

    Returns:
        A :class:`SymbolicSteps` holding the frames, the calls, the gradients and the node names.

    Raises:
        TypeError: z or a target is not a Value.
        ValueError: T is empty, or (by default) the graph has no variables.
        DomainError: a local derivative does not exist at the graph's values.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, Algorithms 6.5, 6.6.
    """
    if not isinstance(z, Value):
        raise TypeError(f"steps(z, path): z must be a Value, got {typed_repr(z)}")
    graph = Graph(z)
    targets = _targets(graph, wrt)
    calls: list[BuildGradCall] = []
    gradients = grad(z, targets, observe=calls.append)  # the engine's Algorithms 6.5 and 6.6, watched
    B_nodes = [v for v in topological_order(gradients) if v not in graph.index]
    names = node_names(graph, B_nodes)  # G's u1..un, then B's numbered on as the drawing numbers them
    G_prime = graph.prune(targets)
    n = len(graph.nodes)

    def name(v: Value) -> str:
        return call_node_name(v, names)

    T_text = ", ".join(name(v) for v in targets)
    left_out = [names[v] for v in graph.nodes if v not in G_prime]
    pruned = (
        f"{count(len(left_out), 'node')} of G ({', '.join(left_out)}) {_is_are(left_out)} not, drawn "
        f"faded: no gradient flows through them, so build_grad never visits them."
        if left_out
        else "every node of G is, so nothing is pruned."
    )
    seed = next((D for c in calls for C, D in zip(c.consumers, c.D) if C is z), None)
    if seed is None:
        seed_text = ""
    elif seed in names:
        seed_text = f", drawn in B as {names[seed]}"
    else:
        seed_text = " (not drawn: no node of B reads it, as op.bprop multiplies by 1 without building a node)"
    start = SymbolicFrame(
        "6.5",
        (3, 4, 5),
        "Algorithm 6.5 (symbol-to-symbol back-propagation): G' and grad_table[z] ← 1",
        f"T = {{{T_text}}}, z = {name(z)}. G' keeps the nodes of G that are ancestors of z and descendants "
        f"of a node in T: {len(G_prime)} of the {n}, highlighted; {pruned}\n\n"
        f"grad_table[z] ← 1: the seed, the constant node 1{seed_text}. Then build_grad (Algorithm 6.6) "
        f"runs for the nodes of G' from z down: the book's recursion unrolled, so each call finds its "
        f"consumers' gradients already in the grad_table. There {_is_are(calls)} "
        f"{count(len(calls), 'call')}; each of the next frames shows one, and highlights in B (orange, on "
        f"the right) the nodes it adds.",
        [(names[v], formula(v, names), fmt(v.data)) for v in G_prime.nodes],
        tuple(G_prime.nodes),
        columns=("node of G'", "computes", "value"),
    )
    out = [start]
    for k, call in enumerate(calls, 1):
        out.append(
            SymbolicFrame(
                "6.6",
                _CALL_LINES,
                f"Algorithm 6.6, call {k} of {len(calls)}: build_grad(V = {name(call.V)})",
                build_grad_call_text(calls, k, names),
                build_grad_call_rows(call, names),
                call.new_nodes,
                call,
                ("new node of B", "computes", "value"),
            )
        )
    entries = "; ".join(
        f"grad_table[{name(v)}] = {name(d)} = {fmt(d.data)}" for v, d in zip(targets, gradients)
    )
    out.append(
        SymbolicFrame(
            "6.5",
            (9,),
            "Algorithm 6.5: return grad_table restricted to T",
            f"Return grad_table restricted to T: {entries}. Each is a node of B, highlighted: evaluate it "
            f"again with new inputs (Algorithm 6.1 on B), draw it, or differentiate it again. Its value "
            f"is the number Algorithm 6.2 computes for the same G, to the last bit unless a sum of three "
            f"terms or more was grouped otherwise (op.bprop first adds a consumer's own terms).",
            [(names.get(d, "?"), formula(d, names), fmt(d.data)) for d in gradients],
            tuple(gradients),
            columns=("grad_table entry", "computes", "value"),
        )
    )
    return SymbolicSteps(z, targets, list(gradients), calls, names, out)
