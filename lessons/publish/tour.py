"""The tour: every lesson run without stopping, every picture written, one ``index.html`` linking them all.

``micrograph tour --out out/`` calls :func:`run`. For each lesson it steps through every step, writes the
step's diagram as SVG (a Graphviz drawing) or its plot as PNG (a matplotlib figure), and a page
``lessonN/index.html`` with the step's text, the book's line, the code that ran and the values. It adds the
step-through pages of :func:`viz.steps` (Algorithms 6.1 and 6.2, frame by frame) for the graphs of lessons
1, 2 and 6, one of Algorithms 6.5 and 6.6 (each call of build_grad) for figure 6.10's, and an
``index.html`` that links every file with one line of explanation. The directory is built beside ``out``
and swapped in whole (:mod:`lessons.publish.swap`).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

# `l` is a lesson's stepper, the name the README and the lessons give it (l = lessons.start(n)).
# ruff: noqa: E741

from __future__ import annotations

import functools
import html
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lessons
from lessons.publish.notebooks import Page, write_notebooks
from lessons.publish.swap import TOUR, _naming, built_beside, mark
from lessons.showing import figure_svg
from lessons.shown import Shown
from lessons.stepper import Stepper
from micrograph import Graph, pseudocode
from viz import style
from viz.charts import Chart
from viz.page import html_page
from viz.pictures import inline_svg, pictures_script
from viz.render import GraphvizMissing, dot_available

__all__ = ["INDEX", "TourResult", "run"]

INDEX = "index.html"


@dataclass
class TourResult:
    """What a tour wrote.

    Attributes:
        lessons: lessons run. steps: steps run in total. files: every file written (paths).
        seconds: wall time of each lesson, by lesson number. left: what a whole tour writes that this one
        could not, each with what it needs (``"fig_6_10_backprop.gif (pip install 'micrograph[slides]')"``).
    """

    lessons: int = 0
    steps: int = 0
    files: list[Path] = field(default_factory=list)
    seconds: dict[int, float] = field(default_factory=dict)
    left: list[str] = field(default_factory=list)


@dataclass
class _Entry:
    shown: Shown  # the step, as every view shows it
    image: str | None  # its picture's file, relative to the lesson's directory
    drawing: str  # the diagram's SVG (shown inline, legible, in a pane that pans and zooms), or ""


@dataclass
class _Run:
    stepper: Stepper
    entries: list[_Entry]
    pages: list[Page] | None  # kept for the lesson's notebook, or None when no notebook is written


def _first_sentence(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    cut = flat.find(". ")
    s = flat if cut < 0 else flat[: cut + 1]
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _run_lesson(n: int, out: Path, result: TourResult, bar: Any, notebook: bool) -> _Run:
    """Step through lesson n once: each step's picture into ``out/lessonN/``, its page, and (``notebook``)
    each step kept for the lesson's notebook, so writing the notebooks runs no lesson again."""
    import viz

    l = lessons.start(n)
    d = out / f"lesson{n}"
    d.mkdir()
    run = _Run(l, [], [] if notebook else None)
    while True:
        if bar is not None:
            bar.set_postfix_str(f"lesson {n}, step {l.index}")
        shown = Shown.of(l, picture=True)
        fig = shown.picture
        if isinstance(fig, Chart):
            fig = fig.figure()  # drawn by matplotlib once, for the PNG and the page's SVG
        image = None
        svg = drawing = ""
        if fig is not None:
            diagram = hasattr(fig, "pipe")
            name = f"step{l.index:02d}" + (".svg" if diagram else ".png")
            if run.pages is not None and not diagram:
                svg = figure_svg(fig)
            with _naming(d / name):
                result.files.append(viz.save(fig, d / name, overwrite=False))
            if diagram:
                drawing = (d / name).read_text(encoding="utf-8")
                svg = drawing if run.pages is not None else ""
            image = name
        run.entries.append(_Entry(shown, image, drawing))
        if run.pages is not None:
            run.pages.append((shown, svg))
        result.steps += 1
        if isinstance(l.next(), str):
            break
    with _naming(d / INDEX):
        text = _lesson_page(l, run.entries).encode("utf-8")
        result.files.append(viz.write_atomic(d / INDEX, text, overwrite=False))
    return run


def _lesson_page(l: Stepper, entries: list[_Entry]) -> str:
    """A lesson's page: its steps' sections in the one page shell, with the pictures' script inlined."""
    e = html.escape
    parts = [
        f"<p><a href='../{INDEX}'>← all lessons</a></p>",
        f"<h1>Lesson {l.number}: {e(l.title)}</h1><p class='muted'>Deep Learning, {e(l.section)}. "
        f"In a Python REPL: <code>import lessons; l = lessons.start({l.number})</code>, then "
        f"<code>l.next()</code>.</p>",
    ]
    parts += [_section(en) for en in entries]
    return html_page(
        title=f"Lesson {l.number}: {l.title}",
        css=style.TOUR_CSS,
        body="\n".join(parts),
        script=(_pictures_script(), "micrographPictures.showAll();"),
        local_images=True,
    )


def _section(en: _Entry) -> str:
    """A step's section of its lesson's page."""
    e, s = html.escape, en.shown
    parts = [f"<div class='step' id='step{s.index}'><h2>Step {s.index}: {e(s.title)}</h2>"]
    if s.line:  # labelled: the book's own words, or micrograph's
        who = f"The book ({e(s.section)}):" if s.quoted else "micrograph (not the book's words):"
        kind = "book" if s.quoted else "ours"
        parts.append(f"<p class='who'>{who}</p><pre class='{kind}'>{e(s.line)}</pre>")
    parts += [f"<p>{e(' '.join(p.split()))}</p>" for p in s.text.split("\n\n")]
    if s.code:
        parts.append(
            "<p class='muted'>Code that ran (micrograph's own lines, with this step's values):</p>"
            f"<pre class='engine'>{e(s.code)}</pre>"
        )
    if s.values:
        parts.append(f"<p class='muted'>Values now:</p><pre>{e(s.values)}</pre>")
    if s.picture_note:
        parts.append(f"<p><i>{e(s.picture_note)}</i></p>")
    if en.drawing:  # inline, so that its text can be kept legible (viz.pictures)
        name = e(en.image or "")
        parts.append(f"<figure class='mg-picture' aria-label='{e(s.title)}'>{inline_svg(en.drawing)}"
                     f"</figure><p class='muted'><a href='{name}'>{name}</a></p>")  # fmt: skip
    elif en.image:
        parts.append(f"<p><a href='{e(en.image)}'><img src='{e(en.image)}' alt='{e(s.title)}'></a></p>")
    parts.append("</div>")
    return "\n".join(parts)


@functools.cache
def _pictures_script() -> str:
    """The lesson pages' script (:func:`viz.pictures.pictures_script`), joined once per process."""
    return pictures_script()


def _flipbooks(out: Path, numbers: list[int], result: TourResult) -> list[tuple[str, str]]:
    """viz.steps pages for the graphs of lessons 1, 2 and 6 (6 also Algorithm 6.6): (file name, one line).

    Each page runs on its lesson's opening numbers: the graph as the lesson's first step builds it (the
    lesson's later steps change values, and a page must show the numbers the lesson opens with).
    """
    import viz

    pages = []
    # Figure 6.10's Algorithm 6.6 has a page of its own: its frames draw G and B side by side, a different
    # picture from the 6.1/6.2 frames, and the figure 6.10 page keeps the length the README describes.
    wanted = [
        (1, "steps_lesson1.html", "lesson 1's", "6.2"),
        (2, "steps_lesson2.html", "lesson 2's", "6.2"),
        (6, "steps_figure_6_10.html", "figure 6.10's (lesson 6)", "6.2"),
        (6, "steps_figure_6_10_alg66.html", "figure 6.10's (lesson 6)", "6.6"),
    ]
    for n, name, whose, algorithm in wanted:
        if n not in numbers:
            continue
        first = Stepper(lessons.LESSONS[n])  # step 1 of a fresh run: the lesson's opening numbers
        z = first.z
        at = ", ".join(f"{v.label} = {v.data:g}" for v in Graph(z).variables if v.label)
        expr = getattr(first, "expr", None) or _expr(z)
        what = f"{pseudocode.named(pseudocode.STEP_PAGES[algorithm])} frame by frame on {whose} z = {expr}"
        with _naming(out / name):
            result.files.append(Path(viz.steps(z, out / name, algorithm=algorithm, overwrite=False)))
        pages.append((name, f"{what} at {at}"))
    return pages


def _slides(out: Path, result: TourResult) -> list[tuple[str, str]]:
    """Figure 6.10 for slides: Algorithms 6.1/6.2 as a GIF (with the ``slides`` extra), its TikZ source and,
    where pdflatex is installed, the PDF compiled from it: (file name, one line of explanation)."""
    import viz
    from micrograph.families import chain

    z, w = chain(3)
    made = []
    tex = viz.to_tikz(viz.draw_side_by_side(z, w))
    with _naming(out / "fig_6_10.tex"):
        result.files.append(viz.write_atomic(out / "fig_6_10.tex", tex.encode("utf-8"), overwrite=False))
    made.append(("fig_6_10.tex", "figure 6.10 as TikZ for LaTeX (pdflatex fig_6_10.tex), Graphviz's layout"))
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        result.left.append("fig_6_10.pdf (pdflatex)")
    else:
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "fig_6_10.tex").write_text(tex, encoding="utf-8")
            done = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "fig_6_10.tex"],
                                  cwd=tmp, capture_output=True, timeout=180, check=False)  # fmt: skip
            pdf = Path(tmp) / "fig_6_10.pdf"
            if done.returncode == 0 and pdf.exists():
                with _naming(out / "fig_6_10.pdf"):
                    written = viz.write_atomic(out / "fig_6_10.pdf", pdf.read_bytes(), overwrite=False)
                result.files.append(written)
                made.append(("fig_6_10.pdf", "the same TikZ picture compiled by pdflatex"))
    try:
        with _naming(out / "fig_6_10_backprop.gif"):
            result.files.append(viz.animate(z, out / "fig_6_10_backprop.gif", overwrite=False))
        made.append(("fig_6_10_backprop.gif", "Algorithms 6.1 and 6.2 on figure 6.10's G, for slides"))
    except ModuleNotFoundError:  # imageio is in the slides extra, not in the default install
        result.left.append("fig_6_10_backprop.gif (pip install 'micrograph[slides]')")
    return made


def _expr(z: Any) -> str:
    """A chain of one-argument operations written out: ``tanh(tanh(tanh(w)))``."""
    ops, node = [], z
    while node.op is not None and len(node.inputs) == 1:
        ops.append(node.op.name)
        node = node.inputs[0]
    return "".join(f"{o}(" for o in ops) + (node.label or "?") + ")" * len(ops)


def _index(out: Path, runs: list[_Run], pages: list[tuple[str, str]], seconds: float) -> str:
    e = html.escape
    parts = [
        "<h1>micrograph: the tour</h1>",
        "<p>Back-propagation as section 6.5 of <i>Deep Learning</i> (Goodfellow, Bengio &amp; "
        "Courville, 2016) "
        "writes it, run on live objects. Each lesson below has a page with every step's text, the "
        "book's line, "
        "the code that ran and the values it produced; every number was computed during this run. "
        "The pictures "
        "are linked one by one under each lesson.</p>",
    ]
    if pages:
        parts.append("<h2>Step-through pages</h2><ul>")
        parts += [f"<li><a href='{e(name)}'>{e(name)}</a>: {e(what)}</li>" for name, what in pages]
        parts.append("</ul>")
    for run in runs:
        l, entries = run.stepper, run.entries
        parts.append(
            f"<h2>Lesson {l.number}: <a href='lesson{l.number}/{INDEX}'>{e(l.title)}</a></h2>"
            f"<p class='muted'>{e(l.section)}. {e(lessons.LESSONS[l.number].summary)}</p><ul>"
        )
        for en in entries:
            if en.image:
                href = f"lesson{l.number}/{en.image}"
                parts.append(
                    f"<li><a href='{e(href)}'>{e(href)}</a>: step {en.shown.index}, {e(en.shown.title)}. "
                    f"{e(_first_sentence(en.shown.text))}</li>"
                )
        parts.append("</ul>")
    parts.append(
        "<p class='muted'>Each lesson page carries the script that keeps its drawings legible and lets them "
        "pan and zoom (d3-zoom from npm, and the explorer's own pane code).</p>"
    )
    parts += _exercises_section()
    parts.append(f"<p class='muted'>Written by <code>micrograph tour</code> in {seconds:.1f} s.</p>")
    return html_page(title="micrograph tour", css=style.TOUR_CSS, body="\n".join(parts), script=())


def _exercises_section() -> list[str]:
    """The exercises, one line each: the student writes the book's algorithm, micrograph checks it."""
    from lessons import exercises

    e = html.escape
    parts = [
        "<h2>Exercises: write the algorithms yourself</h2>",
        "<p>Each exercise is a template with the book's pseudo-code; micrograph checks your solution against "
        "its own algorithms and, at the first failure, names the wrong node, the term that differs and the "
        "book's sentence, with a drawing. <code>micrograph exercise start NAME</code>, then "
        "<code>micrograph exercise check NAME.py</code>.</p><ul>",
    ]
    for ex in exercises.EXERCISES.values():
        parts.append(f"<li><code>{e(ex.name)}</code>: {e(ex.book)}, {e(ex.title)}</li>")
    parts.append("</ul>")
    return parts


def run(
    out: str | os.PathLike[str],
    *,
    progress: bool = True,
    only: list[int] | None = None,
    replace: bool = False,
) -> TourResult:
    """Run every lesson (or those in ``only``), write every picture and page into the directory ``out``.

    The tour is built in a new directory beside ``out`` (``.NAME.building-*``, locked while it is built)
    and moved into place at the end, so ``out`` holds either the earlier tour or the new one, whole, even if
    the run is interrupted (Ctrl-C or SIGTERM remove the unfinished directory; after a SIGKILL, the next
    tour beside it removes the unfinished directory once it is an hour old and no tour holds its lock).

    An existing ``out`` is replaced only with ``replace=True``, and only if every file in it is one the
    earlier tour wrote (listed in its marker, :data:`lessons.publish.swap.TOUR`) or it is empty: files added
    by hand are never deleted, and the error names them. The check is made again at the moment of the swap,
    under a lock on the parent directory, so a directory or a file that appears while the tour runs is never
    removed, and concurrent tours into one new directory do not replace each other.

    Args:
        out: the output directory; its parent directory must exist.
        progress: show a tqdm progress bar on stderr.
        only: lesson numbers to run (at least one), None for all.
        replace: replace an earlier tour in ``out``.

    Returns:
        A :class:`TourResult` whose ``files`` are the paths in ``out``.

    Raises:
        ValueError: ``only`` is empty or has an unknown lesson number.
        FileExistsError: ``out`` holds an earlier tour and ``replace`` is False, or it holds files the tour
            did not write, or it appeared while the tour ran.
        FileNotFoundError: the parent directory of ``out`` does not exist.
        NotADirectoryError: ``out`` exists and is not a directory, or it is a symbolic link.
        OSError: a file cannot be written (its ``filename`` names it).
        viz.GraphvizMissing: Graphviz's ``dot`` is not installed (checked first: nothing is written).
    """
    numbers = list(lessons.LESSONS) if only is None else list(only)
    if not numbers:
        raise ValueError("no lessons to run: give at least one lesson number")
    for n in numbers:
        lessons.lesson(n)  # a clear error for an unknown number, before anything is written
    if not dot_available():  # every step draws: without dot the tour would stop at its first diagram
        raise GraphvizMissing()
    root = Path(out)
    result = TourResult()
    with built_beside(root, replace=replace, kind=TOUR) as building:
        _build(building, numbers, result, progress)
    result.files = [root / Path(f).relative_to(building) for f in result.files]
    return result


def _build(building: Path, numbers: list[int], result: TourResult, progress: bool) -> None:
    """Every lesson, page and picture into ``building``, then the index and the tour's marker."""
    from tqdm.auto import tqdm

    import viz

    t0 = time.perf_counter()
    runs = []
    notebook = _wants_notebooks(numbers)
    if not notebook and sorted(numbers) == list(lessons.LESSONS):
        result.left.append("the lessons' notebooks (pip install 'micrograph[notebook]')")
    with tqdm(total=len(numbers), desc="tour", unit="lesson", disable=not progress) as bar:
        for n in numbers:
            t = time.perf_counter()
            runs.append(_run_lesson(n, building, result, bar, notebook))
            result.seconds[n] = time.perf_counter() - t
            result.lessons += 1
            bar.update()
        bar.set_postfix_str("step-through pages")
        pages = _flipbooks(building, numbers, result)
        pages += _notebooks(building, runs, result)
        if 6 in numbers:
            pages += _slides(building, result)
    index = _index(building, runs, pages, time.perf_counter() - t0)
    with _naming(building / INDEX):
        result.files.append(viz.write_atomic(building / INDEX, index.encode("utf-8"), overwrite=False))
    mark(building, result.files, TOUR)


def _notebooks(out: Path, runs: list[_Run], result: TourResult) -> list[tuple[str, str]]:
    """Every lesson as a Jupyter notebook in ``notebooks/``, from the steps the tour ran (no second run):
    for a whole tour, with the notebook extra."""
    if any(r.pages is None for r in runs) or sorted(r.stepper.number for r in runs) != list(lessons.LESSONS):
        return []
    d = out / "notebooks"
    d.mkdir()
    with _naming(d):
        written = write_notebooks(d, runs={r.stepper.number: r.pages or [] for r in runs})
    result.files += written
    return [(f"notebooks/{p.name}", f"lesson {p.stem.removeprefix('lesson')} as a Jupyter notebook")
            for p in written]  # fmt: skip


def _wants_notebooks(numbers: list[int]) -> bool:
    """Notebooks are written for a whole tour, where the notebook extra (nbformat) is installed."""
    if sorted(numbers) != list(lessons.LESSONS):
        return False
    try:
        import nbformat  # noqa: F401 - the notebook extra: without it the tour writes no notebooks
    except ImportError:
        return False
    return True
