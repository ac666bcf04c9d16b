"""viz.steps: the frames of Algorithms 6.1 and 6.2 agree with the engine, and the HTML page is self-contained.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithms 6.1 and 6.2.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import re
import shutil

import pytest

import viz
from micrograph import Graph, Value
from viz.steps import ALGORITHM_6_1, ALGORITHM_6_2, derivative_formula, frames

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
vr = importlib.import_module("viz.render")


def example() -> Value:
    a, b = Value(3.0, label="a"), Value(2.0, label="b")
    y = a * a - b / a
    return (y * 0.1).tanh() + a.exp()


def test_frames_follow_the_algorithms_and_agree_with_the_engine():
    z = example()
    g = Graph(z)
    n, n_i = len(g.nodes), g.n_inputs
    fs = frames(z)
    f61 = [f for f in fs if f.algorithm == "6.1"]
    f62 = [f for f in fs if f.algorithm == "6.2"]
    assert len(f61) == n + 1 and len(f62) == n + 1
    # Algorithm 6.1: inputs, then u(n_i+1)..u(n) in order, each value equal to the node's
    assert [f.node for f in f61[:-1]] == list(range(n))
    assert all(f.lines == (0, 1) for f in f61[:n_i]) and all(f.lines == (4, 5) for f in f61[n_i:n])
    for f in f61[:n]:
        k = f.node
        assert k is not None
        assert f.values[: k + 1] == [v.data for v in g.nodes[: k + 1]]
        assert all(x is None for x in f.values[k + 1 :])
    assert f61[-1].lines == (7,) and ALGORITHM_6_1[7] == "return u(n)"
    # Algorithm 6.2: seed, then j = n-1 down to 1, the grad_table filling up; final = Algorithm 6.2's
    assert f62[0].grads[-1] == 1.0 and f62[0].grads.count(None) == n - 1
    assert [f.node for f in f62[1:-1]] == list(range(n - 2, -1, -1))
    assert ALGORITHM_6_2[f62[1].lines[-1]].strip().startswith("grad_table[u(j)] ←")
    for f in f62[1:-1]:
        assert f.grads[: f.node].count(None) == f.node and None not in f.grads[f.node :]
        assert len(f.terms) == len(g.consumer_edges[f.node])  # one term per edge: a local derivative each
    expected = g.backprop_list()
    assert f62[-1].grads == pytest.approx(expected, rel=1e-12)
    assert sum(len(f.terms) for f in f62) == g.num_edges


def test_repeated_argument_gives_two_terms():
    a = Value(3.0, label="a")
    z = a * a
    last = next(f for f in frames(z) if f.algorithm == "6.2" and f.node == 0)
    assert [(i, k) for i, k, *_ in last.terms] == [(1, 0), (1, 1)]
    assert last.grads[0] == 6.0
    assert "grad_table[u2] · ∂u2/∂u1 + grad_table[u2] · ∂u2/∂u1 = 1.000 × 3.000 + 1.000 × 3.000 = 6.000" in (
        last.explanation
    )


def test_local_derivative_formulas_come_from_the_rules():
    x = Value(0.5, label="x")
    t = x.tanh()
    names = {x: "u1", t: "u2"}
    assert derivative_formula(t, 0, names) == "tanh′(u1)"  # tanh's derivative is an operation of its argument
    y = Value(2.0)
    q = x / y
    names = {x: "u1", y: "u2", q: "u3"}
    assert derivative_formula(q, 0, names) == "1 ÷ u2"
    assert derivative_formula(q, 1, names) == "−u3 ÷ u2"
    s = x + y
    assert derivative_formula(s, 1, {x: "u1", y: "u2", s: "u3"}) == "1"
    c = x**3
    assert derivative_formula(c, 0, {x: "u1", c: "u2"}) == "3 × u1^2"


def test_negative_numbers_bracketed_in_explanations():
    a, b = Value(1.0, label="a"), Value(4.0, label="b")
    z = a - b
    text = next(f.explanation for f in frames(z) if f.algorithm == "6.2" and f.node == 1)
    assert "1.000 × (-1.000) = -1.000" in text


@needs_dot
def test_page_is_self_contained_and_escaped(tmp_path):
    a = Value(2.0, label="<script>alert(1)</script>")
    b = Value(3.0, label='{a|b} & "q"')
    z = a * b
    path = viz.steps(z, tmp_path / "s.html")
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert page.count('<section class="frame') == len(frames(z))
    assert page.count("<svg") == len(frames(z))
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count("<script") == 1
    # nothing to fetch: no src, no stylesheet link, no http(s) URL outside SVG namespace declarations
    assert not re.search(r"\ssrc=|<link|@import|url\(", page)
    urls = set(re.findall(r"https?://[^\s\"'<>]+", page))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
    # the Content-Security-Policy admits exactly the page's own script
    found = re.search(r"<script>(.*?)</script>", page, re.S)
    assert found is not None
    script = found.group(1)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in page and "default-src 'none'" in page
    assert 'id="f1_graph0"' in page and 'id="f2_graph0"' in page  # ids unique per frame


@needs_dot
def test_overwrite_and_size_limit(tmp_path):
    path = tmp_path / "s.html"
    path.write_text("old")
    with pytest.raises(FileExistsError):
        viz.steps(example(), path, overwrite=False)
    assert path.read_text() == "old"
    x = Value(0.1)
    for _ in range(100):
        x = x.sin()
    with pytest.raises(viz.GraphTooLarge, match="101 nodes"):
        viz.steps(x, path)
    with pytest.raises(TypeError):
        viz.steps(3.0, path)  # type: ignore[arg-type]


def test_graphviz_missing_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(vr.shutil, "which", lambda name, *a, **k: None)
    with pytest.raises(viz.GraphvizMissing, match="apt"):
        viz.steps(example(), tmp_path / "s.html")
    assert list(tmp_path.iterdir()) == []
    assert len(frames(example())) > 0  # the frames themselves need no Graphviz


def test_domain_error_names_the_edge():
    from micrograph import DomainError

    x = Value(0.0, label="x")
    z = x.sqrt()
    with pytest.raises(DomainError, match="u2"):
        frames(z)


try:
    from hypothesis import given
    from strategies import DAG_SETTINGS, dag_cases
except ImportError:  # pragma: no cover - hypothesis or the shared strategies are missing
    dag_cases = None  # type: ignore[assignment]


if dag_cases is not None:

    @DAG_SETTINGS
    @given(dag_cases())
    def test_random_dags_frames_replay_algorithms_6_1_and_6_2(case):
        z, _ = case.build_values()
        g = Graph(z)
        fs = frames(z)
        f61 = [f for f in fs if f.algorithm == "6.1"]
        assert f61[-1].values == [v.data for v in g.nodes]  # Algorithm 6.1 recomputes every node exactly
        final = fs[-1].grads
        assert final == pytest.approx(g.backprop_list(), rel=1e-12, abs=1e-12)  # Algorithm 6.2's grad_table
        assert sum(len(f.terms) for f in fs) == g.num_edges  # one local derivative per edge


@needs_dot
def test_page_quotes_algorithm_6_2_return_line_with_n_i(tmp_path) -> None:  # type: ignore[no-untyped-def]
    x = Value(0.5, label="x")
    page = viz.steps((x * x).tanh(), tmp_path / "p.html").read_text(encoding="utf-8")
    assert "return {grad_table[u(i)] | i = 1, ..., n_i}" in page
    assert "i = 1, ..., n}" not in page
    assert "(algorithm 6.1 for this example)" in page


@needs_dot
def test_tour_pages_use_each_lessons_opening_numbers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """steps_lesson1/2 run at the lesson's AT; figure 6.10's page at w = 0.5 (dz/dw = 0.5339, as README)."""
    import lessons
    from lessons import tour

    live = {n: lessons.start(n) for n in (1, 2, 6)}
    for l in live.values():  # noqa: E741 - the stepper, as in the REPL
        l.goto(len(l))  # the lessons' later steps change values; the pages must not follow them
    result = tour.TourResult()
    pages = dict(tour._flipbooks(tmp_path, live, result))
    assert set(pages) == {"steps_lesson1.html", "steps_lesson2.html", "steps_figure_6_10.html"}
    l1 = lessons.load(1)
    text = (tmp_path / "steps_lesson1.html").read_text(encoding="utf-8")
    assert f"x_1 = {l1.AT['x']:.4f}" in text and f"x_2 = {l1.AT['y']:.4f}" in text
    assert "x = 0.8" in pages["steps_lesson1.html"]
    text = (tmp_path / "steps_figure_6_10.html").read_text(encoding="utf-8")
    assert "x_1 = 0.5000" in text and "= 0.5339." in text
    assert "w = 0.5" in pages["steps_figure_6_10.html"]
