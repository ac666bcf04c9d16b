"""The README's section "micrograph, micrograd and PyTorch", measured: each claim checked against PyTorch."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from micrograph import DomainError, Value

torch = pytest.importorskip("torch")

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")

EDGES: list[tuple[str, Callable[[Any], Any], float]] = [
    ("sqrt at 0", lambda v: v.sqrt() if isinstance(v, Value) else torch.sqrt(v), 0.0),
    ("log 0", lambda v: v.log(), 0.0),
    ("1/0", lambda v: 1 / v, 0.0),
    ("(-2)**2.5", lambda v: v**2.5, -2.0),
    ("exp(710)", lambda v: v.exp(), 710.0),
    ("a nan leaf", lambda v: v * 2, math.nan),
]


@pytest.mark.parametrize("name, f, x", EDGES, ids=[e[0] for e in EDGES])
def test_where_pytorch_returns_inf_or_nan_micrograph_raises_and_keeps_every_grad(
    name: str, f: Callable[[Any], Any], x: float
) -> None:
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    y = f(t)
    y.backward()
    assert not (math.isfinite(y.item()) and math.isfinite(t.grad.item())), name  # PyTorch: inf or nan
    v = Value(x)
    v.grad = 0.25
    with pytest.raises(DomainError):
        f(v).backward()
    assert v.grad == 0.25


def test_relu_of_negative_zero_and_abs_at_zero() -> None:
    v = Value(-0.0)
    r = v.relu()
    r.backward()
    assert r.data == 0.0 and math.copysign(1.0, r.data) == 1.0 and v.grad == 0.0
    t = torch.tensor(-0.0, dtype=torch.float64, requires_grad=True)
    tr = torch.relu(t)
    tr.backward()
    assert math.copysign(1.0, tr.item()) == -1.0 and t.grad.item() == 0.0  # PyTorch keeps -0.0
    for x in (-1.5, 0.0, 2.0):
        w, tw = Value(x), torch.tensor(x, dtype=torch.float64, requires_grad=True)
        a, ta = abs(w), torch.abs(tw)
        a.backward()
        ta.backward()
        assert (a.data, w.grad) == (ta.item(), tw.grad.item())


def test_repeated_backward_accumulates_as_in_pytorch() -> None:
    x, y = Value(2.0), Value(3.0)
    z = (x * y) * x
    z.backward()
    z.backward()
    tx, ty = (torch.tensor(c, dtype=torch.float64, requires_grad=True) for c in (2.0, 3.0))
    tz = (tx * ty) * tx
    tz.backward(retain_graph=True)
    tz.backward()
    assert (x.grad, y.grad) == (tx.grad.item(), ty.grad.item()) == (24.0, 8.0)
    assert "dz/dx = 24" in README and "micrograd gives 30" in README


def test_tanh_is_math_tanh_one_unit_from_the_lecture() -> None:
    n = 6.8813735870195432 + (2.0 * -3.0 + 0.0 * 1.0)  # the lecture's neuron
    e = math.exp(2 * n)
    lecture = (e - 1) / (e + 1)
    ours = Value(n).tanh().data
    theirs = torch.tanh(torch.tensor(n, dtype=torch.float64)).item()
    assert ours == math.tanh(n) and repr(ours) == "0.7071067811865477"
    assert repr(lecture) == repr(theirs) == "0.7071067811865476"
    assert math.ulp(lecture) == abs(ours - lecture)
    assert "0.7071067811865477" in README and "0.7071067811865476" in README


def test_comparisons_are_plain_bools_and_equality_is_identity() -> None:
    a, b = Value(2.0), Value(2.0)
    assert (a <= b, a >= b, a < b, a > b) == (True, True, False, False)
    assert a != b and len({a: 1, b: 2}) == 2
    assert "`==` stays identity" in README
