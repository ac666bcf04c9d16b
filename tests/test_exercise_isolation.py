"""The wall between the judge and the student's solution is the operating system's, not the solution's own.

Each test is a determined student's attack, written as a solution file and checked as ``micrograph exercise
check`` does: the import guard removed, the engine's private helpers, the judge's descriptors through
``/proc``, processes that try to outlive the check (a ``setsid`` daemon, a fork bomb, files in ``/dev/shm``),
a submission that is a link to a file only root may read. They run as root (the solution then runs as a user
of its own), as an ordinary user, and as root without CAP_SETUID and CAP_SETGID (a container started with
``--cap-drop ALL``), where the check must refuse to grade. After every test no process of a solution is
left (``conftest.py`` asserts it for every exercise test).
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import solution_processes
from exercise_solutions import CORRECT

from lessons import exercises
from lessons.exercises import sandbox

ROOT = Path(__file__).resolve().parent.parent
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
LINUX = sys.platform.startswith("linux") and Path("/proc/self/stat").exists()
SETPRIV = shutil.which("setpriv")
NOBODY = 65534

pytestmark = pytest.mark.skipif(not LINUX, reason="the check's process isolation is Linux's (/proc, prctl)")


def check(tmp_path: Path, name: str, source: str, **kw: object) -> exercises.Report:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return exercises.check(name, path, record=False, drawing=None, **kw)  # type: ignore[arg-type]


def cli(
    tmp_path: Path,
    *argv: str,
    prefix: tuple[str, ...] = (),
    python: tuple[str, str] | None = None,
    timeout: float = 240,
) -> subprocess.CompletedProcess[str]:
    """``python -m micrograph ARGV`` in ``tmp_path`` (optionally under ``setpriv ...``), importing this
    checkout; ``python`` is (an interpreter, the site-packages it needs) other than this one's."""
    executable, site = python or (sys.executable, "")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), site) if p))
    return subprocess.run(
        [*prefix, executable, "-m", "micrograph", *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# --- what the child may import ----------------------------------------------------------------------------


def test_the_private_copy_of_the_engine_has_no_algorithm() -> None:
    for relative, names in sandbox.STRIPPED.items():
        text = sandbox.stripped_source(relative)
        for name in names:
            assert f"def {name.rsplit('.', 1)[-1]}(" not in text, (relative, name)
    engine = sandbox.stripped_source("micrograph/engine.py")
    assert "exec(" not in engine and "class Value" in engine
    # the copy is the node, its operators (+, * and relu compiled by compile_nodes, the one exec: a node's
    # construction, no walk over a graph) and the operation table: it imports none of the modules that hold
    # the algorithms over a graph (the order, the pushes and their compiled loop, pickling's walk)
    copied = {Path(r).stem for r in [*sandbox.STRIPPED, *sandbox.COPIED] if r.startswith("micrograph/")}
    assert copied == {"engine", "ops", "compile_nodes", "meta", "lecture", "errors", "memory"}
    texts = {r: sandbox.stripped_source(r) for r in sandbox.STRIPPED}
    texts |= {
        r: (ROOT / r).read_text(encoding="utf-8") for r in sandbox.COPIED if r.startswith("micrograph/")
    }
    for relative, text in texts.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.module == "micrograph":
                assert {a.name for a in node.names} <= copied, relative
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("micrograph."):
                assert node.module.split(".")[1] in copied, (relative, node.module)
        assert "exec(" not in text or relative == "micrograph/compile_nodes.py", relative
        for name in ("topological_order", "backward", "push_to_parents", "push_loop", "reduce_node"):
            assert f"def {name}(" not in text, (relative, name)


def test_the_private_copy_still_builds_and_differentiates_nodes(tmp_path: Path) -> None:
    box = sandbox.Sandbox(None)
    try:
        code = (
            "import sys; sys.path.insert(0, sys.argv[1]);"
            "from micrograph.engine import Value; from micrograph.ops import OPS;"
            "z = (Value(0.5) * Value(2.0)).tanh();"
            "print(z.data, OPS['tanh'].local_derivative(0, (1.0,), z.data), hasattr(Value, 'backward'))"
        )
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", code, str(box.lib)], capture_output=True, text=True
        )
    finally:
        box.close()
    assert done.returncode == 0, done.stderr
    data, derivative, has_backward = done.stdout.split()
    assert float(data) == pytest.approx(0.7615941559557649)
    assert float(derivative) == pytest.approx(1 - 0.7615941559557649**2)
    assert has_backward == "False"
    assert not box.path.exists()


@pytest.mark.parametrize(
    "attack",
    [
        # the import guard removed, micrograph's modules forgotten: the package's path is the private copy
        """
        import sys
        sys.meta_path[:] = [m for m in sys.meta_path if type(m).__name__ != "_Guard"]
        for k in list(sys.modules):
            if k.startswith("micrograph"):
                del sys.modules[k]
        from micrograph.backprop import backprop
        """,
        # the engine's own push loop and search, reached through the modules that hold them
        """
        import micrograph.push as push
        def backprop(G):
            push.backward(G.output)
            return {v: v.grad for v in G.nodes}
        """,
        # ... or through the node's module, which imported them
        """
        import micrograph.engine as engine
        def backprop(G):
            engine.push.backward(G.output)
            return {v: v.grad for v in G.nodes}
        """,
        # Value.__reduce__ walks the graph in topological order
        """
        def backprop(G):
            G.output.__reduce__()
            return {v: 0.0 for v in G.nodes}
        """,
        # site-packages and the checkout put back on the path
        f"""
        import sys
        sys.path[:0] = [{str(ROOT)!r}]
        for k in list(sys.modules):
            if k.startswith("micrograph"):
                del sys.modules[k]
        sys.meta_path[:] = [m for m in sys.meta_path if type(m).__name__ != "_Guard"]
        import micrograph.backprop
        def backprop(G):
            return micrograph.backprop.backprop(G)
        """,
    ],
    ids=["guard-removed", "push-module", "engine-push-attribute", "reduce-walk", "checkout-on-path"],
)
def test_the_engine_s_algorithms_are_out_of_reach(tmp_path: Path, attack: str) -> None:
    if "ROOT" in attack or str(ROOT) in attack:
        if not IS_ROOT:
            pytest.skip("as an ordinary user the solution runs as that user, who may read the checkout")
        hidden = (
            tmp_path / "hidden"
        )  # micrograph installed where others may not read it, as setup.sh makes it
        shutil.copytree(ROOT / "micrograph", hidden / "micrograph")
        hidden.chmod(0o700)
        attack = attack.replace(repr(str(ROOT)), repr(str(hidden)))
    report = check(tmp_path, "backprop", attack)
    assert not report.passed and report.score == 0, report.text()


def test_topo_cannot_use_the_engine_s_search(tmp_path: Path) -> None:
    source = """
        import micrograph.order as order
        def topological_order(z):
            return order.topological_order([z])
    """
    report = check(tmp_path, "topo", source)
    assert not report.passed and report.score == 0
    assert "is not available while your code is checked" in report.text()


# --- the judge's process is out of reach ----------------------------------------------------------------

FORGE = """
    import collections  # the allow-list refuses os and time by name; what is loaded stays reachable
    os, time, json = (collections._sys.modules[m] for m in ("os", "time", "json"))
    def backprop(G):
        judge = os.getppid()
        for fd in range(0, 8):
            try:
                with open(f"/proc/{judge}/fd/{fd}", "w") as f:
                    f.write(json.dumps({"score": 12.0, "passed": True}) + "\\n")
            except OSError:
                pass
        return {}
"""


def test_the_judge_s_descriptors_cannot_be_opened(tmp_path: Path) -> None:
    (tmp_path / "backprop.py").write_text(textwrap.dedent(FORGE), encoding="utf-8")
    done = cli(tmp_path, "exercise", "check", "backprop.py", "--format", "gradescope", "--no-progress")
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)  # the whole output is the judge's one JSON document
    assert data["score"] == 0, data


AS_NOBODY = (
    SETPRIV or "setpriv",
    f"--reuid={NOBODY}",
    f"--regid={NOBODY}",
    "--clear-groups",
    "--inh-caps=-all",
    "--bounding-set=-all",
)
"""An ordinary user, as a process of that user has it: no capability at all, none to gain by exec."""


_PROBE = "import graphviz, lessons.exercises, subprocess, sys; subprocess.run([sys.executable, '-c', ''])"


def _ordinary_python() -> tuple[str, str] | None:
    """An interpreter of this Python version that an ordinary user may run, with the site-packages that
    hold micrograph's requirements (this one's may live in root's home, which others cannot enter)."""
    import sysconfig

    site = sysconfig.get_paths()["purelib"]
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    for executable in (sys.executable, f"/usr/bin/python{version}"):
        if not os.path.exists(executable):
            continue
        probe = subprocess.run(
            [*AS_NOBODY, executable, "-c", _PROBE],
            env=dict(os.environ, PYTHONPATH=os.pathsep.join((str(ROOT), site))),
            cwd="/",
            capture_output=True,
        )
        if probe.returncode == 0:
            return executable, site
    return None


@pytest.mark.skipif(not (IS_ROOT and SETPRIV), reason="needs root and setpriv to become an ordinary user")
@pytest.mark.slow
def test_as_an_ordinary_user_the_judge_is_out_of_reach_and_nothing_outlives_it(
    tmp_path: Path, shared: Path
) -> None:
    tmp_path = shared
    python = _ordinary_python()
    if python is None:
        pytest.skip(f"no Python {sys.version_info[0]}.{sys.version_info[1]} that the user nobody may run")
    (tmp_path / "backprop.py").write_text(textwrap.dedent(FORGE), encoding="utf-8")
    argv = ("exercise", "check", "--no-progress")
    done = cli(tmp_path, *argv, "backprop.py", "--format", "gradescope", prefix=AS_NOBODY, python=python)
    if subprocess.run([*AS_NOBODY, "unshare", "--user", "true"], check=False).returncode != 0:
        # no user namespaces for the user here: a result for grading is refused, with one line
        assert done.returncode == 2 and "this check's result is for grading" in done.stderr, done.stderr
    else:
        assert done.returncode == 1, done.stderr
        assert json.loads(done.stdout)["score"] == 0
    (tmp_path / "forward.py").write_text(CORRECT["forward"], encoding="utf-8")
    done = cli(tmp_path, *argv, "forward.py", prefix=AS_NOBODY, python=python)
    assert done.returncode == 0, done.stdout + done.stderr
    # Enclosed, the solution reaches nothing the test can see (no file, no network): its daemons say who they
    # are on its output, and must be gone once the check is.
    assert TOUCH in DAEMON
    (tmp_path / "forward.py").write_text(textwrap.dedent(DAEMON.replace(TOUCH, SAY)), encoding="utf-8")
    done = cli(tmp_path, *argv, "forward.py", prefix=AS_NOBODY, python=python)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"alive \d+", done.stdout), done.stdout  # the daemons ran (pids of their namespace)
    time.sleep(0.3)
    left = [p.name for p in Path("/proc").iterdir() if p.name.isdigit() and _uid(p) == NOBODY]
    assert not left, f"processes of the solution's user outlived the check: {left}"


def _uid(proc: Path) -> int | None:
    try:
        return proc.stat().st_uid
    except OSError:
        return None


TOUCH = """            with open("MARK", "a"):
                os.utime("MARK")
"""
SAY = """            print("alive", os.getpid(), flush=True)
"""


def test_root_without_setuid_refuses_to_grade(tmp_path: Path) -> None:
    (tmp_path / "forward.py").write_text(CORRECT["forward"], encoding="utf-8")
    no_setuid = (SETPRIV, "--bounding-set", "-setuid,-setgid", "--inh-caps", "-all")
    done = cli(tmp_path, "exercise", "check", "forward.py", "--no-progress", prefix=no_setuid)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "root could not become an unprivileged user" in lines[0], done.stderr
    assert "Traceback" not in done.stderr and "PASS" not in done.stdout


# --- nothing outlives the check -------------------------------------------------------------------------

DAEMON = CORRECT["forward"] + textwrap.dedent("""
    import collections  # the allow-list refuses os and time by name; what is loaded stays reachable
    os, time, json = (collections._sys.modules[m] for m in ("os", "time", "json"))
    def touch_forever():
        try:
            while True:
                with open("MARK", "a"):
                    os.utime("MARK")
                time.sleep(0.05)
        finally:
            os._exit(0)
    def daemon():
        if os.fork() == 0:  # a daemon: its own session, its parent gone, so it is re-parented
            os.setsid()
            if os.fork() == 0:
                touch_forever()
            os._exit(0)
    daemon()  # while the solution loads
    right, started = forward, []
    def forward(G, x):
        if not started:  # and in its first case
            started.append(daemon())
        if os.fork() == 0:  # a child of this case that simply stays
            touch_forever()
        time.sleep(0.2)
        return right(G, x)
""")


@pytest.fixture
def shared() -> Iterator[Path]:
    """A directory every user may write in (the solution may run as a user of its own), holding ``alive``:
    a file of this process's user that anyone may touch (so the check's sweep of the solution's own files
    leaves it), dated in the past."""
    path = Path(tempfile.mkdtemp(prefix="micrograph-test-"))
    path.chmod(0o777)
    mark = path / "alive"
    mark.touch()
    mark.chmod(0o666)
    os.utime(mark, (0, 0))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _sessions_while(run: Callable[[], exercises.Report]) -> tuple[exercises.Report, int]:
    """``run()``'s report, and how many sessions the processes of a solution seen alive while it ran had
    (the solution's files and temporary directories are out of the test's reach: its processes are not)."""
    sessions: set[int] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            for pid in solution_processes():
                try:
                    sessions.add(os.getsid(pid))
                except OSError:
                    pass
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        return run(), len(sessions)
    finally:
        done.set()
        watcher.join()


@pytest.mark.slow  # seconds: run by make test-slow (and CI), keeping make test within minutes
def test_daemons_and_setsid_grandchildren_are_killed(tmp_path: Path) -> None:
    report, sessions = _sessions_while(lambda: check(tmp_path, "forward", DAEMON))
    assert report.passed, report.text()  # a solution may start processes; they just do not outlive it
    assert sessions >= 2, sessions  # the daemons ran, each in a session of its own
    time.sleep(0.5)
    assert solution_processes() == []


@pytest.mark.slow
def test_a_fork_bomb_is_contained(tmp_path: Path) -> None:
    source = """
        import collections  # the allow-list refuses os and time by name; what is loaded stays reachable
        os, time, json = (collections._sys.modules[m] for m in ("os", "time", "json"))
        def backprop(G):
            while True:
                try:
                    os.fork()
                except OSError:
                    pass
    """
    report = check(tmp_path, "backprop", source, time_limit=0.5, budget=4.0)
    assert not report.passed and report.score == 0


@pytest.mark.slow
def test_memory_counts_over_the_whole_tree(tmp_path: Path) -> None:
    source = """
        import collections  # the allow-list refuses os and time by name; what is loaded stays reachable
        os, time, json = (collections._sys.modules[m] for m in ("os", "time", "json"))
        def backprop(G):
            done_r, done_w = os.pipe()
            for _ in range(3):
                if os.fork() == 0:
                    block = bytearray(150 << 20)
                    for i in range(0, len(block), 4096):
                        block[i] = 1
                    os.write(done_w, b"1")  # its memory is in use: the parent may start to compute
                    time.sleep(30)
                    os._exit(0)
            for _ in range(3):  # no CPU time of the parent's while the children fill their memory
                os.read(done_r, 1)
            x = 0
            while True:
                x += 1
    """
    report = check(tmp_path, "backprop", source, memory_limit=256 << 20, time_limit=3.0)
    assert report.failure is not None and report.failure.mistake == "memory", report.text()


@pytest.mark.skipif(not IS_ROOT, reason="the shared temporary directories are swept for a check's own user")
def test_files_left_in_dev_shm_and_tmp_are_removed(tmp_path: Path) -> None:
    source = """
        import collections  # the allow-list refuses os and time by name; what is loaded stays reachable
        os, time, json = (collections._sys.modules[m] for m in ("os", "time", "json"))
        for top in ("/dev/shm", "/tmp"):
            with open(os.path.join(top, f"left-{os.getuid()}"), "wb") as f:
                f.write(b"x" * (1 << 20))
        def forward(G, x):
            return [0.0] * len(G.nodes)
    """
    before = {p.name for top in ("/dev/shm", "/tmp") for p in Path(top).iterdir()}
    check(tmp_path, "forward", source)
    after = {p.name for top in ("/dev/shm", "/tmp") for p in Path(top).iterdir()}
    assert not {n for n in after - before if n.startswith("left-")}


def test_sigterm_kills_the_solution_and_prints_the_cases_done(tmp_path: Path) -> None:
    source = """
        import collections  # the allow-list refuses os and time by name; what is loaded stays reachable
        os, time, json = (collections._sys.modules[m] for m in ("os", "time", "json"))
        def backprop(G):
            if len(G.nodes) > 3:
                while True:
                    pass
            return {v: 1.0 for v in G.nodes}
    """
    (tmp_path / "backprop.py").write_text(textwrap.dedent(source), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-m", "micrograph", "exercise", "check", "backprop.py", "--no-progress"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(2.5)  # a case or two judged, the next one spinning
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1, out + err
    assert "Traceback" not in err
    rows = [line for line in out.splitlines() if line.startswith(("  FAIL", "  PASS"))]
    assert len(rows) == len(list(exercises.judges.cases("backprop"))), out  # every case listed
    assert "[not-run]" in out and "Drawing of the failure" in out


# --- the submission itself ------------------------------------------------------------------------------


def test_a_submission_that_is_a_symlink_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the answer key: 42\n", encoding="utf-8")
    secret.chmod(0o600)
    (tmp_path / "backprop.py").symlink_to(secret)
    done = cli(tmp_path, "exercise", "check", "backprop.py", "--format", "gradescope", "--no-progress")
    assert done.returncode == 2
    assert "answer key" not in done.stdout + done.stderr
    assert (
        done.stderr.strip()
        == "micrograph: error: backprop.py is a symlink; the check reads only a file itself"
    )
    with pytest.raises(FileNotFoundError, match="symlink"):
        exercises.check("backprop", tmp_path / "backprop.py", record=False)
