"""micrograph's wheel in the site holds the checkout's files, not what an earlier build left.

setuptools builds a wheel in the checkout's ``build/`` and keeps there what earlier builds wrote: a module
removed since would go into the site's wheel, and the page would import it. ``micrograph site`` builds in a
directory of its own (its egg-info too: nothing is written into the checkout) and checks the wheel against
the checkout (:func:`lessons.publish.site.only_the_checkout`).
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from lessons.publish import site

DIST_INFO = "micrograph-0.1.0.dist-info/RECORD"


def _wheel(path: Path, names: list[str]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name in names:
            z.writestr(name, "")
    return path


def test_a_wheel_of_the_checkout_s_files_passes(tmp_path: Path) -> None:
    names = ["micrograph/engine.py", "viz/static/micrograph.css", "lessons/publish/web.py", DIST_INFO]
    site.only_the_checkout(_wheel(tmp_path / "ok.whl", names))


def test_a_file_that_is_not_in_the_checkout_is_named(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "stale.whl", ["micrograph/engine.py", "micrograph/cli.py", DIST_INFO])
    with pytest.raises(site.SiteError) as refused:
        site.only_the_checkout(wheel)
    said = "micrograph's wheel holds micrograph/cli.py, which is not in the checkout: remove"
    assert str(refused.value) == f"{said} {site.ROOT / 'build'}"


@pytest.mark.slow
def test_what_an_earlier_build_left_in_build_stays_out_of_the_wheel(tmp_path: Path) -> None:
    build = site.ROOT / "build"
    had_build = build.exists()
    left = build / "lib" / "micrograph" / "_left_by_an_earlier_build.py"
    left.parent.mkdir(parents=True, exist_ok=True)
    left.write_text("raise ImportError('a module removed from the checkout')\n")
    egg_info = site.ROOT / "micrograph.egg-info"
    before = {p.name: p.stat().st_mtime_ns for p in egg_info.iterdir()} if egg_info.exists() else None
    try:
        ours, _ = site.wheels(tmp_path / "wheels", lambda _: None)
    finally:
        if had_build:
            left.unlink()
        else:
            shutil.rmtree(build)
    with zipfile.ZipFile(tmp_path / "wheels" / ours) as z:
        names = set(z.namelist())
    assert "micrograph/engine.py" in names and "lessons/publish/web.py" in names
    assert "micrograph/_left_by_an_earlier_build.py" not in names
    after = {p.name: p.stat().st_mtime_ns for p in egg_info.iterdir()} if egg_info.exists() else None
    assert after == before  # the build writes nothing into the checkout
