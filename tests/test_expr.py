"""micrograph.expr: the whitelist parser for expressions typed on the command line (never eval)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from micrograph import DomainError, Graph, Value
from micrograph.expr import ALLOWED, FUNCTIONS, ExprError, build, parse, parse_binding, variables


def test_builds_figure_6_10_chain():
    z = build("tanh(tanh(tanh(w)))", {"w": 0.5})
    assert z.data == pytest.approx(math.tanh(math.tanh(math.tanh(0.5))), rel=1e-15)
    g = Graph(z)
    assert [v.op.name for v in g.nodes[g.n_inputs :]] == ["tanh", "tanh", "tanh"]
    assert g.leaves[0].label == "w"


def test_a_name_used_twice_is_one_leaf_with_two_edges():
    z = build("w * w", {"w": 3.0})
    assert z.data == 9.0
    assert z.inputs[0] is z.inputs[1]
    assert Graph(z).num_edges == 2


def test_every_operator_and_function_matches_math():
    env = {"x": 0.7, "y": 1.3}
    cases = {
        "x + y": 0.7 + 1.3,
        "x - y": 0.7 - 1.3,
        "x * y": 0.7 * 1.3,
        "x / y": 0.7 / 1.3,
        "x ** y": 0.7**1.3,
        "x ** 3": 0.7**3,
        "2 ** x": 2**0.7,
        "-x": -0.7,
        "+x": 0.7,
        "exp(x)": math.exp(0.7),
        "log(y)": math.log(1.3),
        "tanh(x)": math.tanh(0.7),
        "sigmoid(x)": 1 / (1 + math.exp(-0.7)),
        "relu(x - y)": 0.0,
        "sin(x)": math.sin(0.7),
        "cos(x)": math.cos(0.7),
        "sqrt(y)": math.sqrt(1.3),
        "1e-3 * x + 2": 1e-3 * 0.7 + 2,
    }
    for text, expected in cases.items():
        assert build(text, env).data == pytest.approx(expected, rel=1e-12), text
    assert set(FUNCTIONS) == {"exp", "log", "tanh", "sigmoid", "relu", "sin", "cos", "sqrt"}


def test_leaves_given_as_values_are_used_as_is():
    w = Value(0.25, label="w")
    z = build("w * 4", {"w": w})
    assert z.inputs[0] is w


def test_variables_in_order_of_appearance_without_function_names():
    assert variables("tanh(b) * a + b * exp(c)") == ["b", "a", "c"]


def test_derivative_through_parsed_graph():
    z = build("x * sin(x) + log(y)", {"x": 0.4, "y": 2.0})
    z.backward()
    x, y = Graph(z).variables
    assert x.label == "x" and y.label == "y"
    assert x.grad == pytest.approx(math.sin(0.4) + 0.4 * math.cos(0.4), rel=1e-12)
    assert y.grad == pytest.approx(0.5, rel=1e-12)


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("__import__('os')", "calling __import__() is not allowed"),
        ("w.data", "attribute access"),
        ("w.__class__.__bases__", "attribute access"),
        ("lambda: 1", "lambda"),
        ("[x for x in w]", "comprehensions"),
        ("(x for x in w)", "comprehensions"),
        ("w[0]", "subscripts"),
        ("open('f')", "calling open() is not allowed"),
        ("exp(w, w)", "exactly one argument"),
        ("exp(x=w)", "exactly one argument"),
        ("'s' + w", "only real numbers"),
        ("True + w", "only real numbers"),
        ("1j * w", "only real numbers"),
        ("w // 2", "operator //"),
        ("w % 2", "operator %"),
        ("w < 2", "comparisons"),
        ("w if w else w", "conditional"),
        ("(w := 2)", "assignment"),
        ("(w, w)", "tuples"),
        ("not w", "operator not"),
        ("(tanh)(w)(w)", "only calls of plain function names"),
    ],
)
def test_forbidden_constructs_are_refused_saying_what_is_allowed(text, fragment):
    with pytest.raises(ExprError) as e:
        build(text, {"w": 0.5, "x": 1.0})
    assert fragment in str(e.value)
    assert ALLOWED in str(e.value)
    assert "\n" not in str(e.value)


def test_never_evals(monkeypatch):
    import builtins

    def refuse(*args, **kwargs):
        raise AssertionError("micrograph.expr must not call eval or exec")

    for name in ("eval", "exec"):  # ast.parse itself uses compile(), which only parses
        monkeypatch.setattr(builtins, name, refuse)
    assert build("exp(w) * 2", {"w": 0.0}).data == 2.0
    with pytest.raises(ExprError):
        parse("__import__('os').system('true')")


def test_syntax_error_has_position_and_caret():
    with pytest.raises(ExprError) as e:
        build("tanh(w +)", {"w": 0.5})
    err = e.value
    assert "syntax error" in str(err)
    assert err.col == 8  # the ")" that cannot follow "+"
    line, caret = err.caret().splitlines()
    assert line.strip() == "tanh(w +)"
    assert caret.index("^") == line.index(")")


@pytest.mark.parametrize("text", ["w +", "w +   ", "  w *", "tanh(w) -"])
def test_an_expression_that_ends_too_soon_is_shown_at_its_end(text: str) -> None:
    # Python's parser gives offset 0 when it runs out of text: the place is the end, not "column 0"
    with pytest.raises(ExprError) as e:
        build(text, {"w": 0.5})
    end = len(text.rstrip())
    assert str(e.value).endswith(f"at column {end + 1}")
    line, caret = e.value.caret().splitlines()
    assert caret.index("^") == line.index(text.strip()) + len(text.strip())


def test_unknown_name_says_how_to_bind_it():
    with pytest.raises(ExprError) as e:
        build("w + q", {"w": 0.5})
    msg = str(e.value)
    assert "unknown name 'q'" in msg and "--at q=NUMBER" in msg and "names bound: w" in msg
    assert e.value.caret().splitlines()[1].index("^") == e.value.caret().splitlines()[0].index("q")


def test_function_name_used_as_a_variable():
    with pytest.raises(ExprError, match="tanh is a function"):
        build("tanh + 1", {})


def test_domain_errors_come_from_the_engine():
    with pytest.raises(DomainError, match="log"):
        build("log(w - 1)", {"w": 0.5})
    with pytest.raises(DomainError, match="div"):
        build("1 / (w - w)", {"w": 0.5})
    with pytest.raises(DomainError, match="sqrt"):
        build("sqrt(-1)", {})


def test_empty_and_deeply_nested():
    with pytest.raises(ExprError, match="empty"):
        parse("   ")
    with pytest.raises(ExprError):
        parse("(" * 500 + "w" + ")" * 500)


def test_deep_but_parseable_expression_builds_without_recursion():
    text = "w" + " + w" * 300  # a left-leaning tree 300 deep: Python parses it; we walk it with a stack
    z = build(text, {"w": 1.0})
    assert z.data == 301.0


@pytest.mark.parametrize(
    "text, ok",
    [
        ("w=0.5", ("w", 0.5)),
        (" x = -2e3 ", ("x", -2000.0)),
        ("w", None),
        ("2=1", None),
        ("w=abc", None),
        ("w=nan", None),
        ("w=inf", None),
        ("tanh=1", None),
    ],
)
def test_parse_binding(text, ok):
    if ok is None:
        with pytest.raises(ExprError):
            parse_binding(text)
    else:
        assert parse_binding(text) == ok


_leaf = st.sampled_from(["x", "y", "2", "0.5"])


@st.composite
def _expressions(draw, depth=0):
    if depth > 3 or draw(st.booleans()):
        return draw(_leaf)
    kind = draw(st.sampled_from(["bin", "fun", "neg"]))
    if kind == "bin":
        op = draw(st.sampled_from(["+", "-", "*"]))
        return f"({draw(_expressions(depth + 1))} {op} {draw(_expressions(depth + 1))})"
    if kind == "neg":
        return f"-{draw(_expressions(depth + 1))}"
    f = draw(st.sampled_from(["tanh", "sin", "cos", "sigmoid", "exp"]))
    return f"{f}({draw(_expressions(depth + 1))})"


@settings(max_examples=60, deadline=None)
@given(_expressions(), st.floats(-2, 2), st.floats(-2, 2))
def test_random_expressions_match_python_math(text, x, y):
    import math as m

    ns = {
        "x": x,
        "y": y,
        "tanh": m.tanh,
        "sin": m.sin,
        "cos": m.cos,
        "exp": m.exp,
        "sigmoid": lambda t: 1 / (1 + m.exp(-t)) if t >= 0 else m.exp(t) / (1 + m.exp(t)),
    }
    try:
        expected = eval(text, {"__builtins__": {}}, ns)  # the oracle only; micrograph never evals
    except OverflowError:  # e.g. exp(exp(exp(exp(x)))) at x = 1: micrograph refuses the same expression
        expected = m.inf
    if not m.isfinite(expected):
        with pytest.raises(DomainError):
            build(text, {"x": x, "y": y})
        return
    assert build(text, {"x": x, "y": y}).data == pytest.approx(expected, rel=1e-9, abs=1e-12)
