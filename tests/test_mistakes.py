"""One catalogue of a grad_table entry's mistakes: the checker and the explorer name a number the same way.

The explorer's predict mode gets, for every entry, the catalogue's wrong entries as recipes over the terms
of its sum (``spec["wrong"]``) and the catalogue's words (``spec["mistakes"]``); the exercise checker
(``diagnose_entry``, backprop's and build_grad's) names a wrong entry by the same recipes. Here every
recipe the page can show is evaluated on the engine's terms, named as the page names it (its closeness, 4
significant digits; the page's own script is held to this in tests/test_explore_mistakes.py) and as the
checker names it, on hand-picked graphs and on random DAGs (hypothesis; derandomized, so every run draws
the same graphs).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.2.
"""

from __future__ import annotations

import importlib
import re
import shutil
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from strategies import DAG_SETTINGS, dag_cases

from lessons.exercises import judges
from lessons.exercises.judges import backprop as backprop_judge
from lessons.exercises.judges.entry import ROWS, diagnose_entry
from micrograph import Graph, Value, backprop
from micrograph.backprop import BackpropStep, Term
from viz import explore
from viz.mistakes import ENTRY_MISTAKES, SUBSET_TERMS, USES, Wrong, distinct, wrong_entries

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")


def page_close(a: float, b: float) -> bool:
    """predict.js's closeness: a typed number of 4 significant digits is the entry it is near."""
    return abs(a - b) <= 1e-3 * abs(b) + 1e-12


def uses_of(row: dict[str, Any], count: int) -> str | None:
    """A row's recipe as predict.js spells it out: each run written as its length and letter, repeated."""
    sent = row["uses"]
    if sent is None:
        return None
    uses = re.sub(r"(\d+)([pxgdn])", lambda run: run[2] * int(run[1]), sent)
    assert len(uses) == count
    return uses


def page_names(rows: list[dict[str, Any]], terms: list[Term], typed: float) -> list[str]:
    """The codes predict.js shows for a typed number: each code whose recipe gives it, in order; else the
    entry's last row (seed for u(n), wrong-sum for the others)."""
    names: list[str] = []
    for row in rows:
        uses = uses_of(row, len(terms))
        if uses is not None and row["code"] not in names:
            if page_close(typed, Wrong(row["code"], uses).value(terms)):
                names.append(row["code"])
    return names or [rows[-1]["code"]]


def engine(z: Value) -> tuple[Graph, list[float], dict[int, BackpropStep]]:
    graph = Graph(z)
    steps: dict[int, BackpropStep] = {}
    table = backprop(graph, observe=lambda step: steps.__setitem__(step.j, step))
    return graph, [table[v] for v in graph.nodes], steps


ALSO = "The same number is what another mistake gives too: "


def checker_names(graph: Graph, j: int, typed: float, expected: list[float], steps: Any) -> list[str]:
    """The codes the exercise checker gives the entry ``typed`` (its evaluations of derivatives unknown):
    its diagnosis, then each other mistake its report says gives the same number, with the words it says."""
    failure = diagnose_entry(graph, j, typed, expected, steps, what="backprop", calls=None).failure
    also = [d[len(ALSO) : -1] for d in failure.details if d.startswith(ALSO)]
    for said in also:
        code, words = said.split(" (", 1)
        assert words == f"{ENTRY_MISTAKES[code]})"
    return [failure.mistake] + [said.split(" (")[0] for said in also]


def both_name_every_recipe(z: Value) -> set[str]:
    """For every entry and every recipe the page is sent: the page's first name is one the checker gives
    that number when the page names it by one code alone, and the checker's name is among the page's.
    Returns the codes seen."""
    spec = explore(z, predict=True).spec
    graph, expected, steps = engine(z)
    n = len(graph.nodes)
    assert len(spec["wrong"]) == n and spec["mistakes"] == {"words": ENTRY_MISTAKES, "uses": USES}
    seen = set()
    for j in range(n - 1):
        terms = list(steps[j].terms)
        assert [(t.i, t.k) for t in terms] == [(t["i"], t["k"]) for t in spec["consumers"][j]]
        rows = spec["wrong"][j]
        assert rows[-1] == {"code": "wrong-sum", "uses": None}
        sent = [uses_of(r, len(terms)) for r in rows]
        assert [(r["code"], u) for r, u in zip(rows, sent)] == [
            (w.code, w.uses) for w in distinct(wrong_entries([(t.i, t.k) for t in terms]))
        ]
        assert len(set(sent)) == len(rows)  # each recipe sent once
        for row in rows[:-1]:
            typed = Wrong(row["code"], uses_of(row, len(terms))).value(terms)
            if page_close(typed, expected[j]):
                continue  # the page takes it for the right entry
            shown = page_names(rows, terms, typed)
            named = checker_names(graph, j, typed, expected, steps)
            assert row["code"] in shown and [c for c in shown if c in named] == named, (j, row, shown, named)
            if len(shown) == 1:
                assert named == [row["code"]], (j, row, named)
            seen |= set(shown)
    assert spec["wrong"][n - 1] == [{"code": "seed", "uses": None}]
    return seen


def test_the_checkers_words_are_the_catalogues() -> None:
    """Every code the page can show has the checker's words, for both exercises that diagnose an entry."""
    assert set(ENTRY_MISTAKES) <= set(ROWS)
    for code, words in ENTRY_MISTAKES.items():
        assert backprop_judge.MISTAKES[code] is ROWS[code]
        assert judges.words("backprop", code) == words == judges.words("build_grad", code)
    assert all(0 < len(w) <= 40 for w in [*ENTRY_MISTAKES.values(), *USES.values()])


@needs_dot
def test_a_wrong_entry_of_each_kind_is_named_alike_by_the_page_and_the_checker() -> None:
    w = Value(0.6, label="w")
    z = (w * w + w.tanh()).tanh()  # w: two terms through w * w, one through tanh
    z.label = "z"
    graph, expected, steps = engine(z)
    spec = explore(z, predict=True).spec
    j = graph.index[w]
    terms = list(steps[j].terms)
    rows = spec["wrong"][j]
    kinds = {
        "repeated-argument": "pxp",
        "first-consumer": "ppx",
        "overwrite": "xxp",
        "missing-term": "xxx",
        "sign": "nnn",
        "no-local-derivative": "gpp",
        "no-grad-factor": "ppd",
    }
    for code, uses in kinds.items():
        typed = Wrong(code, uses).value(terms)
        shown = page_names(rows, terms, typed)
        assert shown[0] == code and shown == checker_names(graph, j, typed, expected, steps), (code, shown)
        assert spec["mistakes"]["words"][code] == judges.words("backprop", code)  # what the page shows
    # a * a: the second edge left out, or the first: two recipes of one number, the page names both
    both = expected[j] - terms[1].product
    assert page_names(rows, terms, both) == ["repeated-argument", "missing-term"]
    assert checker_names(graph, j, both, expected, steps) == ["repeated-argument", "missing-term"]
    assert page_names(rows, terms, 2.0) == ["wrong-sum"] == checker_names(graph, j, 2.0, expected, steps)
    last = len(graph.nodes) - 1
    assert (
        page_names(spec["wrong"][last], [], 0.0)
        == ["seed"]
        == checker_names(graph, last, 0.0, expected, steps)
    )


def test_the_recipes_follow_the_catalogues_order() -> None:
    rows = wrong_entries([(4, 0), (4, 1), (5, 0)])  # u(j) twice into u5, once into u6
    codes = list(dict.fromkeys(r.code for r in rows))
    assert codes == [c for c in ENTRY_MISTAKES if c != "seed"]
    assert [r.uses for r in rows if r.code == "repeated-argument"] == ["pxp"]
    assert [r.uses for r in rows if r.code == "first-consumer"] == ["ppx"]
    assert [r.uses for r in rows if r.code == "overwrite"] == [
        "xxp",
        "xpx",
        "pxx",
    ]  # the last term kept first
    assert [r.uses for r in rows if r.code == "missing-term"] == [
        "ppx",
        "pxp",
        "xpp",
        "pxx",
        "xpx",
        "xxp",
        "xxx",
    ]
    one = wrong_entries([(3, 0)])
    assert [(r.code, r.uses) for r in one] == [
        ("missing-term", "x"),
        ("sign", "n"),
        ("no-local-derivative", "g"),
        ("no-grad-factor", "d"),
        ("wrong-sum", None),
    ]
    assert wrong_entries([], output=True) == [Wrong("seed", None)]
    # as the page gets a row: a run of three or more letters as its length and letter
    assert Wrong("no-grad-factor", "p" * 200 + "d").as_data() == {"code": "no-grad-factor", "uses": "200pd"}
    assert Wrong("overwrite", "xxpx").as_data()["uses"] == "xxpx"
    assert Wrong("missing-term", "xxxxxxx").as_data()["uses"] == "7x"
    assert Wrong("missing-term", "pppxppppppppppp").as_data()["uses"] == "3px11p"
    assert Wrong("wrong-sum", None).as_data() == {"code": "wrong-sum", "uses": None}
    many = wrong_entries([(i, 0) for i in range(SUBSET_TERMS + 1)])
    missing = [r.uses for r in many if r.code == "missing-term"]
    assert len(missing) == SUBSET_TERMS + 2 and missing[-1] == "x" * (SUBSET_TERMS + 1)
    assert (
        len([r for r in wrong_entries([(i, 0) for i in range(SUBSET_TERMS)]) if r.code == "missing-term"])
        == 63
    )


def test_a_recipe_adds_its_terms_in_order_as_algorithm_6_2_does() -> None:
    _, expected, steps = engine((Value(0.3) * Value(-1.7)).tanh() + Value(2.0))
    for j, step in steps.items():
        terms = list(step.terms)
        assert Wrong("x", "p" * len(terms)).value(terms) == expected[j]  # to the last bit
        assert Wrong("x", "n" * len(terms)).value(terms) == -expected[j]
    with pytest.raises(ValueError, match="'wrong-sum' stands for any number"):
        Wrong("wrong-sum", None).value([])
    with pytest.raises(ValueError, match="'sign' is a recipe for 2 terms, given 1"):
        Wrong("sign", "nn").value(list(steps[0].terms[:1]))


@needs_dot
def test_hand_picked_graphs_are_named_alike() -> None:
    a, b = Value(1.5, label="a"), Value(-0.5, label="b")
    seen = set()
    for z in [a * a, (a * b + a) * a, (a + b).tanh() * (a - b) + a.exp() * b, (a * a * a).sigmoid() - b * a]:
        seen |= both_name_every_recipe(z)
    assert seen >= set(ENTRY_MISTAKES) - {"seed", "wrong-sum"}


@pytest.mark.slow
@settings(DAG_SETTINGS, derandomize=True)
@given(case=dag_cases())
def test_random_dags_are_named_alike(case) -> None:  # type: ignore[no-untyped-def]
    """As the hand-picked graphs, on random DAGs; the page's drawings are left out (Graphviz laying out G
    and B is most of explore's time, and neither drawing carries a recipe or a name)."""
    z, _ = case.build_values()
    # the module viz.explore (importlib: viz.explore, as an attribute of viz, is the function explore)
    with mock.patch.object(importlib.import_module("viz.explore"), "layout", lambda *args: ("", "", "")):
        both_name_every_recipe(z)
