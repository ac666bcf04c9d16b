"""A recognised mistake as a row of data: its code, the hint, and the book's sentence the hint rests on.

Each exercise's judge keeps its mistakes in a table ``MISTAKES = {code: Mistake(...)}``; a diagnosis names
the row, so the hint and the book's sentence are written once per mistake.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lessons.exercises.report import Failure

__all__ = ["Mistake", "failure"]


@dataclass(frozen=True)
class Mistake:
    """A mistake the judge recognises.

    Attributes:
        code: its short name in reports and JSON (``"overwrite"``, ``"forward-loop"`` ...).
        hint: what to change, in words ("" for none).
        book: the key of :data:`lessons.exercises.report.BOOK` of the sentence behind it ("" for none).
    """

    code: str
    hint: str = ""
    book: str = ""


def failure(mistake: Mistake, headline: str, **fields: Any) -> Failure:
    """A :class:`Failure` of ``mistake`` with this headline; ``fields`` are the Failure's other fields."""
    fields.setdefault("hint", mistake.hint)
    fields.setdefault("book", mistake.book)
    return Failure("", headline, mistake=mistake.code, **fields)
