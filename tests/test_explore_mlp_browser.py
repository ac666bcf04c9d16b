"""The explorer of an MLP by layers and neurons in a real headless browser (Debian's chromium, Playwright).

What the page shows is compared with the engine: the numbers in a layer's box are the values and grad_table
entries of its a(k) nodes (``Graph.forward``, ``Graph.backprop``) as ``viz.words.fmt`` writes them, before
and after a slider moves; a click and a key open a neuron into exactly its scalars (the nodes of its group);
a group of Iris's network opens legible (its labels at 9 px or more, at 1280x800 and 390x844) in panes that
pan and zoom.
The screenshots are written to the test's directory (run with ``--basetemp`` to keep them).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.4 and 6.5.7.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import CHROMIUM_AND_DOT
from gestures import ctrl_wheel
from test_explore_screens import _VISIBLE_TEXT, SCREENS

import viz
from micrograph import Graph, datasets, nn
from viz.groups import group_graph
from viz.words import fmt

pytestmark = [
    *CHROMIUM_AND_DOT,
    pytest.mark.slow,
]
pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    model = nn.MLP(2, [3, 2], activation="tanh", seed=4)
    cost = nn.forward_minibatch(model, [[0.5, -1.0], [1.5, 0.25]], [1, 0], l2=0.01)
    path = tmp_path_factory.mktemp("mlp") / "net.html"
    viz.explore(cost.J, level="layers").save(path)
    return {"model": model, "cost": cost, "path": path, "graph": Graph(cost.J)}


def _open(browser: Any, path: Path) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(path.resolve().as_uri())
    page.wait_for_selector("g[data-group]")
    return page, errors


def _rows(page: Any, label: str) -> list[str]:
    return page.evaluate(
        """(label) => Array.from(document.querySelectorAll(`.mg-pane-g g[data-group][aria-label="${label}"]
             text.mg-row`)).map(t => t.textContent)""",
        label,
    )


def _expected_rows(net: dict[str, Any]) -> tuple[str, str]:
    """Layer 1's first rows as the engine computes them: a(1)'s values and their grad_table entries."""
    G = net["graph"]
    table = G.backprop()
    a = sorted((e.a[1][m] for e in net["cost"].examples for m in range(3)), key=G.index.__getitem__)
    values = "a(1) = " + ", ".join(fmt(v.data) for v in a[:4]) + ", … (6 in all)"
    grads = "∂J/∂a(1) = " + ", ".join(fmt(table[v]) for v in a[:4]) + ", … (6 in all)"
    return values, grads


def test_the_network_by_layers_shows_the_engines_numbers(
    browser: Any, network: dict[str, Any], tmp_path: Path
) -> None:
    page, errors = _open(browser, network["path"])
    labels = page.evaluate(
        "() => Array.from(document.querySelectorAll('.mg-pane-g g[data-group]'))"
        ".map(g => g.getAttribute('aria-label'))"
    )
    assert labels == [
        "inputs x = h(0)", "weights W(1) of layer 1", "biases b(1) of layer 1", "layer 1",
        "weights W(2) of layer 2", "biases b(2) of layer 2", "layer 2",
        "L: the loss of each example and their mean", "λΩ(θ): the regularizer", "J = L + λΩ(θ): the cost",
    ]  # fmt: skip
    assert page.locator(".mg-pane-b g[data-bgroup]").count() >= 5  # B by the same layers
    rows = _rows(page, "layer 1")
    values, grads = _expected_rows(network)
    assert values in rows and grads in rows
    page.screenshot(path=str(tmp_path / "by_layers.png"), full_page=True)
    # a slider moves the first input: the boxes show the engine's numbers at the new value
    G, x = network["graph"], network["cost"].examples[0].h[0][0]
    moved = page.evaluate(
        """(name) => { const s = document.querySelector(`input.mg-slider[data-input="${name}"]`);
        s.value = "0.8"; s.dispatchEvent(new Event("input", {bubbles: true}));
        return parseFloat(s.value); }""",
        f"u{G.index[x] + 1}",
    )
    G.forward({x: moved})  # Algorithm 6.1 at the slider's value
    try:
        values, grads = _expected_rows(network)
        rows = _rows(page, "layer 1")
        assert values in rows and grads in rows
    finally:
        G.forward({x: 0.5})
    assert errors == []
    page.close()


def test_a_click_and_a_key_open_a_neuron_into_its_scalars(
    browser: Any, network: dict[str, Any], tmp_path: Path
) -> None:
    page, errors = _open(browser, network["path"])
    page.click("button[data-level=neurons]")
    page.wait_for_selector("g[data-group][aria-label='neuron 1 of layer 1 · example 1']")
    assert page.get_attribute("button[data-level=neurons]", "aria-pressed") == "true"
    page.click(".mg-fit")  # the whole drawing in its pane: every box can be clicked
    grouping = group_graph(network["graph"], "neurons")

    def members(label: str) -> list[int]:
        k = int(page.get_attribute(f".mg-pane-g g[data-group][aria-label='{label}']", "data-group"))
        return grouping.groups[k].members

    def shown() -> list[int]:
        return sorted(
            page.evaluate(
                "() => Array.from(document.querySelectorAll('.mg-inside g[data-node]'))"
                ".map(g => +g.getAttribute('data-node'))"
            )
        )

    assert page.locator(".mg-inside").is_hidden()
    page.click(".mg-pane-g g[data-group][aria-label='neuron 1 of layer 1 · example 1']")  # a click
    page.wait_for_selector(".mg-inside:not([hidden])")
    assert shown() == members("neuron 1 of layer 1 · example 1")
    assert "neuron 1 of layer 1 · example 1" in page.text_content(".mg-inside-title")
    assert page.locator(".mg-inside .mg-pane-b g[data-bnode]").count() > 0  # and its nodes of B
    page.screenshot(path=str(tmp_path / "neuron_opened.png"), full_page=True)
    page.keyboard.press("Escape")
    assert page.locator(".mg-inside").is_hidden()
    page.focus(".mg-pane-g g[data-group][aria-label='neuron 1 of layer 2 · example 2']")  # a key
    page.keyboard.press("Enter")
    page.wait_for_selector(".mg-inside:not([hidden])")
    assert shown() == members("neuron 1 of layer 2 · example 2")
    # clicking a scalar inside shows its grad_table entry as the book's sum
    first = shown()[0]
    page.click(f".mg-inside g[data-node='{first}']")
    assert page.get_attribute(".mg-sum", "data-node") == str(first)
    assert errors == []
    page.close()


@pytest.fixture(scope="module")
def iris(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's network on Iris, explored by layers: W(2) holds 24 scalars, layer 1 144 (and 112 of B)."""
    X, y = datasets.iris()
    model = nn.MLP(4, [8, 3], activation="tanh", seed=0)
    cost = nn.forward_minibatch(model, X[:2], y[:2], l2=1e-3)
    path: Path = viz.explore(cost.J, level="layers").save(tmp_path_factory.mktemp("iris") / "iris.html")
    return path


@pytest.mark.parametrize("screen", list(SCREENS))
def test_a_group_opens_legible_in_panes_that_pan_and_zoom(
    browser: Any, iris: Path, screen: str, tmp_path: Path
) -> None:
    width, height = SCREENS[screen]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(iris.resolve().as_uri())
    page.wait_for_selector("g[data-group]")
    for label in ("weights W(2) of layer 2", "layer 1"):
        page.focus(f".mg-pane-g g[data-group][aria-label='{label}']")  # Tab to the box, then Enter
        page.keyboard.press("Enter")
        page.wait_for_selector(".mg-inside:not([hidden])")
        assert f"Inside {label}:" in page.text_content(".mg-inside-title")
        for pane in (".mg-inside .mg-pane-g", ".mg-inside .mg-pane-b"):
            sizes = page.eval_on_selector(pane, _VISIBLE_TEXT)  # the labels in view, in CSS pixels
            assert len(sizes) >= 3, (label, pane)  # whole boxes, not a thumbnail
            assert min(sizes) >= 9.0 - 1e-6, (label, pane, min(sizes))
        page.locator(".mg-inside").screenshot(path=str(tmp_path / f"{screen}_{label.split()[0]}.png"))
        # the rest is a pan or a zoom away, with the main panes' gestures: Ctrl+wheel zooms in
        scale = float(page.get_attribute(".mg-inside .mg-pane-g", "data-scale"))
        ctrl_wheel(page, page.locator(".mg-inside .mg-pane-g"))
        page.wait_for_function(
            "k => parseFloat(document.querySelector('.mg-inside .mg-pane-g').dataset.scale) > k", arg=scale
        )
        page.keyboard.press("Escape")
        assert page.locator(".mg-inside").is_hidden()
    assert errors == []
    context.close()
