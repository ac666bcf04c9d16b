"""Figure 6.10's side-by-side drawing lays out for every expression, and labels are drawn as typed.

Graphviz 2.43 can refuse a drawing with "flat edge between adjacent nodes one of which has a record
shape ... lost edge" when record-shaped nodes in clusters meet the invisible edges that keep B to the right
of G. These tests ask Graphviz itself to lay out G and B side by side for every composition of two and
three of the unary operations an expression may name, and for random DAGs.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.5, figure 6.10.
"""

from __future__ import annotations

import itertools
import shutil
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given
from strategies import DAG_SETTINGS, dag_cases

import viz
from micrograph import DomainError, Graph, Value
from micrograph.expr import FUNCTIONS, build
from viz.render import pipe_svg

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")

# unary minus and every function the expression parser accepts (all of them take one argument)
UNARY = ["-", *sorted(FUNCTIONS)]


def compose(names: tuple[str, ...]) -> str:
    text = "x"
    for f in names:
        text = f"-({text})" if f == "-" else f"{f}({text})"
    return text


COMPOSITIONS = [compose(c) for r in (2, 3) for c in itertools.product(UNARY, repeat=r)]


def side_by_side_svg(text: str) -> str | None:
    """The SVG of G and B side by side for ``text`` at x = 0.5; None where a derivative does not exist."""
    try:
        z = build(text, {"x": 0.5})  # e.g. log(-(x)) is outside log's domain
        x = Graph(z).nodes[0]
        dot = viz.draw_side_by_side(z, [x], max_nodes=10_000)
    except DomainError:  # e.g. sqrt(relu(log(x))): sqrt's derivative at 0 does not exist
        return None
    return pipe_svg(dot)


def test_compositions_cover_two_and_three_unary_operations():
    n = len(UNARY)
    assert n >= 9 and "tanh" in UNARY and "sigmoid" in UNARY
    assert len(COMPOSITIONS) == n**2 + n**3
    assert "sigmoid(tanh(tanh(x)))" in COMPOSITIONS


@needs_dot
@pytest.mark.slow
def test_every_composition_of_two_and_three_unary_operations_lays_out_side_by_side():
    failures: list[str] = []
    drawn = 0

    def one(text: str) -> None:
        nonlocal drawn
        try:
            svg = side_by_side_svg(text)
        except RuntimeError as e:  # Graphviz refused the layout
            failures.append(f"{text}: {str(e).splitlines()[-1]}")
            return
        if svg is not None:
            root = ET.fromstring(svg)
            titles = {"".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}title")}
            assert {"cluster_G", "cluster_B"} <= titles, text
            drawn += 1

    with ThreadPoolExecutor(max_workers=2) as pool:  # each layout is a `dot` process
        list(pool.map(one, COMPOSITIONS))
    assert failures == []
    assert drawn > 0.9 * len(COMPOSITIONS)


@needs_dot
@DAG_SETTINGS
@given(dag_cases())
def test_random_dags_lay_out_side_by_side(case):
    z, xs = case.build_values()
    svg = pipe_svg(viz.draw_side_by_side(z, xs, max_nodes=10_000))
    titles = {"".join(t.itertext()) for t in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}title")}
    assert {"cluster_G", "cluster_B"} <= titles


def svg_texts(dot: object) -> list[str]:
    root = ET.fromstring(pipe_svg(dot))  # type: ignore[arg-type]
    return ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]


TYPED = ["&lt;b&gt; &amp; &#65;", "a & b", "&", "&amp;", "x&#x41;;"]


@needs_dot
@pytest.mark.parametrize("label", TYPED)
def test_ampersand_and_entities_drawn_exactly_as_typed(label):
    a = Value(1.0, label=label)
    w = Value(0.5, label="w")
    z = (a * w).tanh()
    z.label = label
    z.backward()
    texts = svg_texts(viz.draw(z, title=label))
    assert f"{label} (u1)" in texts
    assert f"{label} (u4)" in texts
    assert label in texts  # the title
    side = svg_texts(viz.draw_side_by_side(z, [w]))
    assert f"{label} (u1)" in side
    if len(label) <= 12:  # B's captions show labels cut to 12 characters
        assert f"∂{label}/∂w (u6)" in side
