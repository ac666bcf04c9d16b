"""The explorer: drag an input and watch G and B change; step through Algorithms 6.1 and 6.2; click a node.

:func:`explore` builds G once and B once, lays both out once in Python with Graphviz (apart: two
drawings, two ``dot`` runs at once), and hands the page everything else as data. The page then computes
on its own: the numbers come from JavaScript that
:func:`micrograph.compile_javascript.compile_javascript` generates from the operation table (the ``js``
template beside each operation's Python one), never from a formula
written in JavaScript. The program holds

* Algorithm 6.1 over G's nodes u(1)..u(n);
* the grad_table of Algorithm 6.2 for every node of G, as the backward subgraph B that
  :func:`micrograph.grad` (Algorithms 6.5/6.6) builds with the table's derivative rules, once;
* every local derivative du(i)/du(j) (the terms shown when a node is clicked): the node of B that
  build_grad formed from the rule of u(i)'s operation, as its observer reported it, so each is computed
  once.

The drawing of B is the part of that same B which computes the targets' entries, so each drawn node shows the
slot of that very node. A value outside an operation's domain makes the generated code give NaN, one that
overflows an infinity; the page looks for the first such node, as Algorithm 6.1 would stop there with a
DomainError, and says which of the two it is instead of showing a number. Every sentence the page shows is
Python's: the frames' prose (:func:`viz.narration.frame_text` with :class:`viz.narration.Holes` for the
numbers) and :data:`WORDS`; the page fills in the numbers at the current inputs. The drawings pan and zoom
(d3-zoom, vendored from npm and inlined); in predict mode the student types the grad_table entries.

In Jupyter the explorer is an anywidget widget: moving a slider never goes back to the kernel.
``Explorer.save(path)`` writes the same explorer as one self-contained HTML page (script, style and
drawing inline, a content-security policy that admits only that script, no network access); both are
:mod:`viz.explore_page`'s, the drawings :mod:`viz.explore_layout`'s.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 (Algorithms 6.1, 6.2),
6.5.5 and 6.5.6 (Algorithms 6.5, 6.6), figure 6.10.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

from micrograph.backprop import sweep
from micrograph.compile_javascript import compile_javascript
from micrograph.engine import Value, as_value
from micrograph.errors import NO_FLOAT, DomainError, typed_repr
from micrograph.expr import NOT_FINITE
from micrograph.graph import Graph, as_values
from micrograph.order import topological_order
from micrograph.pseudocode import ALGORITHM_6_1, ALGORITHM_6_2
from micrograph.symbolic import BuildGradCall, grad
from viz.dot import DEFAULT_MAX_NODES, check_size
from viz.explore_groups import checked_backward, checked_levels, mlp_views
from viz.explore_layout import layout
from viz.explore_page import Explorer
from viz.frames import Frame, derivative_formula
from viz.groups import LEVELS
from viz.mistakes import ENTRY_MISTAKES, USES, distinct, wrong_entries
from viz.narration import HOLE, Holes, entry_text, frame_text, iteration_head, right_text, term_text
from viz.words import clean, fmt, formula, formula_numbers, node_names

__all__ = ["explore", "WORDS"]


def _b_nodes(graph: Graph, table: list[Value], targets: list[Value]) -> list[Value]:
    """The part of B that computes the targets' entries, in B's topological order (G's nodes left out)."""
    drawn = [table[graph.index[w]] for w in targets]
    return [v for v in topological_order(drawn) if v not in graph.index]


def frame_plan(graph: Graph) -> list[Frame]:
    """The frames of Algorithms 6.1 and 6.2 on ``graph`` as :func:`viz.frames.observe` reports them, without
    their numbers: the steps in the order the engine's loops take them, Algorithm 6.2's iterations and each
    one's edges as :func:`micrograph.backprop.sweep` gives them (the order and edges its loop walks), each
    edge with its rule's formula. The explorer's page computes the numbers; a frame's are left empty (NaN
    in a term).

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithms 6.1 and 6.2.
    """
    nodes = graph.nodes
    n, n_i = len(nodes), graph.n_inputs
    names = node_names(graph)
    out = [Frame("6.1", (0, 1), i, [], [], "") for i in range(n_i)]  # u(i) <- x_i
    out += [Frame("6.1", (4, 5), i, [], [], "") for i in range(n_i, n)]  # u(i) <- f(i)(A(i))
    out.append(Frame("6.1", (7,), n - 1, [], [], ""))  # return u(n)
    out.append(Frame("6.2", (0, 1, 2, 3), n - 1, [], [], ""))  # grad_table[u(n)] <- 1
    order, edges = sweep(graph)
    nan = float("nan")
    for j in order:
        terms = [(i, k, nan, nan, derivative_formula(nodes[i], k, names)) for i, k, *_ in edges[j]]
        out.append(Frame("6.2", (4, 7), j, [], [], "", terms))
    out.append(Frame("6.2", (9,), None, [], [], ""))  # return the grad_table
    return out


def edge_derivatives(graph: Graph, calls: Sequence[BuildGradCall]) -> dict[tuple[int, int], Value | float]:
    """Every edge's local derivative du(i)/du(j), as build_grad reported it, not built again.

    Algorithm 6.6 forms each term G(i) = ``op.bprop(inputs, V, D)`` from the local derivative d of each
    argument position k of the consumer C that is V; each call reports those d
    (:attr:`micrograph.symbolic.BuildGradCall.derivatives`): a node of B (or of G, or a constant) whose
    program slot the page reads, or a number.

    Args:
        graph: G. calls: every call of build_grad of one ``grad(z, every node of G)``, as its observer
            reported them (:class:`micrograph.symbolic.BuildGradCall`).

    Returns:
        ``{(i, k): d}`` for every edge of G: u(i) takes u(j) as argument k; a number d as a float.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, Algorithm 6.6.
    """
    index = graph.index
    out: dict[tuple[int, int], Value | float] = {}
    for call in calls:
        for C, local in zip(call.consumers, call.derivatives):
            i = index[C]
            out.update(((i, k), d if isinstance(d, Value) else float(d)) for k, d in local)
    return out


def _node_words(graph: Graph, names: dict[Value, str], holes: Holes) -> list[dict[str, Any]]:
    """Per node of G: its name, what it computes, and the sentences the page says about it (with holes)."""
    out = []
    z = graph.nodes[-1]
    zname = clean(z.label) or names[z]
    for i, v in enumerate(graph.nodes):
        name = names[v]
        head = f"{name} ({clean(v.label)})" if v.label else name
        said = formula_numbers(v, lambda p, b: holes.value(graph.index[p], b))
        word: dict[str, Any] = {
            "name": name,
            "label": clean(v.label),
            "head": head,
            "formula": formula(v, names),
            "constant": v.is_constant,  # Algorithm 6.2 gives it NaN where its derivative fails, and goes on
        }
        if v.op is not None:
            word["outside"] = (
                f"{name} = {formula(v, names)} = {said} is outside the domain of {v.op.name} ({v.op.domain})"
            )
            word["overflows"] = f"{name} = {formula(v, names)} = {said} overflows ({NO_FLOAT})"
        word["sum_title"] = f"∂{zname}/∂{head} = grad_table[{name}]"
        edges = graph.consumer_edges[i]  # the panel says iteration i of Algorithm 6.2 as the frames do
        word["sum_rule"] = iteration_head(i, edges, graph, names)
        word["total"] = entry_text(i, edges, graph, names, holes) + ("." if i == len(graph.nodes) - 1 else "")
        word["prompt"] = f"grad_table[{name}] ="
        word["right"] = right_text(i, edges, graph, names, holes)  # predict mode, an entry typed right
        out.append(word)
    return out


def _term_words(graph: Graph, names: dict[Value, str], holes: Holes, i: int, k: int, rule: str) -> str:
    """One term of grad_table[u(j)]'s sum, the edge u(j) -> u(i) as argument k, as the frames say it
    (:func:`viz.narration.term_text`), then the local derivative's rule."""
    v = graph.nodes[i]
    j = graph.index[v.inputs[k]]
    text = term_text(j, i, k, graph.consumer_edges[j], graph, names, holes)
    if rule:
        ui, uj = names[v], names[graph.nodes[j]]
        text += f", where ∂{ui}/∂{uj} = {rule} = {holes.derivative(i, k)}"
    return text


WORDS = {
    "title": "Explorer of {title} ({n} nodes, n_i = {ni})",
    "status": "{title} = {value}",
    "stopped_61": "Algorithm 6.1 stopped at {stop}: {outside}.",
    "not_computed": "i = {i}: not computed: Algorithm 6.1 stopped at {stop}.",
    "no_62": "Algorithm 6.2 does not run: Algorithm 6.1 stopped at {stop}.",
    "status_61": "{outside}: Algorithm 6.1 stops there.",
    "status_62": "∂{ui}/∂{uj} does not exist here ({op}: {domain}): Algorithm 6.2 stops at j = {j}.",
    "stops_62": "Algorithm 6.2 stops at j = {j}: ∂{ui}/∂{uj} = {rule} does not exist here ({op}: {domain}).",
    "status_62_overflows": "∂{ui}/∂{uj} = {rule} overflows here: Algorithm 6.2 stops at j = {j}.",
    "stops_62_overflows": "Algorithm 6.2 stops at j = {j}: ∂{ui}/∂{uj} = {rule} overflows here.",
    "status_62_term": "the term grad_table[{ui}] × ∂{ui}/∂{uj} overflows here: Algorithm 6.2 stops at "
    "j = {j}.",
    "stops_62_term": "Algorithm 6.2 stops at j = {j}: the term grad_table[{ui}] × ∂{ui}/∂{uj} overflows "
    "here.",
    "status_62_sum": "grad_table[{uj}], the sum of its terms, overflows here: Algorithm 6.2 stops at "
    "j = {j}.",
    "stops_62_sum": "Algorithm 6.2 stops at j = {j}: grad_table[{uj}], the sum of its terms, overflows here.",
    "not_computed_sum": "not computed: {why}",
    "not_filled": "grad_table[{name}] is not filled yet at step {k}: Algorithm 6.2 fills it at step {at}.",
    "hint": "Click or tap a node, or Tab to it and press Enter, to see its grad_table entry as the book's "
    "sum.",
    "step": "step {k} of {total}",
    "help": (
        "← → step (Home, End); drag a slider; drag the drawing to pan, Ctrl+wheel or pinch to zoom; click a "
        "node, or Tab to it and press Enter; on a node ← goes to an input (a parent), → to a consumer, "
        "↑ ↓ to the other inputs or consumers"
    ),
    "algorithm_6_1": "Algorithm 6.1 (forward propagation)",
    "algorithm_6_2": "Algorithm 6.2 (back-propagation)",
    "box_data": "data {value}",
    "box_grad": "grad {value}",
    "box_outside": "data ✗",
    "box_unknown": "?",
    "box_empty": "—",
    "predict_intro": (
        "Predict mode: type each grad_table entry in Algorithm 6.2's order, from u(n) down; each is checked "
        "at once (4 significant digits)."
    ),
    "hidden": "grad_table[{name}] is hidden until you predict it.",
    "predict_done": "Every entry is right: the grad_table is complete.",
    "predict_reset": "The inputs changed: the entries start again from u(n).",
    "predict_nan": "Type a number.",
    "wrong": "Not grad_table[{name}]: you typed {typed}.",
    "mistake": "Mistake {code}: {words}.",
    "also": "Or mistake {code}: {words}, which gives the same number.",
    "term_use": "{use}: {term}",
    "zoom_in": "Zoom in",
    "zoom_out": "Zoom out",
    "fit": "Fit",
    "one": "1:1",
    "show_g": "Show G",
    "show_b": "Show B",
    "show_both": "Show G and B",
    "previous": "◀ previous",
    "next": "next ▶",
    "previous_name": "Previous step",
    "next_name": "Next step",
    "check": "Check",
    "graph_g": "forward graph G",
    "graph_b": "backward subgraph B (the part that computes the targets' entries)",
    "value_of": "value of {name}",
    "refused": "{name}: " + NOT_FINITE + " (a number such as 0.5 or -2e3); the page keeps {name} = {value}.",
    "refused_empty": "{name}: no number typed; the page keeps {name} = {value}.",
    "level_layers": "By layers",
    "level_neurons": "By neurons",
    "group_hint": "Click a box, or Tab to it and press Enter, to see its scalars; Escape closes them.",
    "inside": "Inside {title}: its {n} scalars of G and its {nb} nodes of B",
    "inside_g": "the scalars of {title} in G",
    "inside_b": "the nodes of B of {title}",
    "close": "Close",
    "too_many": (
        "{title} holds {n} scalars of G and {nb} nodes of B, more than max_nodes = {max} drawn at once: open "
        "one of its neurons (By neurons), or explore again with a larger max_nodes (--max-nodes)."
    ),
}
"""Every sentence the explorer's page says that is not a frame's: templates whose ``{name}`` fields the
page fills with names and numbers (formatted as :func:`viz.words.fmt`). Predict mode names a wrong entry with
the catalogue of :mod:`viz.mistakes` (``mistake``, ``also``: its code and words, the exercise checker's)."""


def explore(
    z: Value,
    wrt: Sequence[Value] | Value | None = None,
    *,
    max_nodes: int = DEFAULT_MAX_NODES,
    predict: bool = False,
    level: str = "scalars",
) -> Explorer:
    """An explorer of the graph of z: a slider per input, G and B updating as you drag, the algorithms' steps.

    The layout is computed once here (Graphviz); the page computes G's values, the grad_table of
    Algorithm 6.2 and B's values itself, with JavaScript generated from the operation table, so dragging
    a slider never goes back to the kernel. Buttons (and the arrow keys) step through the frames of
    Algorithms 6.1 and 6.2 with the book's pseudo-code line highlighted; clicking a node shows
    dz/du(j) as the book's sum over its consumers, term by term.

    G is built once and B once (``grad(z, every node of G)``, Algorithms 6.5/6.6): B's nodes give the
    grad_table of every node and, read from the terms build_grad's observer reports, every local
    derivative (:func:`edge_derivatives`), so the program has one slot per node of G and of B; the part of
    B that computes the targets' entries is drawn, from the very nodes whose program slots the page reads.
    No algorithm runs on numbers: the frames are :func:`frame_plan`'s, their numbers holes. G and B are
    laid out apart (two ``dot`` runs at once).

    Args:
        z: the output u(n), a Value. Its graph is not changed.
        wrt: the targets T of Algorithm 6.5: the nodes B is drawn for, their dz/dw shown beside the
            sliders; None: every variable of G (its leaves that are not constants).
        max_nodes: the largest G (and the largest B) drawn (300 by default, as :func:`viz.draw`). Layout
            time grows with it: G and B of about 500 nodes each take a few tenths of a second of Graphviz,
            an edge longer than 8 ranks drawn from a copy of its source (see docs/architecture.md,
            "Layout").
        predict: predict mode: the grad_table entries are hidden and the student types each one, in
            Algorithm 6.2's order from u(n) down; each is checked at once, and a wrong entry is named with
            the mistake of the sum it is (:mod:`viz.mistakes`, the exercise checker's catalogue, whose
            recipes the spec's ``wrong`` gives for each entry), its terms marked.
        level: ``"scalars"`` (every node drawn); or for a network built by ``micrograph.nn``, the level it
            is first shown at, ``"layers"`` or ``"neurons"``: G and B drawn one box per layer (per neuron)
            with its a, h and grad_table entries, a button to switch level, and a group's scalars in G and
            in B shown when it is clicked (or focused with Tab and opened with Enter); Escape closes them
            (:mod:`viz.explore_groups`: both levels and every group's scalars are laid out; ``max_nodes``
            bounds each drawing's boxes; the sliders are the inputs x; wrt defaults to the parameters).

    Returns:
        An :class:`Explorer`: displays as a widget in Jupyter; ``.save(path)`` writes the page; its
        ``spec`` is the page's data (a JSON-able dict) and its ``program`` the generated JavaScript of
        ``forward_backward(x, u)``.

    Raises:
        TypeError: z is not a Value, or wrt holds something that is not a Value.
        ValueError: wrt is empty or holds a node that is not in the graph of z; an unknown level; predict
            with a level other than scalars.
        GraphTooLarge: G has more than ``max_nodes`` nodes (the error :func:`viz.draw` raises; by groups: a
            drawing at either level more than ``max_nodes`` boxes, or G more than
            ``viz.explore_groups.MAX_SCALARS`` nodes), raised before the frames and the layouts are made.
        DomainError: an operation or a local derivative is undefined at the graph's current values (B
            cannot be built there).
        GraphvizMissing: Graphviz's ``dot`` program is not installed.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3, 6.5.5 and 6.5.6,
    figure 6.10; sections 6.5.4 and 6.5.7 (an MLP by layers).
    """
    if not isinstance(z, Value):
        raise TypeError(f"explore(z): z must be a Value, got {typed_repr(z)}")
    if level not in ("scalars", *LEVELS):
        raise ValueError(f"explore(level=...) must be one of {['scalars', *LEVELS]}, got {level!r}")
    if predict and level != "scalars":
        raise ValueError(
            f"explore(predict=True) asks for every node's entry: draw level='scalars', not {level!r}"
        )
    graph = Graph(z)
    nodes = graph.nodes
    n = len(nodes)
    grouped = level != "scalars"
    if not grouped:
        check_size(n, max_nodes)
    else:  # every level's drawing of G refused now if too large, before B, the frames and the layouts
        levels = checked_levels(graph, max_nodes)
    parameters = [v for v in graph.variables if v.meta is not None and v.meta.role in ("weight", "bias")]
    if wrt is not None:
        targets = as_values(wrt, "explore(z, wrt)", "wrt")
    else:
        targets = (grouped and parameters) or list(graph.variables) or [nodes[0]]
    for k, w in enumerate(targets):
        if w not in graph.index:
            raise ValueError(f"explore(z, wrt): wrt[{k}] = {w!r} is not a node of the graph of z")

    calls: list[BuildGradCall] = []
    # B, once: the grad_table of Algorithm 6.2 for every node, by Algorithms 6.5/6.6 (a DomainError is
    # raised here where a local derivative does not exist)
    try:
        table = grad(z, nodes, observe=calls.append)
    except DomainError:  # a constant's derivative may not exist (x ** c at x < 0, with respect to c): as
        # Algorithm 6.2 gives it NaN and goes on, B is built for the other nodes, the constants' entries NaN
        calls.clear()
        built = iter(grad(z, [v for v in nodes if not v.is_constant], observe=calls.append))
        table = [as_value(math.nan) if v.is_constant else next(built) for v in nodes]
    B = _b_nodes(graph, table, targets)
    if grouped:  # and B's drawings, before the frames and the layouts
        grouped_b = checked_backward(graph, levels, B, max_nodes)
    # The frames' structure (Algorithm 6.1's and 6.2's steps, each iteration's edges): text with holes for
    # the numbers the page computes, so no algorithm runs here on numbers that would be thrown away.
    fs = frame_plan(graph)
    names = node_names(graph, B)
    edge_derivative = edge_derivatives(graph, calls)  # each du(i)/du(j) a node B holds already, or a number
    for j, v in enumerate(nodes):  # a constant left out of B (see above): its edges' derivatives NaN too
        for i, k in graph.consumer_edges[j] if v.is_constant else ():
            edge_derivative.setdefault((i, k), table[j])
    program = compile_javascript(
        graph, [*table, *(d for d in edge_derivative.values() if isinstance(d, Value))]
    )
    spec = _spec(graph, names, fs, program, edge_derivative, table, targets, B)
    if grouped:  # an MLP by layers or neurons: the drawings of both levels, every group's scalars
        views = mlp_views(graph, B, names, program, table, level, max_nodes, grouped_b)
        shown = views["levels"][level]
        svg_g, svg_b, note = shown["svg_g"], shown["svg_b"], ""
        spec.update({"mlp": views, "wrt": []})  # the dz/dw of every parameter: in the boxes, not listed
        for inp in spec["inputs"]:  # the sliders: the inputs x (the parameters are the network's)
            v = nodes[inp["j"]]
            inp["variable"] = v.meta is not None and v.meta.role == "input"
    else:
        svg_g, svg_b, note = layout(graph, B, names, max_nodes)
    spec.update({"svg_g": svg_g, "svg_b": svg_b, "note": note, "predict": predict})
    spec["wrong"] = _wrong_entries(graph) if predict else []
    return Explorer(spec, program.source)


def _wrong_entries(graph: Graph) -> list[list[dict[str, Any]]]:
    """Predict mode's diagnoses: for every grad_table entry, the catalogue's wrong entries
    (:mod:`viz.mistakes`) as recipes over the terms of its sum (``spec["consumers"][j]``, the same order),
    which the page evaluates at the current inputs (:meth:`viz.mistakes.Wrong.as_data`). Each recipe is sent
    once (:func:`viz.mistakes.distinct`), with the code the checker names it by."""
    edges, last = graph.consumer_edges, len(graph.nodes) - 1
    return [
        [w.as_data() for w in distinct(wrong_entries(edges[j], output=j == last))]
        for j in range(len(graph.nodes))
    ]


def _spec(graph: Graph, names: dict[Value, str], fs: list[Frame], program: Any,
          edge_derivative: dict[tuple[int, int], Any], table: list[Value], targets: list[Value],
          B: list[Value]) -> dict[str, Any]:  # fmt: skip
    """The page's data (JSON-able): names, sentences with holes, slots (the drawings are added after)."""
    nodes = graph.nodes
    z = nodes[-1]
    holes = Holes()
    rules = {(i, k): form for f in fs for i, k, _, _, form in f.terms}

    def derivative(i: int, k: int) -> dict[str, Any]:
        d = edge_derivative[(i, k)]
        where: dict[str, Any] = {"slot": program.slot[d]} if isinstance(d, Value) else {"value": float(d)}
        rule = rules.get((i, k), "")
        op = nodes[i].op
        return {"i": i, "k": k, "rule": rule, "op": op.name if op else "", "domain": op.domain if op else "",
                "text": _term_words(graph, names, holes, i, k, rule), **where}  # fmt: skip

    variables = set(graph.variables)
    inputs = []
    for j, v in enumerate(nodes[: graph.n_inputs]):
        span = 3.0 * max(1.0, abs(v.data))  # the slider's reach each side, within the finite floats
        low, high = max(v.data - span, -sys.float_info.max), min(v.data + span, sys.float_info.max)
        inputs.append({
            "j": j, "name": names[v], "label": clean(v.label), "value": v.data, "variable": v in variables,
            "min": low, "max": high, "step": high / 1000.0 - low / 1000.0,
        })  # fmt: skip
    title = clean(z.label) or names[z]
    b_consumers: dict[Value, list[int]] = {}
    for k, v in enumerate(B):
        for p in dict.fromkeys(v.inputs):
            b_consumers.setdefault(p, []).append(k)
    node_words = _node_words(graph, names, holes)
    for i, v in enumerate(nodes):
        node_words[i]["consumers"] = sorted({c for c, _ in graph.consumer_edges[i]})
        node_words[i]["b_consumers"] = b_consumers.get(v, [])
    return {
        "title": title,
        "heading": WORDS["title"].format(title=title, n=len(nodes), ni=graph.n_inputs),
        "n": len(nodes),
        "n_i": graph.n_inputs,
        "size": program.size,
        "nodes": node_words,
        "b": [{"slot": program.slot[v], "consumers": b_consumers.get(v, [])} for v in B],
        "grad_slot": [program.slot[t] for t in table],
        "consumers": [[derivative(i, k) for i, k in edges] for edges in graph.consumer_edges],
        "inputs": inputs,
        "wrt": [{"j": graph.index[w], "text": f"∂{title}/∂{clean(w.label) or names[w]} = "} for w in targets],
        "status": (f"{title} = {names[z]} = " if title != names[z] else f"{names[z]} = ")
        + holes.value(len(nodes) - 1),
        "frames": [
            {
                "algorithm": f.algorithm,
                "lines": list(f.lines),
                "node": f.node,
                "text": frame_text(f, graph, names, holes),
            }
            for f in fs
        ],
        "algorithm_6_1": list(ALGORITHM_6_1.lines),
        "algorithm_6_2": list(ALGORITHM_6_2.lines),
        "words": WORDS,
        "mistakes": {"words": ENTRY_MISTAKES, "uses": USES},
        "hole": HOLE,
        "b_size": len(B),
        "digits": fmt(1.0).count("0") + 1,
    }
