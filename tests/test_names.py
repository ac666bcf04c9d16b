"""A node keeps one name in every view of the same graph (section 6.5.1's u(1)..u(n), figure 6.10's B).

The names are checked against their definition, written here independently of :func:`viz.words.node_names`:
G's nodes are u1..un in ``Graph(z)`` order, and the nodes of B that ``grad`` built are u(n+1), u(n+2), ...
in B's topological order (``topological_order(results)`` without G's nodes), as figure 6.10 is drawn.
Each view is read back as the user sees it: the rows of ``viz.text``, the boxes of the SVG Graphviz draws.
"""

from __future__ import annotations

import ast
import copy
import html
import pickle
import re
from pathlib import Path

import pytest
from hypothesis import given
from strategies import DAG_SETTINGS, dag_cases

import viz
from micrograph import Graph, Value, grad
from micrograph.order import topological_order
from viz.words import NamedTable, fmt, formula, node_names

SVG_NODE = re.compile(r'<g id="node\d+" class="node">\s*<title>([^<]*)</title>(.*?)</g>', re.S)
SVG_TEXT = re.compile(r"<text[^>]*>([^<]*)</text>")


def expected_names(z: Value, results: list[Value]) -> dict[Value, str]:
    """The definition: G's nodes u1..un, then B's nodes u(n+1).. in B's topological order, from the
    gradients (in T's order) that no other gradient is computed from."""
    G = Graph(z)
    names = {v: f"u{i}" for i, v in enumerate(G.nodes, 1)}
    B = [v for v in topological_order(results) if v not in G.index]
    used = {p for v in B for p in v.inputs}
    B = [v for v in topological_order([r for r in results if r not in used]) if v not in G.index]
    names.update({v: f"u{len(G.nodes) + k}" for k, v in enumerate(B, 1)})
    return names


def text_names(target: Value) -> list[str]:
    """The first column of ``viz.text``'s rows, in the graph's order (title, headings and rule skipped)."""
    return [line.split()[0] for line in viz.text(target, max_rows=10_000).splitlines()[3:]]


def svg_boxes(dot) -> list[tuple[str, list[str]]]:  # type: ignore[no-untyped-def]
    """(node id, the rows of text drawn in its box) for every node of the rendered SVG, in order."""
    svg = dot.pipe(format="svg").decode()
    return [
        (html.unescape(m.group(1)), [html.unescape(t) for t in SVG_TEXT.findall(m.group(2))])
        for m in SVG_NODE.finditer(svg)
    ]


def head_name(rows: list[str]) -> str:
    """The u-name in a box's first row: ``u3``, or ``x (u1)`` with a label or caption."""
    m = re.fullmatch(r"(?:.* \()?(u\d+)\)?", rows[0])
    assert m, rows
    return m.group(1)


def check_svg(dot, want: dict[Value, str]) -> None:  # type: ignore[no-untyped-def]
    """Every box of the SVG is the node ``want`` gives its name: same name, formula and value."""
    by_name = {name: v for v, name in want.items()}
    boxes = svg_boxes(dot)
    assert sorted(name for name, _ in boxes) == sorted(want.values())
    for name, rows in boxes:
        assert head_name(rows) == name
        v = by_name[name]
        assert rows[1] == formula(v, want), (name, rows)
        assert rows[2] == f"data {fmt(v.data)}", (name, rows)


def check_views(z: Value, xs: list[Value]) -> None:
    """All views of z's graph and of grad(z, xs) name every node as :func:`expected_names` does.

    figure 6.10 for all targets names the whole B; the view of one gradient names the part of B it is
    computed from, as the figure for that one target does.
    """
    side = viz.draw_side_by_side(z, xs, max_nodes=100_000)  # builds its own B, equal to this one:
    results = grad(z, xs)
    want = expected_names(z, results)
    check_svg(side, want)
    for d, x in zip(results, xs):
        # one gradient alone is named as figure 6.10 names it for its own target: B is what d is built from
        own = expected_names(z, [d])
        shown = Graph(d).nodes
        assert text_names(d) == [own[v] for v in shown]
        check_svg(viz.draw(d, max_nodes=100_000), {v: own[v] for v in shown})
        assert all(own[v] == want[v] for v in Graph(z).nodes if v in own)  # G's names never change
        if len(xs) > 1:  # ... and as draw_side_by_side(z, x) names it
            alone = viz.draw_side_by_side(z, x, max_nodes=100_000)
            named = {name: rows for name, rows in svg_boxes(alone)}
            for v in shown:
                assert named[own[v]][1] == formula(v, own), (own[v], named[own[v]])
    # G's own views are untouched: u1..un
    G = Graph(z)
    assert text_names(z) == [f"u{i}" for i in range(1, len(G.nodes) + 1)]
    # every gradient node is captioned as one grad_table entry, never a set
    for _, rows in svg_boxes(side):
        assert not any("{" in r for r in rows), rows
        if rows[0].startswith("∂"):
            assert re.fullmatch(r"∂[^/]+/∂[^,{}]+ \(u\d+\)", rows[0]), rows


@DAG_SETTINGS
@given(dag_cases())
def test_random_dags_one_name_per_node_in_text_draw_and_figure_6_10(case):
    z, xs = case.build_values()
    check_views(z, xs[:1])


@DAG_SETTINGS
@given(dag_cases())
@pytest.mark.slow
def test_random_dags_several_targets_named_as_their_figures(case):
    z, xs = case.build_values()
    check_views(z, xs)


def test_x_keeps_its_name_u1_in_the_view_of_its_derivative():
    x, y = Value(1.0, label="x"), Value(2.0, label="y")
    z = x * y + x.exp()
    z.label = "z"
    assert viz.text(z).splitlines()[3].split()[:2] == ["u1", "x"]
    d = grad(z, x)
    rows = {line.split()[1]: line.split()[0] for line in viz.text(d).splitlines()[3:] if " x " in line
            or " y " in line}  # fmt: skip
    assert rows == {"x": "u1", "y": "u2"}
    # the constant 1 = grad_table[z] is also the entry of both arguments of u3 + u4: captioned once, dz/dz
    assert "B: dz/dz" in viz.text(d)
    captions = [rows[0] for _, rows in svg_boxes(viz.draw_side_by_side(z, x)) if rows[0][0] == "∂"]
    assert captions == ["∂z/∂z (u6)", "∂z/∂x (u9)"]


def test_the_target_comes_first_in_a_shared_gradients_caption():
    x, y = Value(1.0, label="x"), Value(2.0, label="y")
    z = x + y  # dz/dz, dz/dx and dz/dy are one node: the constant 1
    z.label = "z"
    captions = [rows[0] for _, rows in svg_boxes(viz.draw_side_by_side(z, [y, x])) if rows[0][0] == "∂"]
    assert captions == ["∂z/∂y (u4)"]


def test_second_derivative_keeps_the_names_of_G_and_of_the_first_B():
    w = Value(0.5, label="w")
    z = (w * w).tanh() * w
    dz = grad(z, w)
    first = dict(zip(Graph(dz).nodes, text_names(dz)))
    d2 = grad(dz, w)
    second = dict(zip(Graph(d2).nodes, text_names(d2)))
    common = [v for v in first if v in second]
    assert len(common) > len(Graph(z).nodes)  # G's nodes and some of the first B's
    assert {v: second[v] for v in common} == {v: first[v] for v in common}
    assert len(set(second.values())) == len(second)  # no name twice
    n1 = max(int(s[1:]) for s in first.values())
    assert all(int(second[v][1:]) > n1 for v in second if v not in first)  # the second B numbered on


def test_hessian_vector_product_views_name_every_node_once():
    x, y = Value(0.3, label="x"), Value(-0.7, label="y")
    z = (x * y).tanh() + x * x
    from micrograph import hessian_vector_product

    hv = hessian_vector_product(z, [x, y], [1.0, 2.0])
    for d in hv:
        names = text_names(d)
        assert len(set(names)) == len(names)
        assert names[Graph(d).index[x]] == "u1" and names[Graph(d).index[y]] == "u2"


def test_grad_table_repr_and_draw_of_G_unchanged_by_grad():
    x = Value(2.0, label="x")
    z = (x * x).exp()
    before = viz.draw(z).source, repr(NamedTable(Graph(z), Graph(z).backprop().items()))
    grad(z, x)
    assert (viz.draw(z).source, repr(NamedTable(Graph(z), Graph(z).backprop().items()))) == before


def test_names_survive_copying_and_pickling_keeps_them_unique():
    x, y = Value(1.5, label="x"), Value(-0.5, label="y")
    z = (x * y).tanh() * x + y
    d = grad(z, x)
    shown = viz.text(d)
    assert viz.text(copy.deepcopy(d)) == shown
    assert viz.text(copy.deepcopy([z, d])[1]) == shown
    # a pickled inner node carries a copy of its ancestors; the names stay one per node and the numbers equal
    back = pickle.loads(pickle.dumps(d))
    names = text_names(back)
    assert len(set(names)) == len(names)
    assert [fmt(v.data) for v in Graph(back).nodes] == [fmt(v.data) for v in Graph(d).nodes]


@pytest.mark.parametrize("depth", [30_000])
def test_names_of_a_deep_derivative_without_recursion(depth):
    w = Value(0.1, label="w")
    z = w
    for _ in range(depth):
        z = (z * 0.999).tanh()
    d = grad(z, w)
    names = node_names(Graph(d))
    G = Graph(z)
    assert names[w] == "u1" and names[z] == f"u{len(G.nodes)}"
    assert len(set(names.values())) == len(names)
    assert max(int(s[1:]) for s in names.values()) <= len(G.nodes) + len(Graph(d).nodes)


# Where a name u1, u2, ... is written by hand instead of by graph.node_name, the one spelling, and why.
_HAND_WRITTEN = {
    "micrograph/graph.py": "node_name itself",
    "lessons/exercises/given.py": "G.name on the student's side of the wall, which cannot import graph.py",
}


def test_every_u_name_is_spelled_by_node_name() -> None:
    # an f-string part ending in a lone "u" before a value, as f"u{j + 1}" or f"∂u{i}", writes a name
    root = Path(__file__).resolve().parent.parent
    found = set()
    for package in ("micrograph", "viz", "lessons"):
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.JoinedStr):
                    for a, b in zip(node.values, node.values[1:]):
                        if (
                            isinstance(a, ast.Constant)
                            and isinstance(b, ast.FormattedValue)
                            and re.search(r"(^|[^\\\w])u$", a.value)
                        ):
                            found.add(relative)
                            assert relative in _HAND_WRITTEN, f"{relative}:{node.lineno}: {ast.unparse(node)}"
    assert found == set(_HAND_WRITTEN)


def test_the_ladders_levels_are_not_labelled_as_the_books_nodes() -> None:
    from micrograph.families import ladder

    z, _ = ladder(4)
    labels = [v.label for v in Graph(z).nodes]
    assert not [x for x in labels if re.fullmatch(r"u\d+", x)], labels
    assert "level 3" in labels and labels[-1] == "z"
