"""viz.steps: the frames of Algorithms 6.1 and 6.2 agree with the engine, and the HTML page is self-contained.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithms 6.1 and 6.2.
"""

from __future__ import annotations

import base64
import hashlib
import html
import importlib
import re
import shutil

import pytest
from hypothesis import given
from strategies import DAG_SETTINGS, dag_cases

import viz
from micrograph import Graph, Value
from micrograph.families import chain
from viz import symbolic_frames as symbolic_steps
from viz.frames import ALGORITHM_6_1, ALGORITHM_6_2, derivative_formula, frames
from viz.pictures import pictures_script
from viz.symbolic_frames import build_grad_call_text, symbolic_frames
from viz.words import fmt, formula

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
    expected = list(g.backprop().values())
    assert f62[-1].grads == pytest.approx(expected, rel=1e-12)
    assert sum(len(f.terms) for f in f62) == g.num_edges


def test_repeated_argument_gives_two_terms():
    a = Value(3.0, label="a")
    z = a * a
    last = next(f for f in frames(z) if f.algorithm == "6.2" and f.node == 0)
    assert [(i, k) for i, k, *_ in last.terms] == [(1, 0), (1, 1)]
    assert last.grads[0] == 6.0
    assert last.explanation == (
        "j = 1: u1 (a) is an argument of u2, so its sum has 2 terms, one per edge out of u1. "
        "grad_table[u2] × ∂u2/∂u1 (argument 1) = 1.000 × 3.000 = 3.000; "
        "grad_table[u2] × ∂u2/∂u1 (argument 2) = 1.000 × 3.000 = 3.000; "
        "grad_table[u1] ← 3.000 + 3.000 = 6.000."
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
    # two scripts: the pictures' (viz.pictures: d3-zoom and the pane code), then the page's own; d3's source
    # names its home page and SVG's elements, so what follows is checked in the rest of the page
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert page.count("<script") == len(scripts) == 2 and scripts[0] == pictures_script()
    rest = page.replace(scripts[0], "")
    assert rest.count('<section class="frame') == len(frames(z))
    assert rest.count("<svg") == len(frames(z))
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # nothing to fetch: no src, no stylesheet link, no http(s) URL outside SVG namespace declarations
    assert not re.search(r"\ssrc=|<link|@import|url\(", page)
    urls = set(re.findall(r"https?://[^\s\"'<>]+", rest))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
    # the Content-Security-Policy admits exactly the page's own scripts
    digests = " ".join(
        f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'" for s in scripts
    )
    assert f"script-src {digests}" in page and "default-src 'none'" in page
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


@DAG_SETTINGS
@given(dag_cases())
def test_random_dags_frames_replay_algorithms_6_1_and_6_2(case):
    z, _ = case.build_values()
    g = Graph(z)
    fs = frames(z)
    f61 = [f for f in fs if f.algorithm == "6.1"]
    assert f61[-1].values == [v.data for v in g.nodes]  # Algorithm 6.1 recomputes every node exactly
    final = fs[-1].grads
    expected = list(g.backprop().values())  # Algorithm 6.2's grad_table
    assert final == pytest.approx(expected, rel=1e-12, abs=1e-12)
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
    from lessons.publish import tour

    live = {n: lessons.start(n) for n in (1, 2, 6)}
    for l in live.values():  # noqa: E741 - the stepper, as in the REPL
        l.goto(len(l))  # the lessons' later steps change values; the pages must not follow them
    result = tour.TourResult()
    pages = dict(tour._flipbooks(tmp_path, live, result))
    assert set(pages) == {
        "steps_lesson1.html",
        "steps_lesson2.html",
        "steps_figure_6_10.html",
        "steps_figure_6_10_alg66.html",
    }
    l1 = lessons.load(1)
    text = (tmp_path / "steps_lesson1.html").read_text(encoding="utf-8")
    assert f"x_1 = {l1.AT['x']:.4f}" in text and f"x_2 = {l1.AT['y']:.4f}" in text
    assert "x = 0.8" in pages["steps_lesson1.html"]
    text = (tmp_path / "steps_figure_6_10.html").read_text(encoding="utf-8")
    assert "x_1 = 0.5000" in text and "grad_table[u1] ← 0.5339." in text
    assert "w = 0.5" in pages["steps_figure_6_10.html"]
    text = (tmp_path / "steps_figure_6_10_alg66.html").read_text(encoding="utf-8")
    assert "Algorithm 6.6, call 3 of 3: build_grad(V = u1 (w))" in text and "= u9 = 0.5339." in text
    alg66 = pages["steps_figure_6_10_alg66.html"]
    assert "w = 0.5" in alg66 and "6.6" in alg66


# --- Algorithms 6.5 and 6.6 ---------------------------------------------------------------------------


def figure_6_10() -> tuple[Value, Value]:
    return chain(3)  # z = tanh(tanh(tanh(w))) at w = 0.5, labelled w, x, y, z as in the figure


def random_cases() -> list[tuple[str, Value]]:
    """Random expressions (fixed seeds), some variables reused; then the book's chain and x*y + exp(x)."""
    from lesson_cases import random_expression

    from micrograph.expr import build

    cases = []
    for seed in range(8):
        expr, env = random_expression(seed)
        cases.append((expr, build(expr, env)))
    cases.append(("tanh(tanh(tanh(w)))", figure_6_10()[0]))
    cases.append(("x*y + exp(x)", build("x*y + exp(x)", {"x": 1.0, "y": 2.0})))
    return cases


def _names_as_drawn(run: symbolic_steps.SymbolicSteps) -> dict[Value, str]:
    """Names computed here as the drawing computes them: G's u1..un, then B's nodes reached from T's grads."""
    from micrograph.order import topological_order
    from viz.words import node_names

    g = Graph(run.z)
    return node_names(g, [v for v in topological_order(run.gradients) if v not in g.index])


@pytest.mark.parametrize("expr, z", random_cases(), ids=lambda c: c if isinstance(c, str) else "")
def test_66_frames_are_the_calls_grad_reports_named_as_drawn(expr, z) -> None:  # type: ignore[no-untyped-def]
    from micrograph import grad

    g = Graph(z)
    T = g.variables
    run = symbolic_frames(z)
    assert run.targets == T  # the default T: every variable, in u(i) order
    independent: list = []
    grad(z, T, observe=independent.append)  # the engine, run again: the same number of calls
    f66 = [f for f in run.frames if f.algorithm == "6.6"]
    assert len(f66) == len(run.calls) == len(independent) > 0
    assert [f.algorithm for f in run.frames] == ["6.5", *["6.6"] * len(f66), "6.5"]
    names = _names_as_drawn(run)
    assert run.names == names
    table = g.backprop()  # Algorithm 6.2, the answer key for every value shown
    for k, (f, call) in enumerate(zip(f66, run.calls), 1):
        assert f.call is call and f.highlight == call.new_nodes
        V = call.V
        shown_V = f"{names[V]} ({V.label})" if V.label else names[V]
        assert f.heading == f"Algorithm 6.6, call {k} of {len(run.calls)}: build_grad(V = {shown_V})"
        assert f"build_grad(V = {shown_V})" in f.explanation
        for C in call.consumers:
            shown_C = f"{names[C]} ({C.label})" if C.label else names[C]
            article = "an" if C.op.name[0] in "aeiou" else "a"
            assert f"C = {shown_C}, {article} {C.op.name}: get_inputs(C, G') = (" in f.explanation
        assert f"= {names[call.G_V]} = {fmt(call.G_V.data)}." in f.explanation
        assert [r[0] for r in f.rows] == [names[v] for v in call.new_nodes]
        if V in T:
            assert call.G_V.data == pytest.approx(table[V], rel=1e-12, abs=1e-12)
    last = run.frames[-1]
    for V, d in zip(T, run.gradients):
        assert d.data == pytest.approx(table[V], rel=1e-12, abs=1e-12)
        shown = re.search(rf"= {names[d]} = (\S+?)[.;]( |$)", last.explanation)
        assert shown is not None and float(shown.group(1)) == pytest.approx(table[V], rel=1e-3, abs=1e-12)


def test_66_text_is_the_lessons_text() -> None:
    """One description of a call: lesson 6 prints, for each call, the text the page shows for it."""
    import lessons

    z, w = figure_6_10()
    run = symbolic_frames(z, w)
    assert run.frames[1].explanation == build_grad_call_text(run.calls, 1, run.names)
    l = lessons.start(6)  # noqa: E741 - the stepper, as in the REPL
    printed = []
    while not isinstance(l.next(), str):
        if hasattr(l, "call") and not hasattr(l, "grad_nodes"):  # a step of one build_grad call
            printed.append("".join(l.show(width=80).split()))  # the lesson wraps lines; compare the words
    calls = [f for f in run.frames if f.call is not None]
    assert len(printed) == len(calls) == 3
    for shown, f in zip(printed, calls):
        assert "".join(f.explanation.split()) in shown


def test_a_call_that_adds_nodes_numbered_below_an_earlier_call_s_says_why() -> None:
    """B's nodes are numbered as figure 6.10 draws B, not in the order the calls build them: on
    x*y + exp(x) a later call adds u7-u9 after an earlier one added u10, and its text says why."""
    x, y = Value(1.0, label="x"), Value(2.0, label="y")
    run = symbolic_frames(x * y + x.exp(), [x, y])
    why = "B's nodes are numbered as figure 6.10 draws B"
    said = [k for k in range(1, len(run.calls) + 1) if why in build_grad_call_text(run.calls, k, run.names)]
    assert len(said) == 1 and said[0] > 1
    z, w = figure_6_10()  # a chain: built in the order drawn, nothing to say
    chain = symbolic_frames(z, w)
    assert not any(
        why in build_grad_call_text(chain.calls, k, chain.names) for k in range(1, len(chain.calls) + 1)
    )


def test_66_targets_and_bad_arguments(tmp_path) -> None:  # type: ignore[no-untyped-def]
    a, b = Value(1.5, label="a"), Value(-0.5, label="b")
    z = a * b + a.exp()
    run = symbolic_frames(z, b)
    assert run.targets == [b] and run.gradients[0].data == pytest.approx(1.5)
    assert "T = {u2 (b)}" in run.frames[0].explanation
    with pytest.raises(ValueError, match=r"algorithm.*'6.2', '6.6', 'all'.*'6.3'"):
        viz.steps(z, tmp_path / "p.html", algorithm="6.3")
    with pytest.raises(TypeError, match="wrt"):
        symbolic_frames(z, "a")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="empty"):
        symbolic_frames(z, [])
    assert not (tmp_path / "p.html").exists()


def test_66_pruned_nodes_are_named_in_the_first_frame() -> None:
    w, v = Value(0.5, label="w"), Value(3.0, label="v")
    z = w.tanh() * 2 + v.exp()
    first = symbolic_frames(z, w).frames[0]
    g = Graph(z)
    G_prime = g.prune([w])
    assert len(first.highlight) == len(G_prime) < len(g.nodes)
    assert f"{len(g.nodes) - len(G_prime)} nodes of G (" in first.explanation


def _sections(page: str) -> list[str]:
    return re.findall(r'<section class="frame[^"]*".*?</section>', page, re.S)


def _svg_nodes(section: str) -> dict[str, tuple[str, str]]:
    """{drawn name: (fill colour of its box, its text)} for each node of a frame's SVG."""
    out = {}
    for name, body in re.findall(
        r'<g id="[^"]*node\d+" class="node">\s*<title>([^<]*)</title>(.*?)</g>', section, re.S
    ):
        fill = re.search(r'<polygon fill="([^"]+)"', body)
        text = " ".join(re.findall(r"<text[^>]*>([^<]*)</text>", body))
        out[name] = (fill.group(1) if fill else "", text)
    return out


@needs_dot
@pytest.mark.parametrize("expr, z", random_cases()[-4:], ids=lambda c: c if isinstance(c, str) else "")
def test_66_page_highlights_the_new_nodes_and_shows_the_drawings_names(expr, z, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from viz import style

    page = viz.steps(z, tmp_path / "p.html", algorithm="6.6").read_text(encoding="utf-8")
    run = symbolic_frames(z)
    names = _names_as_drawn(run)
    sections = _sections(page)
    assert len(sections) == len(run.frames) == len(run.calls) + 2
    assert page.count('data-algorithm="6.6"') == len(run.calls)
    yellow = style.HIGHLIGHT["fillcolor"]
    for section, f in zip(sections, run.frames):
        drawn = _svg_nodes(section)
        highlighted = {n for n, (fill, _) in drawn.items() if fill == yellow}
        assert highlighted == {names[v] for v in f.highlight}
        if f.call is None:
            continue
        # V and its consumers: the text's names are the drawing's (the box of that name shows its formula)
        for v in (f.call.V, *f.call.consumers, *f.call.new_nodes):
            assert names[v] in drawn and formula(v, names) in drawn[names[v]][1]
        assert html.escape(f.heading) in section
        text = re.sub(r"<[^>]+>", " ", section.split('<div class="cols">')[0])
        assert html.escape(f"build_grad(V = {names[f.call.V]}") in text
    # the values on the page are Algorithm 6.2's
    table = Graph(z).backprop()
    for V, d in zip(run.targets, run.gradients):
        shown = re.search(rf"= {names[d]} = (\S+?)[.;] ", sections[-1])
        assert shown is not None and float(shown.group(1)) == pytest.approx(table[V], rel=1e-3, abs=1e-12)
    assert "The book, Algorithm 6.5" in page
    assert "micrograph&#x27;s summary of Algorithm 6.6, not the book&#x27;s words" in page
    assert 'data-words="summary"' in page


@needs_dot
def test_all_puts_62_then_66_on_one_page_and_62_is_unchanged(tmp_path) -> None:  # type: ignore[no-untyped-def]
    z, _ = figure_6_10()
    only62 = viz.steps(z, tmp_path / "a.html").read_text(encoding="utf-8")
    both = viz.steps(z, tmp_path / "b.html", algorithm="all").read_text(encoding="utf-8")
    algos = re.findall(r'<section class="frame[^"]*" id="frame\d+" data-algorithm="([^"]+)"', both)
    n62 = len(frames(z))
    assert algos == ["6.1"] * 5 + ["6.2"] * 5 + ["6.5"] + ["6.6"] * 3 + ["6.5"]
    assert _sections(both)[:n62] == _sections(only62)
    assert f"step 1 of {n62 + 5}" in both and "T = {u1 (w)}" in both
    assert "The book, Algorithm 6.2" in only62 and "Algorithm 6.6" not in only62
