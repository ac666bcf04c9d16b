"""The processes of a check: which belong to the student's solution, what they use, how they all end.

A student's solution may start processes of its own (``subprocess``, ``os.fork``, a ``setsid`` daemon, a fork
bomb). None of them may outlive the check, and their CPU time and memory count against the solution. This
module reads the kernel's view of the processes (``/proc``) and ends them, from the judge's side:

* :func:`protect_judge` makes the judge's process not dumpable (``PR_SET_DUMPABLE`` 0), so no process of the
  same user can open its ``/proc`` descriptors (its standard output, the platform's results file) or trace
  it, and a subreaper (``PR_SET_CHILD_SUBREAPER``), so a grandchild whose parent exits is re-parented to the
  judge instead of escaping to ``init``;
* :class:`Tree` follows the solution's processes: the child's descendants by parent id, every process of the
  check's own user id when the solution runs as one (a grading container, where the judge is root), and
  every process that carries the check's token in its environment; it sums their CPU time and memory and
  kills them all, stopping them first so that a fork bomb cannot outrun the kill.

Everything here is Linux's; elsewhere (no ``/proc``, no ``prctl``) the functions do nothing and say so by
their return values, and the runner falls back on the child's process group.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5 (the exercises' checker).
"""

from __future__ import annotations

import ctypes
import os
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["protect_judge", "Proc", "scan", "Tree", "sleeping", "running", "TICK", "PR_SET_PDEATHSIG"]

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36


def _sysconf(name: str, default: int) -> int:
    try:
        return int(os.sysconf(name))
    except (AttributeError, ValueError, OSError):  # not POSIX, or a name this system lacks (a browser)
        return default


_HZ = _sysconf("SC_CLK_TCK", 100)
TICK = 1 / _HZ
"""Seconds of one clock tick, the unit of the CPU times in ``/proc/PID/stat``."""
_PAGE = _sysconf("SC_PAGE_SIZE", 4096)


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def protect_judge() -> bool:
    """Make this process not dumpable and a child subreaper; True where both took effect (Linux)."""
    return _prctl(PR_SET_DUMPABLE, 0) and _prctl(PR_SET_CHILD_SUBREAPER, 1)


@dataclass(frozen=True)
class Proc:
    """One process as ``/proc/PID/stat`` shows it.

    Attributes:
        pid, ppid: its id and its parent's. start: its start time (clock ticks since boot), which tells a
        process from a later one that reuses its id. cpu: user + system CPU seconds, its own and its reaped
        children's. rss: resident bytes.
        state: the kernel's letter (``R`` running, ``S`` sleeping, ``Z`` a zombie waiting to be reaped ...).
    """

    pid: int
    ppid: int
    start: int
    cpu: float
    rss: int
    state: str = "R"


def _stat(pid: int) -> Proc | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    try:
        return Proc(
            pid,
            int(fields[1]),
            int(fields[19]),
            sum(int(x) for x in fields[11:15]) / _HZ,  # its own CPU time and its reaped children's
            int(fields[21]) * _PAGE,
            fields[0].decode("ascii", "replace"),
        )
    except (ValueError, IndexError):
        return None


def scan() -> dict[int, Proc]:
    """Every process this process can see, by id ({} where there is no /proc)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return {}
    procs = {}
    for name in names:
        if name.isdigit():
            p = _stat(int(name))
            if p is not None:
                procs[p.pid] = p
    return procs


def _uids(pid: int) -> tuple[int, ...]:
    """The real, effective, saved and file-system user ids of a process (() if it is gone)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"Uid:"):
                    return tuple(int(x) for x in line.split()[1:])
    except (OSError, ValueError):
        pass
    return ()


def _has_token(pid: int, token: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return token in f.read(1 << 20).split(b"\0")
    except OSError:
        return False


class Tree:
    """The solution's processes: the child, its descendants, and the orphans it left.

    Args:
        token: ``NAME=VALUE`` set in the child's environment; a process that still carries it is the
            solution's even after it left the child's tree (a ``setsid`` grandchild re-parented elsewhere).
        uid: the user id the solution runs as when the judge is root (every process of that id is the
            solution's), or None when the solution runs as the judge's own user.
    """

    def __init__(self, token: str, uid: int | None) -> None:
        self.token = token.encode()
        self.uid = uid
        self.root = 0
        self._worker = 0  # the child's first process in a PID namespace of its own, once it has one
        self.zombies: list[Proc] = []  # the processes found last that have ended, not yet reaped
        self.seen: dict[int, int] = {}  # pid -> start time of every process met in the tree

    def follow(self, pid: int) -> None:
        """Start following the tree under the child ``pid``."""
        self.root = pid

    def members(self, procs: dict[int, Proc] | None = None, *, thorough: bool = False) -> list[Proc]:
        """The solution's processes now: by descent from the child, by user id, and (``thorough``) by the
        token of any process of this user."""
        procs = scan() if procs is None else procs
        children: dict[int, list[int]] = {}
        for p in procs.values():
            children.setdefault(p.ppid, []).append(p.pid)
        found: dict[int, Proc] = {}
        stack = [self.root] if self.root in procs else []
        stack += [pid for pid, start in self.seen.items() if pid in procs and procs[pid].start == start]
        me = os.getpid()
        if thorough or self.uid is not None:
            for p in procs.values():
                if p.pid == me:
                    continue
                if self.uid is not None and self.uid in _uids(p.pid):
                    stack.append(p.pid)
                elif thorough and _has_token(p.pid, self.token):
                    stack.append(p.pid)
        while stack:
            pid = stack.pop()
            if pid in found or pid == me or pid not in procs:
                continue
            found[pid] = procs[pid]
            stack.extend(children.get(pid, ()))
        for p in found.values():
            self.seen[p.pid] = p.start
        self._reap(found.values())
        self.zombies = [p for p in found.values() if p.state == "Z" and not _threads_live(p.pid)]
        return [_live_view(p) for p in found.values() if p not in self.zombies]

    def _reap(self, procs: Iterable[Proc]) -> None:
        """Reap the zombies among them that are this process's children (not the child itself, whose
        ``Popen`` reaps it and reads its exit status)."""
        me = os.getpid()
        for p in procs:
            if p.state == "Z" and p.ppid == me and p.pid != self.root:
                try:
                    os.waitpid(p.pid, os.WNOHANG)
                except ChildProcessError:
                    pass

    def usage(self) -> tuple[float, int, int]:
        """(CPU seconds, resident bytes, processes) of the solution's processes now, summed; the CPU time of
        its zombies too, which reaches a parent's account only when the parent reaps them."""
        members = self.members()
        cpu = sum(p.cpu for p in members) + sum(p.cpu for p in self.zombies)
        return cpu, sum(p.rss for p in members), len(members)

    def worker(self) -> int:
        """The process that runs the solution: the child, or, where the child has forked into a PID namespace
        of its own (:mod:`lessons.exercises.enclosure`, an ordinary user's check), that namespace's first
        process, its only child in a deeper PID namespace (the kernel's word, which no solution can forge:
        the child never forks again, and a namespace's first process cannot give it another child)."""
        if self._worker or self.uid is not None:  # as root the child runs the solution itself
            return self._worker or self.root
        mine = _depth(self.root)
        for p in scan().values():
            if p.ppid == self.root and mine is not None and (_depth(p.pid) or 0) > mine:
                self._worker = p.pid
                return p.pid
        return self.root

    def kill(self, *, keep_root: bool = False, rounds: int = 100) -> bool:
        """Stop, then kill, every process of the solution until none is left; True if none is left.

        Each round stops every member first (``SIGSTOP``: a stopped process cannot fork), then kills them;
        zombies re-parented to this process are reaped. ``keep_root`` spares the child and its
        :meth:`worker` (the end of a case that was answered: the child serves the next case, whatever it
        started does not)."""
        for _ in range(rounds):
            spared = {self.root, self._worker} if keep_root else set()
            members = [p for p in self.members(thorough=True) if p.pid not in spared]
            if not members:
                return True
            for sig in (signal.SIGSTOP, signal.SIGKILL):
                for p in members:
                    try:
                        os.kill(p.pid, sig)
                    except (ProcessLookupError, PermissionError):
                        pass
            time.sleep(0.005)
        return False


def _depth(pid: int) -> int | None:
    """How many PID namespaces the process is in (``NSpid:`` of ``/proc/PID/status``, which every user may
    read, where ``/proc/PID/ns`` asks for the right to trace it)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"NSpid:"):
                    return len(line.split()) - 1
    except OSError:
        pass
    return None


def _threads_live(pid: int) -> bool:
    """Whether a process shown as a zombie still has threads running: its first thread ended alone
    (``SYS_exit``), and the kernel shows ``Z`` for the whole process while the others run on."""
    try:
        return len(os.listdir(f"/proc/{pid}/task")) > 1
    except OSError:
        return False


def _live_view(p: Proc) -> Proc:
    """``p``, with the resident size of a live thread where its first thread has ended (it shows 0)."""
    if p.state != "Z":
        return p
    try:
        tids = [t for t in os.listdir(f"/proc/{p.pid}/task") if t != str(p.pid)]
        with open(f"/proc/{p.pid}/task/{tids[0]}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return Proc(p.pid, p.ppid, p.start, p.cpu, int(fields[21]) * _PAGE, "R")
    except (OSError, IndexError, ValueError):
        return p


def running(pid: int) -> float | None:
    """Seconds the threads of the process that are alive now have run, each to the nanosecond (the first
    field of ``/proc/PID/task/TID/schedstat``), summed; None where the kernel does not say. A thread that has
    ended is not counted: its time shows only in ``/proc/PID/stat`` (:class:`Proc`'s ``cpu``), in ticks."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    total = 0
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
                total += int(f.read().split()[0])
        except FileNotFoundError:
            continue  # the thread ended since the listing
        except (OSError, ValueError, IndexError):
            return None
    return total / 1e9


def sleeping(pid: int) -> float | None:
    """Seconds the process's main thread has spent neither running nor waiting for a processor, since it
    started: time it chose to wait (``time.sleep``, a read), which a loaded machine does not lengthen.
    None where the kernel does not say (no ``/proc/PID/schedstat``)."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as f:
            run, wait = (int(x) for x in f.read().split()[:2])
        with open("/proc/uptime", "rb") as f:
            now = float(f.read().split()[0])
    except (OSError, ValueError):
        return None
    p = _stat(pid)
    if p is None:
        return None
    alive = now - p.start / _HZ
    return max(0.0, alive - (run + wait) / 1e9)
