"""nox sessions: the tests on every supported Python found here, the wheel path, the citation file.

    nox -l                      # the sessions, with the Pythons found on this machine
    nox -s tests                # the test suite on each of 3.10, 3.11, 3.12, 3.13 that is installed
    nox -s tests-3.10 -- -x     # one version; arguments after -- go to pytest
    nox -s build wheel          # build the wheel and sdist, twine check, install the wheel alone and run it
    nox -s citation             # validate CITATION.cff with cffconvert

A Python is found as ``python3.X`` on PATH or under pyenv's ``~/.pyenv/versions/3.X.*`` (whose ``bin``
directories are put on PATH for nox to find). Each session has its own virtual environment under
``.nox/`` (git-ignored); ``make bench`` times the eager demo step with each ``tests`` session's Python.
"""

from __future__ import annotations

import glob
import os
import shutil
import sys
import tempfile
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
SUPPORTED = ["3.10", "3.11", "3.12", "3.13"]
"""The Python versions setup.cfg declares (python_requires = >=3.10), each tested where it is installed."""

nox.options.sessions = ["tests", "build", "wheel", "citation"]
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = False


def _pyenv_dirs() -> list[str]:
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    dirs = []
    for v in SUPPORTED:
        found = sorted(glob.glob(str(root / f"{v}.*" / "bin" / f"python{v}")))
        if found:
            dirs.append(str(Path(found[-1]).parent))
    return dirs


os.environ["PATH"] = os.pathsep.join([*_pyenv_dirs(), os.environ.get("PATH", "")])
FOUND = [v for v in SUPPORTED if shutil.which(f"python{v}")]
"""The supported versions installed on this machine, oldest first."""


@nox.session(python=FOUND)
def tests(session: nox.Session) -> None:
    """The test suite (``pytest -q -p no:cacheprovider``, on every CPU as ``make test`` runs it) with
    micrograph and its dev extra installed."""
    session.install("-e", ".[dev]")
    parallel = ["-n", "auto", "--dist", "loadscope"]
    session.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *parallel, *session.posargs)


DIST = ROOT / "dist"


@nox.session(python=FOUND[-1:] or None)
def build(session: nox.Session) -> None:
    """``python -m build`` (wheel and sdist into dist/), then ``twine check`` of their metadata."""
    session.install("build", "twine")
    if DIST.exists():
        shutil.rmtree(DIST)
    session.run("python", "-m", "build", "--outdir", str(DIST), str(ROOT))
    session.run("twine", "check", "--strict", *sorted(str(p) for p in DIST.iterdir()))


@nox.session(python=FOUND[:1] or None, requires=["build"], reuse_venv=False)
def wheel(session: nox.Session) -> None:
    """The wheel alone in a new virtual environment: no make, no dev extra, no source tree on sys.path.

    Imports micrograph from the installed wheel, runs ``micrograph tour``, and checks that without
    Graphviz's ``dot`` on PATH a drawing command exits 2 with one line saying how to install it.
    """
    wheels = sorted(DIST.glob("micrograph-*.whl"))
    if not wheels:
        session.error("no wheel in dist/: run `nox -s build` first")
    session.install(str(wheels[-1]))
    with tempfile.TemporaryDirectory(prefix="micrograph-wheel-") as tmp:
        session.chdir(tmp)
        session.run(
            "python", "-c",
            "import micrograph, sys, os; p = micrograph.__file__; print(micrograph.__version__, p); "
            "sys.exit(0 if os.sep + 'site-packages' + os.sep in p else 'imported from ' + p)",
        )  # fmt: skip
        session.run("micrograph", "--version")
        session.run("micrograph", "tour", "--out", "tour")
        if not Path(tmp, "tour", "index.html").is_file():
            session.error("micrograph tour wrote no tour/index.html")
        _check_missing_dot(session, tmp)


def _check_missing_dot(session: nox.Session, tmp: str) -> None:
    """``micrograph render`` and ``tour`` with no ``dot`` on PATH: exit 2, one line on stderr, the fix."""
    import subprocess

    bindir = Path(session.bin)
    nodot = Path(tmp, "nodot")
    nodot.mkdir()
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{nodot}"}
    for args in (["render", "x*y", "--at", "x=1", "--at", "y=2", "--out", "g.svg"], ["tour", "--out", "t2"]):
        cmd = [str(bindir / "micrograph"), *args]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tmp, timeout=300)
        lines = done.stderr.strip().splitlines()
        what = f"micrograph {args[0]} without dot"
        session.log(f"{what}: exit {done.returncode}, stderr: {done.stderr.strip()}")
        if done.returncode != 2 or len(lines) != 1 or "install graphviz" not in lines[0]:
            session.error(f"{what}: expected exit 2 and one line naming the install")


@nox.session(python=FOUND[-1:] or None)
def citation(session: nox.Session) -> None:
    """CITATION.cff against the Citation File Format schema (``cffconvert --validate``)."""
    session.install("cffconvert>=2")
    session.run("cffconvert", "--validate", "-i", str(ROOT / "CITATION.cff"))


if __name__ == "__main__":
    sys.exit("run with nox: nox -l")
