"""A recognised mistake as a row of data: its code, the hint, the book's sentence, a phrase in words.

Each exercise's judge keeps its mistakes in a table ``MISTAKES = table(Mistake(...), ...)``, {code: row};
a diagnosis names the row, so the hint, the book's sentence and the phrase a class report shows are written
once per mistake. The failures common to every exercise (a timeout, a syntax error ...,
:mod:`lessons.exercises.failures`) have the codes of :data:`GENERAL`, which gives each its phrase.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lessons.exercises.report import Failure

__all__ = ["Mistake", "table", "failure", "GENERAL"]


@dataclass(frozen=True)
class Mistake:
    """A mistake the judge recognises.

    Attributes:
        code: its short name in reports and JSON (``"overwrite"``, ``"forward-loop"`` ...).
        hint: what to change, in words ("" for none).
        book: the key of :data:`lessons.exercises.report.BOOK` of the sentence behind it ("" for none).
        words: what the mistake is, a short phrase for a teacher's class report ("terms overwritten, not
            added"), at most 40 characters.
    """

    code: str
    hint: str = ""
    book: str = ""
    words: str = ""


def table(*rows: Mistake) -> dict[str, Mistake]:
    """An exercise's mistakes by code, in the order written: ``MISTAKES = table(Mistake(...), ...)``."""
    return {m.code: m for m in rows}


GENERAL: dict[str, str] = {
    "timeout": "stopped: out of time",
    "memory": "stopped: out of memory",
    "crash": "crashed Python (os._exit)",
    "protocol": "an answer the check could not read",
    "missing-function": "the function missing or misnamed",
    "delegation": "called micrograph's own algorithm",
    "recursion": "hit Python's recursion limit",
    "missing-entry": "read an entry before writing it",
    "todo": "not written yet (the template's TODO)",
    "exception": "raised an exception",
    "syntax": "a syntax error",
    "load": "an error when the file was imported",
    "not-run": "not run: the check's time was spent",
    "answer": "an answer that does not fit its form",
    "import": "a module the exercise does not allow",
    "isolation": "the check could not isolate the code",
}
"""The failures the judge names for every exercise: {code: what it is, in words}. An exercise's own row of
the same code (backprop's ``missing-entry``) comes first."""


def failure(mistake: Mistake, headline: str, **fields: Any) -> Failure:
    """A :class:`Failure` of ``mistake`` with this headline; ``fields`` are the Failure's other fields."""
    fields.setdefault("hint", mistake.hint)
    fields.setdefault("book", mistake.book)
    return Failure("", headline, mistake=mistake.code, **fields)
