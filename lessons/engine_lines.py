"""The engine's own lines that a lesson step ran, read from micrograph's source, with that step's values.

A lesson observes the engine: its steps call micrograph's functions (``Graph.backprop()``, ``grad(z, T)``)
or read what an engine loop reported to an observer. What a step shows as "Code that ran" is therefore the
engine's code, not the lesson's: an :class:`EngineLines` names an engine function and a span of its lines
(found in the function's source by the text the span starts and ends with, never by a line number that
would rot when the file changes), and :class:`Bound` records the values the step's live objects say those
lines gave (``# → j = 1 (u2), total = 0.0``). :func:`render` writes them, the one text every view shows:
the terminal, Jupyter, the tour's pages, the site's page and the notebooks.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import math
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import micrograph

__all__ = ["ARROW", "Bound", "EngineLines", "Span", "render", "word"]

ARROW = "# → "
"""How a value note starts: an arrow after the comment sign, so it is told from the engine's comments."""

MANY = 4
"""A note lists at most this many values of a line that ran more often (the first ones and the last)."""

_ROOT = Path(micrograph.__file__).resolve().parent.parent


@dataclass(frozen=True)
class Bound:
    """What an engine line gave in this step: ``expr`` (over the function's local names) after ``line`` ran.

    Attributes:
        line: the start of the engine line, as written (stripped), e.g. ``"total = grad_table[j]"``; it
            names one line of the span.
        expr: the Python expression shown, over the engine function's local names, e.g. ``"total"``.
        values: its value after each time the line ran in the pass shown (or after the last time only, when
            ``last``), taken from the step's live objects, never computed again.
        words: how each value is written (``"2 (u3)"``); empty: :func:`word` of each value.
        last: ``values`` holds one value, the one after the line's last run in the pass.
    """

    line: str
    expr: str
    values: tuple[Any, ...]
    words: tuple[str, ...] = ()
    last: bool = False

    def said(self) -> str:
        """``expr = value`` (``expr = v1, then v2``; at most :data:`MANY` values, the count if more)."""
        words = list(self.words) if self.words else [word(v) for v in self.values]
        if len(words) > MANY:
            return (
                f"{self.expr} = {', then '.join(words[: MANY - 1])}, … then {words[-1]} ({len(words)} values)"
            )
        return f"{self.expr} = {', then '.join(words)}"


@dataclass(frozen=True)
class Span:
    """Where an engine span is: its file (relative to micrograph's checkout), its lines, as read.

    Attributes:
        path: e.g. ``"micrograph/backprop.py"``; for a function compiled by :mod:`micrograph.compile_nodes`,
            its name and where: ``"Value.__mul__, compiled by micrograph/compile_nodes.py"``.
        first, last: the span's first and last line numbers in that file (1-based, inclusive).
        lines: the file's lines first..last, as written (indentation included).
        entry: the line number of the span's first statement (comments run nothing).
        statements: {line number: (the last line of the statement's own text, its last line)} for every
            statement that starts in the span (a compound statement's own text is its header).
        loops: the line numbers of the span's ``for`` and ``while`` statements.
    """

    path: str
    first: int
    last: int
    lines: tuple[str, ...]
    entry: int
    statements: dict[int, tuple[int, int]] = field(default_factory=dict)
    loops: frozenset[int] = frozenset()

    def find(self, start: str) -> int:
        """The line number of the one line of the span that starts with ``start`` (stripped).

        Raises:
            ValueError: no line, or more than one, starts so.
        """
        hits = [self.first + k for k, text in enumerate(self.lines) if text.strip().startswith(start)]
        if len(hits) != 1:
            raise ValueError(
                f"{self.path}, lines {self.first}-{self.last}: {len(hits)} lines start with {start!r}; "
                "a value is shown beside exactly one"
            )
        return hits[0]


@dataclass(frozen=True)
class EngineLines:
    """A span of an engine function's lines that a step ran, with the values they gave in that step.

    Attributes:
        function: the engine function whose source holds the span (a nested function's: the function
            around it), or its name ``"micrograph.forward:_run"``, imported when the span is read.
        start: the text the span's first line starts with (stripped); None: the function's body after its
            docstring, to its end.
        end: the text the span's last statement starts with; None: the span is the one statement ``start``
            begins (a loop with its body), or the whole body when ``start`` is None.
        bound: the values shown beside the lines (:class:`Bound`).
        caption: a few words after the header (``j = 1``), or "".
        reported: the lines ran in an earlier step's run (an observer recorded them) and this step reads
            the record; else they ran in this step's own run.
    """

    function: Callable[..., Any] | str
    start: str | None = None
    end: str | None = None
    bound: tuple[Bound, ...] = ()
    caption: str = ""
    reported: bool = False

    @property
    def span(self) -> Span:
        """Where the lines are (read once per function and span).

        Raises:
            ValueError: the source cannot be read, or ``start``/``end``/a bound line names no line of it.
        """
        span = _locate(_resolve(self.function), self.start, self.end)
        for b in self.bound:
            span.find(b.line)
        return span

    @property
    def name(self) -> str:
        """The function's name as Python writes it (``Graph._build``, ``run_algorithm_6_2``)."""
        return str(_resolve(self.function).__qualname__).replace(".<locals>", "")

    def header(self) -> str:
        """``micrograph/backprop.py, lines 195-222 (run_algorithm_6_2)``, and the caption (a compiled
        function: ``Value.__mul__, compiled by micrograph/compile_nodes.py, lines 6-10``)."""
        s = self.span
        where = f"line {s.first}" if s.first == s.last else f"lines {s.first}-{s.last}"
        named = "" if s.path.startswith(f"{self.name},") else f" ({self.name})"  # compiled: named in its path
        return f"{s.path}, {where}{named}" + (f": {self.caption}" if self.caption else "")

    def render(self, width: int) -> str:
        """The header as a comment, then the lines (dedented together), each line's values noted after it."""
        s = self.span
        out = [f"# {self.header()}"]
        if len(out[0]) > width:  # the caption on lines of its own
            out = [f"# {self.header().removesuffix(': ' + self.caption)}:"]
            out += textwrap.wrap(self.caption, width=width, initial_indent="#   ", subsequent_indent="#   ")
        notes: dict[int, list[Bound]] = {}  # after the statement's own text (a call over lines: its last)
        body: set[int] = set()  # the lines after which a compound statement's body starts
        for b in self.bound:
            if b.values:
                own, end = s.statements[s.find(b.line)]
                notes.setdefault(own, []).append(b)
                if end > own:
                    body.add(own)
        code = textwrap.dedent("\n".join(s.lines)).split("\n")
        for number, line in zip(range(s.first, s.last + 1), code):
            out.append(line)
            if number in notes:
                bound = notes[number]
                joint = "; " if any(len(b.values) > 1 for b in bound) else ", "
                out += _noted(out.pop(), joint.join(b.said() for b in bound), width, number in body)
        return "\n".join(out)


def render(spans: Sequence[EngineLines], width: int) -> str:
    """The code box of a step: each span rendered (:meth:`EngineLines.render`), a blank line between."""
    return "\n\n".join(s.render(width) for s in spans)


def _resolve(function: Callable[..., Any] | str) -> Callable[..., Any]:
    """The function itself, or the one named ``"module:qualified.name"``."""
    if not isinstance(function, str):
        return function
    module, _, name = function.partition(":")
    found: Any = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part)
    return found  # type: ignore[no-any-return]


def _noted(line: str, note: str, width: int, header: bool) -> list[str]:
    """``line`` with its note: after it on the same line when it fits and the line has no comment, else on
    lines of their own below it, indented as the line (as its body, after a compound statement's header)."""
    said = f"{ARROW}{note}"
    if "#" not in line and len(line) + 2 + len(said) <= width:
        return [f"{line}  {said}"]
    indent = line[: len(line) - len(line.lstrip())] + ("    " if header else "")
    room = max(20, width - len(indent))
    return [line] + [indent + part for part in textwrap.wrap(said, width=room, subsequent_indent="#   ")]


def word(value: Any) -> str:
    """A value as a note writes it: a float to 4 significant digits, a list item by item (the first few)."""
    from viz.words import fmt

    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return fmt(value) if math.isfinite(value) else str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (list, tuple)):
        items = [word(v) for v in value[:MANY]]
        more = f", … ({len(value)} items)" if len(value) > MANY else ""
        return "[" + ", ".join(items) + more + "]"
    return getattr(value, "__name__", None) or repr(value)


@functools.cache
def _locate(function: Callable[..., Any], start: str | None, end: str | None) -> Span:
    """Find a span in a function's source: by the text of its first line and of its last statement."""
    path, first, text, tree = _source(function)
    ends, headers, loops = _statements(tree)
    where = f"{path} ({function.__qualname__})"

    def line_of(prefix: str, after: int) -> int:
        hits = [k for k in range(after, len(text)) if text[k].strip().startswith(prefix)]
        if not hits:
            raise ValueError(f"{where}: no line starts with {prefix!r}")
        return hits[0]

    if start is None:
        body = tree.body[0].body  # type: ignore[attr-defined]
        if isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
            body = body[1:]  # the docstring
        lo, hi = body[0].lineno - 1, (body[-1].end_lineno or body[-1].lineno) - 1
    else:
        lo = line_of(start, 0)
        if any(text[k].strip().startswith(start) for k in range(lo + 1, len(text))):
            raise ValueError(f"{where}: more than one line starts with {start!r}")
        if end is None and lo not in ends:
            raise ValueError(f"{where}: {start!r} starts no statement")
        hi = ends.get(lo, lo)
    if end is not None:  # to the end of the innermost statement holding the line ``end`` names
        k = line_of(end, lo)
        hi = ends[max(s for s in ends if s <= k <= ends[s])] if any(s <= k <= ends[s] for s in ends) else k
    inside = sorted(k for k in ends if lo <= k <= hi)
    if not inside:
        raise ValueError(f"{where}: the span {start!r}..{end!r} holds no statement")
    return Span(
        path,
        first + lo,
        first + hi,
        tuple(text[lo : hi + 1]),
        first + inside[0],
        {first + k: (first + headers[k], first + ends[k]) for k in inside},
        frozenset(first + k for k in loops if lo <= k <= hi),
    )


def _source(function: Callable[..., Any]) -> tuple[str, int, list[str], ast.Module]:
    """A function's file (relative to micrograph's checkout), first line number, lines and syntax tree."""
    try:
        lines, first = inspect.getsourcelines(function)
        file = inspect.getsourcefile(function)
    except (OSError, TypeError) as e:
        raise ValueError(f"the source of {function!r} cannot be read: {e}") from None
    if file is None:
        raise ValueError(f"the source of {function!r} cannot be read: no file")
    if file.startswith("<") and file.endswith(">"):  # compiled text (micrograph.compile_nodes): its name
        path = file[1:-1]
    else:
        try:
            path = Path(file).resolve().relative_to(_ROOT).as_posix()
        except ValueError:
            path = Path(file).name
    text = [line.rstrip("\n") for line in lines]
    return path, first, text, ast.parse(textwrap.dedent("\n".join(text)))


def _statements(tree: ast.Module) -> tuple[dict[int, int], dict[int, int], set[int]]:
    """For each line (0-based) where a statement starts: its last line, the last line of its own text (a
    compound statement's header, up to its body), and which of them are loops (``for``, ``while``)."""
    ends: dict[int, int] = {}
    headers: dict[int, int] = {}
    loops: set[int] = set()
    for node in ast.walk(tree):  # the outer of two statements on one line is met first
        if isinstance(node, ast.stmt):
            k = node.lineno - 1
            ends[k] = max(ends.get(k, k), (node.end_lineno or node.lineno) - 1)
            if k not in headers:
                headers[k] = _header_end(node) - 1
                if isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
                    loops.add(k)
    return ends, headers, loops


def _header_end(node: ast.stmt) -> int:
    """The last line (1-based) of a statement's own text: a compound statement's header, else all of it."""
    parts: list[ast.AST | None] = []
    if isinstance(node, (ast.For, ast.AsyncFor)):
        parts = [node.target, node.iter]
    elif isinstance(node, (ast.While, ast.If)):
        parts = [node.test]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        parts = [item.optional_vars or item.context_expr for item in node.items]
    elif isinstance(node, (ast.Try, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        parts = []
    else:
        return node.end_lineno or node.lineno
    return max(
        [node.lineno] + [getattr(p, "end_lineno", None) or node.lineno for p in parts if p is not None]
    )
