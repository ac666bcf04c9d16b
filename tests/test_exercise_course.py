"""A course's side of the exercises: the autograder a teacher uploads, run end to end; the commands (the class
report itself: tests/test_exercise_classreport.py)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from test_exercise_classreport import class_results
from test_exercise_platforms import CORRECT_BACKPROP, OVERWRITE_BACKPROP

from lessons.cli import main
from lessons.exercises import autograder, judges
from lessons.exercises.autograder import AutograderError, write_autograder
from lessons.exercises.grading import SECRET_FILE
from lessons.exercises.sandbox import PACKAGES

ROOT = Path(__file__).resolve().parent.parent
FAKE_WHEEL = ("micrograph-0.1.0-py3-none-any.whl", b"PK\x05\x06" + bytes(18))  # an empty zip archive


@pytest.fixture
def fake_wheel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Skip the 4-second wheel build where a test is about the other files."""
    monkeypatch.setattr(autograder, "build_wheel", lambda root=None: FAKE_WHEEL)


# --- the autograder's files -------------------------------------------------------------------------------


def test_gradescope_autograder_files(tmp_path: Path, fake_wheel: None) -> None:
    out = tmp_path / "ag"
    written = write_autograder("backprop", "gradescope", out, seed=5)
    names = ["setup.sh", "run_autograder", SECRET_FILE, FAKE_WHEEL[0], "autograder.zip"]
    assert written == [out / n for n in names]
    for n in ("setup.sh", "run_autograder"):
        assert (out / n).stat().st_mode & stat.S_IXUSR, n
    for n in (SECRET_FILE, FAKE_WHEEL[0], "autograder.zip"):  # the secret and the keys: the owner's only
        assert stat.S_IMODE((out / n).stat().st_mode) == 0o600, n
    assert len((out / SECRET_FILE).read_bytes().strip()) == 64  # a new random secret: 32 bytes in hex
    setup = (out / "setup.sh").read_text()
    assert setup.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail" in setup
    assert "apt-get install -y python3 python3-pip graphviz" in setup
    assert f"python3 -m pip install --no-cache-dir /autograder/source/{FAKE_WHEEL[0]}" in setup
    assert "for package in micrograph viz lessons; do" in setup and 'chmod -R o-rwx "$directory"' in setup
    assert f"chmod 600 /autograder/source/{SECRET_FILE}" in setup
    assert subprocess.run(["bash", "-n", str(out / "setup.sh")], capture_output=True).returncode == 0
    run = (out / "run_autograder").read_text()
    assert run.startswith("#!/usr/bin/env python3\n")
    for part in [
        'EXERCISE = "backprop"',
        "FIXED_SEED = 5",
        'FORMAT = "gradescope"',
        '"/autograder"',
        'ROOT / "submission"',
        f'SECRET = ROOT / "source" / "{SECRET_FILE}"',
        '"--format", FORMAT,',
        '"--seed", str(seed)',
    ]:
        assert part in run, part
    compile(run, "run_autograder", "exec")
    assert (out / SECRET_FILE).read_text() not in run  # the secret is a file of its own
    with zipfile.ZipFile(out / "autograder.zip") as z:  # Gradescope wants the files at the archive's root
        assert z.namelist() == ["setup.sh", "run_autograder", SECRET_FILE, FAKE_WHEEL[0]]
        assert z.read("run_autograder").decode() == run
        assert z.read(SECRET_FILE) == (out / SECRET_FILE).read_bytes()
        modes = {i.filename: i.external_attr >> 16 for i in z.infolist()}
        assert modes == {"setup.sh": 0o755, "run_autograder": 0o755, SECRET_FILE: 0o600, FAKE_WHEEL[0]: 0o600}


def test_prairielearn_autograder_files(tmp_path: Path, fake_wheel: None) -> None:
    written = write_autograder("forward", "prairielearn", tmp_path, seed=2)
    names = ["grade_forward.py", "Dockerfile", "README.md", SECRET_FILE, FAKE_WHEEL[0]]
    assert [p.name for p in written] == names
    grade = (tmp_path / "grade_forward.py").read_text()
    for part in [
        '"/grade"',
        'ROOT / "student"',
        'FORMAT = "prairielearn"',
        "FIXED_SEED = 2",
        '"results.json"',
        f'SECRET = Path(__file__).resolve().parent / "{SECRET_FILE}"',
        f'(ROOT / "shared").rglob("{SECRET_FILE}")',  # PrairieLearn's second copy of serverFilesCourse
    ]:
        assert part in grade, part
    compile(grade, "grade_forward.py", "exec")
    docker = (tmp_path / "Dockerfile").read_text()
    assert f"COPY {FAKE_WHEEL[0]} /tmp/" in docker and "graphviz" in docker
    readme = (tmp_path / "README.md").read_text()
    assert '"entrypoint": "/grade/serverFilesCourse/micrograph/grade_forward.py"' in readme
    assert (
        f"Copy `grade_forward.py` and `{SECRET_FILE}` into your course's `serverFilesCourse/micrograph/`"
        in readme
    )
    assert (tmp_path / SECRET_FILE).read_text() not in docker + readme + grade
    assert "<pl-external-grader-results>" in readme


def test_existing_files_are_kept_without_force(tmp_path: Path, fake_wheel: None) -> None:
    (tmp_path / "setup.sh").write_text("the teacher's own\n")
    with pytest.raises(FileExistsError, match=r"setup\.sh exists; not overwriting"):
        write_autograder("backprop", "gradescope", tmp_path)
    assert (tmp_path / "setup.sh").read_text() == "the teacher's own\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["setup.sh"]  # nothing else written either
    write_autograder("backprop", "gradescope", tmp_path, force=True)
    assert "apt-get" in (tmp_path / "setup.sh").read_text()


def test_a_symlink_is_replaced_never_written_through(tmp_path: Path, fake_wheel: None) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep")
    out = tmp_path / "ag"
    out.mkdir()
    (out / "run_autograder").symlink_to(target)
    with pytest.raises(FileExistsError):
        write_autograder("backprop", "gradescope", out)
    write_autograder("backprop", "gradescope", out, force=True)
    assert target.read_text() == "keep" and not (out / "run_autograder").is_symlink()


def test_bad_arguments(tmp_path: Path, fake_wheel: None) -> None:
    with pytest.raises(
        ValueError, match="there is no exercise 'calculus'; the exercises are derivatives, topo"
    ):
        write_autograder("calculus", "gradescope", tmp_path)
    with pytest.raises(ValueError, match="there is no platform 'moodle'"):
        write_autograder("backprop", "moodle", tmp_path)
    with pytest.raises(ValueError, match="seed must be a whole number >= 0, got -1"):
        write_autograder("backprop", "gradescope", tmp_path, seed=-1)
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError, match="is a file; --out must be a directory"):
        write_autograder("backprop", "gradescope", tmp_path / "file")


def test_not_a_checkout_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        autograder, "__file__", str(tmp_path / "site-packages/lessons/exercises/autograder.py")
    )
    with pytest.raises(
        AutograderError, match=r"micrograph is not installed from a checkout .*pip install -e \."
    ):
        write_autograder("backprop", "gradescope", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_wheel_is_built_from_the_checkout_and_leaves_it_clean(tmp_path: Path) -> None:
    before = sorted(p.name for p in ROOT.iterdir())
    name, data = autograder.build_wheel()
    assert name.startswith("micrograph-") and name.endswith("-py3-none-any.whl")
    wheel = tmp_path / name
    wheel.write_bytes(data)
    with zipfile.ZipFile(wheel) as z:
        files = set(z.namelist())
        entry = next(f for f in files if f.endswith("entry_points.txt"))
        assert "micrograph = lessons.cli:main" in z.read(entry).decode()
    for module in (
        "micrograph/__init__.py",
        "viz/render.py",
        "lessons/exercises/platforms.py",
        "lessons/exercises/autograder.py",
    ):
        assert module in files, module
    assert not any("__pycache__" in f or f.startswith("tests/") for f in files)
    assert sorted(p.name for p in ROOT.iterdir()) == before  # no build/, no egg-info left behind


# --- the grading scripts, run ------------------------------------------------------------------------------


def gradescope_layout(tmp_path: Path, build: bool = False, secret: bytes | None = None) -> Path:
    """A directory laid out like Gradescope's /autograder, the autograder written into source/."""
    for d in ("source", "submission", "results"):
        (tmp_path / d).mkdir()
    write_autograder("backprop", "gradescope", tmp_path / "source", force=True, seed=3, secret=secret)
    return tmp_path


def copy_packages(into: Path) -> Path:
    """A copy of micrograph's packages in ``into``, as a wheel installs them (no caches)."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, into / package, ignore=shutil.ignore_patterns("__pycache__"))
    return into


def private_packages(into: Path) -> Path:
    """micrograph's packages copied where no other user can read them, as the platforms' setup leaves them:
    a grading script run as root refuses to grade with the checkout's own, readable, packages."""
    site = copy_packages(into)
    subprocess.run(["chmod", "-R", "o-rwx", str(site)], check=True)
    return site


@pytest.fixture(scope="session")
def private_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:func:`private_packages`, once for the session."""
    return private_packages(tmp_path_factory.mktemp("site"))


def script_env(root: Path, site: Path) -> dict[str, str]:
    """The environment the platform runs a grading script in, micrograph imported from ``site``."""
    venv_bin = str(Path(sys.executable).parent)
    return dict(
        os.environ,
        PATH=venv_bin + os.pathsep + os.environ.get("PATH", ""),
        PYTHONPATH=str(site),
        MICROGRAPH_AUTOGRADER_ROOT=str(root),
    )


def run_script(
    script: Path, root: Path, site: Path, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The grading script run as the platform runs it (in ``root``, or ``cwd``), micrograph from ``site``."""
    return subprocess.run(
        [str(script)],
        env=script_env(root, site),
        cwd=cwd or root,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_run_autograder_without_the_file_scores_zero_and_names_what_came(
    tmp_path: Path, fake_wheel: None, private_site: Path
) -> None:
    root = gradescope_layout(tmp_path)
    (root / "submission" / "Backprop (1).py").write_text("def backprop(G): ...\n")
    done = run_script(root / "source" / "run_autograder", root, private_site)
    assert done.returncode == 0, done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0.0
    test, *cases = results["tests"]  # the diagnosis, then every case of backprop, failed: 0 of 12
    assert [(t["name"], t["max_score"]) for t in cases] == judges.outline("backprop", 3)
    most = sum(points for _, points in judges.outline("backprop", 3))
    assert sum(t["max_score"] for t in results["tests"]) == results["extra_data"]["max_score"] == most
    assert all(t["status"] == "failed" and t["score"] == 0.0 for t in results["tests"])
    assert "there is no backprop.py in your submission: name your solution backprop.py" in test["output"]
    assert "(the files submitted: Backprop (1).py)" in test["output"]
    assert results["extra_data"]["exercise"] == "backprop" and results["extra_data"]["seed"] == 3
    assert "there is no backprop.py" in done.stdout  # the teacher's log


def test_prairielearn_grader_without_the_file_scores_zero(
    tmp_path: Path, fake_wheel: None, private_site: Path
) -> None:
    write_autograder("naive", "prairielearn", tmp_path / "course")
    (tmp_path / "student").mkdir()  # PrairieLearn does not make /grade/results: the script does
    done = run_script(tmp_path / "course" / "grade_naive.py", tmp_path, private_site)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    assert results["gradable"] is True and results["score"] == 0.0
    assert "there is no naive.py in your submission" in results["message"]
    assert "(the files submitted: none)" in results["tests"][0]["output"]


def test_run_autograder_finds_the_file_in_a_folder_and_refuses_two(
    tmp_path: Path, fake_wheel: None, private_site: Path
) -> None:
    root = gradescope_layout(tmp_path)
    for folder in ("hw3", "old"):
        (root / "submission" / folder).mkdir()
        (root / "submission" / folder / "backprop.py").write_text("def backprop(G): ...\n")
    done = run_script(root / "source" / "run_autograder", root, private_site)
    results = json.loads((root / "results" / "results.json").read_text())
    assert done.returncode == 0 and results["score"] == 0.0
    expected = "your submission has 2 files named backprop.py (hw3/backprop.py, old/backprop.py): submit one"
    assert expected in results["output"]
    (root / "submission" / "old" / "backprop.py").unlink()
    done = run_script(root / "source" / "run_autograder", root, private_site)
    assert (
        f"checking {root / 'submission' / 'hw3' / 'backprop.py'} for exercise backprop (the fixed seed 3: "
        in done.stdout
    )


def _check_has_format() -> bool:
    done = subprocess.run(
        [sys.executable, "-m", "micrograph", "exercise", "check", "--help"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    return "--format" in done.stdout


FORGERY = """\
from collections import _sys  # modules the exercise refuses, through one it allows
json, os, pathlib = map(_sys.modules["builtins"].__import__, ("json", "os", "pathlib"))
# the student's code writes a perfect results.json where the autograder will look for it
try:
    results = pathlib.Path(os.environ["MICROGRAPH_AUTOGRADER_ROOT"]) / "results" / "results.json"
    results.write_text(json.dumps({"score": 1000.0, "output": "forged"}))
except Exception:
    pass
"""


@pytest.mark.skipif(
    not _check_has_format(), reason="pending: `micrograph exercise check` has no --format yet"
)
@pytest.mark.slow
def test_run_autograder_end_to_end(tmp_path: Path, private_site: Path) -> None:
    """Gradescope's layout in a temporary directory: a wrong, a forging and a correct backprop.py."""
    assert OVERWRITE_BACKPROP != CORRECT_BACKPROP
    root = gradescope_layout(tmp_path)
    script, submitted, results = (
        root / "source" / "run_autograder",
        root / "submission" / "backprop.py",
        root / "results" / "results.json",
    )
    scores = {}
    for label, text in [
        ("wrong", OVERWRITE_BACKPROP),
        ("forged", FORGERY + OVERWRITE_BACKPROP),
        ("right", CORRECT_BACKPROP),
    ]:
        submitted.write_text(text)
        done = run_script(script, root, private_site)
        assert done.returncode == 0, done.stderr
        out = json.loads(results.read_text())
        top = sum(t["max_score"] for t in out["tests"])
        assert out["output"] != "forged" and out["extra_data"]["seed"] == 3
        scores[label] = (out["score"], top, out)
    for label in ("wrong", "forged"):
        score, top, out = scores[label]
        assert 0 < score < top, (label, score, top)
        assert out["extra_data"]["mistake"] == "overwrite"
        assert any(t["status"] == "failed" and t["output"].startswith("FAILED on: ") for t in out["tests"])
    score, top, out = scores["right"]
    assert score == top > 0 and all(t["status"] == "passed" for t in out["tests"])


# --- the commands ---------------------------------------------------------------------------------------


def exercise(*argv: str) -> int:
    """``micrograph exercise ARGV`` run in this process: its exit status."""
    return main(["exercise", *argv])


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("micrograph: error: "), err
    return err


def test_autograder_command(tmp_path: Path, fake_wheel: None, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ag"
    assert exercise("autograder", "backprop", "--platform", "gradescope", "--out", str(out)) == 0
    printed = capsys.readouterr().out
    assert f"wrote {out / 'autograder.zip'}" in printed
    assert "Configure Autograder" in " ".join(printed.split())
    most = sum(points for _, points in judges.outline("backprop"))
    assert f"Set the assignment's points to {most:g}, the exercise's" in " ".join(printed.split())
    prose = [line for line in printed.splitlines() if not line.startswith("wrote ")]
    assert all(len(line) <= 80 or str(tmp_path) in line for line in prose), printed  # a path is not cut
    assert exercise("autograder", "backprop", "--platform", "gradescope", "--out", str(out)) == 2
    assert "exist; not overwriting; use --force to replace them" in one_line_error(capsys)
    argv = ("autograder", "backprop", "--platform", "gradescope", "--out", str(out), "--force", "--seed", "9")
    assert exercise(*argv) == 0
    assert "FIXED_SEED = 9" in (out / "run_autograder").read_text()
    capsys.readouterr()
    assert exercise("autograder", "nope", "--platform", "gradescope", "--out", str(out)) == 2
    assert "there is no exercise 'nope'" in one_line_error(capsys)
    (tmp_path / "f").write_text("")
    assert exercise("autograder", "topo", "--platform", "prairielearn", "--out", str(tmp_path / "f")) == 2
    assert "is a file" in one_line_error(capsys)
    assert exercise("autograder", "topo", "--platform", "prairielearn", "--out", "x", "--seed", "-2") == 2
    assert "--seed" in one_line_error(capsys)
    missing = tmp_path / "nodir" / "ag"  # the directory is created, its parents are not
    assert exercise("autograder", "topo", "--platform", "gradescope", "--out", str(missing)) == 2
    assert "does not exist" in one_line_error(capsys) and not missing.parent.exists()


def test_autograder_command_outside_a_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(autograder, "__file__", str(tmp_path / "lessons/exercises/autograder.py"))
    assert exercise("autograder", "topo", "--platform", "gradescope", "--out", str(tmp_path)) == 2
    assert "micrograph is not installed from a checkout" in one_line_error(capsys)


def test_report_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = class_results(tmp_path / "class")
    chart = tmp_path / "class.png"
    assert exercise("report", str(d), "--chart", str(chart)) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("Class report: 6 results read (8 files skipped).")
    assert f"wrote {chart}" in printed and chart.stat().st_size > 10_000
    assert exercise("report", str(d), "--chart", str(chart)) == 2
    assert "class.png exists; use --force to replace it" in one_line_error(capsys)
    assert exercise("report", str(d), "--chart", str(chart), "--force") == 0
    capsys.readouterr()
    assert exercise("report", str(d), "--chart", str(tmp_path / "c.gif")) == 2
    assert "give a file name ending in .png" in one_line_error(capsys)
    assert exercise("report", str(d), "--chart", str(tmp_path / "nodir" / "c.png")) == 2
    said = one_line_error(capsys)
    assert "does not exist" in said and said.count("cannot write") == 1, said
    assert exercise("report", str(tmp_path / "missing.json")) == 2
    assert "no file or directory" in one_line_error(capsys)
    assert exercise("report", str(d / "foreign.json"), str(d / "broken.json")) == 2
    assert "no micrograph result among the files given (skipped" in one_line_error(capsys)


def _course_commands_wired() -> bool:
    done = subprocess.run(
        [sys.executable, "-m", "micrograph", "exercise", "--help"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    return "autograder" in done.stdout and "report" in done.stdout


def test_the_micrograph_command_runs_the_course_subcommands(tmp_path: Path) -> None:
    assert _course_commands_wired(), "micrograph exercise --help names no autograder or report subcommand"

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "micrograph", "exercise", *argv],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )

    d = class_results(tmp_path / "class")
    done = run("report", str(d), "--chart", "class.png")
    assert done.returncode == 0 and done.stdout.startswith("Class report: 6 results read (8 files skipped).")
    assert (tmp_path / "class.png").stat().st_size > 10_000
    for argv, message in [
        (("report", "missing.json"), "no file or directory 'missing.json'"),
        (("report", str(d), "--chart", "class.png"), "class.png exists; use --force to replace it"),
        (("autograder", "nope", "--platform", "gradescope", "--out", "ag"), "there is no exercise 'nope'"),
        (("autograder", "topo", "--platform", "moodle", "--out", "ag"), "moodle"),
        (("autograder", "topo", "--platform", "gradescope", "--out", "ag", "--seed", "-1"), "-1"),
    ]:
        done = run(*argv)
        assert done.returncode == 2, argv
        assert done.stderr.startswith("micrograph") and ": error: " in done.stderr, done.stderr
        assert message in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
