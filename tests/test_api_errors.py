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
from micrograph import DomainError, Graph, Value, compile_graph, datasets, expr, hessian_vector_product


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
    """One check (micrograph.engine.as_values) for every argument that takes one Value or several."""
    w = Value(0.5, label="w")
    z = w.tanh()
    head = re.escape(where)
    with pytest.raises(TypeError, match=rf"^{head} must be a Value or a sequence of Values, got str"):
        call(z, "w")
    with pytest.raises(ValueError, match=rf"^{head} is empty"):
        call(z, [])
    with pytest.raises(TypeError, match=rf"^{head}\[1\] must be a Value, got float 2\.0"):
        call(z, [w, 2.0])
