"""A lesson's step shown: as text in a terminal, as HTML in Jupyter, its picture as SVG.

Each view renders the step's one record, :class:`~lessons.shown.Shown`: the
:class:`~lessons.stepper.Stepper` shows its current step with :func:`as_text` (``repr``, ``show``) and
:func:`as_html` (``_repr_html_``); the tour's page and the site's JSON render the same record
(:mod:`lessons.publish.tour`, :mod:`lessons.publish.web`). The tour, the notebooks and the browser site draw
a step's picture with :func:`picture_svg`.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import html
import io
import shutil
import textwrap
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lessons.shown import Shown

__all__ = ["as_text", "as_html", "picture_svg", "figure_svg", "PRE_STYLE", "WIDTH"]

WIDTH = 100
"""The widest a step's text is wrapped in a terminal, in columns."""

PRE_STYLE = "white-space: pre-wrap; word-break: normal; overflow-wrap: normal"
"""The style of a step's preformatted blocks in Jupyter: a line too long for the output area wraps at a
space, never inside a word (JupyterLab's own style for output ``pre`` breaks anywhere: "n / etwork")."""


def as_text(
    shown: Shown, *, width: int | None = None, keys: str | None = None, place: str = "terminal"
) -> str:
    """A step as plain text: title, the book's line, the text, the code, the values now, the keys.

    Args:
        shown: the step.
        width: wrap the text to this many columns (default: the terminal's width, at most 100).
        keys: the last line, the keys that move on (default: the REPL's ``l.next()  l.back() ...``).
        place: where it is read, for how a question is answered there: ``"terminal"`` (the REPL's
            ``l.answer``, or the pager that asks next) or ``"page"`` (the site's Answer box).
    """
    if width is None:
        width = min(WIDTH, shutil.get_terminal_size((WIDTH, 24)).columns - 1)
    width = max(width, 40)
    head = textwrap.fill(f"Lesson {shown.number}: {shown.lesson} ({shown.section})", width=width)
    out = [head, textwrap.fill(f"Step {shown.index}: {shown.title}", width=width), ""]
    if shown.line:
        lead = f"  {shown.source}:  "
        pad = " " * len(lead)
        for i, ln in enumerate(shown.line.splitlines()):
            indent = ln[: len(ln) - len(ln.lstrip())]
            wrapped = textwrap.wrap(  # a line too long goes on, indented, so it reads as one line of the book
                ln.strip(),
                width=max(20, width - len(lead) - len(indent)),
                subsequent_indent="    ",
                break_on_hyphens=False,
            ) or [""]
            out += [(lead if i == 0 and k == 0 else pad) + indent + w for k, w in enumerate(wrapped)]
        out.append("")
    for para in shown.text.split("\n\n"):
        out.append(textwrap.fill(" ".join(para.split()), width=width) if not para.startswith("  ") else para)
        out.append("")
    code = shown.code
    if code:
        out.append("  Code that ran (micrograph's own lines, with this step's values):")
        out += [("    " + ln).rstrip() for ln in code.splitlines()]
        out.append("")
    vals = shown.values
    if vals:
        out.append("  Values now:")
        out += ["    " + ln for ln in vals.splitlines()]
        out.append("")
    q = shown.question
    if q is not None:
        how = (
            "type it in the Answer box below, then Next shows it"
            if place == "page"
            else "answer with l.answer(number), then l.next() shows it"
            if keys is None
            else "you are asked next"
        )
        out.append(textwrap.fill(f"Predict: {q} ({how})", width=width))
        out.append("")
    if keys is None:
        names = shown.objects
        if names:
            out.append(textwrap.fill("Live objects: " + ", ".join("l." + n for n in names), width=width))
        keys = "l.next()  l.back()  l.goto(k)  l.restart()  l.svg('step.svg')"
    if keys:
        out.append(keys)
    return "\n".join(out)


def as_html(shown: Shown) -> str:
    """A step as HTML, with the step's picture inlined as SVG (for Jupyter).

    Args:
        shown: the step, with its picture (``Shown.of(stepper, picture=True)``).
    """
    e = html.escape
    parts = [
        f"<h3>Lesson {shown.number}: {e(shown.lesson)} <small>({e(shown.section)})</small></h3>",
        f"<h4>Step {shown.index}: {e(shown.title)}</h4>",
    ]
    if shown.line:
        who = shown.source
        parts.append(f"<p><small>{e(who)}:</small></p>")
        parts.append(f"<pre class='{who.lower()}' style='{PRE_STYLE}'>{e(shown.line)}</pre>")
    parts += [f"<p>{e(p)}</p>" for p in shown.text.split("\n\n")]
    if shown.code:
        parts.append("<p><small>Code that ran (micrograph's own lines, with this step's values):</small></p>")
        parts.append(f"<pre class='engine' style='{PRE_STYLE}'>{e(shown.code)}</pre>")
    if shown.values:
        parts.append(f"<pre style='{PRE_STYLE}'>{e(shown.values)}</pre>")
    svg = ""
    if shown.picture_note:
        parts.append(f"<p><i>{e(shown.picture_note)}</i></p>")
    else:
        try:
            svg = picture_svg(shown.picture)
        except (ValueError, RuntimeError) as problem:  # too large to draw (GraphTooLarge), or no Graphviz
            parts.append(f"<p><i>{e(str(problem))}</i></p>")
    if svg:
        from viz.render import svg_element

        parts.append(f"<div>{svg_element(svg)}</div>")
    return "\n".join(parts)


def picture_svg(picture: Any) -> str:
    """A step's picture as SVG source: a drawing laid out by Graphviz (or the layout a browser page sets),
    a ``viz.charts.Chart`` or a matplotlib Figure drawn by matplotlib; '' for None.

    Raises:
        ValueError: a drawing too large to lay out readably (``viz.GraphTooLarge``).
        RuntimeError: Graphviz is missing or failed.
    """
    if picture is None:
        return ""
    if hasattr(picture, "pipe"):
        from viz.render import pipe_svg

        return pipe_svg(picture)
    from viz.charts import Chart
    from viz.plots import close

    fig = picture.figure() if isinstance(picture, Chart) else picture  # a Chart is drawn by matplotlib
    try:
        return figure_svg(fig)
    finally:
        close(fig)


def figure_svg(fig: Any) -> str:
    """A matplotlib Figure as SVG source, cropped to what is drawn (the figure stays open)."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    return buf.getvalue()
