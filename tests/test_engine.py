"""Value: the node u(i) with micrograd's surface; numbers accepted and refused; operators; stability.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from catalogue import by_name

import micrograph
import micrograph.engine
from micrograph import Graph, Value
from micrograph.ops import ADD, DIV, MUL, NEG, POW, SUB

# ---------------------------------------------------------------------------------------------
# micrograd's README example, literally, against micrograd itself


def test_micrograd_readme_prints_its_numbers() -> None:
    a = Value(-4.0)
    b = Value(2.0)
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g += 10.0 / f
    assert f"{g.data:.4f}" == "24.7041"
    g.backward()
    assert f"{a.grad:.4f}" == "138.8338"
    assert f"{b.grad:.4f}" == "645.5773"


def test_micrograd_readme_agrees_with_micrograd_package() -> None:
    """The catalogue's README case built with micrograph and with micrograd 0.1.0: same numbers."""
    micrograd_engine = pytest.importorskip("micrograd.engine")

    class MicrogradNamespace:
        @staticmethod
        def relu(x):  # type: ignore[no-untyped-def]
            return x.relu()

    case = by_name("micrograd_readme")
    ours, (a, b) = case.build_values()
    ours.backward()
    ma, mb = micrograd_engine.Value(-4.0), micrograd_engine.Value(2.0)
    theirs = case.build(MicrogradNamespace, ma, mb)
    theirs.backward()
    assert math.isclose(ours.data, theirs.data, rel_tol=1e-13)
    assert math.isclose(a.grad, ma.grad, rel_tol=1e-13)
    assert math.isclose(b.grad, mb.grad, rel_tol=1e-13)


# ---------------------------------------------------------------------------------------------
# what a Value accepts


@pytest.mark.parametrize(
    "number, expected",
    [
        (3, 3.0),
        (-2.5, -2.5),
        (np.float64(0.25), 0.25),
        (np.float32(0.5), 0.5),
        (np.int64(7), 7.0),
        (np.int8(-3), -3.0),
        (np.float16(1.5), 1.5),
    ],
)
def test_real_numbers_are_accepted_as_floats(number: object, expected: float) -> None:
    v = Value(number)
    assert type(v.data) is float and v.data == expected
    assert v.grad == 0.0 and v.op is None and v.inputs == () and v.label == "" and v.is_leaf


@pytest.mark.parametrize(
    "bad, type_name",
    [("3.0", "str"), (1 + 2j, "complex"), ([1.0], "list"), (None, "NoneType"), (Value(1.0), "Value")],
)
def test_anything_else_is_a_type_error_naming_the_type(bad: object, type_name: str) -> None:
    with pytest.raises(TypeError, match=type_name):
        Value(bad)


def test_label_must_be_a_string() -> None:
    assert Value(1.0, label="w").label == "w"
    with pytest.raises(TypeError, match="label"):
        Value(1.0, label=3)  # type: ignore[arg-type]


def test_value_is_micrographs_engine_value_and_has_slots() -> None:
    assert micrograph.engine.Value is Value
    v = Value(1.0)
    assert not hasattr(v, "__dict__")
    with pytest.raises(AttributeError):
        v.something = 1  # type: ignore[attr-defined]
    assert set(Value.__slots__) == {"data", "grad", "op", "_a", "_b", "_info"}  # parents in two slots
    assert sys.getsizeof(v) <= 80  # six slots: an 80-byte node


def test_label_and_meta_share_a_slot_and_each_keeps_its_own_value() -> None:
    from micrograph.meta import NodeMeta

    x = Value(2.0, label="x")
    assert (x.label, x.meta, x.is_constant) == ("x", None, False)
    c = x * 3.0
    k = c._b
    assert (k.label, k.is_constant, c.label, c.meta) == ("", True, "", None)
    k.label = "three"  # the constants' shared NodeMeta is copied, not changed
    assert (k.label, k.is_constant) == ("three", True)
    assert (x * 4.0)._b.label == "" and (x * 4.0)._b.is_constant
    shared = NodeMeta(call=7)
    a, b = x + 1.0, x - 1.0
    a.label = "a"
    a.meta = b.meta = shared
    assert (a.label, a.meta.call, b.label, b.meta.call) == ("a", 7, "", 7)  # type: ignore[union-attr]
    a.meta = None
    assert (a.label, a.meta, a.in_backward, b.in_backward) == ("a", None, False, True)
    b.label = "b"
    assert (b.label, shared.label) == ("b", "")
    with pytest.raises(TypeError, match="label"):
        a.label = None  # type: ignore[assignment]
    with pytest.raises(TypeError, match="meta"):
        a.meta = "constant"  # type: ignore[assignment]


def test_hash_and_eq_are_identity() -> None:
    a, b = Value(1.0), Value(1.0)
    assert a != b and not (a == b)
    assert a == a
    assert isinstance(a == b, bool)  # == is not overloaded into an operation
    assert len({a, b}) == 2
    table = {a: "a", b: "b"}
    assert table[a] == "a" and table[b] == "b"
    assert hash(a) != hash(b)


# ---------------------------------------------------------------------------------------------
# operators


def test_binary_operators_build_ordered_nodes() -> None:
    x, y = Value(3.0, label="x"), Value(-2.0, label="y")
    for node, op, value in [
        (x + y, ADD, 1.0),
        (x - y, SUB, 5.0),
        (x * y, MUL, -6.0),
        (x / y, DIV, -1.5),
        (x**y, POW, 3.0**-2.0),
    ]:
        assert node.op is op, op
        assert node.inputs == (x, y), op  # argument order kept
        assert node.data == value, op
    neg = -x
    assert neg.op is NEG and neg.inputs == (x,) and neg.data == -3.0
    assert (+x) is x


def test_number_exponent_is_one_node_with_a_parameter() -> None:
    x = Value(2.0)
    for c in (2, 3.0, -1, 0.5, -2.5):
        node = x**c
        assert node.inputs == (x,) and node.op.arity == 1 and node.op.param == float(c)
        assert node.data == 2.0 ** float(c)


@pytest.mark.parametrize(
    "build, value, constant_position",
    [
        (lambda x: 2 + x, 2.0 + 0.5, 0),
        (lambda x: 2 - x, 2.0 - 0.5, 0),
        (lambda x: 2 * x, 2.0 * 0.5, 0),
        (lambda x: 2 / x, 2.0 / 0.5, 0),
        (lambda x: 2**x, 2.0**0.5, 0),
        (lambda x: x + 2, 0.5 + 2.0, 1),
        (lambda x: x - 2, 0.5 - 2.0, 1),
        (lambda x: x / 2, 0.5 / 2.0, 1),
    ],
)
def test_reflected_and_number_operands(build, value: float, constant_position: int) -> None:  # type: ignore[no-untyped-def]
    x = Value(0.5, label="x")
    node = build(x)
    assert isinstance(node, Value) and node.data == value
    constant = node.inputs[constant_position]
    assert constant.is_constant and constant.is_leaf and constant.data == 2.0
    assert node.inputs[1 - constant_position] is x


@pytest.mark.parametrize(
    "scalar", [np.float64(2.0), np.float32(2.0), np.int64(2), np.int32(2)], ids=lambda s: type(s).__name__
)
def test_numpy_scalar_on_either_side_gives_a_value(scalar: object) -> None:
    x = Value(0.5, label="x")
    for node, expected in [
        (scalar * x, 1.0),
        (x * scalar, 1.0),
        (scalar + x, 2.5),
        (scalar - x, 1.5),
        (scalar / x, 4.0),
        (x**scalar, 0.25),
    ]:
        assert type(node) is Value, type(node)
        assert node.data == expected
        assert x in node.inputs
    x.grad = 0.0
    (scalar * x).backward()
    assert x.grad == 2.0


def test_unsupported_operands_are_type_errors() -> None:
    x = Value(1.0)
    with pytest.raises(TypeError):
        _ = x + "1"
    with pytest.raises(TypeError):
        _ = [1.0] * x  # type: ignore[operator]
    with pytest.raises(TypeError):
        _ = x ** "2"


def test_plus_equals_builds_a_new_node() -> None:
    x = Value(1.0, label="x")
    acc = x
    acc += 2.0
    assert acc is not x and acc.op is ADD and acc.inputs[0] is x and acc.data == 3.0
    assert x.data == 1.0 and x.op is None
    acc += acc
    assert acc.data == 6.0 and acc.inputs[0] is acc.inputs[1]
    acc.backward()
    assert x.grad == 2.0


def test_constants_and_leaves_are_told_apart() -> None:
    x = Value(2.0)
    node = x * 3
    assert not x.is_constant and x.is_leaf
    assert node.inputs[1].is_constant and not node.is_leaf
    assert not node.in_backward and node.grad_of is None
    assert Graph(node).variables == [x]


def test_repr_shows_data_label_and_op() -> None:
    x = Value(2.0, label="x")
    assert "2.0" in repr(x) and "'x'" in repr(x)
    assert "mul" in repr(x * x)


# ---------------------------------------------------------------------------------------------
# functions: values against math, stability at large |x|


@pytest.mark.parametrize(
    "method, reference, x",
    [
        ("exp", math.exp, 1.3),
        ("log", math.log, 2.7),
        ("tanh", math.tanh, -0.4),
        ("sigmoid", lambda t: 1 / (1 + math.exp(-t)), 0.8),
        ("relu", lambda t: max(t, 0.0), -0.3),
        ("relu", lambda t: max(t, 0.0), 0.3),
        ("sin", math.sin, 2.0),
        ("cos", math.cos, 2.0),
        ("sqrt", math.sqrt, 5.0),
    ],
)
def test_functions_match_math(method: str, reference, x: float) -> None:  # type: ignore[no-untyped-def]
    v = Value(x)
    node = getattr(v, method)()
    assert node.inputs == (v,) and node.op.name == method
    assert math.isclose(node.data, reference(x), rel_tol=1e-15, abs_tol=1e-300)


@pytest.mark.parametrize("x", [1000.0, -1000.0, 710.0, -710.0, 1e308, -1e308])
def test_tanh_and_sigmoid_are_stable_at_large_inputs(x: float) -> None:
    v = Value(x)
    t = v.tanh()
    s = v.sigmoid()
    assert t.data == math.copysign(1.0, x)
    assert s.data == (1.0 if x > 0 else math.exp(x))  # exp(-710) is a subnormal, exp(-1000) is 0.0
    t.backward()
    assert v.grad == 0.0  # 1 - tanh(x)**2 is exactly 0 in floats, no nan or inf
    v.grad = 0.0
    s.backward()
    e = math.exp(-abs(x))  # sigmoid'(x) = e**-|x| / (1 + e**-|x|)**2, 0.0 or subnormal out here
    assert math.isfinite(v.grad) and math.isclose(v.grad, e / (1 + e) ** 2, rel_tol=1e-12, abs_tol=1e-300)


@pytest.mark.parametrize("x", [-30.0, -20.0, 20.0, 35.0])
def test_sigmoid_is_accurate_in_its_tails(x: float) -> None:
    exact = 1 / (1 + math.exp(-x)) if x > 0 else math.exp(x) / (1 + math.exp(x))
    node = Value(x).sigmoid()
    assert math.isclose(node.data, exact, rel_tol=1e-14)
    v = Value(x)
    v.sigmoid().backward()
    assert math.isclose(v.grad, exact * (1 - exact), rel_tol=1e-9)


# --- non-finite numbers and the limits of x ** y at x = 0 ---------------------------------------------


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("op", ["relu", "tanh", "sigmoid", "exp", "sin", "neg", "div", "add", "pow_const"])
def test_no_operation_takes_a_non_finite_argument(bad: float, op: str) -> None:
    from micrograph import DomainError

    x = Value(bad, label="x")  # a leaf may hold it (documented); an operation refuses it
    build = {
        "relu": lambda: x.relu(), "tanh": lambda: x.tanh(), "sigmoid": lambda: x.sigmoid(),
        "exp": lambda: x.exp(), "sin": lambda: x.sin(), "neg": lambda: -x, "div": lambda: 1.0 / x,
        "add": lambda: x + 1.0, "pow_const": lambda: x**2,
    }[op]  # fmt: skip
    with pytest.raises(DomainError, match="not finite"):
        build()


def test_forward_refuses_non_finite_inputs_and_changes_nothing() -> None:
    x = Value(1.0, label="x")
    z = x.relu() * 2.0
    g = Graph(z)
    for bad in (math.nan, math.inf):
        with pytest.raises(ValueError, match="finite"):
            g.forward({x: bad})
        assert (x.data, z.data) == (1.0, 2.0)


def test_huge_integers_are_clear_value_errors() -> None:
    x = Value(2.0)
    for build in (lambda: x + 10**400, lambda: x**10**400, lambda: Value(10**400), lambda: 10**400 * x):
        with pytest.raises(ValueError, match="too large for a float") as e:
            build()
        assert "401 digits" in str(e.value)
    with pytest.raises(ValueError, match="too large"):
        Graph(x * 1.0).forward({x: 10**400})


@pytest.mark.parametrize("y", [2.0, 1.0, 3.5])
def test_pow_at_zero_base_has_the_limits_in_every_form(y: float) -> None:
    """d(x**y)/dy at x = 0, y > 0 is 0 (the limit); d/dx is 0 for y > 1 and 1 for y = 1."""
    from micrograph import compile_graph, grad

    x, e = Value(0.0, label="x"), Value(y, label="y")
    z = x**e
    z.backward()
    table = Graph(z).backprop()
    nodes = grad(z, [x, e])
    _, compiled = compile_graph(Graph(z), [x, e])()
    expected_dx = 1.0 if y == 1.0 else 0.0
    assert (x.grad, e.grad) == (table[x], table[e]) == (expected_dx, 0.0)
    assert [n.data for n in nodes] == compiled == [expected_dx, 0.0]


def test_pow_at_zero_base_with_an_exponent_below_one_has_no_derivative() -> None:
    from micrograph import DomainError

    x, e = Value(0.0, label="x"), Value(0.5, label="y")
    z = x**e
    with pytest.raises(DomainError, match="du3/du1"):
        z.backward()
    assert (x.grad, e.grad) == (0.0, 0.0)
