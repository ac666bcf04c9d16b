"""The Chart data model: a plot as plain data, every number, mark, text, colour and scale it shows.

A :class:`Chart` is panels side by side (:class:`Panel`), each a list of marks: :class:`Line` (a polyline
and/or markers), :class:`Rule` (a horizontal line), :class:`Points` (a scatter of classed points),
:class:`Regions` (a grid of classes, shaded), :class:`Contour` (level lines of a grid), :class:`Cells` (a
heat map with each value written in its cell). It is pure Python (no matplotlib import) and goes to the
browser whole as JSON (:meth:`Chart.to_json`, read back by :meth:`Chart.from_dict`); it answers
``savefig`` and ``_repr_svg_`` by drawing itself with matplotlib (:func:`viz.plots.figure`).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = ["Chart", "Panel", "Line", "Rule", "Points", "Regions", "Contour", "Cells", "Mark", "MARKS"]

LEGEND_PLACES = ("below", "upper left", "upper right", "lower right", "best")


@dataclass
class Line:
    """A series: points joined by a line, markers at the points, or both.

    Attributes:
        x, y: the points' coordinates, lists of equal length (finite floats).
        color: a CSS colour (``#rrggbb``), from :mod:`viz.style`.
        label: its legend entry; None for none.
        dash: ``"solid"``, ``"dashed"``, ``"dotted"``, or ``"none"`` (markers only).
        marker: ``"circle"``, ``"square"`` or None.
        hollow: markers filled white, outlined in ``color``.
    """

    kind: ClassVar[str] = "line"
    x: list[float]
    y: list[float]
    color: str
    label: str | None = None
    dash: str = "solid"
    marker: str | None = None
    hollow: bool = False


@dataclass
class Rule:
    """A horizontal line across the panel at ``y``, dotted, in ``color``, with an optional legend entry."""

    kind: ClassVar[str] = "rule"
    y: float
    color: str
    label: str | None = None


@dataclass
class Points:
    """A scatter: points of one class in its colour, outlined black (``label``: its legend entry)."""

    kind: ClassVar[str] = "points"
    x: list[float]
    y: list[float]
    color: str
    label: str | None = None


@dataclass
class Regions:
    """A grid of classes, each cell shaded in its class's colour.

    Attributes:
        x: the grid's nx abscissas, increasing. y: its ny ordinates, increasing.
        classes: ny rows of nx class numbers (row k at ordinate ``y[k]``).
        colors: one CSS colour per class number.
        opacity: of the shading, in [0, 1].
    """

    kind: ClassVar[str] = "regions"
    x: list[float]
    y: list[float]
    classes: list[list[int]]
    colors: list[str]
    opacity: float = 0.25


@dataclass
class Contour:
    """Level lines of a grid of values: ``values`` is ny rows of nx numbers (row k at ordinate ``y[k]``),
    drawn at each of ``levels`` in ``color``; ``label`` is its legend entry (a line)."""

    kind: ClassVar[str] = "contour"
    x: list[float]
    y: list[float]
    values: list[list[float]]
    levels: list[float]
    color: str
    label: str | None = None


@dataclass
class Cells:
    """A heat map: ``values`` (rows of numbers) on a diverging scale from -limit (blue) to +limit (red),
    each value written in its cell to ``digits`` significant digits.

    Attributes:
        x_labels, y_labels: the columns' and rows' tick labels; None for no ticks on that axis.
        colorbar: draw the scale beside the map.
    """

    kind: ClassVar[str] = "cells"
    values: list[list[float]]
    limit: float
    x_labels: list[str] | None = None
    y_labels: list[str] | None = None
    digits: int = 4
    colorbar: bool = False

    def ink(self, value: float) -> str:
        """The text's colour on a cell: white on the dark ends of the scale, black elsewhere."""
        return "white" if abs(value) > 0.6 * self.limit else "black"

    def text(self, value: float) -> str:
        """A cell's number as written in it."""
        return f"{value:.{self.digits}g}"


Mark = Line | Rule | Points | Regions | Contour | Cells
MARKS: dict[str, type] = {m.kind: m for m in (Line, Rule, Points, Regions, Contour, Cells)}


@dataclass
class Panel:
    """One set of axes.

    Attributes:
        title: above the panel. small_title: written smaller (a side panel).
        x_label, y_label: the axes' titles ("" for none).
        marks: drawn in order.
        y_log: a logarithmic y axis. x_integers: ticks on whole numbers only.
        y_range: (low, high) of the y axis, or None to fit the data.
        legend: where the legend goes (one of ``"below"``, ``"upper left"``, ``"upper right"``,
            ``"lower right"``, ``"best"``), or None for none.
        grid: light grid lines.
        weight: the panel's share of the chart's width, relative to the others.
    """

    title: str
    marks: list[Mark]
    x_label: str = ""
    y_label: str = ""
    y_log: bool = False
    x_integers: bool = False
    y_range: tuple[float, float] | None = None
    legend: str | None = None
    grid: bool = True
    weight: float = 1.0
    small_title: bool = False

    def __post_init__(self) -> None:
        if self.legend is not None and self.legend not in LEGEND_PLACES:
            raise ValueError(f"Panel: legend must be one of {LEGEND_PLACES} or None, got {self.legend!r}")


@dataclass(repr=False)
class Chart:
    """A plot: panels side by side, under a title.

    Attributes:
        title: the whole chart's title ("" for none); it may hold a line break.
        panels: left to right.
        width, height: the size in inches (matplotlib's figure size; the page scales it to fit).
    """

    title: str
    panels: list[Panel]
    width: float
    height: float
    name: str = field(default="chart")

    def __repr__(self) -> str:
        titles = "; ".join(p.title.replace("\n", " ") for p in self.panels)
        return (
            f"<Chart {self.name!r}: {len(self.panels)} panel(s): {titles}; "
            f".figure() draws it with matplotlib, .savefig(path) writes it>"
        )

    def to_dict(self) -> dict[str, Any]:
        """The chart as plain data: every mark gains ``"kind"`` (its class's ``kind``), and Cells their
        ``"texts"`` and ``"inks"`` (each value as written in its cell, and the text's colour), so a renderer
        writes the numbers as Python formats them."""
        out = dataclasses.asdict(self)
        for panel, data in zip(self.panels, out["panels"]):
            for mark, m in zip(panel.marks, data["marks"]):
                m["kind"] = mark.kind
                if isinstance(mark, Cells):
                    m["texts"] = [[mark.text(v) for v in row] for row in mark.values]
                    m["inks"] = [[mark.ink(v) for v in row] for row in mark.values]
        return out

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON.

        Raises:
            ValueError: a number that is not finite (JSON has none).
        """
        return json.dumps(self.to_dict(), allow_nan=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Chart:
        """The Chart of :meth:`to_dict`'s data.

        Raises:
            KeyError: an unknown mark kind or a missing field.
        """
        panels = []
        for p in data["panels"]:
            marks = []
            for m in p["marks"]:
                kind = MARKS[m["kind"]]
                names = {f.name for f in dataclasses.fields(kind)}
                marks.append(kind(**{k: v for k, v in m.items() if k in names}))
            y_range = tuple(p["y_range"]) if p.get("y_range") is not None else None
            panels.append(Panel(**{**p, "marks": marks, "y_range": y_range}))
        return cls(**{**data, "panels": panels})

    def figure(self) -> Any:
        """The chart drawn by matplotlib: :func:`viz.plots.figure` (a ``matplotlib.figure.Figure``)."""
        from viz import plots  # matplotlib loads on first use

        return plots.figure(self)

    def savefig(self, fname: Any, **kw: Any) -> None:
        """Draw with matplotlib and save, as ``Figure.savefig`` does (same arguments)."""
        self.figure().savefig(fname, **kw)

    def _repr_svg_(self) -> str:
        buf = io.StringIO()
        self.savefig(buf, format="svg", bbox_inches="tight")
        return buf.getvalue()
