"""matplotlib figures: the blowup of the naive chain rule, memory against computation, training, boundaries.

Figures are made with matplotlib's object interface and the Agg canvas (``Figure`` +
``FigureCanvasAgg``), never ``pyplot``: nothing here selects a backend, opens a window, or changes the
user's ``rcParams`` (the style of :data:`viz.style.PLOT_RC` applies only while a figure is drawn). Each
function returns the ``Figure``; given a ``path``, it also writes the file (format from the suffix:
``.png``, ``.svg``, ``.pdf``), atomically.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.3 (figure 6.9, eq.
6.50-6.53) and 6.5.4 (training an MLP).
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from micrograph.engine import Value
from micrograph.graph import Graph
from viz import style
from viz.render import write_atomic

__all__ = ["plot_blowup", "plot_memory", "plot_training", "plot_decision_boundary", "save_figure"]

OPERATIONS = "operations (local derivatives + recomputed nodes)"
PLOT_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
CLASS_COLORS = style.PLOT_CLASS_COLORS  # one colour per class, in class order


@contextmanager
def _styled() -> Iterator[None]:
    with matplotlib.rc_context(style.PLOT_RC):  # type: ignore[arg-type]  # restored on exit: the user's rcParams are untouched
        yield


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)  # attach the Agg canvas to this figure only: no global backend
    return fig


def close(fig: Figure) -> None:
    """Release a figure made by pyplot (viz's own figures are not pyplot's: nothing to do for them)."""
    try:
        import matplotlib.pyplot as plt

        plt.close(fig)
    except Exception:  # pragma: no cover - a figure not managed by pyplot
        pass


def save_figure(
    fig: Figure, path: str | os.PathLike[str] | None, *, dpi: int = 150, overwrite: bool = True
) -> None:
    """Write ``fig`` to ``path`` (``.png``, ``.svg`` or ``.pdf``) atomically; nothing if path is None.

    Raises:
        ValueError: an unknown suffix.
        FileExistsError: the file exists and ``overwrite`` is False.
    """
    if path is None:
        return
    dest = Path(path)
    fmt = PLOT_FORMATS.get(dest.suffix.lower())
    if fmt is None:
        raise ValueError(
            f"cannot tell the format of {dest}: use one of the suffixes {', '.join(PLOT_FORMATS)}"
        )
    if not overwrite and dest.exists():
        raise FileExistsError(f"{dest} exists; pass overwrite=True to replace it")
    buf = io.BytesIO()
    with _styled():
        fig.savefig(buf, format=fmt, dpi=dpi)
    write_atomic(dest, buf.getvalue(), overwrite=overwrite)


# ---------------------------------------------------------------------------------------------------


def _family_title(family: str) -> str:
    return {
        "chain": "chain: z = f(f(...f(w))), one path",
        "ladder": "ladder: each level uses the previous twice, 2^d paths",
    }.get(family, family)


def plot_blowup(
    max_depth: int = 20,
    path: str | os.PathLike[str] | None = None,
    *,
    families: Sequence[str] = ("chain", "ladder"),
    max_operations: int = 2_000_000,
    rows: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
) -> Figure:
    """Operations to compute dz/dw against depth: the naive chain rule (eq. 6.53) vs back-propagation.

    One panel per family of :mod:`micrograph.families`, log y axis. The naive rule's counts are measured
    by :func:`micrograph.naive_grad` (local derivatives + recomputed nodes) until its budget stops it;
    deeper points are the closed form of :func:`micrograph.families.expected_counts`, drawn dashed with
    hollow markers ("extrapolated"). Back-propagation's count is one local derivative per edge
    (Algorithm 6.2), measured at every depth.

    Args:
        max_depth: the deepest graph, an int >= 1.
        path: a file to write (``.png``, ``.svg``, ``.pdf``), or None.
        families: the families to draw, names in ``micrograph.families.FAMILIES``.
        max_operations: the naive rule's budget per depth (see ``families.blowup_rows``).
        rows: already computed ``families.blowup_rows`` tables by family name (for example, printed
            first by the CLI); families missing from it are computed.

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: an unknown family, max_depth < 1, an unknown file suffix.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.2, figure 6.9, eq. 6.50-6.53.
    """
    from micrograph import families as fam

    families = list(families)
    if not families:
        raise ValueError("plot_blowup: give at least one family, e.g. families=('chain', 'ladder')")
    given = rows or {}
    tables = {
        name: given.get(name) or fam.blowup_rows(name, max_depth, max_operations=max_operations)
        for name in families
    }  # fmt: skip
    c = style.PLOT_COLORS
    with _styled():
        fig = _figure(max(6.4, 5.2 * len(families)), 5.6)
        axes = fig.subplots(1, len(families), squeeze=False)[0]
        for ax, name in zip(axes, families):
            table = tables[name]
            d = [r["depth"] for r in table]
            ax.plot(d, [r["backprop_ops"] for r in table], "o-", color=c["backprop"], ms=4,
                    label="back-propagation (Algorithm 6.2)")  # fmt: skip
            done = [r for r in table if r["naive_complete"]]
            rest = [r for r in table if not r["naive_complete"]]
            ax.plot([r["depth"] for r in done], [r["naive_ops"] for r in done], "s-", color=c["naive"], ms=4,
                    label="naive chain rule (eq. 6.53), measured")  # fmt: skip
            if rest:
                joined = done[-1:] + rest
                ax.plot(
                    [r["depth"] for r in joined], [r["naive_ops"] for r in joined], "--", color=c["naive"]
                )
                ax.plot([r["depth"] for r in rest], [r["naive_ops"] for r in rest], "s", mfc="white",
                        color=c["naive"], ms=4, label="naive, extrapolated by the closed form")  # fmt: skip
                ax.axhline(max_operations, color=style.PLOT_REFERENCE, lw=0.8, ls=":",
                           label=f"naive rule's budget ({max_operations:,} operations)")  # fmt: skip
            ax.set_yscale("log")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_xlabel("depth d (nodes)")
            ax.set_ylabel(OPERATIONS)
            ax.set_title(_family_title(name))
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize="small", frameon=False)
        fig.suptitle(
            "Operations to compute dz/dw:\nthe naive chain rule blows up, back-propagation stays linear"
        )
    save_figure(fig, path)
    return fig


def plot_memory(n_max: int = 64, path: str | os.PathLike[str] | None = None) -> Figure:
    """Memory against computation on a chain of n operations: store (back-propagation), recompute, checkpoint.

    Left: the peak number of forward values held at once; right: the operations (local derivatives +
    recomputed nodes), both against the chain's length n, from :func:`micrograph.families.memory_rows`.

    Args:
        n_max: the longest chain, an int >= 1.
        path: a file to write (``.png``, ``.svg``, ``.pdf``), or None.

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: n_max < 1 or an unknown file suffix.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.3 (eq. 6.52 stores,
    eq. 6.53 recomputes); checkpointing: Chen et al. (2016).
    """
    from micrograph import families as fam

    rows = fam.memory_rows(n_max)
    n = [r["n"] for r in rows]
    c = style.PLOT_COLORS
    kinds = [
        ("store", "store every value (back-propagation, eq. 6.52)"),
        ("recompute", "recompute (naive chain rule, eq. 6.53)"),
        ("checkpoint", "checkpoint every ~√n values"),
    ]
    with _styled():
        fig = _figure(10.5, 4.4)
        left, right = fig.subplots(1, 2)
        for key, text in kinds:
            left.plot(n, [r[f"{key}_peak"] for r in rows], "-", color=c[key], label=text)
            right.plot(n, [r[f"{key}_ops"] for r in rows], "-", color=c[key], label=text)
        left.set_xlabel("chain length n (operations)")
        left.set_ylabel("values held at peak")
        left.set_title("memory: values held at once")
        right.set_xlabel("chain length n (operations)")
        right.set_ylabel(OPERATIONS)
        right.set_title("computation")
        right.set_yscale("log")
        left.legend(loc="upper left")
        fig.suptitle("dz/dw on a chain z = tanh(tanh(...tanh(w))): memory traded for computation")
    save_figure(fig, path)
    return fig


def plot_training(
    history: Any, path: str | os.PathLike[str] | None = None, *, title: str | None = None
) -> Figure:
    """Training curves: the loss J and the accuracy per epoch, on the training data and any test data.

    Args:
        history: a :class:`micrograph.nn.History` (``.loss``, ``.accuracy``, ``.test_loss``,
            ``.test_accuracy``: lists, one float per epoch; the test lists may be empty).
        path: a file to write (``.png``, ``.svg``, ``.pdf``), or None.
        title: the figure's title (default: what is shown and for how many epochs).

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: the history holds no epoch, or an unknown file suffix.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4 and chapter 8.
    """
    loss = list(getattr(history, "loss", []))
    acc = list(getattr(history, "accuracy", []))
    test_loss = list(getattr(history, "test_loss", []))
    test_acc = list(getattr(history, "test_accuracy", []))
    if not loss:
        raise ValueError("plot_training: the history holds no epoch (history.loss is empty); train first")
    c = style.PLOT_COLORS
    epochs = list(range(1, len(loss) + 1))
    with _styled():
        fig = _figure(10.5, 4.2)
        left, right = fig.subplots(1, 2)
        left.plot(epochs, loss, "-", color=c["train"], label="training")
        if test_loss:
            left.plot(list(range(1, len(test_loss) + 1)), test_loss, "-", color=c["test"], label="test")
        left.set_xlabel("epoch")
        left.set_ylabel("loss J (mean over the epoch)")
        left.set_title("loss")
        if min(loss + test_loss) > 0 and max(loss + test_loss) / min(loss + test_loss) > 100:
            left.set_yscale("log")
        left.legend()
        if acc:
            right.plot(list(range(1, len(acc) + 1)), acc, "-", color=c["train"], label="training")
        if test_acc:
            right.plot(list(range(1, len(test_acc) + 1)), test_acc, "-", color=c["test"], label="test")
        right.set_xlabel("epoch")
        right.set_ylabel("accuracy (fraction classified right)")
        right.set_ylim(-0.02, 1.02)
        right.set_title("accuracy")
        if acc or test_acc:
            right.legend(loc="lower right")
        fig.suptitle(title if title is not None else f"Training: loss and accuracy over {len(loss)} epochs")
    save_figure(fig, path)
    return fig


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


def plot_decision_boundary(
    model: Any,
    X: Sequence[Sequence[float]],
    y: Sequence[int],
    path: str | os.PathLike[str] | None = None,
    *,
    title: str | None = None,
    resolution: int = 70,
    threshold: float = 0.0,
) -> Figure:
    """The model's decision regions on a grid over the data's 2-D feature space, with the data points.

    The model is called once on two placeholder inputs, and its graph is replayed with Algorithm 6.1 at
    every grid point (``resolution`` x ``resolution`` points, 10 % beyond the data on each side). Regions
    are coloured by predicted class; the points by their true class (black edge). For one output, the
    contour score = threshold (the boundary) is drawn as a line.

    Args:
        model: a callable on a list of 2 Values returning a Value (a score: class 1 if > threshold) or a
            list of Values (class = argmax), e.g. ``micrograph.nn.MLP(2, [16, 16, 1])``.
        X: the points, n x 2 numbers. y: their class labels, n ints (-1/+1 labels are drawn as 0/1).
        path: a file to write (``.png``, ``.svg``, ``.pdf``), or None.
        title: the figure's title (default: what is shown).
        resolution: grid points per axis (at least 2).
        threshold: the single-output decision threshold (0 for a score or logit; 0.5 for an mse on 0/1).

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: X is empty, not n x 2, or X and y differ in length; resolution < 2; a bad suffix.
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
    k = max(max(labels), max(max(r) for r in cls)) + 1
    colors = [CLASS_COLORS[i % len(CLASS_COLORS)] for i in range(k)]
    with _styled():
        fig = _figure(6.4, 5.4)
        ax = fig.subplots()
        ax.contourf(
            gx, gy, cls, levels=[i - 0.5 for i in range(k + 1)], cmap=ListedColormap(colors), alpha=0.25
        )
        boundary = False
        if n_outputs == 1 and min(map(min, score)) < threshold < max(map(max, score)):
            ax.contour(gx, gy, score, levels=[threshold], colors=style.PLOT_BOUNDARY, linewidths=1.2)
            boundary = True
        elif n_outputs > 1 and len({c for r in cls for c in r}) > 1:
            levels = [i + 0.5 for i in range(k - 1)]
            ax.contour(gx, gy, cls, levels=levels, colors=style.PLOT_BOUNDARY, linewidths=1.2)
            boundary = True
        for c in sorted(set(labels)):
            sel = [i for i, v in enumerate(labels) if v == c]
            ax.scatter([xs[i] for i in sel], [ys[i] for i in sel], s=22, color=colors[c], edgecolors="black",
                       linewidths=0.5, label=f"class {c}")  # fmt: skip
        ax.set_xlabel("x₁ (feature 1)")
        ax.set_ylabel("x₂ (feature 2)")
        ax.grid(False)
        handles, texts = ax.get_legend_handles_labels()
        if boundary:
            handles.append(Line2D([], [], color=style.PLOT_BOUNDARY, lw=1.2))
            texts.append("decision boundary")
        ax.legend(handles, texts, loc="best", fontsize=9)
        ax.set_title(
            title
            if title is not None
            else f"Decision regions (shaded, {resolution}×{resolution} grid) and data (dots) by class"
        )
    save_figure(fig, path)
    return fig


def plot_hessian(
    H: Sequence[Sequence[float]],
    names: Sequence[str],
    Hv: Sequence[float] | None = None,
    v: Sequence[float] | None = None,
    path: str | os.PathLike[str] | None = None,
) -> Figure:
    """The Hessian H as a heat map, each entry written in its cell; beside it H v, if given.

    Args:
        H: the n x n Hessian (rows of numbers), e.g. from ``grad`` applied twice.
        names: the n variables' names, for the axes.
        Hv: ``hessian_vector_product``'s result as numbers, drawn as a column beside H; None for none.
        v: the vector v of H v, for the column's title.
        path: a file to write (``.png``, ``.svg``, ``.pdf``), or None.

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: H not square, or names, Hv or v of another length than H.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.10, equation 6.59.
    """
    n = len(H)
    if any(len(row) != n for row in H):
        raise ValueError(f"plot_hessian: H must be square, got rows of lengths {[len(r) for r in H]}")
    if len(names) != n or (Hv is not None and len(Hv) != n) or (v is not None and len(v) != n):
        raise ValueError(f"plot_hessian: names, Hv and v must have n = {n} entries each")
    top = max((abs(x) for row in H for x in row), default=1.0) or 1.0
    with _styled():
        fig = _figure(2.0 + 1.1 * n + (1.4 if Hv is not None else 0.0), 1.2 + 0.9 * n)
        axes = fig.subplots(1, 2, width_ratios=[n, 1]) if Hv is not None else [fig.subplots()]
        ax = axes[0]
        image = ax.imshow(H, cmap="RdBu_r", vmin=-top, vmax=top)
        for i in range(n):
            for j in range(n):
                ink = "white" if abs(H[i][j]) > 0.6 * top else "black"  # readable on the dark cells
                ax.text(j, i, f"{H[i][j]:.4g}", ha="center", va="center", fontsize=10, color=ink)
        ax.grid(False)
        ax.set_xticks(range(n), [f"∂{x}" for x in names])
        ax.set_yticks(range(n), [f"∂{x}" for x in names])
        ax.set_title("H = ∂²f / ∂xᵢ∂xⱼ  (grad of grad)")
        fig.colorbar(image, ax=ax, shrink=0.8)
        if Hv is not None:
            side = axes[1]
            side.imshow([[h] for h in Hv], cmap="RdBu_r", vmin=-top, vmax=top)
            for i, h in enumerate(Hv):
                ink = "white" if abs(h) > 0.6 * top else "black"
                side.text(0, i, f"{h:.4g}", ha="center", va="center", fontsize=10, color=ink)
            side.grid(False)
            side.set_xticks([])
            side.set_yticks(range(n), [""] * n)
            shown = "" if v is None else ",\nv = (" + ", ".join(f"{x:g}" for x in v) + ")"
            side.set_title(f"H v (eq. 6.59){shown}", fontsize=9)
    save_figure(fig, path)
    return fig
