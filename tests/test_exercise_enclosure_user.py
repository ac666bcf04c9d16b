"""Where the check runs as an ordinary user, the solution runs as that user, enclosed.

It could read micrograph's files and write the user's own; its namespaces (a user namespace with the user
mapped to itself, :func:`lessons.exercises.enclosure.enclose`) hide the first, make every file system
read-only but the check's own directory, cover ``/proc`` (the user's other processes' files), give up the
right to undo any of it, and refuse the calls that would trace or signal the user's other processes. A
result for grading is refused where Linux does not let the user make them.

The ordinary user is played by root's child process that becomes a user id of no account before it calls
the enclosure, as the check's child does when an ordinary user starts it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import pytest

from lessons.exercises import child, sandbox
from lessons.exercises.limits import IsolationError

ROOT = Path(__file__).resolve().parent.parent
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0

AS_A_USER = r"""
import ctypes, errno, json, os, socket, sys, importlib.util
spec = importlib.util.spec_from_file_location("enclosure", sys.argv[1])
enclosure = importlib.util.module_from_spec(spec)
spec.loader.exec_module(enclosure)
hidden, home, writable, kept, other, uid, outside = *sys.argv[2:7], int(sys.argv[7]), int(sys.argv[8])
libc = ctypes.CDLL(None, use_errno=True)
os.setgroups([]); os.setgid(uid); os.setuid(uid)
libc.prctl(4, 1, 0, 0, 0)  # dumpable again, as a process the user started is
os.chdir(writable)
seen = {"why": enclosure.enclose([hidden], [writable], [home], [kept])}
seen["hidden"] = os.listdir(hidden)
seen["proc"] = os.listdir("/proc")
seen["home"] = sorted(os.listdir(home))
with open(os.path.join(kept, "numpy.py")) as f:
    seen["kept"] = f.read()

def write(path):
    try:
        with open(path, "w") as f:
            f.write("x")
        return "written"
    except OSError as e:
        return errno.errorcode[e.errno]

seen["writable"] = write(os.path.join(writable, "mine.txt"))
seen["relative"] = write("relative.txt")  # in the working directory, the check's own
seen["kept_write"] = write(os.path.join(kept, "numpy.py"))
seen["other"] = write(os.path.join(other, "theirs.txt"))
seen["var_tmp"] = write("/var/tmp/micrograph-enclosure-test.txt")
try:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(2)
        s.connect(("127.0.0.1", 22))
    seen["network"] = "connected"
except OSError as e:
    seen["network"] = errno.errorcode.get(e.errno, str(e))
try:
    os.close(os.memfd_create("held"))
    seen["memfd"] = "made"
except OSError as e:
    seen["memfd"] = errno.errorcode[e.errno]
seen["umount"] = libc.umount2(hidden.encode(), 2) == 0 or libc.umount2(home.encode(), 2) == 0
seen["own_namespace"] = libc.unshare(0x10000000 | 0x00020000) == 0  # the solution's own, with capabilities
seen["umount_there"] = any(libc.umount2(p.encode(), 2) == 0 for p in (hidden, home, "/proc"))
seen["hidden_after"] = os.listdir(hidden)
seen["kill"] = libc.kill(outside, 0) == 0  # the user's other processes: not to be signalled
seen["ptrace"] = libc.ptrace(16, outside, 0, 0) == 0  # nor traced (PTRACE_ATTACH)
seen["parent"] = os.getppid()  # outside its PID namespace: 0
r, w = os.pipe()
seen["setown"] = libc.fcntl(r, 8, outside) == 0  # F_SETOWN: no process outside can be named
try:
    os.setpriority(os.PRIO_PROCESS, outside, 19)
    seen["setpriority"] = "done"
except OSError as e:
    seen["setpriority"] = errno.errorcode[e.errno]
seen["pts"] = os.listdir("/dev/pts")
seen["keys"] = libc.syscall(250 if os.uname().machine == "x86_64" else 219, 0, -3, 0, 0) >= 0  # keyctl
pid = os.fork()
if pid == 0:
    os._exit(7)
seen["fork"] = os.waitpid(pid, 0)[1] >> 8
print(json.dumps(seen))
"""


@pytest.mark.skipif(not (IS_ROOT and sys.platform.startswith("linux")), reason="plays a user as root")
def test_an_ordinary_user_s_solution_is_enclosed_for_good() -> None:
    with tempfile.TemporaryDirectory() as place:  # pytest's own is root's alone: the user could not enter it
        _enclosed(Path(place))


def _enclosed(tmp_path: Path) -> None:
    hidden, home, other = tmp_path / "micrograph", tmp_path / "home", tmp_path / "elsewhere"
    writable, kept = home / "check", home / "venv"  # the check's scratch, the interpreter's: in the home
    for d in (hidden, home, other, writable, kept):
        d.mkdir()
        d.chmod(0o777)
    (hidden / "order.py").write_text("the engine's algorithm\n", encoding="utf-8")
    (home / "id_rsa").write_text("the user's key\n", encoding="utf-8")
    (kept / "numpy.py").write_text("numpy\n", encoding="utf-8")
    for f in (hidden / "order.py", home / "id_rsa", kept / "numpy.py"):
        f.chmod(0o666)
    tmp_path.chmod(0o755)
    script = [sys.executable, "-I", "-c", AS_A_USER, str(ROOT / "lessons" / "exercises" / "enclosure.py")]
    places = [str(p) for p in (hidden, home, writable, kept, other)]
    done = subprocess.run(
        [*script, *places, str(sandbox.fresh_uid()), str(os.getpid())],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    if seen["why"] is not None and "unshare" in seen["why"]:
        pytest.skip(f"this machine does not let an ordinary user make namespaces: {seen['why']}")
    assert seen["why"] is None
    assert seen["hidden"] == [] and seen["proc"] == []  # micrograph's files, the user's processes
    assert seen["home"] == ["check", "venv"] and seen["kept"] == "numpy\n"  # no key: what is kept, alone
    assert seen["writable"] == seen["relative"] == seen["var_tmp"] == "written"  # its own; a private /var/tmp
    assert seen["kept_write"] == seen["other"] == "EROFS" and not (other / "theirs.txt").exists()
    assert seen["network"] == "EPERM" and seen["memfd"] == "EPERM"  # no socket; no memory outside its size
    assert not seen["own_namespace"]  # no namespace of its own to remount in
    assert not seen["umount"] and not seen["umount_there"] and seen["hidden_after"] == []
    assert not seen["kill"] and not seen["ptrace"] and seen["fork"] == 7  # its own children are its own
    assert seen["parent"] == 0 and not seen["setown"] and seen["setpriority"] == "ESRCH"  # its PID namespace
    assert seen["pts"] == [] and not seen["keys"]  # no terminal of the user's, no key of the session
    assert (
        not (writable / "mine.txt").exists() and not (writable / "relative.txt").exists()
    )  # a tmpfs of its own
    assert (kept / "numpy.py").read_text(encoding="utf-8") == "numpy\n"
    assert not Path("/var/tmp/micrograph-enclosure-test.txt").exists()  # it went with the namespace


def _enclosure(why: str | None, calls: list[tuple[Any, ...]]) -> types.SimpleNamespace:
    def enclose(
        hidden: list[str], writable: list[str], covered: list[str], kept: list[str], owner: int | None = None
    ) -> str | None:
        calls.append((hidden, writable, covered, kept))
        return why

    return types.SimpleNamespace(enclose=enclose)


@pytest.mark.parametrize("required", [True, False])
def test_a_result_for_grading_is_refused_where_the_solution_cannot_be_enclosed(
    monkeypatch: pytest.MonkeyPatch, required: bool
) -> None:
    calls: list[tuple[Any, ...]] = []
    why = "unshare: Operation not permitted"
    monkeypatch.setattr(child, "_sibling", lambda name: _enclosure(why, calls))
    monkeypatch.setattr(child.sys, "platform", "linux")
    hide = {"dirs": ["/x/micrograph"], "writable": ["/tmp/check"], "covered": ["/tmp"], "kept": ["/usr"]}
    hide["required"] = required
    if required:
        with pytest.raises(child.IsolationError) as refused:  # the child's own, sent back as plain data
            child._drop_privileges("", None, None, hide)
        said = str(refused.value)
        assert "for grading" in said and why in said and "run it as root in a container" in said
    else:  # a student's own check runs where the enclosure cannot be made
        child._drop_privileges("", None, None, hide)
    assert calls == [(["/x/micrograph"], ["/tmp/check"], ["/tmp"], ["/usr"])]


def test_a_grading_format_asks_for_the_enclosure(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from lessons import cli, exercises

    asked: list[bool] = []

    def check(*args: Any, isolated: bool = False, **kw: Any) -> Any:
        asked.append(isolated)
        raise IsolationError("this check's result is for grading, and the solution could not be kept")

    monkeypatch.setattr(exercises, "check", check)
    monkeypatch.chdir(tmp_path)
    Path("backprop.py").write_text("# micrograph exercise: backprop\n", encoding="utf-8")
    for fmt in ("json", "gradescope", "prairielearn", "text"):
        assert cli.main(["exercise", "check", "backprop.py", "--format", fmt, "--no-progress"]) == 2
    assert asked == [True, True, True, False]
    said = capsys.readouterr().err.splitlines()
    assert said[0] == "micrograph: error: cannot check backprop.py: this check's result is for grading, " + (
        "and the solution could not be kept"
    )


def _run_filter(program: list[tuple[int, int, int, int]], data: dict[int, int]) -> int:
    """Classic BPF, as the kernel runs a seccomp filter: ``data`` is seccomp_data by byte offset."""
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = program[pc]
        if code == 0x20:  # load a word
            acc, pc = data.get(k, 0), pc + 1
        elif code == 0x06:  # return
            return k
        else:
            taken = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
            pc += 1 + (jt if taken else jf)


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_seccomp_filter_refuses_what_it_names_and_lets_the_rest_run(machine: str) -> None:
    from lessons.exercises import enclosure as e

    program = e.filter_program(machine)
    arch = e.ARCHES[machine]

    def verdict(nr: int, flags: int = 0, on: int = arch) -> int:
        return _run_filter(program, {4: on, 0: nr, 16: flags})

    assert len(e.DENIED[machine]) == 35 and all(verdict(nr) == e.RET_EPERM for nr in e.DENIED[machine])
    read, write, openat, mmap, getpid = {"x86_64": (0, 1, 257, 9, 39), "aarch64": (63, 64, 56, 222, 172)}[
        machine
    ]
    assert all(verdict(nr) == e.RET_ALLOW for nr in (read, write, openat, mmap, getpid))
    clone = e.CLONE[machine]
    assert verdict(clone, 0x11) == e.RET_ALLOW  # fork: SIGCHLD
    assert verdict(clone, 0x003D0F00) == e.RET_ALLOW  # a thread
    assert verdict(clone, 0x10000000 | 0x11) == e.RET_EPERM  # CLONE_NEWUSER
    assert verdict(clone, 0x00020000 | 0x11) == e.RET_EPERM  # CLONE_NEWNS
    assert verdict(e.CLONE3) == e.RET_ENOSYS  # the C library falls back to clone
    assert verdict(read, on=0x40000003) == e.RET_KILL  # another architecture's call (i386)
    if machine == "x86_64":
        assert verdict(0x40000000 + read) == e.RET_KILL  # x32
