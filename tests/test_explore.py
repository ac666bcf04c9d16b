"""viz.explore without a browser: the page's data, the drawing's marks, the widget, ``micrograph explore``.

The browser side (the numbers the page shows, the frames, the clicks, the timing) is in
tests/test_explore_browser.py; the generated JavaScript against the engine in tests/test_compile_js.py.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 and 6.5.6.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from strategies import DAG_SETTINGS, dag_cases

import viz
from micrograph import Graph, Value, grad
from micrograph.errors import DomainError
from micrograph.graph import topological_order
from viz.explore import explorer_spec
from viz.text import formula, node_names

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")


def _example() -> tuple[Value, Value, Value]:
    x, y = Value(1.0, label="x"), Value(2.0, label="y")
    z = (x * y + x.exp()).tanh()
    return z, x, y


def _svg_nodes(svg: str) -> dict[str, list[str]]:
    """{title: [text of each text element]} for every node group of the SVG."""
    out = {}
    for m in re.finditer(r'<g [^>]*class="node"[^>]*>(.*?)</g>', svg, re.S):
        body = m.group(1)
        title = re.search(r"<title>(.*?)</title>", body, re.S)
        texts = re.findall(r"<text[^>]*>(.*?)</text>", body, re.S)
        out[title.group(1) if title else ""] = texts
    return out


def test_spec_marks_every_node_of_g_and_b_in_the_drawing() -> None:
    z, x, _ = _example()
    spec, program = explorer_spec(z, [x])
    g = Graph(z)
    n = len(g.nodes)
    assert spec["side_by_side"] and spec["n"] == n and spec["n_i"] == g.n_inputs
    svg = spec["svg"]
    assert svg.count("data-node=") == n
    # each G node's data and grad texts are marked, in the record's order
    for i in range(n):
        m = re.search(rf'<g [^>]*data-node="{i}"[^>]*>(.*?)</g>', svg, re.S)
        assert m, i
        marked = re.findall(r'<text[^>]*class="(mg-data|mg-grad)"[^>]*>(.*?)</text>', m.group(1))
        assert [c for c, _ in marked] == ["mg-data", "mg-grad"]
        assert marked[0][1].startswith("data ") and marked[1][1].startswith("grad ")
    # B's drawn nodes: named u(n+1).. as draw_side_by_side names them, and the slot holds that very node
    drawn = grad(z, [x])
    b_nodes = [v for v in topological_order(drawn) if v not in g.index]
    names = node_names(g) | {v: f"u{n + k}" for k, v in enumerate(b_nodes, 1)}
    texts = _svg_nodes(svg)
    assert svg.count("data-bnode=") == len(b_nodes)
    for k, v in enumerate(b_nodes, 1):
        assert formula(v, names) in texts[f"u{n + k}"][1].replace("&#215;", "×").replace("&#8722;", "−")
    assert "function forward_backward(x, u)" in program


@DAG_SETTINGS
@given(case=dag_cases())
def test_spec_of_random_dags_has_every_consumer_edge(case) -> None:  # type: ignore[no-untyped-def]
    z, _ = case.build_values()
    spec, _ = explorer_spec(z)
    g = Graph(z)
    assert [[(t["i"], t["k"]) for t in c] for c in spec["consumers"]] == g.consumer_edges
    assert len(spec["grad_slot"]) == len(g.nodes)
    assert spec["svg"].count("data-node=") == len(g.nodes)
    assert [f["node"] for f in spec["frames"] if f["algorithm"] == "6.1" and 7 not in f["lines"]] == list(
        range(len(g.nodes))
    )


def test_labels_are_escaped_in_the_page(tmp_path: Path) -> None:
    x = Value(0.5, label="</script><script>alert(1)</script>")
    z = (x * 3.0).tanh()
    z.label = "<b>z</b> & co"
    page = viz.explore(z).save(tmp_path / "p.html").read_text(encoding="utf-8")
    assert "<script>alert(1)" not in page and "<b>z</b>" not in page
    assert page.count("<script") == 2  # the JSON data block and the one script with a CSP hash
    assert "script-src 'sha256-" in page
    data = re.search(r'<script type="application/json" id="micrograph-spec">(.*?)</script>', page, re.S)
    assert data is not None
    rest = page.replace(data.group(1), "")
    assert "http:" not in rest and "https:" not in rest and "<link" not in rest  # no address to fetch
    spec = json.loads(data.group(1))
    assert spec["inputs"][0]["label"] == "</script><script>alert(1)</script>"
    assert spec["title"] == "<b>z</b> & co"


def test_save_refuses_to_overwrite_and_writes_atomically(tmp_path: Path) -> None:
    z, _, _ = _example()
    e = viz.explore(z)
    path = tmp_path / "z.html"
    path.write_text("mine", encoding="utf-8")
    with pytest.raises(FileExistsError):
        e.save(path, overwrite=False)
    assert path.read_text(encoding="utf-8") == "mine"
    e.save(path)
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    link = tmp_path / "link.html"
    link.symlink_to(tmp_path / "elsewhere.html")
    e.save(link)
    assert not (tmp_path / "elsewhere.html").exists()


def test_errors_name_the_argument() -> None:
    z, x, _ = _example()
    with pytest.raises(TypeError, match="z must be a Value"):
        viz.explore(1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="wrt is empty"):
        viz.explore(z, [])
    with pytest.raises(ValueError, match="not a node of the graph"):
        viz.explore(z, [Value(3.0)])
    with pytest.raises(TypeError, match=r"wrt\[0\] must be a Value"):
        viz.explore(z, [2.0])  # type: ignore[list-item]
    s = Value(0.0, label="s").sqrt()  # sqrt's derivative 0.5 / out does not exist at 0
    with pytest.raises(DomainError):
        viz.explore(s)
    assert x.data == 1.0


def test_widget_is_an_anywidget_with_the_generated_program() -> None:
    anywidget = pytest.importorskip("anywidget")
    z, x, _ = _example()
    e = viz.explore(z, wrt=x)
    w = e.widget
    assert isinstance(w, anywidget.AnyWidget)
    assert "function forward_backward(x, u)" in w._esm and "export default" in w._esm
    assert json.loads(w.spec)["n"] == len(Graph(z).nodes)
    assert "application/vnd.jupyter.widget-view+json" in e._repr_mimebundle_()[0]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "micrograph", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


def test_cli_explore_writes_one_page_and_refuses_bad_input(tmp_path: Path) -> None:
    done = _cli(
        "explore", "tanh(x*y + exp(x))", "--at", "x=1", "--at", "y=2", "--out", "z.html", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "wrote z.html (6 nodes, 14 frames)" in done.stdout
    page = (tmp_path / "z.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "forward_backward" in page
    bad = [
        (["explore", "tanh(x*y)", "--at", "x=1", "--at", "y=2", "--out", "z.html"], "without --force"),
        (["explore", "log(x)", "--at", "x=-1", "--out", "l.html"], "outside the domain"),
        (["explore", "x*y", "--at", "x=1", "--out", "m.html"], "no value for y"),
        (["explore", "x", "--at", "x=1", "--out", "m.svg"], ".html"),
        (["explore", "__import__('os')", "--out", "m.html"], "not allowed"),
        (["explore", "x*x", "--at", "x=1", "--wrt", "q", "--out", "m.html"], "no variable 'q'"),
    ]
    for args, message in bad:
        done = _cli(*args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr.splitlines()[0], (args, done.stderr)
        assert "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["z.html"]
    assert (tmp_path / "z.html").read_text(encoding="utf-8") == page
