"""Bad input to the API: a TypeError or ValueError raised at the boundary, naming the argument.

A table of reproducers (each once gave an AttributeError, an OverflowError or an unnamed error from deep
inside, or passed silently). Each row: the call, the exception class, and words the message must contain.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import viz
from micrograph import (
    DomainError,
    Graph,
    Value,
    backprop,
    build_grad,
    compile_graph,
    datasets,
    expr,
    forward,
    grad,
    hessian_vector_product,
)
from micrograph.engine import as_value
from micrograph.forward_mode import jacobian_forward, jacobian_reverse, jvp
from micrograph.naive import naive_grad
from micrograph.nn import MLP
from micrograph.store import store_grad


def _x() -> Value:
    return Value(2.0, label="x")


CASES: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    ("Value + 10**400", lambda: _x() + 10**400, ValueError, "too large for a float"),
    ("Value ** 10**400", lambda: _x() ** 10**400, ValueError, "exponent"),
    ("Value(10**400)", lambda: Value(10**400), ValueError, "Value()"),
    ("forward({x: 10**400})", lambda: Graph(_x() * 1.0).forward([10**400]), ValueError, "too large"),
    ("forward({x: nan})", lambda: Graph(_x() * 1.0).forward([math.nan]), ValueError, "finite"),
    ("Value(nan).relu()", lambda: Value(math.nan).relu(), DomainError, "not finite"),
    ("Value(inf).relu()", lambda: Value(math.inf).relu(), DomainError, "not finite"),
    ("z.backward('a')", lambda: (_x() * 2.0).backward("a"), TypeError, "backward(gradient)"),
    ("compile_graph(G, None)", lambda: compile_graph(Graph(_x() * 2.0), None), TypeError, "wrt"),  # type: ignore[arg-type]
    ("part_size='a'", lambda: compile_graph(Graph(_x() * 2.0), [], part_size="a"), TypeError, "part_size"),  # type: ignore[arg-type]
    ("hvp(z, x, [1])", lambda: hessian_vector_product(_x() * _x(), _x(), [1]), TypeError, "wrt"),  # type: ignore[arg-type]
    ("hvp(z, [x], 1)", lambda: hessian_vector_product(_x() * _x(), [_x()], 1), TypeError, "v must"),  # type: ignore[arg-type]
    ("viz.draw(z, grad_table=5)", lambda: viz.draw(_x() * 2.0, grad_table=5), TypeError, "grad_table"),  # type: ignore[arg-type]
    ("viz.render(5, 'a.svg')", lambda: viz.render(5, "a.svg"), TypeError, "dot must be"),  # type: ignore[arg-type]
    ("viz.save(5, 'a.svg')", lambda: viz.save(5, "a.svg"), TypeError, "save"),
    (
        "micrograph.forward(z)",
        lambda: forward(_x() * 2.0),  # type: ignore[arg-type]
        TypeError,
        "forward takes a Graph (e.g. Graph(z))",
    ),
    ("micrograph.backprop(z)", lambda: backprop(_x() * 2.0), TypeError, "backprop takes a Graph"),  # type: ignore[arg-type]
    ("backprop([x] * 10**5)", lambda: backprop([_x()] * 10**5), TypeError, "got list [Value(data=2.0"),  # type: ignore[arg-type]
    ("micrograph.backprop(None)", lambda: backprop(None), TypeError, "got NoneType None"),  # type: ignore[arg-type]
    ("viz.to_tikz(z)", lambda: viz.to_tikz(_x() * 2.0), TypeError, "(e.g. viz.draw(z))"),  # type: ignore[arg-type]
    ("viz.to_tikz([x] * 10**5)", lambda: viz.to_tikz([_x()] * 10**5), TypeError, "got list [Value(data=2.0"),  # type: ignore[arg-type]
    ("G.prune(None)", lambda: Graph(_x() * 2.0).prune(None), TypeError, "G.prune(T): T must be a Value or"),  # type: ignore[arg-type]
    (
        "draw(highlight=1)",
        lambda: viz.draw(_x() * 2.0, highlight=1),  # type: ignore[arg-type]
        TypeError,
        "highlight must be a Value or",
    ),
    (
        "draw(title=1)",
        lambda: viz.draw(_x() * 2.0, title=1),  # type: ignore[arg-type]
        TypeError,
        "draw(title=...) must be a str or None",
    ),
    (
        "draw_side_by_side(z, None)",
        lambda: viz.draw_side_by_side(_x() * 2.0, None),  # type: ignore[arg-type]
        TypeError,
        "wrt must be a",
    ),
    (
        "text(grad_table=1)",
        lambda: viz.text(_x() * 2.0, grad_table=1),  # type: ignore[arg-type]
        TypeError,
        "text(grad_table=...) must be a",
    ),
    (
        "jacobian_forward(None, x)",
        lambda: jacobian_forward(None, [_x()]),  # type: ignore[arg-type]
        TypeError,
        "jacobian_forward: outputs",
    ),
    ("jacobian_reverse(x, 1)", lambda: jacobian_reverse([_x()], 1), TypeError, "jacobian_reverse: inputs"),  # type: ignore[arg-type]
    ("expr.build('x', None)", lambda: expr.build("x", None), TypeError, "env"),  # type: ignore[arg-type]
    ("standardize(X)", lambda: datasets.standardize([[1.0, 2.0], [3.0, 4.0]]), TypeError, "pair (X, y)"),  # type: ignore[arg-type]
    (
        "standardize NaN",
        lambda: datasets.standardize(([[1.0, math.nan], [3.0, 4.0]], [0, 1])),
        ValueError,
        "not finite",
    ),
    (
        "standardize inf",
        lambda: datasets.standardize(([[1.0, 2.0], [math.inf, 4.0]], [0, 1])),
        ValueError,
        "not finite",
    ),
]


@pytest.mark.parametrize("what, call, error, says", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_a_clear_error(
    what: str, call: Callable[[], Any], error: type[Exception], says: str
) -> None:
    with pytest.raises(error) as e:
        call()
    assert says in str(e.value), str(e.value)
    assert len(str(e.value)) < 600  # a huge number is shortened, not printed in full


# Each public entry point that names what it was wrongly given, given a list of 10**5 nodes and a string of
# 10**6 characters: the message names the type and shows a few items, never the whole value.
WRONG_ARGUMENT: list[tuple[str, Callable[[Any], Any]]] = [
    ("Graph(z)", lambda a: Graph(a)),
    ("grad(z, T)", lambda a: grad(a, _x())),
    ("grad(z, T=...)", lambda a: grad(_x() * 2.0, [_x(), a])),
    ("store_grad(z, w)", lambda a: store_grad(a, _x())),
    ("Value(data)", lambda a: Value(a)),
    ("Value(label=...)", lambda a: Value(1.0, label=[a])),
    ("x + a", lambda a: as_value(a)),
    ("forward value", lambda a: Graph(_x() * 2.0).forward([a])),
    ("viz.draw(z)", lambda a: viz.draw(a)),
    ("viz.render(dot, path)", lambda a: viz.render(a, "never.svg")),
    ("viz.to_tikz(drawing)", lambda a: viz.to_tikz(a)),
    ("viz.explore(z)", lambda a: viz.explore(a)),
    ("backprop(G)", lambda a: backprop(a)),
    ("build_grad(V, G, G_prime, grad_table)", lambda a: build_grad(_x(), Graph(_x() * 2.0), a, {})),
    ("forward(values)", lambda a: Graph(_x() * 2.0).forward(a)),
    ("jvp(z, wrt, v)", lambda a: jvp(_x() * 2.0, [_x()], [a])),
    ("MLP(nin, nouts)", lambda a: MLP(2, a)),
    ("MLP()(x)", lambda a: MLP(2, [3])(a)),
    ("naive_grad(max_operations=...)", lambda a: naive_grad(_x() * 2.0, _x(), max_operations=a)),
    ("G.prune(T)", lambda a: Graph(_x() * 2.0).prune([_x(), a])),
    ("G.name(node)", lambda a: Graph(_x() * 2.0).name(a)),
    ("forward({node: x})", lambda a: Graph(_x() * 2.0).forward({tuple(a): 1.0})),
    ("viz.draw(z, highlight=...)", lambda a: viz.draw(_x() * 2.0, highlight=[_x(), a])),
    ("viz.draw(z, title=...)", lambda a: viz.draw(_x() * 2.0, title=[a])),
    ("viz.draw_side_by_side(z, wrt)", lambda a: viz.draw_side_by_side(_x() * 2.0, [_x(), a])),
    ("viz.text(z, grad_table=...)", lambda a: viz.text(_x() * 2.0, grad_table=a)),
    ("jacobian_forward(outputs, inputs)", lambda a: jacobian_forward([_x(), a], [_x()])),
    ("jacobian_reverse(outputs, inputs)", lambda a: jacobian_reverse([_x()], [_x(), a])),
    ("hessian_vector_product(z, wrt, v)", lambda a: hessian_vector_product(_x() * 2.0, [_x()], (a,))),
]


@pytest.mark.parametrize("what, call", WRONG_ARGUMENT, ids=[c[0] for c in WRONG_ARGUMENT])
@pytest.mark.parametrize("value", [[Value(2.0)] * 10**5, "a" * 10**6], ids=["list", "str"])
def test_a_huge_wrong_argument_is_shown_cut_short(what: str, call: Callable[[Any], Any], value: Any) -> None:
    with pytest.raises((TypeError, ValueError)) as e:
        call(value)
    message = str(e.value)
    assert len(message) < 600 and "\n" not in message, message[:1000]
    assert " got " in message or "is not a node of this graph" in message, message


def _csv(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_load_csv_names_the_file_and_line(tmp_path: Path) -> None:
    header = b"2,2,setosa,versicolor\n"
    bad_label = _csv(tmp_path, "label.csv", header + b"1,2,0\n3,4,x\n")
    with pytest.raises(datasets.DataFileError, match=r"label\.csv, line 3") as e:
        datasets.load_csv(bad_label)
    assert "'x'" in str(e.value)
    latin = _csv(tmp_path, "latin.csv", header + b"1,2,0\n3,4,\xff\n")
    with pytest.raises(datasets.DataFileError, match=r"latin\.csv, line 3: the file is not UTF-8"):
        datasets.load_csv(latin)
    nan = _csv(tmp_path, "nan.csv", header + b"1,nan,0\n3,4,1\n")
    with pytest.raises(datasets.DataFileError, match=r"nan\.csv, line 2: a feature is not finite"):
        datasets.load_csv(nan)


def test_load_csv_accepts_a_byte_order_mark(tmp_path: Path) -> None:
    bom = _csv(tmp_path, "bom.csv", b"\xef\xbb\xbf2,2,a,b\n1,2,0\n3,4,1\n")
    (X, y), classes = datasets.load_csv(bom)
    assert X == [[1.0, 2.0], [3.0, 4.0]] and y == [0, 1] and classes == ["a", "b"]


@pytest.mark.parametrize(
    "call, where",
    [
        (lambda z, T: __import__("micrograph").grad(z, T), "grad(z, T): T"),
        (lambda z, T: compile_graph(Graph(z), T), "compile_graph: wrt"),
        (lambda z, T: viz.explore(z, wrt=T), "explore(z, wrt): wrt"),
        (lambda z, T: __import__("micrograph").jvp(z, T, [1.0]), "jvp: inputs"),
    ],
)
def test_every_list_of_targets_is_checked_alike(call: Callable[..., Any], where: str) -> None:
    """One check (micrograph.graph.as_values) for every argument that takes one Value or several."""
    w = Value(0.5, label="w")
    z = w.tanh()
    head = re.escape(where)
    with pytest.raises(TypeError, match=rf"^{head} must be a Value or a sequence of Values, got str"):
        call(z, "w")
    with pytest.raises(ValueError, match=rf"^{head} is empty"):
        call(z, [])
    with pytest.raises(TypeError, match=rf"^{head}\[1\] must be a Value, got float 2\.0"):
        call(z, [w, 2.0])


# --- the seed, jvp's direction, 0-d arrays, sets, cycles, the grad_table's repr ------------------------

np = pytest.importorskip("numpy")


def _z() -> tuple[Value, Value]:
    x = Value(0.5, label="x")
    return x, (x * x).tanh()


@pytest.mark.parametrize("seed", [1.0, 1, np.float32(1.0), np.float64(1.0), np.int64(1)])
def test_the_seed_of_algorithm_6_2_is_converted_as_backward_converts_it(seed: Any) -> None:
    x, z = _z()
    table = Graph(z).backprop(seed)
    assert all(type(g) is float for g in table.values())
    z.backward()
    assert table[x] == x.grad  # float64 throughout: no float32 rounding (it gave 1.7e-8 relative error)
    assert list(Graph(z).backprop(seed).values()) == [table[v] for v in Graph(z).nodes]


@pytest.mark.parametrize(
    "seed, error, words",
    [(None, TypeError, "real number"), ("1", TypeError, "real number"),
     (np.array([1.0]), TypeError, "ndarray"), (1j, TypeError, "complex"), (10**400, ValueError, "too large"),
     (math.nan, ValueError, "seed dz/dz"), (math.inf, ValueError, "seed dz/dz")],
)  # fmt: skip
def test_a_bad_seed_is_named_never_blamed_on_tanh(seed: Any, error: type[Exception], words: str) -> None:
    _, z = _z()
    with pytest.raises(error, match=re.escape(words)) as e:
        Graph(z).backprop(seed)
    assert "seed" in str(e.value) and "tanh" not in str(e.value)
    assert not isinstance(e.value, DomainError)


@pytest.mark.parametrize(
    "v, error, words",
    [(True, TypeError, "bool"), (None, TypeError, "NoneType"), ("1", TypeError, "str"),
     (__import__("decimal").Decimal(1), TypeError, "Decimal"), ([None], TypeError, "v[0]"),
     (math.nan, ValueError, "v[0] must be finite"), ([math.inf], ValueError, "v[0] must be finite"),
     ([1.0, 2.0], ValueError, "2 components"), (np.array(1.0), TypeError, "real number")],
)  # fmt: skip
def test_jvp_names_a_bad_direction(v: Any, error: type[Exception], words: str) -> None:
    from micrograph.forward_mode import jvp

    x, z = _z()
    with pytest.raises(error, match=re.escape(words)):
        jvp(z, x, v)


def test_jvp_takes_any_real_number_and_refuses_an_overflowing_tangent() -> None:
    from fractions import Fraction

    from micrograph.forward_mode import jvp

    x, z = _z()
    z.backward()
    for v in (1.0, 1, np.float64(1.0), np.float32(1.0), Fraction(1, 1), [np.int64(1)]):
        assert jvp(z, x, v).tangents == pytest.approx((x.grad,), rel=1e-15)
    w = Value(2.0)
    with pytest.raises(DomainError, match=r"tangent .* is not finite"):
        jvp(w * w, w, 1e308)  # the tangent 4e308 overflows, as a gradient would in backward


@pytest.mark.parametrize("call", ["grad", "compile_graph", "jvp"])
def test_a_zero_dimensional_array_is_a_type_error_naming_the_argument(call: str) -> None:
    from micrograph import grad
    from micrograph.forward_mode import jvp

    _, z = _z()
    a = np.array(2.0)
    calls = {"grad": lambda: grad(z, a), "compile_graph": lambda: compile_graph(Graph(z), a),
             "jvp": lambda: jvp(z, a, 1.0)}  # fmt: skip
    with pytest.raises(TypeError, match="must be a Value or a sequence of Values") as e:
        calls[call]()
    assert "iteration over a 0-d array" not in str(e.value)


def test_forward_refuses_a_set_whose_order_is_not_the_inputs() -> None:
    a, c = Value(1.0, label="a"), Value(2.0, label="c")
    g = Graph(a - c)
    with pytest.raises(TypeError, match="a set has no order"):
        g.forward({9.0, 1.0})
    with pytest.raises(TypeError, match="a set has no order"):
        g.forward(frozenset({9.0, 1.0}))
    assert g.forward([9.0, 1.0]) == 8.0


def _cycle() -> tuple[Value, Value]:
    a = Value(1.0, label="a")
    b = a * 2.0
    c = b + 1.0
    b._a = c  # a cycle made through the private parent slots: b -> c -> b
    return a, c


def test_a_cycle_is_named_by_graph_and_by_backward_without_recursion() -> None:
    a, c = _cycle()
    with pytest.raises(ValueError, match="the graph has a cycle"):
        Graph(c)
    c.grad, a.grad = 0.25, 0.5
    with pytest.raises(ValueError, match="the graph has a cycle"):
        c.backward()
    assert (c.grad, a.grad) == (0.25, 0.5)  # nothing changed
    d = Value(1.0)
    e = d * 3.0
    e._a = e  # a node its own parent
    with pytest.raises(ValueError, match="the graph has a cycle"):
        Graph(e)
    with pytest.raises(ValueError, match="the graph has a cycle"):
        e.backward()
    deep = Value(0.1)  # a long cycle: the checks are iterative (no RecursionError)
    first = node = deep * 1.0
    for _ in range(100_000):
        node = node + 1.0
    first._a = node
    with pytest.raises(ValueError, match="the graph has a cycle"):
        Graph(node)
    with pytest.raises(ValueError, match="the graph has a cycle"):
        node.backward()


def test_random_dags_have_no_cycle_reported() -> None:
    import random

    rng = random.Random(5)
    for _ in range(30):
        nodes = [Value(rng.uniform(0.5, 1.5)) for _ in range(3)]
        for _ in range(20):
            a, b = rng.choice(nodes), rng.choice(nodes)
            nodes.append(rng.choice([a + b, a * b, a.tanh()]))
        Graph(nodes[-1]).backprop()
        nodes[-1].backward()


def test_the_grad_table_prints_with_the_books_names() -> None:
    x, z = _z()
    table = Graph(z).backprop()
    text = repr(table)
    assert "Value(" not in text
    lines = text.splitlines()
    assert lines[0].startswith("GradTable of Graph(n=3")
    assert lines[1] == f"  grad_table[u1] (x) = {table[x]!r}"
    assert lines[3] == "  grad_table[u3] = 1.0"
    t = Value(0.1, label="w")
    for _ in range(100):
        t = t * 1.01
    long = repr(Graph(t).backprop()).splitlines()
    assert len(long) == 1 + 40 + 1 and "more entries" in long[21] and "grad_table[u201]" in long[-1]


def test_a_drawings_size_and_a_networks_example_are_checked_with_their_names() -> None:
    from micrograph import nn

    z = Value(1.0, label="x") * 2.0
    for bad in ("a", True, 2.5):
        with pytest.raises(TypeError, match=f"max_nodes must be a whole number of nodes, got {bad!r}"):
            viz.draw(z, max_nodes=bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"text\(max_rows=...\) must be a whole number of lines"):
            viz.text(z, max_rows=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"text\(max_rows=...\) must be a positive number of lines, got -5"):
        viz.text(z, max_rows=-5)
    model = nn.MLP(2, [3, 1], seed=0)
    for bad in (3.0, "ab", None):
        with pytest.raises(TypeError, match=r"MLP\(2, \[3, 1\]\): x must be a list of 2 numbers"):
            model(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"numbers or Values; x\[1\] is NoneType None"):
        model([1.0, None])
    assert model((1.0, 2.0)).data == model([1.0, 2.0]).data


def test_a_target_outside_g_is_refused_by_the_drawing_as_by_the_explorer() -> None:
    x, other = Value(0.5, label="x"), Value(2.0, label="other")
    z = (x * 3.0).tanh()
    for draw in (viz.draw_side_by_side, viz.explore):
        name = draw.__name__
        with pytest.raises(ValueError, match=rf"{name}\(z, wrt\): wrt\[1\] = .*'other'.* is not a node"):
            draw(z, [x, other])  # type: ignore[operator]
