"""The tree's shape: every Python and JavaScript file of ours is at most 500 lines (one thought per file).

The files are those git tracks. Bundled or vendored files are not ours and are exempt, by name. A few files
are being split now: each is listed with its length when the list was made, may only shrink, and must still
be over the limit (a file split below it is taken off the list, so the list cannot outlive its purpose).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

LIMIT = 500
"""The most lines a Python or JavaScript file of ours may have."""

EXEMPT = ("site/src/vendor.js", "site/src/graphviz.js", "viz/static/vendor/")
"""Bundled or vendored JavaScript, not written here: esbuild's entry and output for the site's
dependencies, and the explorer's d3-zoom bundle with its build script."""

BEING_SPLIT = {
    "tests/test_exercises_catalogue.py": 512,
}
"""Files over the limit that are being split now, with their length when listed: temporary."""


def _tracked() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("the files are listed by git, and this is not a git checkout")
    done = subprocess.run(
        ["git", "ls-files", "-z", "--", "*.py", "*.js"], cwd=ROOT, capture_output=True, check=True
    )
    return [name for name in done.stdout.decode("utf-8").split("\0") if name]


def _lines(name: str) -> int:
    return len((ROOT / name).read_text(encoding="utf-8").splitlines())


def test_every_python_and_javascript_file_of_ours_is_at_most_500_lines() -> None:
    names = [n for n in _tracked() if not n.startswith(EXEMPT) and n not in BEING_SPLIT]
    assert len(names) > 100  # the listing found the tree
    too_long = {n: _lines(n) for n in names if (ROOT / n).exists() and _lines(n) > LIMIT}
    assert not too_long, f"over {LIMIT} lines (split where the thought splits): {too_long}"


@pytest.mark.parametrize("name", sorted(BEING_SPLIT))
def test_a_file_being_split_only_shrinks_and_leaves_the_list_once_split(name: str) -> None:
    lines = _lines(name)
    assert lines <= BEING_SPLIT[name], f"{name} grew to {lines} lines while being split"
    assert lines > LIMIT, f"{name} is {lines} lines now: take it off BEING_SPLIT"
