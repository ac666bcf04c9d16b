"""viz's plots as data: a :class:`Chart` holds every number, mark, text, colour and scale a plot shows.

Each plot of micrograph is defined once here, in pure Python (no matplotlib import), and drawn by two
renderers that only read the Chart:

* :func:`viz.plots.figure` draws it with matplotlib (the REPL, the tour, notebooks, files): the
  ``viz.plot_*`` functions are ``figure(chart)`` plus the file;
* the browser site draws it with Observable Plot (``site/src/charts.js``) from :meth:`Chart.to_json`, where
  the browser's Python has no matplotlib.

A lesson's step returns the Chart as its picture. A Chart also answers ``savefig`` and ``_repr_svg_`` by
drawing itself with matplotlib, so every place that saves or shows a figure takes it as it is.

The marks: :class:`Line` (a polyline and/or markers), :class:`Rule` (a horizontal line), :class:`Points`
(a scatter of classed points), :class:`Regions` (a grid of classes, shaded), :class:`Contour` (level lines
of a grid), :class:`Cells` (a heat map with each value written in its cell).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.4 (figure 6.9, eq.
6.50-6.53), 6.5.10 (eq. 6.59).
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from micrograph.engine import Value
from micrograph.graph import Graph
from viz import style

__all__ = [
    "Chart",
    "Panel",
    "Line",
    "Rule",
    "Points",
    "Regions",
    "Contour",
    "Cells",
    "blowup",
    "memory",
    "training",
    "decision_boundary",
    "hessian",
    "OPERATIONS",
]

OPERATIONS = "operations (local derivatives + recomputed nodes)"
"""The y label of the operation counts: what :func:`micrograph.naive_grad` and back-propagation count."""

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


# ---------------------------------------------------------------------------------------------------


def _family_title(family: str) -> str:
    return {
        "chain": "chain: z = f(f(...f(w))), one path",
        "ladder": "ladder: each level uses the previous twice, 2^d paths",
    }.get(family, family)


def _by_depth(rows: Sequence[Mapping[str, Any]], key: str) -> tuple[list[float], list[float]]:
    """(the depths, the column ``key``) of ``families.blowup_rows`` rows."""
    return [float(r["depth"]) for r in rows], [float(r[key]) for r in rows]


def blowup(
    max_depth: int = 20,
    *,
    families: Sequence[str] = ("chain", "ladder"),
    max_operations: int = 2_000_000,
    rows: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
) -> Chart:
    """Operations to compute dz/dw against depth: the naive chain rule (eq. 6.53) vs back-propagation.

    One panel per family of :mod:`micrograph.families`, log y axis. The naive rule's counts are measured
    by :func:`micrograph.naive_grad` (local derivatives + recomputed nodes) until its budget stops it;
    deeper points are the closed form of :func:`micrograph.families.expected_counts`, drawn dashed with
    hollow markers ("extrapolated"). Back-propagation's count is one local derivative per edge
    (Algorithm 6.2), measured at every depth.

    Args:
        max_depth: the deepest graph, an int >= 1.
        families: the families to draw, names in ``micrograph.families.FAMILIES``.
        max_operations: the naive rule's budget per depth (see ``families.blowup_rows``).
        rows: already computed ``families.blowup_rows`` tables by family name; families missing from it
            are computed.

    Returns:
        The Chart: one panel per family.

    Raises:
        ValueError: an unknown family, no family, or max_depth < 1.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.2, figure 6.9, eq. 6.50-6.53.
    """
    from micrograph import families as fam

    names = list(families)
    if not names:
        raise ValueError("blowup: give at least one family, e.g. families=('chain', 'ladder')")
    given = rows or {}
    c = style.PLOT_COLORS
    panels = []
    for name in names:
        table = given.get(name) or fam.blowup_rows(name, max_depth, max_operations=max_operations)
        done = [r for r in table if r["naive_complete"]]
        rest = [r for r in table if not r["naive_complete"]]
        marks: list[Mark] = [
            Line(*_by_depth(table, "backprop_ops"), c["backprop"], "back-propagation (Algorithm 6.2)",
                 marker="circle"),
            Line(*_by_depth(done, "naive_ops"), c["naive"], "naive chain rule (eq. 6.53), measured",
                 marker="square"),
        ]  # fmt: skip
        if rest:
            marks += [
                Line(*_by_depth(done[-1:] + rest, "naive_ops"), c["naive"], dash="dashed"),
                Line(*_by_depth(rest, "naive_ops"), c["naive"], "naive, extrapolated by the closed form",
                     dash="none", marker="square", hollow=True),
                Rule(max_operations, style.PLOT_REFERENCE,
                     f"naive rule's budget ({max_operations:,} operations)"),
            ]  # fmt: skip
        panels.append(
            Panel(
                _family_title(name),
                marks,
                "depth d (nodes)",
                OPERATIONS,
                y_log=True,
                x_integers=True,
                legend="below",
            )
        )
    return Chart(
        "Operations to compute dz/dw:\nthe naive chain rule blows up, back-propagation stays linear",
        panels,
        max(6.4, 5.2 * len(names)),
        5.6,
        name="blowup",
    )


def memory(n_max: int = 64) -> Chart:
    """Memory against computation on a chain of n operations: store (back-propagation), recompute, checkpoint.

    Left: the peak number of forward values held at once; right: the operations (local derivatives +
    recomputed nodes), both against the chain's length n, from :func:`micrograph.families.memory_rows`.

    Args:
        n_max: the longest chain, an int >= 1.

    Returns:
        The Chart: two panels.

    Raises:
        ValueError: n_max < 1.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.3 (eq. 6.52 stores,
    eq. 6.53 recomputes); checkpointing: Chen et al. (2016).
    """
    from micrograph import families as fam

    rows = fam.memory_rows(n_max)
    n = [float(r["n"]) for r in rows]
    c = style.PLOT_COLORS
    kinds = [
        ("store", "store every value (back-propagation, eq. 6.52)"),
        ("recompute", "recompute (naive chain rule, eq. 6.53)"),
        ("checkpoint", "checkpoint every ~√n values"),
    ]
    peak: list[Mark] = [Line(n, [r[f"{k}_peak"] for r in rows], c[k], text) for k, text in kinds]
    ops: list[Mark] = [Line(n, [r[f"{k}_ops"] for r in rows], c[k], text) for k, text in kinds]
    return Chart(
        "dz/dw on a chain z = tanh(tanh(...tanh(w))): memory traded for computation",
        [
            Panel(
                "memory: values held at once",
                peak,
                "chain length n (operations)",
                "values held at peak",
                legend="upper left",
            ),
            Panel("computation", ops, "chain length n (operations)", OPERATIONS, y_log=True),
        ],
        10.5,
        4.4,
        name="memory",
    )


def training(history: Any, *, title: str | None = None) -> Chart:
    """Training curves: the loss J and the accuracy per epoch, on the training data and any test data.

    Args:
        history: a :class:`micrograph.nn.History` (``.loss``, ``.accuracy``, ``.test_loss``,
            ``.test_accuracy``: lists, one float per epoch; the test lists may be empty).
        title: the chart's title (default: what is shown and for how many epochs).

    Returns:
        The Chart: loss (left), accuracy (right).

    Raises:
        ValueError: the history holds no epoch.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4 and chapter 8.
    """
    loss = [float(v) for v in getattr(history, "loss", [])]
    acc = [float(v) for v in getattr(history, "accuracy", [])]
    test_loss = [float(v) for v in getattr(history, "test_loss", [])]
    test_acc = [float(v) for v in getattr(history, "test_accuracy", [])]
    if not loss:
        raise ValueError("plot_training: the history holds no epoch (history.loss is empty); train first")
    c = style.PLOT_COLORS

    def epochs(v: list[float]) -> list[float]:
        return [float(k) for k in range(1, len(v) + 1)]

    left: list[Mark] = [Line(epochs(loss), loss, c["train"], "training")]
    if test_loss:
        left.append(Line(epochs(test_loss), test_loss, c["test"], "test"))
    right: list[Mark] = []
    if acc:
        right.append(Line(epochs(acc), acc, c["train"], "training"))
    if test_acc:
        right.append(Line(epochs(test_acc), test_acc, c["test"], "test"))
    every = loss + test_loss
    log = min(every) > 0 and max(every) / min(every) > 100
    return Chart(
        title if title is not None else f"Training: loss and accuracy over {len(loss)} epochs",
        [
            Panel("loss", left, "epoch", "loss J (mean over the epoch)", y_log=log, legend="best"),
            Panel(
                "accuracy",
                right,
                "epoch",
                "accuracy (fraction classified right)",
                y_range=(-0.02, 1.02),
                legend="lower right" if right else None,
            ),
        ],
        10.5,
        4.2,
        name="training",
    )


def _classifier(
    model: Callable[[list[Value]], Any], threshold: float
) -> tuple[Callable[[float, float], tuple[int, float]], int]:
    """(classify, number of outputs); classify(x1, x2) -> (class, score) replays the graph (Algorithm 6.1).

    One output: class 1 if the score > ``threshold`` else 0 (as ``micrograph.nn.predict`` with threshold 0);
    several outputs: the argmax, score = the winning output.
    """
    x1, x2 = Value(0.0, label="x1"), Value(0.0, label="x2")
    out = model([x1, x2])
    outs = [out] if isinstance(out, Value) else list(out) if isinstance(out, (list, tuple)) else []
    if not outs or not all(isinstance(o, Value) for o in outs):
        raise TypeError(
            f"plot_decision_boundary: model([x1, x2]) must return a Value or a list of Values, got {out!r}"
        )
    total = outs[0]
    for o in outs[1:]:
        total = total + o  # one output node, so that one Graph holds every output
    graph = Graph(total)
    variables = set(graph.index)
    has_x1, has_x2 = x1 in variables, x2 in variables

    def classify(a: float, b: float) -> tuple[int, float]:
        values = {}
        if has_x1:
            values[x1] = a
        if has_x2:
            values[x2] = b
        graph.forward(values)  # Algorithm 6.1 over the stored order: no node is built
        if len(outs) == 1:
            s = outs[0].data
            return (1 if s > threshold else 0), s
        scores = [o.data for o in outs]
        k = max(range(len(scores)), key=scores.__getitem__)
        return k, scores[k]

    return classify, len(outs)


def decision_boundary(
    model: Any,
    X: Sequence[Sequence[float]],
    y: Sequence[int],
    *,
    title: str | None = None,
    resolution: int = 70,
    threshold: float = 0.0,
) -> Chart:
    """The model's decision regions on a grid over the data's 2-D feature space, with the data points.

    The model is called once on two placeholder inputs, and its graph is replayed with Algorithm 6.1 at
    every grid point (``resolution`` x ``resolution`` points, 10 % beyond the data on each side). Regions
    are shaded by predicted class; the points coloured by their true class (black edge). For one output,
    the level line score = threshold (the boundary) is drawn; for several, the lines between classes.

    Args:
        model: a callable on a list of 2 Values returning a Value (a score: class 1 if > threshold) or a
            list of Values (class = argmax), e.g. ``micrograph.nn.MLP(2, [16, 16, 1])``.
        X: the points, n x 2 numbers. y: their class labels, n ints (-1/+1 labels are drawn as 0/1).
        title: the chart's title (default: what is shown).
        resolution: grid points per axis (at least 2).
        threshold: the single-output decision threshold (0 for a score or logit; 0.5 for an mse on 0/1).

    Returns:
        The Chart: one panel.

    Raises:
        ValueError: X is empty, not n x 2, or X and y differ in length; resolution < 2; a model of other
            than 2 inputs; a score that is not finite.
        TypeError: the model does not return Values.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4 (the MLP of Algorithm 6.3).
    """
    nin = getattr(model, "nin", 2)
    if nin != 2:
        raise ValueError(f"plot_decision_boundary: the model takes {nin} features; a 2-D boundary needs 2")
    pts = [list(map(float, p)) for p in X]
    labels = [int(v) for v in y]
    if not pts or any(len(p) != 2 for p in pts):
        raise ValueError("plot_decision_boundary: X must be a non-empty list of 2-feature points")
    if len(labels) != len(pts):
        raise ValueError(f"plot_decision_boundary: X has {len(pts)} points but y has {len(labels)} labels")
    if resolution < 2:
        raise ValueError(f"plot_decision_boundary: resolution must be >= 2, got {resolution}")
    labels = [0 if v < 0 else v for v in labels]  # -1/+1 (hinge) labels as classes 0/1
    classify, n_outputs = _classifier(model, threshold)
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]

    def span(v: list[float]) -> list[float]:
        lo, hi = min(v), max(v)
        pad = 0.1 * (hi - lo) if hi > lo else 1.0
        return [lo - pad + (hi - lo + 2 * pad) * k / (resolution - 1) for k in range(resolution)]

    gx, gy = span(xs), span(ys)
    cls: list[list[int]] = []
    score: list[list[float]] = []
    for b in gy:
        row = [classify(a, b) for a in gx]
        cls.append([r[0] for r in row])
        score.append([r[1] for r in row])
    if not all(math.isfinite(s) for r in score for s in r):
        raise ValueError("plot_decision_boundary: the model's score is not finite somewhere on the grid")
    k = max(max(labels), max(max(r) for r in cls)) + 1
    colors = [style.PLOT_CLASS_COLORS[i % len(style.PLOT_CLASS_COLORS)] for i in range(k)]
    marks: list[Mark] = [Regions(gx, gy, cls, colors)]
    boundary = "decision boundary"
    if n_outputs == 1 and min(map(min, score)) < threshold < max(map(max, score)):
        marks.append(Contour(gx, gy, score, [threshold], style.PLOT_BOUNDARY, boundary))
    elif n_outputs > 1 and len({c for r in cls for c in r}) > 1:
        levels = [i + 0.5 for i in range(k - 1)]
        grid = [[float(c) for c in r] for r in cls]
        marks.append(Contour(gx, gy, grid, levels, style.PLOT_BOUNDARY, boundary))
    for c in sorted(set(labels)):
        sel = [i for i, v in enumerate(labels) if v == c]
        marks.append(Points([xs[i] for i in sel], [ys[i] for i in sel], colors[c], f"class {c}"))
    return Chart(
        "",
        [
            Panel(
                title
                if title is not None
                else f"Decision regions (shaded, {resolution}×{resolution} grid) and data (dots) by class",
                marks,
                "x₁ (feature 1)",
                "x₂ (feature 2)",
                legend="best",
                grid=False,
            )
        ],
        6.4,
        5.4,
        name="decision_boundary",
    )


def hessian(
    H: Sequence[Sequence[float]],
    names: Sequence[str],
    Hv: Sequence[float] | None = None,
    v: Sequence[float] | None = None,
) -> Chart:
    """The Hessian H as a heat map, each entry written in its cell; beside it H v, if given.

    Args:
        H: the n x n Hessian (rows of numbers), e.g. from ``grad`` applied twice.
        names: the n variables' names, for the axes.
        Hv: ``hessian_vector_product``'s result as numbers, drawn as a column beside H; None for none.
        v: the vector v of H v, for the column's title.

    Returns:
        The Chart: H, and H v beside it.

    Raises:
        ValueError: H not square, or names, Hv or v of another length than H.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.10, equation 6.59.
    """
    n = len(H)
    if any(len(row) != n for row in H):
        raise ValueError(f"plot_hessian: H must be square, got rows of lengths {[len(r) for r in H]}")
    if len(names) != n or (Hv is not None and len(Hv) != n) or (v is not None and len(v) != n):
        raise ValueError(f"plot_hessian: names, Hv and v must have n = {n} entries each")
    values = [[float(x) for x in row] for row in H]
    top = max((abs(x) for row in values for x in row), default=1.0) or 1.0
    ticks = [f"∂{x}" for x in names]
    panels = [
        Panel(
            "H = ∂²f / ∂xᵢ∂xⱼ  (grad of grad)",
            [Cells(values, top, ticks, ticks, colorbar=True)],
            grid=False,
            weight=float(n),
        )
    ]
    if Hv is not None:
        shown = "" if v is None else ",\nv = (" + ", ".join(f"{x:g}" for x in v) + ")"
        column = Cells([[float(h)] for h in Hv], top, None, [""] * n)
        panels.append(Panel(f"H v (eq. 6.59){shown}", [column], grid=False, small_title=True))
    return Chart("", panels, 2.0 + 1.1 * n + (1.4 if Hv is not None else 0.0), 1.2 + 0.9 * n, name="hessian")
