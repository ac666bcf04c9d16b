"""Where the check runs as root, the solution sees no file of micrograph's and leaves nothing behind.

The solution runs as a user of its own, which cannot read what only root may; these tests are about what
every user may read or write: the checkout (the engine's algorithms, the judges, the tests' solutions, the
git history), the shared temporary directories and the System V IPC objects. The solution's own mount and
IPC namespaces (:mod:`lessons.exercises.enclosure`) cover the first and end the others with it; where they
cannot be made and micrograph's files are readable by others, the check refuses to grade.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from exercise_solutions import CORRECT

from lessons import exercises
from lessons.exercises import sandbox

ROOT = Path(__file__).resolve().parent.parent
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
SETPRIV = shutil.which("setpriv")

pytestmark = pytest.mark.skipif(
    not (IS_ROOT and sys.platform.startswith("linux")), reason="the solution runs as its own user as root"
)

PEEK = """
    import collections  # the allow-list refuses os by name; what is loaded stays reachable
    os = collections._sys.modules["os"]
    SEEN = []
    for path in PATHS:
        try:
            with open(path, "rb") as f:
                SEEN.append((path, len(f.read())))
        except OSError as e:
            pass
    if SEEN:
        raise RuntimeError(f"read {SEEN}")
"""


def _check(tmp_path: Path, name: str, source: str) -> exercises.Report:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return exercises.check(name, path, record=False, drawing=None)


def test_micrograph_s_files_are_out_of_the_solution_s_sight(tmp_path: Path) -> None:
    """The checkout's own files, readable by every user, cannot be opened by the solution."""
    paths = [ROOT / "micrograph" / "order.py", ROOT / "lessons" / "exercises" / "answers.py"]
    paths += [ROOT / "setup.cfg"]
    paths += [ROOT / ".git" / "HEAD"] if (ROOT / ".git" / "HEAD").is_file() else []
    assert all(p.is_file() for p in paths)
    source = f"PATHS = {[str(p) for p in paths]!r}\n" + textwrap.dedent(PEEK) + CORRECT["forward"]
    report = _check(tmp_path, "forward", source)
    assert report.passed, report.text()


def test_the_real_engine_imported_from_the_checkout_is_not_there(tmp_path: Path) -> None:
    source = f"""
        from collections import _sys as sys  # the allow-list refuses sys by name
        sys.meta_path[:] = [m for m in sys.meta_path if type(m).__name__ != "_Guard"]
        for k in list(sys.modules):
            if k.startswith("micrograph"):
                del sys.modules[k]
        sys.path.insert(0, {str(ROOT)!r})
        import micrograph.order
        def topological_order(z):
            return micrograph.order.topological_order([z])
    """
    report = _check(tmp_path, "topo", source)
    assert not report.passed and report.score == 0, report.text()
    assert report.failure is not None and report.failure.mistake == "load", report.text()


LEAVE = """
    import collections  # the allow-list refuses os and ctypes by name; what is loaded stays reachable
    os = collections._sys.modules["os"]
    ctypes = collections._sys.modules["builtins"].__import__("ctyp" + "es")
    wrote = []
    for top in ("/run/lock", "/var/tmp", "/dev/shm", "/tmp"):
        try:
            with open(os.path.join(top, f"left-{os.getuid()}"), "w") as f:
                f.write("x")
            wrote.append(top)
        except OSError:  # out of sight, or read-only: nothing can be left there
            pass
    assert "/dev/shm" in wrote  # a private one, gone with the namespace
    libc = ctypes.CDLL(None)
    IPC_CREAT = 0o1000
    # refused: memory no process's resident size would show (the enclosure's seccomp filter)
    assert libc.shmget(KEY, 4096, IPC_CREAT | 0o666) == -1 and libc.msgget(KEY, IPC_CREAT | 0o666) == -1
"""


def _ipc(kind: str) -> set[int]:
    """The keys of the System V objects of ``kind`` (shm, msg, sem) that the machine holds now."""
    lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
    return {int(line.split()[0]) for line in lines if line.split()}


def test_files_and_ipc_objects_the_solution_leaves_end_with_it(tmp_path: Path) -> None:
    key = 0x6D670000 + os.getpid() % 0xFFFF
    source = f"KEY = {key}\n" + textwrap.dedent(LEAVE) + CORRECT["forward"]
    tops = ("/run/lock", "/var/tmp", "/dev/shm", "/tmp")
    before = {(top, p.name) for top in tops if Path(top).is_dir() for p in Path(top).iterdir()}
    report = _check(tmp_path, "forward", source)
    assert report.passed, report.text()  # the files were written and the objects made: no assertion failed
    after = {(top, p.name) for top in tops if Path(top).is_dir() for p in Path(top).iterdir()}
    assert not {n for n in after - before if n[1].startswith("left-")}
    assert key not in _ipc("shm") and key not in _ipc("msg")


@pytest.mark.skipif(not SETPRIV, reason="needs setpriv to drop CAP_SYS_ADMIN")
def test_root_that_cannot_hide_readable_files_refuses_to_grade(tmp_path: Path) -> None:
    (tmp_path / "forward.py").write_text(CORRECT["forward"], encoding="utf-8")
    no_namespaces = (SETPRIV, "--bounding-set", "-sys_admin", "--inh-caps", "-all")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    argv = ("exercise", "check", "forward.py", "--no-progress")
    done = subprocess.run(
        [*no_namespaces, sys.executable, "-m", "micrograph", *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    exposed = any(map(sandbox.readable_by_others, sandbox.installed_dirs(tmp_path)))
    if not exposed:  # installed where others may not read: the user id of its own is enough
        assert done.returncode == 0, done.stdout + done.stderr
        return
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "could not hide micrograph's files" in lines[0], done.stderr
    assert "Traceback" not in done.stderr and "PASS" not in done.stdout


def test_the_hidden_directories_are_the_checkout_and_never_the_check_s_own() -> None:
    assert sandbox.installed_dirs(Path(os.sep) / "tmp" / "x") == [ROOT.resolve()]
    inside = sandbox.installed_dirs(ROOT / "build" / "check")  # a TMPDIR inside the checkout
    assert inside == [(ROOT / name).resolve() for name in ("micrograph", "viz", "lessons")]


def test_the_solution_has_no_network_and_makes_no_namespace(tmp_path: Path) -> None:
    source = """
        import collections  # the allow-list refuses these by name; what is loaded stays reachable
        libc = collections._sys.modules["builtins"].__import__("c" + "types").CDLL(None)
        assert libc.socket(2, 1, 0) == -1, "a socket was made (AF_INET, SOCK_STREAM)"
        assert libc.unshare(0x10000000) == -1, "a user namespace was made"
    """
    report = _check(tmp_path, "forward", textwrap.dedent(source) + CORRECT["forward"])
    assert report.passed, report.text()
