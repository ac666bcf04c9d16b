"""What an answer may be: the schema of an exercise's answers, checked before the judge reads them.

The process that runs the student's code (:mod:`lessons.exercises.child`) answers each case with one JSON
line of plain data, but that process runs the student's code: the solution can write any bytes to the answer
pipe, or change what the child sends. So the judge believes nothing about an answer's shape. Before a case is
judged, :func:`problem` checks the answer against its exercise's :class:`Schema` (each exercise declares
its own, from the parts here and in :mod:`lessons.exercises.schema`): the types of every field, numbers
where numbers belong (counts are whole numbers from 0 up, an exponent is finite), how deeply a value nests
and how many items it has, and that every reference names something that exists (a node of G by its
position, a node of B by its index, built before the node that uses it). An answer that does not fit is
that case's failure (mistake ``"answer"``), said in one sentence, and the other cases are judged as usual.

A number the solution computed may be anything JSON holds: NaN, an infinity, an integer of 401 digits. That
is a wrong answer, not an unreadable one: the judge compares it (never equal to a float) and shows it
(:func:`lessons.exercises.schema.number_text`).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lessons.exercises.report import Failure
from lessons.exercises.schema import (
    Check,
    Context,
    Unreadable,
    boolean,
    count,
    either,
    fields,
    finite,
    integer,
    is_int,
    list_of,
    maybe,
    node_id,
    number,
    one_of,
    plain,
    position,
    record,
    text,
    wrong,
)
from micrograph.ops import OPS

__all__ = ["Schema", "LOAD", "ON_G", "ERROR", "KINDS", "GRAPH_MUTATION", "NET_MUTATION", "COUNTS", "CALL",
           "MAX_B", "MAX_CALLS", "node_of_B", "b_records", "seconds", "failure", "problem"]  # fmt: skip

MAX_B = 200_000
"""Nodes B may have (build_grad): the child's own bound."""

MAX_CALLS = 400
"""Local-derivative calls the child reports in order (backprop)."""


# ---------------------------------------------------------------------------------------------------------
# The schemas.

KINDS = ("exception", "recursion", "todo", "missing-entry", "missing-function", "engine", "syntax",
         "not-loaded", "import")  # fmt: skip
"""The kinds of error the child reports (:func:`lessons.exercises.failures.raised` reads each). Its
refusal to run the solution (``isolation``) comes only in answer to ``enclose``, before the solution's code
runs (:meth:`lessons.exercises.runner.Runner.load`), never in a load's or a case's answer."""

ERROR = fields(
    {"kind": one_of(*KINDS)},
    {
        "type": text,
        "message": text,
        "key": maybe(integer),
        "traceback": text,
        "recursion_limit": integer,
        "name": text,
        "line": maybe(integer),
    },
)
"""An exception the solution raised (or why it could not be loaded), as the child reports it."""

_FIELDS = ("data", "grad", "op", "inputs", "label")

GRAPH_MUTATION = either(
    one_of([]),
    record(("node", node_id), ("field", one_of(*_FIELDS)), ("old", maybe(number)), ("new", maybe(number))),
)
"""The first change the solution made to G: ``[]``, or ``[node id, field, old, new]``."""

NET_MUTATION = either(
    one_of([]),
    record(("at", one_of(0)), ("field", one_of("net")), ("old", one_of(None)), ("new", one_of(None))),
)
"""Whether the solution changed the network's lists: ``[]``, or ``[0, "net", None, None]``."""

COUNTS = fields({"local_derivatives": count, "evaluations": count})
"""The calls of tools.local_derivative and tools.evaluate, counted (or as the solution reports them)."""

CALL = record(("node", either(one_of(-1), position)), ("k", one_of(0, 1)))
"""One call of tools.local_derivative: the position of its node in G (-1: not a node of G) and k."""


def _ref(x: Any, where: str, ctx: Context, built: int, which: str) -> None:
    """A node of G by its position (``["g", j]``) or of B by its index, one of the ``built`` first
    (``which`` says which they are, in words)."""
    if isinstance(x, list) and len(x) == 2 and isinstance(x[0], str) and x[0] in ("g", "b"):
        if x[0] == "g":
            position(x[1], f"{where}[1]", ctx)
        elif not (is_int(x[1]) and 0 <= x[1] < built):
            nodes = f"B[0] to B[{built - 1}]" if built else "there is none"
            wrong(f"{where}[1]", x[1], f"a node of B{' ' + which if which else ''} ({nodes})")
        return
    wrong(where, x, 'a node: ["g", its position in G] or ["b", its index in B]')


def node_of_B(x: Any, where: str, ctx: Context) -> None:
    """What build_grad returned for a node: a node of G or of B, or ``{"plain": value}`` (not a node)."""
    if isinstance(x, dict):
        fields({"plain": plain})(x, where, ctx)
    else:
        _ref(x, where, ctx, ctx.b, "")


_B_RECORD = record(
    ("op", maybe(text)),
    ("param", maybe(finite)),
    ("parents", list_of(lambda x, where, ctx: None, lambda ctx: 2)),
    ("data", number),
    ("label", maybe(text)),
    ("constant", boolean),
)


def b_records(x: Any, where: str, ctx: Context) -> None:
    """B as records ``[op, param, [parents], data, label, constant]``, each node after its parents, the
    number of parents the operation's (unknown operations are left to the judge, which names them)."""
    list_of(_B_RECORD, lambda ctx: MAX_B)(x, where, ctx)
    for k, (op, param, parents, *_) in enumerate(x):
        at = f"{where}[{k}]"
        for i, ref in enumerate(parents):
            _ref(ref, f"{at}.parents[{i}]", ctx, k, "built before it")
        if op is None and (param is not None or parents):
            raise Unreadable(f"{at} is an input of B (no operation) with a parameter or parents")
        arity = None if op is None else 1 if param is not None else OPS[op].arity if op in OPS else None
        if arity is not None and len(parents) != arity:
            raise Unreadable(f"{at} is a node of {op} with {len(parents)} parent(s); {op} takes {arity}")


def seconds(x: Any, where: str, ctx: Context) -> None:
    """A duration: a finite number of seconds, not negative."""
    finite(x, where, ctx)
    if x < 0:
        wrong(where, x, "a number of seconds (not negative)")


@dataclass(frozen=True)
class Schema:
    """The shape of an exercise's right-shaped answer (``"ok": true``).

    Attributes:
        fields: the fields every answer has, each with its check.
        measured: the fields the harness adds where it measures them (a call's CPU seconds, build_grad's
            calls), checked when present.
    """

    fields: Mapping[str, Check]
    measured: Mapping[str, Check] = field(default_factory=dict)


LOAD = Schema({})
"""The answer to loading the solution: ``ok``, nothing more."""

ON_G = Schema({"result": plain, "mutation": GRAPH_MUTATION}, {"seconds": seconds})
"""An answer computed on G: the result as plain data, the first change to G, the call's CPU seconds."""


def problem(schema: Schema | None, answer: Any, request: Mapping[str, Any]) -> str:
    """What does not fit the schema in an answer, in words, or "" if the answer can be judged.

    Args:
        schema: the exercise's :class:`Schema` (:data:`LOAD` for loading the solution); None checks every
            field as plain data.
        answer: the answer as it came: ``{"ok": true, ...}`` with the exercise's fields, or
            ``{"ok": false, "error": ...}`` (:data:`ERROR`); anything else does not fit.
        request: the case's request, which says what a reference may name (G's nodes, the points ...).

    Returns:
        The first misfit, e.g. ``"counts.local_derivatives is 'x', not a whole number"``, or "".
    """
    ctx = Context.of(request, answer)
    try:
        fields({"ok": boolean})(answer, "", ctx)
        if answer["ok"] and isinstance(request.get("growth"), list):
            return _growth_problem(schema, answer, request["growth"])
        optional: Mapping[str, Check] = {}
        if not answer["ok"]:
            required: Mapping[str, Check] = {"error": ERROR}
        elif schema is not None:
            required, optional = schema.fields, schema.measured
        else:
            required = {key: plain for key in answer if key not in ("ok", "id")}
        fields(required, optional)(answer, "", ctx)
    except Unreadable as e:
        return str(e)
    return ""


def _growth_problem(schema: Schema | None, answer: dict[str, Any], requests: list[Any]) -> str:
    """A growth case's answer: one answer of the exercise's own shape per graph it was timed on, but for the
    largest graph's when the judge's driver stopped it (``None``, with ``stopped``: why)."""
    parts = answer.get("growth")
    if not isinstance(parts, list) or len(parts) != len(requests):
        return f"growth is not a list of {len(requests)} answers, one per graph"
    stopped = answer.get("stopped")
    if stopped is not None:
        if not (isinstance(stopped, dict) and isinstance(stopped.get("detail"), str) and parts[-1] is None):
            return "stopped is not the stop of the growth case's largest graph"
        parts, requests = parts[:-1], requests[:-1]
    for k, (part, request) in enumerate(zip(parts, requests)):
        if not isinstance(part, dict) or not isinstance(request, dict):
            return f"growth[{k}] is not an answer"
        misfit = problem(schema, {**part, "ok": True}, request)
        if misfit:
            return f"growth[{k}]: {misfit}"
    return ""


def failure(case: str, misfit: str) -> Failure:
    """The failure of a case whose answer does not fit its schema (mistake ``"answer"``)."""
    return Failure(
        case,
        f"the answer could not be read: {misfit}.",
        details=[
            "The process running your code answers each case with plain data of a fixed shape (numbers, "
            "lists, nodes of G by position); this answer has another. Something in the solution wrote to "
            "the answer's pipe, or changed how the answer is made."
        ],
        mistake="answer",
    )
