"""The prose of a frame of Algorithms 6.1 and 6.2: each sentence written once, its numbers by a writer.

:func:`frame_text` says what a frame (:class:`viz.frames.Frame`) does, asking a :class:`Numbers` for every
number it says: :class:`Numbers` formats the numbers of one run (the step pages, the animation, the
lessons), :class:`Holes` leaves a marked hole for each (the explorer's page fills them at the inputs the
student chose), so every view says the same sentences.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithms 6.1 and 6.2.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from micrograph.engine import Value
from micrograph.graph import Graph
from viz.words import clean, factor, fmt, formula, formula_numbers

if TYPE_CHECKING:
    from viz.frames import Frame

__all__ = ["frame_text", "Numbers", "Holes", "HOLE"]


class Numbers:
    """How a frame's text writes its numbers: formatted here (:func:`viz.words.fmt`), or left as holes.

    :func:`frame_text` asks this object for every number it says. This class formats the numbers of one
    run; the explorer passes :class:`Holes`, whose text marks where each number goes, and its page fills
    them in at the inputs the student chose, so both say the same sentences.

    Args:
        values: u(i) for every node.
        grads: grad_table[u(i)] for every node (None: not filled).
        derivatives: {(i, k): ∂u(i)/∂(argument k of u(i))} for the edges whose terms are said.
    """

    def __init__(
        self,
        values: Sequence[float | None],
        grads: Sequence[float | None],
        derivatives: Mapping[tuple[int, int], float],
    ) -> None:
        self.values, self.grads, self.derivatives = values, grads, derivatives

    def value(self, i: int, bracketed: bool = False) -> str:
        """u(i+1)'s value; ``bracketed``: in brackets when negative (a factor of a product)."""
        return factor(self.values[i]) if bracketed else fmt(self.values[i])

    def grad(self, i: int, bracketed: bool = False) -> str:
        """grad_table[u(i+1)]."""
        return factor(self.grads[i]) if bracketed else fmt(self.grads[i])

    def derivative(self, i: int, k: int, bracketed: bool = False) -> str:
        """∂u(i+1)/∂(argument k+1 of u(i+1))."""
        d = self.derivatives[(i, k)]
        return factor(d) if bracketed else fmt(d)

    def product(self, i: int, k: int) -> str:
        """grad_table[u(i+1)] × ∂u(i+1)/∂(argument k+1): one term of Algorithm 6.2's sum."""
        g = self.grads[i]
        return fmt(None if g is None else g * self.derivatives[(i, k)])


HOLE = "\x00"
"""Brackets a hole in a text for the explorer's page: ``HOLE + "v3" + HOLE`` is u4's value."""


class Holes(Numbers):
    """Numbers as holes: ``\\x00v3\\x00`` (u4's value), ``V`` bracketed, ``g``/``G`` grad_table entries,
    ``d``/``D`` and ``p`` an edge's local derivative and term (``\\x00d3.1\\x00``). The explorer's page
    fills each hole with the number at its current inputs, formatted as :func:`viz.words.fmt` does."""

    def __init__(self) -> None:
        super().__init__([], [], {})

    def value(self, i: int, bracketed: bool = False) -> str:
        return f"{HOLE}{'V' if bracketed else 'v'}{i}{HOLE}"

    def grad(self, i: int, bracketed: bool = False) -> str:
        return f"{HOLE}{'G' if bracketed else 'g'}{i}{HOLE}"

    def derivative(self, i: int, k: int, bracketed: bool = False) -> str:
        return f"{HOLE}{'D' if bracketed else 'd'}{i}.{k}{HOLE}"

    def product(self, i: int, k: int) -> str:
        return f"{HOLE}p{i}.{k}{HOLE}"


def frame_text(frame: Frame, graph: Graph, names: Mapping[Value, str], numbers: Numbers) -> str:
    """What one frame of Algorithm 6.1 or 6.2 does, in words and numbers (the frame's ``explanation``).

    Args:
        frame: the frame (its algorithm, lines, node and terms say which sentence).
        graph: the graph G the frame belongs to.
        names: the nodes' names (:func:`viz.words.node_names`).
        numbers: writes the numbers (:class:`Numbers`) or their holes (:class:`Holes`).

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithms 6.1, 6.2.
    """
    nodes, n = graph.nodes, len(graph.nodes)
    i = frame.node
    if frame.algorithm == "6.2":
        return _text_62(frame, graph, names, numbers)
    if 7 in frame.lines:
        return f"return u(n) = {names[nodes[n - 1]]} = {numbers.value(n - 1)}."
    assert i is not None
    v = nodes[i]
    name = names[v]
    label = f" ({clean(v.label)})" if v.label else ""
    if i < graph.n_inputs:
        what = "the constant " if v.is_constant else f"the input x_{i + 1} = "
        return f"{name} ← x_{i + 1}: {name} is {what}{numbers.value(i)}{label}."
    index = graph.index
    A_text = ", ".join(f"{names[p]} = {numbers.value(index[p])}" for p in dict.fromkeys(v.inputs))
    said = formula_numbers(v, lambda p, bracketed: numbers.value(index[p], bracketed))
    return (
        f"i = {i + 1}: A({i + 1}) = {{{A_text}}}; {name}{label} ← f({i + 1})(A({i + 1})) = "
        f"{formula(v, names)} = {said} = {numbers.value(i)}."
    )


def _text_62(frame: Frame, graph: Graph, names: Mapping[Value, str], numbers: Numbers) -> str:
    nodes, n = graph.nodes, len(graph.nodes)
    if 9 in frame.lines:
        return "return the grad_table: ∂u(n)/∂u(i) for every node, as the table shows."
    z = names[nodes[n - 1]]
    if frame.node is None or 3 in frame.lines:
        return f"Forward propagation has computed every u(i). grad_table[{z}] ← 1: ∂{z}/∂{z} = 1."
    j = frame.node
    v = nodes[j]
    name = names[v]
    label = f" ({clean(v.label)})" if v.label else ""
    consumers = ", ".join(dict.fromkeys(names[nodes[i]] for i, *_ in frame.terms))
    symbolic = " + ".join(
        f"grad_table[{names[nodes[i]]}] · ∂{names[nodes[i]]}/∂{name}" for i, *_ in frame.terms
    )
    numeric = " + ".join(
        f"{numbers.grad(i, True)} × {numbers.derivative(i, k, True)}" for i, k, *_ in frame.terms
    )
    return (
        f"j = {j + 1}: {name}{label} is an argument of {consumers}. "
        f"grad_table[{name}] ← {symbolic} = {numeric} = {numbers.grad(j)}."
    )
