"""The one catalogue of test expressions, each written once and built three independent ways.

A :class:`Case` holds a ``build(ns, *variables)`` function written over a *namespace* ``ns`` of
operations. The same function builds:

* a micrograph graph, with :class:`~micrograph.engine.Value` nodes (:data:`VALUES`);
* an exact sympy expression, with sympy symbols (:data:`SYMPY`), differentiated exactly by sympy;
* a plain-float evaluation with the :mod:`math` module (:class:`FloatNamespace`), which knows nothing of
  micrograph and is the function that central finite differences differentiate.

Arithmetic (``+ - * / **``, unary ``-``, reflected forms) is written with Python's operators, which all
three kinds of objects support; functions (``ns.tanh(x)`` ...) come from the namespace.

Other test files (the compiler's, for example) use::

    from catalogue import CATALOGUE, Case
    z, xs = case.build_values()            # output z and the variables, in order
    expr, symbols = case.sympy()           # the same expression in sympy
    case.evaluate(point)                   # plain floats
    case.sympy_derivative(("x", "x"))      # exact d2z/dx2 at the case's point, as a float

Every case is evaluated at points inside its domains and away from relu's kink (``min_kink`` checks it).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5 (figure 6.9, Algorithms 6.1,
6.2, 6.5, 6.6).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy

from micrograph import Value, ops

_t = sympy.Symbol("t", real=True)
_TANH_GRAD = sympy.diff(sympy.tanh(_t), _t)  # the derivative operations' oracles: sympy differentiates
_TANH_GRAD2 = sympy.diff(sympy.tanh(_t), _t, 2)
_SIGMOID_GRAD = sympy.diff(1 / (1 + sympy.exp(-_t)), _t)

__all__ = [
    "CATALOGUE",
    "SYMPY",
    "VALUES",
    "Case",
    "FloatNamespace",
    "SympyNamespace",
    "ValueNamespace",
    "by_name",
    "count_edges",
    "close",
    "sympy_value",
]


# ---------------------------------------------------------------------------------------------
# The namespaces: one per way of building an expression.


class ValueNamespace:
    """Builds micrograph nodes: ``ns.tanh(x)`` is ``x.tanh()`` on a :class:`Value`."""

    kind = "values"

    @staticmethod
    def var(name: str, x: float) -> Value:
        return Value(x, label=name)

    # the methods, called as functions: ns.tanh(x) is Value.tanh(x), that is x.tanh() (and SAME_NAMES)
    sigmoid = staticmethod(Value.sigmoid)
    relu = staticmethod(Value.relu)

    # the derivative operations of the table, as operations of G in their own right
    tanh_grad = staticmethod(ops.TANH_GRAD)
    tanh_grad2 = staticmethod(ops.TANH_GRAD2)
    sigmoid_grad = staticmethod(ops.SIGMOID_GRAD)


class SympyNamespace:
    """Builds exact sympy expressions over real symbols; relu is a Piecewise, sigmoid 1 / (1 + e^-x)."""

    kind = "sympy"

    @staticmethod
    def var(name: str, x: float) -> sympy.Symbol:
        return sympy.Symbol(name, real=True)

    @staticmethod
    def sigmoid(x: Any) -> Any:
        return 1 / (1 + sympy.exp(-x))

    @staticmethod
    def relu(x: Any) -> Any:
        return sympy.Piecewise((x, x > 0), (0, True))

    @staticmethod
    def tanh_grad(x: Any) -> Any:
        return _TANH_GRAD.subs(_t, x)

    @staticmethod
    def tanh_grad2(x: Any) -> Any:
        return _TANH_GRAD2.subs(_t, x)

    @staticmethod
    def sigmoid_grad(x: Any) -> Any:
        return _SIGMOID_GRAD.subs(_t, x)


class FloatNamespace:
    """Evaluates with plain floats and :mod:`math`; records how close relu's arguments come to its kink."""

    kind = "floats"

    def __init__(self) -> None:
        self.relu_args: list[float] = []

    @staticmethod
    def var(name: str, x: float) -> float:
        return float(x)

    @staticmethod
    def sigmoid(x: float) -> float:
        return 1.0 / (1.0 + math.exp(-x))

    def relu(self, x: float) -> float:
        self.relu_args.append(x)
        return x if x > 0 else 0.0

    tanh_grad = staticmethod(sympy.lambdify(_t, _TANH_GRAD, "math"))
    tanh_grad2 = staticmethod(sympy.lambdify(_t, _TANH_GRAD2, "math"))
    sigmoid_grad = staticmethod(sympy.lambdify(_t, _SIGMOID_GRAD, "math"))


SAME_NAMES = ("exp", "log", "tanh", "sin", "cos", "sqrt")
"""The functions Value (as methods), sympy and math name alike: each namespace takes them as they are."""

for _name in SAME_NAMES:
    setattr(ValueNamespace, _name, staticmethod(getattr(Value, _name)))
    setattr(SympyNamespace, _name, staticmethod(getattr(sympy, _name)))
    setattr(FloatNamespace, _name, staticmethod(getattr(math, _name)))

VALUES = ValueNamespace()
SYMPY = SympyNamespace()


# ---------------------------------------------------------------------------------------------
# Oracles shared by the test files.


def sympy_value(
    expr: Any, symbols: Sequence[sympy.Symbol], point: Sequence[float], digits: int = 40
) -> float:
    """``expr`` at ``point``, evaluated by sympy with the inputs as exact rationals, to ``digits`` digits."""
    subs = {s: sympy.Rational(float(x)) for s, x in zip(symbols, point)}
    value = sympy.sympify(expr).subs(subs).evalf(digits)
    return float(value)


def close(actual: float, expected: float, rel: float, abs_: float = 0.0) -> bool:
    """``math.isclose`` with a message-friendly name; both must be finite."""
    return math.isfinite(actual) and math.isclose(actual, expected, rel_tol=rel, abs_tol=abs_)


def count_edges(z: Value) -> tuple[int, int]:
    """(number of nodes, number of edges) of the graph of z, found by a separate iterative walk.

    An independent oracle for ``Graph.num_edges``: every argument position of every node is one edge.
    """
    seen = {z}
    stack = [z]
    edges = 0
    while stack:
        node = stack.pop()
        edges += len(node.inputs)
        for p in node.inputs:
            if p not in seen:
                seen.add(p)
                stack.append(p)
    return len(seen), edges


# ---------------------------------------------------------------------------------------------
# The case.


@dataclass(frozen=True)
class Case:
    """One test expression, written once as ``build(ns, *variables)``.

    Attributes:
        name: a short id for pytest.
        variables: ``{name: value}`` in argument order: the point where the case is evaluated.
        build: the expression, over a namespace of operations (see the module docstring).
        other: a second point inside the domain (for re-evaluating B with new numbers); by default every
            variable moved by +0.1.
        tags: free-form labels ("fanout", "op:tanh", "chain", ...).
    """

    name: str
    variables: dict[str, float]
    build: Callable[..., Any]
    other: dict[str, float] | None = None
    tags: tuple[str, ...] = field(default=())

    def __repr__(self) -> str:
        return f"Case({self.name!r}, {self.variables})"

    @property
    def names(self) -> list[str]:
        return list(self.variables)

    @property
    def point(self) -> list[float]:
        return [float(x) for x in self.variables.values()]

    @property
    def other_point(self) -> list[float]:
        if self.other is not None:
            return [float(self.other[n]) for n in self.names]
        return [x + 0.1 for x in self.point]

    def _point(self, point: Sequence[float] | Mapping[str, float] | None) -> list[float]:
        if point is None:
            return self.point
        if isinstance(point, Mapping):
            return [float(point[n]) for n in self.names]
        return [float(x) for x in point]

    def build_values(
        self, point: Sequence[float] | Mapping[str, float] | None = None
    ) -> tuple[Value, list[Value]]:
        """The micrograph graph: ``(z, [variables in order])``, leaves labelled with the variable names."""
        xs = [VALUES.var(n, x) for n, x in zip(self.names, self._point(point))]
        return self.build(VALUES, *xs), xs

    def sympy(self) -> tuple[Any, list[sympy.Symbol]]:
        """The same expression in sympy: ``(expr, [symbols in order])``."""
        symbols = [SYMPY.var(n, 0.0) for n in self.names]
        return sympy.sympify(self.build(SYMPY, *symbols)), symbols

    def evaluate(self, point: Sequence[float] | Mapping[str, float] | None = None) -> float:
        """z at ``point`` (default: the case's point), with plain floats and :mod:`math` only."""
        ns = FloatNamespace()
        return float(self.build(ns, *self._point(point)))

    def min_kink(self, point: Sequence[float] | Mapping[str, float] | None = None) -> float:
        """The smallest |argument| of any relu at ``point`` (inf when the case has no relu)."""
        ns = FloatNamespace()
        self.build(ns, *self._point(point))
        return min((abs(x) for x in ns.relu_args), default=math.inf)

    def finite_difference(self, k: int, point: Sequence[float] | None = None, h: float = 1e-6) -> float:
        """dz/dx_k by central differences on the plain-float function, step h * max(1, |x_k|)."""
        p = self._point(point)
        step = h * max(1.0, abs(p[k]))
        plus, minus = list(p), list(p)
        plus[k] += step
        minus[k] -= step
        return (self.evaluate(plus) - self.evaluate(minus)) / (2 * step)

    def sympy_derivative(self, wrt: Sequence[str], point: Sequence[float] | None = None) -> float:
        """The exact derivative of z with respect to the named variables (in order), at ``point``."""
        expr, symbols = self.sympy()
        by = dict(zip(self.names, symbols))
        d = expr
        for n in wrt:
            d = sympy.diff(d, by[n])
        return sympy_value(d, symbols, self._point(point))


def _readme(ns: Any, a: Any, b: Any) -> Any:
    """micrograd's README example, line by line (``+=`` included); prints 24.7041 / 138.8338 / 645.5773."""
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + ns.relu(b + a)
    d += 3 * d + ns.relu(b - a)
    e = c - d
    f = e**2
    g = f / 2.0
    g += 10.0 / f
    return g


def _shared_intermediate(ns: Any, x: Any, y: Any) -> Any:
    """An intermediate t used by four consumers, and y used by three."""
    t = ns.tanh(x * y)
    return t * t + ns.sin(t) + t / y + ns.exp(t) * y


def _ladder(ns: Any, x: Any) -> Any:
    """Each level uses the previous one twice: u = u * u + u, three levels (2**3 paths per level pair)."""
    u = x
    for _ in range(3):
        u = u * u + u
    return u


def _neuron(ns: Any, w1: Any, w2: Any, b: Any) -> Any:
    """A sigmoid neuron on two inputs and a relu of a second one, with an L2 term."""
    x1, x2 = 0.7, -1.3
    h = ns.relu(w1 * x1 + w2 * x2 + b)
    return ns.sigmoid(h * 2.0 - w1) + 0.01 * (w1 * w1 + w2 * w2)


def _pow_case(c: float, x: float, other: float | None = None) -> Case:
    return Case(
        f"pow_const_{c:g}_at_{x:g}",
        {"x": x},
        lambda ns, x: x**c,
        other=None if other is None else {"x": other},
        tags=("op:pow_const",),
    )


CATALOGUE: list[Case] = [
    # figure 6.9: z = f(f(f(w)))
    Case(
        "fig6.9_tanh_chain", {"w": 0.5}, lambda ns, w: ns.tanh(ns.tanh(ns.tanh(w))), tags=("chain", "op:tanh")
    ),
    Case("fig6.9_exp_chain", {"w": 0.3}, lambda ns, w: ns.exp(ns.exp(ns.exp(w))), tags=("chain", "op:exp")),
    # micrograd's README example
    Case("micrograd_readme", {"a": -4.0, "b": 2.0}, _readme, tags=("readme", "fanout", "op:relu")),
    # shared subexpressions / fan-out
    Case("x_times_x_plus_x", {"x": 1.5}, lambda ns, x: x * x + x, tags=("fanout",)),
    Case("a_times_a", {"a": -1.25}, lambda ns, a: a * a, tags=("fanout",)),
    Case("x_pow_x", {"x": 1.3}, lambda ns, x: x**x, tags=("fanout", "op:pow")),
    Case("shared_intermediate", {"x": 0.7, "y": 1.2}, _shared_intermediate, tags=("fanout",)),
    Case("ladder_u_u_plus_u", {"x": 0.3}, _ladder, tags=("fanout", "ladder")),
    Case("neuron", {"w1": 0.4, "w2": -0.6, "b": 0.2}, _neuron, tags=("op:sigmoid", "op:relu")),
    Case("identity_leaf", {"x": 0.8}, lambda ns, x: x, tags=("leaf",)),
    Case("constants", {"x": -0.6}, lambda ns, x: x * 2 + 3 - 4 / (x * x + 1), tags=("constants",)),
    # every operation of the table
    Case("op_add", {"x": 0.5, "y": -1.5}, lambda ns, x, y: (x + y) * x, tags=("op:add",)),
    Case("op_sub", {"x": 0.5, "y": -1.5}, lambda ns, x, y: (x - y) * y, tags=("op:sub",)),
    Case("op_mul", {"x": 0.5, "y": -1.5}, lambda ns, x, y: x * y * y, tags=("op:mul",)),
    Case("op_div", {"x": 0.5, "y": -1.5}, lambda ns, x, y: x / y, tags=("op:div",)),
    Case("op_rdiv", {"x": 0.75}, lambda ns, x: 2.0 / x, tags=("op:div",)),
    Case("op_neg", {"x": 0.5}, lambda ns, x: -(x * x * x), tags=("op:neg",)),
    Case("op_pow_value_exponent", {"x": 1.7, "y": 0.6}, lambda ns, x, y: x**y, tags=("op:pow",)),
    Case("op_rpow_number_base", {"y": 0.6}, lambda ns, y: 2.5**y, tags=("op:pow",)),
    _pow_case(2, 1.3),
    _pow_case(3, -1.3),
    _pow_case(-1, 0.8),
    _pow_case(-2, -0.9, other=-0.8),
    _pow_case(-2.5, 1.4),
    _pow_case(0.5, 2.0),
    _pow_case(1.5, 0.6),
    _pow_case(1 / 3, 1.9),
    _pow_case(0, 1.2),
    _pow_case(1, -0.4),
    Case("op_exp", {"x": 0.4}, lambda ns, x: ns.exp(x * x), tags=("op:exp",)),
    Case("op_log", {"x": 1.6}, lambda ns, x: ns.log(x) * x, tags=("op:log",)),
    Case("op_log_of_product", {"x": 0.9, "y": 2.2}, lambda ns, x, y: ns.log(x * y), tags=("op:log",)),
    Case("op_tanh", {"x": -0.8}, lambda ns, x: ns.tanh(x), tags=("op:tanh",)),
    Case("op_sigmoid", {"x": 0.9}, lambda ns, x: ns.sigmoid(x), tags=("op:sigmoid",)),
    Case("op_sigmoid_negative", {"x": -2.3}, lambda ns, x: ns.sigmoid(x * 3.0), tags=("op:sigmoid",)),
    Case("op_relu_positive", {"x": 0.7}, lambda ns, x: ns.relu(x) * x, tags=("op:relu",)),
    Case("op_relu_negative", {"x": -0.7}, lambda ns, x: ns.relu(x) + x * x, tags=("op:relu",)),
    Case("op_tanh_grad", {"x": -0.8}, lambda ns, x: ns.tanh_grad(x * 1.5), tags=("op:tanh_grad",)),
    Case("op_tanh_grad2", {"x": 0.45}, lambda ns, x: ns.tanh_grad2(x) * x, tags=("op:tanh_grad2",)),
    Case(
        "op_sigmoid_grad", {"x": 0.9}, lambda ns, x: ns.sigmoid_grad(x * x - 1.0), tags=("op:sigmoid_grad",)
    ),
    Case("op_sin", {"x": 0.6}, lambda ns, x: ns.sin(x), tags=("op:sin",)),
    Case("op_cos", {"x": 0.6}, lambda ns, x: ns.cos(x), tags=("op:cos",)),
    Case("op_sqrt", {"x": 2.5}, lambda ns, x: ns.sqrt(x), tags=("op:sqrt",)),
    Case("op_sqrt_two_vars", {"x": 0.3, "y": 1.1}, lambda ns, x, y: ns.sqrt(x + y * y), tags=("op:sqrt",)),
    Case(
        "all_unary_composed",
        {"x": 0.35},
        lambda ns, x: ns.sqrt(ns.exp(ns.sin(x)) + ns.cos(x)) * ns.log(ns.sigmoid(x) + 1.0) + ns.tanh(x),
        tags=("op:sqrt", "op:exp", "op:sin", "op:cos", "op:log", "op:sigmoid", "op:tanh"),
    ),
]
"""Every test expression: figure 6.9, micrograd's README, fan-out, and every operation of the table."""


def by_name(name: str) -> Case:
    """The catalogue case called ``name``."""
    for case in CATALOGUE:
        if case.name == name:
            return case
    raise KeyError(name)
