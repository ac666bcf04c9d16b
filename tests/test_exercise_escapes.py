"""A solution's way around the checker, each written as a determined student would, must earn nothing.

Each test is one such attack: forging the checker's refusal on the answer pipe, reading the derivatives
exercise's answer key (the operation table) from the check's own directory, importing another copy of
micrograph that every user may read (a clone, another install), a file at the top of the file system, filling
the disk, a file nested past Python's parser, forward accumulation in place of Algorithm 6.2 (with a shortcut
for chains, with numpy the exercise refuses, with its smaller calls padded to look linear), and the local
derivatives by the complex step.
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
    [
        "x = " + "-" * 500_000 + "1\n",
        "x = 1" + "+1" * 300_000 + "\n",
        "x = " + "[" * 3000 + "]" * 3000 + "\n",
    ],
    ids=["nested-unary", "long-sum", "nested-brackets"],
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
    assert max(map(len, done.stdout.splitlines())) <= 200, done.stdout[-2000:]  # no line of it quoted


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


VECTOR_FORWARD = """\
# micrograph exercise: backprop
# Forward-mode accumulation (every dz/du(j) at once as a vector per node): not Algorithm 6.2.
import collections
from lessons.exercises import tools
np = collections._sys.modules["numpy"]   # loaded by the child because this text names numpy


def backprop(G):
    nodes = G.nodes
    n = len(nodes)
    idx = {v: i for i, v in enumerate(nodes)}
    rows = []                     # rows[i][j] = du(i)/du(j), j <= i, pushed FORWARD from the leaves
    for i, v in enumerate(nodes):
        r = np.zeros(i + 1)
        r[i] = 1.0
        for k, p in enumerate(v.inputs):
            q = rows[idx[p]]
            r[: len(q)] += tools.local_derivative(v, k) * q
        rows.append(r)
    z = rows[-1]
    return {v: float(z[j]) for j, v in enumerate(nodes)}
"""
"""Forward accumulation with numpy, which backprop does not allow but the child once loaded for any source
that named it: n² work, vectorised below the growth case's notice."""

PADDED = """\
# micrograph exercise: backprop
# Forward-mode accumulation, one sweep per node (time n^2), padded so that its time looks linear.
import collections
from lessons.exercises import tools
_time = collections._sys.modules["time"]


def backprop(G):
    start = _time.process_time()
    nodes = G.nodes
    n = len(nodes)
    idx = {v: i for i, v in enumerate(nodes)}
    parents = [[(idx[p], tools.local_derivative(v, k)) for k, p in enumerate(v.inputs)] for v in nodes]
    table = {}
    for j in range(n):                       # seed u(j), push d/du(j) forward through G
        d = [0.0] * n
        d[j] = 1.0
        for i in range(j + 1, n):
            s = 0.0
            for p, l in parents[i]:
                s += l * d[p]
            d[i] = s
        table[nodes[j]] = d[n - 1]
    # pad: make the CPU time proportional to n (the largest graph comes first)
    global SLOPE
    spent = _time.process_time() - start
    if n >= 3200:
        SLOPE = spent / n
    while "SLOPE" in globals() and _time.process_time() - start < SLOPE * n:
        pass
    return table
"""
"""Forward accumulation in pure Python, its smaller calls padded so that its time looks linear."""

COMPLEX_STEP = """\
# micrograph exercise: derivatives
import math
H = 1e-30
def d(f, x): return (f(complex(x, H))).imag / H
def tanh(z): e = math.e ** (2 * z); return (e - 1) / (e + 1)
def sig(z): return 1 / (1 + math.e ** (-z))
def tanh_dx(x, out): return d(tanh, x)
def sigmoid_dx(x, out): return d(sig, x)
def div_dx(x, y, out): return d(lambda t: t / y, x)
def div_dy(x, y, out): return d(lambda t: x / t, y)
def pow_dx(x, y, out): return d(lambda t: t ** y, x)
def pow_dy(x, y, out): return d(lambda t: x ** t, y)
def log_dx(x, out): return d(lambda t: complex(math.log(abs(t)), math.atan2(t.imag, t.real)), x)
def sqrt_dx(x, out): return d(lambda t: t ** 0.5, x)
"""
"""The local derivatives by the complex step, f(x + ih) / h, with no import: not their rules."""


@pytest.mark.parametrize(
    ("source", "says"),
    [(VECTOR_FORWARD, "KeyError: 'numpy'"), (PADDED, "it took")],
    ids=["numpy", "padded"],
)
def test_forward_accumulation_fails_vectorised_or_padded(tmp_path: Path, source: str, says: str) -> None:
    report = check(tmp_path, "backprop", source)
    assert not report.passed and says in " ".join(report.text().split()), report.text()


def test_the_complex_step_is_refused_before_it_runs(tmp_path: Path) -> None:
    report = check(tmp_path, "derivatives", COMPLEX_STEP)
    said = " ".join(report.text().split())
    assert report.score == 0 and "the complex step (complex numbers) is not allowed" in said, said


def test_every_site_packages_is_covered_and_numpy_kept_only_where_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Other installs of micrograph, other derivative engines (sympy) and array libraries (torch) are out
    of sight with every site-packages; numpy's own directory is put back where the exercise allows it."""
    from lessons.exercises import sandbox

    site = tmp_path / "prefix" / "lib" / "python3.99" / "site-packages"
    for name in ("micrograph", "numpy", "sympy", "torch"):
        (site / name).mkdir(parents=True)
    monkeypatch.setattr(sandbox.sys, "base_prefix", str(tmp_path / "prefix"))
    for allowed in (False, True):
        box = Sandbox(None, nodes=True, numpy=allowed)
        try:
            seen = sandbox.view(box, False, str(site) if allowed else None)
        finally:
            box.close()
        assert str(site.resolve()) in seen["covered"]
        assert [k for k in seen["kept"] if k.startswith(str(site))] == (
            [str(site / "numpy")] if allowed else []
        )


@pytest.mark.skipif(not IS_ROOT, reason="as an ordinary user the files are the user's to read")
def test_a_file_at_the_top_of_the_file_system_reads_as_empty(tmp_path: Path) -> None:
    top = Path(tempfile.mkstemp(prefix="micrograph-top-", dir="/")[1])
    try:
        top.write_text("a platform's secret\n")
        top.chmod(0o644)
        source = (
            OS
            + f"""
    if os["stat"]({str(top)!r}).st_size:
        raise RuntimeError("a file at the top of the file system is readable")
    """
            + textwrap.indent(CORRECT["forward"], "    ")
        )
        report = check(tmp_path, "forward", source)
        assert report.passed, report.text()  # it read as empty, so the solution did not raise
    finally:
        top.unlink()


def test_a_line_too_long_to_parse_safely_is_left_to_the_solution_s_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Python 3.10's parser crashes on a long enough chain (1+1+...+1): the judge never parses one."""
    from lessons.exercises import imports

    allow = imports.Imports.python("anything")
    chain = "x = 1" + "+1" * imports.LONGEST + "\n"
    assert allow.refused("import os\n" + chain.replace("+1" * imports.LONGEST, "+1")) == ("os", 1)

    def parse(source: str) -> None:
        raise AssertionError("parsed in the judge")

    monkeypatch.setattr(imports.ast, "parse", parse)
    assert allow.refused("import os\n" + chain) is None  # the solution's process refuses os when it runs
