"""A recognised mistake as a row of data: its code, the hint, the book's sentence, a phrase in words.

The words of every judge's mistakes are one catalogue, ``mistakes.toml`` next to this module, which a teacher
reviews and rewords without reading the judges: a table per exercise, a row per code (``[forward.stale]``,
with ``hint``, ``book`` and ``words``), in the order the judge tries them. Each judge reads its table as
``MISTAKES = mistakes.of("forward", CODES)``, {code: :class:`Mistake`}, where ``CODES`` are the codes it
gives, each of which must have its row; a diagnosis names the row, so the hint, the book's sentence and the
phrase a class report shows are written once per mistake. The file is read and checked once
(:func:`catalogue`). The failures common to every exercise (a timeout, a syntax error ...,
:mod:`lessons.exercises.failures`) have the codes of :data:`GENERAL`, which gives each its phrase.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from lessons.exercises.report import BOOK, Failure

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, as the package tomli (setup.cfg installs it there)
    import tomli as tomllib

__all__ = ["Mistake", "CatalogueError", "of", "catalogue", "failure", "GENERAL", "CATALOGUE", "WORDS_AT_MOST"]

CATALOGUE = Path(__file__).with_name("mistakes.toml")
"""The file of every judge's mistakes in words."""

WORDS_AT_MOST = 40
"""The longest phrase a mistake's ``words`` may be, in characters (a column of a class report)."""

_KEYS = ("hint", "book", "words", "headline", "needs")


class CatalogueError(ValueError):
    """The mistakes' catalogue cannot be used: the message is one line naming the file, the exercise, the
    code and the key (the command line prints it and exits 2)."""


@dataclass(frozen=True)
class Mistake:
    """A mistake the judge recognises.

    Attributes:
        code: its short name in reports and JSON (``"overwrite"``, ``"forward-loop"`` ...).
        hint: what to change, in words ("" for none).
        book: the key of :data:`lessons.exercises.report.BOOK` of the sentence behind it ("" for none).
        words: what the mistake is, a short phrase for a teacher's class report ("terms overwritten, not
            added"), at most :data:`WORDS_AT_MOST` characters.
        headline: the diagnosis's first line where it is always the same ("" where the judge writes it with
            the case's numbers); a ``paths`` row's (:func:`lessons.exercises.judges.scaling.paths_stop`).
        needs: what the book's algorithm does instead, with ``{nodes}`` and ``{edges}`` where the graph's
            counts go ("" for none); a ``paths`` row's.
    """

    code: str
    hint: str = ""
    book: str = ""
    words: str = ""
    headline: str = ""
    needs: str = ""


Rows = dict[str, dict[str, dict[str, str]]]
"""The catalogue as read: {exercise: {code: {key: text}}}, in the file's order."""


@cache
def catalogue(path: Path = CATALOGUE) -> Rows:
    """Every table of the catalogue file, read and checked once.

    Each row may give ``hint``, ``book`` (a key of :data:`lessons.exercises.report.BOOK`), ``words`` (at
    most :data:`WORDS_AT_MOST` characters), ``headline`` and ``needs`` (whose only fields are ``{nodes}`` and
    ``{edges}``), each a string, and nothing else.

    Raises:
        CatalogueError: the file unreadable, not UTF-8 or not TOML, an exercise or row that is not a table,
            an unknown key, a value that is not a string, an unknown book key, empty or too long words,
            needs with another field; the message names the file, the exercise, the code and the key.
    """
    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:  # not UTF-8 text: not TOML
        raise CatalogueError(f"{path}: cannot read the mistakes' catalogue: {e}") from None
    for exercise, rows in data.items():
        if not isinstance(rows, dict) or not all(isinstance(row, dict) for row in rows.values()):
            raise CatalogueError(f"{path}: [{exercise}] must hold a table per code ([{exercise}.CODE])")
        for code, row in rows.items():
            for key, value in row.items():
                _check(f"{path}: [{exercise}.{code}] {key}", key, value)
    return data


def _check(where: str, key: str, value: object) -> None:
    """One key of a row: raises CatalogueError naming ``where`` if it is not one the row may give."""
    if key not in _KEYS:
        raise CatalogueError(f"{where}: unknown key (a row gives {', '.join(_KEYS)})")
    if not isinstance(value, str):
        raise CatalogueError(f"{where}: {value!r} is not a string")
    if key == "book" and value and value not in BOOK:
        raise CatalogueError(
            f"{where}: {value!r} is not a key of the book's sentences (lessons/exercises/report.py)"
        )
    if key == "words" and not 0 < len(value) <= WORDS_AT_MOST:
        raise CatalogueError(f"{where}: {value!r} must be 1 to {WORDS_AT_MOST} characters, not {len(value)}")
    if key == "needs":
        try:
            value.format(nodes="", edges="")
        except (KeyError, IndexError, ValueError) as e:
            fields = "{nodes} and {edges}"
            raise CatalogueError(f"{where}: {value!r} may name only {fields} ({e!r})") from None


def of(
    exercise: str, codes: Collection[str], words: Mapping[str, str] | None = None, path: Path = CATALOGUE
) -> dict[str, Mistake]:
    """The mistakes of an exercise's table of the catalogue, {code: row}, in the file's order.

    Args:
        exercise: the table (``"forward"``).
        codes: the codes the exercise's judge gives: the table must have a row for each and no other, so a
            row a teacher renamed or removed is refused when the judges load, not when a student makes the
            mistake.
        words: phrases written in another catalogue, {code: words}: a row of one of these codes gives no
            words and takes these (the rows of a wrong entry's sum, whose words are
            :data:`viz.mistakes.ENTRY_MISTAKES`, the explorer's too).
        path: the catalogue file.

    Raises:
        CatalogueError: the file as :func:`catalogue` raises it; no table of this exercise; a code of
            ``codes`` without its row, or a row of no code of ``codes``; a row without words or one whose
            words are also given by ``words``. The message names the file, the exercise, the code and the
            key.
    """
    given = words or {}
    rows = catalogue(path)
    if exercise not in rows:
        raise CatalogueError(f"{path}: no table [{exercise}]; the tables are {', '.join(rows)}")
    table = rows[exercise]
    missing = [code for code in codes if code not in table]
    unknown = [code for code in table if code not in codes]
    if missing:
        instead = f"; [{exercise}.{unknown[0]}] is no mistake of its judge: renamed?" if unknown else ""
        raise CatalogueError(
            f"{path}: no row [{exercise}.{missing[0]}], a mistake the {exercise} judge names{instead}"
        )
    if unknown:
        raise CatalogueError(
            f"{path}: [{exercise}.{unknown[0]}] is no mistake of the {exercise} judge "
            f"(its mistakes are {', '.join(codes)})"
        )
    found: dict[str, Mistake] = {}
    for code, row in table.items():
        where = f"{path}: [{exercise}.{code}] words"
        if code in given and "words" in row:
            raise CatalogueError(f"{where}: given twice, here and by the other catalogue of its words")
        if code not in given and "words" not in row:
            raise CatalogueError(f"{where}: missing (every mistake has a phrase in words)")
        phrase = row["words"] if "words" in row else given[code]
        found[code] = Mistake(
            code,
            row.get("hint", ""),
            row.get("book", ""),
            phrase,
            row.get("headline", ""),
            row.get("needs", ""),
        )
    return found


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
