"""The step-by-step page of viz.steps in a real headless browser (Debian's chromium driven by Playwright).

Loads the page from disk, presses the arrow keys, checks the frame changes, and saves a screenshot. Also
checks that a label written as a script tag shows as text and runs nothing, and that the page asks
the network for nothing.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithms 6.1 and 6.2.
"""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import CHROMIUM, open_watched

import viz
from micrograph import Value
from micrograph.families import chain

pytestmark = [
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM),
        reason=f"chromium is not installed at {CHROMIUM}: install it with sudo apt-get install chromium",
    ),
    pytest.mark.skipif(
        shutil.which("dot") is None, reason="Graphviz's dot is not installed: sudo apt-get install graphviz"
    ),
    pytest.mark.slow,  # a real chromium
]
pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


def visible_frame(page) -> tuple[str, str]:
    """(id, heading) of the frame on screen; exactly one is visible."""
    shown = page.locator("section.frame:visible")
    assert shown.count() == 1
    return shown.get_attribute("id"), shown.locator("h2").inner_text()


def test_arrow_keys_and_buttons_change_the_frame(browser, tmp_path):
    w = Value(0.5, label="w")
    z = w.tanh().tanh().tanh()
    z.label = "z"
    path = viz.steps(z, tmp_path / "steps.html")
    page, events = open_watched(browser, path)
    total = page.locator("section.frame").count()
    assert total == (1 + 3 + 1) + (1 + 3 + 1)  # 6.1: 1 input, 3 nodes, return; 6.2: seed, j = 3..1, return
    first = visible_frame(page)
    assert first[0] == "frame1" and "Algorithm 6.1" in first[1]
    assert page.locator("#counter").inner_text() == f"step 1 of {total}"
    page.keyboard.press("ArrowRight")
    second = visible_frame(page)
    assert second != first and second[0] == "frame2"
    assert page.locator("#counter").inner_text() == f"step 2 of {total}"
    # the current node is drawn highlighted in this frame's SVG, and its pseudo-code line is marked
    current = page.locator("section.frame:visible .algo .line.current")
    assert "u(i) ← f(i)(A(i))" in " ".join(current.all_inner_texts())
    page.screenshot(path=str(tmp_path / "step2.png"))
    page.keyboard.press("ArrowLeft")
    assert visible_frame(page) == first
    page.keyboard.press("End")
    last = visible_frame(page)
    assert last[0] == f"frame{total}" and "Algorithm 6.2" in last[1]
    assert page.locator("#next").is_disabled()
    page.locator("#prev").click()
    assert visible_frame(page)[0] == f"frame{total - 1}"
    # the grad_table of the last loop step holds dz/dw
    assert "0.5339" in page.locator("section.frame:visible table.gt").inner_text()
    page.screenshot(path=str(tmp_path / "step_backprop.png"))
    assert (tmp_path / "step2.png").stat().st_size > 10_000
    assert events["requests"] == [path.resolve().as_uri()]  # nothing fetched but the page itself
    assert events["errors"] == [] and events["dialogs"] == []
    page.close()


def test_script_label_is_text_and_runs_nothing(browser, tmp_path):
    a = Value(2.0, label="<script>alert(1)</script>")
    b = Value(3.0, label="{a|b}")
    c = Value(1.0, label='<img src=x onerror="alert(2)">')
    z = a * b + c
    path = viz.steps(z, tmp_path / "xss.html")
    page, events = open_watched(browser, path)
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    text = page.locator("body").inner_text()
    assert "<script>alert(1)</script>" in text and "{a|b}" in text
    svg_text = page.locator("section.frame:visible svg").text_content() or ""
    assert "<script>alert(1)</script> (u1)" in svg_text and "{a|b} (u2)" in svg_text
    assert page.locator("script").count() == 2  # only the page's own: the pictures' and the frames'
    assert page.locator("img").count() == 0
    assert events["dialogs"] == [] and events["errors"] == []
    assert events["requests"] == [path.resolve().as_uri()]
    page.close()


def test_clicking_through_algorithm_6_6_on_figure_6_10(browser, tmp_path):
    z, _ = chain(3)  # figure 6.10's z = tanh(tanh(tanh(w))), labelled w, x, y, z
    path = viz.steps(z, tmp_path / "alg66.html", algorithm="6.6")
    page, events = open_watched(browser, path)
    total = page.locator("section.frame").count()
    assert total == 1 + 3 + 1  # Algorithm 6.5's start, one frame per call of build_grad, the return
    first = visible_frame(page)
    assert "Algorithm 6.5" in first[1]
    assert "The book, Algorithm 6.5" in page.locator("section.frame:visible figcaption").inner_text()
    seen = []
    for k in range(2, total + 1):
        page.locator("#next").click()
        assert page.locator("#counter").inner_text() == f"step {k} of {total}"
        frame_id, heading = visible_frame(page)
        assert frame_id == f"frame{k}"
        seen.append(heading)
        if k <= 4:  # a call of build_grad: micrograph's summary, captioned as such; new nodes highlighted
            caption = page.locator("section.frame:visible figcaption").inner_text()
            assert caption == "micrograph's summary of Algorithm 6.6, not the book's words"
            assert page.locator("section.frame:visible .algo .line.current").count() == 7
            page.screenshot(path=str(tmp_path / f"call{k - 1}.png"))
    assert seen[:3] == [
        "Algorithm 6.6, call 1 of 3: build_grad(V = u3 (y))",
        "Algorithm 6.6, call 2 of 3: build_grad(V = u2 (x))",
        "Algorithm 6.6, call 3 of 3: build_grad(V = u1 (w))",
    ]
    assert page.locator("#next").is_disabled()
    assert "0.5339" in page.locator("section.frame:visible table.gt").inner_text()  # dz/dw, as Algorithm 6.2
    assert (tmp_path / "call2.png").stat().st_size > 10_000
    assert events["requests"] == [path.resolve().as_uri()]
    assert events["errors"] == [] and events["dialogs"] == []
    page.close()
