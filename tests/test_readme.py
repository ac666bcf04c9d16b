"""README.md as a test: its commands, run as written in a fresh clone of this repository.

Each test clones the repository's HEAD (the committed files, as a reader gets them) into a temporary
directory and runs README.md's code there, literally: the shell commands of its fenced blocks and the site
commands it writes inline (``micrograph site --out site-out``, relative path included), with
``python -m micrograph`` of this environment importing the clone (``PYTHONPATH``), its "Ten lines" block,
and its REPL sessions typed into ``python -i``. What each prints or writes is checked against what the
README says it does (the exercise report's first line, the value of ``w.grad``, the exercises of its
table, the site loaded in chromium up to "Ready").

Some commands cannot run here; :data:`NOT_RUN` names each with why, and a test fails when the README shows
a command that is neither run here nor named there.
"""

from __future__ import annotations

import math
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from site_browser import OfflinePages, served

from lessons.publish.site_files import missing_files

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")

NOT_RUN = {
    "make demo": "creates .venv in the clone and installs micrograph there with pip (the network, minutes); "
    "the tour it runs is `micrograph tour --out out/` of 'The command', run here",
    "make test": "runs this test suite (this file included) after building the docs",
    'python -m pytest -m "not slow" -n auto --dist loadscope': "runs this test suite's quick part, this file "
    "included",
    "python -m pytest -m slow -n auto --dist loadscope": "runs this test suite's slow part (chromium, the "
    "site, the tour: many minutes), which `make test-slow` runs in CI",
    "make docs": "Sphinx executes every lesson as a notebook (minutes); tests/test_docs.py opens the built "
    "pages",
    "make pythons": "nox creates an environment per Python 3.10-3.13 installed and runs the whole suite in "
    "each (pip, the network, many minutes)",
    "python -m pip install build && python -m build": "installs `build` from PyPI into the environment "
    "running the tests; `make wheel` (nox -s build wheel) builds, checks and installs the wheel",
    "python -m venv ~/mg && ~/mg/bin/pip install dist/micrograph-0.1.0-py3-none-any.whl": "writes ~/mg in "
    "the user's home, and needs the wheel of the line above",
    "~/mg/bin/micrograph tour --out out/": "needs ~/mg of the lines above; the same tour, "
    "`micrograph tour --out out/` of 'The command', runs here",
}
"""README commands this file does not run, and why."""

PROGRAMS = ("make", "micrograph", "python", "~/mg/bin/")
"""How a line of a command block begins (a block of other lines is output, such as a report)."""


# --- reading the README -----------------------------------------------------------------------------------


def _section(title: str) -> str:
    """The text under the heading ``## title``, up to the next ``## `` heading."""
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end >= 0 else len(README)]


def _blocks(text: str) -> list[tuple[str, str]]:
    """The fenced code blocks of ``text``: (info string, body)."""
    return re.findall(r"^```(\w*)\n(.*?)^```$", text, flags=re.M | re.S)


def _commands(text: str) -> list[str]:
    """The shell commands of ``text``'s command blocks, one a line, each without its comment."""
    found = []
    for info, body in _blocks(text):
        lines = [line for line in body.splitlines() if line.strip()]
        if info == "" and lines and all(line.startswith(PROGRAMS) for line in lines):
            found += [re.split(r"\s+#\s", line, maxsplit=1)[0].strip() for line in lines]
    return found


def _inline(prefix: str) -> list[str]:
    """The README's inline code spans that begin with ``prefix``, in order, each once."""
    spans = re.findall(r"(?<!`)`([^`]+)`(?!`)", re.sub(r"^```.*?^```$", "", README, flags=re.M | re.S))
    return list(dict.fromkeys(" ".join(s.split()) for s in spans if s.startswith(prefix)))


# --- running it in a clone --------------------------------------------------------------------------------


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A fresh clone of this repository's HEAD."""
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("README.md is tested from a git checkout (git clone of its HEAD)")
    where = tmp_path / "micrograph"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(where)], check=True, timeout=120)
    return where


def _env(clone: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(clone), "PYTHONUNBUFFERED": "1"}


def _argv(command: str) -> list[str]:
    """A README command as this environment runs it: ``micrograph ...`` is ``python -m micrograph ...``."""
    words = shlex.split(command)
    assert words[0] == "micrograph", command
    return [sys.executable, "-m", "micrograph", *words[1:]]


def _run(command: str, clone: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_argv(command), cwd=clone, env=_env(clone), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, check=False)  # fmt: skip


def test_every_command_is_run_here_or_said_why_not() -> None:
    shown = _commands(README)
    assert len(shown) >= 20  # the reading found the blocks
    not_run = [c for c in shown if not c.startswith("micrograph ")]
    assert sorted(not_run) == sorted(NOT_RUN), "a README command is neither run here nor in NOT_RUN"
    run_here = {*_commands(_section("Exercises: write the algorithms yourself")),
                *_commands(_section("The command")), *_commands(_section("Ten lines"))}  # fmt: skip
    assert set(shown) - set(not_run) <= run_here


def test_make_site_and_serve_site_run_the_commands_the_readme_shows(clone: Path) -> None:
    """`make site` and `make serve-site` are the README's own site commands (read with make -n: the
    environment make would create first is not created), with --force to replace an earlier site."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    build, serve = _inline("micrograph site ")
    assert (build, serve) == ("micrograph site --out site-out", "micrograph site --out site-out --serve")
    assert {"make site", "make serve-site"} <= set(_inline("make "))
    recipes = {}
    for target in ("site", "serve-site"):
        done = subprocess.run(["make", "-n", target], cwd=clone, capture_output=True, text=True, check=True)
        recipes[target] = [line.split("/", 2)[2] for line in done.stdout.splitlines() if " site " in line]
    assert recipes == {"site": [build + " --force"], "serve-site": [build + " --force", serve]}


def test_ten_lines(clone: Path) -> None:
    """The "Ten lines" block, and the one line after it that draws figure 6.10 from Python."""
    (code,) = [body for info, body in _blocks(_section("Ten lines")) if info == "python"]
    (draw,) = _inline("import viz; G.forward(); viz.render(")
    said = re.search(r"print\(w\.grad\)\s+# ([\d.]+)\.\.\.", code)
    assert said is not None
    done = subprocess.run([sys.executable, "-c", code + draw], cwd=clone, env=_env(clone),
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(said.group(1)), done.stdout
    drawn = (clone / "fig_6_10.svg").read_text()
    assert drawn.count("tanh′") == 3  # one tanh′ node per local derivative
    assert f"{math.tanh(math.tanh(math.tanh(0.9))):.4f}" in drawn  # z as w = 0.9 gives it: G agrees with B


def test_render_figure_6_10(clone: Path) -> None:
    (command,) = _commands(_section("Ten lines"))
    assert command.startswith("micrograph render ")
    done = _run(command, clone)
    assert done.returncode == 0, done.stderr
    drawn = (clone / "fig_6_10.svg").read_text()
    assert drawn.count("tanh′") == 3 and "</svg>" in drawn


def test_the_exercise_commands(clone: Path) -> None:
    section = _section("Exercises: write the algorithms yourself")
    commands = _commands(section)
    assert [c.split()[:3] for c in commands] == [["micrograph", "exercise", w] for w in
                                                 ("list", "start", "check", "check")]  # fmt: skip
    report = next(body for info, body in _blocks(section) if body.startswith("exercise backprop:"))
    listed, started, checked, seeded = (_run(c, clone) for c in commands)
    assert listed.returncode == 0
    names = re.findall(r"^\| `(\w+)` \|", section, flags=re.M)
    assert len(names) == 7 and [line.split()[0] for line in listed.stdout.splitlines()[1:8]] == names
    assert started.returncode == 0 and (clone / "backprop.py").is_file()
    # the template untouched: every case fails, exit status 1, the report's first line as the README's
    for done in (checked, seeded):
        assert done.returncode == 1, done.stderr
        assert done.stdout.splitlines()[0] == report.splitlines()[0]
    assert seeded.stdout.splitlines()[1].split()[:2] == ["seed", "7"]


def test_the_repl_sessions_run_as_typed(clone: Path) -> None:
    """The lessons' and the explorer's sessions, each line typed into ``python -i``."""
    lesson = "Not quite: the answer is -1.182; you said -0.42: that is one of its 2 terms,"
    sessions = (("The lessons", lesson), ("The explorer: drag an input, watch G and B", ""),
                ("An MLP by layers, as the book draws it", "iris.html"))  # fmt: skip
    for title, shown in sessions:
        (session,) = [body for info, body in _blocks(_section(title)) if ">>> " in body]
        typed = "".join(line[4:] + "\n" for line in session.splitlines() if line.startswith(">>> "))
        done = subprocess.run([sys.executable, "-q", "-i"], input=typed, cwd=clone, env=_env(clone),
                              capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
        assert "Traceback" not in done.stderr, done.stderr
        assert shown in done.stdout
    assert (clone / "step.svg").is_file() and (clone / "z.html").is_file()
    assert (clone / "iris_layers.svg").is_file() and (clone / "iris.html").is_file()


@pytest.mark.slow
def test_the_command_block(clone: Path) -> None:
    """Every line of "The command", in order, after ``micrograph exercise start backprop`` (its last line
    checks the file that writes: the template, which fails)."""
    assert _run("micrograph exercise start backprop", clone).returncode == 0
    for command in _commands(_section("The command")):
        done = _run(command, clone)
        expected = 1 if command.startswith("micrograph exercise check") else 0
        assert done.returncode == expected, f"{command}: {done.stderr}"
        if "--out" in command:
            out = clone / shlex.split(command.split("--out", 1)[1])[0]
            assert out.exists() and (out.is_file() or any(out.iterdir())), command


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def _build_or_skip(command: str, clone: Path) -> subprocess.CompletedProcess[str]:
    done = _run(command, clone, timeout=1200)
    unavailable = ("needs 'npm'", "needs npm", "npm ci failed", "downloading the pinned wheels failed")
    if done.returncode == 2 and any(u in done.stderr for u in unavailable):
        if os.environ.get("CI"):
            pytest.fail(f"{command}: {done.stderr.strip()} (CI needs npm and the registries)")
        pytest.skip(f"the site cannot be built here: {done.stderr.strip().splitlines()[-1]}")
    return done


@pytest.mark.slow
def test_the_site_as_the_readme_builds_and_serves_it(clone: Path, browser: Any) -> None:
    build, serve = _inline("micrograph site ")
    done = _build_or_skip(build, clone)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("wrote site-out: ")
    out = clone / "site-out"
    assert (out / "vendor.js").stat().st_size > 100_000  # esbuild's bundle, in the site
    assert missing_files(out) == []
    assert [p.name for p in clone.iterdir() if p.name.startswith(".site-out")] == []  # nothing left beside
    again = _run(build + " --force", clone, timeout=1200)  # make site's recipe
    assert again.returncode == 0, again.stderr
    assert (out / "vendor.js").is_file()

    address = re.search(r"serves it at (http://127\.0\.0\.1:(\d+)/)", README)
    assert address is not None
    if not _port_free(int(address.group(2))):  # someone else's server: the page is served from here
        print(f"\nport {address.group(2)} is in use: {serve} not run, the site served by Python")
        with served(out) as url:
            _open_ready(browser, url)
        return
    server = subprocess.Popen(_argv(serve), cwd=clone, env=_env(clone), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        _wait_for(address.group(1), server)
        _open_ready(browser, address.group(1))
    finally:
        server.send_signal(signal.SIGINT)  # Ctrl-C, as the command says
        stdout, stderr = server.communicate(timeout=30)
    assert server.returncode == 0, stderr
    assert stdout == f"serving site-out at {address.group(1)} (Ctrl-C stops)\n"


def _wait_for(url: str, server: subprocess.Popen[str], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while True:
        assert server.poll() is None, f"the server stopped: {server.communicate()[1]}"
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _open_ready(browser: Any, url: str) -> None:
    """The page at ``url`` in chromium, every request off the server blocked, until it is ready."""
    pages = OfflinePages(browser, url)
    context, page, seconds = pages.open()
    try:
        print(f"\nthe README's site ready in {seconds:.1f} s")
        assert str(page.locator("#status").text_content()).startswith("Ready: micrograph ")
    finally:
        context.close()
    assert pages.blocked == [] and pages.errors == []
