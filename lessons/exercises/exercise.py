"""What an exercise is: the facts its own module declares, in one :class:`Exercise`.

An exercise is one module of :mod:`lessons.exercises.judges` (``judges/backprop.py`` ...): the template the
student fills in, the judge (its cases, each with the engine's answer, and the mistakes it recognises), the
schema of its answers, the modules a solution may import, micrograph's own functions in its shape, what the
student's side runs, and the lesson that steps through its algorithm first. The module declares them in one
:class:`Exercise` (``EXERCISE``), and :data:`lessons.exercises.judges.MODULES` registers the modules, the one
place an exercise is listed; every other list of the exercises is read from there.

What the student's side needs of an exercise reaches it as plain data (:meth:`Exercise.entry`), in the
question that loads the solution: that process imports none of these modules.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lessons.exercises.answers import Schema
    from lessons.exercises.imports import Imports
    from lessons.exercises.verdict import Case

__all__ = ["Exercise"]


@dataclass(frozen=True)
class Exercise:
    """One exercise, as its module declares it.

    Attributes:
        name: its name: ``start`` writes NAME.py, ``check`` takes it.
        title: what it asks, in a few words. book: the book's algorithm or section it covers.
        lesson: the lesson that steps through the algorithm first (the template names it; the lesson's last
            step names the exercise).
        template: the template's text after its marker line, with ``@SEE@``, ``@CHECK@`` and
            ``@ALGORITHM_6_N@`` where :func:`lessons.exercises.templates.template` puts the lesson, the way
            to check and the book's pseudo-code (and the marker line first).
        cases: the judge: ``cases(seed)``, the cases one at a time, each with the engine's answer.
        answer: the schema an answer must fit before it is judged.
        imports: the modules a solution may import.
        reference: returns micrograph's own functions in the exercise's shape (a namespace), for a REPL;
            their names are the functions the student writes (:attr:`functions`).
        writes: what the student writes, as the student's side names it when it refuses micrograph's own
            (``"Algorithm 6.2"``).
        nodes: whether a solution may use micrograph's nodes, operations and counted tools.
        shares: the exercises whose mistakes this one's diagnoses also give (build_grad diagnoses a wrong
            sum with Algorithm 6.2's rows, backprop's).
    """

    name: str
    title: str
    book: str
    lesson: int
    template: str
    cases: Callable[[int], Iterator[Case]]
    answer: Schema
    imports: Imports
    reference: Callable[[], Any]
    writes: str
    nodes: bool = True
    shares: tuple[str, ...] = ()

    @property
    def file(self) -> str:
        """The file ``start`` writes: ``NAME.py``."""
        return f"{self.name}.py"

    @property
    def functions(self) -> tuple[str, ...]:
        """The function(s) the student writes, by name: those of :attr:`reference`, the exercise's shape."""
        return tuple(vars(self.reference()))

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
        return {"name": self.name, "call": self.call, "writes": self.writes, "nodes": self.nodes}
