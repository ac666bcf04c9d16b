"""The explorer's layout time for five families of graphs of 400-500 nodes in G.

Run alone (``python benchmarks/layout.py``) or from benchmarks/explorer.py's section (``make bench``). Each
family is a graph a student may explore, at the size where dot's time used to show:

(a) inputs feeding about a hundred consumers each: ``tanh(...tanh(tanh(x*y + x*1)*y + x*2)...*y + x*100)``,
    parsed from the text as ``micrograph explore`` parses it;
(b) a shared subexpression feeding a hundred consumers: ``s = tanh(x*y + x)``, then ``e = tanh(e*s + c)``
    a hundred times;
(c) a long chain: ``u = tanh(u*0.9 + 0.1)``, 90 steps;
(d) a wide sum: ``w1*x1 + ... + w110*x110``;
(e) an MLP: ``micrograph.nn.MLP(2, [4, 4, 1])`` on a batch of 4 two-moons points, the cost
    ``(1/4) sum hinge + 1e-4 l2(weights)``.

Measured for each: the seconds of Graphviz laying out G, then B, each alone (``viz.explore_layout``'s own
drawings, far edges and copies included, as the page gets them), and the seconds of
``viz.explore(z, max_nodes=1000).save(path)``, the page written (G and B's two ``dot`` runs at once, and the
frames, B, the generated JavaScript). Best of ``repeats``. For (a) also ``micrograph explore`` as typed, a
fresh process.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1 (G), 6.5.6 (B).
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
for _where in (ROOT, ROOT / "benchmarks"):  # the checkout's packages; measure.py, beside this file
    if str(_where) not in sys.path:
        sys.path.insert(0, str(_where))

from measure import command_seconds  # noqa: E402  (benchmarks/measure.py, beside this file)

from micrograph.engine import Value, sum_nodes  # noqa: E402  (the checkout's micrograph, ROOT first)

PAGE_GOAL = 3.0
"""The target: every family's page written in at most this many seconds on a quiet machine."""


def nested_tanh_text(depth: int = 100) -> str:
    """``tanh(...tanh(tanh(x*y + x*1)*y + x*2)...*y + x*depth)``: x and y each feed ``depth`` consumers."""
    text = "tanh(x*y + x*1)"
    for k in range(2, depth + 1):
        text = f"tanh({text}*y + x*{k})"
    return text


def inputs_fan_out(depth: int = 100) -> Value:
    """Family (a): the nested tanh, parsed as ``micrograph explore`` parses it (x = 0.5, y = 0.3)."""
    from micrograph.expr import build

    return build(nested_tanh_text(depth), {"x": 0.5, "y": 0.3})


def shared_fan_out(depth: int = 100) -> Value:
    """Family (b): ``s = tanh(x*y + x)`` read by every level of ``e = tanh(e*s + 0.01 k)``."""
    x, y = Value(0.5, label="x"), Value(0.3, label="y")
    s = (x * y + x).tanh()
    s.label = "s"
    e = s
    for k in range(1, depth + 1):
        e = (e * s + 0.01 * k).tanh()
    return e


def long_chain(steps: int = 90) -> Value:
    """Family (c): ``u = tanh(u*0.9 + 0.1)``, ``steps`` times from u = x."""
    u = Value(0.5, label="x")
    for _ in range(steps):
        u = (u * 0.9 + 0.1).tanh()
    return u


def wide_sum(terms: int = 110) -> Value:
    """Family (d): ``w1*x1 + ... + wk*xk``, every w and x a variable."""
    ws = [Value(0.5, label=f"w{k}") for k in range(1, terms + 1)]
    xs = [Value(0.1 * k, label=f"x{k}") for k in range(1, terms + 1)]
    return sum_nodes([w * x for w, x in zip(ws, xs, strict=True)])


def mlp_cost(batch: int = 4) -> Value:
    """Family (e): micrograd's demo cost on a small batch: ``MLP(2, [4, 4, 1])``, tanh, hinge, L2 1e-4."""
    from micrograph import datasets, nn

    model = nn.MLP(2, [4, 4, 1], activation="tanh", seed=0)
    X, Y = datasets.moons(batch, seed=0)
    data = sum_nodes([nn.hinge(model(x), y) for x, y in zip(X, Y, strict=True)]) * (1.0 / batch)
    return data + 1e-4 * nn.l2(nn.weights(model))


class Family(NamedTuple):
    key: str
    title: str
    build: Callable[[], Value]


FAMILIES = [
    Family("a", "inputs feeding 100 consumers (tanh nested 100 deep)", inputs_fan_out),
    Family("b", "a shared subexpression feeding 100 consumers", shared_fan_out),
    Family("c", "a long chain (tanh(u*0.9 + 0.1), 90 steps)", long_chain),
    Family("d", "a wide sum (110 products w*x)", wide_sum),
    Family("e", "an MLP(2, [4, 4, 1]) on 4 points, cost with L2", mlp_cost),
]
"""The five families, (a) to (e)."""


def measure(family: Family, repeats: int = 2) -> dict[str, Any]:
    """G's and B's sizes and copies, and the best seconds of laying out G, B, and writing the page."""
    import viz
    from micrograph.graph import Graph
    from micrograph.symbolic import grad
    from viz.explore import _b_nodes
    from viz.explore_layout import drawing_b, drawing_g
    from viz.render import pipe_svg
    from viz.words import node_names

    z = family.build()
    graph = Graph(z)
    B = _b_nodes(graph, grad(z, graph.nodes), list(graph.variables))
    names = node_names(graph, B)
    out: dict[str, Any] = {"g": len(graph.nodes), "b": len(B), "g_s": float("inf"), "b_s": float("inf"),
                           "page_s": float("inf")}  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeats):
            t0 = time.perf_counter()
            dot_g, cut_g = drawing_g(graph)
            pipe_svg(dot_g)
            t1 = time.perf_counter()
            dot_b, cut_b = drawing_b(graph, B, names)
            pipe_svg(dot_b)
            t2 = time.perf_counter()
            viz.explore(z, max_nodes=1000).save(Path(tmp) / "page.html")
            t3 = time.perf_counter()
            out.update(g_s=min(out["g_s"], t1 - t0), b_s=min(out["b_s"], t2 - t1),
                       page_s=min(out["page_s"], t3 - t2))  # fmt: skip
    out.update(g_copies=len(cut_g), b_copies=len(cut_b))
    return out


def cli_seconds(depth: int = 100) -> float:
    """Seconds of ``micrograph explore`` on family (a) as typed (a fresh process, --max-nodes 1000)."""
    argv = ["explore", nested_tanh_text(depth), "--at", "x=0.5", "--at", "y=0.3", "--max-nodes", "1000"]
    return command_seconds(argv, "page.html")


def rows(quick: bool = False) -> list[tuple[str, str, str, bool]]:
    """(measure, this run, target, met) per family, then ``micrograph explore`` on family (a)."""
    out = []
    for family in FAMILIES:
        m = measure(family, repeats=1 if quick else 2)
        what = (f"layout, family ({family.key}) {family.title}: G {m['g']} nodes ({m['g_copies']} copies), "
                f"B {m['b']} ({m['b_copies']})")  # fmt: skip
        figures = f"G {m['g_s']:.2f} s, B {m['b_s']:.2f} s, page {m['page_s']:.2f} s"
        met = max(m["g_s"], m["b_s"], m["page_s"]) <= PAGE_GOAL
        out.append((what, figures, f"<= {PAGE_GOAL:.0f} s each", met))
    seconds = cli_seconds()
    out.append(("micrograph explore of family (a), a fresh process", f"{seconds:.2f} s",
                f"<= {PAGE_GOAL:.0f} s", seconds <= PAGE_GOAL))  # fmt: skip
    return out


if __name__ == "__main__":
    for row in rows(quick="--quick" in sys.argv):
        print(f"{row[0]:<100}  {row[1]:>36}  {row[2]:>12}  {'met' if row[3] else 'NOT met'}")
