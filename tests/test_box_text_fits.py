"""Every line of text in a box of an MLP's drawing lies inside the box, with a margin.

Graphviz sizes a box to its own measure of the text, and a renderer draws the text again in the font it
picks for ``Helvetica``: rsvg-convert drew the README's drawing by layers with the rows ``h(1) = 0.9999,
… (16 in all)`` and ``J = L + λΩ(θ): the cost · 1 scalar`` running into their boxes' right edges, the text
about 1.6% wider than Graphviz had measured it (viz.widths says why). Here the drawings are laid out by
``dot -Tsvg`` and read back: each box's outline (its rounded path or polygon, sampled along its curves) and
each line of text, at the point Graphviz anchors it. A line's drawn width is measured from the font files
(DejaVu Sans, which matplotlib ships, and Liberation Sans, Helvetica's metrics, where installed), not from
the table of viz.widths: the larger of the two advances, character by character, but at most 3% more than
Graphviz's own measure (a renderer draws the font Graphviz measured, or a narrower one). No point of the
outline may come within :data:`MARGIN` of the line's ink (its rectangle from ascent to descent), beyond the
inner half of the border's stroke.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import matplotlib
import pytest
from matplotlib.ft2font import FT2Font

import viz
from micrograph import Value, datasets, nn
from viz import widths
from viz.render import pipe_svg

pytestmark = pytest.mark.skipif(
    shutil.which("dot") is None, reason="Graphviz's dot: apt-get install graphviz"
)

SVG = "{http://www.w3.org/2000/svg}"
MARGIN = 2.0
"""The least room, in points, between a line's ink and the inner edge of its box's border."""
ASCENT, DESCENT = 0.76, 0.24
"""The ink's height above and below the baseline, in ems: as high as DejaVu Sans's brackets and ascenders
(b, d, λ) reach, as low as its descenders (g, j, y) and a little more."""
FONTS = [
    Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf",
    Path("/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf"),
    Path("/usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf"),
]
_NO_SCALE = getattr(getattr(matplotlib.ft2font, "LoadFlags", None), "NO_SCALE", 1)  # an int before 3.10


@functools.cache
def _fonts() -> list[FT2Font]:
    return [FT2Font(str(p)) for p in FONTS if p.exists()]


@functools.cache
def font_advance(ch: str) -> float:
    """The character's largest advance in the fonts found, in ems (1 if none has it)."""
    found = [f.load_char(ord(ch), flags=_NO_SCALE).horiAdvance / f.units_per_EM  # type: ignore[arg-type]
             for f in _fonts() if f.get_char_index(ord(ch))]  # fmt: skip
    return max(found, default=1.0)


def _points(element: ET.Element) -> list[tuple[float, float]]:
    """The outline of a path (its cubic Béziers sampled) or a polygon (its edges sampled), as points."""
    text = element.get("d") or element.get("points", "")
    numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", text)]
    pts = list(zip(numbers[0::2], numbers[1::2]))
    steps = [k / 40 for k in range(41)]
    out = []
    if element.tag == f"{SVG}path":  # M p0 C p1 p2 p3 p1 p2 p3 ...: Graphviz's rounded corners and sides
        for k in range(0, len(pts) - 3, 3):
            p0, p1, p2, p3 = pts[k : k + 4]
            out += [tuple(
                (1 - t) ** 3 * a + 3 * (1 - t) ** 2 * t * b + 3 * (1 - t) * t**2 * c + t**3 * d
                for a, b, c, d in zip(p0, p1, p2, p3)
            ) for t in steps]  # fmt: skip
    else:
        for (x0, y0), (x1, y1) in itertools.pairwise(pts):
            out += [(x0 + t * (x1 - x0), y0 + t * (y1 - y0)) for t in steps]
    return out  # type: ignore[return-value]


def _boxes(svg: str) -> Iterator[tuple[str, list[ET.Element], list[ET.Element]]]:
    """Each box of the drawing: (its name, the outlines drawn with a visible stroke, its lines of text).

    A node's box and a cluster's box are their groups; each cell of the legend (a polygon of the graph's
    own group) is a box holding the text whose anchor lies in it."""
    root = ET.fromstring(svg)
    for g in root.iter(f"{SVG}g"):
        kind = g.get("class")
        if kind in ("node", "cluster"):
            outlines = [e for e in g if e.tag in (f"{SVG}path", f"{SVG}polygon") and _stroked(e)]
            yield g.findtext(f"{SVG}title") or "", outlines, g.findall(f"{SVG}text")
        elif kind == "graph":
            texts = g.findall(f"{SVG}text")
            for cell in (e for e in g if e.tag == f"{SVG}polygon" and _stroked(e)):
                xs, ys = zip(*_points(cell))
                inside = [t for t in texts if min(xs) < float(t.get("x", 0)) < max(xs)
                          and min(ys) < float(t.get("y", 0)) < max(ys)]  # fmt: skip
                yield "legend", [cell], inside


def _distance(x: float, y: float, box: tuple[float, float, float, float]) -> float:
    """How far the point (x, y) is from the rectangle (x0, y0, x1, y1): 0 inside it."""
    dx = max(box[0] - x, 0.0, x - box[2])
    dy = max(box[1] - y, 0.0, y - box[3])
    return math.hypot(dx, dy)


def _stroked(e: ET.Element) -> bool:
    return e.get("stroke") not in (None, "transparent", "none")


def clashes(svg: str) -> list[str]:
    """Every line of text whose ink comes within MARGIN of its box's outline, said in words."""
    found = []
    for name, outlines, texts in _boxes(svg):
        if not outlines or not texts:
            continue
        pen = max(float(o.get("stroke-width", 1)) for o in outlines) / 2  # the border's inner half
        points = [p for o in outlines for p in _points(o)]
        xs = [x for x, _ in points]
        centre = (min(xs) + max(xs)) / 2
        for t in texts:
            line, size = "".join(t.itertext()), float(t.get("font-size", 14))
            x, y, anchor = float(t.get("x", 0)), float(t.get("y", 0)), t.get("text-anchor", "start")
            drawn = sum(font_advance(ch) for ch in line) * size
            if anchor == "start" and centre > x:  # Graphviz centred it by its own measure, 2 (centre - x)
                drawn = min(drawn, 1.03 * 2 * (centre - x))
            left = {"start": x, "middle": x - drawn / 2, "end": x - drawn}[anchor]
            ink = (left, y - ASCENT * size, left + drawn, y + DESCENT * size)
            near = [(px, py) for px, py in points if _distance(px, py, ink) < MARGIN + pen]
            outside = ink[0] < min(xs) or ink[2] > max(xs)
            if near or outside:
                found.append(
                    f"{name}: {line!r} at x {left:.1f} to {left + drawn:.1f}, box {min(xs):.1f} to "
                    f"{max(xs):.1f}"
                )
    return found


def _cost(nin: int, hidden: list[int], nout: int, batch: int, seed: int) -> tuple[Any, Any]:
    """A network's minibatch cost, back-propagated, so that every box writes gradients of many digits."""
    rng = random.Random(seed)
    model = nn.MLP(nin, [*hidden, nout], activation="tanh", rng=rng)
    X = [[rng.uniform(-2, 2) for _ in range(nin)] for _ in range(batch)]
    cost = nn.forward_minibatch(model, X, [rng.randrange(nout) for _ in range(batch)], l2=1e-3)
    cost.J.backward()
    return model, cost


def _iris() -> tuple[Any, Any]:
    """The README's network: Iris, 4 inputs, 8 tanh units, 3 classes, two flowers."""
    X, y = datasets.iris()
    model = nn.MLP(4, [8, 3], activation="tanh", seed=0)
    cost = nn.forward_minibatch(model, X[:2], y[:2], l2=1e-3)
    cost.J.backward()
    return model, cost


NETWORKS = {
    "iris": _iris,
    "2-3-2": lambda: _cost(2, [3], 2, 1, 1),
    "3-5-4-2": lambda: _cost(3, [5, 4], 2, 3, 2),
    "1-16-1": lambda: _cost(1, [16], 1, 2, 3),
}


@pytest.mark.parametrize("level", ["layers", "neurons"])
@pytest.mark.parametrize("network", NETWORKS)
def test_every_line_of_text_fits_in_its_box(network: str, level: str) -> None:
    model, cost = NETWORKS[network]()
    unit = cost.examples[0].h[1][0]
    drawings = {
        "draw": viz.draw(cost.J, level=level, max_nodes=1000),
        "draw, a unit opened": viz.draw(cost.J, level=level, expand=[unit], max_nodes=1000),
        "draw_side_by_side": viz.draw_side_by_side(cost.J, model.parameters(), level=level, max_nodes=2000),
    }
    for what, dot in drawings.items():
        assert clashes(pipe_svg(dot)) == [], what


def test_the_check_sees_text_that_crosses_its_box() -> None:
    """A box Graphviz sizes to its own measure alone (the drawings before viz.widths) fails the check."""
    long = "h(1) = 0.9999, 0.1640, 0.9032, -0.2002, … (16 in all)"
    dot = viz.draw(Value(1.0))  # any drawing: its body is replaced below
    dot.body[:] = [
        f'\tn [label=<<TABLE BORDER="1" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2"><TR><TD>{long}</TD>'
        "</TR></TABLE>>]\n"
    ]
    assert len(clashes(pipe_svg(dot))) == 1


def test_the_widths_table_bounds_the_fonts_advances() -> None:
    """viz.widths' table is at least every font's advance for the characters it lists (the test's fonts
    are read from their files)."""
    listed = [chr(c) for c in range(32, 127)] + list(widths._OTHER)
    for ch in listed:
        assert widths.advance(ch) >= math.floor(font_advance(ch) * 1000), ch
