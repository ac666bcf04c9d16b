"""``+``, ``*`` and relu, compiled from the table by micrograph.compile_nodes, build apply's nodes."""

from __future__ import annotations

import inspect
import math
import operator
import traceback
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from micrograph import DomainError, Value, compile_nodes
from micrograph.engine import apply
from micrograph.mlp import _weighted_sum
from micrograph.ops import ADD, MUL, RELU, SUB

_NUMBER = st.one_of(
    st.floats(-1e200, 1e200, allow_nan=False),
    st.integers(-(10**6), 10**6),
    st.sampled_from([1e308, -1e308, 0.0, -0.0, 5e-324, True]),
)
_SYMBOL = {ADD: operator.add, MUL: operator.mul}


def _built(make: Any) -> tuple[Any, Any]:
    """(the node ``make()`` returns, None) or (None, the error it raised, as type and message)."""
    try:
        return make(), None
    except (TypeError, ValueError, ArithmeticError) as e:
        return None, (type(e), str(e))


def _same_node(u: Value, v: Value, given_nodes: tuple[Any, ...]) -> None:
    """u and v the same node: value to the bit, operation, a fresh gradient, and parents (a given Value the
    same object, a number the same constant leaf)."""
    assert math.copysign(1.0, u.data) == math.copysign(1.0, v.data) and u.data == v.data
    assert (u.op, u.grad, u.meta, u.label) == (v.op, v.grad, v.meta, v.label) and u.grad == 0.0
    assert len(u.inputs) == len(v.inputs) == len(given_nodes)
    for a, b, g in zip(u.inputs, v.inputs, given_nodes):
        if isinstance(g, Value):
            assert a is g and b is g
        else:
            assert a.is_constant and b.is_constant and a.data == b.data == g and a.inputs == b.inputs == ()


@settings(max_examples=400, derandomize=True)
@given(
    x=_NUMBER.map(Value),
    y=st.one_of(_NUMBER, _NUMBER.map(Value), st.sampled_from(["2", None, [1.0]])),
    op=st.sampled_from([ADD, MUL]),
    reflected=st.booleans(),
)
def test_the_compiled_operators_build_applys_node(x: Value, y: Any, op: Any, reflected: bool) -> None:
    args = (y, x) if reflected else (x, y)
    compiled, error = _built(lambda: _SYMBOL[op](*args))
    plain, expected = _built(lambda: apply(op, args))
    if error is not None and error[0] is TypeError:  # not a number: Python's message, apply's is its own
        assert expected is not None and expected[0] is TypeError
        return
    assert error == expected
    if compiled is not None:
        _same_node(compiled, plain, args)


@settings(max_examples=200, derandomize=True)
@given(x=_NUMBER.map(Value), data=st.sampled_from([math.inf, -math.inf, math.nan, None]))
def test_the_compiled_relu_builds_applys_node(x: Value, data: float | None) -> None:
    if data is not None:  # a leaf set to a number no operation takes
        x.data = data
    compiled, error = _built(x.relu)
    plain, expected = _built(lambda: apply(RELU, (x,)))
    assert error == expected
    if compiled is not None:
        _same_node(compiled, plain, (x,))
    else:
        assert data is not None and "an argument is not finite" in error[1]


def test_an_overflow_names_the_operation_and_the_compiled_line() -> None:
    with pytest.raises(DomainError, match=r"mul\(1e\+308, 1e\+308\) = inf is not finite") as e:
        Value(1e308) * 1e308
    shown = "".join(traceback.format_exception(e.value))
    assert "compiled by micrograph/compile_nodes.py" in shown
    assert "raise DomainError(MUL, (self, other), result=d)" in shown


@pytest.mark.parametrize(
    ("method", "value"),
    [
        (Value.__add__, str(ADD.code).format("self.data", "other.data")),
        (Value.__mul__, str(MUL.code).format("self.data", "other.data")),
        (Value.relu, str(RELU.code).format("x")),
        (_weighted_sum, str(MUL.code).format("wi.data", "xi.data")),
        (_weighted_sum, str(ADD.code).format("total.data", "t.data")),
    ],
)
def test_the_compiled_text_is_the_tables_code_template(method: Any, value: str) -> None:
    # the value is the operation's own template written out, and inspect reads the text that runs
    assert f"d = {value}\n" in inspect.getsource(method)


def test_only_add_mul_and_relu_are_compiled() -> None:
    with pytest.raises(KeyError, match="compiles no method of 2 arguments for sub"):
        compile_nodes.operator(SUB, {})
    with pytest.raises(KeyError, match="compiles no method of 1 arguments for add"):
        compile_nodes.function(ADD, {}, "")
    with pytest.raises(KeyError):
        compile_nodes.node_source(SUB, ("a", "b"), "out")
