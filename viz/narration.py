"""The prose of a frame of Algorithms 6.1 and 6.2: each sentence written once, its numbers by a writer.

:func:`frame_text` says what a frame (:class:`viz.frames.Frame`) does, asking a :class:`Numbers` for every
number it says: :class:`Numbers` formats the numbers of one run (the step pages, the animation, the
lessons), :class:`Holes` leaves a marked hole for each (the explorer's page fills them at the inputs the
student chose), so every view says the same sentences.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithms 6.1 and 6.2.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from micrograph.engine import Value
from micrograph.graph import Graph
from viz.words import clean, count, fmt, formula, formula_numbers

if TYPE_CHECKING:
    from viz.frames import Frame

__all__ = [
    "frame_text",
    "iteration_text",
    "iteration_head",
    "term_text",
    "sum_text",
    "entry_text",
    "right_text",
    "Place",
    "PAGE",
    "LESSON",
    "REPORT",
    "Numbers",
    "Holes",
    "HOLE",
]


class Numbers:
    """How a frame's text writes its numbers: formatted here (:func:`viz.words.fmt`), or left as holes.

    :func:`frame_text` and :func:`iteration_text` ask this object for every number they say. This class
    formats the numbers of one run; the explorer passes :class:`Holes`, whose text marks where each number
    goes, and its page fills them in at the inputs the student chose, so both say the same sentences.

    Args:
        values: u(i) for every node.
        grads: grad_table[u(i)] for every node (None: not filled).
        derivatives: {(i, k): ∂u(i)/∂(argument k of u(i))} for the edges whose terms are said.
        write: how a number is written: :func:`viz.words.fmt` (4 significant digits) on the pages and in
            the lessons; the exercise checker's report writes 10, as it compares to 1e-9.
    """

    def __init__(
        self,
        values: Sequence[float | None],
        grads: Sequence[float | None],
        derivatives: Mapping[tuple[int, int], float],
        write: Callable[[float | None], str] = fmt,
    ) -> None:
        self.values, self.grads, self.derivatives, self.write = values, grads, derivatives, write

    def _said(self, x: float | None, bracketed: bool) -> str:
        """x written; ``bracketed``: in brackets when negative (a factor of a product, an addend)."""
        return f"({self.write(x)})" if bracketed and x is not None and x < 0 else self.write(x)

    def value(self, i: int, bracketed: bool = False) -> str:
        """u(i+1)'s value; ``bracketed``: in brackets when negative (a factor of a product)."""
        return self._said(self.values[i], bracketed)

    def grad(self, i: int, bracketed: bool = False) -> str:
        """grad_table[u(i+1)]."""
        return self._said(self.grads[i], bracketed)

    def derivative(self, i: int, k: int, bracketed: bool = False) -> str:
        """∂u(i+1)/∂(argument k+1 of u(i+1))."""
        return self._said(self.derivatives[(i, k)], bracketed)

    def product(self, i: int, k: int, bracketed: bool = False) -> str:
        """grad_table[u(i+1)] × ∂u(i+1)/∂(argument k+1): one term of Algorithm 6.2's sum."""
        g = self.grads[i]
        return self._said(None if g is None else g * self.derivatives[(i, k)], bracketed)


HOLE = "\x00"
"""Brackets a hole in a text for the explorer's page: ``HOLE + "v3" + HOLE`` is u4's value."""


class Holes(Numbers):
    """Numbers as holes: ``\\x00v3\\x00`` (u4's value), ``V`` bracketed, ``g``/``G`` grad_table entries,
    ``d``/``D`` and ``p``/``P`` an edge's local derivative and term (``\\x00d3.1\\x00``). The explorer's page
    fills each hole with the number at its current inputs, formatted as :func:`viz.words.fmt` does."""

    def __init__(self) -> None:
        super().__init__([], [], {})

    def value(self, i: int, bracketed: bool = False) -> str:
        return f"{HOLE}{'V' if bracketed else 'v'}{i}{HOLE}"

    def grad(self, i: int, bracketed: bool = False) -> str:
        return f"{HOLE}{'G' if bracketed else 'g'}{i}{HOLE}"

    def derivative(self, i: int, k: int, bracketed: bool = False) -> str:
        return f"{HOLE}{'D' if bracketed else 'd'}{i}.{k}{HOLE}"

    def product(self, i: int, k: int, bracketed: bool = False) -> str:
        return f"{HOLE}{'P' if bracketed else 'p'}{i}.{k}{HOLE}"


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
    edges = [(i, k) for i, k, *_ in frame.terms]
    return iteration_text(frame.node, edges, graph, names, numbers)


@dataclass(frozen=True)
class Place:
    """Where an iteration of Algorithm 6.2 is said, and what is said differently there, for a reason.

    Attributes:
        lines: each term on a line of its own, then the sum (a terminal: lesson 2, the exercise checker's
            report), each line with its consumer's formula; False: the iteration as one paragraph (the
            step page, the explorer), the terms one after another.
        width: with ``lines``, the columns a line may take (a lesson's terminal): a longer term goes on
            indented, its consumer's formula on a line of its own; None: lines as long as they are.
        why: add why every grad_table[u(i)] the sum reads is there already (a lesson teaches it).
    """

    lines: bool = False
    width: int | None = None
    why: bool = False


PAGE = Place()
"""The step page's and the explorer's iteration: one paragraph."""

LESSON = Place(lines=True, width=80, why=True)
"""Lesson 2's iteration: a line per term in an 80-column terminal, and why the entries it reads are there."""

REPORT = Place(lines=True)
"""The exercise checker's iteration, in a report's lines."""

WHY = "Every grad_table[u(i)] used here was filled earlier, because consumers come later in the list."


def _repeated(edges: Sequence[tuple[int, int]], i: int) -> bool:
    """Whether u(i+1) takes u(j) as more than one of its arguments (as in a × a)."""
    return sum(1 for c, _ in edges if c == i) > 1


def iteration_head(j: int, edges: Sequence[tuple[int, int]], graph: Graph, names: Mapping[Value, str]) -> str:
    """Iteration j's first sentence: which consumers u(j+1) has, so how many terms its sum has.

    Args:
        j: u(j+1)'s position. edges: the terms of its sum in Algorithm 6.2's order, each (i, k): u(i+1)
            takes u(j+1) as argument k+1. graph: G. names: the nodes' names.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.2.
    """
    v = graph.nodes[j]
    uj = names[v]
    who = uj + (f" ({clean(v.label)})" if v.label else "")
    if not edges:
        return f"j = {j + 1}: {who} has no consumers, so its sum is empty."
    consumers = ", ".join(dict.fromkeys(names[graph.nodes[i]] for i, _ in edges))
    return (
        f"j = {j + 1}: {who} is an argument of {consumers}, so its sum has {count(len(edges), 'term')}, "
        f"one per edge out of {uj}."
    )


def term_text(
    j: int, i: int, k: int, edges: Sequence[tuple[int, int]], graph: Graph, names: Mapping[Value, str],
    numbers: Numbers,
) -> str:  # fmt: skip
    """One term of grad_table[u(j+1)]'s sum, the edge into u(i+1) as its argument k+1, as arithmetic:
    ``grad_table[u3] × ∂u3/∂u1 = 0.2100 × (-2.000) = -0.4200`` (the argument named when u(i+1) takes
    u(j+1) twice). Reference: Goodfellow, Bengio & Courville (2016), section 6.5.3, Algorithm 6.2."""
    ui, uj = names[graph.nodes[i]], names[graph.nodes[j]]
    which = f" (argument {k + 1})" if _repeated(edges, i) else ""
    return (
        f"grad_table[{ui}] × ∂{ui}/∂{uj}{which} = {numbers.grad(i, True)} × {numbers.derivative(i, k, True)}"
        f" = {numbers.product(i, k)}"
    )


def sum_text(j: int, edges: Sequence[tuple[int, int]], graph: Graph, names: Mapping[Value, str],
             numbers: Numbers) -> str:  # fmt: skip
    """Iteration j's assignment: ``grad_table[u1] ← (-0.4200) + (-0.7616) = -1.182``, the terms added.
    Reference: Goodfellow, Bengio & Courville (2016), section 6.5.3, Algorithm 6.2."""
    uj = names[graph.nodes[j]]
    if not edges:
        return f"grad_table[{uj}] ← 0"
    if len(edges) == 1:
        return f"grad_table[{uj}] ← {numbers.grad(j)}"
    addends = " + ".join(numbers.product(i, k, True) for i, k in edges)
    return f"grad_table[{uj}] ← {addends} = {numbers.grad(j)}"


def entry_text(j: int, edges: Sequence[tuple[int, int]], graph: Graph, names: Mapping[Value, str],
               numbers: Numbers) -> str:  # fmt: skip
    """How Algorithm 6.2 fills grad_table[u(j+1)]: u(n)'s seed (line 4), or iteration j's sum
    (:func:`sum_text`). Reference: Goodfellow, Bengio & Courville (2016), section 6.5.3, Algorithm 6.2."""
    if j == len(graph.nodes) - 1:
        z = names[graph.nodes[j]]
        return f"grad_table[{z}] ← 1 (Algorithm 6.2, line 4): ∂{z}/∂{z} = 1"
    return sum_text(j, edges, graph, names, numbers)


def right_text(j: int, edges: Sequence[tuple[int, int]], graph: Graph, names: Mapping[Value, str],
               numbers: Numbers) -> str:  # fmt: skip
    """A grad_table entry the student predicted, confirmed: how Algorithm 6.2 fills it (:func:`entry_text`).
    Reference: Goodfellow, Bengio & Courville (2016), section 6.5.3, Algorithm 6.2."""
    return f"Right: {entry_text(j, edges, graph, names, numbers)}."


def iteration_text(
    j: int, edges: Sequence[tuple[int, int]], graph: Graph, names: Mapping[Value, str], numbers: Numbers,
    place: Place = PAGE,
) -> str:  # fmt: skip
    """One iteration j of Algorithm 6.2, written once for every place that says it: grad_table[u(j+1)]
    as the sum over its consumers u(i) of grad_table[u(i)] × ∂u(i)/∂u(j+1), term by term, then the sum.

    Args:
        j: u(j+1)'s position (the book's j is j + 1).
        edges: the terms of the sum in Algorithm 6.2's order, each (i, k): u(i+1) takes u(j+1) as argument
            k+1 (a ``BackpropStep``'s terms, or ``Graph.consumer_edges[j]``).
        graph: G. names: the nodes' names (:func:`viz.words.node_names`).
        numbers: writes the numbers (:class:`Numbers`) or their holes (:class:`Holes`).
        place: where it is said (:data:`PAGE`, :data:`LESSON`, :data:`REPORT`).

    Returns:
        The text: one paragraph, or with ``place.lines`` the first sentence, a blank line, then one line
        per term and the sum's line, each indented by two spaces.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.2.
    """
    head = iteration_head(j, edges, graph, names) + (f" {WHY}" if place.why and edges else "")
    terms = [term_text(j, i, k, edges, graph, names, numbers) for i, k in edges]
    total = sum_text(j, edges, graph, names, numbers)
    if not place.lines:
        return " ".join([head, "; ".join([*terms, total]) + "."])
    nodes = graph.nodes
    lines = []
    for term, (i, _) in zip([*terms, total], [*edges, (-1, 0)]):
        said = f"({names[nodes[i]]} = {formula(nodes[i], names)})" if i >= 0 else ""
        if place.width is None or len(term) + len(said) + 6 <= place.width:
            lines.append(f"  {term}    {said}".rstrip())
            continue
        # too wide for the terminal: the term broken at spaces, its consumer's formula on a line of its own
        lines += textwrap.wrap(term, place.width, initial_indent="  ", subsequent_indent="      ",
                               break_long_words=False, break_on_hyphens=False)  # fmt: skip
        lines += [f"      {said}"] if said else []
    return head + "\n\n" + "\n".join(lines)
