"""viz's plots as data: a :class:`Chart` holds every number, mark, text, colour and scale a plot shows.

Each plot of micrograph is defined once in this package, in pure Python (no matplotlib import), and drawn
by two renderers that only read the Chart:

* :func:`viz.plots.figure` draws it with matplotlib (the REPL, the tour, notebooks, files): the
  ``viz.plot_*`` functions are ``figure(chart)`` plus the file;
* the browser site draws it with Observable Plot (``site/src/charts.js``) from :meth:`Chart.to_json`, where
  the browser's Python has no matplotlib.

A lesson's step returns the Chart as its picture. A Chart also answers ``savefig`` and ``_repr_svg_`` by
drawing itself with matplotlib, so every place that saves or shows a figure takes it as it is.

The package gathers, as :mod:`micrograph.nn` does, one module per thought: the data model
(:mod:`viz.charts.model`: Chart, Panel and the marks), the cost of the naive chain rule
(:mod:`viz.charts.costs`: :func:`blowup`, :func:`memory`), a network learning (:mod:`viz.charts.learning`:
:func:`training`, :func:`decision_boundary`) and second derivatives (:mod:`viz.charts.curvature`:
:func:`hessian`).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.4 (figure 6.9, eq.
6.50-6.53), 6.5.10 (eq. 6.59).
"""

from viz.charts.costs import OPERATIONS, blowup, memory
from viz.charts.curvature import hessian
from viz.charts.learning import decision_boundary, training
from viz.charts.model import MARKS, Cells, Chart, Contour, Line, Mark, Panel, Points, Regions, Rule

__all__ = [
    "Chart",
    "Panel",
    "Line",
    "Rule",
    "Points",
    "Regions",
    "Contour",
    "Cells",
    "Mark",
    "MARKS",
    "blowup",
    "memory",
    "training",
    "decision_boundary",
    "hessian",
    "OPERATIONS",
]
