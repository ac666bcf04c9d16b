"""The explorer: drag an input and watch G and B change; step through Algorithms 6.1 and 6.2; click a node.

:func:`explore` lays the graph out once, in Python, with Graphviz (G, and B beside it as in figure 6.10
when both fit), and hands the page everything else as data. The page then computes on its own: the
numbers come from JavaScript that :func:`micrograph.compile.compile_javascript` generates from the
operation table (the ``js`` template beside each operation's Python one), never from a formula written in
JavaScript. The program holds

* Algorithm 6.1 over G's nodes u(1)..u(n);
* the grad_table of Algorithm 6.2 for every node of G, as the backward subgraph B that
  :func:`micrograph.grad` (Algorithms 6.5/6.6) builds with the table's derivative rules;
* every local derivative du(i)/du(j), the rule of u(i)'s operation called on G's nodes (the terms shown
  when a node is clicked);
* the nodes of the B that is drawn (``grad(z, wrt)``), so the drawing of B shows its own values.

A value outside an operation's domain makes the generated code give NaN or an infinity; the page looks
for the first such node, as Algorithm 6.1 would stop there with a DomainError, and marks it "outside its
domain" instead of showing a number. The frames of Algorithms 6.1 and 6.2 (which line, which node, which
terms) are observed from the engine's own algorithms by :func:`viz.steps.frames`; the page fills in their
numbers at the current inputs.

In Jupyter the explorer is an anywidget widget: moving a slider never goes back to the kernel.
``Explorer.save(path)`` writes the same explorer as one self-contained HTML page (script, style and
drawing inline, a content-security policy that admits only that script, no network access).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 (Algorithms 6.1, 6.2),
6.5.5 and 6.5.6 (Algorithms 6.5, 6.6), figure 6.10.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from micrograph.compile import compile_javascript
from micrograph.engine import Value, as_values
from micrograph.graph import Graph, topological_order
from micrograph.pseudocode import ALGORITHM_6_1, ALGORITHM_6_2
from micrograph.symbolic import grad
from viz.dot import DEFAULT_MAX_NODES, _check_size, draw, draw_side_by_side
from viz.render import GraphvizMissing, pipe_svg, write_atomic
from viz.steps import frames
from viz.text import clean, fmt, formula, node_names

__all__ = ["explore", "Explorer", "explorer_spec", "page_html"]

_SVG_NS = "http://www.w3.org/2000/svg"
_PROLOG = re.compile(r"^.*?(?=<svg)", re.S)
_MARK = "\x00"  # brackets a node position in a formula template: "\x003\x00" is u4's value


def _asset(name: str) -> str:
    return resources.files("viz").joinpath("static").joinpath(name).read_text(encoding="utf-8")


def _annotated_svg(svg: str, n: int, b_names: dict[str, int]) -> str:
    """Graphviz's SVG with each node group marked ``data-node`` and its data/grad texts marked by class.

    G's records end with the fields ``data ...`` and ``grad ...``; B's with ``data ...``. The page writes
    its numbers into exactly these text elements.
    """
    ET.register_namespace("", _SVG_NS)
    ET.register_namespace("xlink", "http://www.w3.org/1999/xlink")
    root = ET.fromstring(_PROLOG.sub("", svg, count=1))
    ns = {"s": _SVG_NS}
    for g in root.iter(f"{{{_SVG_NS}}}g"):
        if g.get("class") != "node":
            continue
        title = g.find("s:title", ns)
        name = title.text if title is not None and title.text else ""
        texts = g.findall("s:text", ns)
        if name.startswith("u") and name[1:].isdigit() and int(name[1:]) <= n:
            g.set("data-node", str(int(name[1:]) - 1))
            fields = [("mg-data", texts[-2]), ("mg-grad", texts[-1])] if len(texts) >= 4 else []
        elif name in b_names:
            g.set("data-bnode", str(b_names[name]))
            fields = [("mg-data", texts[-1])] if len(texts) >= 3 else []
        else:
            continue
        for cls, t in fields:
            t.set("class", cls)
    for k, g in enumerate(root.iter(f"{{{_SVG_NS}}}g")):
        if g.get("id"):
            g.set("id", f"mg{k}")
    return ET.tostring(root, encoding="unicode")


def _template(node: Value, graph: Graph) -> str:
    """How a node is computed, each argument a marker of its position (the page puts the numbers in)."""
    return formula(node, {p: f"{_MARK}{graph.index[p]}{_MARK}" for p in node.inputs})


def explorer_spec(
    z: Value, wrt: Sequence[Value] | Value | None = None, *, max_nodes: int = DEFAULT_MAX_NODES
) -> tuple[dict[str, Any], str]:
    """Everything the explorer page needs: the data (a JSON-able dict) and the generated JavaScript.

    Args:
        z: the output u(n).
        wrt: the nodes B is built for (the targets T of Algorithm 6.5, shown as dz/dw beside the
            sliders); None: every variable of G (its leaves that are not constants).
        max_nodes: the largest graph drawn; G and B are drawn side by side when they fit together,
            G alone otherwise.

    Returns:
        ``(spec, program)``: the page's data and the JavaScript source of ``forward_backward(x, u)``.

    Raises:
        TypeError: z is not a Value, or wrt holds something that is not a Value.
        ValueError: wrt is empty or holds a node that is not in the graph of z.
        GraphTooLarge: G has more than ``max_nodes`` nodes.
        DomainError: a local derivative does not exist at the graph's current values (B cannot be built
            there, see :func:`micrograph.grad`).
        GraphvizMissing: Graphviz's ``dot`` program is not installed.
    """
    if not isinstance(z, Value):
        raise TypeError(f"explore(z): z must be a Value, got {type(z).__name__} {z!r}")
    graph = Graph(z)
    nodes = graph.nodes
    n, n_i = len(nodes), graph.n_inputs
    _check_size(n, max_nodes)
    if wrt is None:
        targets = list(graph.variables) or [nodes[0]]
    else:
        targets = as_values(wrt, "explore(z, wrt)", "wrt")
    for k, w in enumerate(targets):
        if w not in graph.index:
            raise ValueError(f"explore(z, wrt): wrt[{k}] = {w!r} is not a node of the graph of z")

    # B for every node of G: the grad_table of Algorithm 6.2, built by Algorithms 6.5/6.6.
    table = grad(z, nodes)
    # Every edge's local derivative du(i)/du(j): the operation's rule called on G's nodes.
    edge_derivative: dict[tuple[int, int], Any] = {}
    for i, v in enumerate(nodes[n_i:], n_i):
        for k in range(len(v.inputs)):
            edge_derivative[(i, k)] = v.op.local_derivative(k, v.inputs, v)  # type: ignore[union-attr]
    # The B that is drawn beside G (figure 6.10), when G and B fit in one drawing.
    drawn = grad(z, targets)
    drawn_nodes = [v for v in topological_order(drawn) if v not in graph.index]
    side_by_side = n + len(drawn_nodes) <= max_nodes
    extra = [*table, *(d for d in edge_derivative.values() if isinstance(d, Value))]
    if side_by_side:
        extra += drawn
    program = compile_javascript(graph, extra)

    note = ""
    svg = ""
    if side_by_side:
        try:
            svg = pipe_svg(draw_side_by_side(z, targets, max_nodes=max_nodes))
        except GraphvizMissing:
            raise
        except RuntimeError as e:  # Graphviz 2.43 can lose an edge between records in clusters
            side_by_side = False
            note = (
                f"Graphviz could not draw B beside G ({str(e).splitlines()[-1].strip()}); G is drawn alone."
            )
        b_names = {f"u{n + k}": program.slot[v] for k, v in enumerate(drawn_nodes, 1)}
    else:
        note = f"B has {len(drawn_nodes)} nodes: too many to draw beside G (max_nodes={max_nodes})."
    if not side_by_side:
        svg = pipe_svg(draw(graph, max_nodes=max_nodes))
        b_names = {}
        note += " The grad column of G shows its grad_table entries, computed by B."
    svg = _annotated_svg(svg, n, b_names)

    names = node_names(graph)
    fs = frames(graph)
    derivative_text: dict[tuple[int, int], str] = {}
    for f in fs:
        for i, k, _, _, text in f.terms:
            derivative_text[(i, k)] = text

    def derivative(i: int, k: int) -> dict[str, Any]:
        d = edge_derivative[(i, k)]
        where: dict[str, Any] = {"slot": program.slot[d]} if isinstance(d, Value) else {"value": float(d)}
        return {"i": i, "k": k, "formula": derivative_text.get((i, k), ""), **where}

    consumers = [[derivative(i, k) for i, k in edges] for edges in graph.consumer_edges]
    variables = set(graph.variables)
    inputs = []
    for j, v in enumerate(nodes[:n_i]):
        span = 3.0 * max(1.0, abs(v.data))
        inputs.append({
            "j": j, "name": names[v], "label": clean(v.label), "value": v.data, "variable": v in variables,
            "min": v.data - span, "max": v.data + span, "step": span / 500.0,
        })  # fmt: skip
    spec = {
        "title": clean(z.label) or names[z],
        "n": n,
        "n_i": n_i,
        "size": program.size,
        "nodes": [
            {
                "name": names[v],
                "label": clean(v.label),
                "formula": formula(v, names),
                "numbers": _template(v, graph) if v.op is not None else "",
                "op": v.op.name if v.op is not None else None,
                "domain": v.op.domain if v.op is not None else None,
            }
            for v in nodes
        ],
        "grad_slot": [program.slot[t] for t in table],
        "consumers": consumers,
        "inputs": inputs,
        "wrt": [{"j": graph.index[w], "name": names[w], "label": clean(w.label)} for w in targets],
        "side_by_side": side_by_side,
        "b_size": len(drawn_nodes),
        "note": note.strip(),
        "frames": [
            {
                "algorithm": f.algorithm,
                "lines": list(f.lines),
                "node": f.node,
                "terms": [[i, k] for i, k, *_ in f.terms],
            }
            for f in fs
        ],
        "algorithm_6_1": list(ALGORITHM_6_1.lines),
        "algorithm_6_2": list(ALGORITHM_6_2.lines),
        "fit": n <= 40,
        "svg": svg,
        "digits": fmt(1.0).count("0") + 1,
    }
    return spec, program.source


def _json_for_html(data: Any) -> str:
    """JSON that is safe inside a ``<script type="application/json">`` element (no ``<``, ``>``, ``&``)."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def page_html(spec: dict[str, Any], program: str) -> str:
    """The explorer as one self-contained HTML page (the content of :meth:`Explorer.save`)."""
    script = program + "\n" + _asset("explore.js") + "\nmicrographExplorer.page(forward_backward);\n"
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    csp = f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{digest}'"
    title = html.escape(f"micrograph explorer: {spec['title']}")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{_asset('explore.css')}</style></head>\n"
        f'<body><div id="micrograph-explorer" class="mg-explorer"></div>\n'
        f'<script type="application/json" id="micrograph-spec">{_json_for_html(spec)}</script>\n'
        f"<script>{script}</script>\n</body></html>\n"
    )


def _widget_class() -> Any:
    try:
        import anywidget
        import traitlets
    except ImportError:
        return None

    class ExplorerWidget(anywidget.AnyWidget):  # type: ignore[misc]
        """The explorer as a Jupyter widget (anywidget): the page's script runs in the notebook."""

        _css = _asset("explore.css")
        spec = traitlets.Unicode("{}").tag(sync=True)

    return ExplorerWidget


class Explorer:
    """An explorer of one graph: a Jupyter widget (``.widget``) and a page (``.save(path)``).

    Displayed in Jupyter (the last expression of a cell), it shows the widget; without anywidget installed
    it displays the saved page's HTML in an iframe-free ``text/html`` output instead.

    Attributes:
        spec (dict): the page's data (layout SVG, names, frames, slots).
        program (str): the generated JavaScript (Algorithms 6.1 and 6.2 as straight-line code).
    """

    def __init__(self, spec: dict[str, Any], program: str) -> None:
        self.spec = spec
        self.program = program
        self._widget: Any = None

    def __repr__(self) -> str:
        return (
            f"<Explorer of {self.spec['title']}: {self.spec['n']} nodes, {len(self.spec['frames'])} frames>"
        )

    @property
    def widget(self) -> Any:
        """The anywidget widget (built on first use).

        Raises:
            ImportError: anywidget is not installed (``pip install micrograph[explore]``).
        """
        if self._widget is None:
            cls = _widget_class()
            if cls is None:
                raise ImportError("viz.explore needs anywidget in Jupyter: pip install 'micrograph[explore]'")
            esm = (
                self.program + "\n" + _asset("explore.js")
                + "\nexport default { render({ model, el }) {"
                + " return micrographExplorer.widget(model, el, forward_backward); } };\n"
            )  # fmt: skip
            self._widget = cls(spec=json.dumps(self.spec, allow_nan=False), _esm=esm)
        return self._widget

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        try:
            return self.widget._repr_mimebundle_(**kwargs)
        except ImportError:
            return {"text/plain": repr(self)}

    def html(self) -> str:
        """The self-contained HTML page."""
        return page_html(self.spec, self.program)

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = True) -> Path:
        """Write the explorer as one self-contained HTML page (atomically; never through a symlink).

        Args:
            path: the file to write.
            overwrite: if False, an existing file is an error.

        Returns:
            The path written.

        Raises:
            FileExistsError: the file exists and ``overwrite`` is False.
        """
        return write_atomic(Path(path), self.html().encode("utf-8"), overwrite=overwrite)


def explore(
    z: Value, wrt: Sequence[Value] | Value | None = None, *, max_nodes: int = DEFAULT_MAX_NODES
) -> Explorer:
    """An explorer of the graph of z: a slider per input, G and B updating as you drag, the algorithms' steps.

    The layout is computed once here (Graphviz); the page computes G's values, the grad_table of
    Algorithm 6.2 and B's values itself, with JavaScript generated from the operation table, so dragging
    a slider never goes back to the kernel. Buttons (and the arrow keys) step through the frames of
    Algorithms 6.1 and 6.2 with the book's pseudo-code line highlighted; clicking a node shows
    dz/du(j) as the book's sum over its consumers, term by term.

    Args:
        z: the output u(n), a Value. Its graph is not changed.
        wrt: the targets T of the drawn B and of the dz/dw shown beside the sliders; None: every variable.
        max_nodes: the largest graph drawn (300 by default, as :func:`viz.draw`).

    Returns:
        An :class:`Explorer`: displays as a widget in Jupyter; ``.save(path)`` writes the page.

    Raises:
        TypeError, ValueError: z is not a Value; wrt is empty, not Values, or not nodes of the graph.
        GraphTooLarge: G has more than ``max_nodes`` nodes (the error :func:`viz.draw` raises).
        DomainError: a local derivative does not exist at the current values (B cannot be built there).
        GraphvizMissing: Graphviz's ``dot`` program is not installed.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3, 6.5.6, figure 6.10.
    """
    spec, program = explorer_spec(z, wrt, max_nodes=max_nodes)
    return Explorer(spec, program)
