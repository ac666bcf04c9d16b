"""One statement emitter, two dialects: Algorithm 6.1 as statements of Python or of JavaScript.

The compiler writes a graph's values the same way in both of its languages: one statement per value,
u(i) <- f(i)(Pa(u(i))), from the operation's template (:func:`micrograph.templates.expression_template`).
A :class:`Dialect` says what differs between the languages: the operation's template (``Op.code`` or
``Op.js``), number literals, the names of values (``u5`` or the slot ``u[4]``) and how a statement ends.
The Python dialect (:data:`PYTHON`, :mod:`micrograph.compile_python`) also writes Algorithm 6.2's
statements; the JavaScript one (:data:`JAVASCRIPT`, :mod:`micrograph.compile_javascript`) writes only
Algorithm 6.1's, over G's nodes and then B's.

A statement is a text whose fields (``{f12}``: the value of the node at position 12) become the dialect's
names when the statements are put into functions. A value used once, by an operation whose template names
it once, is written into its consumer's expression (``u7 = (u4 * u5) + u6``), at most :data:`FUSE`
operations per statement: CPython's ``compile()`` costs about a microsecond per syntax-tree node.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3 (Algorithm 6.1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from micrograph.ops import Op
from micrograph.templates import expression_template

if TYPE_CHECKING:
    from micrograph.engine import Value

__all__ = [
    "FUNCTION", "FUSE", "PREFIX", "Dialect", "PYTHON", "JAVASCRIPT", "Node", "Emitter", "Positions",
]  # fmt: skip

FUNCTION = "forward_backward"
"""The generated function: ``forward_backward(x) -> (u(n), [dz/dw for w in wrt], [kept], check sum)`` in
Python, ``forward_backward(x, u)`` filling the slots ``u`` in JavaScript."""

FUSE = 12
"""The most operations one generated statement computes (bounds the nesting of an expression)."""

PREFIX = {"f": "u", "g": "grad_u", "p": "s"}
"""The Python identifier of a value (``f``), a gradient (``g``) and a partial sum (``p``): u5, grad_u5, s5."""


def _python_name(key: str) -> str:
    """A field's identifier in Python: ``{f4}`` is ``u5`` (u(5)), ``{g4}`` is ``grad_u5``, ``{p4}`` ``s5``."""
    return f"{PREFIX[key[0]]}{int(key[1:]) + 1}"


def _javascript_name(key: str) -> str:
    """A field's slot in JavaScript: ``{f4}`` is ``u[4]``, the fifth slot of the Float64Array."""
    return f"u[{key[1:]}]"


@dataclass(frozen=True)
class Dialect:
    """How one language writes the emitter's statements: templates, literals, names, statement ends.

    Attributes:
        language: its name, for messages.
        template: the :class:`~micrograph.ops.Op` attribute holding the language's expression template of
            an operation (``"code"`` or ``"js"``), ``{0}``, ``{1}`` standing for the arguments.
        nan: how the language (or the generated code's namespace) names nan.
        infinity: how it names +inf.
        name: the identifier of a field (``"f4"``: the value of u(5); ``"g4"``: its grad_table entry).
        end: what ends a statement.
        comment: what starts a comment.
    """

    language: str
    template: str
    nan: str
    infinity: str
    name: Callable[[str], str]
    end: str
    comment: str

    def literal(self, x: float) -> str:
        """A float as a literal of the language: ``repr`` for a finite float (valid Python and JavaScript),
        parenthesized when negative (-0.0 too), the language's names for nan and the infinities."""
        if math.isfinite(x):
            return f"({x!r})" if x < 0.0 or (x == 0.0 and math.copysign(1.0, x) < 0.0) else repr(x)
        if math.isnan(x):
            return self.nan
        return self.infinity if x > 0.0 else f"(-{self.infinity})"


PYTHON = Dialect("Python", "code", "NAN", "INF", _python_name, "", "#")
"""The compiler's Python dialect (:func:`micrograph.compile.compile_graph`)."""
JAVASCRIPT = Dialect("JavaScript", "js", "NaN", "Infinity", _javascript_name, ";", "//")
"""The compiler's JavaScript dialect (:mod:`micrograph.compile_javascript`, for the explorer page)."""

Node = tuple[int, Op | None, Sequence[int], float]
"""A node for the emitter: (position, operation or None for a constant, parents' positions, value)."""


class Emitter:
    """Algorithm 6.1 as statements of one dialect: u(i) <- f(i)(Pa(u(i))) for each node, in order.

    The one statement generator of both dialects. A statement is a text whose fields (``{f12}``: the value
    of the node at position 12) become the dialect's names when the statements are put into functions.
    A value that needs no name of its own (``named`` false: read once, by a template naming it once) is
    written into its consumer's expression, up to :data:`FUSE` operations per statement.
    """

    def __init__(self, dialect: Dialect, function: Callable[[Op], str]) -> None:
        """``function(op)``: the name to call an operation without this dialect's template by (or raise)."""
        self.dialect = dialect
        self.function = function
        self.templates: dict[Op, tuple[str, tuple[int, ...]]] = {}

    def template(self, op: Op) -> tuple[str, tuple[int, ...]]:
        """The expression of u = op(...) with fields {0}, {1}, and how often each field occurs."""
        found = self.templates.get(op)
        if found is None:
            text = expression_template(op, getattr(op, self.dialect.template), self.function)
            found = (text, tuple(text.count(f"{{{k}}}") for k in range(op.arity)))
            self.templates[op] = found
        return found

    def statement(self, key: str, expr: str, comment: str = "") -> str:
        """``{key} = expr``, the dialect's end, and a comment if one is given."""
        note = f" {self.dialect.comment} {comment}" if comment else ""
        return f"{{{key}}} = {expr}{self.dialect.end}{note}"

    def leaf_comment(self, j: int, leaf: Value) -> str:
        """The comment on the line of the input u(j+1): ``u(1) <- x_1, an input (variable)``, or with a
        constant's value in this dialect (``constant 2.0``)."""
        what = f"constant {self.dialect.literal(leaf.data)}" if leaf.is_constant else "variable"
        return f"u({j + 1}) <- x_{j + 1}, an input ({what})"

    def forward(
        self,
        nodes: Iterable[Node],
        named: Sequence[bool],
        comment: Callable[[int], str] | None = None,
    ) -> tuple[list[tuple[str, str]], list[int]]:
        """The statements computing ``nodes`` (in topological order) and the operations each computes.

        Args:
            nodes: the nodes to compute, :data:`Node` tuples; a parent not among them is read by its field.
            named: by position, whether a value gets a statement (and a name) of its own.
            comment: the comment of the statement of the node at a position, if any.

        Returns:
            ``(statements, sizes)``: ``(the field set, the text)`` pairs, and how many operations each has.
        """
        statements: list[tuple[str, str]] = []
        sizes: list[int] = []
        pending: dict[int, tuple[str, int]] = {}  # a value not named yet: its expression, its size
        for i, op, parents, data in nodes:
            if op is None:  # a constant: its literal
                expr, size = self.dialect.literal(data), 0
            else:
                args = []
                size = 1
                for p in parents:
                    e = pending.pop(p, None)
                    if e is not None and size + e[1] <= FUSE:
                        args.append(f"({e[0]})")
                        size += e[1]
                        continue
                    if e is not None:
                        statements.append((f"f{p}", self.statement(f"f{p}", e[0])))
                        sizes.append(e[1])
                    args.append(f"{{f{p}}}")
                expr = self.template(op)[0].format(*args)
            if named[i]:
                statements.append((f"f{i}", self.statement(f"f{i}", expr, comment(i) if comment else "")))
                sizes.append(size)
            else:
                pending[i] = (expr, size)
        return statements, sizes


class Positions(dict):  # type: ignore[type-arg]
    """The identifiers of the one function: every field named by its position, by the dialect's names
    (``{f4}`` is ``u5`` in Python, ``u[4]`` in JavaScript)."""

    def __init__(self, dialect: Dialect) -> None:
        super().__init__()
        self.name = dialect.name

    def __missing__(self, key: str) -> str:
        name = self[key] = self.name(key)
        return name
