"""The tree's shape: every Python and JavaScript file of ours is at most 500 lines (one thought per file).

The files are those git tracks. Bundled or vendored files are not ours and are exempt, by name.
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
    names = [n for n in _tracked() if not n.startswith(EXEMPT)]
    assert len(names) > 100  # the listing found the tree
    too_long = {n: _lines(n) for n in names if (ROOT / n).exists() and _lines(n) > LIMIT}
    assert not too_long, f"over {LIMIT} lines (split where the thought splits): {too_long}"
