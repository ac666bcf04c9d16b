"""A lesson's step as it is shown: one record, built once from the stepper's current step.

Every place that shows a step renders this record: the terminal's text and Jupyter's HTML
(:mod:`lessons.showing`), a section of the tour's lesson page (:mod:`lessons.publish.tour`), the site's
JSON (:mod:`lessons.publish.web`) and a lesson notebook's two cells (:mod:`lessons.publish.notebooks`).
What the step says is therefore read from the live objects once, and the places differ only in how they
write it.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lessons.stepper import Stepper

__all__ = ["Shown"]


@dataclass(frozen=True)
class Shown:
    """One step of a lesson, as every view shows it.

    Attributes:
        number: the lesson's number. lesson: the lesson's title. section: the book's section it covers.
        index: the step's number (1-based). at_end: whether it is the lesson's last step.
        title: the step's title.
        line: the book's line or micrograph's formula the step is about ('' for none).
        quoted: whether ``line`` is the book's own words (else micrograph's).
        text: the explanation, with the live numbers (and, at the end, the lesson's exercises).
        code: the engine's lines the step ran, with their values ('' for none).
        values: the table of the values now ('' for none).
        question: the question to predict before moving on, or None.
        objects: the names of the live objects (``l.<name>``), in the order they were made.
        picture: the step's picture (a ``graphviz.Digraph``, a ``viz.charts.Chart``) when it was asked
            for and the step has one, else None.
        picture_note: why a picture the step has could not be made (a drawing too large, in the words of a
            page, where the limit cannot be changed: the tour's and the site's), or ''.
        lesson_code: the lesson's own code for the step (:attr:`lessons.step.Step.lesson_code`): what a
            notebook's code cell runs ('' for none).
        pictured: whether the step has a picture (a notebook's code cell then draws it).
    """

    number: int
    lesson: str
    section: str
    index: int
    at_end: bool
    title: str
    line: str
    quoted: bool
    text: str
    code: str
    values: str
    question: str | None
    objects: tuple[str, ...]
    picture: Any = None
    picture_note: str = ""
    lesson_code: str = ""
    pictured: bool = False

    @property
    def source(self) -> str:
        """Who wrote ``line``: ``"Book"`` (the book's words) or ``"micrograph"`` (micrograph's words)."""
        return "Book" if self.quoted else "micrograph"

    @classmethod
    def of(cls, stepper: Stepper, *, picture: bool = False) -> Shown:
        """The stepper's current step, read once.

        Args:
            stepper: the lesson, at the step to show.
            picture: make the step's picture too (the text needs none, and a plot can take time).

        Raises:
            ValueError: the step's picture raised one other than a drawing too large (``viz.GraphTooLarge``,
                kept as :attr:`picture_note`).
        """
        step = stepper.step
        figure, note = None, ""
        if picture and step.figure is not None:
            from viz.dot import GraphTooLarge

            try:
                figure = stepper.figure()
            except GraphTooLarge as refused:  # said in a page's words: the pages show the note
                note = refused.text("page")
        q = stepper.question
        return cls(
            number=stepper.number,
            lesson=stepper.title,
            section=stepper.section,
            index=stepper.index,
            at_end=stepper.at_end,
            title=step.title,
            line=step.line,
            quoted=step.quoted,
            text=stepper.text,
            code=stepper.code,
            values=stepper.values(),
            question=None if q is None else q.text,
            objects=tuple(stepper.objects()),
            picture=figure,
            picture_note=note,
            lesson_code=step.lesson_code,
            pictured=step.figure is not None,
        )
