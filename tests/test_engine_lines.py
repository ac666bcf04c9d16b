"""Every lesson step's "Code that ran" is micrograph's own code that ran, with the values it gave.

For every lesson and every step (lessons 1, 2, 6 and 7 on students' expressions too): the lines shown are
the lines of the named engine file at the named line numbers (read here from the file), the engine really
ran them (traced while the step ran, or in the earlier step whose observer's record the step reads), and
every value shown beside them is the value the engine's own variable held there.
"""

from __future__ import annotations

# l is the stepper, as in the lessons' REPL (l = lessons.start(n)).
# ruff: noqa: E741
import linecache
import re
import textwrap
from typing import Any

import pytest
from engine_trace import ROOT, Watch, matches
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lesson_cases import CASES, random_expression

import lessons
import lessons.l5_mlp as l5
from lessons.engine_lines import ARROW, Bound, EngineLines, render
from lessons.step import CODE_WIDTH

HEADER = re.compile(r"^# (\S+\.py|\S+, compiled by \S+\.py), lines? (\d+)(?:-(\d+))?(?: \((\S+)\))?")


def _shown_lines_are_the_files(code: str) -> int:
    """Walk a step's code box against the engine's files; returns the number of spans checked."""
    rows = code.split("\n")
    k = spans = 0
    while k < len(rows):
        m = HEADER.match(rows[k])
        assert m, f"a span starts with its file and lines, not {rows[k]!r}\n{code}"
        path, first, last = m.group(1), int(m.group(2)), int(m.group(3) or m.group(2))
        if ", compiled by " in path:  # compiled text (micrograph.compile_nodes): its lines in linecache
            file = "".join(linecache.getlines(f"<{path}>")).split("\n")
            assert len(file) > 1, f"no compiled text under <{path}>"
        else:
            file = (ROOT / path).read_text(encoding="utf-8").split("\n")
        expected = textwrap.dedent("\n".join(file[first - 1 : last])).split("\n")
        k += 1
        while k < len(rows) and rows[k].startswith("#   "):  # the header, wrapped
            k += 1
        note = False
        for want in expected:
            while True:
                assert k < len(rows), f"{path}: line {want!r} is not shown\n{code}"
                row = rows[k]
                k += 1
                if row == want or (want.strip() and row.startswith(want + "  " + ARROW)):
                    note = False
                    break
                stripped = row.strip()
                if stripped.startswith(ARROW.strip()) or (note and stripped.startswith("#   ")):
                    note = True  # a value noted on a line of its own
                    continue
                raise AssertionError(f"{path}: shown {row!r} where the file has {want!r}\n{code}")
        while k < len(rows) and rows[k].strip().startswith((ARROW.strip(), "#   ")):
            k += 1  # notes after the last line
        spans += 1
        if k < len(rows):
            assert rows[k] == "", f"spans are apart by a blank line\n{code}"
            k += 1
    return spans


def _walk(n: int, expr: str | None = None, at: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """Run lesson n twice: once to learn the spans its steps show, once traced; each step's record."""
    start = (lambda: lessons.start(n, expr=expr, at=at)) if expr else (lambda: lessons.start(n))
    l = start()
    spans: list[EngineLines] = list(l.engine)
    while not isinstance(l.next(), str):
        spans += l.engine
    watch = Watch(spans)
    l = watch.run(1, start)
    steps = []
    while True:
        steps.append({"index": l.index, "title": l.step.title, "engine": l.engine, "code": l.code, "l": l,
                      "view": l.show(width=80), "html": l._repr_html_() if n in (1, 2) else ""})  # fmt: skip
        if l.at_end:
            break
        watch.run(l.index + 1, l.next)
    for s in steps:
        s["passes"] = {id(e): [p for p in watch.passes(e)] for e in s["engine"]}
    return steps


def _check(n: int, expr: str | None = None, at: dict[str, float] | None = None) -> None:
    for s in _walk(n, expr, at):
        where = f"lesson {n} step {s['index']} ({s['title']})"
        assert s["engine"], f"{where} shows no engine code"
        code = s["code"]
        assert code == render(s["engine"], CODE_WIDTH)
        assert _shown_lines_are_the_files(code) == len(s["engine"]), where
        assert all(len(row) <= CODE_WIDTH for row in code.split("\n")), f"{where}:\n{code}"
        box = "\n".join(row[4:] for row in s["view"].split("\n") if row.startswith("    ") or row == "")
        assert code in box, f"{where}: the terminal view shows the code box"
        if s["html"]:
            import html

            assert html.escape(code) in s["html"], f"{where}: Jupyter shows the same code box"
        for e in s["engine"]:
            here = s["index"]
            ran = [p for p in s["passes"][id(e)] if (p.step <= here if e.reported else p.step == here)]
            assert ran, f"{where}: {e.header()} did not run {'by then' if e.reported else 'in the step'}"
            assert any(matches(e, p) for p in ran), _mismatch(where, e, ran)


def _mismatch(where: str, e: EngineLines, ran: list[Any]) -> str:
    span = e.span
    seen = [{(line, x): v for (line, x), v in p.values.items()} for p in ran[-3:]]
    shown = [(span.find(b.line), b.expr, b.values, b.last) for b in e.bound]
    return f"{where}: no pass of {e.header()} gave the values shown\nshown: {shown}\nlast passes: {seen}"


@pytest.fixture(autouse=True)
def _short_training(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(l5, "EPOCHS", 2)  # lesson 5 trains for 2 epochs: the same lines, fewer times


@pytest.mark.parametrize(
    "n", [pytest.param(n, marks=pytest.mark.slow) if n == 3 else n for n in sorted(lessons.LESSONS)]
)  # lesson 3 (the ladder) takes seconds: make test-slow
def test_every_step_shows_the_engine_lines_that_ran_with_their_values(n: int) -> None:
    _check(n)


@pytest.mark.parametrize("n", [1, 2, 6, 7])
@pytest.mark.parametrize("case", CASES[:3], ids=[c[0] for c in CASES[:3]])
def test_on_the_students_expression_too(n: int, case: tuple[str, dict[str, float]]) -> None:
    _check(n, *case)


@settings(derandomize=True, max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=10**6))
def test_lesson_2_on_random_expressions(seed: int) -> None:
    _check(2, *random_expression(seed))


@pytest.mark.parametrize("expr", ["relu(x * y + 1)", "x * y + x", "x * y", "tanh(x) - y"])
def test_lesson_2_shows_the_lines_that_built_z_whatever_z_s_operation(expr: str) -> None:
    # + and * compute z in Value's operators, relu in Value.relu, the rest in apply: each shows its own lines
    _check(2, expr, {"x": 0.5, "y": 3.0})


def test_a_span_is_found_by_its_text_and_a_value_beside_its_line() -> None:
    e = EngineLines(
        "micrograph.backprop:backprop",
        bound=(Bound("table, evaluations = run_algorithm_6_2(", "evaluations", (7,)),),
        caption="Graph.backprop",
    )
    lines = e.render(CODE_WIDTH).split("\n")
    span = e.span
    file = (ROOT / "micrograph/backprop.py").read_text(encoding="utf-8").split("\n")
    assert lines[0] == f"# micrograph/backprop.py, lines {span.first}-{span.last} (backprop): Graph.backprop"
    assert file[span.first - 1].strip() == lines[1] == 'check_graph(graph, "backprop")'
    call = "table, evaluations = run_algorithm_6_2(graph, seed, observe=observe)"
    assert file[span.first].strip() == call
    assert lines[2] == call  # too long for the note beside it: the note below
    assert lines[3] == "# → evaluations = 7"
    short = EngineLines(e.function, bound=(Bound("return GradTable(", "evaluations", (7,)),))
    assert (
        short.render(CODE_WIDTH).split("\n")[3]
        == "return GradTable(graph, table, evaluations)  # → evaluations = 7"
    )
    with pytest.raises(ValueError, match="no line starts with 'no such line'"):
        _ = EngineLines("micrograph.backprop:backprop", "no such line").span
    with pytest.raises(ValueError, match="0 lines start with 'grad_table'"):
        _ = EngineLines("micrograph.backprop:backprop", bound=(Bound("grad_table", "x", (1,)),)).span


def test_many_values_are_listed_first_and_last_with_their_count() -> None:
    b = Bound("x", "d", tuple(float(k) for k in range(9)))
    assert b.said() == "d = 0.000, then 1.000, then 2.000, … then 8.000 (9 values)"
    assert Bound("x", "i", (2, 4), ("2 (u3)", "4 (u5)")).said() == "i = 2 (u3), then 4 (u5)"
