"""Losses and regularizers: values against closed forms, gradients through the engine, stability."""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from micrograph import Graph, Value, grad, nn
from micrograph.losses import binary_cross_entropy, cross_entropy, hinge, l1, l2, mse


def grads(J: Value, xs: list[Value]) -> list[float]:
    """dJ/dx by Algorithm 6.2 (the grad_table), for each x."""
    table = Graph(J).backprop()
    return [table.get(x, 0.0) for x in xs]


def central(f, xs: list[float], h: float = 1e-6) -> list[float]:
    out = []
    for i in range(len(xs)):
        up = list(xs)
        dn = list(xs)
        up[i] += h
        dn[i] -= h
        out.append((f(up) - f(dn)) / (2 * h))
    return out


def softmax(z: list[float]) -> list[float]:
    m = max(z)
    e = [math.exp(v - m) for v in z]
    s = sum(e)
    return [v / s for v in e]


def sigma(z: float) -> float:
    return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))


def test_losses_are_reexported_by_nn():
    assert nn.mse is mse and nn.hinge is hinge and nn.cross_entropy is cross_entropy
    assert nn.binary_cross_entropy is binary_cross_entropy and nn.l2 is l2 and nn.l1 is l1


# --- mean squared error --------------------------------------------------------------------------


def test_mse_one_output_value_and_gradient():
    p = Value(0.3)
    J = mse(p, 1.0)
    assert J.data == pytest.approx(0.49)
    assert grads(J, [p]) == [pytest.approx(2 * (0.3 - 1.0))]


def test_mse_several_outputs_is_the_mean():
    ps = [Value(1.0), Value(-2.0), Value(0.5)]
    J = mse(ps, [0.0, 0.0, 1.0])
    assert J.data == pytest.approx((1 + 4 + 0.25) / 3)
    assert grads(J, ps) == pytest.approx([2 * 1 / 3, 2 * -2 / 3, 2 * -0.5 / 3])


def test_mse_length_mismatch():
    with pytest.raises(ValueError, match="target has 2 components, the prediction has 3"):
        mse([Value(1.0), Value(2.0), Value(3.0)], [1.0, 2.0])


# --- hinge ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("score", [-2.0, -0.5, 0.0, 0.3, 0.999, 1.5])
@pytest.mark.parametrize("y", [-1, 1])
def test_hinge_is_max_margin(score, y):
    s = Value(score)
    J = hinge(s, y)
    assert J.data == pytest.approx(max(0.0, 1 - y * score))
    assert grads(J, [s])[0] == pytest.approx(-y if 1 - y * score > 0 else 0.0)


def test_hinge_reads_label_0_as_minus_1_and_builds_micrograds_graph():
    s = Value(0.25)
    assert hinge(s, 0).data == hinge(s, -1).data == pytest.approx(1.25)
    J = hinge(s, 1)
    # micrograd's demo: (1 + -yi*scorei).relu(): relu(add(1, mul(-y, score)))
    assert J.op.name == "relu"
    add = J.inputs[0]
    assert add.op.name == "add" and add.inputs[0].is_constant and add.inputs[0].data == 1.0
    mul = add.inputs[1]
    assert mul.op.name == "mul" and mul.inputs[0].data == -1.0 and mul.inputs[1] is s


@pytest.mark.parametrize("bad", [2, 0.5, -2])
def test_hinge_label_out_of_range(bad):
    with pytest.raises(ValueError, match=r"binary class 0/1 or -1/\+1, got"):
        hinge(Value(0.0), bad)


def test_hinge_needs_one_output():
    with pytest.raises(ValueError, match="needs one output"):
        hinge([Value(0.0), Value(1.0)], 1)


# --- softmax cross-entropy -----------------------------------------------------------------------


def test_cross_entropy_value_and_gradient():
    z = [Value(v) for v in (2.0, -1.0, 0.5)]
    J = cross_entropy(z, 2)
    expected = math.log(sum(math.exp(v.data) for v in z)) - 0.5
    assert J.data == pytest.approx(expected, rel=1e-14)
    p = softmax([v.data for v in z])
    assert grads(J, z) == pytest.approx([p[0], p[1], p[2] - 1.0], rel=1e-12, abs=1e-15)


def test_cross_entropy_large_logits_do_not_overflow():
    z = [Value(1000.0), Value(0.0), Value(-1000.0)]
    assert cross_entropy(z, 0).data == pytest.approx(0.0, abs=1e-300)
    assert cross_entropy(z, 1).data == pytest.approx(1000.0)
    assert cross_entropy(z, 2).data == pytest.approx(2000.0)
    assert grads(cross_entropy(z, 1), z) == pytest.approx([1.0, -1.0, 0.0])
    # the naive form overflows: exp(1000) is not a float
    with pytest.raises(OverflowError):
        math.exp(1000.0)


def test_cross_entropy_equal_logits_is_log_k():
    assert cross_entropy([Value(3.0)] * 4, 1).data == pytest.approx(math.log(4))


@pytest.mark.parametrize("bad", [3, -1, 1.0, True, "0"])
def test_cross_entropy_target_out_of_range(bad):
    with pytest.raises(ValueError, match=r"class index in 0\.\.2, got"):
        cross_entropy([Value(0.0)] * 3, bad)


def test_cross_entropy_empty_logits():
    with pytest.raises(ValueError, match="empty"):
        cross_entropy([], 0)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-30, 30, allow_nan=False), min_size=1, max_size=5),
    st.integers(0, 4),
)
def test_cross_entropy_gradient_is_softmax_minus_one_hot(logits, target):
    target %= len(logits)
    z = [Value(v) for v in logits]
    J = cross_entropy(z, target)
    p = softmax(logits)
    expected = [p[i] - (i == target) for i in range(len(z))]
    assert grads(J, z) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert J.data == pytest.approx(-math.log(p[target]), rel=1e-9, abs=1e-12)


# --- binary cross-entropy ------------------------------------------------------------------------


@pytest.mark.parametrize("z", [-30.0, -3.0, -0.1, 0.0, 0.1, 2.0, 30.0])
@pytest.mark.parametrize("y", [0, 1])
def test_binary_cross_entropy_value_and_gradient(z, y):
    logit = Value(z)
    J = binary_cross_entropy(logit, y)
    s = sigma(z)
    with mpmath.workdps(50):  # -[y log s + (1 - y) log(1 - s)] in 50 digits, no cancellation
        ms = 1 / (1 + mpmath.exp(-z))
        expected = float(-(y * mpmath.log(ms) + (1 - y) * mpmath.log(1 - ms)))
    assert J.data == pytest.approx(expected, rel=1e-13, abs=1e-15)
    assert grads(J, [logit])[0] == pytest.approx(s - y, rel=1e-12, abs=1e-15)


def test_binary_cross_entropy_large_logits_are_stable():
    for z, y, expected in [(1000.0, 1, 0.0), (-1000.0, 1, 1000.0), (1000.0, 0, 1000.0), (-1000.0, 0, 0.0)]:
        logit = Value(z)
        J = binary_cross_entropy(logit, y)
        assert J.data == pytest.approx(expected, abs=1e-12)
        assert grads(J, [logit])[0] == pytest.approx(sigma(z) - y, abs=1e-12)


def test_binary_cross_entropy_soft_target_and_bad_target():
    z = Value(0.7)
    s = sigma(0.7)
    assert binary_cross_entropy(z, 0.25).data == pytest.approx(-(0.25 * math.log(s) + 0.75 * math.log(1 - s)))
    with pytest.raises(ValueError, match=r"target must be in \[0, 1\], got 2"):
        binary_cross_entropy(z, 2)


# --- regularizers --------------------------------------------------------------------------------


def test_l2_value_and_gradient():
    ws = [Value(v) for v in (0.5, -2.0, 0.0)]
    J = l2(ws)
    assert J.data == pytest.approx(4.25)
    assert grads(J, ws) == pytest.approx([1.0, -4.0, 0.0])


def test_l1_value_and_gradient_with_zero_subgradient_at_0():
    ws = [Value(v) for v in (0.5, -2.0, 0.0)]
    J = l1(ws)
    assert J.data == pytest.approx(2.5)
    assert grads(J, ws) == [1.0, -1.0, 0.0]


def test_regularizer_bad_input():
    with pytest.raises(ValueError, match="no parameters"):
        l2([])
    with pytest.raises(TypeError, match=r"params\[1\] must be a Value"):
        l1([Value(1.0), 2.0])


# --- differentiable by the engine: Algorithm 6.5 agrees, finite differences agree -------------


def test_losses_are_differentiable_symbol_to_symbol():
    xs = [Value(0.3), Value(-1.2), Value(2.0)]
    J = cross_entropy(xs, 1) + 0.1 * l2(xs) + 0.05 * l1(xs) + mse(xs, [0.0, 1.0, 0.5])
    table = Graph(J).backprop()
    symbolic = grad(J, xs)  # Algorithm 6.5: nodes of B
    assert [g.data for g in symbolic] == pytest.approx([table[x] for x in xs], rel=1e-12)

    def f(vals):
        vs = [Value(v) for v in vals]
        return (cross_entropy(vs, 1) + 0.1 * l2(vs) + mse(vs, [0.0, 1.0, 0.5])).data + 0.05 * sum(
            map(abs, vals)
        )

    assert [table[x] for x in xs] == pytest.approx(central(f, [x.data for x in xs]), rel=1e-6)


def test_second_derivative_of_cross_entropy():
    # d2/dz0^2 of cross-entropy is p0 (1 - p0): B is differentiated again (section 6.5.10)
    z = [Value(0.4), Value(-0.3)]
    dz0 = grad(cross_entropy(z, 1), z[0])
    d2 = grad(dz0, z[0])
    p0 = softmax([0.4, -0.3])[0]
    assert d2.data == pytest.approx(p0 * (1 - p0), rel=1e-12)
