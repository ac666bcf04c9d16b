"""viz.render: files in the format of their suffix, atomic, and a clear error without Graphviz.

Also: the Jupyter formatters, and the engine never importing viz.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1.
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import viz
from micrograph import Graph, Value

vr = importlib.import_module("viz.render")  # the module (the name viz.render is the function)

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")


def example() -> Value:
    a, b = Value(2.0, label="alpha"), Value(-3.0, label="beta")
    z = (a * b + a).tanh()
    z.label = "zeta"
    return z


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) in pixels from the PNG's IHDR chunk (no PIL)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@needs_dot
def test_svg_parses_and_holds_the_labels(tmp_path):
    out = viz.render(viz.draw(example()), tmp_path / "g.svg")
    assert out == tmp_path / "g.svg"
    root = ET.parse(out).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    texts = {"".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")}
    assert {"alpha (u1)", "beta (u2)", "zeta (u5)", "data 2.000", "u1 × u2"} <= texts


@needs_dot
@pytest.mark.parametrize("dpi", [72, 150])
def test_png_has_the_size_asked_for(tmp_path, dpi):
    dot = viz.draw(example())
    svg = viz.render(dot, tmp_path / "g.svg")
    root = ET.parse(svg).getroot()
    w_pt, h_pt = (float(re.match(r"[\d.]+", root.get(k, "")).group()) for k in ("width", "height"))  # type: ignore[union-attr]
    png = viz.render(dot, tmp_path / "g.png", dpi=dpi)
    w, h = png_size(png)
    assert abs(w - w_pt * dpi / 72) <= 2 and abs(h - h_pt * dpi / 72) <= 2
    import matplotlib.image

    assert matplotlib.image.imread(png).shape[:2] == (h, w)


@needs_dot
def test_pdf_and_dot(tmp_path):
    dot = viz.draw(example())
    assert viz.render(dot, tmp_path / "g.pdf").read_bytes().startswith(b"%PDF")
    assert (viz.render(dot, tmp_path / "g.dot")).read_text(encoding="utf-8") == dot.source
    assert (viz.render(dot, tmp_path / "g.GV")).read_text(encoding="utf-8") == dot.source


def test_unknown_suffix_and_bad_dpi(tmp_path):
    with pytest.raises(ValueError, match=r"\.svg"):
        viz.render(viz.draw(example()), tmp_path / "g.jpeg")
    with pytest.raises(ValueError, match="dpi"):
        viz.render(viz.draw(example()), tmp_path / "g.png", dpi=0)


def test_overwrite_false_raises_and_keeps_the_file(tmp_path):
    path = tmp_path / "g.dot"
    path.write_text("old")
    with pytest.raises(FileExistsError, match="overwrite"):
        viz.render(viz.draw(example()), path, overwrite=False)
    assert path.read_text() == "old"
    viz.render(viz.draw(example()), path)  # overwrite=True replaces it
    assert path.read_text().startswith("digraph")


def test_write_is_atomic_when_interrupted(tmp_path, monkeypatch):
    path = tmp_path / "g.dot"
    path.write_text("old")

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(vr.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        viz.render(viz.draw(example()), path)
    assert path.read_text() == "old"  # the old file is whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.dot"]  # and no temporary file is left


@needs_dot
def test_graphviz_failure_leaves_no_file(tmp_path, monkeypatch):
    import graphviz

    bad = graphviz.Digraph()
    bad.body.append("this is not DOT {{{")
    with pytest.raises(RuntimeError, match="Graphviz failed"):
        viz.render(bad, tmp_path / "bad.svg")
    assert list(tmp_path.iterdir()) == []


def test_a_dot_that_crashes_is_named_with_its_signal(tmp_path, monkeypatch):
    """Graphviz 2.43's dot dies of SIGSEGV on some large drawings: the error says so, not "no message"."""
    import signal
    import subprocess

    def crashed(args, **kw):
        return subprocess.CompletedProcess(args, -signal.SIGSEGV, b"", b"")

    monkeypatch.setattr(viz.render.__globals__["subprocess"], "run", crashed)
    drawing = viz.draw(example())
    said = rf"dot crashed \(SIGSEGV\) laying out .*bad.svg, a drawing of {drawing.source.count('->')} edges"
    with pytest.raises(RuntimeError, match=said):
        viz.render(drawing, tmp_path / "bad.svg")
    assert list(tmp_path.iterdir()) == []


def test_write_atomic_refuses_missing_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        viz.write_atomic(tmp_path / "nope" / "g.svg", b"x")


@pytest.mark.parametrize("how", ["which", "PATH"])
def test_graphviz_missing_writes_dot_and_explains(tmp_path, monkeypatch, how):
    if how == "which":
        monkeypatch.setattr(vr.shutil, "which", lambda name, *a, **k: None)
    else:
        monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    z = example()
    dot = viz.draw(z)
    with pytest.raises(viz.GraphvizMissing) as e:
        viz.render(dot, tmp_path / "fig.svg")
    assert isinstance(e.value, RuntimeError)
    msg = str(e.value)
    assert "apt" in msg and "brew" in msg and "conda" in msg
    assert str(tmp_path / "fig.dot") in msg
    assert (tmp_path / "fig.dot").read_text(encoding="utf-8") == dot.source
    assert not (tmp_path / "fig.svg").exists()
    # what needs no Graphviz keeps working
    assert "alpha" in viz.text(z)
    assert viz.render(dot, tmp_path / "only.dot").exists()


class _FakeFormatter:
    def __init__(self) -> None:
        self.types: dict[type, object] = {}

    def for_type(self, typ, func):
        self.types[typ] = func


class _FakeIPython:
    def __init__(self) -> None:
        self.display_formatter = type("DF", (), {})()
        self.display_formatter.formatters = {"image/svg+xml": _FakeFormatter()}


@needs_dot
def test_ipython_formatters_display_value_and_graph_as_svg():
    ip = _FakeIPython()
    assert viz.register_ipython(ip) is True
    types = ip.display_formatter.formatters["image/svg+xml"].types
    assert set(types) == {Value, Graph}
    z = example()
    svg = types[Value](z)
    assert "<svg" in svg and "zeta (u5)" in svg
    assert "<svg" in types[Graph](Graph(z))
    x = Value(0.1)
    for _ in range(400):
        x = x.sin()
    assert types[Value](x) is None  # too large: IPython falls back to the repr


def test_register_ipython_outside_ipython_is_a_no_op():
    assert viz.register_ipython() is False or "IPython" in sys.modules


def run_python(code: str) -> None:
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root, env=env, timeout=120)


def test_engine_never_imports_viz():
    code = (
        "import sys, micrograph, micrograph.engine, micrograph.graph, micrograph.backprop\n"
        "assert not any(m == 'viz' or m.startswith('viz.') for m in sys.modules), 'engine imported viz'\n"
    )
    run_python(code)


@pytest.mark.slow
def test_registered_in_a_real_ipython_shell():
    pytest.importorskip("IPython")
    code = (
        "from IPython.testing.globalipapp import get_ipython\n"
        "ip = get_ipython()\n"
        "import viz\n"
        "from micrograph import Value, Graph\n"
        "f = ip.display_formatter.formatters['image/svg+xml']\n"
        "assert f.lookup_by_type(Value) is not None and f.lookup_by_type(Graph) is not None\n"
    )
    run_python(code)


@needs_dot
def test_pipe_svgs_lays_each_drawing_out_alone_in_order() -> None:
    z = example()
    a, b = z.inputs[0].inputs[0].inputs  # alpha, beta
    dots = [viz.draw(z), viz.draw_side_by_side(z, [a, b]), viz.draw(a * b), viz.draw_side_by_side(a * b, [a])]
    alone = [vr.pipe_svg(d) for d in dots]
    assert vr.pipe_svgs(dots) == alone  # clusters too: as each drawing is drawn alone, byte for byte
    assert vr.pipe_svgs(dots, processes=1) == alone and vr.pipe_svgs([]) == []
    with pytest.raises(ValueError, match="processes must be 1 or more, got 0"):
        vr.pipe_svgs(dots, processes=0)
