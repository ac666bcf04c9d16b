"""An exercise is one module, registered in one table; the student's side gets what it needs as plain data.

The exercises' table, ``judges.TABLE``, lists them, a row each with its module and its catalogue facts (name,
title, the book's algorithm, lesson, what the student writes); every other list of the exercises is read from
there. How each is judged (template, judge, schema of its answers, allowed imports, reference) lives in its
own module of ``lessons/exercises/judges/``, which declares it in one ``JUDGING``. These tests read the
source: no other module of micrograph, viz or lessons writes out a collection naming the exercises, no module
is found by its name as a string, and the files copied to the student's side name no exercise and import no
judge.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from lessons.exercises import calls, judges, sandbox
from lessons.exercises.exercise import Exercise, Judging

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("micrograph", "viz", "lessons")
NAMES = set(judges.NAMES)
TABLE = ROOT / "lessons" / "exercises" / "judges" / "__init__.py"


def _sources() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def _first(node: ast.expr | None) -> ast.expr | None:
    """An item itself, or the first part of an item that is a tuple (``("topo", TEMPLATE)``), or the first
    string among a call's arguments (``Exercise(topo, "topo", ...)``): where a row of a table names its
    exercise."""
    if isinstance(node, ast.Tuple) and node.elts:
        return node.elts[0]
    if isinstance(node, ast.Call) and node.args:
        return next((a for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)), None)
    return node


def _named(node: ast.AST) -> set[str]:
    """The exercise names a dict's keys, or a tuple's, list's or set's items, spell out as strings."""
    if isinstance(node, ast.Dict):
        items: list[ast.expr | None] = list(node.keys)
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [_first(e) for e in node.elts]
    else:
        return set()
    return {i.value for i in items if isinstance(i, ast.Constant) and i.value in NAMES}


MOST = len(NAMES) // 2 + 1
"""A collection that spells out this many exercise names lists the exercises: "backprop" and "forward" are
also the names of micrograph's functions, and a few of them stand together elsewhere (``__all__``)."""


def registrations(path: Path) -> list[tuple[int, set[str]]]:
    """(line, names) of every collection in a file that spells out most of the exercises' names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = [(node.lineno, names) for node in ast.walk(tree) if len(names := _named(node)) >= MOST]
    return sorted(found, key=lambda row: row[0])


def test_the_search_finds_a_collection_keyed_by_the_exercises(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text(
        'CALLS = {"backprop": 1, "forward": 2, "topo": 3, "naive": 4}\n'
        'NAMES = ["derivatives", "topo", "forward", "backprop", "build_grad", "mlp_backward", "naive"]\n'
        'ROWS = [("topo", 1), ("forward", 1), ("backprop", 2), ("naive", 3)]\n'
        'ALL = {e.name: e for e in [E("topo"), E("forward"), E("backprop"), E("naive", 3)]}\n'
        'TABLE = (E(topo, "topo", 1), E(forward, "forward"), E(backprop, "backprop"), E(naive, "naive"))\n'
    )
    four = {"backprop", "forward", "topo", "naive"}
    assert registrations(planted) == [(1, four), (2, NAMES), (3, four), (4, four), (5, four)]
    planted.write_text('__all__ = ["backprop", "forward", "build_grad", "grad"]\nCOLOURS = {"backprop": 1}\n')
    assert registrations(planted) == []


def test_no_module_but_the_table_lists_the_exercises() -> None:
    found = {
        f"{path.relative_to(ROOT)}:{line}": sorted(names)
        for path in _sources()
        for line, names in registrations(path)
    }
    ((table, names),) = registrations(TABLE)  # the table itself is found, once, naming every exercise
    assert names == NAMES
    assert found == {f"{TABLE.relative_to(ROOT)}:{table}": sorted(NAMES)}, "registered in the table only"


def test_a_lesson_leaves_its_exercises_to_their_modules() -> None:
    """The lesson that steps through an algorithm is a fact of the exercise (its ``lesson``); the lesson's
    closing paragraph reads it from there."""
    import lessons
    from lessons.stepper import exercises_of

    for n in lessons.LESSONS:
        assert not hasattr(lessons.load(n), "EXERCISES"), n
        assert exercises_of(n) == tuple(e.name for e in judges.EXERCISES.values() if e.lesson == n)


def test_the_table_lists_every_exercise_module_once_in_the_book_s_order() -> None:
    declared = {
        path.stem
        for path in TABLE.parent.glob("*.py")
        if "JUDGING = Judging(" in path.read_text(encoding="utf-8")
    }
    modules = [e.module for e in judges.TABLE]
    assert {m.__name__.rsplit(".", 1)[1] for m in modules} == declared  # type: ignore[attr-defined]
    assert len(judges.TABLE) == len(set(modules)) == len(declared) == len(NAMES) == 7
    for exercise in judges.TABLE:
        assert isinstance(exercise, Exercise) and isinstance(exercise.judging, Judging)
        assert exercise.module.__name__ == f"lessons.exercises.judges.{exercise.name}"  # type: ignore[attr-defined]
        assert judges.module(exercise.name) is exercise.module and judges.EXERCISES[exercise.name] is exercise
    assert [e.name for e in judges.TABLE] == list(judges.NAMES)
    lessons = [judges.EXERCISES[name].lesson for name in judges.NAMES]
    assert lessons == [2, 1, 1, 2, 6, 5, 3]  # the book's section 6.5, not the lessons' order


def test_no_exercise_module_is_found_by_its_name_as_a_string() -> None:
    """The table imports the modules; nothing imports a judge from a name it makes (as ``judges.module``
    once did, with importlib on ``f"lessons.exercises.judges.{name}"``)."""
    for path in sorted((ROOT / "lessons").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            importing = isinstance(node, ast.Call) and ast.unparse(node.func).endswith(
                ("import_module", "__import__")
            )
            assert not importing or "judges" not in ast.unparse(node), f"{path.name}:{node.lineno}"
    for path in sorted(TABLE.parent.glob("*.py")):
        assert "importlib" not in path.read_text(encoding="utf-8"), path.name


@pytest.mark.parametrize("name", sorted(NAMES))
def test_what_the_student_s_side_needs_is_plain_data_naming_a_copied_call(name: str) -> None:
    exercise = judges.EXERCISES[name]
    entry = exercise.entry()
    assert json.loads(json.dumps(entry)) == entry  # plain data, as the load question carries it
    assert entry["name"] == name and isinstance(entry["nodes"], bool) and entry["writes"]
    assert entry["call"].startswith("call_") and callable(getattr(calls, entry["call"]))
    assert "lessons/exercises/calls.py" in sandbox.COPIED
    assert json.loads(json.dumps(exercise.judging.imports.request())) == exercise.judging.imports.request()


def test_the_copied_files_name_no_exercise_and_import_no_judge() -> None:
    """The student's side decides nothing by an exercise's name: no comparison with one, no table keyed by
    them; what differs between exercises comes in the load question."""
    for relative in sandbox.COPIED:
        if not relative.startswith("lessons/exercises/"):
            continue
        tree = ast.parse((ROOT / relative).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            compared = node.comparators if isinstance(node, ast.Compare) else []
            keys = node.keys if isinstance(node, ast.Dict) else []
            named = {n.value for n in [*compared, *keys] if isinstance(n, ast.Constant)} & NAMES
            assert not named, f"{relative}:{getattr(node, 'lineno', 0)}"
        imported = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lessons")
        }
        siblings = {"lessons.exercises.given", "lessons.exercises.calls", "lessons.exercises"}
        assert imported <= siblings, relative
