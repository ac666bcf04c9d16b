"""The static site (``micrograph site``) in Debian's chromium: built once, served on localhost, offline.

The site is built by the module's fixture (``npm ci`` from the committed lockfile, the wheels by pip); every
request that leaves localhost is blocked, so the page must hold every file it needs. A lesson stepped in the
page shows the same text, step for step, as ``python -m lessons``; an exercise checked in the page (the
student's code in a Web Worker, the judge in the page's Python) gets the same report as
``micrograph exercise check`` (tests/test_site_exercises.py). The times measured are printed (``-s`` shows
them), never asserted.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import run_micrograph
from site_browser import READY_MS, OfflinePages
from site_page import expect

import lessons
from lessons.publish import site, swap
from lessons.publish.swap import SITE
from micrograph import Graph, Value
from micrograph.nn import MLP, History
from viz import charts

ROOT = Path(__file__).resolve().parent.parent
POINTED = "() => { const e = document.activeElement; return [e.id, e.selectionStart, e.selectionEnd]; }"


@pytest.mark.slow
def test_site_within_budget(site_dir: Path) -> None:
    assert site.site_size(site_dir) <= site.BUDGET
    names = {p.relative_to(site_dir).as_posix() for p in site_dir.rglob("*") if p.is_file()}
    assert {
        "index.html",
        "loading.js",
        "app.js",
        "worker.js",
        "vendor.js",
        "manifest.json",
        "pyodide/pyodide.asm.wasm",
    } <= names
    # the terms of every npm package shipped (Pyodide, and each one esbuild put into vendor.js) travel with it
    index = (site_dir / "licenses" / "index.txt").read_text().splitlines()[2:]
    listed = {line.split()[0]: line for line in index}
    assert {"pyodide", "@viz-js/viz", "codemirror", "@observablehq/plot", "d3-zoom"} <= set(listed)
    for line in index:
        target = line.rsplit(": ", 1)[1]
        assert target.endswith(".txt") or "github.com" in target, line
        if target.endswith(".txt"):
            assert (site_dir / "licenses" / target).stat().st_size > 100, line
    assert "esbuild" not in listed  # the build's tool, not shipped
    manifest = json.loads((site_dir / "manifest.json").read_text())
    assert (site_dir / "wheels" / manifest["micrograph"]).is_file()
    assert any(w.startswith("graphviz-") for w in manifest["wheels"])


def _python_lesson_steps(n: int, width: int, *, page: bool = False) -> list[str]:
    """Each step's text as ``python -m lessons N`` prints it in a terminal ``width + 1`` columns wide (the
    page wraps its text to the columns its box holds, measured there); with ``page``, each question's way
    to answer in the page's words (its Answer box), the one line that differs by place."""
    env = {**os.environ, "COLUMNS": str(width + 1), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "lessons", str(n)], capture_output=True, text=True,
                          env=env, timeout=300, check=True, stdin=subprocess.DEVNULL)  # fmt: skip
    blocks = [b.rstrip("\n") for b in done.stdout.split("=" * (width + 1) + "\n")[1:-1]]
    if page:
        stepper = lessons.start(n)
        for k in range(len(blocks)):
            if stepper.question is not None:
                blocks[k] = stepper.show(width=width, keys="", place="page").rstrip("\n")
            stepper.next()
    return blocks


def _columns(page: Any) -> int:
    """The columns the page asked Python to wrap the step's text to."""
    return int(page.locator("#lesson-text").get_attribute("data-columns"))


def _step_through(page: Any) -> list[str]:
    texts = []
    while True:
        texts.append(page.locator("#lesson-text").text_content().rstrip("\n"))
        if "(the last)" in page.locator("#where").text_content():
            return texts
        before = page.locator("#lesson-text").get_attribute("data-index")
        page.get_by_role("button", name="Next step").click()
        page.wait_for_function(
            f"() => document.getElementById('lesson-text').dataset.index !== '{before}'", timeout=60_000
        )


@pytest.mark.slow
def test_lesson_2_to_its_end_as_python_prints_it(page: Any) -> None:
    page.get_by_label("Lesson", exact=True).select_option("2")
    page.wait_for_function("() => document.getElementById('lesson-text').textContent.startsWith('Lesson 2')")
    expected = _python_lesson_steps(2, _columns(page), page=True)
    shown = _step_through(page)
    assert len(shown) == len(expected) >= 5
    for k, (ours, theirs) in enumerate(zip(shown, expected), start=1):
        assert ours == theirs, f"step {k} differs"
    assert page.locator("#lesson-picture svg").count() == 1  # the last step's drawing, laid out in the page


@pytest.mark.slow
def test_lesson_on_the_students_expression(page: Any) -> None:
    page.get_by_label("Lesson", exact=True).select_option("2")
    page.locator("#lessons").get_by_label("Expression").fill("x*y + exp(x)")
    page.locator("#lessons").get_by_label("Values").fill("x=1, y=-2")
    page.get_by_role("button", name="Start lesson").click()
    page.wait_for_function("() => document.getElementById('lesson-text').textContent.includes('exp(x)')")
    stepper = lessons.start(2, expr="x*y + exp(x)", at={"x": 1.0, "y": -2.0})
    shown = _step_through(page)
    assert len(shown) == len(stepper)
    for k, text in enumerate(shown, start=1):
        stepper.goto(k)
        same = stepper.show(width=_columns(page), keys="", place="page").rstrip("\n")
        assert text == same, f"step {k} differs"
    assert "expr=x*y" in page.url.replace("%2A", "*").replace("+", " ").replace("%2B", "+")
    page.locator("#lessons").get_by_label("Expression").fill("log(x")
    page.get_by_role("button", name="Start lesson").click()
    page.wait_for_function("() => document.getElementById('lesson-note').textContent.length > 0")
    assert page.locator("#lesson-note").text_content() == "syntax error: '(' was never closed at column 4"
    assert page.evaluate(POINTED) == [
        "expr",
        3,
        4,
    ]  # the cursor on the "(" of "log(x", as the terminal's caret


@pytest.mark.slow
def test_a_link_opens_the_same_lesson_and_the_same_graph(page: Any) -> None:
    """The expression and its values live in the URL: a link opened elsewhere shows the same lesson step on
    the same expression, and the explorer on the same graph and values."""
    page.get_by_label("Lesson", exact=True).select_option("1")
    page.locator("#lessons").get_by_label("Expression").fill("sin(a)*b")
    page.locator("#lessons").get_by_label("Values").fill("a=0.3, b=-1.5")
    page.get_by_role("button", name="Start lesson").click()
    page.wait_for_function("() => document.getElementById('lesson-text').textContent.includes('sin(a)')")
    lesson_link = page.url
    page.get_by_role("button", name="Explorer").click()
    page.locator("#explorer").get_by_label("Expression").fill("exp(u)*v + u")
    page.locator("#explorer").get_by_label("Values").fill("u=0.25, v=2")
    page.get_by_role("button", name="Draw G and B").click()
    page.frame_locator("#explorer-frame").locator("g[data-node]").first.wait_for(timeout=60_000)
    explorer_link = page.url
    stepper = lessons.start(1, expr="sin(a)*b", at={"a": 0.3, "b": -1.5})
    for link in (lesson_link, explorer_link):
        other = page.context.new_page()
        other.goto(link)
        other.wait_for_selector("body[data-ready=true]", timeout=READY_MS)
        if link == lesson_link:
            shown = other.locator("#lesson-text").text_content()
            same = stepper.show(width=_columns(other), keys="", place="page").rstrip("\n")
            assert shown.rstrip("\n") == same
            assert other.locator("#lessons").get_by_label("Values").input_value() == "a=0.3, b=-1.5"
        else:
            assert other.locator("#explorer").is_visible()
            frame = other.frame_locator("#explorer-frame")
            frame.locator("g[data-node]").first.wait_for(timeout=60_000)
            u, v = Value(0.25, label="u"), Value(2.0, label="v")
            assert frame.locator("g[data-node]").count() == len(Graph(u.exp() * v + u).nodes)
            assert frame.get_by_role("slider", name="value of u1 (u)").input_value() == "0.25"
            assert frame.get_by_role("slider", name="value of u2 (v)").input_value() == "2"
        other.close()


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def _same_text(page_text: str, python_text: str) -> bool:
    """The same text, number for number, but where both are roundoff (below 1e-6 in size: a finite
    difference's error): the browser's libm (WebAssembly's musl) and the machine's may differ in the last
    bit of exp or tanh, and such a number shows it."""
    if _NUMBER.sub("#", page_text) != _NUMBER.sub("#", python_text):
        return False
    pairs = zip(_NUMBER.findall(page_text), _NUMBER.findall(python_text))
    return all(a == b or (abs(float(a)) < 1e-6 and abs(float(b)) < 1e-6) for a, b in pairs)


@pytest.mark.slow
def test_explorer_of_a_typed_expression(page: Any) -> None:
    from micrograph import Graph, Value
    from viz.words import fmt

    page.get_by_role("button", name="Explorer").click()
    section = page.locator("#explorer")
    section.get_by_label("Expression").fill("tanh(x*y + exp(x))")
    section.get_by_label("Values").fill("x=1, y=2")
    page.get_by_role("button", name="Draw G and B").click()
    frame = page.frame_locator("#explorer-frame")
    frame.locator("g[data-node]").first.wait_for(timeout=60_000)
    x, y = Value(1.0, label="x"), Value(2.0, label="y")
    g = Graph((x * y + x.exp()).tanh())
    assert frame.locator("g[data-node]").count() == len(g.nodes)  # G, laid out in the page
    assert frame.locator("g[data-bnode]").count() > 0  # and B
    slider = frame.get_by_role("slider", name="value of u1 (x)")  # each input's slider, named after it
    inner = page.frames[1]
    for target in ("-1.3", "0.4"):
        start = time.monotonic()
        slider.fill(target)
        at = float(slider.input_value())
        work = inner.evaluate("document.querySelector('[data-update-ms]').getAttribute('data-update-ms')")
        print(
            f"\nslider update: the page's own work {float(work):.2f} ms "
            f"(round trip from the test {(time.monotonic() - start) * 1000:.1f} ms)"
        )
        assert abs(at - float(target)) < 0.02
        g.forward({x: at})
        table = g.backprop()
        outputs = inner.evaluate(
            "Array.from(document.querySelectorAll('output.mg-grad-of')).map(o => o.textContent)"
        )
        assert outputs == [fmt(table[x]), fmt(table[y])]
    assert "explore=tanh" in page.url
    section.get_by_label("Expression").fill("log(x")
    page.get_by_role("button", name="Draw G and B").click()
    expect(page.locator("#explorer-note")).to_have_text("syntax error: '(' was never closed at column 4")
    assert page.evaluate(POINTED) == ["x-expr", 3, 4]
    # predict mode: the student is asked for grad_table's entries from u(n) down, as viz.explore does
    section.get_by_label("Expression").fill("tanh(tanh(tanh(w)))")
    section.get_by_label("Values").fill("w=0.5")
    section.get_by_label("Predict mode").check()
    page.get_by_role("button", name="Draw G and B").click()
    frame.get_by_label("grad_table[u4]", exact=True).wait_for(timeout=60_000)
    assert "predict=1" in page.url


@pytest.mark.parametrize("case", ["file", "symlink", "others", "earlier", "legacy", "added"])
def test_site_never_writes_over_what_is_not_its_own(tmp_path: Path, case: str) -> None:
    out = tmp_path / "out"
    if case == "file":
        out.write_text("mine")
    elif case == "symlink":
        (tmp_path / "real").mkdir()
        out.symlink_to(tmp_path / "real")
    else:
        out.mkdir()
        (out / "index.html").write_text("<!doctype html>\n")
        if case == "others":
            (out / "notes.txt").write_text("mine")
        elif case == "legacy":  # the marker of a site built before the marker listed its files
            (out / SITE.marker).write_text(SITE.legacy[0])
        else:
            swap.mark(out, [out / "index.html"], SITE)
            if case == "added":
                (out / "notes.txt").write_text("mine")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    done = run_micrograph("site", "--out", str(out))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and str(out) in done.stderr
    expected = {
        "file": "exists and is not a directory",
        "symlink": "is a symlink; not writing through it",
        "others": "holds files that are not a micrograph site; not replacing them (choose another directory)",
        "earlier": "holds an earlier site; not replacing it without --force",
        "legacy": "holds an earlier site; not replacing it without --force",
        "added": "holds files the site did not write (notes.txt); not replacing them, even with --force",
    }[case]
    assert expected in done.stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
    if case in ("others", "added", "symlink", "file"):  # --force replaces only a site built earlier
        forced = run_micrograph("site", "--out", str(out), "--force")
        assert forced.returncode == 2 and expected in forced.stderr
        assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_serve_needs_a_built_site(tmp_path: Path) -> None:
    with pytest.raises(site.SiteError, match="holds no site"):
        site.serve(tmp_path)


@pytest.mark.slow
def test_every_lesson_steps_to_its_end_as_in_python(page: Any) -> None:
    for n in lessons.LESSONS:
        stepper = lessons.start(n)
        page.get_by_label("Lesson", exact=True).select_option(str(n))
        page.wait_for_function(
            f"() => document.getElementById('lesson-text').textContent.startsWith('Lesson {n}:')",
            timeout=120_000,
        )
        shown = _step_through(page)
        assert len(shown) == len(stepper), n
        for k, text in enumerate(shown, start=1):
            stepper.goto(k)
            expected = stepper.show(width=_columns(page), keys="", place="page").rstrip("\n")
            assert _same_text(text, expected), f"lesson {n}, step {k} differs:\n{text}\n---\n{expected}"
        # the last step's picture: a drawing laid out in the page, or a plot drawn from its chart
        figure = stepper.figure()
        note = page.locator("#lesson-note").text_content()
        assert note == ""
        if figure is None:
            assert page.locator("#lesson-picture svg").count() == 0
        elif isinstance(figure, charts.Chart):
            _chart_shown(page, figure)
        else:
            assert page.locator("#lesson-picture svg").count() == 1


def _chart_texts(chart: charts.Chart) -> list[str]:
    """Every text the chart shows: titles, axis labels, legend entries, the numbers written in cells."""
    texts = [chart.title] + [t for p in chart.panels for t in (p.title, p.x_label, p.y_label)]
    for p in chart.panels:
        for m in p.marks:
            texts.append(getattr(m, "label", None) or "")
            if isinstance(m, charts.Cells):
                texts += [m.text(v) for row in m.values for v in row]
    return [" ".join(t.split()) for t in texts if t.strip()]


def _chart_shown(page: Any, chart: charts.Chart, box: str = "#lesson-picture") -> None:
    """The chart drawn in the page (in ``box``) shows every text of the chart's data, one path per line, a
    marker at each of a line's points (its title: the point's numbers), the rules, shaded regions and level
    lines."""
    root = page.locator(f"{box} figure.chart")
    assert root.get_attribute("data-chart") == chart.name
    shown = " ".join(root.text_content().split())
    for text in _chart_texts(chart):
        assert text in shown, f"{text!r} is not in the page's {chart.name} chart"
    panels = root.locator(".chart-panel")
    assert panels.count() == len(chart.panels)
    for i, panel in enumerate(chart.panels):
        drawn = panels.nth(i)
        lines = [m for m in panel.marks if isinstance(m, charts.Line)]
        assert drawn.locator('g[aria-label="line"] path').count() == sum(m.dash != "none" for m in lines)
        points = [(x, y) for m in lines if m.marker for x, y in zip(m.x, m.y)]
        titles = drawn.locator('g[aria-label="dot"] title').all_text_contents()
        assert [tuple(float(v) for v in t.split(": ")) for t in titles] == points
        scatter = sum(len(m.x) for m in panel.marks if isinstance(m, charts.Points))
        assert drawn.locator('g[aria-label="dot"] > *').count() == len(points) + scatter
        rules = sum(isinstance(m, charts.Rule) for m in panel.marks)
        assert drawn.locator('g[aria-label="rule"] line').count() == rules
        regions = any(isinstance(m, charts.Regions) for m in panel.marks)
        assert drawn.locator('g[aria-label="raster"] image').count() == int(regions)
        if any(isinstance(m, charts.Contour) for m in panel.marks):
            assert drawn.locator('g[aria-label="contour"] path').count() >= 1
        cells = [m for m in panel.marks if isinstance(m, charts.Cells)]
        if cells:
            written = drawn.locator('g[aria-label="text"] text').all_text_contents()
            assert written == [cells[0].text(v) for row in cells[0].values for v in row]
        assert drawn.locator(".chart-legend li").all_text_contents() == (
            [t for t in _legend(panel)] if panel.legend else []
        )


def _legend(panel: charts.Panel) -> list[str]:
    """The legend's entries in matplotlib's order: the marks' labels, the level lines' last."""
    plain = [m.label for m in panel.marks if not isinstance(m, charts.Contour) and getattr(m, "label", None)]
    return plain + [m.label for m in panel.marks if isinstance(m, charts.Contour) and m.label]


@pytest.mark.slow
def test_every_plot_of_the_lessons_is_drawn_in_the_page(page: Any) -> None:
    """matplotlib is not in the browser's Python: each plot's chart is drawn by the page, never missing."""
    drawn = set()
    for n in lessons.LESSONS:
        stepper = lessons.start(n)
        plots = []
        for k in range(1, len(stepper) + 1):
            stepper.goto(k)
            if isinstance(stepper.figure(), charts.Chart):
                plots.append(k)
        if not plots:
            continue
        page.get_by_label("Lesson", exact=True).select_option(str(n))
        page.wait_for_function(
            f"() => document.getElementById('lesson-text').textContent.startsWith('Lesson {n}:')",
            timeout=120_000,
        )
        for k in plots:
            page.get_by_label("Go to step").fill(str(k))
            page.get_by_role("button", name="Go", exact=True).click()
            page.wait_for_function(f"() => document.getElementById('lesson-text').dataset.index === '{k}'",
                                   timeout=120_000)  # fmt: skip
            stepper.goto(k)
            chart = stepper.figure()
            _chart_shown(page, chart)
            assert page.locator("#lesson-note").text_content() == ""
            drawn.add(chart.name)
    assert drawn == {"blowup", "memory", "training", "hessian"}


@pytest.mark.slow
@pytest.mark.parametrize("width, height", [(1280, 800), (390, 844)])
def test_a_step_and_a_plot_fit_the_screen(page: Any, width: int, height: int) -> None:
    """On a laptop and on a phone: no text cut at the right (the REPL's 99 columns wrap in a narrower box),
    nothing wider than the screen, the plot's panels inside the page."""
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_timeout(400)  # the page wraps the step's text again 150 ms after a resize, with Python,
    page.wait_for_function("() => !document.getElementById('start').disabled")  # its controls disabled
    fits = (
        "() => { const e = document.documentElement, t = document.getElementById('lesson-text');"
        " return [e.scrollWidth <= innerWidth, t.scrollWidth <= t.clientWidth + 1]; }"
    )
    for lesson, step in ((2, 5), (3, 6)):
        page.get_by_label("Lesson", exact=True).select_option(str(lesson))
        page.wait_for_function(
            f"() => document.getElementById('lesson-text').textContent.startsWith('Lesson {lesson}:')",
            timeout=120_000,
        )
        page.get_by_label("Go to step").fill(str(step))
        page.get_by_role("button", name="Go", exact=True).click()
        page.wait_for_function(f"() => document.getElementById('lesson-text').dataset.index === '{step}'",
                               timeout=120_000)  # fmt: skip
        assert page.evaluate(fits) == [True, True], (lesson, step, width)
        for box in page.locator("#lesson-picture svg").all():
            right = box.evaluate("e => e.getBoundingClientRect().right")
            assert right <= width + 0.5, (lesson, step, width, right)


@pytest.mark.slow
def test_every_kind_of_mark_is_drawn_by_the_page(page: Any) -> None:
    """Charts no lesson shows (decision regions with one and three outputs, an empty accuracy panel) are
    drawn by the same renderer, from the same data."""
    X = [[0.1, 0.9], [-0.5, 0.2], [0.7, -0.3], [-0.8, -0.6], [0.3, 0.3]]
    examples = [
        charts.decision_boundary(MLP(2, [4, 1], seed=0), X, [0, 1, 1, 0, 1], resolution=15),
        charts.decision_boundary(MLP(2, [4, 3], seed=3), X, [0, 1, 2, 0, 2], resolution=15),
        charts.training(History(loss=[3.0, 0.01], epochs=2)),
        charts.hessian([[2.0]], ["w"]),
        charts.blowup(6, families=("ladder",), max_operations=50),
    ]
    for chart in examples:  # in a box of their own: the lesson's own picture may be shown meanwhile
        page.evaluate(
            "async (spec) => { const m = await import('./charts.js');"
            " const box = document.getElementById('charts-drawn') || document.createElement('div');"
            " box.id = 'charts-drawn'; document.body.append(box); box.replaceChildren();"
            " m.drawChart(spec, box); }",
            chart.to_dict(),
        )
        _chart_shown(page, chart, "#charts-drawn")
    page.evaluate("() => document.getElementById('charts-drawn').remove()")


@pytest.mark.slow
def test_predict_in_the_page_asks_and_checks(page: Any) -> None:
    page.get_by_label("Lesson", exact=True).select_option("2")
    expect(page.locator("#lesson-text")).to_contain_text("Lesson 2:")
    for _ in range(12):
        if page.locator("#predict").is_visible():
            break
        before = page.locator("#lesson-text").get_attribute("data-index")
        page.get_by_role("button", name="Next step").click()
        expect(page.locator("#lesson-text")).not_to_have_attribute("data-index", before)
    assert page.locator("#predict").is_visible(), "lesson 2 asks a question before it answers it"
    assert page.locator("#question").text_content().startswith("Predict: what will grad_table[")
    assert "type it in the Answer box below" in " ".join(page.locator("#lesson-text").text_content().split())
    page.locator("#prediction").fill("12345")
    page.get_by_role("button", name="Answer").click()
    page.wait_for_function("() => document.getElementById('verdict').textContent !== ''")
    assert page.locator("#verdict").text_content().startswith("Not quite: the answer is")
    page.locator("#prediction").fill("abc")
    page.get_by_role("button", name="Answer").click()
    expect(page.locator("#verdict")).to_have_text(
        "Type a number in the Answer box (for example 0.25), not 'abc'."
    )
    page.get_by_role("button", name="Next step").click()
    expect(page.locator("#predict")).to_be_hidden()


HOSTILE = [
    "?lesson=99&step=-1&exercise=nope",
    "?lesson=3&expr=x*y",
    "?lesson=1&expr=__import__('os')&at=x=1",
    "?lesson=%00&expr=%ff&at=%%&step=999",
    "?explore=x*&explore_at=x=1e400",
]
"""Addresses a student or a hostile link may open: unknown lessons, steps and exercises, an expression for a
lesson without one, code where an expression goes, bytes that are not text (random ones are read by
tests/test_web_address.py; each here costs a page load)."""


@pytest.mark.slow
def test_any_address_leaves_a_usable_page(browser: Any, url: str) -> None:
    pages = OfflinePages(browser, url)
    context, p, _ = pages.open(HOSTILE[0])
    try:
        for address in HOSTILE:
            if address != HOSTILE[0]:
                p.goto(url + address)
                p.wait_for_selector("body[data-ready=true]", timeout=READY_MS)
            note = p.locator("#lesson-note").text_content() or ""
            assert "Traceback" not in note and "undefined" not in note, (address, note)
            expect(p.locator("#lesson")).to_be_enabled()
            expect(p.locator("#start")).to_be_enabled()
            p.get_by_role("button", name="Lessons", exact=True).click()  # an explorer link opened its tab
            p.get_by_label("Lesson", exact=True).select_option("1")  # the page still works after the link
            p.wait_for_function("() => document.getElementById('where').textContent.startsWith('Step 1 of')")
            expect(p.locator("#next")).to_be_enabled()
    finally:
        context.close()
    assert pages.errors == [], pages.errors
