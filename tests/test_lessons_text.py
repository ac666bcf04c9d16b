"""What a student reads in the lessons is exactly right: the book's words labelled as the book's, one
numbering, terms shown one by one, gradients that differ, the student's own expression."""

from __future__ import annotations

# l is the stepper, as in the lessons' REPL (l = lessons.start(n)).
# ruff: noqa: E741
import pytest

import lessons
from tests.book_text import corpus, in_book


def _all_steps(n: int) -> list[lessons.Stepper]:
    l = lessons.start(n)
    seen = []
    while True:
        seen.append(l.step)
        if isinstance(l.next(), str):
            break
    return seen


@pytest.mark.skipif(not corpus(), reason="the book's excerpts are not on this machine")
@pytest.mark.parametrize("n", sorted(lessons.LESSONS))
def test_only_the_books_words_are_labelled_book(n: int) -> None:
    for k, step in enumerate(_all_steps(n), 1):
        if step.line and step.quoted:
            assert in_book(step.line), f"lesson {n} step {k} labels {step.line!r} as the book's"


# --- helpers -----------------------------------------------------------------------------------------

import random  # noqa: E402
import re  # noqa: E402

from micrograph import Graph, backprop  # noqa: E402
from micrograph.forward import evaluate  # noqa: E402
from viz.words import count, fmt  # noqa: E402


def random_expression(seed: int) -> tuple[str, dict[str, float]]:
    """A random expression over two or three variables (reused variables included), with its values."""
    rng = random.Random(seed)
    names = ["a", "b", "c"][: rng.choice([2, 3])]
    terms = list(names)
    for _ in range(rng.randint(3, 6)):
        kind = rng.random()
        if kind < 0.3:
            terms.append(f"{rng.choice(['tanh', 'sigmoid', 'sin', 'exp'])}({rng.choice(terms)})")
        else:
            op = rng.choice(["+", "-", "*", "*"])
            terms.append(f"({rng.choice(terms)} {op} {rng.choice(terms)})")
    expr = " * ".join(terms[-2:]) if rng.random() < 0.5 else terms[-1]
    used = [n for n in names if re.search(rf"\b{n}\b", expr)]
    return expr, {n: round(rng.uniform(-1.5, 1.5), 2) or 0.5 for n in used}


CASES = [random_expression(seed) for seed in range(6)]


def _walk(l: lessons.Stepper) -> list[str]:
    views = [l.show(width=80)]
    while not isinstance(l.next(), str):
        views.append(l.show(width=80))
    return views


# --- item 1: each term, then the sum -----------------------------------------------------------------


def _check_arithmetic(text: str) -> int:
    """Every "A × B = C" and every "= A + B + ... = S" in ``text`` holds to the digits shown."""
    num = r"\(?(-?[0-9.]+(?:e[+-]?\d+)?)\)?"
    checked = 0
    for a, b, c in re.findall(rf"= {num} × {num} = {num}", text):
        assert float(a) * float(b) == pytest.approx(float(c), rel=2e-3, abs=2e-4), text
        checked += 1
    for line in text.splitlines():
        m = re.match(rf"\s*grad_table\[u\d+\] = ((?:\(?-?[0-9.]+\)? \+ )+\(?-?[0-9.]+\)?) = {num}$", line)
        if m:
            addends = [float(x.strip("()")) for x in m.group(1).split(" + ")]
            assert sum(addends) == pytest.approx(float(m.group(2)), rel=2e-3, abs=5e-4), line
            checked += 1
    return checked


@pytest.mark.parametrize("case", [None, *CASES], ids=["default", *(c[0] for c in CASES)])
def test_lesson_2_shows_each_term_then_the_sum_and_the_arithmetic_holds(case) -> None:  # type: ignore[no-untyped-def]
    l = lessons.start(2) if case is None else lessons.start(2, expr=case[0], at=case[1])
    views = _walk(l)
    assert sum(_check_arithmetic(v) for v in views) >= l.graph.num_edges
    if case is None:
        last_loop = next(v for v in views if "Step 6: Loop, j = 1" in v)
        # the two terms of x, each on its own line with its own product, then their sum
        assert re.search(r"grad_table\[u3\] × ∂u3/∂u1 = 0\.2100 × \(-2\.000\) = -0\.4200", last_loop)
        assert re.search(r"grad_table\[u5\] × ∂u5/∂u1 = 1\.000 × \(-0\.7616\) = -0\.7616", last_loop)
        assert "grad_table[u1] = (-0.4200) + (-0.7616) = -1.182" in last_loop


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
    views = _walk(l)
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
    assert l.answer("x").startswith("answer takes a number")  # type: ignore[arg-type]
    l.next()  # the step after the question shows the number it asked for
    assert fmt(q.expected) in l.text or fmt(q.expected) in l.values()


# --- item 15 and the pager ------------------------------------------------------------------------------


@pytest.mark.parametrize("n", sorted(lessons.LESSONS))
def test_printed_lessons_do_not_offer_repl_calls(n: int, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from lessons.__main__ import main

    monkeypatch.setenv("COLUMNS", "80")
    assert main([str(n)]) == 0
    out = capsys.readouterr().out
    prose = [ln for ln in out.splitlines() if not ln.startswith(" ")]  # text, not code or tables
    assert not [ln for ln in prose if "l.next()" in ln or "l.restart()" in ln or "l.back()" in ln]
    assert max(len(ln) for ln in prose) <= 80, max(prose, key=len)


def test_pager_shows_its_keys_on_every_screen_and_asks_for_predictions(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from lessons.__main__ import KEYS, interact

    monkeypatch.setenv("COLUMNS", "80")
    l = lessons.start(2)
    q_step = next(k for k in range(1, len(l) + 1) if l.goto(k) and l.question is not None)
    l.restart()
    # Enter through the steps; at the question answer "abc" (not a number), then the true value
    expected = None
    replies: list[str] = []

    def fake_input(prompt: str) -> str:
        nonlocal expected
        if prompt.startswith("Your prediction"):
            if "abc" not in replies:
                replies.append("abc")
                return "abc"
            expected = l.question.expected  # type: ignore[union-attr]
            return repr(expected)
        if l.index == 3 and "g" not in replies:
            replies.append("g")
            return "g 1"
        return ""

    monkeypatch.setattr("builtins.input", fake_input)
    assert interact(l) == 0
    out = capsys.readouterr().out
    screens = out.count("Lesson 2: ")
    assert screens >= len(l) and out.count(KEYS) == screens
    assert "'abc' is not a number" in out
    assert expected is not None and "Right: " in out
    assert f"step {q_step} of {len(l)}" in out
    assert "l.next()" not in out
    prose = [ln for ln in out.splitlines() if not ln.startswith(" ")]
    assert max(len(ln) for ln in prose) <= 80


def test_pager_shows_a_tall_step_a_screen_at_a_time_in_an_80x24_terminal(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """No screen is taller than the terminal, each starts where the last stopped (the step's heading on
    the first), and each ends with a prompt that says how to go on; q at that prompt quits."""
    import os

    from lessons.__main__ import KEYS, MORE, interact

    monkeypatch.setattr("shutil.get_terminal_size", lambda fallback=(80, 24): os.terminal_size((80, 24)))
    l = lessons.start(6)
    screens: list[str] = []
    more = 0

    def fake_input(prompt: str) -> str:
        nonlocal more
        screens.append(capsys.readouterr().out)
        if prompt == MORE:
            more += 1
            return "q" if more == 6 else ""  # read five tall screens, then quit at the sixth
        return ""

    monkeypatch.setattr("builtins.input", fake_input)
    assert interact(l) == 0
    screens.append(capsys.readouterr().out)
    for screen in screens:
        assert len(screen.rstrip("\n").splitlines()) <= 23, screen  # 24 rows less the prompt's
    firsts = [k for k, s in enumerate(screens) if "Lesson 6: Symbol-to-symbol" in s]
    assert len(firsts) >= 3 and more == 6
    for k in firsts:  # a step's first screen shows its heading at the top, not scrolled off
        assert re.search(r"^Step \d+: ", screens[k], re.M)
    assert any(KEYS in s for s in screens) and l.index < len(l)  # q at a "more" prompt quit early


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
    # Algorithm 6.3, Algorithm 6.4 and the training, each with the one LAMBDA
    assert "l2=1e-4" not in src and src.count("l2=LAMBDA") >= 3


def test_lesson_6_says_what_the_picture_shows() -> None:
    l = lessons.start(6)
    l.goto(2)
    assert "faded" not in l.text and "highlighted" in l.text


# --- the code shown fits an 80-column terminal ----------------------------------------------------------


@pytest.mark.parametrize("n", range(1, 9))
def test_the_code_that_ran_fits_80_columns_and_the_steps_own_code_is_the_code_that_runs(n: int) -> None:
    import ast

    from lessons.step import CODE_WIDTH, _body

    cases = [(None, None)] + (CASES[:3] if getattr(lessons.load(n), "EXPR", None) else [])
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

    from lessons.tour import _Entry, _lesson_page

    l = lessons.start(n)
    entries = []
    while True:
        s = l.step
        entries.append(_Entry(l.index, s.title, s.line, s.quoted, l.text, l.code, l.values(), None))
        if isinstance(l.next(), str):
            break
    page = _lesson_page(l, entries)
    blocks = re.findall(r"<p class='who'>(.*?)</p><pre class='(book|ours)'>(.*?)</pre>", page, re.S)
    assert len(blocks) == sum(1 for en in entries if en.line)
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
    from viz.words import node_names

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


# --- lessons 6 and 7 on the student's expression --------------------------------------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from micrograph import Value  # noqa: E402
from micrograph.expr import build, variables  # noqa: E402

CASES_6_7 = [
    *CASES,
    random_expression(105),  # dz/dc sums three terms, grouped otherwise by op.bprop: the last bit differs
    ("x*y + exp(x)", {"x": 1.0, "y": 2.0}),
    ("sqrt(w) * w", {"w": 2.0}),
    ("w", {"w": 0.3}),
]


def _fresh(expr: str, at: dict[str, float]) -> tuple[Value, dict[str, Value]]:
    """The expression built anew at ``at``, independently of the lesson."""
    leaves = {n: Value(x, label=n) for n, x in at.items()}
    return build(expr, leaves), leaves


@pytest.mark.parametrize("case", CASES_6_7, ids=[c[0] for c in CASES_6_7])
def test_lesson_6_runs_on_the_students_expression_and_every_number_is_the_engines(case) -> None:  # type: ignore[no-untyped-def]
    _check_lesson_6(*case)


@pytest.mark.parametrize("case", CASES_6_7, ids=[c[0] for c in CASES_6_7])
def test_lesson_7_runs_on_the_students_expression_and_agrees_with_sympy(case) -> None:  # type: ignore[no-untyped-def]
    _check_lesson_7(*case)


@given(seed=st.integers(min_value=0, max_value=10**6))
def test_lessons_6_and_7_stay_true_on_random_expressions(seed: int) -> None:
    expr, at = random_expression(seed)
    _check_lesson_6(expr, at)
    _check_lesson_7(expr, at)


def _check_lesson_6(expr: str, at: dict[str, float]) -> None:
    l = lessons.start(6, expr=expr, at=at)
    titles = [l.step.title]
    views = _walk(l)
    l.goto(1)
    while not isinstance(l.next(), str):
        titles.append(l.step.title)
    z, leaves = _fresh(expr, at)
    table = backprop(Graph(z))
    flat = [" ".join(v.split()) for v in views]
    assert titles[0] == "The forward graph G of your expression"
    assert f"z = {expr} at" in flat[0] and f"G has n = {count(len(Graph(z).nodes), 'node')}," in flat[0]
    # step 3: one node per variable, each equal to Algorithm 6.2's number, run independently here
    # the grouping of a sum of three terms or more may differ in the last bits (see the last step)
    tolerance = 1e-12 * (1 + max(abs(t) for t in table.values()))
    before = {V.label: b for V, b in zip(l.T, l.before)}  # B's values before the inputs moved
    after_b = {V.label: d.data for V, d in zip(l.T, l.dz)}  # and after
    for name, leaf in leaves.items():
        value = before[name]
        assert f"dz/d{name} = {fmt(value)} (Algorithm 6.2: {fmt(table[leaf])})" in flat[2]
        assert abs(value - table[leaf]) <= tolerance
    # one step per call of build_grad, each summing to Algorithm 6.2's number for its V
    calls = [t for t in titles if t.startswith("Algorithm 6.6, call")]
    assert len(calls) == len(l.calls)  # none when z is a variable itself: grad_table[z] = 1
    # B evaluated again at moved inputs follows Algorithm 6.2 there
    moved, moved_leaves = _fresh(expr, {n: x + l.h for n, x in at.items()})
    moved_table = backprop(Graph(moved))
    reuse = flat[titles.index("B is a graph: evaluate it again")]
    for name in leaves:
        after = moved_table[moved_leaves[name]]
        moved_text = f"dz/d{name} {fmt(before[name])} -> {fmt(after_b[name])} (Algorithm 6.2: {fmt(after)})"
        assert moved_text in reuse
        assert abs(after_b[name] - after) <= tolerance
    g = Graph(l.z)
    differ = [V for V, a, b in l.pairs if a != b]
    tolerance = 1e-12 * (1 + max((abs(b) for _, _, b in l.pairs), default=0.0))
    for V, a, b in l.pairs:  # equal, or a sum of three terms or more grouped otherwise: the last bits
        assert a == b or (len(g.consumer_edges[g.index[V]]) >= 3 and abs(a - b) <= tolerance), (V, a, b)
    if not l.pairs:  # z is a variable: no call of build_grad
        assert "build_grad had nothing to build" in flat[-1]
    elif differ:
        assert "Floating-point addition is not associative" in flat[-1] and "NOT" not in flat[-1]
    else:
        assert "all equal, bit for bit" in flat[-1]
    for text in views:
        assert "x = f(w), y = f(x), z = f(y)." not in text  # the default example's own sentence
        assert "tanh(tanh(tanh(w)))" not in text
        assert all(len(line) <= 80 for line in text.splitlines()), text


def _sympy_of(expr: str, names: list[str]):  # type: ignore[no-untyped-def]
    sp = pytest.importorskip("sympy")
    symbols = {n: sp.Symbol(n) for n in names}
    funcs = {"sigmoid": lambda t: 1 / (1 + sp.exp(-t)), "tanh": sp.tanh, "sin": sp.sin, "exp": sp.exp}
    return sp, symbols, sp.parse_expr(expr, local_dict={**symbols, **funcs})


def _check_lesson_7(expr: str, at: dict[str, float]) -> None:
    sp, symbols, f = _sympy_of(expr, list(at))
    l = lessons.start(7, expr=expr, at=at)
    views = [" ".join(v.split()) for v in _walk(l)]
    w = variables(expr)[0]  # the variable lesson 7 differentiates by: the first the expression names
    assert l.wrt.label == w
    point = {symbols[n]: x for n, x in at.items()}
    for k, node in ((1, l.d1), (2, l.d2), (3, l.d3)):
        exact = float(sp.diff(f, symbols[w], k).subs(point))
        assert node.data == pytest.approx(exact, rel=1e-9, abs=1e-12), (k, node.data, exact)
    assert f"z = {expr} at" in views[0] and f"d2 = d2z/d{w}2 = {fmt(l.d2.data)}" in views[0]
    assert (len(at) > 1) == ("partial derivatives" in views[0])
    sizes = [len(Graph(d).nodes) for d in (l.z, l.d1, l.d2, l.d3)]
    said = [f"z is computed from {count(sizes[0], 'node')}"]
    said += [f"d{k} from {count(size, 'node')}" for k, size in enumerate(sizes[1:], 1)]
    assert all(s in views[0] for s in said), said  # the sizes printed are the graphs' own
    if "growing with the order" in views[0]:  # said only where it is true
        assert sizes == sorted(sizes) and sizes[0] < sizes[-1]
    # the Hessian-vector product is the student's when z has two variables or more
    hvp = views[2]
    if len(at) > 1:
        assert l.f is l.z and f"f = z = {expr}" in hvp
        H = sp.hessian(f, [symbols[n] for n in variables(expr)]).subs(point)
        v = [float(k + 1) for k in range(len(at))]
        for row, got in zip(H.tolist(), l.Hv):
            assert got.data == pytest.approx(sum(float(h) * vi for h, vi in zip(row, v)), rel=1e-9, abs=1e-12)
    else:
        assert "z has one variable" in hvp and "Take f(x, y) = x^2 y + sin(xy)" in hvp
    for a, b in zip(l.Hv, l.H_times_v):
        assert a.data == pytest.approx(b, rel=1e-12, abs=1e-12)
    for text in views:
        assert "tanh(tanh(tanh(w)))" not in text


@pytest.mark.parametrize("n", [6, 7])
def test_lessons_6_and_7_refuse_a_point_where_a_derivative_does_not_exist(n: int) -> None:
    from micrograph.errors import DomainError

    with pytest.raises(DomainError, match=r"sqrt"):
        lessons.start(n, expr="sqrt(w)", at={"w": 0.0})


@pytest.mark.parametrize("n", [1, 2, 6])
def test_the_prediction_prompt_takes_the_keys_its_footer_shows(n: int, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from lessons.__main__ import MORE, interact

    monkeypatch.setenv("COLUMNS", "80")
    l = lessons.start(n)
    q_step = next(k for k in range(1, len(l) + 1) if l.goto(k) and l.question is not None)
    for keys, after in [(["q"], q_step), (["b", "q"], q_step - 1), (["g 1", "q"], 1), (["QUIT"], q_step)]:
        l.restart()
        typed = list(keys)
        asked = []

        def fake_input(prompt: str, typed: list[str] = typed, asked: list[str] = asked) -> str:
            if prompt == MORE:  # a step taller than the terminal: show the rest of it
                return "s"
            if prompt.startswith("Your prediction") and not asked:
                asked.append(prompt)
                return typed.pop(0)  # a key typed where a number is asked: acted on, not refused
            if l.index < q_step and not asked:
                return ""
            return typed.pop(0) if typed else "q"

        monkeypatch.setattr("builtins.input", fake_input)
        assert interact(l) == 0
        out = capsys.readouterr().out
        assert asked and "is not a number" not in out, (keys, out[-400:])
        assert l.index == after, keys


# --- lesson 6 shows the lines of build_grad each call ran; Jupyter wraps the book's words at spaces ------


@pytest.mark.parametrize(
    "expr, at", [(None, None), ("x*y + exp(x)", {"x": 1.0, "y": 2.0}), ("x*x*y + y", {"x": 0.5, "y": 3.0})]
)
def test_lesson_6_shows_the_lines_of_build_grad_each_call_ran(
    expr: str | None, at: dict[str, float] | None
) -> None:
    from viz.words import node_names

    l = lessons.start(6, expr=expr, at=at) if expr else lessons.start(6)
    seen = 0
    for k in range(1, len(l) + 1):
        l.goto(k)
        if not l.step.title.startswith("Algorithm 6.6, call"):
            continue
        seen += 1
        call, code = l.call, l.code
        names = node_names(l.graph, l.B_nodes)
        assert "l.call = l.calls[k - 1]" in l.step.lesson_code  # the step reads the call's record
        assert code.startswith("# micrograph/symbolic.py, lines ") and "(build_grad)" in code.split("\n")[0]
        assert "G_i = op.bprop(get_inputs(C, G_prime), V, D, C)" in code  # build_grad's own lines
        assert f"V = {names[call.V]}, consumers = [{', '.join(names[C] for C in call.consumers)}]" in code
        (engine,) = l.engine
        by_expr = {b.expr: b for b in engine.bound}
        assert list(by_expr["D"].values) == list(call.D) and list(by_expr["G_i"].values) == list(call.terms)
        assert by_expr["G_V"].values == (call.G_V,) and f"G_V = {names[call.G_V]}" in code
        assert all(len(line) <= 76 for line in code.splitlines())
        if l.call is l.calls[0]:  # the first call used only grad_table[z] = 1: no call before it built any
            assert "built by earlier calls" not in l.text and "set by Algorithm 6.5" in l.text
        else:
            assert "built by earlier calls" in l.text
    assert seen == len(l.calls) >= 1


_BROKEN_WORDS = """els => els.flatMap(e => {
  const t = e.firstChild, broken = [], re = /\\w+/g;  // letters and digits: after a hyphen a break is fine
  let m;
  while ((m = re.exec(t.textContent))) {
    const r = document.createRange();
    r.setStart(t, m.index);
    r.setEnd(t, m.index + m[0].length);
    if (Array.from(r.getClientRects()).filter(x => x.width > 0).length > 1) broken.push(m[0]);
  }
  return broken;
})"""


def test_jupyter_wraps_the_books_words_at_spaces_only(browser) -> None:  # type: ignore[no-untyped-def]
    from lessons.showing import PRE_STYLE

    jupyterlab = "<style>pre { word-break: break-all; white-space: pre-wrap; }</style>"  # its output's rule
    page = browser.new_page(viewport={"width": 320, "height": 800})
    try:
        for n in (1, 2, 6):
            shown = lessons.start(n)._repr_html_()
            assert PRE_STYLE in shown
            page.set_content(jupyterlab + shown)
            assert page.eval_on_selector_all("pre", _BROKEN_WORDS) == [], n
            page.set_content(jupyterlab + shown.replace(f" style='{PRE_STYLE}'", ""))  # the old page
            assert page.eval_on_selector_all("pre", _BROKEN_WORDS) != [], n  # the check sees breaks
    finally:
        page.close()


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
