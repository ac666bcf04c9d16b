"""viz.draw and viz.draw_side_by_side: assertions on the DOT source (and on the SVG Graphviz makes of it).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1 and figure 6.10.
"""

from __future__ import annotations

import html
import re
import shutil
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given
from strategies import DAG_SETTINGS, dag_cases

import viz
from micrograph import Graph, Value, nn
from micrograph.graph import node_name
from viz import style
from viz.boxes import TITLE_COLUMNS
from viz.render import pipe_svg

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")

NODE_LINE = re.compile(r"^\s*(u\d+) \[label=<(<TABLE (.*?)>.*</TABLE>)>(.*)\]$", re.M)
CELL = re.compile(r"<FONT[^>]*>(.*?)</FONT>")
EDGE_LINE = re.compile(r"^\s*(u\d+) -> (u\d+)(?: \[(.*)\])?$", re.M)


def nodes(source: str) -> dict[str, tuple[str, str]]:
    """{name: (its box's rows joined by "|", the box's attributes)} of every node statement.

    A node is drawn as an HTML-like table, one row per field; the rows are read back as text.
    """
    return {
        m.group(1): ("|".join(html.unescape(c) for c in CELL.findall(m.group(2))), m.group(3) + m.group(4))
        for m in NODE_LINE.finditer(source)
    }


def edges(source: str) -> list[tuple[str, str, str]]:
    """(tail, head, attributes) of every edge statement, in order."""
    found = [(m.group(1), m.group(2), m.group(3) or "") for m in EDGE_LINE.finditer(source)]
    return [e for e in found if "style=invis" not in e[2]]


def invisible_edges(source: str) -> list[tuple[str, str]]:
    """The layout-only edges (style=invis) that keep B to the right of G."""
    found = EDGE_LINE.finditer(source)
    return [(m.group(1), m.group(2)) for m in found if "style=invis" in (m.group(3) or "")]


def chain3() -> tuple[Value, Value]:
    w = Value(0.5, label="w")
    z = w.tanh().tanh().tanh()
    z.label = "z"
    return z, w


def svg_texts(dot: object) -> list[str]:
    root = ET.fromstring(pipe_svg(dot))  # type: ignore[arg-type]
    return ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]


# --- draw ----------------------------------------------------------------------------------------


def test_draw_returns_digraph_one_record_per_node_in_graph_order():
    z, _ = chain3()
    dot = viz.draw(z)
    assert dot.__class__.__name__ == "Digraph"
    found = nodes(dot.source)
    assert list(found) == ["u1", "u2", "u3", "u4"]
    assert "rankdir=LR" in dot.source
    assert "shape=plain" in dot.source and "record" not in dot.source  # HTML-like boxes, never records
    label = found["u2"][0]
    assert "tanh(u1)" in label and "data 0.4621" in label and "grad 0.000" in label
    assert found["u1"][0].startswith("w (u1)|input|data 0.5000")


def test_same_expression_gives_same_source():
    assert viz.draw(chain3()[0]).source == viz.draw(chain3()[0]).source
    a, b = Value(2.0, label="a"), Value(-3.0)
    z1 = (a * b + a).tanh()
    a2, b2 = Value(2.0, label="a"), Value(-3.0)
    z2 = (a2 * b2 + a2).tanh()
    assert viz.draw(z1).source == viz.draw(z2).source


def test_edge_count_and_repeated_argument():
    a = Value(3.0, label="a")
    z = a * a
    src = viz.draw(z).source
    es = edges(src)
    assert len(es) == Graph(z).num_edges == 2
    assert [(t, h) for t, h, _ in es] == [("u1", "u2"), ("u1", "u2")]
    assert "label=" not in es[0][2]  # × is commutative: no argument numbers


@pytest.mark.parametrize(
    "make, symbol",
    [(lambda a, b: a - b, "−"), (lambda a, b: a / b, "÷"), (lambda a, b: a**b, "^")],
)
def test_non_commutative_edges_carry_argument_position(make, symbol):
    a, b = Value(2.0, label="a"), Value(3.0, label="b")
    for first, second in [(a, b), (b, a)]:
        z = make(first, second)
        g = Graph(z)
        src = viz.draw(z).source
        es = {(t, h): attrs for t, h, attrs in edges(src)}
        zname = g.name(z)
        assert "headlabel=1" in es[(g.name(first), zname)]
        assert "headlabel=2" in es[(g.name(second), zname)]
        assert f"{g.name(first)} {symbol} {g.name(second)}" in nodes(src)[zname][0]


def test_commutative_edges_unnumbered():
    a, b = Value(2.0), Value(3.0)
    src = viz.draw(a + b).source
    assert all("label=" not in attrs for _, _, attrs in edges(src))


@needs_dot
def test_a_long_title_is_wrapped_at_the_drawings_left_and_a_cluster_stays_centred() -> None:
    model = nn.MLP(3, [2, 2], activation="tanh", seed=2)
    cost = nn.forward_minibatch(model, [[0.5, -1.0, 2.0]], [1], l2=0.1)
    title = "an MLP drawn by neurons, one of them opened, with a title longer than a narrow screen shows"
    unit = cost.examples[0].h[1][1]
    svg = pipe_svg(viz.draw(cost.J, level="neurons", expand=[unit], max_nodes=1000, title=title))
    lines = re.findall(r'<text text-anchor="start" x="([-\d.]+)"[^>]*>([^<]*)</text>', svg)[:2]
    assert " ".join(t for _, t in lines) == title
    assert all(len(t) <= TITLE_COLUMNS for _, t in lines) and lines[0][0] == lines[1][0]  # from one x
    assert float(lines[0][0]) < 20  # at the drawing's left, where a phone's first view starts
    cluster = re.search(r'<g id="clust1" class="cluster">.*?</g>', svg, flags=re.S)
    assert cluster and 'text-anchor="middle"' in cluster.group(0)  # the opened neuron's title stays centred


def test_grad_table_and_highlight():
    z, w = chain3()
    table = Graph(z).backprop()
    dot = viz.draw(z, grad_table=table, highlight=[w], title="three tanh")
    found = nodes(dot.source)
    assert "grad 0.5339" in found["u1"][0]  # dz/dw = prod (1 - tanh^2)
    assert "grad 1.000" in found["u4"][0]
    assert style.HIGHLIGHT["fillcolor"] in found["u1"][1]
    assert style.HIGHLIGHT["fillcolor"] not in found["u2"][1]
    assert 'label="three tanh\\l" labeljust=l' in dot.source  # one line, at the drawing's left
    partial = viz.draw(z, grad_table={z: 1.0})
    assert "grad —" in nodes(partial.source)["u1"][0]
    assert w.grad == 0.0  # drawing reads, never writes


def test_labels_escaped_in_the_boxes():
    a = Value(1.0, label="{a|b}")
    b = Value(2.0, label="<script>alert(1)</script>")
    c = Value(3.0, label='q"uo\\te')
    d = Value(4.0, label="&lt;b&gt; &amp; &#65;")
    z = a * b + c * d
    src = viz.draw(z).source
    assert "<script>" not in src and "&lt;script&gt;" in src  # HTML-escaped in the DOT source
    found = nodes(src)  # read back (unescaped): exactly the text typed
    assert "{a|b} (u1)" in found["u1"][0]
    assert "<script>alert(1)</script> (u2)" in found["u2"][0]
    assert 'q"uo\\te (u3)' in found["u3"][0]
    assert "&lt;b&gt; &amp; &#65; (u4)" in found["u4"][0]
    for name in ("u1", "u2", "u3", "u4"):  # each box keeps its 4 rows: no user text split one
        assert src.split(f"\t{name} [", 1)[1].split("\n", 1)[0].count("<TR>") == 4


@needs_dot
def test_escaped_labels_render_as_typed_text():
    a = Value(1.0, label="{a|b}")
    b = Value(2.0, label="<script>alert(1)</script>")
    c = Value(3.0, label='q"uo\\te')
    texts = svg_texts(viz.draw(a * b + c, title="<b>title</b>"))
    assert "{a|b} (u1)" in texts
    assert "<script>alert(1)</script> (u2)" in texts
    assert 'q"uo\\te (u3)' in texts
    assert "<b>title</b>" in texts
    root = ET.fromstring(pipe_svg(viz.draw(a * b)))
    assert not [e for e in root.iter() if e.tag.endswith("script")]


def test_control_characters_shown_not_obeyed():
    a = Value(1.0, label="x\ny\x1b[31m")
    label = nodes(viz.draw(a * 2).source)["u1"][0]
    assert "\n" not in label and "\x1b" not in label
    assert "x\\x0ay\\x1b[31m" in label


def test_constants_and_output_styled():
    x = Value(1.5, label="x")
    z = 2 * x
    found = nodes(viz.draw(z).source)
    assert "constant" in found["u1"][0] and style.CONSTANT["fillcolor"] in found["u1"][1]
    assert style.VARIABLE["fillcolor"] in found["u2"][1]
    assert f'BORDER="{style.OUTPUT_PENWIDTH}"' in found["u3"][1]


def test_draw_accepts_graph_and_rejects_other_things():
    z, _ = chain3()
    assert viz.draw(Graph(z)).source == viz.draw(z).source
    with pytest.raises(TypeError, match="Value or a Graph"):
        viz.draw(3.0)  # type: ignore[arg-type]


# --- big graphs ------------------------------------------------------------------------------------


def long_chain(n: int) -> Value:
    x = Value(0.1, label="x")
    for _ in range(n - 1):
        x = x.sin()
    return x


def test_graph_too_large_says_size_and_limit():
    z = long_chain(400)
    with pytest.raises(viz.GraphTooLarge) as e:
        viz.draw(z)
    assert isinstance(e.value, ValueError)
    assert "400 nodes" in str(e.value) and "max_nodes=300" in str(e.value)
    assert len(nodes(viz.draw(z, max_nodes=400).source)) == 400
    with pytest.raises(viz.GraphTooLarge, match=r"50 nodes.*max_nodes=10"):
        viz.draw(long_chain(50), max_nodes=10)
    with pytest.raises(ValueError, match="positive"):
        viz.draw(long_chain(3), max_nodes=0)


def test_graph_too_large_is_said_in_the_words_of_each_place():
    refused = viz.GraphTooLarge(597, 300)
    assert refused.text() == str(refused)  # the library's own words: its max_nodes argument, viz.text
    assert "pass max_nodes=597 (or more)" in str(refused) and "viz.text()" in str(refused)
    command = refused.text("command", most=100_000)
    assert command.startswith(
        "the graph has 597 nodes, more than --max-nodes 300: too large to draw readably"
    )
    assert command.endswith("Draw a smaller expression, or pass --max-nodes 597 (or more) to draw it anyway.")
    assert "max_nodes=" not in command and "viz.text" not in command
    beyond = viz.GraphTooLarge(200_000, 300).text("command", most=100_000)
    assert beyond.endswith("Draw a smaller expression (--max-nodes is at most 100000).")
    assert viz.GraphTooLarge(1197, 300, "the drawing of G and B").text("page") == (
        "the drawing of G and B has 1197 nodes, more than the 300 this page draws: draw a smaller expression."
    )
    with pytest.raises(ValueError, match="place must be python, command or page, got 'web'"):
        refused.text("web")


@pytest.mark.slow
def test_huge_graph_refused_quickly_without_graphviz():
    # a 200 000-node chain: refused before any DOT is built (this would take Graphviz hours)
    with pytest.raises(viz.GraphTooLarge, match="200000 nodes"):
        viz.draw(long_chain(200_000))


def test_side_by_side_limit_counts_g_and_b():
    z = long_chain(60)  # G: 60 nodes; B adds more than 100
    with pytest.raises(viz.GraphTooLarge, match="the drawing of G and B has"):
        viz.draw_side_by_side(z, Graph(z).nodes[0], max_nodes=150)
    with pytest.raises(viz.GraphTooLarge, match="forward graph G has 60 nodes"):
        viz.draw_side_by_side(z, Graph(z).nodes[0], max_nodes=50)


# --- figure 6.10 -----------------------------------------------------------------------------------


def clusters(source: str) -> dict[str, list[str]]:
    """{cluster name: node names declared inside it}."""
    out: dict[str, list[str]] = {}
    for m in re.finditer(r"subgraph (\w+) \{(.*?)\n\t\}", source, re.S):
        out[m.group(1)] = [n.group(1) for n in NODE_LINE.finditer(m.group(2))]
    return out


def test_side_by_side_clusters_cross_edges_and_captions():
    z, w = chain3()
    before = [(v.data, v.grad) for v in Graph(z).nodes]
    dot = viz.draw_side_by_side(z, w)
    src = dot.source
    cl = clusters(src)
    assert set(cl) == {"cluster_G", "cluster_B"}
    assert 'label="forward graph G"' in src and 'label="backward subgraph B"' in src
    assert cl["cluster_G"] == ["u1", "u2", "u3", "u4"]
    b_names = cl["cluster_B"]
    assert b_names == [node_name(k) for k in range(5, 5 + len(b_names))]
    found = nodes(src)
    # gradient nodes are captioned with what they are
    captions = [found[n][0] for n in b_names if "∂z/∂" in found[n][0]]
    assert [c.strip('"').split(" (")[0] for c in captions] == ["∂z/∂u3", "∂z/∂u2", "∂z/∂w"]
    # figure 6.10's B: one node f'(.) per step, reading y, x, w as the book's do, and one product per step
    assert sorted(found[n][0].split("|")[1] for n in b_names) == sorted(
        ["tanh′(u3)", "tanh′(u2)", "tanh′(u1)", "u5 × u6", "u7 × u8"]
    )
    assert all("grad " not in found[n][0] for n in b_names)
    # G shows Algorithm 6.2's grad_table without touching .grad
    assert "grad 0.5339" in found["u1"][0]
    assert [(v.data, v.grad) for v in Graph(z).nodes] == before
    # every edge from a G node into a B node is dashed, and only those
    g_set, b_set = set(cl["cluster_G"]), set(b_names)
    es = edges(src)
    cross = [e for e in es if e[0] in g_set and e[1] in b_set]
    assert cross and all("style=dashed" in attrs for _, _, attrs in cross)
    assert all("style=dashed" not in attrs for t, h, attrs in es if (t, h, attrs) not in cross)
    assert not [e for e in es if e[0] in b_set and e[1] in g_set]  # B never feeds G
    # tanh's derivative tanh′ reads tanh's argument: one dashed edge from each of y, x, w, none from z
    assert sorted(t for t, _, _ in cross) == ["u1", "u2", "u3"]
    # layout: invisible edges from z to each node of B without a parent in B (so B sits right of G)
    heads_in_b = {h for t, h, _ in es if t in b_set}
    assert invisible_edges(src) == [("u4", n) for n in b_names if n not in heads_in_b]


def test_side_by_side_edge_count_equals_both_graphs():
    a, b = Value(2.0, label="a"), Value(-1.5, label="b")
    z = (a * b - b / a).tanh()
    dot = viz.draw_side_by_side(z, [a, b])
    import micrograph

    grads = micrograph.grad(z, [a, b])
    # the union of G and (a fresh) B has as many edges as the drawing: one per argument
    from micrograph.order import topological_order

    union = topological_order([z, *grads])
    assert len(edges(dot.source)) == sum(len(v.inputs) for v in union)
    assert len(nodes(dot.source)) == len(union)


def test_nodes_outside_g_prime_are_faded():
    x, y = Value(1.0, label="x"), Value(2.0, label="y")
    h = y.exp()  # does not depend on x
    z = x * h + 3
    G = Graph(z)
    G_prime = G.prune([x])
    dot = viz.draw_side_by_side(z, x)
    found = nodes(dot.source)
    for v in G.nodes:
        faded = style.FADED["fillcolor"] in found[G.name(v)][1]
        assert faded == (v not in G_prime), G.name(v)
    assert style.FADED["fillcolor"] in found[G.name(h)][1]
    assert style.FADED["fillcolor"] not in found[G.name(z)][1]


def test_side_by_side_legend_and_several_targets():
    a, b = Value(0.3, label="a"), Value(0.7, label="b")
    z = a * b
    src = viz.draw_side_by_side(z, [a, b]).source
    assert "∂z/∂a" not in src  # z has no label here: it is named u3
    assert "∂u3/∂a" in src and "∂u3/∂b" in src
    for text, _ in style.LEGEND:
        assert text.replace("'", "&#x27;") in src


@needs_dot
def test_side_by_side_svg_shows_both_clusters():
    z, w = chain3()
    texts = svg_texts(viz.draw_side_by_side(z, w))
    assert "forward graph G" in texts and "backward subgraph B" in texts
    assert "∂z/∂w (u9)" in texts  # figure 6.10: G has u1..u4, B u5..u9


def test_catalogue_draws():
    catalogue = pytest.importorskip("catalogue")
    for case in catalogue.CATALOGUE:
        z, xs = case.build_values()
        g = Graph(z)
        src = viz.draw(z, max_nodes=10_000).source
        assert len(nodes(src)) == len(g.nodes), case
        assert len(edges(src)) == g.num_edges, case
        side = viz.draw_side_by_side(z, xs, max_nodes=100_000).source
        assert set(clusters(side)) == {"cluster_G", "cluster_B"}


# --- random DAGs ---------------------------------------------------------------------------------------


@DAG_SETTINGS
@given(dag_cases())
def test_random_dags_drawn_completely_and_deterministically(case):
    z, xs = case.build_values()
    g = Graph(z)
    src = viz.draw(z).source
    assert list(nodes(src)) == [g.name(v) for v in g.nodes]
    es = edges(src)
    assert len(es) == g.num_edges
    # every edge is Pa(u(i)) -> u(i), in argument order, numbered iff the op is not commutative
    expected = []
    for v in g.nodes:
        numbered = v.op is not None and v.op.arity == 2 and not v.op.commutative
        for k, p in enumerate(v.inputs):
            expected.append((g.name(p), g.name(v), f"label={k + 1}" if numbered else ""))
    assert [(t, h, (re.search(r"label=\d", a) or [""])[0]) for t, h, a in es] == expected
    z2, _ = case.build_values()
    assert viz.draw(z2).source == src
    side = viz.draw_side_by_side(z, xs, max_nodes=10_000).source
    cl = clusters(side)
    assert cl["cluster_G"] == list(nodes(src))
    in_g = set(cl["cluster_G"])
    for t, h, attrs in edges(side):
        assert ("style=dashed" in attrs) == (t in in_g and h not in in_g)
    assert text_lines(z) == len(g) + 3  # title, headings, rule


def text_lines(z: Value) -> int:
    return len(viz.text(z).splitlines())


def test_side_by_side_draws_what_the_caller_computed_and_runs_no_algorithm(monkeypatch):
    """Figure 6.10 from the caller's B and grad_table: grad and Algorithm 6.2 are not run for the picture,
    and G's boxes show the numbers passed (here deliberately not dz/du, so they can only come from it)."""
    import importlib

    import micrograph
    from viz.dot import figure_6_10

    z, w = chain3()
    G = Graph(z)
    dz = micrograph.grad(z, w)
    table = {v: 100.0 + k for k, v in enumerate(G.nodes)}
    runs: list[str] = []
    engine = importlib.import_module("micrograph.backprop")
    for module, name in ((engine, "run_algorithm_6_2"), (micrograph, "grad")):
        original = getattr(module, name)
        monkeypatch.setattr(
            module, name, lambda *a, _o=original, _n=name, **k: runs.append(_n) or _o(*a, **k)
        )
    found = nodes(viz.draw_side_by_side(z, w, gradients=dz, grad_table=table).source)
    assert runs == []
    assert [found[f"u{k + 1}"][0].split("grad ")[1].split("|")[0].strip('"') for k in range(4)] == [
        "100.0",
        "101.0",
        "102.0",
        "103.0",
    ]
    assert nodes(figure_6_10(G, [w], [dz], {}).source)["u1"][0].count("grad —") == 1  # missing: —
    assert runs == []
    viz.draw_side_by_side(z, w)  # the convenience computes what it is not given, once each
    assert sorted(runs) == ["grad", "run_algorithm_6_2"]
