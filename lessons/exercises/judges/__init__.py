"""One judge per exercise: its cases (each with the engine's answer) and the mistakes it recognises.

Each module has ``cases(seed) -> Iterator[Case]`` and ``MISTAKES``; :func:`cases` finds the module by the
exercise's name, :func:`outline` lists an exercise's cases with their points, and :func:`words` says what a
mistake's code means.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from types import ModuleType

from lessons.exercises.judge import Case
from lessons.exercises.judges.mistakes import GENERAL

__all__ = ["cases", "module", "outline", "words", "NAMES"]

NAMES = ("derivatives", "topo", "forward", "backprop", "build_grad", "mlp_backward", "naive")
"""The exercises that have a judge, in the book's order."""


def module(exercise: str) -> ModuleType:
    """The judge module of an exercise. Raises ValueError for an unknown exercise."""
    if exercise not in NAMES:
        raise ValueError(f"there is no exercise {exercise!r}; the exercises are {', '.join(NAMES)}")
    return importlib.import_module(f"lessons.exercises.judges.{exercise}")


def cases(exercise: str, seed: int = 0) -> Iterator[Case]:
    """The cases of an exercise for a seed, built one at a time, each named with its exercise (whose schema
    its answer must fit). Raises ValueError for an unknown exercise."""
    return _named(exercise, module(exercise).cases(seed))


def _named(exercise: str, built: Iterator[Case]) -> Iterator[Case]:
    for case in built:
        case.exercise = exercise
        yield case


def outline(exercise: str, seed: int = 0) -> list[tuple[str, float]]:
    """(name, points) of every case of an exercise for a seed, in order; the points add up to its maximum.

    Raises ValueError for an unknown exercise.
    """
    return [(case.name, case.points) for case in cases(exercise, seed)]


_SHARED = {"build_grad": ("backprop",)}
"""Exercises whose diagnoses also use another judge's rows: build_grad diagnoses a wrong sum with
Algorithm 6.2's (:func:`lessons.exercises.judges.entry.diagnose_entry`, backprop's rows)."""


def words(exercise: str, code: str) -> str:
    """What the mistake ``code`` of an exercise is, as a short phrase; "" for a code no judge gives.

    The exercise's own row comes first, then the rows it shares (:data:`_SHARED`), then the judge's codes
    common to every exercise (:data:`~lessons.exercises.judges.mistakes.GENERAL`).

    Raises ValueError for an unknown exercise.
    """
    for name in (exercise, *_SHARED.get(exercise, ())):
        row = module(name).MISTAKES.get(code)
        if row is not None:
            return str(row.words)
    return GENERAL.get(code, "")
