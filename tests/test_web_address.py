"""What a link asks the page for, checked in Python before the page uses it, and predict in the page.

``lessons.publish.web.read_address`` reads ``?lesson=N&expr=...&at=...&step=K``, ``?exercise=NAME`` and the
explorer's parts; anything it cannot use becomes one sentence and the page falls back to its lists.
``LessonView.answer`` checks the number typed in the page's Answer box as the REPL's ``l.answer`` does.
"""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import lessons
from lessons.exercises import EXERCISES
from lessons.publish import web


def read(query: str) -> dict[str, object]:
    return json.loads(web.read_address(query))  # type: ignore[no-any-return]


def test_a_good_link_is_read_whole() -> None:
    got = read("?lesson=2&expr=x*y%2Bexp(x)&at=x%3D1,y%3D2&step=3")
    assert got["lesson"] == 2 and got["expr"] == "x*y+exp(x)" and got["at"] == "x=1,y=2"
    assert got["step"] == 3 and got["notes"] == []
    got = read("exercise=backprop&explore=tanh(x)&explore_at=x%3D0.5&predict=1")
    assert got["exercise"] == "backprop" and got["explore"] == "tanh(x)" and got["predict"] is True


def test_an_unknown_lesson_is_one_sentence() -> None:
    got = read("?lesson=99")
    assert got["lesson"] is None
    assert got["notes"] == ["There is no lesson '99' here: choose one of lessons 1 to 8 in the list."]


def test_an_expression_for_a_lesson_without_one_is_left_out() -> None:
    got = read("?lesson=3&expr=x*y")
    assert got["lesson"] == 3 and got["expr"] == ""
    assert got["notes"] == [
        "Lesson 3 runs on its own example, so the expression in the address was left out."
    ]


def test_unknown_steps_and_exercises_are_named() -> None:
    got = read("?lesson=1&step=minus&exercise=nope")
    assert got["step"] is None and got["exercise"] is None
    assert got["notes"] == [
        "'minus' is not a step number; the lesson starts at step 1.",
        "There is no exercise 'nope' here: choose one in the Exercises list.",
    ]


@given(
    st.dictionaries(st.sampled_from(["lesson", "expr", "at", "step", "exercise", "explore", "x"]), st.text())
)
def test_any_address_is_read_without_failing(parts: dict[str, str]) -> None:
    got = read(urllib.parse.urlencode(parts))
    assert got["lesson"] is None or got["lesson"] in lessons.LESSONS
    assert got["exercise"] is None or got["exercise"] in EXERCISES
    assert got["step"] is None or (isinstance(got["step"], int) and got["step"] >= 1)
    assert all(isinstance(n, str) and n.endswith(".") for n in got["notes"])  # type: ignore[attr-defined]


def test_predict_in_the_page_asks_and_checks_like_the_repl() -> None:
    view = web.LessonView(2)
    asked = None
    for _ in range(len(view.stepper)):
        state = json.loads(view.move("next"))
        if state["question"]:
            asked = state
            break
    assert asked is not None, "lesson 2 asks a question"
    assert "type it in the Answer box below, then Next shows it" in " ".join(asked["text"].split())
    assert "you are asked next" not in asked["text"] and "l.answer" not in asked["text"]
    expected = view.stepper.question.expected  # type: ignore[union-attr]
    assert view.answer(f"{expected!r}").startswith("Right:")
    assert view.answer(f"{expected + 1:g}").startswith("Not quite: the answer is")
    assert view.answer("abc") == "Type a number in the Answer box (for example 0.25), not 'abc'."
    assert view.answer("nan") == "Type a finite number in the Answer box, not 'nan'."


def test_each_place_gets_its_own_words(tmp_path: Path) -> None:
    from exercise_solutions import CORRECT

    from lessons import exercises

    path = tmp_path / "backprop.py"
    path.write_text(
        CORRECT["backprop"].replace("grad_table = {nodes[n - 1]: 1.0}", "grad_table = {nodes[n - 1]: 2.0}")
    )
    report = exercises.check("backprop", path, record=False, drawing=None)
    page, python, terminal = report.text("page"), report.text("python"), report.text()
    assert "--seed" not in page and "save_svg" not in page and "Drawing of the failure: below." in page
    assert "check(..., seed=N) draws others" in python and "--seed" not in python
    assert "--seed N draws others" in terminal
    assert repr(report) == python


def test_the_values_box_is_named_in_the_page() -> None:
    cases = {
        ("x*y", "x=1"): "no value for y: 'x*y' needs a value for y (give x=0.5, y=0.5 in the Values box)",
        ("x", "x=1e400"): "in the Values box, 'x=1e400': the value must be finite",
        ("x", "x=abc"): "in the Values box, 'x=abc': 'abc' is not a number (write it with the digits 0-9)",
    }
    for (expr, at), said in cases.items():
        for make in (web.explorer_html, lambda e, a: web.LessonView(2, e, a)):
            with pytest.raises(ValueError) as refused:
                make(expr, at)
            assert str(refused.value) == said


def test_the_page_s_templates_name_the_page_s_controls() -> None:
    from lessons.exercises.templates import template

    shown = json.loads(web.catalogue())["exercises"]
    for e in shown:
        assert "micrograph exercise check" not in e["template"] and "python -m" not in e["template"]
        assert "Check with the Check button above this editor." in e["template"]
        assert f"micrograph exercise check {e['name']}.py" in template(e["name"])
        same = e["template"].replace("Check with the Check button above this editor.", "")
        assert "@" not in same.split('"""')[1]  # no placeholder left in the docstring


def test_an_explorer_too_large_for_the_page_is_refused_in_the_pages_words() -> None:
    n = web.EXPLORER_MAX_NODES + 1
    with pytest.raises(ValueError) as refused:
        web.explorer_html("*".join(["x"] * n), "x=1")
    assert str(refused.value) == (
        f"the graph has {n} nodes, more than the {web.EXPLORER_MAX_NODES} this page draws: draw a smaller "
        "expression."
    )


def test_a_lesson_picture_too_large_for_the_page_is_noted_in_the_pages_words() -> None:
    expr = " + ".join(f"x*{k}" for k in range(1, 400))  # 1,197 nodes: more than a lesson's drawing holds
    state = web.LessonView(1, expr, "x=1").state()
    state = json.loads(state) if isinstance(state, str) else state
    assert state["svg"] == ""
    assert (
        state["picture_note"]
        == "the graph has 1197 nodes, more than the 300 this page draws: draw a smaller expression."
    )
