"""What a check answers: a report with the first failure diagnosed, as text, HTML (Jupyter) and JSON.

A :class:`Failure` is plain data (strings and numbers), so it crosses from the process that ran the
student's code to the one that shows it. It says which case failed, the first wrong node (its u(i)
name), the expected and actual values, for Algorithm 6.2 the terms of the sum, the student's own
traceback lines, a recognised mistake with its hint and the book's sentence, and a drawing (SVG).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import html
import json
import os
import re
import textwrap
from dataclasses import asdict, dataclass, field
from typing import Any

from viz.files import write_atomic

__all__ = ["Failure", "CaseResult", "Report", "BOOK", "WIDTH", "PLACES", "json_text", "visible", "printed"]

WIDTH = 80


def _at(where: str, **sentences: str) -> dict[str, tuple[str, str]]:
    """The book's sentences at one place: {key: (words, where)}."""
    return {key: (words, where) for key, words in sentences.items()}


BOOK: dict[str, tuple[str, str]] = {
    **_at(
        "section 6.5.6",
        sum=(
            "For any node that may be reached by going backwards from z through two or more paths, we "
            "simply sum the gradients arriving from different paths at that node."
        ),
    ),
    **_at(
        "section 6.5.3, Algorithm 6.2",
        loop=(
            "for j = n − 1 down to 1 do ... grad_table[u(j)] ← Σ_{i: j ∈ Pa(u(i))} grad_table[u(i)] "
            "∂u(i)/∂u(j)"
        ),
        table=(
            "Initialize grad_table, a data structure that will store the derivatives that have been computed."
        ),
        edges=(
            "The computational cost of this algorithm is proportional to the number of edges in the graph, "
            "assuming that the partial derivative associated with each edge requires a constant time."
        ),
        local=(
            "Each ∂u(i)/∂u(j) is a function of the parents u(j) of u(i), thus linking the nodes of the "
            "forward graph to those added for the back-propagation graph."
        ),
    ),
    **_at(
        "section 6.5.3",
        order=(
            "We will assume that the nodes of the graph have been ordered in such a way that we can compute "
            "their output one after the other, starting at u(n_i+1) and going up to u(n)."
        ),
        reverse="Computation in B proceeds in exactly the reverse of the order of computation in G",
    ),
    **_at(
        "section 6.5.3, Algorithm 6.1",
        inputs="for i = 1, ..., n_i do u(i) ← x_i end for",
        parents="A(i) ← {u(j) | j ∈ Pa(u(i))}; u(i) ← f(i)(A(i))",
    ),
    **_at(
        "section 6.5.2, figure 6.9, equation 6.53",
        recompute="In the alternative approach, f(w) is recomputed each time it is needed.",
    ),
    **_at(
        "section 6.5.2, figure 6.9",
        store=(
            "Equation 6.52 suggests an implementation in which we compute the value of f(w) only once and "
            "store it in the variable x. This is the approach taken by the back-propagation algorithm."
        ),
    ),
    **_at(
        "section 6.5.5, figure 6.10",
        symbolic=(
            "Instead, it adds nodes to a computational graph describing how to compute these derivatives."
        ),
    ),
    **_at(
        "section 6.5.5",
        again=(
            "Because the derivatives are just another computational graph, it is possible to run "
            "back-propagation again, differentiating the derivatives in order to obtain higher derivatives."
        ),
    ),
    **_at(
        "section 6.5.4, Algorithm 6.4",
        mlp_f="g ← ∇_{a(k)} J = g ⊙ f′(a(k))",
        mlp_w="∇_{W(k)} J = g h(k−1)ᵀ + λ ∇_{W(k)} Ω(θ)",
        mlp_b="∇_{b(k)} J = g + λ ∇_{b(k)} Ω(θ)",
        mlp_g="g ← ∇_{h(k−1)} J = W(k)ᵀ g",
        mlp_loop="for k = l, l − 1, ..., 1 do",
    ),
}
"""The book's sentences and lines a hint points to: {key: (words, where)}, quoted from the book's text."""


@dataclass
class Failure:
    """The first failure of a check, diagnosed.

    Attributes:
        case: the case it failed on (e.g. ``"a * a: one node takes the same parent twice"``).
        headline: one sentence: what is wrong.
        details: further lines: the node, expected and actual, the terms of the sum ...
        mistake: the recognised mistake, a short code (``"overwrite"``, ``"forward-loop"`` ...), or "".
        hint: what to change, in words, or "".
        book: a key of :data:`BOOK` (the sentence the hint rests on), or "".
        traceback: the student's own traceback lines (the checker's frames left out), or "".
        node: the wrong node's name (``"u3"``), or "".
        expected: the engine's value, or None. actual: the solution's value (a number or its repr).
        svg: the drawing of the graph with the wrong node and edge marked, or None.
        drawing_note: why there is no drawing, when there is none, or "".
    """

    case: str
    headline: str
    details: list[str] = field(default_factory=list)
    mistake: str = ""
    hint: str = ""
    book: str = ""
    traceback: str = ""
    node: str = ""
    expected: Any = None
    actual: Any = None
    svg: str | None = None
    drawing_note: str = ""

    def book_text(self) -> str:
        """The book's sentence the hint rests on, quoted with where it is, or ""."""
        if not self.book:
            return ""
        words, where = BOOK[self.book]
        return f"The book ({where}): “{words}”"

    def as_dict(self) -> dict[str, Any]:
        """The failure as JSON-ready data (the drawing left out: it is written to a file)."""
        d = asdict(self)
        d.pop("svg")
        d["book"] = self.book_text()
        return d


_UNSEEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def json_text(data: Any) -> str:
    """``data`` as indented JSON, its non-ASCII text as it is, but a lone surrogate (which a solution's
    message may hold, and no encoding writes) as its JSON escape, ``\\ud800``."""
    return json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8", "backslashreplace").decode("utf-8")


def printed(text: str, lines: int, cut: int, margin: str = "") -> list[str]:
    """What the solution printed, as every report shows it: a heading that counts its lines and those cut,
    then each line kept behind ``margin + "| "``, so that none reads as the checker's own (escape control
    characters with :func:`visible` before the text reaches a terminal or a platform)."""
    more = f", {cut:,} of them not shown" if cut else ""
    kept = text.rstrip("\n").split("\n") if text.strip("\n") else []  # a carriage return stays in its line
    return [f"Your code printed {lines:,} line(s){more}:", *(f"{margin}| {t}" for t in kept)]


def visible(text: str) -> str:
    """``text`` with every control character but newline and tab written as an escape (``\\x1b``): what
    the solution printed or raised reaches a terminal, where an escape sequence could clear the report and
    print another, and a direction override could reorder it; a lone surrogate, which no encoding
    writes, likewise (``\\ud800``)."""
    return _UNSEEN.sub(lambda m: ascii(m.group())[1:-1], text)


def _wrap(text: str, indent: str = "  ") -> list[str]:
    out: list[str] = []
    for para in text.split("\n"):
        out += textwrap.wrap(
            para,
            WIDTH,
            initial_indent=indent,
            subsequent_indent=indent + "  ",
            break_long_words=False,
            break_on_hyphens=False,
        ) or [""]
    return out


@dataclass
class CaseResult:
    """One case of a check, scored.

    Attributes:
        name: the case. passed: whether the answer was right. points, max_points: its score.
        headline: why it failed ("" if it passed). mistake: the recognised mistake's code, or "".
    """

    name: str
    passed: bool
    points: float
    max_points: float
    headline: str = ""
    mistake: str = ""


PLACES: dict[str, dict[str, str]] = {
    "terminal": {"seed": "; --seed N draws others"},
    "python": {"seed": "; check(..., seed=N) draws others"},
    "page": {"seed": ""},
}
"""Where a report is read, and what it names there: the command line's flags, Python's arguments, or the
page's own controls (the page has no command line)."""


@dataclass
class Report:
    """The answer of a check: every case with its points, and the first failure diagnosed.

    Attributes:
        exercise: the exercise's name. title: what it asks (with the book's algorithm).
        cases: every case, in order, scored (:class:`CaseResult`).
        failure: the first failure, diagnosed, or None if every case passed.
        seconds: the wall time of the whole check.
        seed: the seed of the random cases (``--seed``).
        output_text: what the solution printed, capped (the first and last lines).
        output_lines, output_cut: how many lines it printed, and how many of them are not shown.
        sha256: the hash of the solution's source text.
        svg_path: where the drawing of the failure was written (terminal use), or None.
        record_note: why the verdict was not recorded in the progress file, or "" (recorded, or not asked).
    """

    exercise: str
    title: str
    cases: list[CaseResult]
    failure: Failure | None
    seconds: float = 0.0
    seed: int = 0
    output_text: str = ""
    output_lines: int = 0
    output_cut: int = 0
    sha256: str = ""
    svg_path: str | None = None
    record_note: str = ""

    @property
    def checks(self) -> list[tuple[str, bool]]:
        """(case, passed) for every case run, in order."""
        return [(c.name, c.passed) for c in self.cases]

    @property
    def score(self) -> float:
        """The points of the cases passed."""
        return sum(c.points for c in self.cases)

    @property
    def max_score(self) -> float:
        """The points of every case."""
        return sum(c.max_points for c in self.cases)

    @property
    def passed(self) -> bool:
        """True if every case passed."""
        return self.failure is None and bool(self.cases)

    def __bool__(self) -> bool:
        return self.passed

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data for an autograder: the cases scored, the first failure in full."""
        return {
            "exercise": self.exercise,
            "title": self.title,
            "seed": self.seed,
            "passed": self.passed,
            "score": self.score,
            "max_score": self.max_score,
            "checks_run": len(self.cases),
            "checks_passed": sum(c.passed for c in self.cases),
            "cases": [asdict(c) for c in self.cases],
            "first_failure": None if self.failure is None else self.failure.as_dict(),
            "output": {"text": self.output_text, "lines": self.output_lines, "cut": self.output_cut},
            "drawing": self.svg_path,
            "seconds": round(self.seconds, 3),
            "solution_sha256": self.sha256,
        }

    def to_json(self) -> str:
        """:meth:`as_dict` as a JSON string."""
        return json_text(self.as_dict())

    def _points(self) -> str:
        return f"{self.score:g} of {self.max_score:g} points"

    def text(self, place: str = "terminal") -> str:
        """The report, 80 columns wide: each case, the score, the first failure diagnosed.

        Args:
            place: where it is read, so that it names what the reader has there (:data:`PLACES`):
                ``"terminal"`` (``micrograph exercise check``: ``--seed``, the drawing's file), ``"python"``
                (``exercises.check``: ``seed=``, ``report.save_svg``) or ``"page"`` (the site: the drawing
                below the report, no command line).

        Raises:
            ValueError: an unknown place.
        """
        if place not in PLACES:
            raise ValueError(f"place must be one of {', '.join(PLACES)}, got {place!r}")
        lines = [f"exercise {self.exercise}: {self.title}"]
        lines += _wrap(f"seed {self.seed} (the random cases{PLACES[place]['seed']})", "  ")
        for c in self.cases:
            mark = f" [{c.mistake}]" if c.mistake else ""
            lines += _wrap(f"{'PASS' if c.passed else 'FAIL'}  {c.name}{mark}", "  ")
        f = self.failure
        ok = sum(c.passed for c in self.cases)
        if f is None:
            lines.append(f"All {ok} checks passed: {self._points()} ({self.seconds:.1f} s).")
            return visible("\n".join(lines + self._output_lines() + self._record_lines()))
        if self.cases:
            lines.append(f"{ok} of {len(self.cases)} checks passed: {self._points()} ({self.seconds:.1f} s).")
        else:
            lines.append("No check ran: the solution could not be loaded.")
        lines.append("")
        lines += self._failure_lines(f, place)
        return visible("\n".join(lines + self._output_lines() + self._record_lines()))

    def _record_lines(self) -> list[str]:
        """One line, unwrapped (it names a file): why the verdict was not recorded."""
        return ["", f"Your verdict was not recorded: {self.record_note}"] if self.record_note else []

    def _failure_lines(self, f: Failure, place: str) -> list[str]:
        lines = _wrap(f"FAILED first on: {f.case}", "")
        lines += _wrap(f.headline, "  ")
        for d in f.details:
            lines += _wrap(d, "    ")
        if f.traceback:
            lines.append("  Your code raised (your lines only):")
            lines += ["    " + t for t in f.traceback.rstrip().splitlines()]
        if f.hint:
            lines += _wrap(f"Hint: {f.hint}", "  ")
        if f.book:
            lines += _wrap(f.book_text(), "  ")
        if f.svg and place == "page":
            lines += _wrap("Drawing of the failure: below.", "  ")
        elif self.svg_path:
            lines += _wrap(f"Drawing of the failure: {self.svg_path}", "  ")
        elif f.svg and f.drawing_note:
            lines += _wrap(f"(Drawing not written: {f.drawing_note}; report.save_svg(path) writes it)", "  ")
        elif f.svg:
            lines += _wrap(
                "Drawing of the failure: shown in Jupyter; elsewhere report.save_svg('failure.svg')", "  "
            )
        elif f.drawing_note:
            lines += _wrap(f"(No drawing: {f.drawing_note})", "  ")
        return lines

    def _output_lines(self) -> list[str]:
        if not self.output_lines:
            return []
        return ["", *printed(self.output_text, self.output_lines, self.output_cut, margin="  ")]

    def save_svg(self, path: str | os.PathLike[str]) -> str:
        """Write the drawing of the failure to ``path`` (an SVG file) and return the path.

        Raises:
            ValueError: there is no drawing (every check passed, or the failure has none: see the text).
        """
        if self.failure is None or not self.failure.svg:
            note = self.failure.drawing_note if self.failure is not None else "every check passed"
            raise ValueError(f"this report has no drawing ({note or 'none was made'})")
        write_atomic(path, self.failure.svg.encode("utf-8"))
        self.svg_path = str(path)
        return self.svg_path

    def __str__(self) -> str:
        return self.text("python")

    def __repr__(self) -> str:
        return self.text("python")

    def _repr_html_(self) -> str:
        """The report in Jupyter: the text, and the drawing of the failure inline."""
        parts = [f"<pre style='white-space: pre-wrap'>{html.escape(self.text('python'))}</pre>"]
        if self.failure is not None and self.failure.svg:
            parts.append(f"<div class='micrograph-failure'>{self.failure.svg}</div>")
        return "\n".join(parts)
