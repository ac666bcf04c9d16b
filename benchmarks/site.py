"""The browser site's budgets: its size, time to interactive, a slider move on figure 6.10, an exercise check.

Run alone (``python benchmarks/site.py [--quick]``) or from ``benchmarks/run.py`` (``make bench``, part 9,
``--only site``), which prints :func:`section`. The site is built once by ``micrograph site``'s own
function (:func:`lessons.publish.site.build_site`: ``npm ci`` from the lockfile, the wheels by pip) into a
temporary directory, served on localhost by :func:`lessons.publish.site.server`, and opened in Debian's
chromium through Playwright with every request that leaves localhost blocked (and reported). Measured, each
against the budget the site was given:

a. the built site's bytes (:func:`lessons.publish.site.site_size`), at most 40 MiB;
b. time to interactive: from opening the page in a fresh browser context (empty cache) until
   ``body[data-ready=true]`` (Python loaded, the first lesson shown), the median and the worst of N loads
   (3; 1 with ``--quick``), at most 10 s; the page's own measure (``window.micrographTimes.interactive``,
   from its script's start, with when Python was loaded and micrograph imported) beside it; measured for
   the site as built, whose Python starts from the image of its memory saved by the build
   (``pyodide/snapshot.gz``), and for a copy without that image, which starts Python the plain way, quiet
   and with one core kept busy; on a quiet machine the goal from the image is under 1 s;
c. a slider move on figure 6.10 (lesson 6's z = tanh(tanh(tanh(w))) at w = 0.5) in the site's Explorer tab,
   which shows ``viz.explore``'s page in a frame: the page's own work per move (Algorithms 6.1 and 6.2 in
   JavaScript, the texts it rewrites, style and layout forced) and the time from a move made at the start
   of a frame to the next frame, median over the moves (:data:`explorer.MOVE_SCRIPT`, the explorer
   benchmark's), under 16 ms. After the moves, the page's dz/dw must be the engine's at the slider's w;
   if it is not, the row says so instead of a time;
d. a correct ``backprop`` (``tests/exercise_solutions.py``) checked in the Exercises tab: seconds from the
   click on "Check" to the verdict shown, *cold* (the first check, clicked as soon as the page is
   interactive: the Web Worker that runs the student's code may still be starting Python) and *warm* (a
   second check once a new worker has started), at most 3 s. The verdict must be PASS; if it is not, the
   row says so instead of a time;
e. the longest task on the page's thread (a PerformanceObserver of long tasks) while the Explorer tab draws
   a large expression, at most 100 ms: x*...*x of 201 factors, and the nested tanh of benchmarks/layout.py
   (x and y feeding 100 consumers each; 502 nodes in G, 698 in B), Python and Graphviz working in the
   page's worker meanwhile.

The numbers are printed, each with "met" or "NOT met"; no test asserts on them (the quick benchmark's test
checks only that every row was measured and judged).
"""

from __future__ import annotations

import contextlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
for _p in (str(ROOT), str(ROOT / "tests"), str(HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from explorer import FRAME_MS, MOVE_SCRIPT  # noqa: E402  (benchmarks/explorer.py)
from layout import nested_tanh_text  # noqa: E402  (benchmarks/layout.py)
from site_browser import READY_MS, WATCH, OfflinePages, served  # noqa: E402  (tests/site_browser.py)

INTERACTIVE_S = 10.0
"""Seconds from opening the page to a page that answers (the site's budget)."""

QUIET_GOAL_S = 1.0
"""The goal for time to interactive on a quiet machine, by the page's own measure, from the saved image."""
SLIDER_MS = 16.0
"""Milliseconds a slider move on figure 6.10 may take (one frame at 60 Hz)."""

CHECK_S = 3.0
"""Seconds from "Check" to the verdict for a correct exercise."""

LONG_TASK_MS = 100.0
"""Milliseconds the page's thread may be held at once while Python works on a large expression."""

BIG = "*".join(["x"] * 201)
"""x*x*...*x, 201 factors: seconds of the page's Python for its explorer (in its Web Worker)."""

_CHECK_SCRIPT = """async (limit) => {
  const status = document.getElementById("check-status");
  const done = () => /^(PASS|FAIL)|could not/.test(status.textContent);
  const t0 = performance.now();
  document.getElementById("check").click();
  const shown = await new Promise(resolve => {
    const seen = new MutationObserver(() => { if (done()) { seen.disconnect(); resolve(true); } });
    seen.observe(status, {childList: true, characterData: true, subtree: true});
    setTimeout(() => { seen.disconnect(); resolve(done()); }, limit);
  });
  return shown ? performance.now() - t0 : null;
}"""
"""Clicks "Check"; the milliseconds until the status shows the verdict (or that the check could not run), or
null when none is shown within ``limit`` ms (``page.evaluate(_CHECK_SCRIPT, READY_MS)``)."""


def interactive(session: OfflinePages, loads: int) -> tuple[list[float], list[dict[str, float]], Any]:
    """Seconds to interactive of ``loads`` fresh loads, the page's own measures (``window.micrographTimes``:
    ``interactive``, and where it has them ``python`` loaded and micrograph ``imported``, in seconds), and
    the last page (open)."""
    walls: list[float] = []
    own: list[dict[str, float]] = []
    page: Any = None
    for _ in range(loads):
        if page is not None:
            page.context.close()
        _, page, seconds = session.open()
        walls.append(seconds)
        measured = page.evaluate("window.micrographTimes") or {}
        if "interactive" in measured:
            own.append({k: float(v) / 1000 for k, v in measured.items()
                        if isinstance(v, (int, float)) and not isinstance(v, bool)})  # fmt: skip
            own[-1]["snapshot"] = float(measured.get("snapshot") is True)
    return walls, own, page


def check(page: Any, source: str) -> dict[str, Any]:
    """Check ``source`` as the ``backprop`` exercise in the page: the verdict and its times."""
    page.get_by_role("button", name="Exercises").click()
    page.get_by_label("Exercise", exact=True).select_option("backprop")
    page.locator(".cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(source)
    ms = page.evaluate(_CHECK_SCRIPT, READY_MS)
    times = page.evaluate("window.micrographTimes") or {}
    return {
        "seconds": float("nan") if ms is None else ms / 1000,
        "status": str(page.locator("#check-status").text_content()),
        "report": str(page.locator("#report").text_content()),
        "worker_wait": times.get("checkWorkerWait", float("nan")) / 1000,
    }


def longest_task(page: Any, expr: str = BIG, at: dict[str, float] | None = None) -> dict[str, Any]:
    """The longest task on the page's thread, in ms, while the Explorer tab draws ``expr`` at ``at``
    (:data:`BIG` at x = 1.001 by default; Python and Graphviz at work in the page's worker), the seconds
    the drawing took, and the number of nodes of G."""
    at = at or {"x": 1.001}
    since = page.evaluate(WATCH)
    page.get_by_role("button", name="Explorer").click()
    section = page.locator("#explorer")
    section.get_by_label("Expression").fill(expr)
    section.get_by_label("Values").fill(", ".join(f"{k}={v}" for k, v in at.items()))
    t0 = time.monotonic()
    page.get_by_role("button", name="Draw G and B").click()
    from micrograph import Graph, Value
    from micrograph.expr import build

    nodes = len(Graph(build(expr, {k: Value(v, label=k) for k, v in at.items()})).nodes)
    drawn = page.frame_locator("#explorer-frame").locator("g[data-node]")
    while drawn.count() < nodes:  # the drawing shown before, until G of expr (with its far edges' copies)
        if time.monotonic() - t0 > READY_MS / 1000:
            raise RuntimeError(f"the explorer of {expr[:12]}... was not drawn in {READY_MS / 1000:.0f} s")
        page.wait_for_timeout(50)
    seconds = time.monotonic() - t0
    page.wait_for_timeout(500)  # the frame's page has drawn
    tasks = page.evaluate("(since) => window.longTasks.filter(([start]) => start >= since)", since)
    return {"ms": max((float(d) for _, d in tasks), default=0.0), "tasks": len(tasks), "seconds": seconds,
            "nodes": nodes}  # fmt: skip


def _slider_input(frame: Any, name: str) -> tuple[str, float, float]:
    """The u(i), min and max of the slider of the input labelled ``name``."""
    sliders = frame.eval_on_selector_all(
        "input.mg-slider",
        "ss => ss.map(s => [s.dataset.input, s.getAttribute('aria-label') || '', s.min, s.max])",
    )
    found = [s for s in sliders if s[1].endswith(f"({name})")]
    if len(found) != 1:
        raise RuntimeError(f"the explorer's page has no single slider for {name}: {sliders}")
    node, _, lo, hi = found[0]
    return node, float(lo), float(hi)


def _engine_grad(expr: str, name: str, value: float) -> str:
    """dz/d(name) at ``value`` by the engine's Algorithm 6.2, written as the explorer writes numbers."""
    from micrograph import Graph, Value
    from micrograph.expr import build
    from viz.words import fmt

    leaf = Value(value, label=name)
    g = Graph(build(expr, {name: leaf}))
    return fmt(g.backprop()[leaf])


def slider(page: Any, moves: int) -> dict[str, Any]:
    """``moves`` slider moves on figure 6.10 in the site's explorer, after ten that warm it up."""
    from lessons.l6_symbolic import AT, EXPR

    (name, value), *_ = AT.items()
    page.get_by_role("button", name="Explorer").click()
    section = page.locator("#explorer")
    section.get_by_label("Expression").fill(EXPR)
    section.get_by_label("Values").fill(f"{name}={value}")
    page.get_by_role("button", name="Draw G and B").click()
    page.frame_locator("#explorer-frame").locator("g[data-node]").first.wait_for(timeout=60_000)
    frame = page.locator("#explorer-frame").element_handle().content_frame()
    node, lo, hi = _slider_input(frame, name)
    frame.evaluate(MOVE_SCRIPT, [node, lo, hi, 10])  # warm-up: the first moves compile the code
    work, after = frame.evaluate(MOVE_SCRIPT, [node, lo, hi, moves])
    at = float(frame.eval_on_selector(f'input.mg-slider[data-input="{node}"]', "s => s.value"))
    shown = frame.eval_on_selector_all("output.mg-grad-of", "os => os.map(o => o.textContent)")
    expected = _engine_grad(EXPR, name, at)
    return {
        "work": statistics.median(work),
        "next": statistics.median(after),
        "moves": moves,
        "right": shown == [expected],
        "shown": shown,
        "expected": expected,
        "at": at,
    }


def _no_browser() -> str | None:
    """Why the page cannot be driven here, or None."""
    import os

    from conftest import CHROMIUM

    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (pip install -e '.[dev]')"
    if not os.path.exists(CHROMIUM):
        return f"chromium is not installed at {CHROMIUM} (apt-get install chromium)"
    return None


Row = tuple[str, str, str, bool]


@contextlib.contextmanager
def one_core_busy() -> Iterator[None]:
    """One core of the machine kept busy (a process that spins) during the block: a load of about one more
    than the machine had, the case of a student's laptop that also runs something else."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        spinner.kill()
        spinner.wait()


def _load_rows(walls: list[float], own: list[dict[str, float]], busy: str = "") -> list[Row]:
    n = len(walls)
    started = {t["snapshot"] for t in own}
    how = {frozenset({1.0}): "from the saved image", frozenset({0.0}): "Python started plainly"}.get(
        frozenset(started), "from the image in some loads only"
    )
    what = (
        f"time to interactive{busy} ({how}), fresh context: median, worst of {n} load{'s' if n > 1 else ''}"
    )
    measured = f"{statistics.median(walls):.1f} s, {max(walls):.1f} s"
    rows: list[Row] = [(what, measured, f"<= {INTERACTIVE_S:.0f} s", max(walls) <= INTERACTIVE_S)]
    if own:
        ready = statistics.median(t["interactive"] for t in own)
        parts = [f"{what} {statistics.median(t[key] for t in own):.2f} s"
                 for key, what in (("python", "Python loaded"), ("imported", "micrograph imported"))
                 if all(key in t for t in own)]  # fmt: skip
        measured = f"{ready:.2f} s" + (f" ({', '.join(parts)})" if parts else "")
        what = "  the page's own measure (micrographTimes), median"
        rows.append((what, measured, f"<= {INTERACTIVE_S:.0f} s", ready <= INTERACTIVE_S))
        if not busy and started == {1.0}:
            rows.append(("  the same, against the goal for a quiet machine", f"{ready:.2f} s",
                         f"< {QUIET_GOAL_S:.0f} s", ready < QUIET_GOAL_S))  # fmt: skip
    return rows


def _check_row(what: str, result: dict[str, Any]) -> Row:
    if not result["status"].startswith("PASS"):
        verdict = result["status"] or "no verdict"
        return (what, f"not PASS: {verdict[:60]}", f"<= {CHECK_S:.0f} s", False)
    return (what, f"{result['seconds']:.2f} s (worker wait {result['worker_wait']:.2f} s)",
            f"<= {CHECK_S:.0f} s", result["seconds"] <= CHECK_S)  # fmt: skip


def _slider_rows(s: dict[str, Any]) -> list[Row]:
    what = f"figure 6.10's slider, Explorer tab: {{}}, median of {s['moves']}"
    if not s["right"]:
        wrong = f"dz/dw shown {s['shown']}, the engine's {s['expected']} at w = {s['at']}"
        return [(what.format("a move"), f"wrong: {wrong}", f"< {SLIDER_MS:.0f} ms", False)]
    return [
        (what.format("the page's work per move"), f"{s['work']:.1f} ms", f"< {SLIDER_MS:.0f} ms",
         s["work"] < SLIDER_MS),
        (what.format("move to next frame"), f"{s['next']:.1f} ms",
         f"one frame ({FRAME_MS:.1f} ms)", s["next"] < 1.5 * FRAME_MS),
    ]  # fmt: skip


def _drive(url: str, plain: str, quick: bool, log: Callable[[str], None], rows: list[Row]) -> list[str]:
    """Measure in chromium, adding to ``rows``; the notes (requests blocked, script errors, a failure).

    ``url`` is the site as built; ``plain`` the same site without its saved image of Python's memory
    (``pyodide/snapshot.gz``), whose loads are timed beside it, in the same run, quiet and busy.
    """
    from conftest import launch_chromium
    from exercise_solutions import CORRECT
    from playwright.sync_api import Error, sync_playwright

    notes: list[str] = []
    with sync_playwright() as p:
        browser = launch_chromium(p)
        session = OfflinePages(browser, url)
        try:
            loads = 1 if quick else 3
            log("site: loading the page, and the page without its saved image ...")
            walls, own, page = interactive(session, loads)
            plain_session = OfflinePages(browser, plain)
            plain_walls, plain_own, plain_page = interactive(plain_session, loads)
            plain_page.context.close()
            rows += _load_rows(walls, own) + _load_rows(plain_walls, plain_own)
            log("site: loading both with one core kept busy ...")
            with one_core_busy():
                walls, own, busy_page = interactive(session, loads)
                busy_page.context.close()
                plain_walls, plain_own, busy_page = interactive(plain_session, loads)
                busy_page.context.close()
            rows += _load_rows(walls, own, " with one core busy")
            rows += _load_rows(plain_walls, plain_own, " with one core busy")
            session.blocked += plain_session.blocked
            session.errors += plain_session.errors
            log("site: checking backprop, cold then warm ...")
            cold = check(page, CORRECT["backprop"])
            session.workers_started(page, 2)  # the one that ran the check, and the one started after it
            warm = check(page, CORRECT["backprop"])
            rows.append(_check_row("correct backprop, Check to verdict: cold (first check)", cold))
            rows.append(_check_row("correct backprop, Check to verdict: warm (worker started)", warm))
            session.workers_started(page, 3)  # nothing starting Python beside the slider
            log("site: moving figure 6.10's slider ...")
            rows += _slider_rows(slider(page, 10 if quick else 40))
            for what, expr, at in (("x*...*x, 201 factors", BIG, None),
                                   ("tanh nested 100 deep, x and y feeding 100 consumers each",
                                    nested_tanh_text(100), {"x": 0.5, "y": 0.3})):  # fmt: skip
                log(f"site: the explorer of {what} ...")
                long = longest_task(page, expr, at)
                drawn = f"G {long['nodes']} nodes; {long['seconds']:.1f} s, {long['tasks']} long tasks"
                rows.append((f"longest task on the page's thread while the explorer of {what} is drawn "
                             f"({drawn})", f"{long['ms']:.0f} ms", f"<= {LONG_TASK_MS:.0f} ms",
                             long["ms"] <= LONG_TASK_MS))  # fmt: skip
        except (Error, RuntimeError) as e:  # a page that never gets ready, a control that is not there
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            notes.append(f"measuring stopped (the rows after the last shown are missing): {first}")
        browser.close()
    notes.insert(0, f"requests off localhost blocked: {', '.join(session.blocked) or 'none'}")
    if session.errors:
        notes.append(f"script errors in the page: {'; '.join(session.errors)}")
    return notes


def _table(rows: list[Row]) -> str:
    cells = [(a, b, c, "met" if d else "NOT met") for a, b, c, d in rows]
    header = ("what", "measured", "budget", "met?")
    widths = [max(len(r[i]) for r in [header, *cells]) for i in range(4)]
    lines = [" | ".join(h.ljust(w) for h, w in zip(header, widths)), "-+-".join("-" * w for w in widths)]
    lines += [" | ".join(c.ljust(w) for c, w in zip(r, widths)) for r in cells]
    return "\n".join(lines)


def section(quick: bool = False, log: Callable[[str], None] | None = None) -> str:
    """The site's rows against its budgets, as text for benchmarks/run.py.

    Args:
        quick: one load and ten slider moves instead of three loads and forty moves.
        log: where progress lines go (default: standard error).

    Returns:
        The table ("what | measured | budget | met?") and its notes (requests blocked, script errors, a
        measurement that could not finish); one line instead when the site cannot be built (no npm, no
        registry); the size alone, with the reason, when the page cannot be opened (no chromium, no
        Playwright).
    """
    from lessons.publish import site

    say = log or (lambda s: print(s, file=sys.stderr, flush=True))
    with tempfile.TemporaryDirectory(prefix="micrograph-site-bench-") as tmp:
        out = Path(tmp) / "site"
        say("site: building with micrograph site (npm ci, pip) ...")
        try:
            size = site.build_site(out, log=say)
        except site.SiteError as e:
            return f"not measured: the site could not be built: {e}"
        rows: list[Row] = [("the built site's size (site_size)", f"{size / (1 << 20):.1f} MiB",
                            f"<= {site.BUDGET >> 20} MiB", size <= site.BUDGET)]  # fmt: skip
        reason = _no_browser()
        if reason is not None:
            return _table(rows) + f"\n\nthe page was not opened: {reason}"
        plain = Path(tmp) / "plain"
        shutil.copytree(out, plain)
        (plain / site.SNAPSHOT).unlink()
        with served(out) as url, served(plain) as plain_url:
            notes = _drive(url, plain_url, quick, say, rows)
    return _table(rows) + "\n\n" + "\n".join(notes)


if __name__ == "__main__":
    print(section(quick="--quick" in sys.argv))
