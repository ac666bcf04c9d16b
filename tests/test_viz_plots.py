"""viz plots: what is drawn matches the engine's tables, axes are labelled, files written, no global state.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.4.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import viz
from micrograph import families
from micrograph.nn import MLP, History
from viz.charts import OPERATIONS


def suptitle(fig: Any) -> str:
    return str(fig._suptitle.get_text())


def ys(line: Any) -> list[float]:
    return [float(v) for v in line.get_ydata()]


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", data[16:24])
    return int(w), int(h)


def lines_by_label(ax: Any) -> dict[str, Any]:
    return {line.get_label(): line for line in ax.get_lines()}


def test_blowup_draws_measured_and_extrapolated_counts(tmp_path):
    rows = {f: families.blowup_rows(f, 9, max_operations=400) for f in ("chain", "ladder")}
    fig = viz.plot_blowup(9, tmp_path / "blowup.png", max_operations=400)
    axes = fig.get_axes()
    assert len(axes) == 2
    for ax, name in zip(axes, ("chain", "ladder")):
        assert ax.get_yscale() == "log"
        assert ax.get_ylabel() == OPERATIONS
        assert ax.get_xlabel() == "depth d (nodes)"
        assert name in ax.get_title()
        found = lines_by_label(ax)
        bp = found["back-propagation (Algorithm 6.2)"]
        assert ys(bp) == [r["backprop_ops"] for r in rows[name]]
        measured = found["naive chain rule (eq. 6.53), measured"]
        done = [r for r in rows[name] if r["naive_complete"]]
        assert ys(measured) == [r["naive_ops"] for r in done]
    ladder = lines_by_label(axes[1])
    extrapolated = ladder["naive, extrapolated by the closed form"]
    rest = [r for r in rows["ladder"] if not r["naive_complete"]]
    assert rest and [int(v) for v in extrapolated.get_xdata()] == [r["depth"] for r in rest]
    assert any(line.get_linestyle() == "--" for line in axes[1].get_lines())
    closed = [families.expected_counts("ladder", r["depth"])["naive_operations"] for r in rest]
    assert [r["naive_ops"] for r in rest] == closed
    assert "back-propagation" in suptitle(fig)
    w, h = png_size(tmp_path / "blowup.png")
    assert (w, h) == (round(fig.get_figwidth() * 150), round(fig.get_figheight() * 150))


def test_blowup_one_family():
    fig = viz.plot_blowup(4, families=("chain",))
    assert len(fig.get_axes()) == 1
    with pytest.raises(ValueError):
        viz.plot_blowup(4, families=())
    with pytest.raises(ValueError):
        viz.plot_blowup(4, families=("nope",))


def test_memory_plots_memory_rows(tmp_path):
    rows = families.memory_rows(12)
    fig = viz.plot_memory(12, tmp_path / "memory.svg")
    left, right = fig.get_axes()
    assert left.get_ylabel() == "values held at peak"
    assert right.get_ylabel() == OPERATIONS
    assert "chain length n" in left.get_xlabel()
    drawn = [ys(line) for line in left.get_lines()]
    assert drawn == [[r[f"{k}_peak"] for r in rows] for k in ("store", "recompute", "checkpoint")]
    drawn = [ys(line) for line in right.get_lines()]
    assert drawn == [[r[f"{k}_ops"] for r in rows] for k in ("store", "recompute", "checkpoint")]
    assert (tmp_path / "memory.svg").read_text().lstrip().startswith("<?xml")


def test_training_curves(tmp_path):
    h = History(loss=[1.0, 0.5, 0.25], accuracy=[0.5, 0.75, 1.0], test_loss=[1.1, 0.7, 0.4],
                test_accuracy=[0.4, 0.6, 0.9], epochs=3)  # fmt: skip
    fig = viz.plot_training(h, tmp_path / "t.pdf", title="moons")
    left, right = fig.get_axes()
    assert [ys(line) for line in left.get_lines()] == [h.loss, h.test_loss]
    assert [ys(line) for line in right.get_lines()] == [h.accuracy, h.test_accuracy]
    assert left.get_xlabel() == "epoch" and "loss" in left.get_ylabel()
    assert "accuracy" in right.get_ylabel()
    assert suptitle(fig) == "moons"
    assert (tmp_path / "t.pdf").read_bytes().startswith(b"%PDF")
    only_train = viz.plot_training(History(loss=[2.0, 1.0], accuracy=[0.1, 0.2], epochs=2))
    assert len(only_train.get_axes()[0].get_lines()) == 1
    with pytest.raises(ValueError, match="no epoch"):
        viz.plot_training(History())


def _boundary_points(fig: Any) -> list[tuple[float, float]]:
    ax = fig.get_axes()[0]
    pts: list[tuple[float, float]] = []
    for coll in ax.collections:
        if coll.__class__.__name__ in ("QuadContourSet", "ContourSet") and not getattr(coll, "filled", True):
            for path in coll.get_paths():
                pts.extend((float(a), float(b)) for a, b in path.vertices)
    return pts


@pytest.mark.parametrize("model", [lambda x: x[0] - x[1], lambda x: [x[1], x[0]]], ids=["score", "argmax"])
def test_decision_boundary_of_a_known_model(model, tmp_path):
    X = [[-1.0, 0.5], [0.5, -1.0], [1.0, 2.0], [2.0, 1.0], [0.0, 0.3]]
    y = [0, 1, 0, 1, 0]  # class 1 where x1 > x2
    fig = viz.plot_decision_boundary(model, X, y, tmp_path / "b.png", resolution=41)
    ax = fig.get_axes()[0]
    pts = _boundary_points(fig)
    assert pts and all(abs(a - b) < 0.2 for a, b in pts)  # the boundary is the line x1 = x2
    scattered: list[Any] = [c for c in ax.collections if c.__class__.__name__ == "PathCollection"]
    assert sum(len(c.get_offsets()) for c in scattered) == len(X)
    assert ax.get_xlabel().startswith("x₁") and ax.get_ylabel().startswith("x₂")
    legend: Any = ax.get_legend()
    assert "decision boundary" in [t.get_text() for t in legend.get_texts()]
    assert png_size(tmp_path / "b.png")[0] > 500


def test_decision_boundary_of_an_mlp_and_bad_input():
    m = MLP(2, [4, 1], seed=0)
    X = [[0.0, 0.0], [1.0, 1.0], [0.0, 1.0]]
    before = [p.data for p in m.parameters()]
    fig = viz.plot_decision_boundary(m, X, [-1, 1, 1], resolution=10)
    assert [p.data for p in m.parameters()] == before  # the model is only read
    assert fig.get_axes()[0].get_title().startswith("Decision regions")
    with pytest.raises(ValueError, match="takes 3 features"):
        viz.plot_decision_boundary(MLP(3, [2], seed=0), [[0, 0, 0]], [0])
    with pytest.raises(ValueError, match="2-feature"):
        viz.plot_decision_boundary(m, [[0.0]], [0])
    with pytest.raises(ValueError, match="labels"):
        viz.plot_decision_boundary(m, X, [0])
    with pytest.raises(TypeError, match="Value"):
        viz.plot_decision_boundary(lambda x: 3.0, X, [0, 1, 0])
    with pytest.raises(ValueError, match="suffix"):
        viz.plot_training(History(loss=[1.0]), "/tmp/x.jpeg")


def test_plots_change_no_global_state_and_need_no_graphviz(tmp_path):
    code = (
        "import sys, matplotlib\n"
        "before = repr(list(dict.items(matplotlib.rcParams)))  # raw: rcParams['backend'] imports pyplot\n"
        "import viz\n"
        "from micrograph.nn import History\n"
        "viz.plot_training(History(loss=[1.0, 0.5], accuracy=[0.5, 1.0]), sys.argv[1])\n"
        "viz.plot_memory(5)\n"
        "assert 'matplotlib.pyplot' not in sys.modules, 'pyplot imported'\n"
        "assert repr(list(dict.items(matplotlib.rcParams))) == before, 'rcParams changed'\n"
    )
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root), "PATH": str(Path(sys.executable).parent)}
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "t.png")], check=True, cwd=root, env=env,
                   timeout=120)  # fmt: skip
    assert png_size(tmp_path / "t.png")[0] > 0
