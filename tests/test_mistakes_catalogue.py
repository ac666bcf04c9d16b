"""The judges' mistakes in words are one data file, ``lessons/exercises/judges/mistakes.toml``: a table per
exercise, a row per code. Every row is a code a judge names, every table is read by a judge, and a broken row
is refused when the file is read, naming the file, the exercise, the code and the key.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from lessons.exercises import judges
from lessons.exercises.judges import entry, mistakes
from viz.mistakes import ENTRY_MISTAKES

ROOT = Path(__file__).resolve().parent.parent
JUDGES = ROOT / "lessons" / "exercises" / "judges"

RAISED_IN: dict[str, tuple[Path, ...]] = {
    **{name: (JUDGES / f"{name}.py",) for name in judges.NAMES},
    "entry": (JUDGES / "entry.py", JUDGES / "backprop.py", ROOT / "viz" / "mistakes.py"),
}
"""The files that name each table's codes: the exercise's judge, the sum's catalogue for a wrong entry's.
The ladder's stop and the growth case (``paths``, ``growth``) are named by ``scaling.py`` for every judge."""


def _strings(*paths: Path) -> set[str]:
    """Every string literal of the files."""
    trees = [ast.parse(p.read_text(encoding="utf-8")) for p in paths]
    return {
        n.value
        for t in trees
        for n in ast.walk(t)
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def unnamed(rows: dict[str, dict[str, dict[str, str]]]) -> list[str]:
    """The rows ``[exercise.code]`` whose code no file of their table (nor scaling.py) names."""
    shared = _strings(JUDGES / "scaling.py")
    return [
        f"{exercise}.{code}"
        for exercise, table in rows.items()
        for code in table
        if code not in _strings(*RAISED_IN.get(exercise, ())) | shared
    ]


def test_every_row_is_a_code_some_judge_names(tmp_path: Path) -> None:
    assert unnamed(mistakes.catalogue()) == []
    planted = tmp_path / "mistakes.toml"
    planted.write_text(
        '[forward.stale]\nwords = "x"\n[forward.never-raised]\nwords = "y"\n', encoding="utf-8"
    )
    assert unnamed(mistakes.catalogue(planted)) == ["forward.never-raised"]


def test_every_table_is_an_exercise_s_read_by_its_judge_in_the_file_s_order() -> None:
    rows = mistakes.catalogue()
    # entry's rows before backprop's; the growth case's, shared by the exercises that have one, last
    assert list(rows) == [*judges.NAMES[:3], "entry", *judges.NAMES[3:], "scaling"]
    growing = {"topo", "forward", "backprop"}
    for name in judges.NAMES:
        own = list(judges.module(name).MISTAKES)
        shared = ["growth"] if name in growing else []
        assert own[len(own) - len(rows[name]) - len(shared) :] == [*rows[name], *shared], name
    assert list(judges.module("backprop").MISTAKES) == [*rows["entry"], *rows["backprop"], "growth"]
    assert list(entry.ROWS) == list(rows["entry"])


def test_the_growth_case_s_mistake_is_written_once() -> None:
    """Every exercise with a growth case names it with ``[scaling.growth]``'s words; backprop's cites the
    book's sentence on edges."""
    row = mistakes.catalogue()["scaling"]["growth"]
    for name, book in [("topo", ""), ("forward", ""), ("backprop", "edges")]:
        growth = judges.module(name).MISTAKES["growth"]
        assert (growth.hint, growth.words, growth.book) == (row["hint"], row["words"], book), name
    assert "growth" not in judges.module("derivatives").MISTAKES


def test_a_wrong_entry_s_words_are_the_explorer_s_catalogue() -> None:
    rows = mistakes.catalogue()["entry"]
    for code, words in ENTRY_MISTAKES.items():
        assert "words" not in rows[code] and entry.ROWS[code].words == words
    assert (
        entry.ROWS["forward-loop"].words == rows["forward-loop"]["words"] == "the loop runs from u(1) upwards"
    )


def test_the_text_is_the_file_s() -> None:
    row = mistakes.catalogue()["forward"]["stale"]
    stale = judges.module("forward").MISTAKES["stale"]
    assert (stale.hint, stale.book, stale.words) == (row["hint"], row["book"], row["words"])
    assert stale.words == "read parent.data, not this pass's u[j]"
    assert judges.words("forward", "stale") == stale.words


@pytest.mark.parametrize(
    "text, says",
    [
        (
            '[forward.stale]\nhnt = "a"\nwords = "b"\n',
            r"\[forward\.stale\] hnt: unknown key \(a row gives hint, book, words, headline, needs\)",
        ),
        ("[forward.stale]\nwords = 3\n", r"\[forward\.stale\] words: 3 is not a string"),
        ('[forward.stale]\nwords = ""\n', r"\[forward\.stale\] words: '' must be 1 to 40 characters, not 0"),
        (
            f'[forward.stale]\nwords = "{"x" * 41}"\n',
            r"\[forward\.stale\] words: 'x+' must be 1 to 40 characters, not 41",
        ),
        (
            '[forward.stale]\nbook = "chapter 7"\nwords = "b"\n',
            r"\[forward\.stale\] book: 'chapter 7' is not a key",
        ),
        ('[forward]\nstale = "a"\n', r"\[forward\] must hold a table per code \(\[forward\.CODE\]\)"),
        ("[forward.stale\n", r"cannot read the mistakes' catalogue"),
        (
            '[forward.stale]\nwords = "\udcff"\n',
            r"cannot read the mistakes' catalogue: 'utf-8' codec can't decode",
        ),
        (
            '[forward.paths]\nwords = "w"\nneeds = "each of the {count} nodes"\n',
            r"\[forward\.paths\] needs: 'each of the \{count\} nodes' may name only \{nodes\} and \{edges\}",
        ),
    ],
)
def test_a_broken_row_is_refused_naming_file_exercise_code_and_key(
    tmp_path: Path, text: str, says: str
) -> None:
    path = tmp_path / "mistakes.toml"
    path.write_text(text, encoding="utf-8", errors="surrogateescape")  # a lone surrogate: a byte not UTF-8
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))}: {says}") as raised:
        mistakes.catalogue(path)
    assert "\n" not in str(raised.value)


def test_a_row_without_words_is_refused_unless_another_catalogue_gives_them(tmp_path: Path) -> None:
    path = tmp_path / "mistakes.toml"
    path.write_text('[entry.seed]\nhint = "h"\nbook = "loop"\n[entry.own]\nwords = "w"\n', encoding="utf-8")
    with pytest.raises(
        ValueError, match=rf"^{re.escape(str(path))}: \[entry\.seed\] words: missing \(every mistake has"
    ):
        mistakes.of("entry", ("seed", "own"), path=path)
    rows = mistakes.of("entry", ("seed", "own"), {"seed": "from elsewhere"}, path=path)
    assert rows == {
        "seed": mistakes.Mistake("seed", "h", "loop", "from elsewhere"),
        "own": mistakes.Mistake("own", "", "", "w"),
    }
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: \[entry\.own\] words: given twice"):
        mistakes.of("entry", ("seed", "own"), {"seed": "a", "own": "b"}, path=path)
    with pytest.raises(
        ValueError, match=rf"^{re.escape(str(path))}: no table \[forward\]; the tables are entry$"
    ):
        mistakes.of("forward", ("stale",), path=path)


def test_every_paths_row_says_its_diagnosis_and_what_the_book_s_algorithm_needs() -> None:
    """The ladder's stop (scaling.paths_stop) writes a ``paths`` row's headline and its needs with the
    graph's counts: every judge that has the row gives both, and they read as the diagnosis says them."""
    rows = {name: judges.module(name).MISTAKES.get("paths") for name in judges.NAMES}
    given = {name: row for name, row in rows.items() if row is not None}
    assert sorted(given) == ["backprop", "build_grad", "forward", "topo"]
    for name, row in given.items():
        assert row.headline.endswith("work grows with the number of paths (figure 6.9)."), name
        assert "{nodes}" in row.needs or "{edges}" in row.needs, name
        assert "{" not in row.needs.format(nodes="5", edges="7"), name
    assert given["forward"].needs.format(nodes="5", edges="7") == (
        "Algorithm 6.1 computes each of the 5 nodes once, in order, from its parents' values already in "
        "u (7 reads of u)."
    )


def _codes(table: str) -> tuple[str, ...]:
    """The codes the judge of a table gives (its module's ``CODES``)."""
    if table == "entry":
        return entry.CODES
    return judges.module(table).CODES


def test_each_judge_gives_exactly_its_table_s_codes() -> None:
    rows = mistakes.catalogue()
    for table in [*judges.NAMES, "entry"]:
        assert sorted(_codes(table)) == sorted(rows[table]), table
        assert len(set(_codes(table))) == len(_codes(table)), table


@pytest.mark.parametrize("table", [*judges.NAMES, "entry"])
def test_a_row_renamed_or_removed_is_refused_as_the_judges_load(tmp_path: Path, table: str) -> None:
    """A row a teacher renamed or removed is refused when the catalogue is read with the judge's codes, not
    when a student makes that mistake (which would stop the student's check with a KeyError)."""
    text = mistakes.CATALOGUE.read_text(encoding="utf-8")
    first = next(iter(mistakes.catalogue()[table]))
    assert text.count(f"[{table}.{first}]\n") == 1
    path = tmp_path / "mistakes.toml"
    words = entry.ENTRY_MISTAKES if table == "entry" else None
    path.write_text(text.replace(f"[{table}.{first}]\n", f"[{table}.{first}x]\n"), encoding="utf-8")
    with pytest.raises(mistakes.CatalogueError) as raised:
        mistakes.of(table, _codes(table), words, path=path)
    assert str(raised.value) == (
        f"{path}: no row [{table}.{first}], a mistake the {table} judge names; [{table}.{first}x] is no "
        "mistake of its judge: renamed?"
    )
    mistakes.catalogue.cache_clear()
    cut = text.index(f"[{table}.{first}]\n")
    path.write_text(text[:cut] + text[text.index("\n[", cut) + 1 :], encoding="utf-8")  # the row removed
    with pytest.raises(mistakes.CatalogueError) as removed:
        mistakes.of(table, _codes(table), words, path=path)
    assert str(removed.value) == f"{path}: no row [{table}.{first}], a mistake the {table} judge names"


def test_a_row_no_judge_gives_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "mistakes.toml"
    path.write_text('[naive.count]\nwords = "w"\n[naive.extra]\nwords = "v"\n', encoding="utf-8")
    with pytest.raises(mistakes.CatalogueError) as raised:
        mistakes.of("naive", ("count",), path=path)
    assert (
        str(raised.value)
        == f"{path}: [naive.extra] is no mistake of the naive judge (its mistakes are count)"
    )


def _renamed(text: str) -> str:
    return text.replace("[derivatives.tanh-input]\n", "[derivatives.tanh-inptu]\n")


_STALE = 'words = "read parent.data, not this pass\'s u[j]"'


@pytest.mark.parametrize(
    "edit, says",
    [
        (
            lambda text: text.replace(_STALE, f'words = "{"x" * 41}"'),
            f"[forward.stale] words: {'x' * 41!r} must be 1 to 40 characters, not 41",
        ),
        (
            _renamed,
            "no row [derivatives.tanh-input], a mistake the derivatives judge names; "
            "[derivatives.tanh-inptu] is no mistake of its judge: renamed?",
        ),
        (
            lambda text: text + "\udcff",
            "cannot read the mistakes' catalogue: 'utf-8' codec can't decode byte 0xff in position",
        ),
    ],
    ids=["long-words", "renamed-row", "not-utf-8"],
)
def test_the_command_refuses_a_broken_catalogue_in_one_line(
    tmp_path: Path, edit: Callable[[str], str], says: str
) -> None:
    """A teacher's edit that breaks the catalogue (words over 40 characters, a row renamed, a byte that is not
    UTF-8) stops every exercise command with status 2 and one line naming the file, the exercise, the code
    and the key, never a traceback."""
    for package in ("micrograph", "viz", "lessons"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    catalogue = tmp_path / "lessons" / "exercises" / "judges" / "mistakes.toml"
    text = catalogue.read_text(encoding="utf-8")
    assert text.count(_STALE) == 1 and _renamed(text) != text
    catalogue.write_text(edit(text), encoding="utf-8", errors="surrogateescape")
    for args in (["exercise", "list"], ["exercise", "check", "forward.py"]):
        done = subprocess.run(
            [sys.executable, "-m", "micrograph", *args],
            cwd=tmp_path,
            env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(f"micrograph: error: {catalogue}: {says}"), done.stderr
        assert done.stderr.count("\n") == 1 and done.stderr.endswith("\n"), done.stderr
