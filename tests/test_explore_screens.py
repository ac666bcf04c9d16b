"""The explorer on real graphs and real screens, in Debian's chromium (Playwright).

At 1280x800 and on a phone (390x844), on figure 6.10, a 40-node and a 400-node expression: the first view
is legible (text at least 9 px, not a thumbnail) and shows G's output on a wide screen, its inputs on a
phone; zoom and pan work (buttons, Ctrl+wheel, drag, two fingers) while the wheel and one finger scroll the
page; nothing overflows the page horizontally, every control has an accessible name, and the panel's
arithmetic, re-computed from the numbers it shows, holds. Predict mode accepts right entries and names the
mistake of a wrong one, its changed terms marked. No test asserts on timings.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 and 6.5.6, figure 6.10.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from conftest import CHROMIUM_AND_DOT
from gestures import ctrl_wheel, wheel_scrolls_the_page
from test_explore_browser import _big_graph

import viz
from micrograph import Graph, Value
from micrograph.families import chain
from viz.words import fmt

pytestmark = [
    *CHROMIUM_AND_DOT,
    pytest.mark.slow,
]
pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

SCREENS = {"desktop": (1280, 800), "phone": (390, 844)}
NUMBER = r"\(?-?\d[\d.]*(?:e[+-]\d+)?\)?"


def _figure_6_10() -> Value:
    z, _ = chain(3)
    return z


GRAPHS = {
    "figure_6_10": _figure_6_10,
    "nodes_40": lambda: _big_graph(40)[0],
    "nodes_400": lambda: _big_graph(400)[0],
}


def save_explorers(out: Path, graphs: Mapping[str, Callable[[], Value]]) -> dict[str, tuple[Path, Value]]:
    """Each graph's explorer saved in ``out`` as NAME.html: {NAME: (the page, its output z)}."""
    made = {}
    for name, make in graphs.items():
        z = make()
        made[name] = (viz.explore(z, max_nodes=1000).save(out / f"{name}.html"), z)
    return made


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Value]]:
    return save_explorers(tmp_path_factory.mktemp("explorer"), GRAPHS)


def _open(browser: Any, path: Path, screen: str, touch: bool = False) -> tuple[Any, Any, list[str]]:
    width, height = SCREENS[screen]
    context = browser.new_context(viewport={"width": width, "height": height}, has_touch=touch)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(path.resolve().as_uri())
    page.wait_for_selector(".mg-pane-g g[data-node]")
    return context, page, errors


_VISIBLE_TEXT = """pane => {
  const r = pane.getBoundingClientRect();
  return Array.from(pane.querySelectorAll("text")).filter(t => {
    const b = t.getBoundingClientRect();
    return b.width > 0 && b.left >= r.left && b.right <= r.right && b.top >= r.top && b.bottom <= r.bottom;
  }).map(t => parseFloat(t.getAttribute("font-size")) * t.getScreenCTM().a);
}"""


def _transform(page: Any, pane: str) -> tuple[float, float, float]:
    t = page.eval_on_selector(f"{pane} g.mg-zoom", "g => g.getAttribute('transform')")
    m = re.fullmatch(r"translate\((-?[\d.e+-]+),(-?[\d.e+-]+)\) scale\(([\d.e+-]+)\)", t)
    assert m, t
    return float(m.group(1)), float(m.group(2)), float(m.group(3))


def _no_overflow(page: Any) -> None:
    wide = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert wide <= 0
    cut = page.evaluate(
        """() => Array.from(document.querySelectorAll(".mg-algo, .mg-side, .mg-nav, .mg-tools, .mg-inputs"))
        .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.className)"""
    )
    assert cut == []


EVERY_VIEW = pytest.mark.parametrize(("graph", "screen"), [(g, s) for s in SCREENS for g in GRAPHS])
"""Each graph's page on each screen."""


@pytest.fixture
def view(browser: Any, pages: Any, graph: str, screen: str) -> Iterator[tuple[Value, Any]]:
    """The graph's explorer page opened on the screen: ``(z, page)``; no script error may happen in it."""
    path, z = pages[graph]
    context, page, errors = _open(browser, path, screen)
    yield z, page
    assert errors == []
    context.close()


@EVERY_VIEW
def test_first_view_is_legible_and_nothing_overflows(view: tuple[Value, Any], screen: str) -> None:
    z, page = view
    for pane in (".mg-pane-g", ".mg-pane-b"):
        sizes = page.eval_on_selector(pane, _VISIBLE_TEXT)
        assert len(sizes) >= 3, pane  # whole boxes in view, not a thumbnail
        assert min(sizes) >= 9.0 - 1e-6, (pane, min(sizes))
    # G above B on a phone; the panel below the drawings
    g_box = page.locator(".mg-pane-g").bounding_box()
    b_box = page.locator(".mg-pane-b").bounding_box()
    assert b_box["y"] >= g_box["y"] + g_box["height"] - 1
    if screen == "phone":
        side = page.locator(".mg-side").bounding_box()
        assert side["y"] >= b_box["y"] + b_box["height"] - 1 and side["width"] <= SCREENS[screen][0]
    _no_overflow(page)
    g = Graph(z)
    if screen == "desktop":  # the output u(n) is in the first view of G
        out = page.locator(f".mg-pane-g g[data-node='{len(g.nodes) - 1}']").bounding_box()
        assert g_box["x"] <= out["x"] and out["x"] + out["width"] <= g_box["x"] + g_box["width"] + 1
    else:
        _inputs_in_first_view(page, g)


def _inputs_in_first_view(page: Any, g: Graph) -> list[dict[str, float]]:
    """G's first view on a phone starts at the inputs: every variable's box is in the pane where the pane
    holds the box around them all, else the first variable's (u(1)'s, in the book's order); returns those."""
    pane = page.locator(".mg-pane-g").bounding_box()
    boxes = [page.locator(f".mg-pane-g g[data-node='{g.index[v]}']").bounding_box() for v in g.variables]
    left, top = min(b["x"] for b in boxes), min(b["y"] for b in boxes)
    right, bottom = max(b["x"] + b["width"] for b in boxes), max(b["y"] + b["height"] for b in boxes)
    held = right - left <= pane["width"] - 16 and bottom - top <= pane["height"] - 16
    shown = boxes if held else boxes[:1]
    for b in shown:
        assert pane["x"] - 1 <= b["x"] and b["x"] + b["width"] <= pane["x"] + pane["width"] + 1, (b, pane)
        assert pane["y"] - 1 <= b["y"] and b["y"] + b["height"] <= pane["y"] + pane["height"] + 1, (b, pane)
    return shown


@pytest.mark.parametrize("screen", list(SCREENS))
def test_zoom_pan_fit_and_the_g_b_toggles(browser: Any, pages: Any, screen: str) -> None:
    path, _ = pages["nodes_400"]
    context, page, errors = _open(browser, path, screen)
    k0 = _transform(page, ".mg-pane-g")[2]
    page.get_by_role("button", name="Zoom in").click()
    assert _transform(page, ".mg-pane-g")[2] == pytest.approx(k0 * 1.25)
    page.get_by_role("button", name="Zoom out").click()
    assert _transform(page, ".mg-pane-g")[2] == pytest.approx(k0)
    # drag the drawing with the mouse: it moves with the pointer
    box = page.locator(".mg-pane-g").bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    before = _transform(page, ".mg-pane-g")
    page.mouse.move(cx, cy)
    page.mouse.down()
    page.mouse.move(cx - 60, cy + 25, steps=5)
    page.mouse.up()
    after = _transform(page, ".mg-pane-g")
    assert after[0] == pytest.approx(before[0] - 60, abs=1) and after[1] == pytest.approx(
        before[1] + 25, abs=1
    )
    # the wheel scrolls the page, the drawing stays; Ctrl+wheel zooms the drawing
    wheel_scrolls_the_page(page, page.locator(".mg-pane-g"))
    assert _transform(page, ".mg-pane-g") == after
    ctrl_wheel(page, page.locator(".mg-pane-g"))
    page.wait_for_function(
        "k => parseFloat(document.querySelector('.mg-pane-g').dataset.scale) > k", arg=after[2]
    )
    # Fit: the whole drawing inside the pane; 1:1: Graphviz's points as CSS pixels
    page.get_by_role("button", name="Fit").click()
    drawing = page.locator(".mg-pane-g g.mg-zoom").bounding_box()
    pane = page.locator(".mg-pane-g").bounding_box()
    assert drawing["x"] >= pane["x"] - 1 and drawing["x"] + drawing["width"] <= pane["x"] + pane["width"] + 1
    assert (
        drawing["y"] >= pane["y"] - 1 and drawing["y"] + drawing["height"] <= pane["y"] + pane["height"] + 1
    )
    page.get_by_role("button", name="1:1").click()
    assert _transform(page, ".mg-pane-g")[2] == pytest.approx(4 / 3)
    # G only, B only, both
    page.get_by_role("button", name="Show G", exact=True).click()
    assert page.is_visible(".mg-pane-g") and not page.is_visible(".mg-pane-b")
    assert page.get_attribute("button[aria-label='Show G']", "aria-pressed") == "true"
    page.get_by_role("button", name="Show B", exact=True).click()
    assert page.is_visible(".mg-pane-b") and not page.is_visible(".mg-pane-g")
    sizes = page.eval_on_selector(".mg-pane-b", _VISIBLE_TEXT)
    assert sizes and min(sizes) >= 9.0 - 1e-6
    page.get_by_role("button", name="Show G and B").click()
    assert page.is_visible(".mg-pane-g") and page.is_visible(".mg-pane-b")
    _no_overflow(page)
    assert errors == []
    context.close()


def test_one_finger_scrolls_the_page_two_pan_and_pinch_on_a_phone(browser: Any, pages: Any) -> None:
    path, _ = pages["nodes_400"]
    context, page, errors = _open(browser, path, "phone", touch=True)
    box = page.locator(".mg-pane-g").bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    before = _transform(page, ".mg-pane-g")
    cdp = context.new_cdp_session(page)

    def touch(kind: str, points: list[tuple[float, float]]) -> None:
        at = [{"x": x, "y": y, "id": k + 1} for k, (x, y) in enumerate(points)]
        cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": [] if kind == "touchEnd" else at})

    # one finger swiping up over the drawing scrolls the page, as anywhere else on it
    touch("touchStart", [(cx, cy)])
    for step in range(1, 11):
        touch("touchMove", [(cx, cy - 15 * step)])
    touch("touchEnd", [])
    page.wait_for_function("() => window.scrollY > 50")
    scrolled = page.evaluate("window.scrollY")
    for _ in range(40):  # until the swipe's fling has stopped (at most 10 s)
        page.wait_for_timeout(250)
        if page.evaluate("window.scrollY") == scrolled:
            break
        scrolled = page.evaluate("window.scrollY")
    assert _transform(page, ".mg-pane-g") == before
    # two fingers moving together pan the drawing with them
    box = page.locator(".mg-pane-g").bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    touch("touchStart", [(cx - 30, cy), (cx + 30, cy)])
    for step in range(1, 6):
        touch("touchMove", [(cx - 30 - 12 * step, cy - 6 * step), (cx + 30 - 12 * step, cy - 6 * step)])
    touch("touchEnd", [])
    after = _transform(page, ".mg-pane-g")
    assert after[0] == pytest.approx(before[0] - 60, abs=1) and after[1] == pytest.approx(
        before[1] - 30, abs=1
    )
    assert page.evaluate("window.scrollY") == scrolled

    # two fingers moving apart: a pinch zooms in, by the ratio of their distances
    def fingers(kind: str, spread: float) -> None:
        touch(kind, [(cx - spread, cy), (cx + spread, cy)])

    fingers("touchStart", 20)
    for spread in (30, 40, 50, 60):
        fingers("touchMove", spread)
    fingers("touchEnd", 60)
    assert _transform(page, ".mg-pane-g")[2] == pytest.approx(after[2] * 3, rel=0.05)
    assert errors == []
    context.close()


def test_every_control_has_an_accessible_name(browser: Any, pages: Any) -> None:
    path, z = pages["figure_6_10"]
    context, page, errors = _open(browser, path, "desktop")
    for name in ("Zoom in", "Zoom out", "Fit", "1:1", "Show G", "Show B", "Show G and B", "Next step",
                 "Previous step"):  # fmt: skip
        assert page.get_by_role("button", name=name, exact=True).count() == 1, name
    g = Graph(z)
    for v in g.variables:
        who = f"{g.name(v)} ({v.label})"
        assert page.get_by_role("slider", name=f"value of {who}").count() == 1
        assert page.get_by_role("spinbutton", name=f"value of {who}").count() == 1
    unnamed = page.evaluate(
        """() => Array.from(document.querySelectorAll("button, input")).filter(e =>
           !(e.getAttribute("aria-label") || (e.labels && e.labels.length) || e.textContent.trim())).length"""
    )
    assert unnamed == 0
    page.get_by_role("button", name="Previous step").click()
    assert page.get_attribute(".mg-explorer", "data-frame") == str(2 * len(g.nodes) + 1)
    assert errors == []
    context.close()


def _terms_hold(page: Any) -> int:
    """Re-compute the panel's arithmetic from the numbers it shows; return how many terms were checked."""
    terms = page.eval_on_selector_all(".mg-sum .mg-term", "ls => ls.map(l => l.textContent)")
    products, said = [], []
    for text in terms:
        g, d, p = re.findall(rf"= ({NUMBER}) × ({NUMBER}) = ({NUMBER})", text)[0]
        factors = float(g.strip("()")) * float(d.strip("()"))
        assert factors == pytest.approx(float(p), rel=2e-3, abs=1e-12), text
        products.append(float(p))
        said.append(f"({p})" if p.startswith("-") else p)  # an addend of the sum, bracketed when negative
    total = page.text_content(".mg-sum .mg-total")
    if products:  # grad_table[u(j)] ← the products added = the entry (one term: the entry alone)
        m = re.fullmatch(rf"grad_table\[u\d+\] ← (?:(.+) = )?({NUMBER})", total)
        assert m and (m.group(1) or m.group(2)).split(" + ") == said, total
        shown = float(m.group(2))
        assert sum(products) == pytest.approx(shown, rel=2e-3 * len(products), abs=1e-9 * len(products)), (
            total
        )
    return len(terms)


@EVERY_VIEW
def test_the_panels_arithmetic_holds_and_follows_the_step(view: tuple[Value, Any]) -> None:
    z, page = view
    g = Graph(z)
    busiest = max(range(len(g.nodes) - 1), key=lambda j: len(g.consumer_edges[j]))
    checked = 0
    chosen = sorted({0, busiest, len(g.nodes) - 2})
    for j in chosen:
        page.locator(f".mg-pane-g g[data-node='{j}']").dispatch_event("click")
        assert page.get_attribute(".mg-sum", "data-node") == str(j)
        checked += _terms_hold(page)
    assert checked == sum(len(g.consumer_edges[j]) for j in chosen) >= 2
    # back at the first step of Algorithm 6.2 the panel says the entry is not filled yet
    seed = len(g.nodes) + 2  # one frame per node in Algorithm 6.1, its return, then grad_table[u(n)] <- 1
    page.locator(".mg-title").click()  # the page has the keys (on a focused node, ← → move along its edges)
    page.keyboard.press("Home")
    for _ in range(seed - 1):
        page.keyboard.press("ArrowRight")
    assert page.get_attribute(".mg-explorer", "data-frame") == str(seed)
    page.locator(f".mg-pane-g g[data-node='{len(g.nodes) - 2}']").dispatch_event("click")
    assert f"not filled yet at step {seed}: Algorithm 6.2 fills it at step {seed + 1}" in page.text_content(
        ".mg-sum"
    )
    assert page.text_content(f".mg-pane-g g[data-node='{len(g.nodes) - 2}'] text.mg-grad") == "grad —"
    page.keyboard.press("ArrowRight")  # the next step fills it: the panel follows
    assert _terms_hold(page) >= 1


def test_a_domain_message_shows_the_value_as_the_page_does(browser: Any, tmp_path: Path) -> None:
    x = Value(2.0, label="x")
    z = (x.log() * 3.0).tanh()
    path = viz.explore(z).save(tmp_path / "log.html")
    context, page, errors = _open(browser, path, "phone")
    g = Graph(z)
    page.evaluate(
        """name => { const s = document.querySelector(`input.mg-slider[data-input="${name}"]`);
        s.value = "-1"; s.dispatchEvent(new Event("input", {bubbles: true})); }""",
        g.name(x),
    )
    status = page.text_content(".mg-status")
    assert "log(-1.000) is outside the domain of log (x > 0)" in status and "((" not in status
    # no text in a box is wider than its box
    clipped = page.evaluate(
        """() => Array.from(document.querySelectorAll(".mg-pane g[data-node]")).filter(g => {
          const box = g.querySelector("polygon").getBBox();
          return Array.from(g.querySelectorAll("text")).some(t => { const b = t.getBBox();
            return b.x < box.x - 0.5 || b.x + b.width > box.x + box.width + 0.5; });
        }).length"""
    )
    assert clipped == 0
    _no_overflow(page)
    assert errors == []
    context.close()


def test_predict_mode_accepts_right_entries_and_diagnoses_a_wrong_one(browser: Any, tmp_path: Path) -> None:
    w = Value(0.6, label="w")
    z = (w * w + w.tanh()).tanh()  # w has three terms: two through w * w, one through tanh
    z.label = "z"
    path = viz.explore(z, predict=True).save(tmp_path / "predict.html")
    g = Graph(z)
    table = g.backprop()
    steps: list[Any] = []
    g.backprop(observe=steps.append)
    context, page, errors = _open(browser, path, "desktop")
    assert "grad ?" in page.inner_text(".mg-pane-g")  # the grad_table is hidden
    assert all(
        o == "—" for o in page.eval_on_selector_all("output.mg-grad-of", "os => os.map(o => o.textContent)")
    )
    box = page.locator("input.mg-predict-input")
    j_w = g.index[w]
    for j in range(len(g.nodes) - 1, -1, -1):
        assert box.get_attribute("data-node") == str(j)
        if j == j_w:  # a wrong entry: the sum without the tanh term, the terms of w * w alone
            step = next(s for s in steps if s.j == j)
            left = next(t for t in step.terms if g.nodes[t.i].op.name == "tanh")  # type: ignore[union-attr]
            box.fill(repr(table[w] - left.product))
            page.get_by_role("button", name="Check").click()
            feedback = page.text_content(".mg-feedback")
            assert "Mistake first-consumer: the first consumer's terms only." in feedback, feedback
            marked = page.eval_on_selector_all("li.mg-term-changed", "ls => ls.map(l => l.textContent)")
            assert len(marked) == 1 and marked[0].startswith("left out:") and f"∂u{left.i + 1}/" in marked[0]
            assert box.get_attribute("data-node") == str(j)  # not accepted
        box.fill(fmt(table[g.nodes[j]]))
        box.press("Enter")
        assert "Right" in page.text_content(".mg-feedback")
        grad_text = page.text_content(f".mg-pane-g g[data-node='{j}'] text.mg-grad")
        assert grad_text == f"grad {fmt(table[g.nodes[j]])}"
    assert "Every entry is right" in page.text_content(".mg-predict")
    assert page.eval_on_selector_all("output.mg-grad-of", "os => os.map(o => o.textContent)") == [
        fmt(table[w])
    ]
    assert errors == []
    context.close()
