"""The exercises, one module each, registered in one table: :data:`MODULES`.

An exercise is a module of this package (``backprop.py`` ...) that declares itself in one
:class:`~lessons.exercises.exercise.Exercise`, ``EXERCISE``: its template, its judge (``cases(seed)``, each
case with the engine's answer, and ``MISTAKES``, the mistakes it recognises), the schema of its answers, what
a solution may import, micrograph's own functions in its shape, what the student's side runs, and the lesson
that steps through its algorithm first. :data:`MODULES` lists the modules in the book's order; every other
list of the exercises is read from it (:data:`EXERCISES`, the command line's, the site's, a lesson's closing
paragraph). :func:`cases` names each case with its exercise, :func:`outline` lists an exercise's cases with
their points, and :func:`words` says what a mistake's code means.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

from lessons.exercises.exercise import Exercise
from lessons.exercises.judges import backprop, build_grad, derivatives, forward, mlp_backward, naive, topo
from lessons.exercises.judges.mistakes import GENERAL
from lessons.exercises.verdict import Case

__all__ = ["MODULES", "EXERCISES", "NAMES", "cases", "module", "outline", "words"]

MODULES: tuple[ModuleType, ...] = (derivatives, topo, forward, backprop, build_grad, mlp_backward, naive)
"""The exercises' modules, in the order of the book's section 6.5 (the order ``list`` shows): the one place
an exercise is registered."""

_BY_NAME: dict[str, ModuleType] = {m.EXERCISE.name: m for m in MODULES}

EXERCISES: dict[str, Exercise] = {name: m.EXERCISE for name, m in _BY_NAME.items()}
"""The exercises by name, in the table's order."""

NAMES = tuple(EXERCISES)
"""The exercises' names, in the table's order."""


def module(exercise: str) -> ModuleType:
    """The module of an exercise. Raises ValueError for an unknown exercise."""
    if exercise not in _BY_NAME:
        raise ValueError(f"there is no exercise {exercise!r}; the exercises are {', '.join(NAMES)}")
    return _BY_NAME[exercise]


def cases(exercise: str, seed: int = 0) -> Iterator[Case]:
    """The cases of an exercise for a seed, built one at a time, each named with its exercise (whose schema
    its answer must fit). Raises ValueError for an unknown exercise."""
    return _named(module(exercise).EXERCISE, seed)


def _named(exercise: Exercise, seed: int) -> Iterator[Case]:
    for case in exercise.cases(seed):
        case.exercise = exercise
        yield case


def outline(exercise: str, seed: int = 0) -> list[tuple[str, float]]:
    """(name, points) of every case of an exercise for a seed, in order; the points add up to its maximum.

    Raises ValueError for an unknown exercise.
    """
    return [(case.name, case.points) for case in cases(exercise, seed)]


def words(exercise: str, code: str) -> str:
    """What the mistake ``code`` of an exercise is, as a short phrase; "" for a code no judge gives.

    The exercise's own row comes first, then the rows of the exercises it shares
    (:attr:`~lessons.exercises.exercise.Exercise.shares`), then the judge's codes common to every exercise
    (:data:`~lessons.exercises.judges.mistakes.GENERAL`).

    Raises ValueError for an unknown exercise.
    """
    for name in (exercise, *module(exercise).EXERCISE.shares):
        row = module(name).MISTAKES.get(code)
        if row is not None:
            return str(row.words)
    return GENERAL.get(code, "")
