"""One judge per exercise: its cases (each with the engine's answer) and the mistakes it recognises.

Each module has ``cases(seed) -> Iterator[Case]`` and ``MISTAKES``; :func:`cases` finds the module by the
exercise's name.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from types import ModuleType

from lessons.exercises.judge import Case

__all__ = ["cases", "module", "NAMES"]

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
