"""The templates ``micrograph exercise start NAME`` writes (and the page's editor shows, in the page's words):
the signature, the book's pseudo-code as comments, and TODOs. Each starts with the marker line ``# micrograph
exercise: NAME`` (:data:`MARKER_LINE`), which tells ``check`` what the file is; :func:`template` writes it.

Each exercise's module holds its template's text (:attr:`lessons.exercises.exercise.Judging.template`);
:func:`template` puts in the book's pseudo-code, transcribed once in :mod:`micrograph.pseudocode`, and the two
lines that say where the lesson and the check are at the place the template is read.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

from lessons.exercises.judges import EXERCISES
from micrograph.pseudocode import ALGORITHMS

__all__ = ["MARKER_LINE", "PLACES", "template"]

MARKER_LINE = "# micrograph exercise:"
"""How a template names its exercise, on its first line (``# micrograph exercise: backprop``)."""


def _quote(text: str) -> str:
    """Put the book's pseudo-code, transcribed once in :mod:`micrograph.pseudocode`, into a template."""
    for number, algorithm in ALGORITHMS.items():
        lines = algorithm.lines[3:] if number == "6.2" else algorithm.lines  # 6.2 from grad_table[u(n)] <- 1
        quoted = "\n".join("    " + line for line in lines)
        text = text.replace(f"@ALGORITHM_{number.replace('.', '_')}@", quoted)
    return text


PLACES: dict[str, tuple[str, str]] = {
    "terminal": (
        "Lesson {lesson} steps through it first:  python -m lessons {lesson}",
        "Check with:  micrograph exercise check {name}.py",
    ),
    "page": (
        "Lesson {lesson} steps through it first: choose it in the Lessons tab.",
        "Check with the Check button above this editor.",
    ),
}
"""Where a template is read, and its two lines that name what the student has there: the command line, or
the page's own controls."""


def template(name: str, place: str = "terminal") -> str:
    """The template of exercise ``name`` as read at ``place`` (a key of :data:`PLACES`), its marker line
    first.

    Raises:
        KeyError: an unknown exercise or place.
    """
    see, check = PLACES[place]
    exercise = EXERCISES[name]
    text = f"{MARKER_LINE} {name}\n" + _quote(exercise.judging.template)
    return text.replace("@SEE@", see.format(lesson=exercise.lesson)).replace(
        "@CHECK@", check.format(name=name)
    )
