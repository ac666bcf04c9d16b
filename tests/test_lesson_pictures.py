"""No two steps of a lesson show the same picture: a step either draws something new or draws nothing.

Every lesson is stepped through as a student would (``l.next()``) and each step's picture is rendered to
SVG: a Graphviz drawing as ``l.svg("step.svg")`` writes it, a matplotlib figure without the two things that
differ between renderings of the same figure (the date and the random ids), so equal bytes mean the same
picture.
"""

from __future__ import annotations

import hashlib
import io
from typing import Any

import matplotlib
import pytest

import lessons


def svg(fig: Any) -> bytes:
    """The picture as SVG bytes, the same bytes for the same picture."""
    if hasattr(fig, "pipe"):
        return bytes(fig.pipe(format="svg"))
    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "lesson"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buf.getvalue()


def pictures(n: int) -> list[tuple[int, str, str]]:
    """(step number, title, SHA-1 of the SVG) for every step of lesson n that has a picture."""
    lesson = lessons.start(n)
    out = []
    while True:
        fig = lesson.figure()
        if fig is not None:
            out.append((lesson.index, lesson.step.title, hashlib.sha1(svg(fig)).hexdigest()))
        if isinstance(lesson.next(), str):
            return out


@pytest.mark.slow
@pytest.mark.parametrize("n", sorted(lessons.LESSONS))
def test_no_two_steps_of_a_lesson_draw_the_same_picture(n: int) -> None:
    shown = pictures(n)
    assert shown, f"lesson {n} draws no picture at all"
    first: dict[str, tuple[int, str]] = {}
    for k, title, digest in shown:
        assert digest not in first, f"lesson {n} step {k} ({title}) repeats step {first[digest]}"
        first[digest] = (k, title)
    # the comparison means something: the same step rendered twice gives the same bytes
    assert [d for _, _, d in pictures(n)] == [d for _, _, d in shown]


@pytest.mark.parametrize("n", sorted(lessons.LESSONS))
def test_a_drawing_shows_only_gradients_a_step_computed(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A node's ``.grad`` is 0 until something back-propagates into it: a drawing that read it would show
    ``grad 0.000`` (z's own gradient among them) for numbers no step computed. Every drawing of a lesson
    is given the grad_table a step computed, or none (``{}``: the boxes say ``grad —``)."""
    import viz

    draw = viz.draw
    given: list[tuple[int, bool]] = []

    def recording(*args: Any, **kwargs: Any) -> Any:
        given.append((lesson.index, kwargs.get("grad_table") is not None))
        return draw(*args, **kwargs)

    monkeypatch.setattr(viz, "draw", recording)
    lesson = lessons.start(n)
    while True:
        lesson.figure()
        if isinstance(lesson.next(), str):
            break
    assert all(table for _, table in given), f"lesson {n}, steps {[k for k, t in given if not t]}"


@pytest.mark.parametrize("n", sorted(lessons.LESSONS))
def test_a_lesson_s_picture_runs_no_algorithm(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Views observe: the grad_table and the B a picture shows are those its step computed, so drawing it
    runs neither Algorithm 6.2 (``Graph.backprop``), nor 6.5 (``grad``), nor a forward pass."""
    import micrograph
    from micrograph import Graph

    now = {"drawing": False}

    def refused(real: Any) -> Any:
        def guarded(*args: Any, **kwargs: Any) -> Any:
            assert not now["drawing"], f"lesson {n}, step {lesson.index}: its picture ran {real.__qualname__}"
            return real(*args, **kwargs)

        return guarded

    for owner, name in ((Graph, "backprop"), (Graph, "forward"), (micrograph, "grad")):
        monkeypatch.setattr(owner, name, refused(getattr(owner, name)))
    lesson = lessons.start(n)
    while True:
        now["drawing"] = True
        try:
            lesson.figure()
        finally:
            now["drawing"] = False
        if isinstance(lesson.next(), str):
            break
