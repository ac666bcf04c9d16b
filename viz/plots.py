"""matplotlib figures: the blowup of the naive chain rule, memory against computation, training, boundaries.

Each plot is defined once as data, a :class:`viz.charts.Chart`; :func:`figure` draws any Chart with
matplotlib (the browser site draws the same Chart with Observable Plot). Figures are made with
matplotlib's object interface and the Agg canvas (``Figure`` + ``FigureCanvasAgg``), never ``pyplot``:
nothing here selects a backend, opens a window, or changes the user's ``rcParams`` (the style of
:data:`viz.style.PLOT_RC` applies only while a figure is drawn). Each function returns the ``Figure``;
given a ``path``, it also writes the file (format from the suffix: ``.png``, ``.svg``, ``.pdf``),
atomically.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.3 (figure 6.9, eq.
6.50-6.53) and 6.5.4 (training an MLP).
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from viz import charts, style
from viz.charts import Cells, Chart, Contour, Line, Panel, Points, Regions, Rule
from viz.files import write_atomic

__all__ = [
    "figure",
    "plot_blowup",
    "plot_memory",
    "plot_training",
    "plot_decision_boundary",
    "plot_hessian",
    "save_figure",
]

PLOT_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}


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
# The renderer: any Chart, drawn with matplotlib.

DASH = {"solid": "-", "dashed": "--", "dotted": ":", "none": "none"}
MARKER = {None: "", "circle": "o", "square": "s"}
DIVERGING = "RdBu_r"  # -limit blue, 0 white, +limit red: the Cells' scale
BELOW = {"loc": "upper center", "bbox_to_anchor": (0.5, -0.16), "fontsize": "small", "frameon": False}


def _line(ax: Any, m: Line) -> None:
    ax.plot(m.x, m.y, linestyle=DASH[m.dash], marker=MARKER[m.marker], color=m.color, ms=4,
            mfc="white" if m.hollow else m.color, label=m.label or "_nolegend_")  # fmt: skip


def _cells(fig: Figure, ax: Any, m: Cells) -> None:
    image = ax.imshow(m.values, cmap=DIVERGING, vmin=-m.limit, vmax=m.limit)
    for i, row in enumerate(m.values):
        for j, value in enumerate(row):
            ax.text(j, i, m.text(value), ha="center", va="center", fontsize=10, color=m.ink(value))
    columns, rows = len(m.values[0]) if m.values else 0, len(m.values)
    if m.x_labels is None:
        ax.set_xticks([])
    else:
        ax.set_xticks(range(columns), m.x_labels)
    if m.y_labels is None:
        ax.set_yticks([])
    else:
        ax.set_yticks(range(rows), m.y_labels)
    if m.colorbar:
        fig.colorbar(image, ax=ax, shrink=0.8)


def _mark(fig: Figure, ax: Any, m: Any, handles: list[tuple[Any, str]]) -> None:
    if isinstance(m, Line):
        _line(ax, m)
    elif isinstance(m, Rule):
        ax.axhline(m.y, color=m.color, lw=0.8, ls=":", label=m.label or "_nolegend_")
    elif isinstance(m, Points):
        ax.scatter(m.x, m.y, s=22, color=m.color, edgecolors="black", linewidths=0.5,
                   label=m.label or "_nolegend_")  # fmt: skip
    elif isinstance(m, Regions):
        levels = [i - 0.5 for i in range(len(m.colors) + 1)]
        ax.contourf(m.x, m.y, m.classes, levels=levels, cmap=ListedColormap(m.colors), alpha=m.opacity)
    elif isinstance(m, Contour):
        ax.contour(m.x, m.y, m.values, levels=m.levels, colors=m.color, linewidths=1.2)
        if m.label:  # a contour set has no legend entry of its own: a line stands for it
            handles.append((Line2D([], [], color=m.color, lw=1.2), m.label))
    elif isinstance(m, Cells):
        _cells(fig, ax, m)
    else:  # pragma: no cover - every kind of viz.charts is drawn above
        raise TypeError(f"figure: no way to draw a {type(m).__name__}")


def _panel(fig: Figure, ax: Any, panel: Panel) -> None:
    extra: list[tuple[Any, str]] = []
    for m in panel.marks:
        _mark(fig, ax, m, extra)
    if panel.y_log:
        ax.set_yscale("log")
    if panel.x_integers:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if panel.y_range is not None:
        ax.set_ylim(*panel.y_range)
    if not panel.grid:
        ax.grid(False)
    if panel.x_label:
        ax.set_xlabel(panel.x_label)
    if panel.y_label:
        ax.set_ylabel(panel.y_label)
    ax.set_title(panel.title, fontsize=9 if panel.small_title else None)
    if panel.legend is None:
        return
    handles, texts = ax.get_legend_handles_labels()
    handles += [h for h, _ in extra]
    texts += [t for _, t in extra]
    if not texts:
        return
    where = BELOW if panel.legend == "below" else {"loc": panel.legend}
    ax.legend(handles, texts, **where)


def figure(chart: Chart) -> Figure:
    """Draw a :class:`viz.charts.Chart` with matplotlib: its panels side by side, in viz's style.

    Args:
        chart: what to draw (``viz.charts.blowup(...)`` and the others).

    Returns:
        The matplotlib Figure, of ``chart.width`` x ``chart.height`` inches (no pyplot, no global backend).

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.4 and 6.5.10.
    """
    with _styled():
        fig = _figure(chart.width, chart.height)
        weights = [p.weight for p in chart.panels]
        axes = fig.subplots(1, len(chart.panels), squeeze=False, width_ratios=weights)[0]
        for ax, panel in zip(axes, chart.panels):
            _panel(fig, ax, panel)
        if chart.title:
            fig.suptitle(chart.title)
    return fig


def _drawn(chart: Chart, path: str | os.PathLike[str] | None) -> Figure:
    fig = figure(chart)
    save_figure(fig, path)
    return fig


# ---------------------------------------------------------------------------------------------------
# The plots of viz: each Chart of viz.charts, drawn, and written to ``path`` if given.


def plot_blowup(
    max_depth: int = 20,
    path: str | os.PathLike[str] | None = None,
    *,
    families: Sequence[str] = ("chain", "ladder"),
    max_operations: int = 2_000_000,
    rows: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
) -> Figure:
    """:func:`viz.charts.blowup` drawn: operations for dz/dw against depth, naive rule vs back-propagation.

    Args:
        max_depth, families, max_operations, rows: as :func:`viz.charts.blowup`.
        path: a file to write (``.png``, ``.svg``, ``.pdf``), or None.

    Returns:
        The matplotlib Figure: one panel per family, log y axis.

    Raises:
        ValueError: an unknown family, max_depth < 1, an unknown file suffix.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.2, figure 6.9, eq. 6.50-6.53.
    """
    chart = charts.blowup(max_depth, families=families, max_operations=max_operations, rows=rows)
    return _drawn(chart, path)


def plot_memory(n_max: int = 64, path: str | os.PathLike[str] | None = None) -> Figure:
    """:func:`viz.charts.memory` drawn: values held at once and operations on a chain, three strategies.

    Args:
        n_max: the longest chain, an int >= 1.
        path: a file to write (``.png``, ``.svg``, ``.pdf``), or None.

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: n_max < 1 or an unknown file suffix.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.3.
    """
    return _drawn(charts.memory(n_max), path)


def plot_training(
    history: Any, path: str | os.PathLike[str] | None = None, *, title: str | None = None
) -> Figure:
    """:func:`viz.charts.training` drawn: the loss J and the accuracy per epoch.

    Args:
        history: a :class:`micrograph.nn.History`.
        path: a file to write (``.png``, ``.svg``, ``.pdf``), or None.
        title: the figure's title (default: what is shown and for how many epochs).

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: the history holds no epoch, or an unknown file suffix.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4 and chapter 8.
    """
    return _drawn(charts.training(history, title=title), path)


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
    """:func:`viz.charts.decision_boundary` drawn: the model's decision regions and the data points.

    Args:
        model, X, y, title, resolution, threshold: as :func:`viz.charts.decision_boundary`.
        path: a file to write (``.png``, ``.svg``, ``.pdf``), or None.

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: X is empty, not n x 2, or X and y differ in length; resolution < 2; a bad suffix.
        TypeError: the model does not return Values.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4 (the MLP of Algorithm 6.3).
    """
    chart = charts.decision_boundary(model, X, y, title=title, resolution=resolution, threshold=threshold)
    return _drawn(chart, path)


def plot_hessian(
    H: Sequence[Sequence[float]],
    names: Sequence[str],
    Hv: Sequence[float] | None = None,
    v: Sequence[float] | None = None,
    path: str | os.PathLike[str] | None = None,
) -> Figure:
    """:func:`viz.charts.hessian` drawn: the Hessian as a heat map, each entry written, H v beside it.

    Args:
        H, names, Hv, v: as :func:`viz.charts.hessian`.
        path: a file to write (``.png``, ``.svg``, ``.pdf``), or None.

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: H not square, or names, Hv or v of another length than H; a bad suffix.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.10, equation 6.59.
    """
    return _drawn(charts.hessian(H, names, Hv, v), path)
