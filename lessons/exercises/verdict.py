"""The pieces of a case's verdict, shared by every exercise's judge.

A case (:class:`Case`) is a question for the student's side as plain data, with the function that judges
its answer and raises :class:`Fail` for a wrong one. The answer comes back as plain data: :func:`decode`
reads it into numbers, lists, dicts and node references (:class:`NodeRef`; :class:`Foreign` for what is
neither). A judge compares numbers to rounding (:func:`close`, :data:`TOLERANCE`), shows them as a report
does (:func:`shown`, :func:`differ`), names the nodes of G as the book does (:func:`node_name`: u3), says
in words how a solution changed G (:func:`mutation_text`), and draws the failure (:func:`draw`). G goes to
the student's side as records (:func:`graph_request`), from which it is rebuilt there.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lessons.exercises import schema
from lessons.exercises.drawing import failure_svg
from lessons.exercises.report import Failure
from micrograph.graph import Graph, node_name

if TYPE_CHECKING:
    from lessons.exercises.exercise import Exercise

__all__ = ["Case", "Fail", "NodeRef", "Foreign", "close", "differ", "shown", "node_name", "draw", "decode",
           "graph_request", "mutation_text", "TOLERANCE"]  # fmt: skip

REL_TOL, ABS_TOL = 1e-9, 1e-12
TOLERANCE = f"relative {REL_TOL:g}, absolute {ABS_TOL:g}"
"""How close a number must be to the engine's to count as equal, in words."""


class Fail(Exception):
    """Raised by a case's judge with the :class:`Failure` that fails it."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.headline)
        self.failure = failure


@dataclass(frozen=True)
class NodeRef:
    """A node of the case's graph, as the solution returned it: its 0-based position j (u(j+1))."""

    j: int


@dataclass(frozen=True)
class Foreign:
    """Something the solution returned that is neither a number nor a node of the graph (shown as text)."""

    text: str


@dataclass
class Case:
    """One case of an exercise.

    Attributes:
        name: what the case is, as the report shows it.
        request: the question, plain data for the runner (the graph as records, the inputs ...).
        judge: ``judge(answer)`` raises :class:`Fail` for a wrong answer; ``answer`` is the runner's plain
            data (the solution's ``result`` and what was counted).
        graph: the case's G on the judge's side, to name a node in an exception (a KeyError), or None.
        what: how the call reads in the report, e.g. ``"backprop(G)"``.
        book: the key of the book's sentence a recursion-limit failure quotes.
        points: what the case is worth.
        extra: the case's hooks: ``key_error`` and ``exception`` refine the failure of an answer that
            raised, ``stopped`` that of a case the runner stopped (``hook(case, failure, error_or_stop)``).
        cpu: the CPU seconds the case may use, scaled to its size (0: the check's default per case).
        exercise: the exercise, whose schema the answer must fit (:mod:`lessons.exercises.answers`), or None
            (every field plain data); :func:`lessons.exercises.judges.cases` sets it.
    """

    name: str
    request: dict[str, Any]
    judge: Callable[[dict[str, Any]], None]
    graph: Graph | None = None
    what: str = ""
    book: str = "order"
    points: float = 1.0
    extra: dict[str, Any] = field(default_factory=dict)
    cpu: float = 0.0
    exercise: Exercise | None = None


def close(a: Any, b: float) -> bool:
    """True if the number a equals b to rounding (:data:`TOLERANCE`); a non-number, or an integer too large
    for a float, is never close."""
    if isinstance(a, bool) or not isinstance(a, (int, float)):
        return False
    try:
        a = float(a)
    except OverflowError:
        return False
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def shown(x: Any) -> str:
    """A value as a report shows it: numbers with 10 significant digits (``an integer of 401 digits`` for
    one too large for a float), nodes as u(i), else its text, at most 60 characters; it never raises."""
    if isinstance(x, bool) or x is None:
        return repr(x)
    if isinstance(x, (int, float)):
        return schema.number_text(x)
    if isinstance(x, NodeRef):
        return f"the node {node_name(x.j + 1)}"
    if isinstance(x, Foreign):
        return x.text
    return schema.brief(x)


def differ(expected: float, actual: Any) -> list[str]:
    """A failure's detail line for two numbers that agree to 6 significant digits but are not equal (by how
    much, and the tolerance), else no line."""
    if isinstance(actual, bool) or not isinstance(actual, (int, float)):
        return []
    try:
        a = float(actual)
    except OverflowError:  # an integer too large for a float agrees with no float
        return []
    if f"{a:.6g}" == f"{expected:.6g}":
        return [
            "The two agree to 6 significant digits but differ by "
            f"{abs(a - expected):.3g}; numbers count as equal within {TOLERANCE}."
        ]
    return []


def reported_name(graph: Graph, j: int) -> str:
    """u(j+1) as a report names it: ``u3 (x)``, and ``u5 (the output z)`` for u(n)."""
    v = graph.nodes[j]
    label = v.label
    if j == len(graph.nodes) - 1:
        label = f"{label}, the output" if label and label != "z" else "the output z"
    return node_name(j + 1) + (f" ({label})" if label else "")


def draw(graph: Graph, **kw: Any) -> dict[str, Any]:
    """The failure drawing's fields of a :class:`Failure`: the SVG, or why there is none."""
    svg, note = failure_svg(graph, **kw)
    return {"svg": svg, "drawing_note": note}


def decode(x: Any, depth: int = 0) -> Any:
    """The runner's plain data as the judge reads it: dicts, lists, numbers, NodeRef, Foreign.

    It never raises: what is not plain data (a malformed tag, a value nested deeper than
    :data:`lessons.exercises.schema.MAX_DEPTH`) becomes a :class:`Foreign` that shows it."""
    if depth > schema.MAX_DEPTH:
        return Foreign("a value nested too deeply")
    if isinstance(x, list):
        return [decode(v, depth + 1) for v in x]
    if not isinstance(x, dict):
        return x
    if "dict" in x:
        pairs = x["dict"]
        if not (isinstance(pairs, list) and all(isinstance(p, list) and len(p) == 2 for p in pairs)):
            return Foreign(shown(x))
        out: dict[Any, Any] = {}
        for k, v in pairs:
            key = decode(k, depth + 3)
            try:
                out[key] = decode(v, depth + 3)
            except TypeError:  # an unhashable key (a list): shown, not used
                out[Foreign(shown(key))] = decode(v, depth + 3)
        return out
    node = x.get("node")
    if isinstance(node, int) and not isinstance(node, bool):
        return NodeRef(node)
    if "value" in x:
        return Foreign(f"a node that is not in G (value {shown(x['value'])})")
    what = x.get("object", "?")
    return Foreign(what if isinstance(what, str) else shown(what))


def graph_request(graph: Graph) -> dict[str, Any]:
    """G as plain data: ``[id, op, param, parents, data, label, constant]`` per node (id = position)."""
    records = []
    for j, v in enumerate(graph.nodes):
        op = v.op
        records.append(
            [
                j,
                None if op is None else op.name,
                None if op is None else op.param,
                list(graph.parents[j]),
                v.data,
                v.label,
                v.is_constant,
            ]
        )
    return {"records": records, "n_inputs": graph.n_inputs}


def mutation_text(graph: Graph, change: list[Any], names: Callable[[int], str] | None = None) -> str:
    """The first change a solution made to the graph, in words (from the runner's ``mutation``), or ""."""
    if not change:
        return ""
    j, fieldname, old, new = change
    name = names(j) if names is not None else reported_name(graph, j)
    if fieldname in ("data", "grad"):
        return f"{name}.{fieldname} changed from {shown(old)} to {shown(new)}"
    return f"{name}.{fieldname} changed"
