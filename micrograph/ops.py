"""The operation table: every operation f(i) of micrograph, defined once.

Each :class:`Op` is a small named object (the autodidax idea) holding everything the rest of micrograph
needs to know about one operation:

* ``name``, ``symbol``: how it is called and how it is drawn;
* ``arity``: how many parents Pa(u) a node of this operation has (1 or 2);
* ``f``: the numeric forward function on floats, used by :class:`~micrograph.engine.Value` when a node is
  built and by Algorithm 6.1 when a graph is re-evaluated;
* ``derivs``: the derivative rule, one function per argument position k, returning the local derivative
  du/dx_k. Each takes the arguments and the node's own output, ``(x, out)`` or ``(x, y, out)``.
* ``code``: a Python expression template for the compiler (``{0}``, ``{1}`` are the arguments), or None
  to call ``f``.
* ``js``: the same computation as a JavaScript expression template, for the compiler's JavaScript dialect
  (the explorer page evaluates G and B with it): NaN where ``f`` finds no value (ValueError,
  ZeroDivisionError: outside the domain), an infinity where it overflows, as Python's messages tell them.

The derivative rules are written with micrograph's own operations: arithmetic operators and the Op
objects of this table, which are callable. Called on floats, a rule returns a float: that is the
symbol-to-number back-propagation of Algorithm 6.2. Called on :class:`~micrograph.engine.Value` nodes, the
same rule builds new nodes: that is the symbol-to-symbol back-propagation of Algorithms 6.5/6.6, whose
nodes form the backward subgraph B. Section 6.5.5 of the book says both approaches perform exactly the
same computations; here they literally run the same code. Because the rules call ops of this table,
the nodes they build can be differentiated again (section 6.5.10).

**One rule, four readings**:

* on floats, a number: :meth:`Op.local_derivative` (the naive chain rule, forward mode, Algorithm 6.4, the
  exercise checker) or the rule itself, :meth:`Op.rule`, which Algorithm 6.2's consumer index
  (:meth:`Graph.consumers`) holds and its loop calls directly, for speed;
* on Values, a node of B: :meth:`Op.local_derivative` inside :meth:`Op.bprop` (Algorithm 6.6);
* as source text: :func:`micrograph.templates.derivative_source` (the rule called on placeholders), for
  the compiler's Python dialect and for the compiled loop of ``Value.backward``'s pushes;
* as a labelled formula (``1 − u4 × u4`` on a step-through page): :meth:`Op.local_derivative` on leaves
  labelled with the arguments' names, whose nodes a view writes out with the drawing notation
  (:attr:`Op.symbol`, :attr:`Op.notation`).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.5-6.5.6, 6.5.10.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from micrograph.errors import NOT_FINITE, DomainError

__all__ = [
    "Op", "op_by_name", "OPS", "pow_const", "ADD", "SUB", "MUL", "DIV", "NEG", "POW", "EXP", "LOG", "TANH",
    "TANH_GRAD", "TANH_GRAD2", "SIGMOID", "SIGMOID_GRAD", "RELU", "STEP", "SIN", "COS", "SQRT", "XLOGY",
]  # fmt: skip

NOTATIONS = ("infix", "function", "prefix", "postfix")
"""How a node of an operation is written from its arguments' names (``Op.notation``)."""

Rule = Callable[..., Any]
"""A derivative rule ``(x, out) -> du/dx`` or ``(x, y, out) -> du/dx_k`` over floats or Values."""


class Op:
    """One operation f(i) of the book: name, symbol, arity, numeric forward and derivative rules.

    An ``Op`` is callable. ``op(x)`` or ``op(x, y)`` on floats returns ``op.f``'s float (after the domain
    check); on Values (or a mix of Values and numbers) it builds and returns a new node u = f(x, y).
    This is what lets the derivative rules run both on floats and on Values.

    Args:
        name: the operation's name, e.g. ``"tanh"``.
        symbol: how the operation is drawn, e.g. ``"tanh"`` or ``"×"``.
        arity: the number of parents, 1 or 2.
        f: the numeric forward function on floats. It may raise ``ValueError``, ``ArithmeticError``
            for inputs outside its domain; micrograph turns these into :class:`~micrograph.DomainError`.
        derivs: one derivative rule per argument position k: ``(x, out)`` or ``(x, y, out)`` -> du/dx_k.
        domain: the domain in words, for error messages, e.g. ``"x > 0"``.
        code: a Python expression template for the compiler, or None to call ``f``.
        js: a JavaScript expression template computing ``f`` (``{0}``, ``{1}`` are the arguments), giving
            NaN or an infinity where ``f`` raises or overflows; None if the operation has none.
        commutative: whether the arguments may be swapped (drawings label the edges otherwise).
        param: the constant of a parametrised operation (the exponent of ``x ** c``), else None.
        passes_non_finite: for each argument position k, whether u is inf, nan or an error whenever
            argument k is inf or nan and the others are finite (an inf or nan there cannot vanish in the
            result: True for ``+``, False for relu, tanh, exp, or a divisor, since x / inf = 0). The
            compiler checks a value of G for inf and nan only where one could vanish. Default: all False.
        notation: how a node is written from its arguments' names: ``"infix"`` (``u1 × u2``, the default
            for two arguments), ``"function"`` (``tanh(u3)``, the default for one), ``"prefix"``
            (``−u1``) or ``"postfix"`` (``u2^2``).

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6 (``get_operation``,
    ``op.bprop``).
    """

    __slots__ = ("name", "symbol", "arity", "f", "derivs", "domain", "code", "js", "commutative", "param",
                 "passes_non_finite", "notation")  # fmt: skip

    def __init__(
        self,
        name: str,
        symbol: str,
        arity: int,
        f: Callable[..., float],
        derivs: tuple[Rule, ...],
        *,
        domain: str = "all real x",
        code: str | None = None,
        js: str | None = None,
        commutative: bool = False,
        param: float | None = None,
        passes_non_finite: tuple[bool, ...] | None = None,
        notation: str | None = None,
    ) -> None:
        if arity not in (1, 2) or len(derivs) != arity:
            raise ValueError(f"op {name!r}: arity {arity} with {len(derivs)} derivative rules")
        if passes_non_finite is not None and len(passes_non_finite) != arity:
            raise ValueError(f"op {name!r}: arity {arity} with {len(passes_non_finite)} passes_non_finite")
        if notation is not None and notation not in NOTATIONS:
            raise ValueError(f"op {name!r}: notation {notation!r} is not one of {', '.join(NOTATIONS)}")
        self.name = name
        self.symbol = symbol
        self.arity = arity
        self.f = f
        self.derivs = derivs
        self.domain = domain
        self.code = code
        self.js = js
        self.commutative = commutative
        self.param = param
        self.passes_non_finite = passes_non_finite or (False,) * arity
        self.notation = notation or ("infix" if arity == 2 else "function")

    def __repr__(self) -> str:
        return f"<op {self.name}>" if self.param is None else f"<op {self.name} {self.param!r}>"

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled by name (``x ** c`` by its exponent): the table's rules are functions that do not pickle.

        Raises:
            pickle.PicklingError: for an operation that is not in the table (it cannot be found by name).
        """
        if self.param is not None and self.name == "pow":
            return pow_const, (self.param,)
        if OPS.get(self.name) is not self:
            import pickle  # only on this error: pickle is not needed to import micrograph

            raise pickle.PicklingError(f"{self!r} is not in micrograph's table of operations: no pickle")
        return op_by_name, (self.name,)

    def __call__(self, *args: Any) -> Any:
        """Apply the operation: a float on numbers, a new node on Values (section 6.5.5).

        A node is built by the argument's own class (its ``apply_op``), so this table needs no knowledge
        of :class:`~micrograph.engine.Value`, which is built on top of it.
        """
        if len(args) != self.arity:
            raise TypeError(f"{self.name} takes {self.arity} argument(s), got {len(args)}")
        for a in args:
            if type(a) is not float:
                build = getattr(type(a), "apply_op", None)
                if build is not None:
                    return build(self, args)
            if a - a != 0.0:  # inf or nan: no operation takes a non-finite argument
                raise DomainError(self, args, reason=NOT_FINITE)
        try:
            out = self.f(*args)
        except (ArithmeticError, ValueError) as e:
            raise DomainError(self, args, reason=e) from None
        if out - out != 0.0:
            raise DomainError(self, args, result=out)
        return out

    def local_derivative(self, k: int, args: tuple[Any, ...], out: Any) -> Any:
        """du/dx_k, the local derivative of this operation's output u with respect to argument k.

        The rule read on numbers (a float) or on Values (a node of B, through :meth:`bprop`), as the
        module's "four readings" list; Algorithm 6.2's loop calls the same function, :meth:`rule`, from
        the consumer index.

        Args:
            k: the argument position, 0-based.
            args: the arguments (floats, or Values for the symbolic case), in argument order.
            out: the node's output u (a float or the Value itself).

        Returns:
            The local derivative: a float for float arguments, a node of B for Values.

        Raises:
            ArithmeticError, ValueError: where the derivative does not exist (the caller names the node).

        Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6 (``op.bprop``).
        """
        return self.derivs[k](*args, out)

    def rule(self, k: int) -> Rule:
        """The derivative rule for argument k itself, ``(x, out)`` or ``(x, y, out)`` -> du/dx_k.

        For a caller that keeps it and calls it many times: Algorithm 6.2's consumer index
        (:meth:`micrograph.graph.Graph.consumers`); the compiler's call of a rule it cannot write out.
        """
        return self.derivs[k]

    def bprop(
        self, inputs: tuple[Any, ...], X: Any, G: Any, out: Any, derivatives: list[Any] | None = None
    ) -> Any:
        """``op.bprop(inputs, X, G)`` of Algorithm 6.6: sum_k G * du/dx_k over the positions k where X is.

        A node may take the same parent twice (``a * a``); each position is one edge and contributes
        one term, so the gradients add up at shared nodes.

        Args:
            inputs: the node's parents, ``get_inputs(C)``, in argument order (Values or floats).
            X: the parent the gradient is taken with respect to (compared by identity).
            G: the gradient of z with respect to this node's output, ``D`` in Algorithm 6.6.
            out: this node's own output u(i), which rules such as tanh's and exp's reuse.
            derivatives: if given, each local derivative du/dx_k the terms were formed from is appended to
                it as ``(k, d)``, d as the rule returned it (a node, or a number): what an observer of
                Algorithm 6.6 shows for the edge, without building it again.

        Returns:
            The sum of the terms, or None if X is not an input (or every term is exactly zero).

        Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, Algorithm 6.6.
        """
        total = None
        for k, x in enumerate(inputs):
            if x is X:
                d = self.local_derivative(k, inputs, out)
                if derivatives is not None:
                    derivatives.append((k, d))
                # the term G * d, or d itself when G is grad_table[z] = 1 (_built)
                term = d if _is_one(G) and _built(d, inputs, out) else scale(G, d)
                if term is not None:
                    total = term if total is None else total + term
        return total


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float))


def _built(d: Any, inputs: tuple[Any, ...], out: Any) -> bool:
    """Whether the rule built the local derivative d as a new node (not a number, not a node of G).

    With G = grad_table[z] = 1, the constant, such a d is the term itself (figure 6.10's dz/dy = f'(y));
    a node of G the rule returns (mul's other argument, exp's output) still gets its own node 1 × d, a
    node of B.
    """
    return d is not out and all(d is not a for a in inputs) and not _is_number(d)


def _is_one(G: Any) -> bool:
    """True for the constant node 1 (an implicit constant such as grad_table[z] = 1 of Algorithm 6.5)."""
    return getattr(G, "is_constant", False) and G.data == 1.0


def scale(G: Any, d: Any) -> Any:
    """G * d, without building a node when d is the number 0, 1 or -1 (keeps B small and readable).

    Returns None for an exact zero, so that a zero term is left out of a sum.
    """
    if isinstance(d, (int, float)):
        if d == 0:
            return None
        if d == 1:
            return G
        if d == -1:
            return -G
    return G * d


# ---------------------------------------------------------------------------------------------
# Numeric forward functions that need more than the math module (stability, explicit domains).


def _div(x: float, y: float) -> float:
    if y == 0.0:
        raise ZeroDivisionError("division by zero")
    return x / y


def _pow(x: float, y: float) -> float:
    if x < 0.0 and y != math.floor(y):
        raise ValueError("a negative base needs an integer exponent")
    if x == 0.0 and y < 0.0:
        raise ZeroDivisionError("zero to a negative power")
    return float(x**y)


def _xlogy(a: float, x: float) -> float:
    # a * log(x), with the limit 0 at a = 0 and x = 0 (the derivative of x ** y in y where x = 0, y > 0)
    if a == 0.0 and x == 0.0:
        return 0.0
    if x <= 0.0:
        raise ValueError("")
    return a * math.log(x)


def _log(x: float) -> float:
    if x <= 0.0:
        raise ValueError("")
    return math.log(x)


def _sqrt(x: float) -> float:
    if x < 0.0:
        raise ValueError("")
    return math.sqrt(x)


def _sigmoid(x: float) -> float:
    # Stable for large |x|: exp is only taken of a non-positive number.
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _tanh_grad(x: float) -> float:
    # 1 - tanh(x)^2 from x, as t * t: bit for bit the 1 - out * out of a rule that reads tanh's output
    t = math.tanh(x)
    return 1.0 - t * t


def _tanh_grad2(x: float) -> float:
    t = math.tanh(x)
    return -2.0 * t * (1.0 - t * t)


def _sigmoid_grad(x: float) -> float:
    # σ(x)(1 - σ(x)) from x: bit for bit the out * (1 - out) of a rule that reads σ's output
    s = _sigmoid(x)
    return s * (1.0 - s)


def _relu(x: float) -> float:
    return x if x > 0.0 else 0.0


def _step(x: float) -> float:
    return 1.0 if x > 0.0 else 0.0


# ---------------------------------------------------------------------------------------------
# The table. Derivative rules use arithmetic operators and the ops below, so that they work on
# floats and on Values alike. Rules that only need the output (exp, sqrt, x / y) reuse it.

ADD = Op(
    "add", "+", 2, operator.add,
    (lambda x, y, out: 1.0, lambda x, y, out: 1.0),
    code="{0} + {1}", js="{0} + {1}", commutative=True, passes_non_finite=(True, True),
)  # fmt: skip
SUB = Op(
    "sub", "−", 2, operator.sub,
    (lambda x, y, out: 1.0, lambda x, y, out: -1.0),
    code="{0} - {1}", js="{0} - {1}", passes_non_finite=(True, True),
)  # fmt: skip
MUL = Op(
    "mul", "×", 2, operator.mul,
    (lambda x, y, out: y, lambda x, y, out: x),
    code="{0} * {1}", js="{0} * {1}", commutative=True,
    passes_non_finite=(True, True),  # inf * 0 is nan
)  # fmt: skip
DIV = Op(
    "div", "÷", 2, _div,
    (lambda x, y, out: 1.0 / y, lambda x, y, out: -out / y),
    domain="y ≠ 0", code="{0} / {1}", js="({1} === 0 ? NaN : {0} / {1})",
    passes_non_finite=(True, False),  # inf / y is inf, nan or an error; x / inf is 0
)  # fmt: skip
NEG = Op(
    "neg", "−", 1, operator.neg, (lambda x, out: -1.0,), code="-{0}", js="-{0}",
    passes_non_finite=(True,), notation="prefix",
)  # fmt: skip
STEP = Op(
    "step", "H", 1, _step, (lambda x, out: 0.0,), code="1.0 if {0} > 0.0 else 0.0", js="({0} > 0 ? 1 : 0)"
)
RELU = Op(
    "relu", "ReLU", 1, _relu, (lambda x, out: STEP(x),),
    code="{0} if {0} > 0.0 else 0.0", js="({0} > 0 ? {0} : 0)",
)  # fmt: skip
EXP = Op(
    "exp", "exp", 1, math.exp, (lambda x, out: out,), domain="x < 709.78 (no overflow)",
    code="math.exp({0})", js="Math.exp({0})",
)  # fmt: skip
LOG = Op(
    "log", "log", 1, _log, (lambda x, out: 1.0 / x,), domain="x > 0",
    code="math.log({0})", js="({0} > 0 ? Math.log({0}) : NaN)",
    passes_non_finite=(True,),  # log(inf) = inf, log(nan) = nan, log(-inf) raises
)  # fmt: skip
# tanh and σ have their derivatives as operations of their own, f'(x) reading the argument x, as figure
# 6.10 draws f'(y), f'(x), f'(w) and as TensorFlow has TanhGrad and SigmoidGrad: B then holds one node per
# local derivative. Their own rules use the table again, so B can be differentiated once more.
TANH_GRAD2: Op = Op(
    "tanh_grad2", "tanh″", 1, _tanh_grad2,
    (lambda x, out: -2.0 * (TANH_GRAD(x) * TANH_GRAD(x) + TANH(x) * out),),
    js="(-2 * Math.tanh({0}) * (1 - Math.tanh({0}) * Math.tanh({0})))",
)  # fmt: skip
"""tanh″(x) = -2 tanh(x)(1 - tanh(x)²), so that a second derivative is one node per step too; its
derivative, tanh‴(x) = -2 (tanh′(x)² + tanh(x) tanh″(x)), is written with the table's operations."""
TANH_GRAD: Op = Op(
    "tanh_grad", "tanh′", 1, _tanh_grad, (lambda x, out: TANH_GRAD2(x),),
    js="(1 - Math.tanh({0}) * Math.tanh({0}))",
)  # fmt: skip
"""tanh′(x) = 1 - tanh(x)², the derivative of tanh as an operation; its derivative is tanh″(x)."""
TANH: Op = Op(
    "tanh", "tanh", 1, math.tanh, (lambda x, out: TANH_GRAD(x),),
    code="math.tanh({0})", js="Math.tanh({0})",
)  # fmt: skip
SIGMOID_GRAD: Op = Op(
    "sigmoid_grad", "σ′", 1, _sigmoid_grad, (lambda x, out: out * (1.0 - 2.0 * SIGMOID(x)),),
    js="(({0} >= 0 ? 1 / (1 + Math.exp(-{0})) : Math.exp({0}) / (1 + Math.exp({0})))"
    " * (1 - ({0} >= 0 ? 1 / (1 + Math.exp(-{0})) : Math.exp({0}) / (1 + Math.exp({0})))))",
)  # fmt: skip
"""σ′(x) = σ(x)(1 - σ(x)), the derivative of σ as an operation; its derivative is σ′(x)(1 - 2σ(x))."""
SIGMOID: Op = Op(
    "sigmoid", "σ", 1, _sigmoid, (lambda x, out: SIGMOID_GRAD(x),),
    js="({0} >= 0 ? 1 / (1 + Math.exp(-{0})) : Math.exp({0}) / (1 + Math.exp({0})))",
)  # fmt: skip
SQRT = Op(
    "sqrt", "√", 1, _sqrt, (lambda x, out: 0.5 / out,),
    domain="x ≥ 0 (x > 0 for the derivative)", code="math.sqrt({0})", js="Math.sqrt({0})",
    passes_non_finite=(True,),
)  # fmt: skip
SIN: Op = Op(
    "sin", "sin", 1, math.sin, (lambda x, out: COS(x),), domain="finite x",
    code="math.sin({0})", js="Math.sin({0})", passes_non_finite=(True,),  # sin(inf) raises
)  # fmt: skip
COS: Op = Op(
    "cos", "cos", 1, math.cos, (lambda x, out: -SIN(x),), domain="finite x",
    code="math.cos({0})", js="Math.cos({0})", passes_non_finite=(True,),
)  # fmt: skip
XLOGY = Op(
    "xlogy", "·log", 2, _xlogy,
    (lambda a, x, out: LOG(x), lambda a, x, out: a / x),
    domain="x > 0, or a = 0 with x = 0 (the limit 0)",
    js="({0} === 0 && {1} === 0 ? 0 : {1} > 0 ? {0} * Math.log({1}) : NaN)",
)  # fmt: skip
"""a · log(x), 0 at a = x = 0: d(x ** y)/dy = x ** y · log(x), whose limit at x = 0, y > 0 is 0."""
POW = Op(
    "pow", "^", 2, _pow,
    (lambda x, y, out: y * x ** (y - 1.0), lambda x, y, out: XLOGY(out, x)),
    domain="x > 0, or x < 0 with an integer y, or x = 0 with y ≥ 0 (d/dy needs x > 0, or x = 0 with y > 0)",
    js="({0} === 0 && {1} < 0 ? NaN : Math.pow({0}, {1}))",
)  # fmt: skip


@lru_cache(maxsize=256)
def pow_const(c: float) -> Op:
    """The operation x ** c for a constant exponent c (micrograd's ``__pow__``), one Op per c.

    Args:
        c: the exponent, a finite float.

    Returns:
        An arity-1 Op named ``"pow"`` with ``param == c``; its derivative c * x ** (c - 1) is itself
        built from ``pow_const(c - 1)``, so it can be differentiated again.

    Raises:
        ValueError: if c is not finite.
    """
    if not math.isfinite(c):
        raise ValueError(f"the exponent of x ** c must be finite, got {c!r}")

    def f(x: float) -> float:
        return _pow(x, c)

    def d(x: Any, out: Any) -> Any:
        if c == 0.0:
            return 0.0
        if c == 1.0:
            return 1.0
        if c == 2.0:
            return 2.0 * x
        return c * pow_const(c - 1.0)(x)

    shown = int(c) if c == int(c) and abs(c) < 1e16 else c  # 1e308 is shown as 1e+308, not 309 digits
    js = f"Math.pow({{0}}, {c!r})"
    js = f"({{0}} === 0 ? NaN : {js})" if c < 0.0 else js  # zero to a negative power: no value, as in f
    return Op(
        "pow", f"^{shown}", 1, f, (d,),
        domain="x > 0, x < 0 with an integer c, or x = 0 with c ≥ 0 (c = 0 or c ≥ 1 for the derivative)",
        js=js, param=c, notation="postfix",
    )  # fmt: skip


OPS: dict[str, Op] = {
    op.name: op
    for op in (ADD, SUB, MUL, DIV, NEG, POW, EXP, LOG, TANH, TANH_GRAD, TANH_GRAD2, SIGMOID, SIGMOID_GRAD,
               RELU, STEP, SIN, COS, SQRT, XLOGY)
}  # fmt: skip
"""Every fixed operation by name (``pow_const(c)`` makes the x ** c family on demand)."""


def op_by_name(name: str) -> Op:
    """The operation of the table called ``name`` (how a pickled operation is found again).

    Raises:
        KeyError: if no operation of the table has that name.
    """
    return OPS[name]
