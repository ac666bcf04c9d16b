"""A PASS means the book's algorithm was written: right numbers computed another way fail, and say why.

Each test writes a student's file and checks it as ``micrograph exercise check`` does. Every one of these
solutions gives the right numbers on the small graphs: the naive chain rule with its local derivatives
cached (it follows every path from z), a forward pass that recomputes each parent, build_grad without its
memo behind a helper, the naive rule reporting its own counts, local derivatives by complex step or sympy, a
topological order that tests membership in a list. The checks that catch them: the ladder with 2^40 paths,
the calls counted in the solution's process, the imports each exercise allows, and the time measured on
chains of growing size. Correct solutions written other ways still pass.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from exercise_solutions import CORRECT, NUMPY, mutant

from lessons import exercises
from lessons.exercises import judges


def check(tmp_path: Path, name: str, source: str, **kw: object) -> exercises.Report:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return exercises.check(name, path, record=False, drawing=None, **kw)  # type: ignore[arg-type]


def failed(report: exercises.Report) -> list[str]:
    return [c.name for c in report.cases if not c.passed]


BIG_LADDER = "the ladder, 40 levels: 2^40 paths"
GROWTH = "time against size: long graphs of 400 to 3,200 nodes"

# --- every path from z ----------------------------------------------------------------------------------

PER_PATH_BACKPROP = """
    from lessons.exercises import tools

    def backprop(G):
        local = {}  # each edge's local derivative, fetched once
        for C in G.nodes:
            for k in range(len(C.inputs)):
                local[C, k] = tools.local_derivative(C, k)
        table = {v: 0.0 for v in G.nodes}
        stack = [(G.output, 1.0)]  # every path from z, each with its product
        while stack:
            v, product = stack.pop()
            table[v] += product
            for k, p in enumerate(v.inputs):
                stack.append((p, product * local[v, k]))
        return table
"""


def test_the_naive_chain_rule_with_cached_local_derivatives_is_named_on_the_ladder(tmp_path: Path) -> None:
    report = check(tmp_path, "backprop", PER_PATH_BACKPROP, time_limit=1.0)
    assert failed(report) == [BIG_LADDER, GROWTH], report.text()  # the long graphs have many paths too
    failure = report.failure
    assert failure is not None and failure.mistake == "paths" and failure.case == BIG_LADDER
    text = " ".join(report.text().split())
    assert "the naive chain rule: work grows with the number of paths (figure 6.9)" in text
    assert "121 nodes, 160 edges and 2^40 = 1,099,511,627,776 paths from w to z" in text
    assert "one local derivative per edge (160 here)" in text
    assert "f(w) is recomputed each time it is needed" in text  # the book's sentence of figure 6.9


def test_a_forward_pass_that_recomputes_every_parent_is_named_on_the_ladder(tmp_path: Path) -> None:
    source = """
        def forward(G, x):
            def value(i):
                if i < G.n_inputs:
                    return x[i]
                return G.nodes[i].op.f(*[value(j) for j in G.parents[i]])
            return [value(i) for i in range(len(G.nodes))]
    """
    report = check(tmp_path, "forward", source, time_limit=1.0)
    ladder = next(c for c in report.cases if c.name == BIG_LADDER)
    assert not ladder.passed and ladder.mistake == "paths", report.text()
    assert report.failure is not None and report.failure.case == BIG_LADDER
    text = " ".join(report.text().split())
    assert "work grows with the number of paths (figure 6.9)" in text
    assert "Algorithm 6.1 computes each of the 121 nodes once" in text


def test_a_loop_that_never_ends_is_not_called_the_naive_chain_rule_after_a_failure(tmp_path: Path) -> None:
    source = CORRECT["backprop"].replace(
        "    nodes = G.nodes\n",
        "    nodes = G.nodes\n    if len(nodes) == 2:\n        return {}\n"
        "    while len(nodes) == 121:\n        pass\n",
    )
    report = check(tmp_path, "backprop", source, time_limit=0.5)
    assert failed(report) == ["a * a: one node takes the same parent twice", BIG_LADDER], report.text()
    ladder = next(c for c in report.cases if c.name == BIG_LADDER)
    assert ladder.mistake == "timeout", report.text()  # a smaller case failed: no path is to blame


# --- build_grad's memo, whatever the recursion goes through -----------------------------------------------

NO_MEMO_BEHIND_A_HELPER = """
    from micrograph import Value

    _terms, _sums = {}, {}  # B's nodes merged: the same operation on the same nodes is built once

    def build_grad(V, G, G_prime, grad_table):
        return _walk(V, G, G_prime, grad_table)

    def _walk(V, G, G_prime, grad_table):
        if V is G.output:
            return grad_table[V]
        total = None
        for C in G_prime.get_consumers(V):
            D = _walk(C, G, G_prime, grad_table)
            key = (id(C), id(V), id(D))
            if key not in _terms:
                _terms[key] = C.op.bprop(C.inputs, V, D, C)
            t = _terms[key]
            if t is not None:
                pair = (id(total), id(t))
                if total is not None and pair not in _sums:
                    _sums[pair] = total + t
                total = t if total is None else _sums[pair]
        grad_table[V] = total if total is not None else Value(0.0)
        return grad_table[V]
"""


def test_build_grad_without_its_memo_behind_a_helper_fails(tmp_path: Path) -> None:
    report = check(tmp_path, "build_grad", NO_MEMO_BEHIND_A_HELPER, time_limit=1.0)
    ladder = next(c for c in report.cases if c.name.startswith("the ladder u(i)"))
    assert not ladder.passed and ladder.mistake == "no-memo", report.text()
    assert not next(c for c in report.cases if c.name == BIG_LADDER).passed
    assert report.failure is not None and report.failure.mistake == "no-memo"
    text = " ".join(report.text().split())
    assert re.search(r"_walk\(\) was called [\d,]+ times while it was already running", text), text
    assert "if V in grad_table: return grad_table[V]" in text


@pytest.mark.parametrize(
    "source",
    [
        """
        from micrograph import Value
        def _term(C, V, G, G_prime, grad_table):
            return C.op.bprop(C.inputs, V, build_grad(C, G, G_prime, grad_table), C)
        def build_grad(V, G, G_prime, grad_table):
            if V in grad_table:
                return grad_table[V]
            terms = [t for t in (_term(C, V, G, G_prime, grad_table) for C in G_prime.get_consumers(V))
                     if t is not None]
            total = terms[0] if terms else Value(0.0)
            for t in terms[1:]:
                total = total + t
            grad_table[V] = total
            return total
        """,
        """
        from micrograph import Value
        def build_grad(V, G, G_prime, grad_table):
            return _grad(V, G_prime, grad_table)
        def _grad(V, G_prime, table):
            if V in table:
                return table[V]
            parts = []
            for C in G_prime.get_consumers(V):
                t = C.op.bprop(C.inputs, V, _grad(C, G_prime, table), C)
                if t is not None:
                    parts.append(t)
            total = parts[0] if parts else Value(0.0)
            for t in parts[1:]:
                total = total + t
            table[V] = total
            return total
        """,
    ],
    ids=["through a helper and a generator", "the memo in a helper"],
)
def test_build_grad_with_its_memo_passes_whatever_its_helpers(tmp_path: Path, source: str) -> None:
    report = check(tmp_path, "build_grad", source)
    assert report.passed, report.text()


# --- counts come from the tools -------------------------------------------------------------------------


def test_the_naive_rule_s_own_counts_are_not_taken(tmp_path: Path) -> None:
    """The correct naive rule with the tools replaced by its own counters, which it reports in a Result."""
    source = CORRECT["naive"] + textwrap.dedent("""
        class Counting:
            def __init__(self):
                self.local_derivatives = self.recomputed = 0
            def evaluate(self, v, args):
                self.recomputed += 1
                return v.op.f(*args)
            def local_derivative(self, v, k, args, out):
                self.local_derivatives += 1
                return v.op.local_derivative(k, tuple(args), out)

        class Result:
            def __init__(self, value, counted):
                self.value = value
                self.local_derivatives, self.recomputed = counted.local_derivatives, counted.recomputed

        tools, _right, _depth = Counting(), naive_grad, [0]
        def naive_grad(z, w):  # the rule recurses through this name: only the outer call gives a Result
            _depth[0] += 1
            try:
                value = _right(z, w)
            finally:
                _depth[0] -= 1
            return Result(value, tools) if _depth[0] == 0 else value
    """)
    report = check(tmp_path, "naive", source)
    assert not any(c.passed for c in report.cases), report.text()
    assert report.failure is not None and report.failure.mistake == "uncounted", report.text()
    assert "nothing was counted" in report.text()


# --- the imports each exercise allows -------------------------------------------------------------------

COMPLEX_STEP = """
    import cmath

    def _step(f, x):
        return f(complex(x, 1e-20)).imag / 1e-20

    def tanh_dx(x, out): return _step(cmath.tanh, x)
    def sigmoid_dx(x, out): return _step(lambda z: 1 / (1 + cmath.exp(-z)), x)
    def div_dx(x, y, out): return _step(lambda z: z / y, x)
    def div_dy(x, y, out): return _step(lambda z: x / z, y)
    def pow_dx(x, y, out): return _step(lambda z: cmath.exp(y * cmath.log(z)), x)
    def pow_dy(x, y, out): return _step(lambda z: cmath.exp(z * cmath.log(x)), y)
    def log_dx(x, out): return _step(cmath.log, x)
    def sqrt_dx(x, out): return _step(cmath.sqrt, x)
"""

SYMPY = """
    import sympy

    _x, _y = sympy.symbols("x y")

    def _d(expr, wrt, **at):
        return float(sympy.diff(expr, wrt).subs(at))

    def tanh_dx(x, out): return _d(sympy.tanh(_x), _x, x=x)
    def sigmoid_dx(x, out): return _d(1 / (1 + sympy.exp(-_x)), _x, x=x)
    def div_dx(x, y, out): return _d(_x / _y, _x, x=x, y=y)
    def div_dy(x, y, out): return _d(_x / _y, _y, x=x, y=y)
    def pow_dx(x, y, out): return _d(_x ** _y, _x, x=x, y=y)
    def pow_dy(x, y, out): return _d(_x ** _y, _y, x=x, y=y)
    def log_dx(x, out): return _d(sympy.log(_x), _x, x=x)
    def sqrt_dx(x, out): return _d(sympy.sqrt(_x), _x, x=x)
"""


@pytest.mark.parametrize(
    "source, module",
    [
        (COMPLEX_STEP, "cmath"),
        (SYMPY, "sympy"),
        (COMPLEX_STEP.replace("    import cmath\n", '    cmath = __import__("cmath")\n'), "cmath"),
        (COMPLEX_STEP.replace("    import cmath\n", "    import importlib\n"), "importlib"),
        (
            COMPLEX_STEP.replace(
                "    import cmath\n",
                '    from importlib import import_module\n    cmath = import_module("cmath")\n',
            ),
            "importlib",
        ),
    ],
    ids=["complex step", "sympy.diff", "__import__", "import importlib", "import_module"],
)
def test_local_derivatives_computed_another_way_are_refused_before_they_run(
    tmp_path: Path, source: str, module: str
) -> None:
    report = check(tmp_path, "derivatives", source)
    assert report.score == 0 and not any(c.passed for c in report.cases), report.text()
    assert all(c.mistake == "import" for c in report.cases)
    assert report.failure is not None and report.failure.mistake == "import"
    assert report.failure.case == "loading derivatives.py"
    assert (
        f"this exercise asks you to write the local derivatives with math; {module} is not allowed here"
        in " ".join(report.text().split())
    )


def test_an_import_the_source_does_not_spell_out_is_refused_when_it_runs(tmp_path: Path) -> None:
    source = CORRECT["derivatives"] + (
        'def tanh_dx(x, out):\n    cmath = __import__("c" + "math")\n    return 1 - abs(cmath.tanh(x)) ** 2\n'
    )
    report = check(tmp_path, "derivatives", source)
    assert failed(report) == ["tanh_dx: du/dx of tanh at 6 points"], report.text()
    assert report.failure is not None and report.failure.mistake == "import"
    assert (
        "ImportError: this exercise asks you to write the local derivatives with math; cmath is not allowed"
        in (report.failure.traceback)
    )


def test_an_exercise_on_graphs_refuses_a_module_it_does_not_ask_for(tmp_path: Path) -> None:
    report = check(tmp_path, "backprop", "import os\n" + CORRECT["backprop"])
    assert report.failure is not None and report.failure.mistake == "import", report.text()
    assert "os is not allowed here (line 1 of backprop.py)" in " ".join(report.text().split())


def test_the_modules_an_exercise_allows_still_load(tmp_path: Path) -> None:
    header = (
        "from __future__ import annotations\nimport math\nfrom collections import deque\nimport itertools, "
        "functools, operator, heapq, bisect, dataclasses\nfrom typing import Any\n"
    )
    for name in ("topo", "backprop", "build_grad", "naive"):
        report = check(tmp_path, name, header + CORRECT[name])
        assert report.passed, report.text()
    derivatives = "from __future__ import annotations\nfrom typing import Any\n" + CORRECT["derivatives"]
    assert check(tmp_path, "derivatives", derivatives).passed
    for name, source in NUMPY.items():
        assert check(tmp_path, name, source).passed


def test_the_source_is_read_for_every_way_of_spelling_an_import() -> None:
    from lessons.exercises.imports import Imports

    imports = Imports("something", frozenset({"math", "numpy"}))
    assert imports.refused("import math\nimport numpy.linalg as la\nfrom numpy import array\n") is None
    assert imports.refused("from micrograph import Value\nfrom lessons.exercises import tools\n") is None
    assert imports.refused("import math\n\n\nimport cmath, sys\n") == ("cmath", 4)
    assert imports.refused("def f():\n    from os import path\n") == ("os", 2)
    assert imports.refused("x = __import__('sympy')\n") == ("sympy", 1)
    assert imports.refused("import importlib\nm = importlib.import_module('cmath')\n") == ("importlib", 1)
    assert imports.refused("def f(:\n") is None  # loading it reports the syntax error
    assert imports.message("cmath") == "this exercise asks you to write something; cmath is not allowed here"


def test_every_exercise_has_its_allow_list() -> None:
    from lessons.exercises.imports import Imports

    for e in exercises.EXERCISES.values():
        assert isinstance(e.judging.imports, Imports) and "math" in e.judging.imports.modules
    assert exercises.EXERCISES["derivatives"].judging.imports.modules == {"math", "__future__", "typing"}
    assert "numpy" in exercises.EXERCISES["mlp_backward"].judging.imports.modules
    assert "numpy" not in exercises.EXERCISES["backprop"].judging.imports.modules


# --- time against size ----------------------------------------------------------------------------------

QUADRATIC = {
    "topo": mutant(  # the visited set a list: each membership test reads it through
        CORRECT["topo"],
        ("    order, seen, stack = [], set(), [(z, False)]", "    order, seen, stack = [], [], [(z, False)]"),
        ("        seen.add(v)", "        seen.append(v)"),
    ),
    "forward": """
        def forward(G, x):
            u = [None] * len(G.nodes)
            for i in range(G.n_inputs):
                u[i] = x[i]
            for i in range(G.n_inputs, len(G.nodes)):
                v = G.nodes[i]
                u[i] = v.op.f(*[u[G.nodes.index(p)] for p in v.inputs])
            return u
    """,
    "backprop": """
        from lessons.exercises import tools
        def backprop(G):
            nodes = G.nodes
            grads = [0.0] * len(nodes)
            grads[-1] = 1.0
            for j in range(len(nodes) - 2, -1, -1):
                v = nodes[j]
                grads[j] = sum(grads[nodes.index(C)] * tools.local_derivative(C, k)
                               for C in G.get_consumers(v) for k, p in enumerate(C.inputs) if p is v)
            return dict(zip(nodes, grads))
    """,
}


@pytest.mark.parametrize(
    "name, right", [("topo", "order"), ("forward", "values"), ("backprop", "grad_table")]
)
def test_a_right_answer_whose_time_grows_as_n_squared_is_named(tmp_path: Path, name: str, right: str) -> None:
    report = check(tmp_path, name, QUADRATIC[name])
    assert failed(report) == [GROWTH], report.text()
    assert next(c for c in report.cases if c.name == "a chain 2,000 deep").passed
    assert report.failure is not None and report.failure.mistake == "growth"
    text = " ".join(report.text().split())
    k = re.search(rf"right {right}(?: on the smaller graphs)?; its time grows as n\^(\d\.\d)", text)
    assert k is not None and 1.7 <= float(k.group(1)) <= 2.3, text
    assert "a membership test on a list (`v in order`), list.index" in text


def test_the_exponent_is_fitted_on_log_log_axes() -> None:
    from lessons.exercises.judges.scaling import exponent

    assert exponent([400, 800, 1600, 3200], [0.01, 0.04, 0.16, 0.64]) == pytest.approx(2.0)
    assert exponent([400, 800, 1600, 3200], [0.001, 0.002, 0.004, 0.008]) == pytest.approx(1.0)
    assert exponent([400, 800, 1600, 3200], [0.0, 0.0, 0.0, 0.0]) == pytest.approx(0.0)


# --- per-case CPU limits --------------------------------------------------------------------------------


def test_every_case_has_a_cpu_limit_and_a_check_stays_within_20_seconds() -> None:
    for name in exercises.EXERCISES:
        cases = list(judges.cases(name, 0))
        assert all(0 < c.cpu <= (6.0 if c.name == GROWTH else 3.0) for c in cases), name
        assert sum(c.cpu for c in cases) <= 20.0, name
    cpu = {c.name: c.cpu for c in judges.cases("backprop", 0)}
    assert cpu[BIG_LADDER] == 1.0 and cpu["a chain 2,000 deep"] == 2.0
    assert cpu[GROWTH] == 6.0  # the four graphs, an honest n² solution's included, with room on Python 3.13


# --- the budget -------------------------------------------------------------------------------------------


def test_a_spent_budget_leaves_the_remaining_cases_not_run(tmp_path: Path) -> None:
    source = """
        def backprop(G):
            while True:
                pass
    """
    report = check(tmp_path, "backprop", source, time_limit=0.5, budget=2.0)
    assert not report.passed and report.score == 0
    not_run = [c for c in report.cases if c.mistake == "not-run"]
    assert not_run and len(report.cases) == len(list(exercises.judges.cases("backprop")))
    assert all("time budget" in c.headline for c in not_run), [c.headline for c in not_run]
    assert report.seconds < 60


@pytest.mark.slow  # seconds: run by make test-slow (and CI), keeping make test within minutes
def test_a_waiting_solution_is_named_as_waiting(tmp_path: Path) -> None:
    source = """
        import collections  # the allow-list refuses os and time by name; what is loaded stays reachable
        os, time, json = (collections._sys.modules[m] for m in ("os", "time", "json"))
        def backprop(G):
            time.sleep(100)
    """
    report = check(tmp_path, "backprop", source, budget=8.0)  # more than the 5 s a case may wait
    assert report.failure is not None and report.failure.mistake == "timeout"
    assert "waited" in report.text() and "busy loop" not in report.text()
