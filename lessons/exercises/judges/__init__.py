"""The exercises' table, :data:`TABLE`: the one place that says which exercises exist and what each is called.

A row is one :class:`~lessons.exercises.exercise.Exercise`, in the order of the book's section 6.5 (the order
``micrograph exercise list`` shows): the module that judges it, its name, what it asks in a few words, the
book's algorithm or section, the lesson that steps through the algorithm first, and what the student writes
as the student's side names it. The module (``backprop.py`` ...) declares only how its exercise is judged, in
one :class:`~lessons.exercises.exercise.Judging`, ``JUDGING`` (its template, its judge ``cases(seed)``, each
case with the engine's answer, the schema of its answers, what a solution may import, micrograph's own
functions in its shape, whether the solution gets micrograph's nodes), and the mistakes it recognises,
``MISTAKES`` (their words in ``mistakes.toml``). Every other list of the exercises is read from the table
(:data:`EXERCISES`, the command line's, the site's, a lesson's closing paragraph). :func:`cases` names each
case with its exercise, :func:`outline` lists an exercise's cases with their points, and :func:`words` says
what a mistake's code means.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

from collections.abc import Iterator

from lessons.exercises.exercise import Exercise, JudgeModule
from lessons.exercises.judges import backprop, build_grad, derivatives, forward, mlp_backward, naive, topo
from lessons.exercises.judges.mistakes import GENERAL
from lessons.exercises.verdict import Case

__all__ = ["TABLE", "EXERCISES", "NAMES", "cases", "module", "outline", "words"]

TABLE: tuple[Exercise, ...] = (
    # Exercise(module, name, title, book, lesson, writes): the attributes of Exercise say what each is
    Exercise(derivatives, "derivatives", "tanh, sigmoid, x/y, x**y, log, sqrt", "∂u(i)/∂u(j), Alg. 6.2", 2,
             "the local derivatives ∂u(i)/∂u(j)"),
    Exercise(topo, "topo", "u(1)..u(n), leaves first", "section 6.5.3", 1,
             "the topological order u(1)..u(n)"),
    Exercise(forward, "forward", "forward propagation", "Algorithm 6.1", 1, "Algorithm 6.1"),
    Exercise(backprop, "backprop", "back-propagation, grad_table", "Algorithm 6.2", 2, "Algorithm 6.2"),
    Exercise(build_grad, "build_grad", "symbol-to-symbol: B is nodes", "Algorithms 6.5, 6.6", 6,
             "Algorithm 6.6"),
    Exercise(mlp_backward, "mlp_backward", "the MLP, layer by layer", "Algorithm 6.4", 5, "Algorithm 6.4"),
    Exercise(naive, "naive", "the naive chain rule, counted", "figure 6.9, eq. 6.53", 3,
             "the naive chain rule of equation 6.53"),
)  # fmt: skip
"""The exercises, one row each, in the order of the book's section 6.5: the one place an exercise is
registered and named."""

EXERCISES: dict[str, Exercise] = {e.name: e for e in TABLE}
"""The exercises by name, in the table's order."""

NAMES = tuple(EXERCISES)
"""The exercises' names, in the table's order."""


def module(exercise: str) -> JudgeModule:
    """The module that judges an exercise. Raises ValueError for an unknown exercise."""
    return _exercise(exercise).module


def _exercise(name: str) -> Exercise:
    if name not in EXERCISES:
        raise ValueError(f"there is no exercise {name!r}; the exercises are {', '.join(NAMES)}")
    return EXERCISES[name]


def cases(exercise: str, seed: int = 0) -> Iterator[Case]:
    """The cases of an exercise for a seed, built one at a time, each named with its exercise (whose schema
    its answer must fit). Raises ValueError for an unknown exercise."""
    return _named(_exercise(exercise), seed)


def _named(exercise: Exercise, seed: int) -> Iterator[Case]:
    for case in exercise.judging.cases(seed):
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
    (:attr:`~lessons.exercises.exercise.Judging.shares`), then the judge's codes common to every exercise
    (:data:`~lessons.exercises.judges.mistakes.GENERAL`).

    Raises ValueError for an unknown exercise.
    """
    for name in (exercise, *_exercise(exercise).judging.shares):
        row = module(name).MISTAKES.get(code)
        if row is not None:
            return str(row.words)
    return GENERAL.get(code, "")
