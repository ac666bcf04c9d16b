"""A safe parser for expressions typed on the command line: ``"tanh(tanh(tanh(w)))"`` -> a graph of Values.

The text is parsed with Python's :mod:`ast` module and then checked against a whitelist; nothing is ever
passed to ``eval``. Allowed are:

* numeric literals (``2``, ``0.5``, ``1e-3``);
* names of variables, each bound to a number by the caller (``--at w=0.5`` on the command line);
* the binary operators ``+ - * / **`` and unary ``-`` (and unary ``+``);
* calls of the functions in :data:`FUNCTIONS` with one positional argument: ``exp log tanh sigmoid relu
  sin cos sqrt``.

Everything else (attribute access, subscripts, other calls, keyword arguments, lambdas, comprehensions,
comparisons, strings ...) is refused with an :class:`ExprError` that says what is allowed and points at
the offending column. Building the graph walks the syntax tree with an explicit stack, not recursion.

Each variable becomes one leaf :class:`~micrograph.engine.Value` labelled with its name, so that a name
used twice (``w * w``) is one node with two edges, as in the book's figures.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1 (computational graphs).
"""

from __future__ import annotations

import ast
import difflib
import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from micrograph import ops
from micrograph.engine import Value
from micrograph.errors import typed_repr

__all__ = [
    "ALLOWED",
    "FUNCTIONS",
    "NOT_FINITE",
    "ExprError",
    "bind",
    "build",
    "parse",
    "parse_binding",
    "parse_bindings",
    "variables",
]

FUNCTIONS: dict[str, Callable[[Value], Value]] = {
    "exp": Value.exp,
    "log": Value.log,
    "tanh": Value.tanh,
    "sigmoid": Value.sigmoid,
    "relu": Value.relu,
    "sin": Value.sin,
    "cos": Value.cos,
    "sqrt": Value.sqrt,
}
"""The functions an expression may call, each with exactly one argument."""

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.USub: lambda a: -a, ast.UAdd: lambda a: a}

ALLOWED = (
    "allowed: numbers, variable names bound with --at, + - * / ** and unary -, "
    "and the functions " + " ".join(FUNCTIONS) + " with one argument each"
)
"""One line saying what an expression may contain, appended to every refusal."""

NOT_FINITE = "the value must be finite"
"""Why a value that is no finite number (``nan``, ``inf``, ``1e400``) is refused: the words of ``--at`` and of
the explorer's number boxes."""

MAX_LENGTH = 10_000
"""Longest expression accepted (Python's own parser gives up on very deep nesting)."""

_FORBIDDEN_NAMES = {
    ast.Attribute: "attribute access",
    ast.Subscript: "subscripts",
    ast.Lambda: "lambda",
    ast.ListComp: "comprehensions",
    ast.SetComp: "comprehensions",
    ast.DictComp: "comprehensions",
    ast.GeneratorExp: "comprehensions",
    ast.Compare: "comparisons",
    ast.BoolOp: "and/or",
    ast.IfExp: "conditional expressions",
    ast.NamedExpr: "assignment (:=)",
    ast.JoinedStr: "strings",
    ast.List: "lists",
    ast.Tuple: "tuples",
    ast.Dict: "dicts",
    ast.Set: "sets",
    ast.Starred: "starred arguments",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.Slice: "slices",
}


class ExprError(ValueError):
    """An expression that cannot be parsed or is not allowed.

    Attributes:
        text (str): the expression as typed.
        col (int | None): the 0-based column of the problem, when known.
        reason (str): the message without the caret picture.

    ``str(error)`` is one line; :meth:`excerpt` gives the expression (around the column, if long) to quote
    in that line, and :meth:`caret` the expression and a caret under the column, on two lines of their own.
    """

    def __init__(self, reason: str, text: str, col: int | None = None, *, allowed: bool = True) -> None:
        self.reason = reason
        self.text = text
        self.col = col
        where = f" at column {col + 1}" if col is not None else ""
        super().__init__(f"{reason}{where}" + (f"; {ALLOWED}" if allowed else ""))

    def _window(self) -> tuple[str, int]:
        """The expression cut to 70 characters around the column (``...`` where cut), and where the column
        falls in it."""
        col = self.col or 0
        start = max(0, col - 35)
        prefix = "..." if start else ""
        suffix = "..." if start + 70 < len(self.text) else ""
        return f"{prefix}{self.text[start : start + 70]}{suffix}", len(prefix) + col - start

    def excerpt(self) -> str:
        """The expression as one line, cut to 70 characters around the column when longer (its line breaks
        and tabs shown as spaces)."""
        return " ".join(self._window()[0].split())

    def caret(self) -> str:
        """Two lines: the expression and a ``^`` under the offending column ('' when the column is unknown).

        Long expressions are cut to a window of 70 characters around the column.
        """
        if self.col is None or "\n" in self.text:
            return ""
        shown, at = self._window()
        return f"  {shown}\n  {' ' * at}^"


def _col(node: ast.AST) -> int | None:
    return getattr(node, "col_offset", None)


def parse(text: str) -> ast.Expression:
    """Parse and check an expression against the whitelist.

    Args:
        text: the expression, e.g. ``"tanh(w) * x + 2"``.

    Returns:
        The checked syntax tree (an :class:`ast.Expression`).

    Raises:
        ExprError: a syntax error (with its column), an empty or too long text, or a construct outside
            the whitelist (attribute access, other calls, lambda, comprehension, subscript, strings ...).
    """
    if not isinstance(text, str):
        raise TypeError(f"an expression is a str, got {typed_repr(text)}")
    if not text.strip():
        raise ExprError("the expression is empty", text)
    if len(text) > MAX_LENGTH:
        raise ExprError(
            f"the expression is {len(text)} characters long, more than {MAX_LENGTH}", text, allowed=False
        )
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        col = (e.offset - 1) if e.offset is not None and (e.lineno in (None, 1)) else None
        if col is not None and col < 0:  # offset 0: the parser ran out of text ("x +"): the end is the place
            col = len(text.strip())
        stripped_lead = len(text) - len(text.lstrip())
        raise ExprError(
            f"syntax error: {e.msg}", text, None if col is None else col + stripped_lead, allowed=False
        ) from None
    except (RecursionError, MemoryError):
        raise ExprError("the expression is nested too deeply for Python's parser", text) from None
    lead = len(text) - len(text.lstrip())
    for node in ast.walk(tree):
        _check(node, text, lead)
    return tree


def _check(node: ast.AST, text: str, lead: int) -> None:
    col = _col(node)
    col = None if col is None else col + lead
    if isinstance(node, (ast.Expression, ast.Load, ast.Name, ast.operator, ast.unaryop)):
        if isinstance(node, ast.operator) and type(node) not in _BINARY:
            raise ExprError(f"the operator {type(node).__name__} is not allowed", text)
        if isinstance(node, ast.unaryop) and type(node) not in _UNARY:
            raise ExprError(f"the operator {type(node).__name__} is not allowed", text)
        return
    if isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ExprError(f"only real numbers are allowed as literals, not {v!r}", text, col)
        return
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY:
            raise ExprError(f"the operator {_op_text(node.op)} is not allowed", text, col)
        return
    if isinstance(node, ast.UnaryOp):
        if type(node.op) not in _UNARY:
            raise ExprError(f"the operator {_op_text(node.op)} is not allowed", text, col)
        return
    if isinstance(node, ast.Call):
        f = node.func
        if not isinstance(f, ast.Name):
            raise ExprError("only calls of plain function names are allowed", text, col)
        if f.id not in FUNCTIONS:
            close = difflib.get_close_matches(f.id, FUNCTIONS, n=1)
            hint = f"; did you mean {close[0]}?" if close else f" (the functions are {' '.join(FUNCTIONS)})"
            raise ExprError(f"calling {f.id}() is not allowed{hint}", text, col)
        if node.keywords or len(node.args) != 1:
            raise ExprError(f"{f.id}() takes exactly one argument", text, col)
        return
    what = _FORBIDDEN_NAMES.get(type(node), type(node).__name__)
    raise ExprError(f"{what}: not allowed", text, col)


def _op_text(op: ast.AST) -> str:
    return {
        ast.FloorDiv: "//",
        ast.Mod: "%",
        ast.MatMult: "@",
        ast.BitAnd: "&",
        ast.BitOr: "|",
        ast.BitXor: "^",
        ast.LShift: "<<",
        ast.RShift: ">>",
        ast.Invert: "~",
        ast.Not: "not",
    }.get(type(op), type(op).__name__)


def variables(text: str) -> list[str]:
    """The variable names an expression uses, in order of first appearance (function names excluded).

    Raises:
        ExprError: as :func:`parse`.
    """
    tree = parse(text)
    calls = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    names = sorted(
        ((n.col_offset, n.id) for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in calls),
    )
    return list(dict.fromkeys(name for _, name in names))


def build(text: str, env: Mapping[str, Any]) -> Value:
    """Build the graph of an expression over the variables in ``env``; return its output node z.

    Args:
        text: the expression, e.g. ``"tanh(tanh(tanh(w)))"``.
        env: a value for every variable: a Value (used as the leaf) or a real number (wrapped as a leaf
            Value labelled with the name).

    Returns:
        The output node. A bare variable (``"w"``) returns its leaf; a bare number a constant-free leaf.

    Raises:
        ExprError: as :func:`parse`, and for a name that ``env`` does not bind (the message lists the
            names that are bound).
        DomainError: an operation applied outside its domain (``log(0)``, ``sqrt(-1)``, ``1/0``).
        TypeError: ``env`` is not a mapping, or a value in it is neither a Value nor a real number.
    """
    if not isinstance(env, Mapping):
        raise TypeError(f"build(text, env): env must be a mapping {{name: number}}, got {type(env).__name__}")
    tree = parse(text)
    lead = len(text) - len(text.lstrip())
    leaves = _leaves(env)
    _check_bound(tree, text, lead, leaves)
    out = _evaluate(tree, text, lead, leaves)
    return out if isinstance(out, Value) else Value(out, label=text.strip())


def _leaves(env: Mapping[str, Any]) -> dict[str, Value]:
    """Each bound name's leaf: the Value given, or a new leaf labelled with the name."""
    leaves: dict[str, Value] = {}
    for name, v in env.items():
        if isinstance(v, Value):
            leaves[name] = v
        elif isinstance(v, numbers.Real) and not isinstance(v, bool):
            leaves[name] = Value(float(v), label=name)
        else:
            raise TypeError(f"the value of {name!r} must be a real number or a Value, got {typed_repr(v)}")
    return leaves


def _check_bound(tree: ast.Expression, text: str, lead: int, leaves: Mapping[str, Value]) -> None:
    """An ExprError at the first variable that ``leaves`` does not bind."""
    calls = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and id(n) not in calls and n.id not in leaves:
            bound = ", ".join(sorted(leaves)) or "none"
            if n.id in FUNCTIONS:
                hint = f"{n.id} is a function: call it"
            else:
                hint = f"bind it with --at {n.id}=NUMBER"
            raise ExprError(
                f"unknown name {n.id!r} ({hint}; names bound: {bound})", text, n.col_offset + lead
            )


def _children(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    assert isinstance(node, ast.Call)
    return list(node.args)


def _evaluate(tree: ast.Expression, text: str, lead: int, leaves: Mapping[str, Value]) -> Any:
    """The checked tree's value: post-order with an explicit stack (no recursion). Each node is visited,
    its children pushed, and it is evaluated once its children's results are on the result stack."""
    results: list[Any] = []
    stack: list[tuple[ast.AST, bool]] = [(tree.body, False)]
    while stack:
        node, ready = stack.pop()
        if isinstance(node, ast.Constant):
            results.append(_number(node, text, lead))
        elif isinstance(node, ast.Name):
            results.append(leaves[node.id])
        elif not ready:
            stack.append((node, True))
            stack += [(child, False) for child in reversed(_children(node))]
        elif isinstance(node, ast.BinOp):
            b, a = results.pop(), results.pop()
            results.append(_binary(node, a, b))
        elif isinstance(node, ast.UnaryOp):
            results.append(_UNARY[type(node.op)](results.pop()))
        else:
            assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            arg = results.pop()
            if isinstance(arg, Value):
                results.append(FUNCTIONS[node.func.id](arg))
            else:  # a function of a number is a number: exp(1) folds like 2*1
                results.append(ops.OPS[node.func.id](arg))
    return results.pop()


def _number(node: ast.Constant, text: str, lead: int) -> float:
    """A number of the expression as a float; an ExprError (with its column) if it is not a finite one."""
    try:
        x = float(node.value)  # type: ignore[arg-type]
    except OverflowError:
        x = math.inf
    if not math.isfinite(x):
        shown = text.strip()[node.col_offset : node.end_col_offset or node.col_offset + 12]
        shown = shown if len(shown) <= 24 else f"{shown[:12]}... ({len(shown)} characters)"
        raise ExprError(
            f"the number {shown} is too large for a float (at most 1.8e308)",
            text,
            node.col_offset + lead,
            allowed=False,
        )
    return x


_FOLD = {ast.Add: ops.ADD, ast.Sub: ops.SUB, ast.Mult: ops.MUL, ast.Div: ops.DIV, ast.Pow: ops.POW}


def _binary(node: ast.BinOp, a: Any, b: Any) -> Any:
    if not isinstance(a, Value) and not isinstance(b, Value):
        # Both numbers: fold to a number with the operation table's numeric path (domain errors read the
        # same as for nodes), so that x ** (2*1) is x ** 2.0, one node, as written x ** 2.
        return _FOLD[type(node.op)](a, b)
    return _BINARY[type(node.op)](a, b)


def parse_binding(text: str, option: str = "--at") -> tuple[str, float]:
    """Parse ``NAME=NUMBER`` (the command line's ``--at w=0.5``) into ``("w", 0.5)``.

    Args:
        text: the words ``NAME=NUMBER``.
        option: where the user typed them, for the messages: the command line's ``"--at"``, or a page's
            box (``"the Values box"``).

    Raises:
        ExprError: if the text is not a valid identifier, ``=``, and a finite real number.
    """
    where = option if option.startswith("-") else f"in {option},"
    name, sep, number = text.partition("=")
    name, number = name.strip(), number.strip()
    if not sep or not name.isidentifier():
        raise ExprError(f"{option} expects NAME=NUMBER such as w=0.5, got {text!r}", text, allowed=False)
    if name in FUNCTIONS:
        raise ExprError(
            f"{where} {text!r}: {name!r} is a function name and cannot be a variable", text, allowed=False
        )
    try:
        if not number.isascii():  # float() reads other scripts' digits: '١٢' would be 12
            raise ValueError(number)
        x = float(number)
    except ValueError:
        raise ExprError(
            f"{where} {text!r}: {number!r} is not a number (write it with the digits 0-9)",
            text,
            allowed=False,
        ) from None
    if not math.isfinite(x):
        raise ExprError(f"{where} {text!r}: {NOT_FINITE}", text, allowed=False)
    return name, x


def parse_bindings(texts: Iterable[str]) -> dict[str, float]:
    """Parse the command line's ``--at`` words (``["x=1", "y=2"]``) into ``{"x": 1.0, "y": 2.0}``.

    Raises:
        ExprError: a word that :func:`parse_binding` refuses, or a name given twice.
    """
    env: dict[str, float] = {}
    for text in texts:
        name, value = parse_binding(text)
        if name in env:
            raise ExprError(
                f"--at {name}=... is given twice ({env[name]:g} and {value:g}); give it once",
                text,
                allowed=False,
            )
        env[name] = value
    return env


def bind(
    text: str, at: Mapping[str, Any], *, wrt: Iterable[str] = (), option: str = "--at"
) -> dict[str, float]:
    """Check the values for an expression's variables; return them as floats, in the expression's order.

    One check for every caller that runs an expression on values (the command line's ``--at`` and
    ``--wrt``, a lesson's ``expr=``/``at=``): every variable has a value, every value is for a variable,
    each value is a finite real number, and each name in ``wrt`` is a variable.

    Args:
        text: the expression.
        at: a value for each variable, by name.
        wrt: names to differentiate by (the command line's ``--wrt``).
        option: how the caller's user gives the values, for the messages: the command line's ``"--at"``,
            Python's ``"at"``, or a page's box (``"the Values box"``).

    Returns:
        ``{name: value}`` for every variable of ``text``, in order of first appearance.

    Raises:
        ExprError: as :func:`parse`; a variable without a value; a value for a name the expression does not
            use; a value that is not a finite real number; a name in ``wrt`` that is not a variable.
    """
    names = variables(text)  # checks the whitelist before anything else
    if not isinstance(at, Mapping):
        raise ExprError(
            f"{option} must map each variable to a number, got {type(at).__name__}", text, allowed=False
        )
    uses = f"it uses {', '.join(names) or 'none'}"
    missing = [n for n in names if n not in at]
    if missing:
        give = (
            " ".join(f"--at {n}=NUMBER" for n in missing)
            if option == "--at"
            else (f"at={{{', '.join(repr(n) + ': 0.5' for n in names)}}}")
            if option == "at"
            else f"{', '.join(n + '=0.5' for n in names)} in {option}"
        )
        raise ExprError(
            f"no value for {', '.join(missing)}: {text.strip()!r} needs a value for {', '.join(missing)} "
            f"(give {give})",
            text,
            allowed=False,
        )
    for n in at:
        if n not in names:
            raise ExprError(
                f"{option} names {n!r}, which the expression does not use: it has no variable {n!r} ({uses})",
                text,
                allowed=False,
            )
    for n in wrt:
        if n not in names:
            raise ExprError(f"--wrt {n}: the expression has no variable {n!r} ({uses})", text, allowed=False)
    values: dict[str, float] = {}
    for n in names:
        x = at[n]
        if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(x):
            where = f"{option}[{n!r}]" if option == "at" else f"{option}: {n}"
            raise ExprError(f"{where} must be a finite number, got {x!r}", text, allowed=False)
        values[n] = float(x)
    return values
