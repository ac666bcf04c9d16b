"""The tour never loses a user's file: the reproducers of the data-loss reports, each as a test.

F1 a file added to an earlier tour survives ``--force``; F2 a directory created while a tour runs is not
removed; F3 concurrent tours into one new directory do not replace each other; F4 SIGTERM leaves no
unfinished directory and a killed run's leftovers are swept by the next tour; a full disk names the file.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lessons import cli
from lessons.publish import swap, tour

ROOT = Path(__file__).resolve().parents[1]


def _main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = cli.main(args)
    return status, capsys.readouterr().err


def _tour(out: Path, capsys: pytest.CaptureFixture[str], *more: str) -> tuple[int, str]:
    return _main(["tour", "--out", str(out), "--lessons", "1", "--quiet", *more], capsys)


def _files(d: Path) -> dict[str, bytes]:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in d.rglob("*") if p.is_file()}


def _command(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "micrograph", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_f1_force_never_deletes_a_file_the_tour_did_not_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "T"
    assert _tour(out, capsys)[0] == 0
    (out / "notes.txt").write_text("notes\n")
    (out / "lesson1" / "mine").mkdir()
    status, err = _tour(out, capsys, "--force")
    assert status == 2 and err.count("\n") == 1, err
    assert "did not write" in err and "notes.txt" in err and "lesson1/mine" in err
    assert (out / "notes.txt").read_text() == "notes\n" and (out / "lesson1" / "mine").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["T"]  # nothing left beside it
    (out / "notes.txt").unlink()
    (out / "lesson1" / "mine").rmdir()
    assert _tour(out, capsys, "--force")[0] == 0  # only the tour's own files: replaced


def test_f1_the_marker_lists_every_file_the_tour_wrote(tmp_path: Path) -> None:
    result = tour.run(tmp_path / "T", progress=False, only=[1])
    head, *listed = (tmp_path / "T" / swap.TOUR.marker).read_text().splitlines()
    assert "micrograph tour" in head
    assert sorted(listed) == sorted(p.relative_to(tmp_path / "T").as_posix() for p in result.files)
    on_disk = {p for p in _files(tmp_path / "T")} - {swap.TOUR.marker}
    assert on_disk == set(listed)


def test_f2_a_directory_created_while_the_tour_runs_is_never_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "C"
    flipbooks = tour._flipbooks

    def meanwhile(*args: object) -> object:  # the user makes C and writes into it while the tour runs
        out.mkdir()
        (out / "important.txt").write_text("x\n")
        return flipbooks(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(tour, "_flipbooks", meanwhile)
    status, err = _tour(out, capsys)
    assert status == 2 and "exists" in err, err
    assert _files(out) == {"important.txt": b"x\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["C"]
    status, err = _tour(out, capsys, "--force")  # --force never replaces other files either
    assert status == 2 and _files(out) == {"important.txt": b"x\n"}


def test_f2_an_earlier_tour_gaining_a_file_during_the_run_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "T"
    assert _tour(out, capsys)[0] == 0
    flipbooks = tour._flipbooks

    def meanwhile(*args: object) -> object:
        (out / "added.txt").write_text("y\n")
        return flipbooks(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(tour, "_flipbooks", meanwhile)
    status, err = _tour(out, capsys, "--force")
    assert status == 2 and "added.txt" in err, err
    assert (out / "added.txt").read_text() == "y\n" and (out / swap.TOUR.marker).is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["T"]


def test_f3_a_tour_finished_meanwhile_into_the_same_new_directory_is_not_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "C"
    flipbooks = tour._flipbooks
    other: dict[str, bytes] = {}

    def meanwhile(*args: object) -> object:
        monkeypatch.setattr(tour, "_flipbooks", flipbooks)
        tour.run(out, progress=False, only=[1])  # another tour into C finishes first
        other.update(_files(out))
        return flipbooks(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(tour, "_flipbooks", meanwhile)
    status, err = _tour(out, capsys)
    assert status == 2 and "exists" in err, err
    assert other and _files(out) == other
    assert sorted(p.name for p in tmp_path.iterdir()) == ["C"]


@pytest.mark.slow
def test_f3_three_concurrent_tours_into_one_new_directory_one_wins(tmp_path: Path) -> None:
    out = tmp_path / "C"
    runs = [_command("tour", "--out", str(out), "--lessons", "1", "--quiet") for _ in range(3)]
    done = [(p.wait(timeout=300), p.communicate()[1]) for p in runs]
    statuses = sorted(status for status, _ in done)
    assert statuses == [0, 2, 2], done
    for status, err in done:
        if status == 2:
            assert "exists" in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert (out / swap.TOUR.marker).is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["C"]


@pytest.mark.slow
def test_f4_sigterm_removes_the_unfinished_directory(tmp_path: Path) -> None:
    out = tmp_path / "T"
    run = _command("tour", "--out", str(out), "--lessons", "1,2", "--quiet")
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob(".T.building-*/lesson1")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(tmp_path.glob(".T.building-*")), "the tour never started building"
    run.send_signal(signal.SIGTERM)
    status = run.wait(timeout=120)
    err = run.communicate()[1]
    assert status == 2 and "interrupted" in err and "Traceback" not in err, err
    assert list(tmp_path.iterdir()) == []


def test_f4_stale_unlocked_leftovers_are_swept_locked_or_recent_ones_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = time.time() - 2 * swap.STALE_SECONDS

    def made_by_a_tour(name: str, age: float = old) -> Path:
        d = tmp_path / name
        d.mkdir()
        (d / swap.TOUR.claim).write_text("made by micrograph tour\n")
        os.utime(d, (age, age))
        return d

    stale = made_by_a_tour(".T.building-killed")
    (stale / "lesson1").mkdir()
    (stale / "lesson1" / "step01.svg").write_text("<svg/>")
    os.utime(stale, (old, old))
    made_by_a_tour(".T.old-killed")
    busy = made_by_a_tour(".T.building-running")
    made_by_a_tour(".T.building-recent", time.time())
    made_by_a_tour(".U.building-other")  # another directory's leftovers: not this tour's to sweep
    for name in (".T.old-mybackup", ".T.building-notes"):  # the user's own, named alike: never swept
        (tmp_path / name).mkdir()
        (tmp_path / name / "notes.txt").write_text("mine")
        os.utime(tmp_path / name, (old, old))
    fd = os.open(busy, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a tour that is still running holds its lock
        assert _tour(tmp_path / "T", capsys)[0] == 0
    finally:
        os.close(fd)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [
        ".T.building-notes", ".T.building-recent", ".T.building-running", ".T.old-mybackup",
        ".U.building-other", "T",
    ]  # fmt: skip
    assert (tmp_path / ".T.old-mybackup" / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in (tmp_path / "T").iterdir() if p.name.startswith(".")) == [swap.TOUR.marker]


def test_an_empty_lesson_list_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, err = _main(["tour", "--out", str(tmp_path / "T"), "--lessons", ""], capsys)
    assert status == 2 and "--lessons" in err and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="no lessons"):
        tour.run(tmp_path / "T", progress=False, only=[])


def test_what_a_tour_could_not_write_here_is_said_with_what_it_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the slides extra or pdflatex, figure 6.10's GIF and PDF are not written: the tour says so."""
    import viz

    def no_imageio(*args: object, **kw: object) -> Path:
        raise ModuleNotFoundError("No module named 'imageio'")

    monkeypatch.setattr(viz, "animate", no_imageio)
    which = tour.shutil.which
    monkeypatch.setattr(tour.shutil, "which", lambda name: None if name == "pdflatex" else which(name))
    status = cli.main(["tour", "--out", str(tmp_path / "out"), "--lessons", "6", "--quiet"])
    out = capsys.readouterr().out
    assert status == 0, out
    said = " ".join(out.split())
    assert "Not written here, for want of what each needs: fig_6_10.pdf (pdflatex); " in said
    assert "fig_6_10_backprop.gif (pip install 'micrograph[slides]')." in said
    assert all(len(line) <= 80 for line in out.splitlines()[2:]), out
    assert not (tmp_path / "out" / "fig_6_10_backprop.gif").exists()
