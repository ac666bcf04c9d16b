"""The site builder's npm cache when builds run at once (two terminals, or the test suite's workers): each
installs in a directory of its own and renames it into place, so none sees a half-installed cache.

npm is replaced by a script that installs slowly and counts its runs; the builder's own code does the rest.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from lessons.publish import site

FAKE_NPM = """#!/bin/sh
# npm ci, slowly: like npm ci it removes node_modules, writes the packages over a while and fails if another
# process changed what it wrote meanwhile (two npm ci in one directory); each run counts itself
echo run >> "$COUNT"
rm -rf node_modules
mkdir -p node_modules/some-package
echo $$ > node_modules/.writer
sleep 0.5
if [ "$(cat node_modules/.writer 2>/dev/null)" != $$ ]; then
  echo "npm ERR! node_modules changed meanwhile" >&2
  exit 1
fi
echo "module.exports = 1" > node_modules/some-package/index.js
"""


@pytest.fixture
def fake_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake ``npm`` first on PATH and an empty cache; returns the file counting npm's runs."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(FAKE_NPM)
    npm.chmod(npm.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("MICROGRAPH_CACHE", str(tmp_path / "cache"))
    count = tmp_path / "count"
    monkeypatch.setenv("COUNT", str(count))
    return count


def test_builds_at_once_each_get_a_whole_install(fake_npm: Path) -> None:
    found: list[Path] = []
    errors: list[BaseException] = []

    def build() -> None:
        try:
            modules = site.npm_packages(log=lambda s: None)
            # what this build sees is whole at once: the file npm writes last is there
            assert (modules / "some-package" / "index.js").read_text() == "module.exports = 1\n"
            found.append(modules)
        except BaseException as e:  # reported by the assertion below
            errors.append(e)

    threads = [threading.Thread(target=build) for _ in range(3)]
    for t in threads:  # each starts while the one before is installing
        t.start()
        time.sleep(0.2)
    for t in threads:
        t.join()
    assert errors == []
    assert len(set(found)) == 1  # one cache directory for all
    cache = found[0].parent.parent
    assert [p.name for p in cache.iterdir()] == [found[0].parent.name]  # no private copy left behind
    runs = len(fake_npm.read_text().splitlines())
    assert 1 <= runs <= 3
    site.npm_packages(log=lambda s: None)  # installed: npm is not run again
    assert len(fake_npm.read_text().splitlines()) == runs


def test_an_install_left_half_done_is_replaced(fake_npm: Path) -> None:
    first = site.npm_packages(log=lambda s: None)
    marker = first / ".micrograph-installed"
    marker.unlink()  # as an interrupted install of an older micrograph left it
    (first / "some-package" / "index.js").unlink()
    again = site.npm_packages(log=lambda s: None)
    assert again == first
    assert marker.is_file() and (again / "some-package" / "index.js").is_file()
    assert len(fake_npm.read_text().splitlines()) == 2
