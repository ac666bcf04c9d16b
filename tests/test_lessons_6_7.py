"""Lessons 6 and 7 on a student's own expression: every number is the engine's (lesson 6, Algorithms 6.5
and 6.6 call by call) or agrees with sympy (lesson 7's higher derivatives); the lines of build_grad each call
ran; the book's words wrapped at spaces in Jupyter."""

from __future__ import annotations

# l is the stepper, as in the lessons' REPL (l = lessons.start(n)).
# ruff: noqa: E741
import pytest
from hypothesis import given
from hypothesis import strategies as st
from lesson_cases import CASES, random_expression, walk

import lessons
from micrograph import Graph, Value, backprop
from micrograph.expr import build, variables
from viz.words import count, fmt

# --- lessons 6 and 7 on the student's expression --------------------------------------------------------

CASES_6_7 = [
    *CASES,
    ("(c - b) * (a - (c * c))", {"a": -0.99, "b": -0.21, "c": -0.34}),  # dz/dc sums three terms, grouped
    # otherwise by op.bprop: the last bit differs
    ("x*y + exp(x)", {"x": 1.0, "y": 2.0}),
    ("sqrt(w) * w", {"w": 2.0}),
    ("w", {"w": 0.3}),
]


def _fresh(expr: str, at: dict[str, float]) -> tuple[Value, dict[str, Value]]:
    """The expression built anew at ``at``, independently of the lesson."""
    leaves = {n: Value(x, label=n) for n, x in at.items()}
    return build(expr, leaves), leaves


@pytest.mark.parametrize("case", CASES_6_7, ids=[c[0] for c in CASES_6_7])
def test_lesson_6_runs_on_the_students_expression_and_every_number_is_the_engines(case) -> None:  # type: ignore[no-untyped-def]
    _check_lesson_6(*case)


@pytest.mark.parametrize("case", CASES_6_7, ids=[c[0] for c in CASES_6_7])
def test_lesson_7_runs_on_the_students_expression_and_agrees_with_sympy(case) -> None:  # type: ignore[no-untyped-def]
    _check_lesson_7(*case)


@given(seed=st.integers(min_value=0, max_value=10**6))
def test_lessons_6_and_7_stay_true_on_random_expressions(seed: int) -> None:
    expr, at = random_expression(seed)
    _check_lesson_6(expr, at)
    _check_lesson_7(expr, at)


def _check_lesson_6(expr: str, at: dict[str, float]) -> None:
    l = lessons.start(6, expr=expr, at=at)
    titles = [l.step.title]
    views = walk(l)
    l.goto(1)
    while not isinstance(l.next(), str):
        titles.append(l.step.title)
    z, leaves = _fresh(expr, at)
    table = backprop(Graph(z))
    flat = [" ".join(v.split()) for v in views]
    assert titles[0] == "The forward graph G of your expression"
    assert f"z = {expr} at" in flat[0] and f"G has n = {count(len(Graph(z).nodes), 'node')}," in flat[0]
    # step 3: one node per variable, each equal to Algorithm 6.2's number, run independently here
    # the grouping of a sum of three terms or more may differ in the last bits (see the last step)
    tolerance = 1e-12 * (1 + max(abs(t) for t in table.values()))
    before = {V.label: b for V, b in zip(l.T, l.before)}  # B's values before the inputs moved
    after_b = {V.label: d.data for V, d in zip(l.T, l.dz)}  # and after
    for name, leaf in leaves.items():
        value = before[name]
        assert f"dz/d{name} = {fmt(value)} (Algorithm 6.2: {fmt(table[leaf])})" in flat[2]
        assert abs(value - table[leaf]) <= tolerance
    # one step per call of build_grad, each summing to Algorithm 6.2's number for its V
    calls = [t for t in titles if t.startswith("Algorithm 6.6, call")]
    assert len(calls) == len(l.calls)  # none when z is a variable itself: grad_table[z] = 1
    # B evaluated again at moved inputs follows Algorithm 6.2 there
    moved, moved_leaves = _fresh(expr, {n: x + l.h for n, x in at.items()})
    moved_table = backprop(Graph(moved))
    reuse = flat[titles.index("B is a graph: evaluate it again")]
    for name in leaves:
        after = moved_table[moved_leaves[name]]
        moved_text = f"dz/d{name} {fmt(before[name])} -> {fmt(after_b[name])} (Algorithm 6.2: {fmt(after)})"
        assert moved_text in reuse
        assert abs(after_b[name] - after) <= tolerance
    g = Graph(l.z)
    differ = [V for V, a, b in l.pairs if a != b]
    tolerance = 1e-12 * (1 + max((abs(b) for _, _, b in l.pairs), default=0.0))
    for V, a, b in l.pairs:  # equal, or a sum of three terms or more grouped otherwise: the last bits
        assert a == b or (len(g.consumer_edges[g.index[V]]) >= 3 and abs(a - b) <= tolerance), (V, a, b)
    if not l.pairs:  # z is a variable: no call of build_grad
        assert "build_grad had nothing to build" in flat[-1]
    elif differ:
        assert "Floating-point addition is not associative" in flat[-1] and "NOT" not in flat[-1]
    else:
        assert "all equal, bit for bit" in flat[-1]
    for text in views:
        assert "x = f(w), y = f(x), z = f(y)." not in text  # the default example's own sentence
        assert "tanh(tanh(tanh(w)))" not in text
        assert all(len(line) <= 80 for line in text.splitlines()), text


def _sympy_of(expr: str, names: list[str]):  # type: ignore[no-untyped-def]
    sp = pytest.importorskip("sympy")
    symbols = {n: sp.Symbol(n) for n in names}
    funcs = {"sigmoid": lambda t: 1 / (1 + sp.exp(-t)), "tanh": sp.tanh, "sin": sp.sin, "exp": sp.exp,
             "relu": lambda t: sp.Piecewise((t, t > 0), (0, True))}  # fmt: skip
    return sp, symbols, sp.parse_expr(expr, local_dict={**symbols, **funcs})


def _check_lesson_7(expr: str, at: dict[str, float]) -> None:
    sp, symbols, f = _sympy_of(expr, list(at))
    l = lessons.start(7, expr=expr, at=at)
    views = [" ".join(v.split()) for v in walk(l)]
    w = variables(expr)[0]  # the variable lesson 7 differentiates by: the first the expression names
    assert l.wrt.label == w
    point = {symbols[n]: x for n, x in at.items()}
    for k, node in ((1, l.d1), (2, l.d2), (3, l.d3)):
        exact = float(sp.diff(f, symbols[w], k).subs(point))
        assert node.data == pytest.approx(exact, rel=1e-9, abs=1e-12), (k, node.data, exact)
    assert f"z = {expr} at" in views[0] and f"d2 = d2z/d{w}2 = {fmt(l.d2.data)}" in views[0]
    assert (len(at) > 1) == ("partial derivatives" in views[0])
    sizes = [len(Graph(d).nodes) for d in (l.z, l.d1, l.d2, l.d3)]
    said = [f"z is computed from {count(sizes[0], 'node')}"]
    said += [f"d{k} from {count(size, 'node')}" for k, size in enumerate(sizes[1:], 1)]
    assert all(s in views[0] for s in said), said  # the sizes printed are the graphs' own
    if "growing with the order" in views[0]:  # said only where it is true
        assert sizes == sorted(sizes) and sizes[0] < sizes[-1]
    # the Hessian-vector product is the student's when z has two variables or more
    hvp = views[2]
    if len(at) > 1:
        assert l.f is l.z and f"f = z = {expr}" in hvp
        H = sp.hessian(f, [symbols[n] for n in variables(expr)]).subs(point)
        v = [float(k + 1) for k in range(len(at))]
        for row, got in zip(H.tolist(), l.Hv):
            assert got.data == pytest.approx(sum(float(h) * vi for h, vi in zip(row, v)), rel=1e-9, abs=1e-12)
    else:
        assert "z has one variable" in hvp and "Take f(x, y) = x^2 y + sin(xy)" in hvp
    for a, b in zip(l.Hv, l.H_times_v):
        assert a.data == pytest.approx(b, rel=1e-12, abs=1e-12)
    for text in views:
        assert "tanh(tanh(tanh(w)))" not in text


@pytest.mark.parametrize("n", [6, 7])
def test_lessons_6_and_7_refuse_a_point_where_a_derivative_does_not_exist(n: int) -> None:
    from micrograph.errors import DomainError

    with pytest.raises(DomainError, match=r"sqrt"):
        lessons.start(n, expr="sqrt(w)", at={"w": 0.0})


# --- lesson 6 shows the lines of build_grad each call ran; Jupyter wraps the book's words at spaces ------


@pytest.mark.parametrize(
    "expr, at", [(None, None), ("x*y + exp(x)", {"x": 1.0, "y": 2.0}), ("x*x*y + y", {"x": 0.5, "y": 3.0})]
)
def test_lesson_6_shows_the_lines_of_build_grad_each_call_ran(
    expr: str | None, at: dict[str, float] | None
) -> None:
    from viz.words import node_names

    l = lessons.start(6, expr=expr, at=at) if expr else lessons.start(6)
    seen = 0
    for k in range(1, len(l) + 1):
        l.goto(k)
        if not l.step.title.startswith("Algorithm 6.6, call"):
            continue
        seen += 1
        call, code = l.call, l.code
        names = node_names(l.graph, l.B_nodes)
        assert "l.call = l.calls[k - 1]" in l.step.lesson_code  # the step reads the call's record
        assert code.startswith("# micrograph/symbolic.py, lines ") and "(build_grad)" in code.split("\n")[0]
        assert "G_i = op.bprop(get_inputs(C, G_prime), V, D, C, local)" in code  # build_grad's own lines
        assert f"V = {names[call.V]}, consumers = [{', '.join(names[C] for C in call.consumers)}]" in code
        (engine,) = l.engine
        by_expr = {b.expr: b for b in engine.bound}
        assert list(by_expr["D"].values) == list(call.D) and list(by_expr["G_i"].values) == list(call.terms)
        assert by_expr["G_V"].values == (call.G_V,) and f"G_V = {names[call.G_V]}" in code
        assert all(len(line) <= 76 for line in code.splitlines())
        if l.call is l.calls[0]:  # the first call used only grad_table[z] = 1: no call before it built any
            assert "built by earlier calls" not in l.text and "set by Algorithm 6.5" in l.text
        else:
            assert "built by earlier calls" in l.text
    assert seen == len(l.calls) >= 1


_BROKEN_WORDS = """els => els.flatMap(e => {
  const t = e.firstChild, broken = [], re = /\\w+/g;  // letters and digits: after a hyphen a break is fine
  let m;
  while ((m = re.exec(t.textContent))) {
    const r = document.createRange();
    r.setStart(t, m.index);
    r.setEnd(t, m.index + m[0].length);
    if (Array.from(r.getClientRects()).filter(x => x.width > 0).length > 1) broken.push(m[0]);
  }
  return broken;
})"""


def test_jupyter_wraps_the_books_words_at_spaces_only(browser) -> None:  # type: ignore[no-untyped-def]
    from lessons.showing import PRE_STYLE

    jupyterlab = "<style>pre { word-break: break-all; white-space: pre-wrap; }</style>"  # its output's rule
    page = browser.new_page(viewport={"width": 320, "height": 800})
    try:
        for n in (1, 2, 6):
            shown = lessons.start(n)._repr_html_()
            assert PRE_STYLE in shown
            page.set_content(jupyterlab + shown)
            assert page.eval_on_selector_all("pre", _BROKEN_WORDS) == [], n
            page.set_content(jupyterlab + shown.replace(f" style='{PRE_STYLE}'", ""))  # the old page
            assert page.eval_on_selector_all("pre", _BROKEN_WORDS) != [], n  # the check sees breaks
    finally:
        page.close()
