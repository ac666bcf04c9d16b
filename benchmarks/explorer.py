"""The explorer's costs: pages at 40 and 400 nodes, five families' layouts, the power tower, the slider.

Run alone (``python benchmarks/explorer.py``) or from ``benchmarks/run.py`` (``make bench``), which prints
:func:`section`. Measured:

1. ``viz.explore(z).html()`` on the random graphs of the browser tests (``_big_graph`` of
   tests/test_explore_browser.py) of about 40 and 400 nodes: building G, B, the frames, the generated
   JavaScript, and the two Graphviz layouts (G and B apart, run at once). Best of ``repeats``.
2. ``micrograph render "w**w**...**w" --at w=1.01`` with 100 w's, as a student types it (a subprocess).
3. The layout of five families of 400-500 nodes in G (benchmarks/layout.py): inputs and a shared
   subexpression feeding a hundred consumers, a long chain, a wide sum, an MLP's cost on a batch; G's and
   B's ``dot`` runs each alone and the page written, and ``micrograph explore`` of the first.
4. The slider at 400 nodes, in Debian's chromium (Playwright): the page's own work for one move
   (Algorithms 6.1 and 6.2 in JavaScript, the texts it rewrites, then style and layout forced), and the time
   from a move made at the start of a frame to the next frame (``requestAnimationFrame``): one frame
   interval (about 16.7 ms at 60 Hz) when the move fits in a frame. Ten moves warm up first.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for _p in (str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from layout import rows as layout_rows  # noqa: E402  (benchmarks/layout.py, beside this file)
from measure import command_seconds  # noqa: E402

FRAME_MS = 1000.0 / 60.0

MOVE_SCRIPT = """async ([name, lo, hi, moves]) => {
  const s = document.querySelector(`input.mg-slider[data-input="${name}"]`);
  const frame = () => new Promise(r => requestAnimationFrame(t => r(t)));
  const work = [], next = [];
  for (let k = 0; k < moves; k++) {
    await frame();  // start at the beginning of a frame
    const t0 = performance.now();
    s.value = String(lo + (hi - lo) * (k + 0.5) / moves);
    s.dispatchEvent(new Event("input", {bubbles: true}));
    document.body.getBoundingClientRect();  // style and layout, forced now
    work.push(performance.now() - t0);
    await frame();
    next.push(performance.now() - t0);
  }
  return [work, next];
}"""
"""Moves an explorer page's slider ``moves`` times across [lo, hi], each at the start of a frame; returns
[the page's work per move, the time to the next frame] in ms (``page.evaluate(MOVE_SCRIPT, [name, lo, hi,
moves])``, ``name`` the input's u(i)). benchmarks/site.py moves the site's explorer with it too."""


def _graph(nodes: int) -> Any:
    from test_explore_browser import _big_graph

    return _big_graph(nodes)


def page_seconds(nodes: int, repeats: int = 2) -> tuple[int, float]:
    """(the graph's size, the best time in seconds of ``viz.explore(z).html()``)."""
    import viz
    from micrograph.graph import Graph

    z, _ = _graph(nodes)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        viz.explore(z, max_nodes=1000).html()
        best = min(best, time.perf_counter() - t0)
    return len(Graph(z).nodes), best


def tower_seconds(ws: int = 100) -> float:
    """Seconds of ``micrograph render`` on a power tower of ``ws`` w's (a fresh process)."""
    return command_seconds(["render", "**".join(["w"] * ws), "--at", "w=1.01"], "tower.svg")


def slider_ms(nodes: int = 400, moves: int = 40) -> dict[str, float] | None:
    """The slider at ``nodes`` nodes in chromium; None without chromium or Playwright."""
    from conftest import CHROMIUM, launch_chromium

    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not os.path.exists(CHROMIUM) or shutil.which("dot") is None:
        return None
    import viz
    from micrograph.graph import Graph

    z, x = _graph(nodes)
    g = Graph(z)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        path = viz.explore(z, wrt=[x], max_nodes=1000).save(Path(tmp) / "big.html")
        browser = launch_chromium(p)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(path.resolve().as_uri())
        page.wait_for_selector("g[data-node]")
        name = g.name(x)
        lo, hi = (float(page.eval_on_selector(f'input.mg-slider[data-input="{name}"]', f"s => s.{a}"))
                  for a in ("min", "max"))  # fmt: skip
        page.evaluate(MOVE_SCRIPT, [name, lo, hi, 10])  # warm-up: the first moves compile code, cache boxes
        work, after = page.evaluate(MOVE_SCRIPT, [name, lo, hi, moves])
        browser.close()
    work.sort()
    after.sort()
    return {
        "nodes": len(g.nodes),
        "work_median": statistics.median(work),
        "work_p95": work[int(0.95 * (len(work) - 1))],
        "next_median": statistics.median(after),
        "next_p95": after[int(0.95 * (len(after) - 1))],
    }


def section(quick: bool = False) -> str:
    """The explorer's rows and targets, as text for benchmarks/run.py."""
    rows = []
    for nodes in (40,) if quick else (40, 400):
        size, seconds = page_seconds(nodes, repeats=1 if quick else 2)
        goal = 10.0 if size > 100 else 1.0
        rows.append((f"explorer page, {size} nodes (viz.explore(z).html())", f"{seconds:.2f} s",
                     f"<= {goal:.0f} s", seconds <= goal))  # fmt: skip
    rows += layout_rows(quick)
    ws = 30 if quick else 100
    seconds = tower_seconds(ws)
    rows.append(
        (f"micrograph render of a {ws}-w power tower", f"{seconds:.2f} s", "<= 10 s", seconds <= 10.0)
    )
    slider = None if quick else slider_ms()
    if slider is not None:
        rows.append((f"slider at {slider['nodes']} nodes: the page's work per move (median, p95)",
                     f"{slider['work_median']:.1f} ms, {slider['work_p95']:.1f} ms", "< 16 ms",
                     slider["work_median"] < 16.0))  # fmt: skip
        rows.append((f"slider at {slider['nodes']} nodes: move at a frame's start to the next frame (median)",
                     f"{slider['next_median']:.1f} ms (p95 {slider['next_p95']:.1f})",
                     f"one frame ({FRAME_MS:.1f} ms)", slider["next_median"] < 1.5 * FRAME_MS))  # fmt: skip
    width = max(len(r[0]) for r in rows)
    lines = [f"{'measure':<{width}}  {'this run':>22}  {'target':>16}"]
    lines += [f"{a:<{width}}  {b:>22}  {c:>16}  {'met' if d else 'NOT met'}" for a, b, c, d in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    print(section(quick="--quick" in sys.argv))
