"""The operation table as code: each operation's expression and each derivative rule, written out as text.

The generated code of micrograph (the compiler's Python and JavaScript dialects, and the compiled loop of
``Value.backward``'s pushes) holds no formula of its own. It is written from the table:

* an operation's **expression**: its template in the dialect (:attr:`Op.code <micrograph.ops.Op>` for
  Python, :attr:`Op.js <micrograph.ops.Op>` for JavaScript, ``{0}``, ``{1}`` standing for the arguments),
  or a call of a name bound to its numeric function where it has none (:func:`expression_template`);
* a **derivative rule** du/dx_k written out (:func:`derivative_source`): the rule itself called on
  placeholders (:class:`Source`) that write down each operation as it is applied, so the text computes
  what the rule computes, operation for operation, in the same order: on floats, the same result bit for
  bit. This is the third of a rule's readings (see :mod:`micrograph.ops`).

Only an operation of micrograph's own table (:func:`trusted`) has its template or its name put into code;
any other is called through a name, so no text from outside the table is ever compiled.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.5 and 6.5.6.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from micrograph.ops import OPS, Op, pow_const

__all__ = ["Source", "derivative_source", "expression_template", "trusted", "op_text"]


def trusted(op: Op) -> bool:
    """Whether ``op`` is an operation of micrograph's own table (whose template and name may go into code)."""
    if OPS.get(op.name) is op:
        return True
    return op.name == "pow" and op.param is not None and op.arity == 1 and pow_const(op.param) is op


def op_text(op: Op) -> str:
    """An operation's name for a comment (never the name of an operation outside the table)."""
    if not trusted(op):
        return "an operation outside micrograph's table"
    return op.name if op.param is None else f"pow_const({op.param!r})"


def expression_template(op: Op, template: str | None, function: Callable[[Op], str]) -> str:
    """The expression of ``op`` with fields ``{0}``, ``{1}`` for its arguments, in a dialect.

    Args:
        op: the operation.
        template: the dialect's template of ``op`` (``op.code`` or ``op.js``), or None if it has none.
        function: the name to call ``op`` by where its template cannot be used (or it raises).

    Returns:
        ``template`` for an operation of the table that has one, else a call of ``function(op)``.
    """
    if template is not None and trusted(op):
        return template
    return f"{function(op)}({', '.join(f'{{{k}}}' for k in range(op.arity))})"


def derivative_source(op: Op, k: int) -> tuple[str, dict[str, Callable[..., float]]]:
    """The derivative rule du/dx_k of ``op`` written out as a Python expression in ``x``, ``y`` and ``out``.

    The rule itself is called on placeholders (:class:`Source`), so the text is what the rule computes,
    operation for operation, in the same order: on floats it gives the same result bit for bit.
    Operations the rule calls are written with their code templates, or as calls to their numeric
    functions (returned by name, for the namespace the text is run in).

    Returns:
        ``(text, functions)``: ``derivative_source(MUL, 0)`` is ``("y", {})``.

    Raises:
        TypeError: a rule that does more than arithmetic on its arguments (a branch on a value) cannot
            be written out; callers then call the rule.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6 (``op.bprop``).
    """
    functions: dict[str, Callable[..., float]] = {}
    names = (*("x", "y")[: op.arity], "out")
    args = [Source(name, functions) for name in names]
    return Source.text_of(op.derivs[k](*args)), functions


class Source:
    """A placeholder for a float in a derivative rule: arithmetic on it writes Python source text.

    :func:`derivative_source` calls a rule on placeholders named ``x``, ``y``, ``out``; every operator and
    every operation of the table the rule uses adds to the text, parenthesised, in the order the rule
    computes it. Operations are written with their code templates (those of this table) or as calls to
    their numeric functions, collected in ``functions`` under generated names.
    """

    __slots__ = ("text", "functions")

    def __init__(self, text: str, functions: dict[str, Callable[..., float]]) -> None:
        self.text = text
        self.functions = functions

    @staticmethod
    def text_of(x: Any) -> str:
        """The source of a placeholder or a number (a rule may return a constant).

        Raises:
            TypeError: x is neither (a rule returned something that is not a number).
        """
        if isinstance(x, Source):
            return x.text
        if type(x) in (int, float) and math.isfinite(x):
            return repr(float(x)) if x >= 0 else f"({float(x)!r})"
        raise TypeError(f"a derivative rule produced {x!r}, which cannot be written as source")

    def _binary(self, symbol: str, other: Any, reflected: bool = False) -> Source:
        a, b = Source.text_of(self), Source.text_of(other)
        return Source(f"({b} {symbol} {a})" if reflected else f"({a} {symbol} {b})", self.functions)

    def __add__(self, o: Any) -> Source:
        return self._binary("+", o)

    def __radd__(self, o: Any) -> Source:
        return self._binary("+", o, True)

    def __sub__(self, o: Any) -> Source:
        return self._binary("-", o)

    def __rsub__(self, o: Any) -> Source:
        return self._binary("-", o, True)

    def __mul__(self, o: Any) -> Source:
        return self._binary("*", o)

    def __rmul__(self, o: Any) -> Source:
        return self._binary("*", o, True)

    def __truediv__(self, o: Any) -> Source:
        return self._binary("/", o)

    def __rtruediv__(self, o: Any) -> Source:
        return self._binary("/", o, True)

    def __pow__(self, o: Any) -> Source:
        return self._binary("**", o)

    def __rpow__(self, o: Any) -> Source:
        return self._binary("**", o, True)

    def __neg__(self) -> Source:
        return Source(f"(-{self.text})", self.functions)

    def __bool__(self) -> bool:
        raise TypeError("a derivative rule branched on a value")

    @staticmethod
    def apply_op(op: Op, args: tuple[Any, ...]) -> Source:
        """An operation of the rule: its code template (this table's) or a call to its numeric function."""
        functions = next(a.functions for a in args if isinstance(a, Source))
        texts = [Source.text_of(a) for a in args]
        if trusted(op) and op.code is not None:
            return Source(f"({op.code.format(*texts)})", functions)
        name = next((n for n, f in functions.items() if f is op.f), f"_f{len(functions)}")
        functions[name] = op.f
        return Source(f"{name}({', '.join(texts)})", functions)
