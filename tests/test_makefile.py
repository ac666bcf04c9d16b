"""The Makefile's documentation target: built once, again when an input changes, never stopped by a deletion.

``make test`` and ``make test-slow`` both need the built site; ``docs/_build/html/index.html`` is a file
target whose inputs are the files git knows under docs/ and the packages (tracked, or new and not ignored).
Run with ``make -n`` (nothing is executed) in a copy of the Makefile inside a small git repository of its
own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INDEX = "docs/_build/html/index.html"

pytestmark = pytest.mark.skipif(
    not (shutil.which("make") and shutil.which("git")), reason="needs make and git (apt-get install make git)"
)


def _plan(repo: Path) -> subprocess.CompletedProcess[str]:
    """What ``make docs`` would run there, without running it."""
    return subprocess.run(["make", "-n", "docs"], cwd=repo, capture_output=True, text=True, timeout=60)


def _repo(tmp_path: Path) -> Path:
    """The Makefile in a git repository with one committed file per input folder and an up-to-date site."""
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(ROOT / "Makefile", repo / "Makefile")
    shutil.copy(ROOT / ".gitignore", repo / ".gitignore")  # the site's build is not one of its inputs
    files = ["setup.cfg", "pyproject.toml", "README.md", "CHANGELOG.md", "docs/conf.py", "lessons/l1.py"]
    for name in [*files, "micrograph/__init__.py", "viz/__init__.py", "lessons/__init__.py"]:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("", encoding="utf-8")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "inputs"], cwd=repo, check=True)
    inputs, built = time.time() - 100, time.time() - 50  # the environment and the site newer than the inputs
    for path in repo.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            os.utime(path, (inputs, inputs))
    for name in (".venv/.installed-main", ".venv/.installed", INDEX):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("", encoding="utf-8")
        os.utime(repo / name, (built, built))
    return repo


def test_an_up_to_date_site_is_not_built_again(tmp_path: Path) -> None:
    plan = _plan(_repo(tmp_path))
    assert plan.returncode == 0, plan.stderr
    assert "sphinx" not in plan.stdout and plan.stderr == ""


@pytest.mark.parametrize("name", ["lessons/l1.py", "viz/new.py", "docs/conf.py"])
def test_a_changed_or_new_input_builds_it_again(name: str, tmp_path: Path) -> None:
    """A tracked file changed, or a file git does not know yet (and does not ignore)."""
    repo = _repo(tmp_path)
    (repo / name).write_text("x = 1\n", encoding="utf-8")
    plan = _plan(repo)
    assert plan.returncode == 0, plan.stderr
    assert "-m sphinx -W" in plan.stdout


def test_a_file_deleted_but_not_committed_does_not_stop_make(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "lessons" / "l1.py").unlink()
    plan = _plan(repo)
    assert plan.returncode == 0, plan.stderr
    assert plan.stderr == ""
