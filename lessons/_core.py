"""The lesson machinery: a :class:`Step` (text, the code it runs, the live objects it leaves) and the
:class:`Stepper` a student moves through in a REPL (``next``, ``back``, ``goto``, ``restart``).

A lesson is a module with ``NUMBER``, ``TITLE``, ``SECTION`` (the book's section and algorithm), ``SUMMARY``
(one line) and a generator function ``steps(l)`` that yields :class:`Step` objects. The generator reads
the live objects that the previous steps left on ``l`` (a namespace), so a step can depend on what came
before: lesson 2 yields one step per iteration of Algorithm 6.2's loop, as many as the graph has nodes.

Each step's ``run(l)`` is ordinary Python, type-checked and linted like the rest of micrograph. The code a
student sees is that function's own source (:attr:`Step.code`): what is shown is what runs, and it can be
typed again in the REPL, where ``l`` is the stepper. The text is a function of the live objects, so every
number a lesson prints is computed at that moment, never typed in.

Going back replays the lesson from its start up to the step asked for (the steps mutate live objects, such
as a node's value, so a replay is the simple way to be exact). Expensive results that do not depend on the
student (training a network) are kept in ``l.memo`` across replays.
"""

from __future__ import annotations

import html
import inspect
import io
import textwrap
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["LessonModule", "Live", "Note", "Ours", "Step", "Stepper"]

WIDTH = 100


class Note(str):
    """A message from the stepper (past the last step, before the first): shows as plain text in a REPL."""

    def __repr__(self) -> str:
        return str(self)


class Ours(str):
    """A step's line in micrograph's own words (a summary, a formula, an equation number), not a quotation."""


class Live(types.SimpleNamespace):
    """The live objects a lesson's steps leave behind (``l.graph``, ``l.grad_table``, ``l.z`` ...)."""


LessonModule = types.ModuleType


@dataclass(frozen=True)
class Step:
    """One step of a lesson: what the student reads, the code that runs, and what it leaves behind.

    Attributes:
        title: a short title.
        line: the book's pseudo-code line or equation this step is about (shown verbatim).
        run: ``run(l)`` does the step's work on the live namespace ``l`` (sets ``l.z``, ``l.graph`` ...).
        text: ``text(l)`` -> the explanation, written after ``run`` so its numbers are the live ones.
        values: ``values(l)`` -> a small plain-text table of "the values now", or None.
        figure: ``figure(l)`` -> a ``graphviz.Digraph`` (a diagram) or a matplotlib Figure (a plot) for
            this step, or None for no picture.
        params: values bound into ``run`` (shown as assignments before its code), e.g. ``{"j": 4}``.
            ``line`` is shown as "Book:" when it is the book's own words, as "micrograph:" when it is
            :class:`Ours` (micrograph's summary or formula): only the book is labelled the book.
    """

    title: str
    line: str
    run: Callable[..., None]
    text: Callable[[Any], str]
    values: Callable[[Any], str] | None = None
    figure: Callable[[Any], Any] | None = None
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def quoted(self) -> bool:
        """True when ``line`` is the book's own words; False when it is :class:`Ours` (micrograph's)."""
        return not isinstance(self.line, Ours)

    @property
    def source(self) -> str:
        """Who wrote ``line``: ``"Book"`` (the book's words) or ``"micrograph"`` (micrograph's words)."""
        return "Book" if self.quoted else "micrograph"

    @property
    def code(self) -> str:
        """The source of ``run`` without its ``def`` line and docstring, after the bound parameters."""
        return _body(self.run, self.params)


def _body(fn: Callable[..., Any], params: Mapping[str, Any]) -> str:
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return ""
    lines = src.splitlines()
    # Drop decorators and the signature (which may span lines), up to the line ending with ':'.
    k = 0
    while k < len(lines) and not lines[k].rstrip().endswith(":"):
        k += 1
    body = textwrap.dedent("\n".join(lines[k + 1 :]))
    if body.lstrip().startswith(('"""', "'''")):
        quote = body.lstrip()[:3]
        start = body.index(quote)
        end = body.find(quote, start + 3)
        body = body[end + 3 :].lstrip("\n")
    shown = [f"{name} = {value!r}" for name, value in params.items()]
    return "\n".join([*shown, body.rstrip()]).strip("\n")


class Stepper:
    """A lesson being stepped through: shows the current step on ``repr``; ``next``/``back``/``goto``.

    The live objects of the lesson are attributes: ``l.graph``, ``l.grad_table``, ``l.z`` ... (see
    :meth:`objects`). Moving past either end returns a message and stays put; it never raises.

    Args:
        module: the lesson module (``NUMBER``, ``TITLE``, ``SECTION``, ``SUMMARY``, ``steps``).
    """

    def __init__(self, module: LessonModule, *, memo: dict[str, Any] | None = None) -> None:
        self._module = module
        self._memo: dict[str, Any] = {} if memo is None else memo
        self._reset()

    # --- the lesson ---------------------------------------------------------------------------------
    @property
    def number(self) -> int:
        """The lesson's number."""
        return int(self._module.NUMBER)

    @property
    def title(self) -> str:
        """The lesson's title."""
        return str(self._module.TITLE)

    @property
    def section(self) -> str:
        """The book's section and algorithm the lesson covers."""
        return str(self._module.SECTION)

    def _reset(self) -> None:
        self._live = Live(memo=self._memo)
        self._gen: Iterator[Step] = self._module.steps(self._live)
        self._steps: list[Step] = []
        self._texts: list[str] = []
        self._peeked: Step | None = None
        self._done = False
        self._pos = -1
        self._advance()

    def _has_next(self) -> bool:
        """Whether the lesson has a step after the last one run (the generator only builds Steps; running
        them is :meth:`_advance`'s job, so looking ahead changes nothing)."""
        if self._peeked is None and not self._done:
            self._peeked = next(self._gen, None)
            self._done = self._peeked is None
        return self._peeked is not None

    def _advance(self) -> bool:
        """Run the next step of the lesson and make it current; False at the end."""
        if not self._has_next():
            return False
        step, self._peeked = self._peeked, None
        assert step is not None
        step.run(self._live, **step.params)
        self._steps.append(step)
        self._texts.append(step.text(self._live))
        self._pos = len(self._steps) - 1
        return True

    @property
    def step(self) -> Step:
        """The current :class:`Step`."""
        return self._steps[self._pos]

    @property
    def index(self) -> int:
        """The current step's number, 1-based."""
        return self._pos + 1

    def __len__(self) -> int:
        """The number of steps (runs the lesson to its end in a separate copy to count them)."""
        if self._done or (self._pos == len(self._steps) - 1 and not self._has_next()):
            return len(self._steps)
        if "_steps" not in self._memo:  # the count is the same on every run of a lesson: count it once
            probe = Stepper(self._module, memo=self._memo)
            while probe._advance():
                pass
            self._memo["_steps"] = len(probe._steps)
        return int(self._memo["_steps"])

    @property
    def at_end(self) -> bool:
        """True on the last step."""
        return self._pos == len(self._steps) - 1 and not self._has_next()

    # --- moving -------------------------------------------------------------------------------------
    def next(self) -> Stepper | Note:
        """Go to the next step and show it; at the last step, say so and stay."""
        if self._pos < len(self._steps) - 1:
            self._pos += 1
            return self
        if self._advance():
            return self
        return Note(
            f"That was the last step ({self.index}) of lesson {self.number}. l.restart() starts again."
        )

    def back(self) -> Stepper | Note:
        """Go to the previous step (replaying the lesson up to it); at the first step, say so and stay."""
        if self._pos == 0:
            return Note(f"This is the first step of lesson {self.number}; l.next() moves on.")
        return self._replay(self._pos - 1)

    def goto(self, k: int) -> Stepper | Note:
        """Go to step k (1-based); a k outside the lesson gets a message saying how many steps there are."""
        if not isinstance(k, int) or isinstance(k, bool):
            return Note(f"goto takes a step number, got {k!r}")
        if k < 1 or (k > len(self._steps) and k > len(self)):
            return Note(
                f"Lesson {self.number} has steps 1 to {len(self)}; there is no step {k}. "
                f"You are at step {self.index}."
            )
        while len(self._steps) < k and self._advance():
            pass
        return self._replay(k - 1)

    def restart(self) -> Stepper:
        """Start the lesson again from step 1 with fresh objects."""
        self._reset()
        return self

    def _replay(self, pos: int) -> Stepper:
        """Make step ``pos`` (0-based, already run) current with the live objects exactly as it left them."""
        if pos == len(self._steps) - 1:
            self._pos = pos
            return self
        # A step's run changes live objects; replaying from the start is the exact way back.
        self._reset()
        while self._pos < pos and self._advance():
            pass
        return self

    # --- what is live ---------------------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        live = self.__dict__.get("_live")
        if live is not None and name in vars(live):
            return vars(live)[name]
        raise AttributeError(
            f"lesson {self.__dict__.get('_module', types.SimpleNamespace(NUMBER='?')).NUMBER} has no live "
            f"object {name!r} at this step; live now: {', '.join(self.objects()) or 'none'}"
        )

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.objects()))

    def objects(self) -> list[str]:
        """The names of the live objects at this step (``l.<name>``), in the order they were made."""
        return [k for k in vars(self._live) if k != "memo" and not k.startswith("_")]

    # --- showing ------------------------------------------------------------------------------------
    @property
    def text(self) -> str:
        """The current step's explanation, with the live numbers."""
        return self._texts[self._pos]

    def values(self) -> str:
        """The current step's table of values now ('' when it has none)."""
        v = self.step.values
        return v(self._live) if v is not None else ""

    def figure(self) -> Any:
        """The current step's picture: a ``graphviz.Digraph``, a matplotlib Figure, or None."""
        f = self.step.figure
        return f(self._live) if f is not None else None

    def __repr__(self) -> str:
        return self.show()

    def show(self, *, width: int = WIDTH) -> str:
        """The current step as plain text: title, the book's line, the text, the code, the values now."""
        step = self.step
        head = f"Lesson {self.number}: {self.title} ({self.section})"
        out = [head, f"Step {self.index}: {step.title}", ""]
        if step.line:
            lead = f"  {step.source}:  "
            out += [
                lead + ln if i == 0 else " " * len(lead) + ln for i, ln in enumerate(step.line.splitlines())
            ]
            out.append("")
        for para in self.text.split("\n\n"):
            out.append(
                textwrap.fill(" ".join(para.split()), width=width) if not para.startswith("  ") else para
            )
            out.append("")
        if step.code:
            out.append("  Code that ran:")
            out += ["    " + ln for ln in step.code.splitlines()]
            out.append("")
        vals = self.values()
        if vals:
            out.append("  Values now:")
            out += ["    " + ln for ln in vals.splitlines()]
            out.append("")
        names = self.objects()
        if names:
            out.append(textwrap.fill("Live objects: " + ", ".join("l." + n for n in names), width=width))
        out.append("l.next()  l.back()  l.goto(k)  l.restart()  l.svg('step.svg')")
        return "\n".join(out)

    def _repr_html_(self) -> str:
        """The current step as HTML, with the step's picture inlined as SVG (for Jupyter)."""
        step = self.step
        e = html.escape
        parts = [
            f"<h3>Lesson {self.number}: {e(self.title)} <small>({e(self.section)})</small></h3>",
            f"<h4>Step {self.index}: {e(step.title)}</h4>",
        ]
        if step.line:
            parts.append(f"<p><small>{e(step.source)}:</small></p><pre class='{step.source.lower()}'>{e(step.line)}</pre>")
        parts += [f"<p>{e(p)}</p>" for p in self.text.split("\n\n")]
        if step.code:
            parts.append(f"<pre>{e(step.code)}</pre>")
        vals = self.values()
        if vals:
            parts.append(f"<pre>{e(vals)}</pre>")
        try:
            svg = self.svg_text()
        except (ValueError, RuntimeError) as problem:  # too large to draw (GraphTooLarge), or no Graphviz
            svg = ""
            parts.append(f"<p><i>{e(str(problem))}</i></p>")
        if svg:
            parts.append(f"<div>{svg[svg.find('<svg') :]}</div>")
        return "\n".join(parts)

    def svg_text(self) -> str:
        """The current step's picture as SVG source ('' when the step has none)."""
        fig = self.figure()
        if fig is None:
            return ""
        if hasattr(fig, "pipe"):
            return str(fig.pipe(format="svg", encoding="utf-8"))
        buf = io.StringIO()
        fig.savefig(buf, format="svg", bbox_inches="tight")
        _close(fig)
        return buf.getvalue()

    def svg(self, path: str | Path = "step.svg", *, overwrite: bool = True) -> Path | Note:
        """Write the current step's picture to ``path`` (.svg, .png, .pdf; a diagram also .dot).

        Returns:
            The path written, or a message when this step has no picture.

        Raises:
            FileExistsError: if the file exists and ``overwrite`` is False.
        """
        fig = self.figure()
        if fig is None:
            return Note(f"Step {self.index} of lesson {self.number} has no picture.")
        return save_figure(fig, Path(path), overwrite=overwrite)


def save_figure(fig: Any, path: Path, *, overwrite: bool = True) -> Path:
    """Write a Digraph (with :func:`viz.render`) or a matplotlib Figure (atomically) to ``path``."""
    if hasattr(fig, "pipe"):
        import viz

        return Path(viz.render(fig, path, overwrite=overwrite))
    from viz.plots import save_figure as save_plot  # viz's style, written atomically

    try:
        save_plot(fig, path, overwrite=overwrite)
    finally:
        _close(fig)
    return path


def _close(fig: Any) -> None:
    try:
        import matplotlib.pyplot as plt

        plt.close(fig)
    except Exception:  # pragma: no cover - a figure not managed by pyplot
        pass


def table(rows: list[list[str]], header: list[str]) -> str:
    """A plain-text table with right-aligned columns (for the "values now" of a step)."""
    cols = [header, *rows]
    widths = [max(len(r[c]) for r in cols) for c in range(len(header))]
    fmt = "  ".join(f"{{:>{w}}}" for w in widths)
    lines = [fmt.format(*header), "  ".join("-" * w for w in widths)]
    lines += [fmt.format(*r) for r in rows]
    return "\n".join(lines)
