"""Predict mode names a wrong entry on screen with the exercise checker's catalogue (Debian's chromium).

A wrong prediction of each kind the catalogue knows (viz.mistakes) is typed into the explorer's predict
mode; the diagnosis on screen is read back: the mistake's code and the checker's words for it (from the
judge, lessons.exercises.judges), the terms the mistake changes, marked; the checker names the same number
with the same code. After an input is changed, the page evaluates the same recipes at the new inputs. The
numbers typed are the catalogue's, computed in Python from the engine's terms.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import CHROMIUM_AND_DOT

import viz
from lessons.exercises import judges
from lessons.exercises.judges.entry import diagnose_entry
from micrograph import Graph, Value, backprop
from micrograph.backprop import BackpropStep
from viz.explore import WORDS
from viz.mistakes import USES, Wrong
from viz.words import fmt

pytestmark = [
    *CHROMIUM_AND_DOT,
    pytest.mark.slow,
]
pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

# Each kind typed for grad_table[w] of tanh(w * w + tanh(w)), whose sum has three terms: two through
# w * w, one through tanh. (code, recipe, the codes the page shows: two recipes give the first number)
KINDS = [
    ("repeated-argument", "pxp", ["repeated-argument", "missing-term"]),
    ("first-consumer", "ppx", ["first-consumer"]),
    ("overwrite", "xxp", ["overwrite"]),
    ("missing-term", "xxx", ["missing-term"]),
    ("sign", "nnn", ["sign"]),
    ("no-local-derivative", "ggg", ["no-local-derivative"]),
    ("no-local-derivative", "gpp", ["no-local-derivative"]),
    ("no-grad-factor", "ppd", ["no-grad-factor"]),
]


def _example(at: float) -> tuple[Value, Value]:
    w = Value(at, label="w")
    z = (w * w + w.tanh()).tanh()
    z.label = "z"
    return z, w


def _engine(z: Value) -> tuple[Graph, list[float], dict[int, BackpropStep]]:
    graph = Graph(z)
    steps: dict[int, BackpropStep] = {}
    table = backprop(graph, observe=lambda step: steps.__setitem__(step.j, step))
    return graph, [table[v] for v in graph.nodes], steps


def _said(page: Any) -> tuple[list[str], list[str], list[str | None]]:
    """The diagnosis on screen: the codes named, the sentences naming them, each term's mark."""
    codes = (page.get_attribute(".mg-feedback", "data-mistakes") or "").split()
    lines = page.eval_on_selector_all(".mg-feedback .mg-mistake", "ps => ps.map(p => p.textContent)")
    uses = page.eval_on_selector_all(
        ".mg-feedback li.mg-term", "ls => ls.map(l => l.getAttribute('data-use'))"
    )
    return codes, lines, uses


def _type(page: Any, number: float) -> None:
    box = page.locator("input.mg-predict-input")
    box.fill(repr(number))
    page.get_by_role("button", name="Check").click()


def _right_down_to(page: Any, expected: list[float], j: int) -> None:
    """Type the right entries from u(n) down to (not including) u(j+1)."""
    box = page.locator("input.mg-predict-input")
    for i in range(len(expected) - 1, j, -1):
        assert box.get_attribute("data-node") == str(i)
        box.fill(fmt(expected[i]))
        box.press("Enter")
    assert box.get_attribute("data-node") == str(j)


def _sentence(code: str, first: bool) -> str:
    """The sentence the page must show for a code: the checker's words (the judge's rows), in WORDS."""
    return WORDS["mistake" if first else "also"].format(code=code, words=judges.words("backprop", code))


def test_each_kind_of_wrong_entry_is_named_on_screen_as_the_checker_names_it(
    browser: Any, tmp_path: Path
) -> None:
    z, w = _example(0.6)
    path = viz.explore(z, predict=True).save(tmp_path / "predict.html")
    graph, expected, steps = _engine(z)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.resolve().as_uri())
    page.wait_for_selector(".mg-pane-g g[data-node]")

    # u(n): any wrong number is the seed's mistake
    last = len(graph.nodes) - 1
    _type(page, 0.0)
    codes, lines, uses = _said(page)
    assert codes == ["seed"] and lines == [_sentence("seed", True)] and uses == []
    assert (
        diagnose_entry(graph, last, 0.0, expected, steps, what="backprop", calls=None).failure.mistake
        == "seed"
    )

    j = graph.index[w]
    terms = list(steps[j].terms)
    _right_down_to(page, expected, j)
    for code, recipe, shown in KINDS:
        typed = Wrong(code, recipe).value(terms)
        _type(page, typed)
        codes, lines, uses = _said(page)
        assert codes == shown, (code, codes)
        assert lines == [_sentence(c, k == 0) for k, c in enumerate(shown)], lines
        assert uses == list(recipe), (code, uses)  # the terms this mistake changes, marked
        changed = page.eval_on_selector_all(
            ".mg-feedback li.mg-term-changed", "ls => ls.map(l => l.textContent)"
        )
        assert [text.split(": ")[0] for text in changed] == [USES[u] for u in recipe if u != "p"]
        fail = diagnose_entry(graph, j, typed, expected, steps, what="backprop", calls=None)
        assert fail.failure.mistake == code  # the checker's name for the same number
        assert page.locator("input.mg-predict-input").get_attribute("data-node") == str(j)  # not accepted
    _type(page, 2.0)
    codes, lines, uses = _said(page)
    assert (
        codes == ["wrong-sum"] and lines == [_sentence("wrong-sum", True)] and uses == [None] * 3
    )  # no term marked

    # a new input: the page starts again from u(n) and evaluates the recipes at the new inputs
    page.fill(f"input.mg-box[data-input='u{j + 1}']", "-1.3")
    assert WORDS["predict_reset"] in page.text_content(".mg-feedback")
    z2, _ = _example(-1.3)
    _, expected2, steps2 = _engine(z2)
    _right_down_to(page, expected2, j)
    typed = Wrong("first-consumer", "ppx").value(list(steps2[j].terms))
    assert abs(typed - Wrong("first-consumer", "ppx").value(terms)) > 0.01  # a number of the new inputs
    _type(page, typed)
    codes, lines, _ = _said(page)
    assert codes == ["first-consumer"] and lines == [_sentence("first-consumer", True)]
    assert errors == []
    page.close()
