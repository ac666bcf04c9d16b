"""viz.charts: each plot defined once as data, drawn by matplotlib as the data says, sent to the page whole.

The browser's drawing of the same charts is tested in tests/test_site.py.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.4 and 6.5.10.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lessons
from lessons.publish.web import LessonView
from micrograph import families
from micrograph.nn import MLP, History
from viz import charts
from viz.plots import figure

ROOT = Path(__file__).resolve().parent.parent
FINITE = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


def _examples() -> dict[str, charts.Chart]:
    X = [[0.1, 0.9], [-0.5, 0.2], [0.7, -0.3], [-0.8, -0.6]]
    history = History(loss=[2.0, 1.0, 0.4], accuracy=[0.2, 0.6, 0.9], test_loss=[2.2, 1.3, 0.8],
                      test_accuracy=[0.1, 0.5, 0.7], epochs=3)  # fmt: skip
    return {
        "blowup": charts.blowup(9, max_operations=400),
        "memory": charts.memory(12),
        "training": charts.training(history),
        "boundary": charts.decision_boundary(MLP(2, [4, 1], seed=0), X, [0, 1, 1, 0], resolution=12),
        "boundary3": charts.decision_boundary(MLP(2, [4, 3], seed=0), X, [0, 1, 2, 0], resolution=12),
        "hessian": charts.hessian([[1.0, -0.5], [-0.5, 2.0]], ["a", "b"], Hv=[0.5, -1.5], v=[1, -1]),
    }


EXAMPLES = _examples()


def legend_texts(ax: Any) -> list[str]:
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend is not None else []


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_data_round_trips_through_json(name: str) -> None:
    chart = EXAMPLES[name]
    data = json.loads(chart.to_json())
    assert charts.Chart.from_dict(data) == chart
    kinds = {m["kind"] for p in data["panels"] for m in p["marks"]}
    assert kinds <= set(charts.MARKS)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_matplotlib_draws_what_the_chart_holds(name: str) -> None:
    chart = EXAMPLES[name]
    fig = figure(chart)
    axes = [ax for ax in fig.get_axes() if ax.get_label() != "<colorbar>"]
    assert len(axes) == len(chart.panels)
    assert (fig._suptitle.get_text() if fig._suptitle else "") == chart.title
    assert fig.get_size_inches().tolist() == [chart.width, chart.height]
    for ax, panel in zip(axes, chart.panels):
        assert ax.get_title() == panel.title
        assert ax.get_xlabel() == panel.x_label and ax.get_ylabel() == panel.y_label
        assert ax.get_yscale() == ("log" if panel.y_log else "linear")
        labelled = [m.label for m in panel.marks if getattr(m, "label", None)]
        contours = [m.label for m in panel.marks if isinstance(m, charts.Contour) and m.label]
        if panel.legend is not None:
            # matplotlib lists the contour's stand-in line last
            assert legend_texts(ax) == [t for t in labelled if t not in contours] + contours
        drawn = [line for line in ax.get_lines() if not line.get_label().startswith("_child")]
        series = [m for m in panel.marks if isinstance(m, (charts.Line, charts.Rule))]
        assert len(drawn) == len(series)
        for line, m in zip(drawn, series):
            if isinstance(m, charts.Line):
                assert [float(v) for v in line.get_xdata()] == m.x
                assert [float(v) for v in line.get_ydata()] == m.y
        cells = [m for m in panel.marks if isinstance(m, charts.Cells)]
        if cells:
            written = [t.get_text() for t in ax.texts]
            assert written == [cells[0].text(v) for row in cells[0].values for v in row]


def test_the_blowup_chart_holds_the_engines_counts() -> None:
    rows = {f: families.blowup_rows(f, 9, max_operations=400) for f in ("chain", "ladder")}
    chart = EXAMPLES["blowup"]
    for panel, name in zip(chart.panels, ("chain", "ladder")):
        by_label = {m.label: m for m in panel.marks if m.label}
        bp = by_label["back-propagation (Algorithm 6.2)"]
        assert isinstance(bp, charts.Line)
        assert bp.y == [r["backprop_ops"] for r in rows[name]]
        assert panel.y_log and panel.x_integers


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4).flatmap(lambda n: st.lists(st.lists(FINITE, min_size=n, max_size=n), min_size=n,
                                                    max_size=n)))  # fmt: skip
def test_the_hessian_cells_hold_every_entry_as_written(H: list[list[float]]) -> None:
    n = len(H)
    chart = charts.hessian(H, [f"x{i}" for i in range(n)], Hv=[row[0] for row in H])
    data = chart.to_dict()
    cells = data["panels"][0]["marks"][0]
    assert cells["values"] == H
    assert cells["texts"] == [[f"{v:.4g}" for v in row] for row in H]
    top = max(abs(v) for row in H for v in row) or 1.0
    assert cells["limit"] == top
    assert cells["inks"] == [["white" if abs(v) > 0.6 * top else "black" for v in row] for row in H]
    assert data["panels"][1]["marks"][0]["values"] == [[row[0]] for row in H]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(1e-6, 1e6), min_size=1, max_size=30))
def test_training_chart_plots_every_epoch(loss: list[float]) -> None:
    chart = charts.training(History(loss=loss, accuracy=[0.5] * len(loss), epochs=len(loss)))
    line = chart.panels[0].marks[0]
    assert isinstance(line, charts.Line)
    assert line.y == loss and line.x == [float(k) for k in range(1, len(loss) + 1)]
    assert chart.panels[0].y_log == (max(loss) / min(loss) > 100)
    assert math.isfinite(json.loads(chart.to_json())["panels"][0]["marks"][0]["y"][-1])


@pytest.mark.parametrize("bad", [[[1.0, 2.0]], [[1.0]]])
def test_hessian_refuses_what_is_not_square_or_mismatched(bad: list[list[float]]) -> None:
    with pytest.raises(ValueError, match="plot_hessian"):
        charts.hessian(bad, ["a", "b"])


def test_a_panel_refuses_an_unknown_legend_place() -> None:
    with pytest.raises(ValueError, match="legend must be one of"):
        charts.Panel("t", [], legend="somewhere")


@pytest.mark.slow
def test_every_lesson_plot_is_a_chart_sent_whole_to_the_page() -> None:
    """The page gets each plot's chart as data (no note, no SVG): the same chart the REPL draws."""
    found = []
    for n in lessons.LESSONS:
        view = LessonView(n)
        stepper = view.stepper
        for k in range(1, len(stepper) + 1):
            state = json.loads(view.move("goto", k))
            picture = stepper.figure()
            if isinstance(picture, charts.Chart):
                found.append((n, k, picture.name))
                assert state["chart"] == json.loads(picture.to_json())
                assert state["svg"] == "" and state["picture_note"] == ""
            else:
                assert state["chart"] is None
    assert {name for _, _, name in found} == {"blowup", "memory", "training", "hessian"}


def test_without_matplotlib_a_plot_function_names_the_chart_instead() -> None:
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "import viz\n"
        "try:\n"
        "    viz.plot_memory(5)\n"
        "except ModuleNotFoundError as e:\n"
        "    print(e)\n"
        "print(viz.charts.memory(5).panels[0].title)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first == (
        "viz.plot_memory draws with matplotlib, which is not installed here (pip install matplotlib); "
        "viz.charts.memory gives the same plot as data, which the browser site draws"
    )
    assert second == "memory: values held at once"


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_a_chart_prints_as_one_line_in_the_repl(name: str) -> None:
    """``l.plot`` typed in a lesson's REPL: what the chart is and how to see it, not its numbers."""
    text = repr(EXAMPLES[name])
    assert "\n" not in text and len(text) < 300
    assert text.startswith(f"<Chart {EXAMPLES[name].name!r}: {len(EXAMPLES[name].panels)} panel(s): ")
    assert ".figure() draws it" in text


def test_a_chart_with_a_number_that_is_not_finite_is_named_in_the_page_not_sent(monkeypatch: Any) -> None:
    """JSON has no NaN: the page is told why the plot is missing rather than handed text it cannot parse."""
    view = LessonView(5)
    diverged = charts.training(History(loss=[1.0, float("nan")], epochs=2))
    monkeypatch.setattr(view.stepper, "figure", lambda: diverged)
    state = json.loads(view.state())
    assert state["chart"] is None and state["svg"] == ""
    assert state["picture_note"].startswith("the plot training cannot be drawn in the page: ")
