"""Bad input: DomainError names the operation, the input values and the node labels.

Nothing is half-built: a failed operation returns no node and leaves the user's graph as it was.
Algorithm 6.1's failures name the node u(i); Algorithm 6.2's name the edge u(j) -> u(i).
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable
from typing import Any

import pytest

from micrograph import DomainError, Graph, Value, grad
from micrograph.ops import DIV, EXP, LOG, MUL, SQRT


def snapshot(z: Value) -> list[tuple[Any, ...]]:
    """Everything about every node of the graph of z, to compare before and after."""
    return [(v, v.data, v.grad, v.op, v.inputs, v.label, v.meta) for v in Graph(z).nodes]


def consumers_of(node: Value) -> list[Value]:
    """Every live Value that takes ``node`` as an argument (found through the garbage collector)."""
    tuples = [t for t in gc.get_referrers(node) if type(t) is tuple]
    return [o for t in tuples for o in gc.get_referrers(t) if isinstance(o, Value) and o.inputs is t]


# (case id, make the inputs, the failing operation, op name, shown values, labels)
CASES: list[tuple[str, Callable[[], tuple[Value, ...]], Callable[..., Any], str, list[str], list[str]]] = [
    ("log_of_zero", lambda: (Value(0.0, label="x"),), lambda x: x.log(), "log", ["0.0"], ["'x'"]),
    ("log_of_negative", lambda: (Value(-1.5, label="x"),), lambda x: x.log(), "log", ["-1.5"], ["'x'"]),
    (
        "division_by_zero_node",
        lambda: (Value(1.0, label="num"), Value(0.0, label="den")),
        lambda a, b: a / b,
        "div",
        ["1.0", "0.0"],
        ["'num'", "'den'"],
    ),
    (
        "division_by_zero_number",
        lambda: (Value(2.5, label="x"),),
        lambda x: x / 0,
        "div",
        ["2.5", "0.0"],
        ["'x'"],
    ),
    (
        "number_over_zero_node",
        lambda: (Value(0.0, label="x"),),
        lambda x: 3.0 / x,
        "div",
        ["3.0", "0.0"],
        ["'x'"],
    ),
    ("sqrt_of_negative", lambda: (Value(-4.0, label="x"),), lambda x: x.sqrt(), "sqrt", ["-4.0"], ["'x'"]),
    (
        "negative_base_fractional_constant_exponent",
        lambda: (Value(-2.0, label="base"),),
        lambda x: x**0.5,
        "pow",
        ["-2.0"],
        ["'base'"],
    ),
    (
        "negative_base_fractional_value_exponent",
        lambda: (Value(-2.0, label="base"), Value(1.5, label="e")),
        lambda x, y: x**y,
        "pow",
        ["-2.0", "1.5"],
        ["'base'", "'e'"],
    ),
    ("zero_to_negative_constant", lambda: (Value(0.0, label="x"),), lambda x: x**-1, "pow", ["0.0"], ["'x'"]),
    (
        "zero_to_negative_value",
        lambda: (Value(0.0, label="x"), Value(-2.0, label="p")),
        lambda x, y: x**y,
        "pow",
        ["0.0", "-2.0"],
        ["'x'", "'p'"],
    ),
    ("exp_overflow", lambda: (Value(1000.0, label="big"),), lambda x: x.exp(), "exp", ["1000.0"], ["'big'"]),
    (
        "product_not_finite",
        lambda: (Value(1e308, label="huge"),),
        lambda x: x * 10,
        "mul",
        ["1e+308", "10.0"],
        ["'huge'"],
    ),
    (
        "sum_not_finite",
        lambda: (Value(1e308, label="a"), Value(1e308, label="b")),
        lambda a, b: a + b,
        "add",
        ["1e+308", "1e+308"],
        ["'a'", "'b'"],
    ),
    (
        "difference_not_finite",
        lambda: (Value(-1e308, label="a"), Value(1e308, label="b")),
        lambda a, b: a - b,
        "sub",
        ["-1e+308", "1e+308"],
        ["'a'", "'b'"],
    ),
    (
        "power_not_finite",
        lambda: (Value(10.0, label="x"),),
        lambda x: x**400,
        "pow",
        ["10.0"],
        ["'x'"],
    ),
]


@pytest.mark.parametrize(
    "make, fail, op_name, shown, labels", [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_domain_error_names_operation_values_and_labels(
    make: Callable[[], tuple[Value, ...]],
    fail: Callable[..., Any],
    op_name: str,
    shown: list[str],
    labels: list[str],
) -> None:
    inputs = make()
    # the user's graph: each input already feeds a node, which must stay exactly as it is
    existing = [x * 1.0 for x in inputs]
    before = [snapshot(e) for e in existing]
    consumers_before = [consumers_of(x) for x in inputs]
    result = None
    with pytest.raises(DomainError) as info:
        result = fail(*inputs)
    assert result is None  # no node returned
    err = info.value
    assert isinstance(err, ValueError)
    msg = str(err)
    assert op_name in msg, msg
    for text in shown + labels:
        assert text in msg, f"{text!r} not in {msg!r}"
    assert err.op.name == op_name
    del err, info
    gc.collect()
    assert [snapshot(e) for e in existing] == before
    assert [consumers_of(x) for x in inputs] == consumers_before  # no half-built node consumes an input


def test_domain_error_attributes() -> None:
    x = Value(-1.0, label="x")
    with pytest.raises(DomainError) as info:
        x.log()
    err = info.value
    assert err.op is LOG
    assert err.values == (-1.0,)
    assert err.nodes == (x,)
    assert err.result is None
    with pytest.raises(DomainError) as info:
        Value(1e308) * Value(1e308)
    assert info.value.op is MUL and info.value.result == float("inf")


def test_operations_on_plain_numbers_raise_domain_error_too() -> None:
    with pytest.raises(DomainError, match=r"log\(-2\.0\)"):
        LOG(-2.0)
    with pytest.raises(DomainError, match="div"):
        DIV(1.0, 0.0)
    with pytest.raises(DomainError, match="exp"):
        EXP(800.0)
    assert LOG(1.0) == 0.0 and SQRT(4.0) == 2.0


def test_domain_error_inside_a_larger_expression_leaves_it_unchanged() -> None:
    w = Value(0.5, label="w")
    h = (w * 2.0).tanh()
    z = h * h + w
    before = snapshot(z)
    with pytest.raises(DomainError, match=r"log.*-"):
        (h - 5.0).log()  # h - 5 is built (the user asked for it); the log is not
    assert snapshot(z) == before


# ---------------------------------------------------------------------------------------------
# Algorithm 6.1 and Algorithm 6.2 failures


def test_forward_failure_names_the_node() -> None:
    x = Value(3.0, label="x")
    y = Value(2.0, label="y")
    s = x - y  # u4
    r = s.sqrt()  # u4: fails when x < y
    z = r * y
    g = Graph(z)
    assert (g.name(s), g.name(r)) == ("u3", "u4")
    before = [v.data for v in g.nodes]
    with pytest.raises(DomainError) as info:
        g.forward({x: 1.0, y: 4.0})
    msg = str(info.value)
    assert "u4" in msg and "Algorithm 6.1" in msg and "sqrt" in msg and "-3.0" in msg
    assert "u3" in msg  # the argument, by its book name
    assert [v.data for v in g.nodes] == before


def test_backprop_failure_names_the_edge() -> None:
    x = Value(0.0, label="x")
    r = x.sqrt()  # sqrt(0) = 0 exists; its derivative 1 / (2 sqrt(0)) does not
    z = r + x
    g = Graph(z)
    assert (g.name(x), g.name(r)) == ("u1", "u2")
    with pytest.raises(DomainError) as info:
        g.backprop()
    msg = str(info.value)
    assert "Algorithm 6.2" in msg and "du2/du1" in msg and "sqrt" in msg and "'x'" in msg, msg
    x.grad = 5.0
    with pytest.raises(DomainError, match="du2/du1"):
        z.backward()
    assert x.grad == 5.0  # a failed backward adds nothing


@pytest.mark.parametrize("c", [0.5, 1 / 3, 0.75])
def test_backprop_failure_of_fractional_power_at_zero(c: float) -> None:
    """0 ** c exists for 0 < c < 1 but its derivative c * 0 ** (c - 1) does not."""
    x = Value(1.0, label="x")
    t = x - 1.0  # 0.0
    z = t**c
    g = Graph(z)
    with pytest.raises(DomainError) as info:
        g.backprop()
    msg = str(info.value)
    assert f"du{g.index[z] + 1}/du{g.index[t] + 1}" in msg and "pow" in msg, msg


@pytest.mark.parametrize("c", [1.5, 2.0, 3.0])
def test_power_at_zero_with_an_existing_derivative(c: float) -> None:
    x = Value(1.0, label="x")
    t = x - 1.0
    z = t**c
    assert Graph(z).backprop()[x] == 0.0  # c * 0 ** (c - 1) = 0


def test_symbolic_grad_failure_is_a_domain_error_and_leaves_G_alone() -> None:
    x = Value(0.0, label="x")
    z = x.sqrt() * 2.0 + x
    before = snapshot(z)
    with pytest.raises(DomainError, match="div"):  # 0.5 / sqrt(0)
        grad(z, x)
    assert snapshot(z) == before
    assert not any(v.in_backward for v in Graph(z).nodes)


@pytest.mark.parametrize(
    "x, says",
    [
        # log is defined at 1e-320; its derivative 1/x overflows: not "outside the domain of log"
        (1e-320, "Algorithm 6.6: the derivative of log at u3 with respect to u1 overflows here (div "
         "failed while building it): div(1.0, 1e-320) = inf is not finite; inputs: u1 (leaf 'x')"),
        # log is not defined at -1: its domain is what the message names
        (-1.0, "outside the domain of log (x > 0)"),
    ],
)  # fmt: skip
def test_symbolic_grad_says_whether_the_operation_or_its_derivative_fails(x: float, says: str) -> None:
    """Whether the operation is outside its domain, or its derivative overflows (it exists, no float holds
    it), as Algorithm 6.2 and the explorer say it."""
    u = Value(x, label="x")
    with pytest.raises(DomainError) as info:
        grad(u.log() * 2.0, u)
    assert says in str(info.value)
    assert (x < 0) == ("outside the domain of log" in str(info.value))


def test_backprop_overflow_is_a_domain_error() -> None:
    x, y = Value(1.0, label="x"), Value(1e-200, label="y")
    z = x / y  # 1e200: finite
    with pytest.raises(DomainError, match="div") as info:
        Graph(z).backprop()  # dz/dy = -1e400 is not finite
    msg = str(info.value)
    assert "Algorithm 6.2" in msg and "u2" in msg and "du3/du2" in msg and "'y'" in msg, msg


def test_backprop_overflowing_sum_is_a_domain_error() -> None:
    """Each term 1e308 is finite; their sum in grad_table[x] is not."""
    x = Value(1e-10, label="x")
    z = x * 1e308 + x * 1e308
    g = Graph(z)
    with pytest.raises(DomainError) as info:
        g.backprop()
    msg = str(info.value)
    assert "Algorithm 6.2" in msg and "grad_table[u1]" in msg and "'x'" in msg, msg
    x.grad = 0.0
    with pytest.raises(DomainError):
        z.backward()
    assert x.grad == 0.0


def test_binary_pow_with_a_constant_exponent_at_a_negative_base() -> None:
    from micrograph.ops import POW

    x = Value(-3.0, label="x")
    z = POW(x, 2.0)  # the 2.0 is wrapped as a constant leaf: nothing to differentiate with respect to
    assert z.data == 9.0 and z.inputs[1].is_constant
    z.backward()
    assert x.grad == -6.0


@pytest.mark.parametrize(
    "make, at, overflows",
    [(lambda x: x**-1.0, 1e-300, True), (lambda x: x.sqrt(), 0.0, False)],  # -1e600; 0.5 / sqrt(0): none
)
def test_every_path_says_overflows_where_the_value_exists_and_no_float_holds_it(
    make: Callable[[Value], Value], at: float, overflows: bool
) -> None:
    """Algorithm 6.2 (numbers), Value.backward, a push by hand and Algorithm 6.6 (B) agree on whether a
    derivative overflows (it exists, too large for a float) or does not exist, as the explorer says it."""
    from micrograph.push import push_to_parents

    x = Value(at, label="x")
    z = make(x)

    def pushed() -> None:
        z.grad = 1.0
        push_to_parents(z)

    for run in (lambda: Graph(z).backprop(), z.backward, lambda: grad(z, x), pushed):
        with pytest.raises(DomainError) as e:
            run()
        message = str(e.value)
        assert e.value.overflows == overflows and ("overflows" in message) == overflows, message
        assert ("does not exist" in message) != overflows and "outside the domain of pow" not in message


@pytest.mark.parametrize(
    "make", [lambda: Value(710.0).exp(), lambda: Value(1e200) ** 2, lambda: Value(-1e200) ** 3]
)
def test_an_operation_whose_value_overflows_says_so_not_that_it_left_its_domain(
    make: Callable[[], Value],
) -> None:
    with pytest.raises(DomainError, match="overflows: no finite float holds it") as e:
        make()
    assert e.value.overflows and "outside the domain" not in str(e.value)


def test_a_nan_set_by_hand_is_not_a_number_in_algorithm_6_2_not_an_overflow() -> None:
    x, y = Value(1.0, label="x"), Value(2.0, label="y")
    z = x * y
    x.data = math.nan  # set by hand after building: the forward values are what Algorithm 6.2 reads
    with pytest.raises(DomainError, match=r"= 1\.0 × nan is not a number at mul\(nan, 2\.0\)") as e:
        z.backward()
    assert not e.value.overflows and "overflows" not in str(e.value)
