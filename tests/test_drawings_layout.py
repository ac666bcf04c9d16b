"""Figure 6.10's drawing lays out for every expression: no edge lost, no Graphviz error.

Graphviz 2.43 fails ("flat edge between adjacent nodes one of which has a record shape ... lost edge") on
record shapes inside clusters; the nodes are HTML-like tables instead. The side-by-side drawing is
rendered for every composition of two and of three unary operations and for random DAGs, and the SVG
must hold every edge of the DOT source. Labels come out exactly as typed.
"""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given
from strategies import DAG_SETTINGS, dag_cases

import viz
from micrograph import DomainError, Value
from viz.render import pipe_svg

pytestmark = pytest.mark.skipif(
    shutil.which("dot") is None, reason="Graphviz's dot: apt-get install graphviz"
)

UNARY = {
    "tanh": Value.tanh, "sigmoid": Value.sigmoid, "exp": Value.exp, "log": Value.log, "sin": Value.sin,
    "cos": Value.cos, "sqrt": Value.sqrt, "relu": Value.relu, "neg": Value.__neg__,
    "square": lambda v: v**2,
}  # fmt: skip
SVG = "{http://www.w3.org/2000/svg}"


def _layout(dot: object) -> None:
    """Run dot for real; assert it succeeded, said nothing, and drew every visible edge."""
    source = dot.source  # type: ignore[attr-defined]
    done = subprocess.run(["dot", "-Tsvg"], input=source.encode(), capture_output=True, timeout=60)
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr.decode()
    visible = len([line for line in source.splitlines() if " -> " in line and "style=invis" not in line])
    root = ET.fromstring(done.stdout)
    drawn = [g for g in root.iter(f"{SVG}g") if g.get("class") == "edge"]
    assert len(drawn) == visible  # every argument edge and every G -> B edge is in the picture


def _composition(names: tuple[str, ...]) -> tuple[Value, Value] | None:
    for x0 in (0.5, 1.5, 3.0, -0.5, -2.0):
        x = Value(x0, label="x")
        try:
            z = x
            for name in names:
                z = UNARY[name](z)
            viz.draw_side_by_side(z, x)  # B must exist here (sqrt of 0, say, has no derivative)
        except DomainError:
            continue
        return z, x
    return None


@pytest.mark.parametrize("names", list(itertools.product(UNARY, repeat=2)), ids="-".join)
def test_every_composition_of_two_unary_operations(names: tuple[str, ...]) -> None:
    found = _composition(names)
    assert found is not None, f"{names} is outside its domain at every point tried"
    _layout(viz.draw_side_by_side(*found))


@pytest.mark.slow
def test_every_composition_of_three_unary_operations() -> None:
    drawn = 0
    for names in itertools.product(UNARY, repeat=3):
        found = _composition(names)
        if found is not None:
            _layout(viz.draw_side_by_side(*found))
            drawn += 1
    assert drawn > 950  # of 1,000: few are outside their domain at all five points


def test_the_expression_that_lost_an_edge() -> None:
    x = Value(0.5, label="x")
    _layout(viz.draw_side_by_side(x.tanh().tanh().sigmoid(), x))


@DAG_SETTINGS
@given(dag_cases())
def test_random_dags(case: object) -> None:
    z, xs = case.build_values()  # type: ignore[attr-defined]
    _layout(viz.draw(z))
    _layout(viz.draw_side_by_side(z, xs, max_nodes=2000))


def test_a_label_is_drawn_exactly_as_typed() -> None:
    typed = "&lt;b&gt; & &amp; &#65; <i>x</i> {a|b}"
    a = Value(1.0, label=typed)
    svg = pipe_svg(viz.draw(a * 2.0))
    texts = ["".join(t.itertext()) for t in ET.fromstring(svg).iter(f"{SVG}text")]
    assert f"{typed} (u1)" in texts
    assert not re.search(r"<i>x</i>", svg)  # never interpreted as markup
