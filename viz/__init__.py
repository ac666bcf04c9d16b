"""viz: micrograph's visualizer. It reads the engine and never changes it.

* :func:`draw` -- the computational graph G, one record per node u(i) (a ``graphviz.Digraph``), or for a
  network built by ``micrograph.nn`` one box per layer or neuron (``level="layers"``, ``"neurons"``);
* :func:`draw_side_by_side` -- G and the backward subgraph B of :func:`micrograph.grad`, figure 6.10;
* :func:`render` -- write a drawing as SVG, PNG, PDF or DOT, atomically;
* :func:`save` -- write a drawing or a matplotlib figure to a file, atomically (the one way views write);
* :func:`text` -- a terminal drawing that needs no Graphviz;
* :func:`steps` -- Algorithms 6.1 and 6.2 step by step, one self-contained HTML page;
* :func:`explore` -- drag the inputs and watch G and B change (a Jupyter widget, or one HTML page);
* :mod:`viz.charts` -- each plot as data (a :class:`~viz.charts.Chart`: numbers, marks, texts), which
  matplotlib draws here and Observable Plot draws in the browser site;
* :func:`plot_blowup`, :func:`plot_memory`, :func:`plot_training`, :func:`plot_decision_boundary`,
  :func:`plot_hessian` -- those charts as matplotlib figures (matplotlib is imported on first use).

Imported inside IPython/Jupyter, viz registers ``image/svg+xml`` formatters so that a ``Value`` or a
``Graph`` displays inline as its drawing (a ``graphviz.Digraph`` already does).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import graphviz

from micrograph.engine import Value
from micrograph.graph import Graph
from viz import charts
from viz.animate import animate
from viz.dot import GraphTooLarge, draw, draw_side_by_side
from viz.explore import explore
from viz.files import write_atomic
from viz.render import GraphvizMissing, pipe_svg, render
from viz.steps import steps
from viz.text import text
from viz.tikz import to_tikz

if TYPE_CHECKING:
    from viz.plots import plot_blowup, plot_decision_boundary, plot_hessian, plot_memory, plot_training

_PLOTS = ("plot_blowup", "plot_memory", "plot_training", "plot_decision_boundary", "plot_hessian")

__all__ = [
    "draw",
    "draw_side_by_side",
    "render",
    "save",
    "write_atomic",
    "text",
    "to_tikz",
    "animate",
    "steps",
    "explore",
    "charts",
    "plot_blowup",
    "plot_memory",
    "plot_training",
    "plot_decision_boundary",
    "plot_hessian",
    "GraphTooLarge",
    "GraphvizMissing",
    "register_ipython",
]


def save(obj: Any, path: str | os.PathLike[str], *, overwrite: bool = True) -> Path:
    """Write a drawing (a ``graphviz.Digraph``), a chart or a matplotlib Figure to ``path``, atomically.

    A drawing is written by :func:`render` (``.svg``, ``.png``, ``.pdf``, ``.dot``), a
    :class:`viz.charts.Chart` or a figure by matplotlib in viz's style (``.png``, ``.svg``, ``.pdf``);
    either way through one temporary file renamed over the destination, which replaces a symbolic link
    rather than writing through it. The directory must exist.

    Raises:
        FileExistsError: ``path`` exists and ``overwrite`` is False.
        FileNotFoundError: the directory does not exist.
        ValueError: a suffix the format does not know.
        TypeError: ``obj`` is neither a drawing, a chart nor a figure.
    """
    if isinstance(obj, (graphviz.Digraph, graphviz.Graph)):
        return Path(render(obj, path, overwrite=overwrite))
    if isinstance(obj, charts.Chart):
        obj = obj.figure()  # drawn by matplotlib
    if hasattr(obj, "savefig"):
        from viz import plots  # matplotlib loads on first use

        try:
            plots.save_figure(obj, path, overwrite=overwrite)
        finally:
            plots.close(obj)
        return Path(path)
    raise TypeError(
        f"save: expected a graphviz Digraph, a viz.charts.Chart or a matplotlib Figure, "
        f"got {type(obj).__name__}"
    )


def _svg(obj: Any) -> str | None:
    """The inline SVG of a Value or Graph for Jupyter; None (plain repr) if too large or no Graphviz."""
    try:
        return pipe_svg(draw(obj))
    except (GraphTooLarge, RuntimeError):  # GraphvizMissing is a RuntimeError
        return None


def register_ipython(ip: Any = None) -> bool:
    """Make ``Value`` and ``Graph`` display inline as SVG drawings in IPython/Jupyter.

    Called when viz is imported inside a running IPython; call it yourself after starting IPython later.

    Args:
        ip: the IPython shell (``get_ipython()``), found automatically when None.

    Returns:
        True if formatters were registered, False outside IPython.
    """
    if ip is None:
        if "IPython" not in sys.modules:  # never import IPython just to find out it is not running
            return False
        from IPython import get_ipython

        ip = get_ipython()
        if ip is None:
            return False
    formatter = ip.display_formatter.formatters["image/svg+xml"]
    formatter.for_type(Value, _svg)
    formatter.for_type(Graph, _svg)
    return True


def __getattr__(name: str) -> Any:
    """The plots load on first use: matplotlib takes about a second to import; drawings need none of it."""
    if name in _PLOTS:
        try:
            from viz import plots
        except ModuleNotFoundError as e:
            if e.name != "matplotlib":
                raise
            chart = name.removeprefix("plot_")
            raise ModuleNotFoundError(
                f"viz.{name} draws with matplotlib, which is not installed here (pip install matplotlib); "
                f"viz.charts.{chart} gives the same plot as data, which the browser site draws",
                name="matplotlib",
            ) from None
        return getattr(plots, name)
    raise AttributeError(f"module 'viz' has no attribute {name!r}")


register_ipython()
