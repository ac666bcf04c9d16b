"""viz.text: the terminal drawing, which needs no Graphviz.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1, Algorithm 6.1.
"""

from __future__ import annotations

import pytest

import micrograph
import viz
from micrograph import Graph, Value
from viz.words import fmt


def test_one_line_per_node_in_graph_order():
    a, b = Value(2.0, label="a"), Value(-3.0, label="b")
    z = (a * b + a).tanh()
    z.backward()
    out = viz.text(z)
    lines = out.splitlines()
    g = Graph(z)
    assert lines[0] == f"G: {len(g)} nodes (n_i = 2 inputs), {g.num_edges} edges"
    assert lines[1].split() == ["u(i)", "label", "computes", "data", "grad"]  # lessons 1 and 2's headings
    assert set(lines[2]) <= {"-", " "}
    body = lines[3:]
    assert [line.split()[0] for line in body] == [g.name(v) for v in g.nodes]
    assert body[0].split() == ["u1", "a", "input", "2.000", fmt(a.grad)]
    assert "u1 × u2" in body[2] and "-6.000" in body[2]
    assert "tanh(u4)" in body[4] and body[4].endswith("output z")


def test_four_significant_digits():
    assert fmt(0.42) == "0.4200"
    assert fmt(1.0) == "1.000"
    assert fmt(-0.0) == "0.000"
    assert fmt(123456.0) == "1.235e+05"
    assert fmt(None) == "?"
    assert fmt(float("inf")) == "inf"


def test_operations_written_as_a_student_reads_them():
    x = Value(2.0, label="x")
    z = (-x) ** 2 - x / 3 + (x**x).relu()
    out = viz.text(z)
    for piece in ["−u1", "u3^2", "u1 ÷ u2", "u1 ^ u1", "ReLU(u", "constant"]:
        assert piece in out, piece


def test_labels_cannot_drive_the_terminal():
    a = Value(1.0, label="\x1b[2J\x1b[31mred\nline")
    out = viz.text(a * 2)
    assert "\x1b" not in out
    assert "\\x1b[2J" in out and "\\x0aline" in out
    assert len(out.splitlines()) == 3 + 3  # title, headings, rule, three nodes


def test_long_graph_elided():
    x = Value(0.1)
    for _ in range(999):
        x = x.sin()
    lines = viz.text(x, max_rows=10).splitlines()
    assert len(lines) == 3 + 11
    assert "990 nodes not shown" in lines[8]
    assert lines[-1].startswith("u1000")


def test_backward_nodes_marked():
    w = Value(0.5, label="w")
    z = (w * w).tanh()
    dz_dw = micrograph.grad(z, w)
    out = viz.text(dz_dw)
    assert "B: dz/dw" in out and "B: dz/du2" in out  # grad_table entries of B, named
    assert out.count(" B") == 4  # tanh′(u2), the two products of a * a, their sum
    assert "tanh′(u2)" in out
    last = out.splitlines()[-1]
    assert last.endswith("B: dz/dw, output") and "output z" not in out  # dz/dw is not z


def test_text_needs_no_graphviz(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    import shutil

    assert shutil.which("dot") is None
    assert "tanh(u1)" in viz.text(Value(1.0).tanh())


def test_a_gradient_stale_against_its_data_is_marked() -> None:
    """README's lines: backward() at w = 0.5, then B evaluated at w = 0.9 moves G's data, not its .grad.

    The caller hands the drawing the grad_table it computed at the data shown (Algorithm 6.2)."""
    from micrograph import grad as _grad

    w = Value(0.5, label="w")
    z = w.tanh().tanh().tanh()
    z.backward()
    fresh = viz.text(z, grad_table=Graph(z).backprop())
    assert "*" not in fresh and "not dz/du" not in fresh
    Graph(_grad(z, w)).forward({w: 0.9})
    shown = viz.text(z, grad_table=Graph(z).backprop())
    assert "0.9000" in shown
    assert "0.5339*" in shown  # dz/dw from w = 0.5, next to data at w = 0.9: marked
    assert "3 grads not dz/du at the data shown" in shown
    assert max(len(line) for line in shown.splitlines()) <= 80
    for v in Graph(z).nodes:
        v.grad = 0.0
    z.backward()
    assert "*" not in viz.text(z, grad_table=Graph(z).backprop())


def test_drawing_runs_no_algorithm(monkeypatch: pytest.MonkeyPatch) -> None:
    """Views observe: the drawing shows the fields as they are; without a table it marks nothing."""
    import importlib

    from micrograph import grad

    w = Value(0.5, label="w")
    z = w.tanh().tanh().tanh()
    z.backward()
    Graph(grad(z, w)).forward({w: 0.9})  # the data moves, the .grad stays

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("viz.text ran an algorithm of the engine")

    for module in ("micrograph.backprop", "micrograph.forward"):
        engine = importlib.import_module(module)
        for name in ("run_algorithm_6_2", "backprop", "evaluate", "forward"):
            if hasattr(engine, name):
                monkeypatch.setattr(engine, name, refuse)
    monkeypatch.setattr(Graph, "backprop", refuse)
    monkeypatch.setattr(Graph, "forward", refuse)
    shown = viz.text(z)
    assert "0.9000" in shown and "0.5339" in shown
    assert "*" not in shown and "not dz/du" not in shown


def test_gradients_never_computed_are_not_called_stale() -> None:
    w = Value(0.5, label="w")
    assert "not dz/du" not in viz.text(w.tanh() * 2)
