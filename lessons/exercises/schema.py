"""The parts of a schema: how the judge checks that plain data from the student's side has the shape it needs.

A schema is a function ``check(value, where, context)`` that raises :class:`Unreadable` with the first part
that does not fit, in words (``counts.local_derivatives is 'x', not a whole number``). The parts here are
put together into each exercise's schema (:mod:`lessons.exercises.answers`): a boolean, a string, a number a
float holds, a count, a position of G, a list of at most so many items, a record of named fields, a dict
with these keys; and :func:`plain`, whatever the solution returned as the child converts it, walked without
recursion however deep it nests. A value is shown in a message by :func:`brief`, which never raises.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

__all__ = ["Unreadable", "Context", "Check", "MAX_COUNT", "MAX_DEPTH", "MAX_ITEMS", "MAX_TEXT", "brief",
           "number_text", "wrong", "is_int", "boolean", "text", "integer", "number", "finite", "count",
           "position", "node_id", "maybe", "one_of", "list_of", "record", "either", "fields",
           "plain"]  # fmt: skip

MAX_DEPTH = 64
"""Levels a value the solution returned may nest (the child converts at most 12 of its own, 3 JSON each)."""

MAX_ITEMS = 2_000_000
"""Items (numbers, strings, lists, dicts) one value may hold: the child's own bound."""

MAX_TEXT = 20_000
"""Characters one string may have (the child cuts a traceback to 8,000)."""

MAX_COUNT = 2**53
"""The largest count: no check runs long enough to count further."""

_BIG = 2**63
"""Line numbers, recursion limits and node keys of an error are smaller than this."""


class Unreadable(Exception):
    """The first part of an answer that does not fit its schema, in words (the exception's text)."""


@dataclass
class Context:
    """What the references of one case's answer may name, from the case's request.

    Attributes:
        nodes: the ids a ``{"node": id}`` may name: the record ids of G (its positions, or the shuffled ids
            of the ``topo`` exercise).
        n: G's positions are 0..n-1. points: how many points (``derivatives``). targets: how many targets
            (``build_grad``). b: how many nodes B has (``build_grad``).
    """

    nodes: frozenset[int] = frozenset()
    n: int = 0
    points: int = 0
    targets: int = 0
    b: int = 0

    @classmethod
    def of(cls, request: Mapping[str, Any], answer: Any) -> Context:
        records = request.get("records") or []
        B = answer.get("B") if isinstance(answer, dict) else None
        return cls(
            frozenset(r[0] for r in records),
            len(records),
            len(request.get("points") or []),
            len(request.get("targets") or []),
            len(B) if isinstance(B, list) else 0,
        )


Check = Callable[[Any, str, Context], None]
"""A schema: ``check(value, where, context)`` raises :class:`Unreadable` if the value does not fit it."""


# ---------------------------------------------------------------------------------------------------------
# A value in words, whatever it is.


def _digits(n: int) -> str:
    try:
        return f"{len(str(abs(n))):,}"
    except ValueError:  # more digits than Python converts to text (sys.get_int_max_str_digits)
        return f"about {int(abs(n).bit_length() * math.log10(2)) + 1:,}"


def number_text(x: int | float) -> str:
    """A number as a report shows it: 10 significant digits, or ``an integer of 401 digits`` for an
    integer too large for a float."""
    try:
        return f"{float(x):.10g}"
    except OverflowError:
        return f"{'a negative' if x < 0 else 'an'} integer of {_digits(int(x))} digits"


class _Brief(reprlib.Repr):
    """reprlib's bounded repr (a few items per level, a few levels), with numbers as reports show them."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel, self.maxlist, self.maxdict, self.maxstring, self.maxother = 4, 4, 3, 40, 40

    def repr_int(self, x: int, level: int) -> str:
        return number_text(x) if abs(x) >= 10**15 else str(int(x))

    def repr_float(self, x: float, level: int) -> str:
        return number_text(x)

    def repr_bool(self, x: bool, level: int) -> str:
        return repr(x)


_BRIEF = _Brief()


def brief(x: Any) -> str:
    """Any value in at most 60 characters, however large or deeply nested (it never raises)."""
    text = _BRIEF.repr(x)
    return text if len(text) <= 60 else text[:59] + "…"


# ---------------------------------------------------------------------------------------------------------
# The parts of a schema.


def wrong(where: str, x: Any, what: str) -> NoReturn:
    raise Unreadable(f"{where} is {brief(x)}, not {what}")


def is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def boolean(x: Any, where: str, ctx: Context) -> None:
    """True or false."""
    if not isinstance(x, bool):
        wrong(where, x, "true or false")


def text(x: Any, where: str, ctx: Context) -> None:
    """A string of at most :data:`MAX_TEXT` characters."""
    if not isinstance(x, str):
        wrong(where, x, "a string")
    if len(x) > MAX_TEXT:
        raise Unreadable(f"{where} is a string of {len(x):,} characters, more than {MAX_TEXT:,}")


def integer(x: Any, where: str, ctx: Context) -> None:
    """An integer smaller in size than 2**63."""
    if not (is_int(x) and -_BIG < x < _BIG):
        wrong(where, x, "an integer")


def number(x: Any, where: str, ctx: Context) -> None:
    """A number a float holds (NaN and the infinities included)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        wrong(where, x, "a number")
    try:
        float(x)
    except OverflowError:
        wrong(where, x, "a number a float holds")


def finite(x: Any, where: str, ctx: Context) -> None:
    """A finite number."""
    number(x, where, ctx)
    if not math.isfinite(x):
        wrong(where, x, "a finite number")


def count(x: Any, where: str, ctx: Context) -> None:
    """A whole number from 0 to :data:`MAX_COUNT` (a float with no fraction counts too)."""
    whole = is_int(x) or (isinstance(x, float) and math.isfinite(x) and x.is_integer())
    if not whole:
        wrong(where, x, "a whole number")
    if x < 0:
        raise Unreadable(f"{where} is {brief(x)}, a negative count")
    if x > MAX_COUNT:
        raise Unreadable(f"{where} is {brief(x)}, more than any count can be")


def position(x: Any, where: str, ctx: Context) -> None:
    """A position of G: 0..n-1."""
    if not (is_int(x) and 0 <= x < ctx.n):
        wrong(where, x, f"a position of G's {ctx.n} nodes (0 to {ctx.n - 1})")


def node_id(x: Any, where: str, ctx: Context) -> None:
    """The id of a node of G, as the request named it."""
    if not (is_int(x) and x in ctx.nodes):
        what = (
            f"one of the {len(ctx.nodes)} nodes of the graph"
            if ctx.nodes
            else "a node: this case has no graph"
        )
        wrong(where, x, what)


def maybe(check: Check) -> Check:
    """None, or what ``check`` accepts."""

    def maybe_(x: Any, where: str, ctx: Context) -> None:
        if x is not None:
            check(x, where, ctx)

    return maybe_


def one_of(*values: Any) -> Check:
    """One of these values."""

    def one_of_(x: Any, where: str, ctx: Context) -> None:
        if not any(type(x) is type(v) and x == v for v in values):
            wrong(where, x, "one of " + ", ".join(map(repr, values)))

    return one_of_


def list_of(item: Check, most: Callable[[Context], int]) -> Check:
    """A list of at most ``most(context)`` items, each what ``item`` accepts."""

    def list_of_(x: Any, where: str, ctx: Context) -> None:
        if not isinstance(x, list):
            wrong(where, x, "a list")
        if len(x) > most(ctx):
            raise Unreadable(f"{where} has {len(x):,} items, more than {most(ctx):,}")
        for i, v in enumerate(x):
            item(v, f"{where}[{i}]", ctx)

    return list_of_


def record(*fields: tuple[str, Check]) -> Check:
    """A list of exactly these fields, in order (each named in a message: ``B[3].param``)."""

    def record_(x: Any, where: str, ctx: Context) -> None:
        if not (isinstance(x, list) and len(x) == len(fields)):
            wrong(where, x, f"a list of {len(fields)} items ({', '.join(name for name, _ in fields)})")
        for (name, check), v in zip(fields, x):
            check(v, f"{where}.{name}", ctx)

    return record_


def either(*checks: Check) -> Check:
    """What one of ``checks`` accepts; the message is the last one's."""

    def either_(x: Any, where: str, ctx: Context) -> None:
        for check in checks[:-1]:
            try:
                check(x, where, ctx)
                return
            except Unreadable:
                continue
        checks[-1](x, where, ctx)

    return either_


def fields(required: Mapping[str, Check], optional: Mapping[str, Check] | None = None) -> Check:
    """A dict with these keys (others are ignored: the judge never reads them)."""

    def fields_(x: Any, where: str, ctx: Context) -> None:
        if not isinstance(x, dict):
            wrong(where or "the answer", x, "a dict")
        for key, check in required.items():
            if key not in x:
                raise Unreadable(f"{where or 'the answer'} has no {key!r}")
            check(x[key], f"{where}.{key}" if where else key, ctx)
        for key, check in (optional or {}).items():
            if key in x:
                check(x[key], f"{where}.{key}" if where else key, ctx)

    return fields_


# ---------------------------------------------------------------------------------------------------------
# Plain data: what the solution returned, as the child converts it.


def _where(path: Any) -> str:
    """``result.dict[2][0]`` from the linked parts ``(("result", "dict[2]"), 0)``."""
    parts: list[str] = []
    while isinstance(path, tuple):
        path, part = path
        parts.append(f"[{part}]" if isinstance(part, int) else f".{part}")
    return str(path) + "".join(reversed(parts))


_SCALARS = (type(None), bool, int, float)

Children = Iterator[tuple[Any, "int | str", int]]
"""The parts of a list or a tagged dict: (value, its name in a message, the levels of JSON it is down)."""


def plain(x: Any, where: str, ctx: Context) -> None:
    """What the solution returned: None, true, false, numbers, strings, lists, and the tagged dicts
    ``{"dict": [[key, value], ...]}``, ``{"node": id}`` (a node of G), ``{"value": x, "label": ...}`` (a
    node not in G), ``{"object": text}`` (anything else), at most :data:`MAX_DEPTH` deep and
    :data:`MAX_ITEMS` items. A number may be anything JSON holds: a wrong number is for the judge to say.

    The walk keeps one iterator per level it is in, so it needs no recursion and little memory."""
    if isinstance(x, _SCALARS):
        return
    if not isinstance(x, (list, dict)):
        _scalar(x, where, ctx)
        return
    stack: list[tuple[Children, Any, int]] = [(_children(x, where, ctx), where, 0)]
    items = 1
    while stack:
        parts, path, depth = stack[-1]
        for v, part, down in parts:
            items += 1
            if items > MAX_ITEMS:
                raise Unreadable(f"{where} has more than {MAX_ITEMS:,} items")
            if isinstance(v, _SCALARS):
                continue
            if not isinstance(v, (list, dict)):
                _scalar(v, _where((path, part)), ctx)
                continue
            if depth + down > MAX_DEPTH:
                raise Unreadable(f"{where} is nested more than {MAX_DEPTH} levels deep")
            stack.append((_children(v, (path, part), ctx), (path, part), depth + down))
            break
        else:
            stack.pop()


def _scalar(x: Any, where: str, ctx: Context) -> None:
    """A string, or else something that is not plain data (a tuple, a set: not JSON)."""
    if isinstance(x, str):
        text(x, where, ctx)
    else:
        wrong(where, x, "plain data")


def _children(v: list[Any] | dict[Any, Any], path: Any, ctx: Context) -> Children:
    """The parts of a list, or of a tagged dict once its tag and fields are checked."""
    if isinstance(v, list):
        return ((item, i, 1) for i, item in enumerate(v))
    keys = set(v)
    if keys == {"dict"}:
        pairs = v["dict"]
        if not isinstance(pairs, list):
            wrong(_where((path, "dict")), pairs, "a list of [key, value] pairs")
        for i, pair in enumerate(pairs):
            if not (isinstance(pair, list) and len(pair) == 2):
                wrong(_where((path, f"dict[{i}]")), pair, "a [key, value] pair")
        return ((pair[k], f"dict[{i}][{k}]", 3) for i, pair in enumerate(pairs) for k in (0, 1))
    if keys == {"node"}:
        node_id(v["node"], _where((path, "node")), ctx)
        return iter(())
    if keys == {"value", "label"}:
        number(v["value"], _where((path, "value")), ctx)
        return iter(((v["label"], "label", 1),))
    if keys == {"object"}:
        text(v["object"], _where((path, "object")), ctx)
        return iter(())
    wrong(_where(path), v, "plain data (a dict of plain data has one key: dict, node, value or object)")
