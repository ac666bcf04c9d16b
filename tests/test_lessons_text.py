"""What a student reads in the lessons is exactly right: the book's words labelled as the book's, one
numbering, terms shown one by one, gradients that differ, the student's own expression in lessons 1 and 2.
(The pager: tests/test_lessons_pager.py; lessons 6 and 7 on a student's expression: test_lessons_6_7.py.)"""

from __future__ import annotations

# l is the stepper, as in the lessons' REPL (l = lessons.start(n)).
# ruff: noqa: E741
import re
from typing import Any

import pytest
from lesson_cases import CASES, all_steps, walk

import lessons
from micrograph import Graph, backprop
from micrograph.forward import evaluate
from tests.book_text import corpus, in_book
from viz.words import count, fmt, node_names


@pytest.mark.skipif(not corpus(), reason="the book's excerpts are not on this machine")
@pytest.mark.parametrize("n", sorted(lessons.LESSONS))
def test_only_the_books_words_are_labelled_book(n: int) -> None:
    for k, step in enumerate(all_steps(n), 1):
        if step.line and step.quoted:
            assert in_book(step.line), f"lesson {n} step {k} labels {step.line!r} as the book's"


@pytest.mark.parametrize("n", sorted(lessons.LESSONS))
@pytest.mark.parametrize("width", [60, 79])
def test_a_long_line_of_the_book_goes_on_indented_under_itself(n: int, width: int) -> None:
    """In the terminal, a book line wider than the screen goes on 4 columns further in, so its rest never
    reads as the next line of the pseudo-code; the words are the transcription's, in order, and fit."""
    l = lessons.start(n)
    while True:
        step, view = l.step, l.show(width=width).splitlines()
        if step.line:
            at = next(k for k, o in enumerate(view) if o.startswith(f"  {step.source}:  "))
            pad = " " * len(f"  {step.source}:  ")
            for source in step.line.splitlines():
                indent, text = source[: len(source) - len(source.lstrip())], " ".join(source.split())
                said, more = "", ""
                while said != text:
                    line = view[at]
                    assert len(line) <= width and line[len(pad) :].startswith(indent + more), (n, line)
                    part = " ".join(line.strip().removeprefix(f"{step.source}:").split())
                    said = f"{said} {part}" if said else part
                    assert text.startswith(said), (n, source, line)
                    at, more = at + 1, "    "
        if isinstance(l.next(), str):
            break


# --- item 1: each term, then the sum -----------------------------------------------------------------


def _check_arithmetic(text: str) -> int:
    """Every "A × B = C" and every "= A + B + ... = S" in ``text`` holds to the digits shown."""
    num = r"\(?(-?[0-9.]+(?:e[+-]?\d+)?)\)?"
    checked = 0
    for a, b, c in re.findall(rf"= {num} × {num} = {num}", text):
        assert float(a) * float(b) == pytest.approx(float(c), rel=2e-3, abs=2e-4), text
        checked += 1
    for line in text.splitlines():
        m = re.match(rf"\s*grad_table\[u\d+\] ← ((?:\(?-?[0-9.]+\)? \+ )+\(?-?[0-9.]+\)?) = {num}$", line)
        if m:
            addends = [float(x.strip("()")) for x in m.group(1).split(" + ")]
            assert sum(addends) == pytest.approx(float(m.group(2)), rel=2e-3, abs=5e-4), line
            checked += 1
    return checked


@pytest.mark.parametrize("case", [None, *CASES], ids=["default", *(c[0] for c in CASES)])
def test_lesson_2_shows_each_term_then_the_sum_and_the_arithmetic_holds(case) -> None:  # type: ignore[no-untyped-def]
    l = lessons.start(2) if case is None else lessons.start(2, expr=case[0], at=case[1])
    views = walk(l)
    assert sum(_check_arithmetic(v) for v in views) >= l.graph.num_edges
    if case is None:
        last_loop = next(v for v in views if "Step 6: Loop, j = 1" in v)
        # the two terms of x, each on its own line with its own product, then their sum
        assert re.search(r"grad_table\[u3\] × ∂u3/∂u1 = 0\.2100 × \(-2\.000\) = -0\.4200", last_loop)
        assert re.search(r"grad_table\[u5\] × ∂u5/∂u1 = 1\.000 × \(-0\.7616\) = -0\.7616", last_loop)
        assert "grad_table[u1] ← (-0.4200) + (-0.7616) = -1.182" in last_loop


# --- item 2: one numbering, the book's ---------------------------------------------------------------


@pytest.mark.parametrize("n, var", [(1, "i"), (2, "j")])
def test_titles_live_variables_and_code_use_the_books_numbering(n: int, var: str) -> None:
    l = lessons.start(n)
    seen = 0
    for k in range(1, len(l) + 1):
        l.goto(k)
        m = re.search(rf"Loop, {var} = (\d+)", l.step.title)
        if not m:
            continue
        book = int(m.group(1))
        assert getattr(l, var) == book  # l.j is the j in the title
        assert f"{var} = {book}\n" in l.step.lesson_code + "\n"  # and in the step's own code
        assert f"{var} = {book}:" in l.text  # and in the text
        # the engine's loop counts from 0: the code that ran says so, with the book's number beside it
        assert f"the book's {var} = {book}" in " ".join(l.code.replace("#   ", "").split())
        assert f"{var} = {book - 1} (u{book}; Python counts from 0)" in l.code
        seen += 1
    assert seen >= 3


# --- item 6: gradients that differ --------------------------------------------------------------------


def test_lesson_1_default_inputs_have_different_gradients() -> None:
    l = lessons.start(1)
    table = backprop(l.graph)
    shown = [fmt(abs(table[v])) for v in l.graph.leaves]
    assert len(set(shown)) == len(shown), shown
    l.goto(len(l))  # at the new inputs of the Algorithm 6.1 run, too
    table = backprop(l.graph)
    shown = [fmt(abs(table[v])) for v in l.graph.leaves]
    assert len(set(shown)) == len(shown), shown


def test_lesson_2_default_nodes_all_have_different_gradients() -> None:
    l = lessons.start(2)
    l.goto(len(l))
    shown = [fmt(abs(l.grad_table[v])) for v in l.graph.nodes]
    assert len(set(shown)) == len(shown), shown


# --- the lessons' own loops are the engine's algorithms, step by step ---------------------------------


@pytest.mark.parametrize("case", [None, *CASES[:3]])
def test_lesson_2_loop_equals_the_engine_step_by_step(case) -> None:  # type: ignore[no-untyped-def]
    l = lessons.start(2) if case is None else lessons.start(2, expr=case[0], at=case[1])
    engine: dict[int, object] = {}
    backprop(l.graph, observe=lambda s: engine.__setitem__(s.j + 1, s))
    seen = 0
    while not isinstance(l.next(), str):
        if l.step.title.startswith("Loop, j = "):
            s = engine[l.j]
            assert [(i, k) for i, k, _, _ in l.terms] == [(t.i + 1, t.k) for t in s.terms]  # type: ignore[attr-defined]
            assert [g * d for _, _, g, d in l.terms] == [t.product for t in s.terms]  # type: ignore[attr-defined]
            assert l.grad_table[l.graph.nodes[l.j - 1]] == s.total  # type: ignore[attr-defined]
            seen += 1
    assert seen == len(l.graph.nodes) - 1
    assert all(l.pushed[v] == pytest.approx(l.grad_table[v], rel=1e-12, abs=1e-15) for v in l.graph.nodes)


@pytest.mark.parametrize("case", [None, *CASES[:3]])
def test_lesson_1_loop_equals_the_engine_step_by_step(case) -> None:  # type: ignore[no-untyped-def]
    l = lessons.start(1) if case is None else lessons.start(1, expr=case[0], at=case[1])
    l.next()
    engine: dict[int, float] = {}
    evaluate(l.graph, l.x_new, observe=lambda i, v: engine.__setitem__(i + 1, v))
    seen = 0
    while not isinstance(l.next(), str):
        if l.step.title.startswith("Loop, i = "):
            assert l.u[l.i - 1] == engine[l.i]
            seen += 1
    assert seen == len(l.graph.nodes) - l.graph.n_inputs


# --- the student's own expression ---------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_lessons_run_on_the_students_expression_and_stay_true(n: int, case) -> None:  # type: ignore[no-untyped-def]
    expr, at = case
    l = lessons.start(n, expr=expr, at=at)
    views = walk(l)
    g = Graph(l.z)
    assert f"z = {expr} at" in views[0]
    assert str(len(g.nodes)) in views[0]
    for text in views:
        assert "tanh(x*y" not in text and "x*y" not in text  # nothing about the default example
    final = views[-2] if n == 2 else views[-1]
    assert "identical" in final or "equal for every node" in final
    # the grad_table of lesson 2 is the engine's
    if n == 2:
        table = backprop(g)
        for v in g.nodes:
            assert l.grad_table[v] == table[v]


def test_a_lesson_that_cannot_take_an_expression_says_so() -> None:
    with pytest.raises(ValueError, match=r"lesson 3 does not take an expression: .*Lessons 1, 2"):
        lessons.start(3, expr="x*y", at={"x": 1.0, "y": 2.0})


@pytest.mark.parametrize(
    "expr, at, message",
    [
        ("x*y", {"x": 1.0}, r"needs a value for y"),
        ("x*y", {"x": 1.0, "y": 2.0, "z": 3.0}, r"names 'z', which"),
        ("x*y", {"x": 1.0, "y": float("nan")}, r"at\['y'\] must be a finite number"),
        ("__import__('os')", {}, r"not allowed|cannot|refuse|only"),
        ("2 + 3", {}, r"has no variable"),
    ],
)
def test_bad_expressions_are_clear_errors(expr: str, at: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        lessons.start(2, expr=expr, at=at)


# --- predict, then see ---------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 6])
def test_lessons_ask_before_they_answer_and_check_the_answer(n: int) -> None:
    l = lessons.start(n)
    asked = None
    for k in range(1, len(l) + 1):
        l.goto(k)
        if l.question is not None:
            asked = k
            break
    assert asked is not None, f"lesson {n} asks no question"
    q = l.question
    assert q is not None
    assert "Predict: " in l.show() and "l.answer(" in l.show()
    right = l.answer(q.expected * (1 + 1e-4))
    assert right.startswith("Right") and fmt(q.expected) in right
    wrong = l.answer(q.expected + 1.0)
    assert wrong.startswith("Not quite") and fmt(q.expected) in wrong
    assert all(len(line) <= 80 for line in repr(wrong).splitlines()), repr(wrong)  # as the REPL shows it
    assert l.answer("x").startswith("answer takes a number")  # type: ignore[arg-type]
    for term in q.terms if len(q.terms) > 1 else ():  # a grad_table entry: one term alone is told so
        if abs(term - q.expected) > 1e-2:
            said = l.answer(term)
            assert f"one of its {len(q.terms)} terms, and the entry is their sum" in said, said
    assert "terms" not in wrong
    l.next()  # the step after the question shows the number it asked for
    assert fmt(q.expected) in l.text or fmt(q.expected) in l.values()


def test_lesson_8_prints_its_counts_and_agreeing_numbers() -> None:
    """Lesson 8: J v by forward mode equals back-propagation's rows times v; n vs m passes counted."""
    import lessons

    l = lessons.start(8)
    text = l.text
    assert "One pass, 13 local derivatives" in text
    rows = [line.split() for line in l.values().splitlines()[2:]]
    assert [r[1] for r in rows] == [r[2] for r in rows]  # the two columns agree as printed
    l.next()
    assert "forward mode evaluated 1184 local derivatives and reverse mode 75" in l.text
    assert "forward 38, reverse 144" in l.text
    l.next()
    assert "2010000 multiply-adds" in l.text and "30000, 67 times fewer" in l.text
    l.next()
    rows = [line.split() for line in l.values().splitlines()[2:]]
    assert len(rows) == 3 and all(r[2] == r[3] for r in rows)
    assert l.figure() is not None


# --- items 7, 13 and 14 ----------------------------------------------------------------------------------


def test_ladder_labels_do_not_clash_with_the_books_numbering() -> None:
    l = lessons.start(3)
    l.goto(4)
    assert "ladder" in l.step.title.lower()
    src = l.svg_text()
    assert not re.search(r">u\d+ \(u\d+\)<", src), "a node labelled u(k) drawn as u(i)"
    names = {v.label for v in Graph(l.zl).nodes if v.label}
    assert not [n for n in names if re.fullmatch(r"u\d+", n)]


@pytest.mark.parametrize("n", [1, 2, 5])
def test_consecutive_steps_do_not_repeat_a_picture(n: int) -> None:
    if n:
        l = lessons.start(n)
        before = None
        while True:
            pic = l.svg_text() if l.step.figure is not None else None
            assert pic is None or pic != before, f"lesson {n} step {l.index} repeats the previous picture"
            before = pic
            if isinstance(l.next(), str):
                break


def test_lesson_5_uses_one_lambda() -> None:
    import lessons.l5_mlp as l5

    src = open(l5.__file__, encoding="utf-8").read()
    # Algorithm 6.3 and the training, each with the one LAMBDA; Algorithm 6.4 takes Algorithm 6.3's J
    assert "l2=1e-4" not in src and src.count("l2=LAMBDA") == 2


def test_lesson_5_runs_algorithm_6_3_once_and_algorithm_6_4_on_its_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import types

    import lessons.l5_mlp as l5
    from micrograph import mlp_forward

    runs, example = [], mlp_forward._example  # Algorithm 6.3's loop, whoever calls it

    def counted(*args: Any, **kwargs: Any) -> Any:
        runs.append(args)
        return example(*args, **kwargs)

    monkeypatch.setattr(mlp_forward, "_example", counted)
    l = types.SimpleNamespace(memo={})
    for run in (l5._data, l5._forward, l5._backward):
        run(l)
    assert len(runs) == 1 and l.fw.cost.l2 == l5.LAMBDA
    assert set(l.grads_6_4) == set(l.model.parameters()) and l.worst < 1e-12  # Algorithm 6.2 on l.fw.J


def test_lesson_6_says_what_the_picture_shows() -> None:
    l = lessons.start(6)
    l.goto(2)
    assert "faded" not in l.text and "highlighted" in l.text


# --- the code shown fits an 80-column terminal ----------------------------------------------------------


@pytest.mark.parametrize("n", range(1, 9))
def test_the_code_that_ran_fits_80_columns_and_the_steps_own_code_is_the_code_that_runs(n: int) -> None:
    import ast

    from lessons.step import CODE_WIDTH, _body

    cases = [(None, None)] + (CASES[:3] if lessons.LESSONS[n].takes_expr else [])
    for expr, at in cases:
        l = lessons.start(n, expr=expr, at=at) if expr else lessons.start(n)
        while True:
            step = l.step
            box = l.show(width=80).split("  Code that ran")[-1].split("\n  Values now:")[0]
            assert l.code and all(len(line) <= 80 for line in box.splitlines()), (n, step.title, box)
            shown = step.lesson_code  # the step's own code, for the REPL
            assert all(len(line) <= CODE_WIDTH for line in shown.splitlines()), (n, step.title, shown)
            original = _body(step.run, step.params)
            # comments moved, never code: the same program
            assert ast.dump(ast.parse(shown)) == ast.dump(ast.parse(original)), (n, step.title)
            if isinstance(l.next(), str):
                break


def test_fit_code_moves_a_long_trailing_comment_above_its_line_and_leaves_strings_alone() -> None:
    from lessons.step import fit_code

    code = (
        "x = 1  # short\n"
        "for p, k in edges[j - 1]:  # p = i - 1, the consumer's place in the list, and more words to wrap\n"
        '    s = "a # b" + "c" * 30 + "dddddddddddddddddddddddddddddddddddddddd"  # why\n'
    )
    assert fit_code(code, width=60).splitlines() == [
        "x = 1  # short",
        "# p = i - 1, the consumer's place in the list, and more",
        "# words to wrap",
        "for p, k in edges[j - 1]:",
        "    # why",
        '    s = "a # b" + "c" * 30 + "dddddddddddddddddddddddddddddddddddddddd"',
    ]


@pytest.mark.skipif(not corpus(), reason="the book's excerpts are not on this machine")
@pytest.mark.parametrize("n", sorted(lessons.LESSONS))
def test_the_tour_pages_label_each_quoted_line_as_the_books_or_micrographs(n: int) -> None:
    import html as html_module

    from lessons.publish.tour import _Entry, _lesson_page
    from lessons.shown import Shown

    l = lessons.start(n)
    entries = []
    while True:
        entries.append(_Entry(Shown.of(l), None, ""))
        if isinstance(l.next(), str):
            break
    page = _lesson_page(l, entries)
    blocks = re.findall(r"<p class='who'>(.*?)</p><pre class='(book|ours)'>(.*?)</pre>", page, re.S)
    assert len(blocks) == sum(1 for en in entries if en.shown.line)
    for who, kind, text in blocks:
        text = html_module.unescape(text)
        if kind == "book":
            assert who.startswith("The book (") and in_book(text), text
        else:
            assert who == "micrograph (not the book's words):" and not in_book(text), text


def test_lesson_6_steps_through_algorithm_6_6_call_by_call() -> None:
    """One step per build_grad call: V, its consumers, D, what op.bprop built, the sum (Algorithm 6.2's
    number), and the picture highlights exactly the nodes of B that call added."""
    from micrograph import Graph
    from viz import style

    l = lessons.start(6)
    while not l.step.title.startswith("Algorithm 6.6, call"):
        l.next()
    seen = []
    while l.step.title.startswith("Algorithm 6.6, call"):
        call = l.call
        seen.append(call.V)
        names = node_names(l.graph, l.B_nodes)
        text = l.show(width=80)
        assert f"build_grad(V = {names[call.V]}" in text
        assert f"= {fmt(call.G_V.data)}." in text and call.G_V.data == Graph(l.z).backprop()[call.V]
        added = [names[v] for v in call.new_nodes]
        assert f"added {count(len(added), 'node')} to B: {', '.join(added)}" in " ".join(text.split())
        source = l.figure().source  # the drawing's boxes: the highlighted ones are this call's
        boxes = re.findall(r'^\s*"?(u\d+)"? \[label=<<TABLE[^\n]*BGCOLOR="([^"]+)"', source, re.M)
        assert sorted(n for n, colour in boxes if colour == style.HIGHLIGHT["fillcolor"]) == sorted(added)
        assert "<svg" in l.svg_text()
        assert all(len(line) <= 80 for line in text.splitlines())
        l.next()
    # the calls visit G' from z down, each V once: y, x, w for figure 6.10's chain
    assert [v.label for v in seen] == ["y", "x", "w"]


@pytest.mark.slow
def test_each_lesson_ends_by_naming_the_exercise_of_its_algorithm() -> None:
    from lessons.stepper import exercises_of

    expected = {1: ("topo", "forward"), 2: ("derivatives", "backprop"), 3: ("naive",), 5: ("mlp_backward",),
                6: ("build_grad",)}  # fmt: skip
    for n in lessons.LESSONS:
        names = exercises_of(n)  # read from the exercises' own modules
        assert names == expected.get(n, ()), n
        l = lessons.start(n)
        assert "Write it yourself" not in l.text  # only the last step says it
        l.goto(len(l))
        assert l.at_end
        last = l.text.split("\n\n")[-1]
        for name in names:
            assert last.startswith("Write it yourself: the exercise") and name in last
        if len(names) == 1:
            assert f"micrograph exercise start {names[0]}" in l.text
            assert f"micrograph exercise check {names[0]}.py" in l.text


def test_lesson_2_on_a_lone_input_says_there_is_nothing_to_sum() -> None:
    text = " ".join(" ".join(walk(lessons.start(2, expr="x", at={"x": 1.0}))).split())
    assert "n = 1 node, n_i = 1 input, 0 edges" in text and "no sum to compute" in text
    assert "The loop had no entry to fill: grad_table[z] = 1 is the whole table" in text
    for wrong in ("1 nodes", "one consumer", "filled all", "u1..u1"):
        assert wrong not in text, wrong


@pytest.mark.parametrize(
    ("kw", "said"),
    [
        ({}, "Left out are u2, u3 (v), u8, that is the constant 2, v and exp(v):"),
        ({"expr": "sin(v)*w", "at": {"v": 0.3, "w": 2.0}}, "u3, u4 (v1), u8, that is the constant 2, v1 and"),
    ],
)
def test_lesson_6_names_the_nodes_g_prime_leaves_out_in_one_order(kw: dict[str, Any], said: str) -> None:
    l = lessons.start(6, **kw)
    l.goto(2)
    assert said in " ".join(l.text.split())
    names = node_names(l.graph2)
    left = [names[u] for u in l.graph2.nodes if u not in l.G2_prime]
    assert left == [names[l.two], names[l.other], names[l.other_exp]]  # u2 is the constant, as said
