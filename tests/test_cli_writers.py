"""Nothing lost: every file the command line writes is created, never checked and then written.

For each writer of the ``micrograph`` command: a file that appears at the output's name while the command
runs (made at the last moment, when the command starts writing) is not replaced, and the command exits 2
with one line naming it; two runs of the same command at once (the second run entirely inside the first's
write) end with one exit 0 and the other exit 2 with one line; ``--force`` replaces the file, keeping its
permission bits, and a symbolic link is replaced, never written through.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_exercise_course import FAKE_WHEEL, class_results
from test_exercise_platforms import OVERWRITE_BACKPROP

from lessons.cli import main
from lessons.exercises import autograder

ROOT = Path(__file__).resolve().parent.parent
MINE = "mine\n"


def _command(name: str, d: Path) -> tuple[list[str], Path]:
    """The command line of a writer, and the file it writes that the tests make appear meanwhile."""
    commands: dict[str, tuple[list[str], Path]] = {
        "render": (["render", "w*2", "--at", "w=1", "--out", str(d / "g.dot")], d / "g.dot"),
        "steps": (["steps", "x*y", "--at", "x=1", "--at", "y=2", "--out", str(d / "p.html")], d / "p.html"),
        "explore": (["explore", "x*x", "--at", "x=3", "--out", str(d / "e.html")], d / "e.html"),
        "blowup": (["blowup", "--max-depth", "3", "--quiet", "--out", str(d / "b.svg")], d / "b.svg"),
        "train": (["train", "iris", "--epochs", "1", "--quiet", "--out", str(d / "T")], d / "T" / "loss.png"),
        "train last file": (
            ["train", "moons", "--epochs", "1", "--quiet", "--out", str(d / "T")],
            d / "T" / "summary.json",
        ),
        "notebooks": (["notebooks", "--out", str(d / "N")], d / "N" / "lesson3.ipynb"),
        "exercise start": (["exercise", "start", "topo", "--dir", str(d)], d / "topo.py"),
        "exercise report": (
            ["exercise", "report", str(d / "class"), "--chart", str(d / "c.png")],
            d / "c.png",
        ),
        "exercise autograder": (
            ["exercise", "autograder", "topo", "--platform", "prairielearn", "--out", str(d / "A")],
            d / "A" / "README.md",
        ),
    }
    return commands[name]


WRITERS = [
    "render", "steps", "explore", "blowup", "train", "train last file", "notebooks", "exercise start",
    "exercise report", "exercise autograder",
]  # fmt: skip
FORCEABLE = [w for w in WRITERS if w != "exercise start"]  # a template never replaces the student's file


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The slow parts replaced (the wheel's build, running every lesson for its notebook), the class's
    results written; the directory to work in."""
    import nbformat.v4

    from lessons.publish import notebooks

    monkeypatch.setattr(autograder, "build_wheel", lambda root=None: FAKE_WHEEL)
    monkeypatch.setattr(notebooks, "notebook", lambda n, pages=None: nbformat.v4.new_notebook())
    class_results(tmp_path / "class")
    return tmp_path


def _command_of(writer: str, d: Path) -> tuple[list[str], Path]:
    if writer == "explore" and shutil.which("dot") is None:
        pytest.skip("the explorer's layout needs Graphviz's dot")
    return _command(writer, d)


def _when_written(monkeypatch: pytest.MonkeyPatch, target: Path, action: Callable[[], Any]) -> list[Any]:
    """Run ``action`` once, at the moment a writer starts writing ``target`` (its temporary file is made
    in ``target``'s directory): the latest moment another process could make the file. Its results."""
    real = tempfile.mkstemp
    done: list[Any] = []
    fired: list[bool] = []  # set before the action runs: a second run inside it writes as usual

    def mkstemp(*args: Any, **kw: Any) -> Any:
        into = kw.get("dir")
        here = into is not None and Path(into).absolute() == target.parent
        if not fired and here and kw.get("prefix") == f".{target.name}.":
            fired.append(True)
            done.append(action())
        return real(*args, **kw)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    return done


def _one_error_line(err: str, *says: str) -> None:
    lines = [line for line in err.splitlines() if line.startswith("micrograph: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert all(s in lines[0] for s in says), err


@pytest.mark.parametrize("writer", WRITERS)
def test_a_file_made_while_the_command_runs_is_not_replaced(
    writer: str, quick: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, target = _command_of(writer, quick)
    done = _when_written(monkeypatch, target, lambda: target.write_text(MINE))
    status = main(argv)
    _, err = capsys.readouterr()
    assert done, f"{writer} never wrote {target}"
    assert status == 2
    _one_error_line(err, target.name, "exists")
    assert target.read_text() == MINE
    if writer == "train last file":  # the files written before it are removed again: all or none
        assert sorted(p.name for p in target.parent.iterdir()) == ["summary.json"]


@pytest.mark.parametrize("writer", WRITERS)
def test_two_runs_at_once_one_succeeds_the_other_exits_2(
    writer: str, quick: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, target = _command_of(writer, quick)
    inner = _when_written(monkeypatch, target, lambda: main(argv))  # the second run, while the first writes
    outer = main(argv)
    _, err = capsys.readouterr()
    assert sorted([outer, *inner]) == [0, 2], (outer, inner)
    _one_error_line(err, "exist")
    assert target.is_file()


@pytest.mark.parametrize("writer", FORCEABLE)
def test_force_replaces_keeping_the_mode_and_never_writes_through_a_link(
    writer: str, quick: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, target = _command_of(writer, quick)
    target.parent.mkdir(exist_ok=True)
    target.write_text(MINE)
    target.chmod(0o640)
    assert main(argv) == 2 and target.read_text() == MINE  # refused at the start without --force
    assert main([*argv, "--force"]) == 0, capsys.readouterr().err
    assert target.read_text(errors="replace") != MINE
    expected = 0o644 if writer == "exercise autograder" else 0o640  # a platform's files have their own modes
    assert stat.S_IMODE(target.stat().st_mode) == expected
    victim = quick / "victim.txt"
    victim.write_text(MINE)
    target.unlink()
    target.symlink_to(victim)
    assert main([*argv, "--force"]) == 0, capsys.readouterr().err
    assert victim.read_text() == MINE and not target.is_symlink() and target.is_file()


def test_a_check_does_not_replace_a_file_made_at_its_drawing_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The failure drawing next to the solution is created: the student's file made meanwhile stays, and
    the report says why there is no drawing."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "backprop.py").write_text(OVERWRITE_BACKPROP)
    drawing = tmp_path / "backprop.failure.svg"
    done = _when_written(monkeypatch, drawing, lambda: drawing.write_text(MINE))
    status = main(["exercise", "check", "backprop.py", "--no-progress"])
    out, err = capsys.readouterr()
    assert done and status == 1, err
    assert drawing.read_text() == MINE
    assert "appeared while the check ran; not overwriting it" in " ".join(out.split())


def test_two_trainings_into_one_directory_at_once(tmp_path: Path) -> None:
    """Two ``micrograph train moons --out T`` started together, as two processes: one writes T, the other
    exits 2 with one line, wherever their writes meet."""
    argv = [sys.executable, "-m", "micrograph", "train", "moons", "--epochs", "30", "--quiet", "--out", "T"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    runs = [
        subprocess.Popen(
            argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    done = [(p.wait(timeout=300), p.communicate()) for p in runs]
    assert sorted(status for status, _ in done) == [0, 2], done
    ((_, (_, err)),) = [d for d in done if d[0] == 2]
    _one_error_line(err, "exist")
    assert sorted(p.name for p in (tmp_path / "T").iterdir()) == ["boundary.png", "loss.png", "summary.json"]


# --- the site: a directory moved into place -------------------------------------------------------------


@pytest.fixture
def fake_site(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Callable[[], Any]]:
    """``micrograph site`` with the build (npm, pip) replaced by one page; what runs when the page is made
    (append a function) stands for another process acting while the site is built."""
    from lessons.publish import site

    during: list[Callable[[], Any]] = []

    def stage(where: Path, log: Any) -> None:
        (where / "index.html").write_text("<!doctype html>\n")
        for act in during:
            act()

    monkeypatch.setattr(site, "_stage", stage)
    monkeypatch.setattr(site, "missing_files", lambda d: [])
    monkeypatch.chdir(tmp_path)
    return during


def test_a_directory_made_while_the_site_is_built_is_kept(
    fake_site: list[Callable[[], Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / "site-out"

    def make() -> None:
        mine.mkdir()
        (mine / "notes.txt").write_text(MINE)

    fake_site.append(make)
    for force in ([], ["--force"]):
        assert main(["site", "--out", "site-out", *force]) == 2
        _one_error_line(capsys.readouterr().err, "site-out")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["site-out"]  # no half-moved directory beside it
        assert [p.name for p in mine.iterdir()] == ["notes.txt"] and (mine / "notes.txt").read_text() == MINE
        shutil.rmtree(mine)


def test_two_site_builds_at_once_and_force_replaces_only_a_site(
    fake_site: list[Callable[[], Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    statuses: list[int] = []

    def second_build() -> None:  # a whole build inside the first one's, once
        fake_site.clear()
        statuses.append(main(["site", "--out", "site-out"]))

    fake_site.append(second_build)
    statuses.append(main(["site", "--out", "site-out"]))
    assert sorted(statuses) == [0, 2]
    _one_error_line(capsys.readouterr().err, "site-out")
    fake_site.clear()
    assert main(["site", "--out", "site-out", "--force"]) == 0  # an earlier site is replaced
    victim = tmp_path / "elsewhere"
    victim.mkdir()
    (victim / "notes.txt").write_text(MINE)

    def swap_in_a_link() -> None:  # the site replaced by a link to other files while the new one is built
        shutil.rmtree(tmp_path / "site-out")
        (tmp_path / "site-out").symlink_to(victim)

    fake_site.append(swap_in_a_link)
    assert main(["site", "--out", "site-out", "--force"]) == 2
    _one_error_line(capsys.readouterr().err, "site-out")
    assert (tmp_path / "site-out").is_symlink() and (victim / "notes.txt").read_text() == MINE


def test_a_site_lists_its_files_and_an_interrupted_build_leaves_the_earlier_one(
    fake_site: list[Callable[[], Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from lessons.publish.swap import SITE

    assert main(["site", "--out", "site-out"]) == 0
    head, *listed = (tmp_path / "site-out" / SITE.marker).read_text().splitlines()
    assert head + "\n" == SITE.head and listed == ["index.html"]
    before = {p: p.read_bytes() for p in (tmp_path / "site-out").iterdir()}

    def interrupted() -> None:
        raise KeyboardInterrupt

    fake_site.append(interrupted)
    assert main(["site", "--out", "site-out", "--force"]) == 2
    assert capsys.readouterr().err == "micrograph: error: interrupted\n"
    assert {p: p.read_bytes() for p in (tmp_path / "site-out").iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site-out"]  # the unfinished build is removed
    fake_site.clear()
    (tmp_path / "site-out" / "notes.txt").write_text(MINE)
    assert main(["site", "--out", "site-out", "--force"]) == 2
    assert "holds files the site did not write (notes.txt)" in capsys.readouterr().err
    assert (tmp_path / "site-out" / "notes.txt").read_text() == MINE


def test_force_replaces_a_site_built_before_the_marker_listed_its_files(
    fake_site: list[Callable[[], Any]], tmp_path: Path
) -> None:
    from lessons.publish.swap import SITE

    old = tmp_path / "site-out"
    (old / "pyodide").mkdir(parents=True)
    (old / "pyodide" / "pyodide.mjs").write_text("old\n")
    (old / SITE.marker).write_text(SITE.legacy[0])
    assert main(["site", "--out", "site-out"]) == 2  # an earlier site: kept without --force
    assert main(["site", "--out", "site-out", "--force"]) == 0
    assert sorted(p.name for p in old.iterdir()) == [SITE.marker, "index.html"]
    assert (old / SITE.marker).read_text() == SITE.head + "index.html\n"
