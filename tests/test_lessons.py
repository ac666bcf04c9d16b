"""The lessons: every step of every lesson runs, shows itself, moves, and prints numbers it computed."""

# `l` is a lesson's stepper, the name the README and the lessons give it (l = lessons.start(n)).
# ruff: noqa: E741

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import lessons
from lessons.stepper import Stepper
from micrograph import Graph
from viz.words import fmt


@pytest.fixture(autouse=True)
def _short_training(monkeypatch):
    """Lesson 5 trains for a few seconds; two epochs exercise the same code."""
    import lessons.l5_mlp as l5

    monkeypatch.setattr(l5, "EPOCHS", 2)


def _walk(l: Stepper) -> list[str]:
    """Every step's plain-text view, from the current step to the end."""
    shown = [repr(l)]
    while not isinstance(l.next(), str):
        shown.append(repr(l))
    return shown


def test_list_names_seven_lessons_with_their_sections():
    listing = lessons.list()
    assert len(listing) >= 7
    for n, line in enumerate(listing, 1):
        assert line.startswith(f"{n}. ")
        assert "section" in line
    text = repr(listing)
    assert "Algorithm 6.1" in text and "Algorithm 6.2" in text and "figure 6.10" in text
    assert "lessons.start" in text
    assert max(map(len, text.splitlines())) <= 80, text  # an 80-column terminal


def test_the_list_is_read_from_the_table_without_importing_a_lesson():
    """``python -m lessons`` prints the list from lessons.LESSONS alone: no lesson module, no drawing."""
    code = (
        "import sys, lessons; print(lessons.list()); "
        "print(sorted(m for m in sys.modules if m.startswith(('lessons', 'viz', 'micrograph', 'graphviz'))))"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    *listing, loaded = done.stdout.strip().split("\n")
    assert loaded == "['lessons']", done.stdout + done.stderr
    assert listing[0] == "1. Forward propagation over u(1)..u(n) (section 6.5.3, Algorithm 6.1)"
    assert "8. Forward mode and reverse mode (sections 6.5.9-6.5.10)" in listing


@pytest.mark.parametrize("n", sorted(lessons.LESSONS))
def test_a_lessons_row_says_whether_its_module_has_a_default_expression(n):
    row = lessons.LESSONS[n]
    module = row.load()
    assert row.number == n and module.__name__ == row.module
    assert hasattr(module, "EXPR") == hasattr(module, "AT") == row.takes_expr
    if not row.takes_expr:  # the row says why, and the stepper and lessons.start say it to the student
        assert row.no_expr and row.no_expr.endswith(".")
        says = re.escape(f"lesson {n} does not take an expression: {row.no_expr}")
        with pytest.raises(ValueError, match=says + " Lessons 1, 2, 6, 7 run on yours.$"):
            lessons.start(n, expr="x", at={"x": 1.0})
        with pytest.raises(ValueError, match=says + "$"):
            Stepper(row, expr="x", at={"x": 1.0})


@pytest.mark.parametrize("n", sorted(lessons.LESSONS))
def test_every_step_runs_and_shows_text_code_and_book_line(n):
    l = lessons.start(n)
    views = _walk(l)
    assert len(views) == len(l) >= 3
    for k, view in enumerate(views, 1):
        assert f"Lesson {n}: " in view and f"Step {k}: " in view
        assert "Code that ran (micrograph's own lines" in view  # the engine's code of every step
        assert "Book:" in view or "micrograph:" in view  # the line it is about, labelled by its author
    # every step's own code, for the REPL, is the source of the function that ran: it names the live
    # objects it made
    l.restart()
    assert l.index == 1 and "l." in l.step.lesson_code


@pytest.mark.parametrize("n", sorted(lessons.LESSONS))
def test_moving_past_either_end_says_so_and_does_not_raise(n):
    l = lessons.start(n)
    msg = l.back()
    assert isinstance(msg, str) and "first step" in msg
    assert l.index == 1
    last = len(l)
    assert l.goto(last) is l and l.index == last
    msg = l.next()
    assert isinstance(msg, str) and "last step" in msg
    assert l.index == last
    for bad in (0, -1, last + 1):
        msg = l.goto(bad)
        assert isinstance(msg, str) and str(last) in msg
        assert l.index == last
    assert isinstance(l.goto("2"), str)  # type: ignore[arg-type]
    assert l.restart().index == 1


def test_back_replays_exactly():
    l = lessons.start(2)
    first = [repr(l)]
    while not isinstance(l.next(), str):
        first.append(repr(l))
    for k in range(len(first), 0, -1):
        l.goto(k)
        assert repr(l) == first[k - 1]
    l.goto(4)
    assert l.back() is l and repr(l) == first[2]


def test_lesson_1_numbers_are_computed_from_live_objects():
    l = lessons.start(1)
    l.goto(len(l))
    assert l.result == l.u[-1] == l.z.data
    x, y = l.x_new[l.x], l.x_new[l.y]
    assert l.z.data == pytest.approx(math.tanh(x * y + x + 2))
    assert fmt(l.z.data) in l.text
    assert "identical" in l.text


def test_lesson_1_one_step_per_node_of_the_loop():
    l = lessons.start(1)
    g = l.graph
    assert len(l) == 2 + (len(g.nodes) - g.n_inputs) + 1


def test_lesson_2_grad_table_is_algorithm_6_2():
    l = lessons.start(2)
    n = len(l.graph.nodes)
    assert len(l) == 2 + (n - 1) + 2  # one step per iteration j = n-1 .. 1, the return, the push form
    l.goto(2)
    assert l.grad_table == {l.graph.output: 1.0}
    l.goto(3)
    assert len(l.grad_table) == 2
    l.goto(len(l) - 1)
    engine = Graph(l.z).backprop()
    for node, g in engine.items():
        assert l.grad_table[node] == g
    assert fmt(engine[l.x]) in l.text and fmt(engine[l.y]) in l.text
    assert str(l.graph.num_edges) in l.text
    assert "equal for every node" in l.text


def test_lesson_6_B_values_equal_algorithm_6_2():
    l = lessons.start(6)
    l.goto(len(l))
    assert l.pairs and all(a == b for _, a, b in l.pairs)
    assert l.dz[0].in_backward
    assert fmt(l.dz[0].data) in l.text or "bit for bit" in l.text


def test_lesson_7_higher_derivatives_match_sympy():
    sp = pytest.importorskip("sympy")
    w = sp.Symbol("w")
    z = sp.tanh(sp.tanh(sp.tanh(w)))
    l = lessons.start(7)
    l.goto(2)
    for node, k in ((l.d1, 1), (l.d2, 2), (l.d3, 3)):
        assert node.data == pytest.approx(float(sp.diff(z, w, k).subs(w, 0.5)), rel=1e-9)
    l.goto(3)
    for a, b in zip(l.Hv, l.H_times_v):
        assert a.data == pytest.approx(b, rel=1e-12)


def test_lesson_3_counts_match_closed_forms():
    l = lessons.start(3)
    l.goto(3)
    assert l.naive50.recomputed == 50 * 51 // 2
    assert l.store50.local_derivatives == 50
    assert str(l.naive50.recomputed) in l.text


def test_lesson_5_algorithm_6_4_equals_6_2():
    l = lessons.start(5)
    l.goto(3)
    assert l.worst < 1e-12
    l.goto(len(l))
    assert 0.0 <= l.test_accuracy <= 1.0
    assert f"{l.test_accuracy:.3f}" in l.text


def test_svg_of_a_step_is_the_diagram(tmp_path):
    l = lessons.start(2)
    l.goto(4)
    out = l.svg(tmp_path / "step.svg")
    root = ET.parse(out).getroot()
    assert root.tag.endswith("svg")
    text = "".join(root.itertext())
    assert "grad" in text and "u1" in text
    with pytest.raises(FileExistsError):
        l.svg(tmp_path / "step.svg", overwrite=False)


def test_svg_of_a_step_without_a_picture_is_a_message():
    l = lessons.start(7)
    l.goto(len(l))
    assert l.figure() is None
    msg = l.svg("never-written.svg")
    assert isinstance(msg, str) and "no picture" in msg


def test_repr_html_inlines_the_svg():
    l = lessons.start(6)
    l.goto(3)
    page = l._repr_html_()
    assert "<svg" in page and "Step 3" in page and "backward subgraph B" in page


def test_live_objects_are_attributes_and_unknown_ones_say_what_is_live():
    l = lessons.start(2)
    assert "graph" in l.objects() and "graph" in dir(l)
    with pytest.raises(AttributeError, match=r"live now: .*graph"):
        _ = l.grad_table  # made by step 2
    l.next()
    assert l.grad_table[l.z] == 1.0


def test_unknown_lesson_is_a_clear_error():
    with pytest.raises(ValueError, match="numbered 1 to"):
        lessons.start(99)
    for n in (10**400, "1" * 10**6, [1] * 10**5):  # named, cut short
        with pytest.raises(ValueError, match=r"^there is no lesson .{1,80}; the lessons are numbered 1 to 8"):
            lessons.lesson(n)


def test_python_m_lessons_without_a_terminal_prints_every_step(capsys):
    from lessons.__main__ import main

    assert main(["6"]) == 0
    out = capsys.readouterr().out
    steps = len(lessons.start(6))
    assert out.count("Lesson 6: ") == steps
    assert f"End of lesson 6: {steps} steps." in out


def test_python_m_lessons_lists_and_refuses_bad_numbers(capsys):
    from lessons.__main__ import main

    assert main([]) == 0
    assert "1. " in capsys.readouterr().out
    assert main(["42"]) == 2
    err = capsys.readouterr().err
    assert "no lesson" in err and len(err.strip().splitlines()) == 1
    assert main(["¹"]) == 2  # a digit to str.isdigit, not a number to int()
    assert capsys.readouterr().err.startswith("python -m lessons: no lesson '¹'")


def test_python_m_lessons_sends_options_to_the_command_line_s_lesson(capsys):
    from lessons.__main__ import main

    assert main(["2", "--expr", "x*y"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "takes a lesson number only" in err and "micrograph lesson 2 --expr 'x*y'" in err
