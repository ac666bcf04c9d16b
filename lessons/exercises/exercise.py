"""What an exercise is: its row of the exercises' table, and how its module judges it.

The table, :data:`lessons.exercises.judges.TABLE`, is the one place that says which exercises exist and
what each is called: one :class:`Exercise` a row, in the book's order, with its module and its catalogue
facts (name, title, the book's algorithm, the lesson, what the student writes), what ``micrograph exercise
list`` shows. The module (``judges/backprop.py`` ...) declares only how the exercise is judged, in one
:class:`Judging` (``JUDGING``): the template the student fills in, the judge (its cases, each with the
engine's answer), the schema of its answers, the modules a solution may import, micrograph's own functions
in its shape, and whether the solution gets micrograph's nodes; and the mistakes it recognises
(``MISTAKES``, whose words are ``judges/mistakes.toml``). Every other list of the exercises is read from
the table.

What the student's side needs of an exercise reaches it as plain data (:meth:`Exercise.entry`), in the
question that loads the solution: that process imports none of these modules.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from lessons.exercises.answers import Schema
    from lessons.exercises.imports import Imports
    from lessons.exercises.judges.mistakes import Mistake
    from lessons.exercises.verdict import Case

__all__ = ["Exercise", "Judging", "JudgeModule"]


@dataclass(frozen=True, kw_only=True)
class Judging:
    """How an exercise is judged, as its module declares it (``JUDGING``).

    Attributes:
        template: the template's text after its marker line, with ``@SEE@``, ``@CHECK@`` and
            ``@ALGORITHM_6_N@`` where :func:`lessons.exercises.templates.template` puts the lesson, the way
            to check and the book's pseudo-code (and the marker line first).
        cases: the judge: ``cases(seed)``, the cases one at a time, each with the engine's answer.
        answer: the schema an answer must fit before it is judged.
        imports: the modules a solution may import.
        reference: returns micrograph's own functions in the exercise's shape (a namespace), for a REPL;
            their names are the functions the student writes (:attr:`Exercise.functions`).
        nodes: whether a solution may use micrograph's nodes, operations and counted tools.
        shares: the exercises whose mistakes this one's diagnoses also give (build_grad diagnoses a wrong
            sum with Algorithm 6.2's rows, backprop's).
    """

    template: str
    cases: Callable[[int], Iterator[Case]]
    answer: Schema
    imports: Imports
    reference: Callable[[], Any]
    nodes: bool = True
    shares: tuple[str, ...] = ()


class JudgeModule(Protocol):
    """A module of :mod:`lessons.exercises.judges` as the table holds it: how it judges its exercise and the
    mistakes it recognises, {code: row}, from the catalogue's rows of the codes it gives (``CODES``)."""

    JUDGING: Judging
    CODES: tuple[str, ...]
    MISTAKES: dict[str, Mistake]


@dataclass(frozen=True)
class Exercise:
    """One exercise: its row of the table, the module that judges it and the catalogue's facts.

    Attributes:
        module: the module that judges it (its :class:`Judging` is :attr:`judging`).
        name: its name: ``start`` writes NAME.py, ``check`` takes it.
        title: what it asks, in a few words. book: the book's algorithm or section it covers.
        lesson: the lesson that steps through the algorithm first (the template names it; the lesson's last
            step names the exercise).
        writes: what the student writes, as the student's side names it when it refuses micrograph's own
            (``"Algorithm 6.2"``).
    """

    module: JudgeModule
    name: str
    title: str
    book: str
    lesson: int
    writes: str

    @property
    def judging(self) -> Judging:
        """How it is judged: its module's ``JUDGING``."""
        return self.module.JUDGING

    @property
    def file(self) -> str:
        """The file ``start`` writes: ``NAME.py``."""
        return f"{self.name}.py"

    @property
    def functions(self) -> tuple[str, ...]:
        """The function(s) the student writes, by name: those of the reference, the exercise's shape."""
        return tuple(vars(self.judging.reference()))

    @property
    def call(self) -> str:
        """The function of :mod:`lessons.exercises.calls` that runs a case on the student's side, named after
        the exercise: ``call_NAME``."""
        return f"call_{self.name}"

    @property
    def heading(self) -> str:
        """What it asks with the book's algorithm, as a report's first line names it."""
        return f"{self.title} ({self.book})"

    def entry(self) -> dict[str, Any]:
        """What the student's side needs, as plain data: the exercise's name, the call that runs a case
        (:mod:`lessons.exercises.calls`), what the student writes (for the sentence that refuses
        micrograph's own) and whether the solution gets micrograph's nodes."""
        return {"name": self.name, "call": self.call, "writes": self.writes, "nodes": self.judging.nodes}
