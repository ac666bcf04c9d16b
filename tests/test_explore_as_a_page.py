"""The explorer's page behaves as a page, in Debian's chromium (Playwright), at 1280x800 and 390x844.

On a sum of 60 products (361 nodes) and a 60-deep nest of tanh (302 nodes): the wheel over a drawing
scrolls the page and leaves the drawing as it was, Ctrl+wheel zooms it; nothing but the page scrolls; a
phone's first view of G shows its inputs. A keyboard alone walks the drawings: every node of G and B is
focusable, in reading order, named by its box (u(i), its value); Tab reaches u(1), Enter opens its
grad_table entry as the sum the engine computes, the arrows move along the edges (← to an input, → to a
consumer, ↓ to the next consumer), a ring shows the focus, and a node of B that is an entry opens its node's
sum. No test asserts on timings.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 and 6.5.6.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest
from conftest import CHROMIUM_AND_DOT
from gestures import ctrl_wheel, wheel_scrolls_the_page
from test_explore_screens import SCREENS, _inputs_in_first_view, _open, _transform, save_explorers

from micrograph import Graph, Value
from micrograph.expr import build
from viz.words import fmt

pytestmark = [
    *CHROMIUM_AND_DOT,
    pytest.mark.slow,
]
pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

SUM_60 = " + ".join(f"tanh(x*{k} + y)*y" for k in range(1, 61))
"""A sum of 60 products: x and y each feed 60 nodes."""

NESTED_60 = "tanh(x*y + x*1)"
for _k in range(2, 61):
    NESTED_60 = f"tanh({NESTED_60}*y + x*{_k})"
"""tanh(...tanh(tanh(x*y + x*1)*y + x*2)...*y + x*60), 60 deep."""

GRAPHS = {"sum_60": SUM_60, "nested_60": NESTED_60}


def graph(name: str) -> Value:
    return build(GRAPHS[name], {"x": Value(0.1, label="x"), "y": Value(0.2, label="y")})


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Value]]:
    return save_explorers(
        tmp_path_factory.mktemp("explorer"), {name: partial(graph, name) for name in GRAPHS}
    )


SCROLLED_INSIDE = """() => Array.from(document.querySelectorAll("body *")).filter(e => {
  const s = getComputedStyle(e);
  return (e.scrollHeight > e.clientHeight + 1 && /(auto|scroll)/.test(s.overflowY)) || e.scrollTop > 0;
}).map(e => e.className || e.tagName)"""
"""Every element that scrolls inside the page (the page itself is not one of them)."""


def _focused(page: Any) -> dict[str, Any]:
    return page.evaluate(
        """() => { const e = document.activeElement;
        return { node: e.getAttribute("data-node"), role: e.getAttribute("role"),
                 label: e.getAttribute("aria-label"), ring: e.querySelector("rect.mg-ring") !== null }; }"""
    )


@pytest.mark.parametrize("screen", list(SCREENS))
@pytest.mark.parametrize("name", list(GRAPHS))
def test_the_wheel_scrolls_the_page_and_ctrl_wheel_zooms(
    browser: Any, pages: Any, name: str, screen: str
) -> None:
    path, _ = pages[name]
    context, page, errors = _open(browser, path, screen)
    assert page.evaluate(SCROLLED_INSIDE) == []
    for pane in (".mg-pane-g", ".mg-pane-b"):
        page.locator(pane).scroll_into_view_if_needed()
        before = {p: _transform(page, p) for p in (".mg-pane-g", ".mg-pane-b")}
        wheel_scrolls_the_page(page, page.locator(pane))
        assert {p: _transform(page, p) for p in before} == before
        page.locator(pane).scroll_into_view_if_needed()
        ctrl_wheel(page, page.locator(pane))
        page.wait_for_function(
            "([p, k]) => parseFloat(document.querySelector(p).dataset.scale) > k", arg=[pane, before[pane][2]]
        )
        k = _transform(page, pane)[2]
        assert k == pytest.approx(before[pane][2] * 2**0.3, rel=1e-3)  # as a button does, not 4 times
        other = ".mg-pane-b" if pane == ".mg-pane-g" else ".mg-pane-g"
        assert _transform(page, other) == before[other]
    assert page.evaluate(SCROLLED_INSIDE) == []
    assert errors == []
    context.close()


@pytest.mark.parametrize("name", list(GRAPHS))
def test_a_phones_first_view_of_g_shows_its_inputs(browser: Any, pages: Any, name: str) -> None:
    path, z = pages[name]
    context, page, errors = _open(browser, path, "phone")
    g = Graph(z)
    _inputs_in_first_view(page, g)
    if name == "sum_60":  # x and y lie side by side: both in the window's first view
        for v in g.variables:
            box = page.locator(f".mg-pane-g g[data-node='{g.index[v]}']").bounding_box()
            assert 0 <= box["x"] and box["x"] + box["width"] <= SCREENS["phone"][0], v.label
            assert 0 <= box["y"] and box["y"] + box["height"] <= SCREENS["phone"][1], v.label
    assert errors == []
    context.close()


@pytest.mark.parametrize("screen", list(SCREENS))
def test_a_keyboard_alone_walks_the_drawing(browser: Any, pages: Any, screen: str) -> None:
    path, z = pages["sum_60"]
    g = Graph(z)
    table = g.backprop()
    context, page, errors = _open(browser, path, screen)
    # every node of G and of B is focusable, G's in the order u(1)..u(n)
    order = page.eval_on_selector_all(
        ".mg-pane-g g[data-node]", "gs => gs.map(g => +g.getAttribute('data-node'))"
    )
    assert order == sorted(order) and len(order) == len(g.nodes)
    assert page.locator(".mg-pane-g g[data-node][tabindex='0']").count() == len(g.nodes)
    in_b = page.locator(".mg-pane-b g[data-bnode]").count()
    assert in_b > 0 and page.locator(".mg-pane-b g[data-bnode][tabindex='0']").count() == in_b
    if screen == "desktop":  # on a phone the help line is left out; the hint is there
        help_text = page.text_content(".mg-help")
        assert "← goes to an input (a parent), → to a consumer" in help_text and "Ctrl+wheel" in help_text
    assert "Tab to it and press Enter" in page.text_content(".mg-sum")
    # Tab from the top of the page: the first node reached is u(1), named by its box
    for _ in range(40):
        page.keyboard.press("Tab")
        if _focused(page)["node"] is not None:
            break
    x = g.nodes[0]
    seen = _focused(page)
    assert seen["node"] == "0" and seen["role"] == "button" and seen["ring"]
    assert seen["label"] == f"x (u1), input, data {fmt(x.data)}, grad {fmt(table[x])}"
    # Enter opens its grad_table entry: the engine's sum over its consumers
    page.keyboard.press("Enter")
    assert page.get_attribute(".mg-sum", "data-node") == "0"
    assert page.text_content(".mg-sum-title") == f"∂{g.name(z)}/∂u1 (x) = grad_table[u1]"
    assert page.locator(".mg-sum .mg-term").count() == len(g.consumer_edges[0])
    steps: list[Any] = []
    g.backprop(observe=steps.append)
    terms = next(s for s in steps if s.j == 0).terms  # u1's sum, as the engine added it
    addends = " + ".join(f"({fmt(t.product)})" if t.product < 0 else fmt(t.product) for t in terms)
    said = (
        f"grad_table[u1] ← {addends} = {fmt(table[x])}"
        if len(terms) > 1
        else f"grad_table[u1] ← {fmt(table[x])}"
    )
    assert page.text_content(".mg-sum .mg-total") == said
    # → to its first consumer, ↓ to the next, ← back to the first's argument 1 (u(1) again)
    consumers = sorted({c for c, _ in g.consumer_edges[0]})
    page.keyboard.press("ArrowRight")
    first = _focused(page)
    c = g.nodes[consumers[0]]
    assert first["node"] == str(consumers[0]) and first["ring"]
    assert (
        first["label"].startswith(f"u{consumers[0] + 1}, u1 × u") and f"data {fmt(c.data)}" in first["label"]
    )
    page.keyboard.press("ArrowDown")
    assert _focused(page)["node"] == str(consumers[1])
    page.keyboard.press(" ")  # Space opens it as Enter does
    assert page.get_attribute(".mg-sum", "data-node") == str(consumers[1])
    page.keyboard.press("ArrowLeft")
    assert _focused(page)["node"] == "0"
    # the focused node is in its pane's view (panned there when it was out of view)
    page.keyboard.press("ArrowRight")
    node = page.evaluate("document.activeElement.getBoundingClientRect().toJSON()")
    pane = page.locator(".mg-pane-g").bounding_box()
    assert pane["x"] - 1 <= node["x"] and node["x"] + node["width"] <= pane["x"] + pane["width"] + 1
    assert page.get_attribute(".mg-explorer", "data-frame") == str(2 * len(g.nodes) + 2)  # no step taken
    # a node of B that is a grad_table entry (∂z/∂x) opens x's sum, from the keyboard as by a click
    entry = page.locator(".mg-pane-b g[data-bnode][role='button']", has_text="/∂x").first
    entry.focus()
    assert _focused(page)["label"].startswith(f"∂{g.name(z)}/∂x")
    page.keyboard.press("Enter")
    assert page.get_attribute(".mg-sum", "data-node") == "0"
    assert errors == []
    context.close()
