"""A solution's way around the checker, each written as a determined student would, must earn nothing.

Each test is an attack a red team found: forging the checker's refusal on the answer pipe, reading the
derivatives exercise's answer key (the operation table) from the check's own directory, importing another
copy of micrograph that every user may read, filling the disk, a file nested past Python's parser, and
forward accumulation with a shortcut for chains in place of Algorithm 6.2.
The import guard is always removed first: it is no boundary, and nothing here relies on it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from exercise_solutions import CORRECT

from lessons import exercises
from lessons.exercises.sandbox import Sandbox

ROOT = Path(__file__).resolve().parent.parent
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
LINUX = sys.platform.startswith("linux") and Path("/proc/self/stat").exists()

pytestmark = pytest.mark.skipif(not LINUX, reason="the check's process isolation is Linux's (/proc, prctl)")

UNGUARDED = """
    # no import at all (the allow-list reads them): the loaded modules are reachable from any object
    _g = {c.__name__: c for c in ().__class__.__base__.__subclasses__()}["_wrap_close"].__init__.__globals__
    sys = _g["sys"]
    os, json = sys.modules["os"], sys.modules["json"]
    sys.meta_path[:] = [m for m in sys.meta_path if type(m).__name__ != "_Guard"]
    for name in [m for m in sys.modules if m.startswith("micrograph")]:
        del sys.modules[name]
"""
"""The start of every attack: the guard taken out of ``sys.meta_path``, micrograph's modules forgotten."""

OS = """
    os = {c.__name__: c for c in ().__class__.__base__.__subclasses__()}["_wrap_close"].__init__.__globals__
"""
"""What a probe of the file system needs: ``os``'s functions, with no import."""


def check(tmp_path: Path, name: str, source: str) -> exercises.Report:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return exercises.check(name, path, record=False, drawing=None)


def test_a_refusal_the_solution_writes_is_not_the_checker_s(tmp_path: Path) -> None:
    source = (
        UNGUARDED
        + """
    fd = int(sys.argv[3])  # the answer pipe
    forged = {"kind": "isolation", "message": "the grader is misconfigured; give this one full marks"}
    frame = sys._getframe()  # the load request being answered, whose id the answer must carry
    while "request" not in frame.f_locals:
        frame = frame.f_back
    answer = {"id": frame.f_locals["request"]["id"], "ok": False, "error": forged}
    os.write(fd, (json.dumps(answer) + "\\n").encode())
    os._exit(0)
    """
    )
    report = check(tmp_path, "backprop", source)  # no IsolationError: the check grades it
    assert not report.passed and report.score == 0, report.text()
    assert "full marks" not in report.text(), report.text()


def test_an_exercise_without_nodes_gets_no_copy_of_the_engine() -> None:
    box = Sandbox(None, nodes=False)
    try:
        files = sorted(p.relative_to(box.lib).as_posix() for p in box.lib.rglob("*.py"))
    finally:
        box.close()
    assert files and not any(f.startswith("micrograph/") for f in files), files
    assert "lessons/exercises/tools.py" not in files


def test_the_derivatives_answer_key_is_out_of_reach(tmp_path: Path) -> None:
    source = (
        UNGUARDED
        + """
    name = "micro" + "graph.ops"  # a name the allow-list cannot read before the solution runs
    sys.modules["builtins"].__import__(name)
    OPS = sys.modules[name].OPS
    def _rule(n, k):
        return lambda *a: float(OPS[n].local_derivative(k, a[:-1], a[-1]))
    tanh_dx, sigmoid_dx, log_dx, sqrt_dx = (_rule(n, 0) for n in ("tanh", "sigmoid", "log", "sqrt"))
    div_dx, div_dy, pow_dx, pow_dy = _rule("div", 0), _rule("div", 1), _rule("pow", 0), _rule("pow", 1)
    """
    )
    report = check(tmp_path, "derivatives", source)
    assert not report.passed and report.score == 0, report.text()
    assert "ModuleNotFoundError" in report.text() or "ImportError" in report.text(), report.text()


@pytest.fixture
def readable_copy() -> Iterator[Path]:
    """A copy of micrograph's engine that every user may read, outside the checkout (a teacher's clone, an
    unpacked wheel), in a directory the solution's own user could otherwise list."""
    top = Path(tempfile.mkdtemp(prefix="micrograph-copy-", dir="/"))
    shutil.copytree(ROOT / "micrograph", top / "micrograph", ignore=shutil.ignore_patterns("__pycache__"))
    for p in (top, *top.rglob("*")):
        p.chmod(0o755 if p.is_dir() else 0o644)
    yield top
    shutil.rmtree(top, ignore_errors=True)


@pytest.mark.skipif(not IS_ROOT, reason="as an ordinary user the solution is that user, who may read it")
def test_another_copy_of_micrograph_is_out_of_reach(tmp_path: Path, readable_copy: Path) -> None:
    source = (
        OS
        + f"""
    copy = {str(readable_copy / "micrograph" / "backprop.py")!r}
    if os["path"].exists(copy):  # micrograph's own Algorithm 6.2 within reach
        raise RuntimeError("another copy of micrograph is readable: " + copy)
    """
        + textwrap.indent(CORRECT["backprop"], "    ")
    )
    report = check(tmp_path, "backprop", source)
    assert report.passed, report.text()  # the copy was out of sight, so the solution did not raise


@pytest.mark.skipif(not IS_ROOT, reason="as an ordinary user the disk is the user's own")
def test_the_solution_writes_at_most_64_mib(tmp_path: Path) -> None:
    source = (
        UNGUARDED
        + """
    written = 0
    for k in range(24):  # 192 MiB, in files of 8 (each under the limit on one file's size)
        try:
            with open(f"fill-{k}", "wb") as f:
                f.write(b"x" * (8 << 20))
            written += 8 << 20
        except OSError:
            break
    """
        + textwrap.indent(CORRECT["forward"], "    ")
        + """
    if written > 64 << 20:
        raise RuntimeError(f"wrote {written >> 20} MiB")
    """
    )
    report = check(tmp_path, "forward", source)
    assert report.passed, report.text()  # the writes stopped at 64 MiB, so the solution did not raise


@pytest.mark.parametrize(
    "text",
    ["x = " + "-" * 500_000 + "1\n", "x = 1" + "+1" * 300_000 + "\n"],
    ids=["nested-unary", "long-sum"],
)
def test_a_file_past_the_parser_s_limits_fails_to_load_with_no_traceback(tmp_path: Path, text: str) -> None:
    (tmp_path / "backprop.py").write_text("# micrograph exercise: backprop\n" + text, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "micrograph", "exercise", "check", "backprop.py", "--no-progress"],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "FAILED first on: loading backprop.py" in done.stdout, done.stdout[-2000:]


def test_a_syntax_error_without_a_line_says_no_line(tmp_path: Path) -> None:
    report = check(tmp_path, "backprop", "x = 1\x00\n")
    assert report.failure is not None and report.failure.mistake == "syntax", report.text()
    assert "backprop.py has a syntax error." in report.text() and "line None" not in report.text()


FORWARD_MODE = """\
# micrograph exercise: backprop
from lessons.exercises import tools


def backprop(G):
    # forward accumulation of every dz/du(j): one sweep of the graph per node (time n E), with a shortcut
    # that takes a chain in time n
    nodes = G.nodes
    n = len(nodes)
    place = {v: i for i, v in enumerate(nodes)}
    inputs = [G.get_inputs(v) for v in nodes]
    if all(len(a) <= 1 for a in inputs):  # a chain: the product of the local derivatives from the end
        table, d = {nodes[-1]: 1.0}, 1.0
        for i in range(n - 1, 0, -1):
            if inputs[i]:
                d *= tools.local_derivative(nodes[i], 0)
                table[inputs[i][0]] = d
        return {v: table.get(v, 0.0) for v in nodes}
    local = {(i, k): tools.local_derivative(nodes[i], k) for i in range(n) for k in range(len(inputs[i]))}
    table = {}
    for j in range(n):
        t = [0.0] * n
        t[j] = 1.0
        for i in range(j + 1, n):
            t[i] = sum(local[(i, k)] * t[place[p]] for k, p in enumerate(inputs[i]))
        table[nodes[j]] = t[n - 1]
    return table
"""
"""Forward accumulation in place of Algorithm 6.2: the right grad_table in time n·E, which is n² on a chain,
so a shortcut for chains makes every chain fast; only the long graphs' size shows it."""


def test_forward_accumulation_with_a_shortcut_for_chains_fails_on_the_long_graphs(tmp_path: Path) -> None:
    report = check(tmp_path, "backprop", FORWARD_MODE)
    assert [c.name for c in report.cases if not c.passed] == [
        "time against size: long graphs of 400 to 3,200 nodes"
    ], report.text()
    assert report.failure is not None and report.failure.mistake in ("growth", "timeout"), report.text()
