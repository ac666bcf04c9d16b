"""One record of a step (lessons.shown.Shown), rendered for each place: the terminal's text, Jupyter's HTML,
the tour's section and the site's JSON show the same fields, each escaped for its place.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import json
import shutil

import pytest

import lessons
from lessons.publish.tour import _Entry, _section
from lessons.publish.web import LessonView, step_json
from lessons.showing import as_html, as_text
from lessons.shown import Shown

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")

HOSTILE = Shown(
    number=9,
    lesson="A <b>lesson</b>",
    section="6.5.2",
    index=2,
    at_end=False,
    title="<script>alert(1)</script>",
    line="grad_table[u(n)] <- 1",
    quoted=False,
    text="First paragraph, u1 = 0.5.\n\nSecond & last.",
    code="grad_table[z] = 1.0   # 1.0",
    values="u1 = 0.5",
    question="What will grad_table[u1] be?",
    objects=("graph", "z"),
)
"""A step made by hand, not by a lesson: the renderers read nothing but the record."""


def test_the_text_shows_every_field_of_the_record() -> None:
    text = as_text(HOSTILE, width=80)
    assert text.splitlines()[:3] == [
        "Lesson 9: A <b>lesson</b> (6.5.2)",
        "Step 2: <script>alert(1)</script>",
        "",
    ]
    assert "  micrograph:  grad_table[u(n)] <- 1" in text
    assert "First paragraph, u1 = 0.5.\n\nSecond & last." in text
    assert "    grad_table[z] = 1.0   # 1.0" in text and "  Values now:\n    u1 = 0.5" in text
    asked = "Predict: What will grad_table[u1] be? (answer with l.answer(number), then l.next() shows it)"
    assert asked in as_text(HOSTILE, width=110)
    assert "Live objects: l.graph, l.z" in text
    page = as_text(HOSTILE, width=110, keys="", place="page")
    assert "(type it in the Answer box below, then Next shows it)" in page and "Live objects" not in page


def test_the_html_views_escape_what_the_record_holds() -> None:
    for html in (as_html(HOSTILE), _section(_Entry(HOSTILE, None, ""))):
        assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        assert "Second &amp; last." in html and "grad_table[z] = 1.0   # 1.0" in html and "u1 = 0.5" in html
    assert "<small>micrograph:</small>" in as_html(HOSTILE)
    section = _section(_Entry(HOSTILE, "step02.png", ""))
    assert section.startswith("<div class='step' id='step2'><h2>Step 2: &lt;script&gt;")
    assert "micrograph (not the book's words):" in section and "<img src='step02.png'" in section


def test_the_sites_json_is_the_record_with_the_text_for_the_page() -> None:
    data = json.loads(step_json(HOSTILE, count=7, width=80, note="moved"))
    assert data == {
        "number": 9,
        "title": "A <b>lesson</b>",
        "index": 2,
        "count": 7,
        "at_end": False,
        "text": as_text(HOSTILE, width=80, keys="", place="page"),
        "code": HOSTILE.code,
        "width": 80,
        "svg": "",
        "chart": None,
        "picture_note": "",
        "note": "moved",
        "question": "What will grad_table[u1] be?",
    }


@needs_dot
def test_a_lessons_step_is_read_once_with_its_picture_only_when_asked() -> None:
    stepper = lessons.start(1)
    while stepper.question is None and not stepper.at_end:
        stepper.next()
    assert stepper.question is not None and stepper.step.figure is not None
    shown = Shown.of(stepper)
    assert (shown.number, shown.lesson, shown.index, shown.title) == (
        1,
        stepper.title,
        stepper.index,
        stepper.step.title,
    )
    assert (shown.text, shown.code, shown.values, shown.question) == (
        stepper.text,
        stepper.code,
        stepper.values(),
        stepper.question.text,
    )
    assert shown.picture is None and as_text(shown) == stepper.show()
    assert Shown.of(stepper, picture=True).picture is not None
    view = LessonView(1)
    view.stepper.goto(stepper.index)
    assert json.loads(view.state())["text"] == as_text(shown, width=99, keys="", place="page")
