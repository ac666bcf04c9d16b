"""Forward mode (section 6.5.9): J v from the operation table's rules, checked against sympy, finite
differences and Algorithm 6.2 on the catalogue and on random DAGs."""

from __future__ import annotations

import itertools
import math
import random

import pytest
import sympy
from catalogue import CATALOGUE, Case, sympy_value
from hypothesis import given
from strategies import DAG_SETTINGS, dag_cases

from micrograph import Value, jacobian_forward, jacobian_reverse, jvp


def _close(a: float, b: float, rel: float = 1e-12) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=rel * 1e-3)


def check_jvp(case: Case, seed: int) -> None:
    z, xs = case.build_values()
    rng = random.Random(seed)
    v = [rng.uniform(-1.0, 1.0) for _ in xs]
    r = jvp(z, xs, v)
    expr, symbols = case.sympy()
    exact = sum(vk * sympy_value(sympy.diff(expr, s), symbols, case.point) for s, vk in zip(symbols, v))
    assert _close(r.tangents[0], exact, 1e-11), (case.name, r.tangents, exact)
    assert r.values == (z.data,)
    # central differences of the plain-float evaluation along v
    h = 1e-6
    plus = case.evaluate([p + h * vk for p, vk in zip(case.point, v)])
    minus = case.evaluate([p - h * vk for p, vk in zip(case.point, v)])
    assert math.isclose(r.tangents[0], (plus - minus) / (2 * h), rel_tol=1e-5, abs_tol=1e-6)
    # n forward passes and one reverse pass give the same row
    J_f, _ = jacobian_forward([z], xs)
    J_r, _ = jacobian_reverse([z], xs)
    for a, b in zip(J_f[0], J_r[0]):
        assert _close(a, b, 1e-12), (case.name, J_f, J_r)


@pytest.mark.parametrize("case", CATALOGUE, ids=[c.name for c in CATALOGUE])
def test_jvp_on_catalogue(case: Case) -> None:
    check_jvp(case, 6509)


@DAG_SETTINGS
@given(dag_cases())
def test_jvp_on_random_dags(case: Case) -> None:
    check_jvp(case, 17)


def test_counts_n_forward_passes_against_m_reverse_passes() -> None:
    """f: R^n -> R^m; forward mode costs n passes, reverse mode m: each pass one derivative per edge."""
    n = 6
    xs = [Value(0.1 * (k + 1), label=f"x{k}") for k in range(n)]
    s = sum(((a * b).tanh() for a, b in itertools.pairwise(xs)), Value(0.0))
    outs = [s * s, s.sin()]  # m = 2 outputs of n = 6 inputs
    J_f, cost_f = jacobian_forward(outs, xs)
    J_r, cost_r = jacobian_reverse(outs, xs)
    for rf, rr in zip(J_f, J_r):
        for a, b in zip(rf, rr):
            assert _close(a, b)
    one_pass = jvp(outs, xs, [1.0] * n).evaluations
    assert cost_f == n * one_pass
    assert cost_r < cost_f  # m = 2 reverse passes beat n = 6 forward passes here


def test_errors_name_the_argument() -> None:
    x = Value(1.0, label="x")
    with pytest.raises(ValueError, match="v has 2 components but inputs has 1"):
        jvp(x * x, x, [1.0, 2.0])
    with pytest.raises(TypeError, match=r"v\[0\] must be a real number"):
        jvp(x * x, [x], ["1"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"inputs\[0\] must be a Value"):
        jvp(x * x, [1.0], [1.0])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="outputs is empty"):
        jvp([], [x], [1.0])


def test_a_derivative_outside_its_domain_is_a_domain_error() -> None:
    from micrograph import DomainError

    x = Value(0.0, label="x")
    with pytest.raises(DomainError, match=r"sqrt\(0.0\).*its derivative in argument 1"):
        jvp(x.sqrt(), [x], [1.0])
