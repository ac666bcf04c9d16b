"""Every lesson as a Jupyter notebook, generated from the lesson module itself: no second copy to keep.

A lesson module yields :class:`~lessons.step.Step` objects: a title, the book's line, ``run(l)`` (the code),
``text(l)`` (the explanation, a function of the live objects) and ``figure(l)`` (the picture). The
notebook of lesson n is that lesson run once, here, by a :class:`~lessons.stepper.Stepper`:

* the title, the book's line, each step's text (with the numbers of this run), its table of the values
  now, and the engine's lines it ran, with their values (the "Code that ran" every view shows,
  :attr:`Stepper.code`), become Markdown cells;
* each step's own code, the source of its ``run`` (:attr:`Step.lesson_code`), becomes a code cell,
  preceded by ``step = next(lesson)`` (the lesson's next Step, as the stepper takes it) and followed, where
  the step has a picture, by ``step.figure(l)``, which displays it;
* the pictures of this run are stored as the code cells' outputs, so the notebook shows them unexecuted.

Executed in a kernel, the notebook runs the same code on the same live namespace ``l`` in the same order as
the stepper does, so it reproduces the lesson's numbers and pictures.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lessons
from lessons.showing import figure_svg
from lessons.shown import Shown
from lessons.step import Live, Step
from lessons.stepper import Stepper, _expression

__all__ = ["Page", "notebook", "page", "record", "start", "write_notebooks"]


def start(n: int) -> tuple[Live, Iterator[Step], dict[str, Any]]:
    """The live namespace ``l`` of lesson n, its steps (a generator), and the names its code uses.

    Called by a notebook's first cell: ``l, lesson, names = lessons.publish.notebooks.start(n)``. The names
    are the lesson module's globals (``Value``, ``Graph``, ``fmt`` ...), which its steps' code refers to.

    Raises:
        ValueError: there is no lesson n.
    """
    row = lessons.lesson(n)
    module = row.load()
    expr, at = _expression(row, None, None)
    _show_figures_as_svg()
    l = Live(memo={})  # noqa: E741 -- the name the lessons' code uses
    if expr is not None:
        l.expr, l.at = expr, dict(at)
    names = {k: v for k, v in vars(module).items() if not k.startswith("__")}
    return l, module.steps(l), names


def _show_figures_as_svg() -> None:
    """In IPython, show matplotlib Figures as SVG, as diagrams are (viz's plots use no pyplot backend)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    ip = get_ipython()
    if ip is not None:
        ip.display_formatter.formatters["image/svg+xml"].for_type_by_name(
            "matplotlib.figure", "Figure", figure_svg
        )


def _quote(shown: Shown) -> str:
    lines = "\n".join(f"    {ln}" for ln in shown.line.splitlines())
    return f"*{shown.source}:*\n\n{lines}\n" if shown.line else ""


Page = tuple[Shown, str]
"""One step of a lesson as it ran, what its notebook cells hold: the step as every view shows it
(:class:`lessons.shown.Shown`) and its picture as SVG source ('' for none)."""


def page(stepper: Stepper, svg: str | None = None) -> Page:
    """The stepper's current step as a :data:`Page`; ``svg`` if the caller already drew the picture."""
    shown = Shown.of(stepper)
    picture = stepper.svg_text() if svg is None and shown.pictured else (svg or "")
    return shown, picture


def record(stepper: Stepper) -> list[Page]:
    """Run the stepper from its current step to the lesson's end, keeping each step as a :data:`Page`."""
    pages = [page(stepper)]
    while not stepper.at_end:
        stepper.next()
        pages.append(page(stepper))
    return pages


def notebook(n: int, pages: list[Page] | None = None) -> Any:
    """The notebook of lesson n (an ``nbformat`` NotebookNode, version 4), with this run's pictures.

    Args:
        n: the lesson number.
        pages: the lesson's steps as they ran (:func:`record`); None runs the lesson here, once.

    Raises:
        ValueError: there is no lesson n.
        ImportError: nbformat is not installed (``pip install 'micrograph[notebook]'``).
    """
    import nbformat
    from nbformat import v4

    row = lessons.lesson(n)
    if pages is None:
        pages = record(Stepper(row))
    cells = [
        v4.new_markdown_cell(
            f"# Lesson {row.number}: {row.title}\n\n*{row.section}*\n\n{row.summary}\n\n"
            "Run the cells in order: each code cell is one step of the lesson, the code that runs when "
            "you step through it with `lessons.start(" + str(n) + ")`."
        ),
        v4.new_code_cell(
            "import lessons.publish.notebooks\n\n"
            f"l, lesson, names = lessons.publish.notebooks.start({n})  # the live objects, its steps, names\n"
            "globals().update(names)"
        ),
    ]
    for p in pages:
        cells += _cells(p)
    nb = v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.validate(nb)
    return nb


def _cells(p: Page) -> list[Any]:
    """A step's Markdown cell (title, the book's line, the text, the values now, the code that ran, the
    prediction) and its code cell."""
    from nbformat import v4

    from viz.render import svg_element

    shown, svg = p
    head = f"## Step {shown.index}: {shown.title}\n\n{_quote(shown)}\n"
    text = "\n\n".join(" ".join(q.split()) if not q.startswith("  ") else f"```\n{q}\n```"
                         for q in shown.text.split("\n\n"))  # fmt: skip
    values = f"\n\n*Values now:*\n\n```text\n{shown.values}\n```" if shown.values else ""
    ask = f"\n\n**Predict:** {shown.question}" if shown.question else ""
    ran = (
        "\n\n*Code that ran (micrograph's own lines, with this step's values):*\n\n"
        f"```python\n{shown.code}\n```"
        if shown.code
        else ""
    )
    code = [f"step = next(lesson)  # step {shown.index}: {shown.title}", shown.lesson_code]
    outputs = []
    if shown.pictured:
        code.append("step.figure(l)")
        if svg:
            data = {"image/svg+xml": svg_element(svg)}
            outputs.append(v4.new_output("display_data", data=data))
    cell = v4.new_code_cell("\n".join(c for c in code if c))
    cell.outputs = outputs
    return [v4.new_markdown_cell(head + text + values + ran + ask), cell]


def write_notebooks(
    out: str | os.PathLike[str], *, overwrite: bool = False, runs: dict[int, list[Page]] | None = None
) -> list[Path]:
    """Write ``lesson1.ipynb`` .. ``lessonN.ipynb`` into the directory ``out`` (atomically, one per lesson).

    Args:
        out: an existing directory.
        overwrite: replace existing notebooks; if False, an existing one is an error and nothing is written.
        runs: each lesson's steps as they already ran (:func:`record`), by lesson number; a lesson not in
            it runs here, once.

    Returns:
        The paths written.

    Raises:
        FileExistsError: a notebook exists and ``overwrite`` is False.
        ImportError: nbformat is not installed.
    """
    import nbformat

    from viz.files import write_atomic

    d = Path(out)
    paths = [d / f"lesson{n}.ipynb" for n in lessons.LESSONS]
    if not overwrite:
        clash = [p for p in paths if p.exists() or p.is_symlink()]
        if clash:
            raise FileExistsError(f"{clash[0]} exists")
    runs = runs or {}
    texts = [nbformat.writes(notebook(n, runs.get(n))) for n in lessons.LESSONS]
    return [write_atomic(p, t.encode("utf-8"), overwrite=overwrite) for p, t in zip(paths, texts)]
