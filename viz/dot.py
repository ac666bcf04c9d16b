"""Graph -> graphviz.Digraph: G, B, and G and B side by side (figure 6.10). No file I/O here.

Each node u(i) is drawn as a box of :mod:`viz.boxes` (its name and label, how it is computed, its value and
gradient) and each argument as an edge. Node names in the DOT source are the book's names ``u1, u2, ...`` in
the topological order of :class:`~micrograph.graph.Graph`, so the same expression always gives the same DOT
source. ``a * a`` has two edges from ``a``.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1 and figure 6.10.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

import graphviz

import micrograph
from micrograph.engine import Value
from micrograph.errors import DomainError, short_repr, typed_repr
from micrograph.graph import Graph, as_values
from micrograph.order import topological_order
from viz import style
from viz.boxes import _caption, _edges, _fields, _head, _legend_html, _new_digraph, _node, _node_attrs, _tail
from viz.words import as_graph, check_grad_table, clean, node_names

__all__ = [
    "GraphTooLarge",
    "check_size",
    "draw",
    "draw_side_by_side",
    "figure_6_10",
    "draw_backward",
    "digraph",
    "DEFAULT_MAX_NODES",
]

DEFAULT_MAX_NODES = 300


class GraphTooLarge(ValueError):
    """A drawing would have more nodes than ``max_nodes``: Graphviz's time grows faster than the graph
    (about a second at 400 nodes) and the picture gets hard to read. The message gives the size, the limit
    and what raising it costs; :meth:`text` says it in the words of the place where it is read.

    Attributes:
        size (int): the nodes the drawing would have. limit (int): ``max_nodes``. what (str): the drawing
            (``"the graph"``, ``"the drawing of G and B"``, ``"G by layers"`` ...). network (bool): the
            drawing is of a network by layers or neurons, so a smaller one is a smaller minibatch or fewer
            hidden units, not a smaller expression.
    """

    def __init__(self, size: int, limit: int, what: str = "the graph", *, network: bool = False) -> None:
        self.size = size
        self.limit = limit
        self.what = what
        self.network = network
        super().__init__(self.text("python"))

    def text(self, place: str = "python", *, most: int | None = None) -> str:
        """The message, naming what the reader can change where it is read.

        Args:
            place: ``"python"`` (the drawing functions' ``max_nodes`` argument, ``viz.text``; the exception's
                own message), ``"command"`` (the command line's ``--max-nodes``) or ``"page"`` (a page the
                reader cannot change the limit in: the site's, the tour's).
            most: the largest limit the place accepts (the command line's), if any: a larger one is not
                offered.

        Raises:
            ValueError: an unknown place.
        """
        size, limit, what = self.size, self.limit, self.what
        cost = "(Graphviz's layout time grows faster than the graph: about a second at 400 nodes)"
        smaller = "network (a smaller minibatch, fewer hidden units)" if self.network else "expression"
        if place == "python":
            text = "" if self.network else ", print it with viz.text()"
            return (
                f"{what} has {size} nodes, more than max_nodes={limit}: too large to draw readably {cost}. "
                f"Draw a smaller {smaller}{text}, or pass max_nodes={size} (or more) to draw it anyway."
            )
        if place == "command":
            more = (
                f", or pass --max-nodes {size} (or more) to draw it anyway"
                if most is None or size <= most
                else f" (--max-nodes is at most {most})"
            )
            return (
                f"{what} has {size} nodes, more than --max-nodes {limit}: too large to draw readably {cost}. "
                f"Draw a smaller {smaller}{more}."
            )
        if place == "page":
            return (
                f"{what} has {size} nodes, more than the {limit} this page draws: draw a smaller {smaller}."
            )
        raise ValueError(f"place must be python, command or page, got {place!r}")


def check_size(size: int, max_nodes: int, what: str = "the graph", *, network: bool = False) -> None:
    """Refuse to draw more than ``max_nodes`` nodes (Graphviz's time grows fast; the picture gets unreadable).

    Args:
        size: the nodes (or boxes) the drawing would have. max_nodes: the most it may have. what: the
            drawing, as the message names it. network: a network's drawing by layers or neurons (the
            message then asks for a smaller network, :class:`GraphTooLarge`).

    Raises:
        TypeError: if ``max_nodes`` is not an int.
        ValueError: if ``max_nodes`` is not positive.
        GraphTooLarge: if ``size`` exceeds ``max_nodes`` (the message names ``what`` and both numbers).
    """
    if not isinstance(max_nodes, int) or isinstance(max_nodes, bool):
        raise TypeError(f"max_nodes must be a whole number of nodes, got {max_nodes!r}")
    if max_nodes < 1:
        raise ValueError(f"max_nodes must be a positive number of nodes, got {max_nodes!r}")
    if size > max_nodes:
        raise GraphTooLarge(size, max_nodes, what, network=network)


def digraph(
    graph: Graph,
    *,
    data: Sequence[float | None] | None = None,
    grads: Sequence[float | None] | None = None,
    highlight: Iterable[Value] = (),
    title: str | None = None,
    width: int | None = None,
    cut: Collection[tuple[Value, Value]] = (),
) -> graphviz.Digraph:
    """The drawing of ``graph`` with the values ``data`` and gradients ``grads`` given per node (None: "?").

    The building block of :func:`draw` and :mod:`viz.steps` (which shows values as they are computed);
    ``width`` is each box's least width in points (the explorer's page writes numbers of any length);
    each edge (u(j), u(i)) in ``cut`` is drawn from a copy of u(j) beside u(i), named ``u(j)~u(i)`` in
    the DOT source (the explorer's far edges, :func:`viz.explore_layout.far_edges`).
    """
    names = node_names(graph)
    nodes = graph.nodes
    data = [v.data for v in nodes] if data is None else data
    grads = [v.grad for v in nodes] if grads is None else grads
    marked = set(highlight)
    dot = _new_digraph("G", title)
    last = len(nodes) - 1
    for i, v in enumerate(nodes):
        _node(dot, names[v], _fields(names[v], v, names, data[i], grads[i]),
              _node_attrs(v, highlighted=v in marked, output=i == last), width)  # fmt: skip
    for v in nodes[graph.n_inputs :]:
        _edges(dot, v, names, cut=cut)
    return dot


def draw(
    target: Value | Graph,
    *,
    highlight: Iterable[Value] = (),
    grad_table: Mapping[Value, float] | None = None,
    title: str | None = None,
    max_nodes: int = DEFAULT_MAX_NODES,
    level: str = "scalars",
    expand: Iterable[Value] = (),
) -> graphviz.Digraph:
    """Draw the computational graph G of z (section 6.5.1): one record per node u(i), flowing left to right.

    Each record shows, top to bottom: the name u(i) and the label, how the node is computed from its
    parents (``u1 × u2``, ``tanh(u3)``; ``input`` or ``constant`` for a leaf), ``data`` and ``grad``.
    Node names are ``u1..un`` in ``Graph(z)`` order (leaves first), so the DOT source is deterministic.
    Legend: green = variable, dashed white = constant, blue = operation, orange = node of a backward
    subgraph B (dark orange: a gradient dz/du), yellow thick = highlighted, thick border = the output z;
    edges numbered 1, 2 where the operation is not commutative (see :mod:`viz.style`).

    Args:
        target: the output z (a Value) or a Graph.
        highlight: nodes to draw emphasised (yellow, thick border).
        grad_table: {node: dz/dnode} to show as ``grad`` (e.g. ``Graph(z).backprop()``, Algorithm 6.2);
            nodes missing from it show ``—``. None shows each node's ``.grad``.
        title: a caption drawn above the graph (escaped; never interpreted as HTML).
        max_nodes: the largest graph drawn (300 by default); by layers or neurons, the most boxes.
        level: ``"scalars"`` (every node), or for a network built by ``micrograph.nn``, ``"layers"`` or
            ``"neurons"``: one box per layer (per neuron) holding its a, h and their grad_table entries,
            one per W(k) and b(k), the inputs, the loss, the regularizer and J (:mod:`viz.groups`).
        expand: nodes whose layer or neuron is drawn as its scalars (a cluster), at level layers or neurons.
            By groups, a box's row of grad_table entries none of which ``grad_table`` holds is left out
            (``grad_table={}``: values only, for a graph not back-propagated yet).

    Returns:
        A ``graphviz.Digraph`` (no file is written; see :func:`viz.render`). In Jupyter it displays
        inline as SVG.

    Raises:
        GraphTooLarge: if G (or the drawing by groups) has more than ``max_nodes`` nodes (a ValueError).
        TypeError: if target is neither a Value nor a Graph, ``title`` not a str, ``highlight`` or ``expand``
            not a Value or a sequence of Values, or ``grad_table`` not a mapping (the message names it).
        ValueError: an unknown level, or a node of ``expand`` not in G.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1, figure 6.8; sections
    6.5.4 and 6.5.7 (an MLP by layers).
    """
    graph = as_graph(target)
    if level not in ("scalars", "layers", "neurons"):
        raise ValueError(f"draw(level=...) must be 'scalars', 'layers' or 'neurons', got {short_repr(level)}")
    if title is not None and not isinstance(title, str):
        raise TypeError(f"draw(title=...) must be a str or None, got {typed_repr(title)}")
    highlight = as_values(highlight, "draw(highlight=...)", "highlight", empty=True)
    expand = as_values(expand, "draw(expand=...)", "expand", empty=True)
    if level == "scalars":
        check_size(len(graph.nodes), max_nodes)
    grads: list[float | None] | None = None
    check_grad_table(grad_table, "draw")
    if grad_table is not None:
        grads = [grad_table.get(v) for v in graph.nodes]
    if level != "scalars":
        from viz.groups_dot import draw_grouped  # it draws its scalars with this module's boxes

        grads = [v.grad for v in graph.nodes] if grads is None else grads
        return draw_grouped(graph, level, grads=grads, expand=expand, title=title, max_nodes=max_nodes)
    return digraph(graph, grads=grads, highlight=highlight, title=title)


def draw_side_by_side(
    z: Value,
    wrt: Value | Sequence[Value],
    *,
    max_nodes: int = DEFAULT_MAX_NODES,
    gradients: Value | Sequence[Value] | None = None,
    grad_table: Mapping[Value, float] | None = None,
    highlight: Iterable[Value] = (),
    level: str = "scalars",
    expand: Iterable[Value] = (),
) -> graphviz.Digraph:
    """Figure 6.10: the forward graph G on the left, the backward subgraph B built by ``grad`` on the right.

    The convenience a user calls (``viz.draw_side_by_side(z, w)``): what the caller does not pass is
    computed first, once, as an explicit step before any drawing: B by :func:`micrograph.grad` (Algorithm
    6.5) when ``gradients`` is None, and the grad_table by Algorithm 6.2 (``Graph(z).backprop()``) when
    ``grad_table`` is None (none where a local derivative does not exist: G is drawn without numbers for
    grad). Then :func:`figure_6_10`, which runs no algorithm, draws them. A caller that has run the
    algorithms already (a lesson, the step pages, the command line) passes their results, so nothing is
    computed again for the picture.

    Args:
        z: the output, a Value.
        wrt: the target(s) T, a Value or a sequence of Values.
        max_nodes: the largest drawing, G and B together (300 by default).
        gradients: the result of a ``grad(z, wrt)`` the caller already ran (a Value, or a list for a
            list ``wrt``): B is drawn from these very nodes instead of a new ``grad`` call, so a picture
            shows the nodes an observer of Algorithm 6.6 reported (``grad(..., observe=...)``).
        grad_table: {node: dz/dnode} of Algorithm 6.2 for this z, shown as G's ``grad`` (the caller's
            ``Graph(z).backprop()``); nodes missing from it show ``—``.
        highlight, level, expand: as :func:`figure_6_10`.

    Returns:
        A ``graphviz.Digraph`` (no file written).

    Raises:
        GraphTooLarge: if G, or G and B together, have more than ``max_nodes`` nodes (boxes, by groups).
        TypeError, ValueError: as :func:`micrograph.grad` (z or a target not a Value; an empty T);
            TypeError also for ``highlight`` or ``expand`` not a Value or a sequence of Values;
            ValueError also if ``gradients`` are not one node per target, for an unknown level, or a node
            of ``expand`` or a target not in G (as :func:`viz.explore`: no figure 6.10 for it).
        DomainError: B cannot be built: a local derivative does not exist at the graph's values.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, figure 6.10,
    Algorithms 6.2, 6.5 and 6.6.
    """
    if not isinstance(z, Value):
        raise TypeError(f"draw_side_by_side(z, wrt): z must be a Value, got {typed_repr(z)}")
    targets = as_values(wrt, "draw_side_by_side(z, wrt)", "wrt")
    if level not in ("scalars", "layers", "neurons"):
        raise ValueError(
            f"draw_side_by_side(level=...) must be 'scalars', 'layers' or 'neurons', got {short_repr(level)}"
        )
    highlight = as_values(highlight, "draw_side_by_side(highlight=...)", "highlight", empty=True)
    expand = as_values(expand, "draw_side_by_side(expand=...)", "expand", empty=True)
    G = Graph(z)
    for k, w in enumerate(targets):
        if w not in G.index:
            raise ValueError(f"draw_side_by_side(z, wrt): wrt[{k}] = {w!r} is not a node of the graph of z")
    if level == "scalars":
        check_size(len(G.nodes), max_nodes, "the forward graph G")
    if gradients is None:  # Algorithm 6.5, once, for the caller that did not run it
        result = micrograph.grad(z, targets)
    else:
        result = [gradients] if isinstance(gradients, Value) else list(gradients)
    if grad_table is None:  # Algorithm 6.2, once, for the caller that did not run it
        try:
            grad_table = G.backprop()
        except DomainError:  # a local derivative does not exist here: G drawn without numbers for grad
            grad_table = {}
    return figure_6_10(
        G, targets, result, grad_table, max_nodes=max_nodes, highlight=highlight, level=level, expand=expand
    )


def figure_6_10(
    G: Graph,
    targets: Sequence[Value],
    gradients: Sequence[Value],
    grad_table: Mapping[Value, float],
    *,
    max_nodes: int = DEFAULT_MAX_NODES,
    highlight: Iterable[Value] = (),
    level: str = "scalars",
    expand: Iterable[Value] = (),
) -> graphviz.Digraph:
    """Figure 6.10 drawn from what the caller computed: G, and B from the nodes ``grad`` returned. It runs
    no algorithm: the grad numbers are ``grad_table``'s, B's values its nodes' ``data``.

    Two clusters, ``cluster_G`` ("forward graph G") and ``cluster_B`` ("backward subgraph B"). B's nodes
    are named on from G's: u(n+1), u(n+2), ... in B's topological order, as Algorithm 6.6 inserts them.

    Legend (also drawn under the figure):

    * G, blue/green records: name, label, computation, ``data`` and ``grad``, the grad_table entry passed
      (no node's ``.grad`` is read or changed);
    * faded grey records: nodes of G outside G' (``G.prune(targets)``), which Algorithm 6.5 skips;
    * B, orange records: name, computation and ``data`` (the value the node computes); dark orange bold:
      the gradient nodes dz/du (grad_table entries), captioned ``∂z/∂w`` with the node's label or u-name;
    * solid arrows: argument edges (numbered where the operation is not commutative);
    * dashed orange arrows: from a node of G into a node of B that consumes its value.

    B is kept to the right of G by invisible edges (``style=invis``) from z to B's first nodes; they carry
    no meaning and are not drawn.

    Args:
        G: the forward graph of z.
        targets: the targets T of the ``grad(z, T)`` that built ``gradients``.
        gradients: the nodes that call returned, one per target.
        grad_table: {node: dz/dnode} shown as G's ``grad`` (Algorithm 6.2's); a node missing shows ``—``.
        max_nodes: the largest drawing, G and B together (300 by default).
        highlight: nodes of B (or G) drawn highlighted, e.g. the nodes one call of build_grad added.
        level: ``"scalars"``, or ``"layers"`` or ``"neurons"`` for a network built by ``micrograph.nn``: G
            and B grouped the same way, one box per layer (neuron) (see :func:`draw`; ``highlight`` and
            the faded nodes outside G' are then not drawn).
        expand: at level layers or neurons, nodes of G whose group is drawn as its scalars, in G and in B.

    Returns:
        A ``graphviz.Digraph`` (no file written).

    Raises:
        GraphTooLarge: if G, or G and B together, have more than ``max_nodes`` nodes (boxes, by groups).
        ValueError: ``gradients`` are not one node per target, an unknown level, or a node of ``expand``
            not in G.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, figure 6.10,
    Algorithms 6.5 and 6.6.
    """
    if level not in ("scalars", "layers", "neurons"):
        raise ValueError(f"figure_6_10(level=...) must be 'scalars', 'layers' or 'neurons', got {level!r}")
    if len(gradients) != len(targets) or not all(isinstance(d, Value) for d in gradients):
        raise ValueError(
            f"draw_side_by_side(gradients=...): one node per target, as grad(z, wrt) returns; got "
            f"{len(gradients)} for {len(targets)} target(s)"
        )
    z = G.output
    if level == "scalars":
        check_size(len(G.nodes), max_nodes, "the forward graph G")
    G_prime = G.prune(list(targets))
    marked = set(highlight)
    B_nodes = [v for v in topological_order(list(gradients)) if v not in G.index]
    if level == "scalars":
        check_size(len(G.nodes) + len(B_nodes), max_nodes, "the drawing of G and B")
    if level != "scalars":
        from viz.groups_dot import side_by_side_grouped  # it draws its scalars with this module's boxes

        grads = [grad_table.get(v) for v in G.nodes]
        return side_by_side_grouped(G, B_nodes, grads, level, expand=expand, max_nodes=max_nodes)

    names = node_names(G, B_nodes)  # G's nodes u1..un, B's u(n+1).. in B's order
    n = len(G.nodes)
    zname = clean(z.label, 12) or names[z]

    dot = _new_digraph("figure_6_10", None)
    dot.attr(compound="true", newrank="true")  # newrank: no "lost edge" for invisible edges to records
    with dot.subgraph(name="cluster_G") as g:
        g.attr(**style.CLUSTER_G)
        for i, v in enumerate(G.nodes):
            faded = v not in G_prime
            _node(g, names[v], _fields(names[v], v, names, v.data, grad_table.get(v)),
                  _node_attrs(v, faded=faded, highlighted=v in marked, output=i == n - 1))  # fmt: skip
    with dot.subgraph(name="cluster_B") as b:
        b.attr(**style.CLUSTER_B)
        for v in B_nodes:
            _node(b, names[v], _fields(names[v], v, names, v.data, None, show_grad=False,
                                       caption=_caption(v, zname, names)),
                  _node_attrs(v, highlighted=v in marked))  # fmt: skip
    for v in G.nodes[G.n_inputs :]:
        _edges(dot, v, names)
    in_G = G.index
    for v in B_nodes:
        _edges(dot, v, names, cross=[p for p in v.inputs if p in in_G])
    # Keep B to the right of G, as figure 6.10 draws it: an invisible edge from z to every node of B
    # that has no parent in B puts all of B in later ranks than G's output.
    B_set = set(B_nodes)
    for v in B_nodes:
        if not any(p in B_set for p in v.inputs):
            dot.edge(names[z], names[v], style="invis")
    dot.attr(label=_legend_html(), labelloc="b", labeljust="l")
    return dot


def draw_backward(
    G: Graph,
    B_nodes: Sequence[Value],
    names: Mapping[Value, str],
    *,
    width: int | None = None,
    cut: Collection[tuple[Value, Value]] = (),
) -> graphviz.Digraph:
    """The backward subgraph B alone, laid out apart from G (the explorer draws G and B as two pictures).

    Each node of B is an orange box (name or ``∂z/∂w`` caption, computation, ``data``); a node of G that
    B reads is named in the computation (``1 − u4 × u4``) and not drawn, so no edge crosses from G into
    B. Laying B out apart keeps Graphviz fast: drawn with G, every such edge spans many ranks, and dot's
    positioning (network simplex) took minutes at 100 nodes.

    Args:
        G: the forward graph B was built for.
        B_nodes: B's nodes in B's topological order (no node of G).
        names: every node's name (:func:`viz.words.node_names` of G with ``B_nodes``).
        width: each box's least width in points, or None.
        cut: edges (u(j), u(i)) of B drawn from a copy of u(j) beside u(i) (``u(j)~u(i)`` in the DOT
            source), as :func:`digraph`'s.

    Returns:
        A ``graphviz.Digraph`` (no file written).

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, figure 6.10.
    """
    z = G.output
    zname = clean(z.label, 12) or names[z]
    dot = _new_digraph("B", None)
    B_set = set(B_nodes)
    for v in B_nodes:
        _node(dot, names[v], _fields(names[v], v, names, v.data, None, show_grad=False,
                                     caption=_caption(v, zname, names)),
              _node_attrs(v), width)  # fmt: skip

    def head(v: Value) -> str:
        return _head(names[v], v, _caption(v, zname, names))

    for v in B_nodes:
        numbered = v.op is not None and v.op.arity == 2 and not v.op.commutative
        for k, p in enumerate(v.inputs):
            if p in B_set:
                tail = _tail(dot, v, k, names, cut, head)
                dot.edge(tail, names[v], **({"headlabel": str(k + 1)} if numbered else {}))
    return dot
