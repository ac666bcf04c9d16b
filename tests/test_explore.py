"""viz.explore without a browser: the page's data, the drawing's marks, the widget, ``micrograph explore``.

The browser side (the numbers the page shows, the frames, the clicks, the timing) is in
tests/test_explore_browser.py; the generated JavaScript against the engine in tests/test_compile_js.py.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 and 6.5.6.
"""

from __future__ import annotations

import importlib
import json
import math
import re
import shutil
import sys
from pathlib import Path

import pytest
from conftest import run_micrograph
from hypothesis import given
from strategies import DAG_SETTINGS, dag_cases

import viz
from micrograph import Graph, Value
from micrograph.errors import DomainError
from micrograph.order import topological_order
from viz.explore_page import EXPLORER_MODULES, explorer_script
from viz.frames import frames
from viz.narration import HOLE, Holes
from viz.pictures import PICTURE_MODULES
from viz.words import fmt, formula, node_names

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
    explorer = viz.explore(z, [x])
    spec, program = explorer.spec, explorer.program
    g = Graph(z)
    n = len(g.nodes)
    assert spec["n"] == n and spec["n_i"] == g.n_inputs
    svg = spec["svg_g"]
    assert svg.count("data-node=") == n and "data-bnode=" not in svg
    # each G node's data and grad texts are marked, in the box's order
    for i in range(n):
        m = re.search(rf'<g [^>]*data-node="{i}"[^>]*>(.*?)</g>', svg, re.S)
        assert m, i
        marked = re.findall(r'<text[^>]*class="(mg-data|mg-grad)"[^>]*>(.*?)</text>', m.group(1))
        assert [c for c, _ in marked] == ["mg-data", "mg-grad"]
        assert marked[0][1].startswith("data ") and marked[1][1].startswith("grad ")
    # B, drawn apart: every node marked with its position in spec["b"], whose slot holds that very node
    texts = _svg_nodes(spec["svg_b"])
    assert spec["svg_b"].count("data-bnode=") == len(spec["b"]) == spec["b_size"] == len(texts) > 0
    assert "function forward_backward(x, u)" in program


def test_b_is_built_once_and_its_drawn_nodes_are_the_slots_read(monkeypatch: pytest.MonkeyPatch) -> None:
    ve = importlib.import_module("viz.explore")
    calls = []
    real = ve.grad

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(ve, "grad", counting)
    z, x, y = _example()
    spec = viz.explore(z, [x, y]).spec
    assert len(calls) == 1  # one B: the grad_table of every node, and the drawing of the targets' part
    table = real(z, Graph(z).nodes)
    g = Graph(z)
    b_nodes = [v for v in topological_order([table[g.index[x]], table[g.index[y]]]) if v not in g.index]
    names = node_names(g, b_nodes)
    texts = _svg_nodes(spec["svg_b"])
    for v in b_nodes:
        assert formula(v, names) in texts[names[v]][1].replace("&#215;", "×").replace("&#8722;", "−")
    # the slot of each drawn node of B holds the value of that node
    assert len({b["slot"] for b in spec["b"]}) == len(b_nodes)


def test_each_frame_text_is_written_once_with_holes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The explorer writes a frame's sentence once, with holes for the page: never first with numbers."""
    ve = importlib.import_module("viz.explore")
    vf = importlib.import_module("viz.frames")
    written: list[object] = []
    real = ve.frame_text

    def counting(frame, graph, names, numbers):  # type: ignore[no-untyped-def]
        written.append(numbers)
        return real(frame, graph, names, numbers)

    def refuse(*args: object) -> None:
        raise AssertionError("the explorer formatted the frames' numbers in Python")

    monkeypatch.setattr(ve, "frame_text", counting)
    monkeypatch.setattr(vf, "Numbers", refuse)
    z, x, y = _example()
    spec = viz.explore(z, [x, y]).spec
    assert len(written) == len(spec["frames"]) > 0
    assert all(type(numbers) is Holes for numbers in written)
    assert all(HOLE in f["text"] for f in spec["frames"] if f["algorithm"] == "6.1" and f["node"] is not None)


@DAG_SETTINGS
@given(case=dag_cases())
def test_spec_of_random_dags_has_every_consumer_edge(case) -> None:  # type: ignore[no-untyped-def]
    z, _ = case.build_values()
    spec = viz.explore(z).spec
    g = Graph(z)
    assert [[(t["i"], t["k"]) for t in c] for c in spec["consumers"]] == g.consumer_edges
    assert len(spec["grad_slot"]) == len(g.nodes)
    assert spec["svg_g"].count("data-node=") == len(g.nodes)
    assert spec["svg_b"].count("data-bnode=") == len(spec["b"])
    assert [f["node"] for f in spec["frames"] if f["algorithm"] == "6.1" and 7 not in f["lines"]] == list(
        range(len(g.nodes))
    )
    said = [f.explanation for f in frames(g)]
    assert [_fill(f["text"], z) for f in spec["frames"]] == said


def _fill(text: str, z: Value) -> str:
    """A template of the page with its holes filled in Python, as the page fills them in JavaScript."""
    g = Graph(z)
    values = [v.data for v in g.nodes]
    table = g.backprop()
    grads = [table[v] for v in g.nodes]

    def number(hole: str) -> str:
        kind, at = hole[0], hole[1:]
        if kind.lower() == "v":
            x = values[int(at)]
        elif kind.lower() == "g":
            x = grads[int(at)]
        else:
            i, k = (int(a) for a in at.split("."))
            node = g.nodes[i]
            d = node.op.local_derivative(k, node.inputs, node)  # type: ignore[union-attr]
            x = float(d.data if isinstance(d, Value) else d)
            if kind.lower() == "p":
                x *= grads[i]
        s = fmt(x)
        return f"({s})" if kind.isupper() and x < 0 else s

    parts = text.split(HOLE)
    return "".join(number(p) if k % 2 else p for k, p in enumerate(parts))


def test_the_page_says_the_frames_sentences_with_holes_for_the_numbers() -> None:
    z, _, _ = _example()
    spec = viz.explore(z).spec
    said = [f.explanation for f in frames(Graph(z))]
    assert [_fill(f["text"], z) for f in spec["frames"]] == said
    assert all(HOLE not in s for s in said)
    assert any(HOLE in f["text"] for f in spec["frames"])


def test_the_panels_terms_are_arithmetic_that_holds() -> None:
    w = Value(0.7, label="w")
    z = (w * w + w.tanh()).tanh()
    spec = viz.explore(z).spec
    number = r"\(?-?[\d.e+-]+\)?"
    for terms in spec["consumers"]:
        for t in terms:
            text = _fill(t["text"], z)
            # "grad_table[u2] × ∂u2/∂u1 (argument 1) = 0.4201 × 0.7000 = 0.2941, where ..."
            found = re.findall(rf"= ({number}) × ({number}) = ({number})", text)[0]
            g, d, p = (float(a.strip("()")) for a in found)
            assert abs(g * d - p) <= 1e-3 * abs(p) + 1e-12, text
            if t["rule"]:
                assert f"= {t['rule']} = " in text
    assert "log((" not in json.dumps(spec)


def test_the_script_has_no_sentence_and_the_style_no_colour_of_its_own() -> None:
    static = ROOT / "viz" / "static"
    modules = sorted((static / "explorer").glob("*.js"))
    # every module is joined, into the explorer's script or the lessons' pictures' (viz.pictures)
    assert sorted(p.stem for p in modules) == sorted(set(EXPLORER_MODULES) | set(PICTURE_MODULES))
    for path in modules:
        js = path.read_text(encoding="utf-8")
        literals = [s for line in js.splitlines() for s in re.findall(r'"([^"\\]*)"', line.split("//")[0])]
        sentences = [s for s in literals if re.search(r"[A-Za-z]{2,} [A-Za-z]{2,}", s)]
        assert sentences == [], path.name  # every sentence the page says is a template from Python
    css = viz.style.SECTIONS["explorer"]  # the explorer's section of the pages' one stylesheet
    assert re.findall(r"#[0-9a-fA-F]{3,6}\b", css) == []  # colours are viz.style's, as CSS variables
    css_of = importlib.import_module("viz.explore_page")._css
    assert all(f"--mg-{k}: {v};" in css_of() for k, v in viz.style.PAGE.items())


def test_the_modules_are_joined_into_one_script_of_one_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each module in a scope of its own, its imports bound from the modules before it; a module that
    imports from a later one, a name not exported, or an import of another form is refused."""
    script = explorer_script()
    assert script.startswith("var micrographExplorer = (function () {")
    assert not re.search(r"^\s*(import|export)\b", script, re.M)
    assert "var fmt = mg_words.fmt" in script and script.rstrip().endswith("return mg_explorer;\n})();")
    vp = importlib.import_module("viz.explore_page")
    real = vp._asset

    def planted(text: str, name: str = "explorer/model.js"):  # type: ignore[no-untyped-def]
        return lambda asset: text if asset == name else real(asset)

    for text, why in [
        ('import { mount } from "./explorer.js";', "not a module before it"),
        ('import { nothing } from "./words.js";', "exports no 'nothing'"),
        ('import * as words from "./words.js";', "an import or export the join does not read"),
        ("export default 1;", "an import or export the join does not read"),
    ]:
        monkeypatch.setattr(vp, "_asset", planted(text))
        with pytest.raises(ValueError, match=re.escape(why)):
            vp.explorer_script()


def test_labels_are_escaped_in_the_page(tmp_path: Path) -> None:
    x = Value(0.5, label="</script><script>alert(1)</script>")
    z = (x * 3.0).tanh()
    z.label = "<b>z</b> & co"
    page = viz.explore(z).save(tmp_path / "p.html").read_text(encoding="utf-8")
    assert "<script>alert(1)" not in page and "<b>z</b>" not in page
    assert page.count("<script") == 2  # the JSON data block and the one script with a CSP hash
    assert "micrographD3" in page  # d3-zoom, inlined
    assert "script-src 'sha256-" in page
    data = re.search(r'<script type="application/json" id="micrograph-spec">(.*?)</script>', page, re.S)
    assert data is not None
    rest = page.replace(data.group(1), "")
    # no address to fetch (the SVG namespace names and the bundle's license comments are not addresses)
    assert "<link" not in rest
    assert not re.search(r"""(src|href)\s*=\s*["']?https?:|url\(\s*["']?https?:""", rest)
    for call in ("fetch(", "XMLHttpRequest", "import(", "WebSocket", "sendBeacon"):
        assert call not in rest
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


def test_cli_explore_writes_one_page_and_refuses_bad_input(tmp_path: Path) -> None:
    done = run_micrograph(
        "explore", "tanh(x*y + exp(x))", "--at", "x=1", "--at", "y=2", "--out", "z.html", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "wrote z.html (6 nodes, 14 frames)" in done.stdout
    page = (tmp_path / "z.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "forward_backward" in page
    assert '"predict": false' in page
    done = run_micrograph("explore", "x*x", "--at", "x=3", "--predict", "--out", "p.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert '"predict": true' in (tmp_path / "p.html").read_text(encoding="utf-8")
    (tmp_path / "p.html").unlink()
    bad = [
        (["explore", "tanh(x*y)", "--at", "x=1", "--at", "y=2", "--out", "z.html"], "without --force"),
        (["explore", "log(x)", "--at", "x=-1", "--out", "l.html"], "outside the domain"),
        (["explore", "x*y", "--at", "x=1", "--out", "m.html"], "no value for y"),
        (["explore", "x", "--at", "x=1", "--out", "m.svg"], ".html"),
        (["explore", "__import__('os')", "--out", "m.html"], "not allowed"),
        (["explore", "x*x", "--at", "x=1", "--wrt", "q", "--out", "m.html"], "no variable 'q'"),
    ]
    for args, message in bad:
        done = run_micrograph(*args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr.splitlines()[0], (args, done.stderr)
        assert "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["z.html"]
    assert (tmp_path / "z.html").read_text(encoding="utf-8") == page


def test_a_b_too_large_to_draw_is_said_in_words_that_fit_every_place() -> None:
    # G within the limit, B beyond it: the note names both numbers, not the library's argument (the site's
    # page, which draws at most its own number of nodes, has no max_nodes to pass)
    x = Value(0.5, label="x")
    z = (x * x).tanh() * x
    n = len(Graph(z).nodes)
    spec = viz.explore(z, [x], max_nodes=n).spec
    assert spec["b_size"] > n and spec["svg_b"] == "" and spec["svg_g"]
    assert spec["note"] == f"B has {spec['b_size']} nodes, more than the {n} drawn at once: B is not drawn."


@pytest.mark.parametrize("value", [5e307, -1e308, sys.float_info.max])
def test_a_leaf_near_the_largest_float_has_a_slider_of_finite_floats(tmp_path: Path, value: float) -> None:
    x = Value(value, label="x")
    z = (x * 1e-300).tanh() + Value(0.5, label="c") * value  # a variable and a constant that large
    e = viz.explore(z)
    for slider in e.spec["inputs"]:
        ends = (slider["min"], slider["value"], slider["max"])
        assert all(math.isfinite(v) for v in (*ends, slider["step"])) and ends == tuple(sorted(ends)), slider
        assert slider["step"] > 0.0
    assert e.save(tmp_path / "big.html").is_file()  # its data written as strict JSON: no inf
