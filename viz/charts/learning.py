"""The charts of a network learning, lesson 5: the training curves and the decision regions of a model
on 2-D data (the model's graph replayed by Algorithm 6.1 at every point of a grid).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4 (the MLP of Algorithm 6.3)
and chapter 8.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from micrograph.engine import Value
from micrograph.graph import Graph
from viz import style
from viz.charts.model import Chart, Contour, Line, Mark, Panel, Points, Regions

__all__ = ["training", "decision_boundary"]


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
