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
import shutil
import textwrap
import tokenize
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from micrograph import Graph, Value
from micrograph.expr import bind, build, variables
from viz.words import table as table  # the lessons' tables, in the words every view shares

__all__ = ["LessonModule", "Live", "Note", "Ours", "Question", "Step", "Stepper", "figure_svg", "picture_svg"]

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
class Question:
    """A question a step asks before the step that answers it (predict, then see).

    Attributes:
        text: the question, e.g. "What will grad_table[u3] be?".
        expected: the true answer, computed by the engine (the answer key), never by the lesson's own loop.
        where: which step shows the answer, e.g. "step 5".
    """

    text: str
    expected: float
    where: str = "the next step"

    def check(self, value: float) -> str:
        """Whether ``value`` is right, within 0.1% (or 0.0005 near zero), with the true value."""
        right = abs(value - self.expected) <= max(5e-4, 1e-3 * abs(self.expected))
        from viz.words import fmt

        if right:
            return f"Right: {fmt(self.expected)} (you said {value:g}). {self.where.capitalize()} shows why."
        return (
            f"Not quite: the answer is {fmt(self.expected)}; you said {value:g}. "
            f"{self.where.capitalize()} shows how it is computed."
        )


@dataclass(frozen=True)
class Step:
    """One step of a lesson: what the student reads, the code that runs, and what it leaves behind.

    Attributes:
        title: a short title.
        line: the book's pseudo-code line or equation this step is about (shown verbatim).
        run: ``run(l)`` does the step's work on the live namespace ``l`` (sets ``l.z``, ``l.graph`` ...).
        text: ``text(l)`` -> the explanation, written after ``run`` so its numbers are the live ones.
        values: ``values(l)`` -> a small plain-text table of "the values now", or None.
        figure: ``figure(l)`` -> a ``graphviz.Digraph`` (a diagram) or a ``viz.charts.Chart`` (a plot) for
            this step, or None for no picture.
        params: values bound into ``run`` (shown as assignments before its code), e.g. ``{"j": 4}``.
        question: ``question(l)`` -> a :class:`Question` to predict before moving on, or None.
            ``line`` is shown as "Book:" when it is the book's own words, as "micrograph:" when it is
            :class:`Ours` (micrograph's summary or formula): only the book is labelled the book.
        ran: comment lines shown after ``run``'s code: what the engine's own code did in this step (the
            lines of build_grad a call ran), where ``run`` only looks at its record.
    """

    title: str
    line: str
    run: Callable[..., None]
    text: Callable[[Any], str]
    values: Callable[[Any], str] | None = None
    figure: Callable[[Any], Any] | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    question: Callable[[Any], Question | None] | None = None
    ran: str = ""

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
        """The source of ``run`` without its ``def`` line and docstring, after the bound parameters.

        Lines are at most :data:`CODE_WIDTH` columns where they can be: a trailing comment that makes a
        line longer goes on its own line(s) above the code it explains (:func:`fit_code`).
        """
        code = fit_code(_body(self.run, self.params))
        return f"{code}\n{self.ran}" if self.ran else code


PRE_STYLE = "white-space: pre-wrap; word-break: normal; overflow-wrap: normal"
"""The style of a step's preformatted blocks in Jupyter: a line too long for the output area wraps at a
space, never inside a word (JupyterLab's own style for output ``pre`` breaks anywhere: "n / etwork")."""

CODE_WIDTH = 76
"""Columns of a line of shown code: indented by four in the terminal, it fits an 80-column screen."""


def fit_code(code: str, width: int = CODE_WIDTH) -> str:
    """``code`` with every comment that makes a line longer than ``width`` moved onto lines of its own.

    A trailing comment goes above its line, at the line's indentation, wrapped to ``width``; a long
    comment line is wrapped. Code itself is never changed or cut: the result runs as the original does.
    Comments are found with :mod:`tokenize`, so a ``#`` inside a string is not one.

    Args:
        code: Python source.
        width: the longest line wanted, in columns.

    Returns:
        The source, with the same statements in the same order.
    """
    lines = code.split("\n")
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code + "\n").readline))
    except (tokenize.TokenError, SyntaxError):
        return code
    comments = {t.start[0] - 1: t.start[1] for t in tokens if t.type == tokenize.COMMENT}
    out: list[str] = []
    for k, line in enumerate(lines):
        column = comments.get(k)
        if len(line) <= width or column is None:
            out.append(line)
            continue
        before = line[:column].rstrip()
        indent = line[: len(line) - len(line.lstrip())]
        text = line[column:].lstrip("#").strip()
        wrapped = textwrap.wrap(text, width=max(20, width - len(indent) - 2), break_on_hyphens=False)
        out += [f"{indent}# {w}" for w in wrapped or [""]]
        if before.strip():
            out.append(before)
    return "\n".join(out)


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


def _expression(
    module: LessonModule, expr: str | None, at: Mapping[str, float] | None
) -> tuple[str | None, dict[str, float]]:
    """The expression and values a lesson runs on: the student's, checked, or the lesson's default.

    Raises:
        ValueError: the lesson takes no expression; ``at`` without ``expr``; ``expr`` that the parser
            refuses (an :class:`~micrograph.expr.ExprError`, a ValueError), or that has no variable;
            values that :func:`micrograph.expr.bind` refuses (a variable with no
            value in ``at``, a name in ``at`` the expression does not use, a value that is not a finite
            number).
        DomainError: an operation of ``expr``, or its local derivative, is undefined at ``at`` (a
            ValueError too; Algorithm 6.2 on the expression's graph raises it, naming the node).
    """
    default = getattr(module, "EXPR", None)
    if expr is None:
        if at is not None:
            raise ValueError(f"lesson {module.NUMBER}: at={dict(at)!r} given without expr=")
        if default is None:
            return None, {}
        return str(default), dict(module.AT)
    if default is None:
        raise ValueError(
            f"lesson {module.NUMBER} does not take an expression: "
            f"{getattr(module, 'NO_EXPR', 'it runs on its own example.')}"
        )
    if not isinstance(expr, str):
        raise ValueError(
            f'lesson {module.NUMBER}: expr must be a string such as "x*y + exp(x)", got {expr!r}'
        )
    if not variables(expr):  # the safe parser of the command line: ExprError (a ValueError) if refused
        raise ValueError(f"lesson {module.NUMBER}: expr={expr!r} has no variable to differentiate by")
    values = bind(expr, at or {}, option="at")
    z = build(expr, {n: Value(x, label=n) for n, x in values.items()})
    # Every lesson that takes an expression differentiates it: refuse, before any step runs, a point
    # where an operation or a local derivative is undefined (DomainError names the node and value).
    Graph(z).backprop()
    return expr, values


def _exercise_note(names: tuple[str, ...]) -> str:
    """The closing paragraph of a lesson: the exercises where the student writes its algorithm."""
    if len(names) == 1:
        n = names[0]
        return (
            f"Write it yourself: the exercise {n}. micrograph exercise start {n} writes {n}.py, a template "
            f"with the book's pseudo-code; micrograph exercise check {n}.py checks your code against "
            "micrograph's own algorithm."
        )
    return (
        f"Write it yourself: the exercises {', '.join(names[:-1])} and {names[-1]}. micrograph exercise "
        "start NAME writes NAME.py, a template with the book's pseudo-code; micrograph exercise check "
        "NAME.py checks your code against micrograph's own algorithm."
    )


class Stepper:
    """A lesson being stepped through: shows the current step on ``repr``; ``next``/``back``/``goto``.

    The live objects of the lesson are attributes: ``l.graph``, ``l.grad_table``, ``l.z`` ... (see
    :meth:`objects`). Moving past either end returns a message and stays put; it never raises.

    Args:
        module: the lesson module (``NUMBER``, ``TITLE``, ``SECTION``, ``SUMMARY``, ``steps``).
    """

    def __init__(
        self,
        module: LessonModule,
        *,
        memo: dict[str, Any] | None = None,
        expr: str | None = None,
        at: Mapping[str, float] | None = None,
    ) -> None:
        self._module = module
        self._memo: dict[str, Any] = {} if memo is None else memo
        self._expr, self._at = _expression(module, expr, at)
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
        if self._expr is not None:
            self._live.expr, self._live.at = self._expr, dict(self._at)
        self._gen: Iterator[Step] = self._module.steps(self._live)
        self._steps: list[Step] = []
        self._texts: list[str] = []
        self._questions: list[Question | None] = []
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
        self._questions.append(step.question(self._live) if step.question is not None else None)
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
            probe = Stepper(
                self._module, memo=self._memo, expr=self._expr, at=self._at if self._expr else None
            )
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
        return Note(f"That was the last step ({self.index}) of lesson {self.number}.")

    def back(self) -> Stepper | Note:
        """Go to the previous step (replaying the lesson up to it); at the first step, say so and stay."""
        if self._pos == 0:
            return Note(f"This is the first step of lesson {self.number}.")
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

    # --- predict, then see ------------------------------------------------------------------------
    @property
    def question(self) -> Question | None:
        """The current step's :class:`Question` (answer it with :meth:`answer`), or None."""
        return self._questions[self._pos]

    def answer(self, value: float) -> Note:
        """Check your answer to the current step's question: right or wrong, with the true value.

        Args:
            value: your prediction, a number.

        Returns:
            A message saying whether ``value`` is right (within 0.1%) and what the true value is.
        """
        q = self.question
        if q is None:
            return Note(f"Step {self.index} of lesson {self.number} asks no question.")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return Note(f"answer takes a number, got {value!r}")
        return Note(q.check(float(value)))

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
        """The current step's explanation, with the live numbers; the last step's ends by naming the
        exercise (``micrograph exercise start NAME``) where the student writes the lesson's algorithm."""
        text = self._texts[self._pos]
        names = getattr(self._module, "EXERCISES", ())
        if names and self.at_end:
            text += "\n\n" + _exercise_note(names)
        return text

    def values(self) -> str:
        """The current step's table of values now ('' when it has none)."""
        v = self.step.values
        return v(self._live) if v is not None else ""

    def figure(self) -> Any:
        """The current step's picture: a ``graphviz.Digraph``, a ``viz.charts.Chart``, or None."""
        f = self.step.figure
        return f(self._live) if f is not None else None

    def __repr__(self) -> str:
        return self.show()

    def show(self, *, width: int | None = None, keys: str | None = None) -> str:
        """The current step as plain text: title, the book's line, the text, the code, the values now.

        Args:
            width: wrap the text to this many columns (default: the terminal's width, at most 100).
            keys: the last line, the keys that move on (default: the REPL's ``l.next()  l.back() ...``).
        """
        if width is None:
            width = min(WIDTH, shutil.get_terminal_size((WIDTH, 24)).columns - 1)
        width = max(width, 40)
        step = self.step
        head = textwrap.fill(f"Lesson {self.number}: {self.title} ({self.section})", width=width)
        out = [head, textwrap.fill(f"Step {self.index}: {step.title}", width=width), ""]
        if step.line:
            lead = f"  {step.source}:  "
            pad = " " * len(lead)
            for i, ln in enumerate(step.line.splitlines()):
                indent = ln[: len(ln) - len(ln.lstrip())]
                wrapped = textwrap.wrap(
                    ln.strip(), width=max(20, width - len(lead) - len(indent)), break_on_hyphens=False
                ) or [""]
                out += [(lead if i == 0 and k == 0 else pad) + indent + w for k, w in enumerate(wrapped)]
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
        q = self.question
        if q is not None:
            how = (
                "answer with l.answer(number), then l.next() shows it"
                if keys is None
                else "type it in the Answer box below, then Next shows it"
                if keys == ""  # the page: its own controls, no keys
                else "you are asked next"
            )
            out.append(textwrap.fill(f"Predict: {q.text} ({how})", width=width))
            out.append("")
        if keys is None:
            names = self.objects()
            if names:
                out.append(textwrap.fill("Live objects: " + ", ".join("l." + n for n in names), width=width))
            keys = "l.next()  l.back()  l.goto(k)  l.restart()  l.svg('step.svg')"
        if keys:
            out.append(keys)
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
            who = step.source
            parts.append(f"<p><small>{e(who)}:</small></p>")
            parts.append(f"<pre class='{who.lower()}' style='{PRE_STYLE}'>{e(step.line)}</pre>")
        parts += [f"<p>{e(p)}</p>" for p in self.text.split("\n\n")]
        if step.code:
            parts.append(f"<pre style='{PRE_STYLE}'>{e(step.code)}</pre>")
        vals = self.values()
        if vals:
            parts.append(f"<pre style='{PRE_STYLE}'>{e(vals)}</pre>")
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
        return picture_svg(self.figure())

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
        import viz

        return viz.save(fig, Path(path), overwrite=overwrite)


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
