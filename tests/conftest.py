"""pytest configuration for micrograph's tests: import paths, the hypothesis profile, catalogue fixtures.

* ``tests/`` is put on ``sys.path`` so that test files (any of them) can write
  ``from catalogue import CATALOGUE`` and ``from strategies import dag_cases`` under any import mode.
* Hypothesis runs a modest number of examples with no deadline (the machine is small and shared). With
  ``CI`` set (continuous integration) the examples are derandomized, so a run is reproducible; locally
  each run draws new ones (``--hypothesis-seed=N`` repeats one); ``HYPOTHESIS_PROFILE=thorough`` runs 500.
* A test that takes an argument named ``catalogue_case`` runs once per catalogue case, with the case's
  name as its id.
* Each test's report of its call is kept on it (``item.rep_call``), for fixtures that outlive a test.
* The built site's fixtures (tests/site_page.py): the site built once a run, served and opened once a module.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

_TESTS = str(Path(__file__).resolve().parent)
_ROOT = str(Path(__file__).resolve().parent.parent)
for _path in (_ROOT, _TESTS):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from catalogue import CATALOGUE  # noqa: E402
from site_page import page, shared_page, site_dir, url  # noqa: E402, F401  (the built site's fixtures)

settings.register_profile("default", max_examples=30, deadline=None)
settings.register_profile("ci", max_examples=30, deadline=None, derandomize=True, print_blob=True)
settings.register_profile("thorough", max_examples=500, deadline=None)
# CI (CI=true, as .ci/run is run) draws the same examples every run; elsewhere each run draws new ones.
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default"))


def pytest_generate_tests(metafunc):  # type: ignore[no-untyped-def]
    if "catalogue_case" in metafunc.fixturenames:
        metafunc.parametrize("catalogue_case", CATALOGUE, ids=[c.name for c in CATALOGUE])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[pytest.TestReport]:
    """Each phase's report kept on the test as ``rep_setup``, ``rep_call``, ``rep_teardown``: a fixture
    shared by a module's tests (tests/test_site.py's page) starts afresh after a test failed in it."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


def run_micrograph(
    *argv: str, cwd: Path | str = _ROOT, timeout: float = 300, stdin: str | None = ""
) -> subprocess.CompletedProcess[str]:
    """``python -m micrograph ARGV...`` in ``cwd``, importing this checkout; its output captured as text,
    ``stdin`` its standard input (empty by default; None: this process's)."""
    env = dict(os.environ, PYTHONPATH=_ROOT)
    return subprocess.run([sys.executable, "-m", "micrograph", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, input=stdin)  # fmt: skip


CHROMIUM = "/usr/bin/chromium"
"""Debian's chromium: Playwright drives it (it cannot download its own browsers here)."""

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""The one set of launch options for every browser test: headless, no network of chromium's own."""


CHROMIUM_AND_DOT = [
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"chromium is not installed at {CHROMIUM}"),
    pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed"),
]
"""The marks of a test module that opens a drawing's page in chromium: skipped without chromium or without
Graphviz's dot (a module's ``pytestmark``, with its own marks added)."""


def launch_chromium(playwright: Any) -> Any:
    """Launch Debian's chromium through a started ``sync_playwright()`` with :data:`CHROMIUM_ARGS`.

    Skips the calling test when chromium is not installed.
    """
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"chromium is not installed at {CHROMIUM}: sudo apt-get install chromium")
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


def open_watched(browser: Any, path: Path) -> tuple[Any, dict[str, list[str]]]:
    """A page from disk opened in chromium, what it does recorded: ``dialogs`` (each dismissed: a script
    that ran would open one), ``requests`` (every address it asked for) and ``errors`` (script errors and
    errors written to the console)."""
    opened = browser.new_page(viewport={"width": 1400, "height": 900})
    events: dict[str, list[str]] = {"dialogs": [], "requests": [], "errors": []}

    def on_dialog(d: Any) -> None:
        events["dialogs"].append(d.message)
        d.dismiss()

    opened.on("dialog", on_dialog)
    opened.on("request", lambda r: events["requests"].append(r.url))
    opened.on("pageerror", lambda e: events["errors"].append(str(e)))
    opened.on("console", lambda m: events["errors"].append(m.text) if m.type == "error" else None)
    opened.goto(path.resolve().as_uri())
    return opened, events


@pytest.fixture(name="launch_chromium")
def _launch_chromium_fixture() -> Callable[[Any], Any]:
    """:func:`launch_chromium`, for a test that starts Playwright itself."""
    return launch_chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless chromium shared by one test module (skipped without chromium or Playwright)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


def solution_processes() -> list[int]:
    """Processes of a student's solution still alive below this test run: those carrying a check's token in
    their environment, or running as a check's own user id (2**30 and above, where the judge is root). This
    process is a subreaper (:func:`_subreaper`), so whatever a check left comes back below it."""
    from lessons.exercises import processes

    procs = processes.scan()
    me = os.getpid()

    def below_me(pid: int) -> bool:
        seen = set()
        while pid in procs and pid not in seen:
            seen.add(pid)
            pid = procs[pid].ppid
            if pid == me:
                return True
        return False

    found = []
    for p in procs.values():
        if p.state == "Z" or p.pid == me or not below_me(p.pid):
            continue
        try:
            with open(f"/proc/{p.pid}/environ", "rb") as f:
                marked = any(e.startswith(b"MICROGRAPH_CHECK=") for e in f.read().split(b"\0"))
        except OSError:
            marked = False
        try:
            uid = os.stat(f"/proc/{p.pid}").st_uid
        except OSError:
            continue
        if marked or uid >= 1 << 30:
            found.append(p.pid)
    return found


@pytest.fixture(autouse=True, scope="session")
def _subreaper() -> None:
    """This test run adopts every orphan of the processes it starts (Linux's PR_SET_CHILD_SUBREAPER), so a
    solution's process that escaped its check is found below it, and other test runs' are not."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(36, ctypes.c_ulong(1), 0, 0, 0)
    except (OSError, AttributeError):
        pass


@pytest.fixture(autouse=True)
def nothing_of_a_solution_outlives_its_check(request: pytest.FixtureRequest) -> Iterator[None]:
    """After every test of the exercises: no process of a solution is left (each is killed if one is)."""
    yield
    if "exercise" not in request.node.path.name or not os.path.exists("/proc/self/stat"):
        return
    deadline = time.monotonic() + 5
    left = solution_processes()
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = solution_processes()
    for pid in left:  # ended, so one failure does not spill into the next test
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    assert not left, f"processes of a solution outlived its check: {left}"
