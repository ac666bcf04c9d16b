"""The solution's own view of the machine (Linux): micrograph's files hidden, its own IPC and temp.

A user id of its own keeps the solution from the judge's files and processes, but not from files every
user may read: micrograph's installed packages (the engine's algorithms, the judges and their answers), a
checkout's whole tree (the tests' solutions, the git history), any other copy on the machine (a wheel, a
teacher's clone). Before the child becomes the check's user (as root), or in place of that (as an ordinary
user), :func:`enclose` gives it, and every process it will start, namespaces of its own
(``unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET)``; as an ordinary user ``CLONE_NEWUSER``, the user
mapped to itself, which gives it the right to mount there, and ``CLONE_NEWPID``):

* a mount namespace in which every file system is read-only (``mount_setattr`` with ``AT_RECURSIVE``); every
  top-level directory but the system's programs and libraries (``covered``: ``/tmp``, the homes, ``/work``,
  ``/opt``, ``/var`` ...) is an empty directory, with the check's modules and the interpreter's (``kept``)
  put back in their places; the check's own directory (``writable``) an empty tmpfs of 64 MiB, all the
  solution can write; each directory of micrograph's files still in sight covered by an empty read-only
  one; ``/proc`` covered, so no other process's files are reached through ``/proc/PID/root``; ``/dev/shm``
  private. Other copies of micrograph, the user's files and the sockets of a session (tmux, D-Bus, an X
  server, a container engine) are out of reach, and the disk it can fill is bounded;
* an IPC namespace, so that System V shared memory, semaphores and message queues it makes end with it;
* a network namespace: no network, and none of the machine's abstract sockets;
* as an ordinary user, the process then gives up every capability it had in its namespace (bounding set,
  ambient, effective, permitted, inheritable; ``no_new_privs``), so nothing it mounted can be unmounted. A
  user namespace the solution makes for itself gets the mounts locked together (the kernel's rule for a
  less privileged namespace), so it cannot uncover them either; as root, it becomes a user with none;
* last, a seccomp filter (:data:`DENIED`) refuses the system calls that reach another process (``ptrace``,
  ``kill`` and its kin, ``process_vm_readv``, pidfds), the session's keys (``keyctl``), new mounts and
  namespaces, memory no process's size shows (``memfd_create``, System V IPC), sockets and io_uring: the
  user's other processes (a shell, an editor) and keys are the user's too.

Nothing is mounted in the judge's namespace, and the namespaces end when the solution's last process does.
:func:`hard_limits` sets the resource limits the solution cannot raise (address space, CPU time, processes,
file size, core files). The child loads this file from the check's private directory, before the import
guard: standard library only.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5 (the exercises' checker).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["PRIVATE_TMP", "enclose", "hard_limits"]

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
CLONE_NEWPID = 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 1 << 18
AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = -100, 0x8000, 1
SYS_MOUNT_SETATTR = 442  # the same number on x86-64 and on the generic table (arm64, riscv)
PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 38, 47, 4
CAPABILITY_VERSION_3 = 0x20080522

PRIVATE_TMP = ("/var/tmp", "/dev/shm", "/run/lock")
"""The shared temporary directories that the solution gets private copies of where they are still in sight
(``/dev/shm``; ``/var/tmp`` and ``/run/lock`` too when ``/var`` and ``/run`` are not covered)."""


def enclose(
    hidden: Sequence[str],
    writable: Sequence[str] = (),
    covered: Sequence[str] = (),
    kept: Sequence[str] = (),
    owner: int | None = None,
) -> str | None:
    """Give this process namespaces of its own with each directory of ``hidden`` covered (see the module).

    Call it before running the solution, in a process with one thread: as root, before becoming the
    check's user; as an ordinary user, in place of that (it then adds the user and PID namespaces, the
    dropped capabilities and the seccomp filter against the user's other processes).

    Args:
        hidden: absolute paths of directories to cover with an empty read-only one (one already out of
            sight under a ``covered`` one is passed over).
        writable: the directories that stay writable (the check's own), each an empty tmpfs of 64 MiB:
            all the solution can write, and gone with it.
        covered: directories to cover with an empty one of the solution's own (``/tmp``, the homes,
            ``/work``, ``/opt`` ...): what is kept there (files, other copies of micrograph, a tmux or D-Bus
            socket) is out of reach; a directory of ``writable`` or ``kept`` inside one is put back in its
            place. Every file system is read-only, and ``/proc`` and ``/dev/pts`` are covered too.
        kept: directories to keep visible, read-only, inside ``covered`` ones (the interpreter's own,
            numpy's, the check's modules).
        owner: as root, the user the solution will run as, who owns the ``writable`` directories.

    Returns:
        None when every step took effect; else why not (the namespaces are not to be trusted then).
    """
    if not sys.platform.startswith("linux"):
        return "namespaces are Linux's"
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        unshare, mount = libc.unshare, libc.mount
    except (ImportError, OSError, AttributeError) as e:
        return f"no unshare ({e})"

    def failed(what: str) -> str:
        return f"{what}: {os.strerror(ctypes.get_errno())}"

    user, uid, gid = os.geteuid() != 0, os.getuid(), os.getgid()  # read outside the user namespace
    if (
        unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET | (CLONE_NEWUSER | CLONE_NEWPID if user else 0))
        != 0
    ):
        return failed("unshare")
    why = _map_user(uid, gid) if user else None
    if why is None and mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        why = failed("making / private")  # so that no mount of ours reaches the judge's namespace
    if why is None and (covered or writable):
        why = _user_view(libc, writable, covered, kept, failed, owner)
    for directory in (*hidden, *(["/proc", "/dev/pts"] if covered else [])) if why is None else ():
        if not os.path.isdir(directory):
            continue  # under a covered directory: out of sight already
        flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
        if mount(b"micrograph-hidden", os.fsencode(directory), b"tmpfs", flags, b"size=4k,mode=0555") != 0:
            why = why or failed(f"covering {directory}")  # and the others covered all the same
    for directory in PRIVATE_TMP if why is None else ():
        if os.path.isdir(directory) and not os.path.islink(directory):
            options = b"size=64m,mode=1777"  # writable by all, each user's files their own (sticky)
            mount(b"micrograph-tmp", os.fsencode(directory), b"tmpfs", MS_NOSUID | MS_NODEV, options)
    if not user:  # root becomes the check's user next, with no capability; the filter holds it as well
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return why or failed("no_new_privs")
        return why or _no_other_process(libc, failed)
    # Whatever failed above, the solution keeps no capability of its namespace and reaches no other process.
    dropped = _drop_capabilities(libc, failed)
    filtered = _no_other_process(libc, failed)
    _keep_the_namespace(libc)
    return why or dropped or filtered


def _keep_the_namespace(libc: Any) -> None:
    """Fork into the new PID namespace: the child, its first process (pid 1), goes on as this process;
    this one stays outside only to wait for it and end with its status. The solution's processes then
    cannot name any process outside the namespace (no signal, no ``F_SETOWN``, no ``prlimit``), an orphan
    comes back to the child rather than escaping it, and when the child ends the kernel ends them all."""
    worker = os.fork()
    if worker == 0:
        libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)  # this one killed: the namespace with it
        return
    os.closerange(0, 1 << 16)  # the pipes are the child's alone
    while True:
        try:
            _, status = os.waitpid(worker, 0)
        except InterruptedError:
            continue
        except OSError:
            os._exit(1)
        os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _inside(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _map_user(uid: int, gid: int) -> str | None:
    """In a new user namespace: the user ``uid`` and its group ``gid`` (their ids outside it) mapped to
    themselves, so the user's files stay its own."""
    try:
        for name, text in (
            ("setgroups", "deny"),
            ("uid_map", f"{uid} {uid} 1"),
            ("gid_map", f"{gid} {gid} 1"),
        ):
            fd = os.open(f"/proc/self/{name}", os.O_WRONLY)
            try:
                os.write(fd, text.encode())
            finally:
                os.close(fd)
    except OSError as e:
        return f"mapping the user into its namespace: {e.strerror or e}"
    return None


def _mount_setattr(libc: Any, path: str, recursive: bool, read_only: bool) -> bool:
    """``mount_setattr(2)``: the mount at ``path`` (and each one below it, ``recursive``) read-only or not."""
    import ctypes

    class MountAttr(ctypes.Structure):
        _fields_ = [(name, ctypes.c_uint64) for name in ("attr_set", "attr_clr", "propagation", "userns_fd")]

    attr = MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0) if read_only else MountAttr(0, MOUNT_ATTR_RDONLY, 0, 0)
    size, flags = ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint(AT_RECURSIVE if recursive else 0)
    number, here = ctypes.c_long(SYS_MOUNT_SETATTR), ctypes.c_int(AT_FDCWD)
    return libc.syscall(number, here, os.fsencode(path), flags, ctypes.byref(attr), size) == 0


def _user_view(
    libc: Any,
    writable: Sequence[str],
    covered: Sequence[str],
    kept: Sequence[str],
    failed: Callable[[str], str],
    owner: int | None = None,
) -> str | None:
    """Every mount read-only, recursively; each of ``covered`` an empty directory, with what ``kept`` holds
    inside it put back (bound from a handle taken before anything was covered), or if a file, empty (the
    null device bound over it); each of ``writable`` an empty tmpfs of the solution's own (64 MiB;
    ``owner``'s, as root); the working directory found again by its name.

    The outer directories are covered first: an inner one of ``covered`` (an interpreter's site-packages
    inside its kept prefix) is covered in turn where what the outer one kept still holds it, and is passed
    over where it is out of sight already (a home inside ``/home``)."""
    tops = [t for t in covered if os.path.isdir(t) and not os.path.islink(t)]
    tops.sort(key=lambda t: t.rstrip("/").count("/"))
    scratch = [os.path.realpath(p) for p in writable]
    keep = sorted(p for p in dict.fromkeys(os.path.realpath(p) for p in kept) if os.path.isdir(p))
    handles: dict[str, int] = {}
    try:
        for path in keep:  # the outer ones first (sorted), each taken before anything is covered
            if any(_inside(path, t) for t in tops):
                handles[path] = os.open(path, os.O_PATH | os.O_DIRECTORY)
        if not _mount_setattr(libc, "/", recursive=True, read_only=True):
            return failed("making the file systems read-only")
        for top in tops:
            if not os.path.isdir(top):
                continue  # inside an outer one, and not kept there: out of sight already
            why = _cover(libc, top, [p for p in scratch if _inside(p, top)], handles, failed)
            if why is not None:
                return why
        for path in (p for p in covered if os.path.isfile(p) and not os.path.islink(p)):  # a top-level file
            if libc.mount(b"/dev/null", path.encode(), None, MS_BIND, None) != 0:  # reads as empty
                return failed(f"covering {path}")
    finally:
        for fd in handles.values():
            os.close(fd)
    options = "size=64m,mode=0700" + ("" if owner is None else f",uid={owner},gid={owner}")
    for path in scratch:  # the solution's own, empty, gone with it, and no larger than this
        if libc.mount(b"micrograph-own", path.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options.encode()):
            return failed(f"making {path} the solution's own")
    os.chdir(os.getcwd())  # by its name: the directory put back, not the one covered
    return None


def _cover(
    libc: Any, top: str, places: Sequence[str], handles: dict[str, int], failed: Callable[[str], str]
) -> str | None:
    """``top`` covered by an empty read-only tmpfs holding only ``places`` (empty directories) and the
    directories of ``handles`` inside it, bound back from their handles."""
    if libc.mount(b"micrograph-own", top.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, b"size=64m,mode=0755"):
        return failed(f"covering {top}")
    for path in places:
        os.makedirs(path, exist_ok=True)
    for path, fd in handles.items():
        if _inside(path, top):
            os.makedirs(path, exist_ok=True)
            if libc.mount(f"/proc/self/fd/{fd}".encode(), path.encode(), None, MS_BIND | MS_REC, None) != 0:
                return failed(f"keeping {path}")
    if not _mount_setattr(libc, top, recursive=False, read_only=True):
        return failed(f"making {top} read-only")
    return None


def _drop_capabilities(libc: Any, failed: Callable[[str], str]) -> str | None:
    """Give up every capability this process holds in its user namespace, for good."""
    import ctypes

    cap = 0
    while libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0:  # until the kernel knows no higher capability
        cap += 1
    if cap == 0:
        return failed("dropping the bounding set")
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return failed("no_new_privs")
    header = (ctypes.c_uint32 * 2)(CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable: none, for both 32-bit halves
    if libc.capset(ctypes.byref(header), ctypes.byref(data)) != 0:
        return failed("dropping the capabilities")
    held = (ctypes.c_uint32 * 6)(*([1] * 6))
    if libc.capget(ctypes.byref(header), ctypes.byref(held)) != 0 or any(held):
        return "dropping the capabilities: some are still held"
    return None


# The system calls the solution may not make, numbered for each architecture (the kernel's numbers), in
# this order: those that reach another process (ptrace, process_vm_readv, process_vm_writev, kill, tkill,
# tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo, pidfd_send_signal, pidfd_open, pidfd_getfd); the session's keys
# (add_key, request_key, keyctl); mounts and namespaces it could otherwise remake (mount, umount2,
# pivot_root, chroot, unshare, setns, open_tree, move_mount, fsopen, fsconfig, fsmount, fspick,
# mount_setattr); memory no process's resident size shows (memfd_create, shmget, semget, msgget); sockets (a
# network namespace does not hold AF_VSOCK) and io_uring, whose operations no filter sees (socket,
# io_uring_setup, io_uring_enter, io_uring_register).
DENIED = {
    "x86_64": (101, 310, 311, 62, 200, 234, 129, 297, 424, 434, 438, 248, 249, 250, 165, 166, 155, 161,
               272, 308, 428, 429, 430, 431, 432, 433, 442, 319, 29, 64, 68, 41, 425, 426, 427),
    "aarch64": (117, 270, 271, 129, 130, 131, 138, 240, 424, 434, 438, 217, 218, 219, 40, 39, 41, 51, 97,
                268, 428, 429, 430, 431, 432, 433, 442, 279, 194, 190, 186, 198, 425, 426, 427),
}  # fmt: skip
ARCHES = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
CLONE, CLONE3 = {"x86_64": 56, "aarch64": 220}, 435
NAMESPACES = 0x7E020000  # CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
PR_SET_SECCOMP, SECCOMP_MODE_FILTER, PR_SET_PDEATHSIG = 22, 2, 1
RET_ALLOW, RET_EPERM, RET_ENOSYS, RET_KILL = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38, 0x80000000
LD, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, JGE, JSET, BPF_RET|K


def filter_program(machine: str) -> list[tuple[int, int, int, int]]:
    """The seccomp filter of :func:`_no_other_process` as classic BPF, ``(code, jt, jf, k)`` each: the
    architecture checked (another one's call, or x32's, kills the process), the calls of :data:`DENIED`
    refused with EPERM, ``clone`` refused with EPERM when it asks for a namespace, ``clone3`` with ENOSYS
    (the C library then uses ``clone``, whose flags a filter can read), every other call allowed.

    Raises:
        KeyError: an architecture with no table.
    """
    denied = sorted(set(DENIED[machine]))
    code: list[tuple[int, str | int, str | int, int]] = [(LD, 0, 0, 4), (JEQ, 0, "kill", ARCHES[machine])]
    code.append((LD, 0, 0, 0))  # the call's number
    if machine == "x86_64":
        code.append((JGE, "kill", 0, 0x40000000))  # the x32 ABI
    code += [(JEQ, "enosys", 0, CLONE3), (JEQ, "clone", 0, CLONE[machine])]
    code += [(JEQ, "eperm", 0, nr) for nr in denied]
    code += [(RET, 0, 0, RET_ALLOW)]
    labels = {"clone": len(code)}
    code += [(LD, 0, 0, 16), (JSET, "eperm", 0, NAMESPACES), (RET, 0, 0, RET_ALLOW)]  # flags' low word
    labels.update(eperm=len(code), enosys=len(code) + 1, kill=len(code) + 2)
    code += [(RET, 0, 0, RET_EPERM), (RET, 0, 0, RET_ENOSYS), (RET, 0, 0, RET_KILL)]

    def offset(at: int, to: str | int) -> int:
        return to if isinstance(to, int) else labels[to] - at - 1

    return [(c, offset(k, jt), offset(k, jf), v) for k, (c, jt, jf, v) in enumerate(code)]


def _no_other_process(libc: Any, failed: Callable[[str], str]) -> str | None:
    """Install :func:`filter_program`'s filter: the solution runs as the user, whose other processes (a
    shell, an editor), keys and mounts it could otherwise reach (x86-64 and arm64)."""
    import ctypes

    machine = os.uname().machine
    if machine not in DENIED:
        return f"no seccomp filter for {machine}"
    program = filter_program(machine)

    class Filter(ctypes.Structure):
        _fields_ = [
            ("code", ctypes.c_uint16),
            ("jt", ctypes.c_uint8),
            ("jf", ctypes.c_uint8),
            ("k", ctypes.c_uint32),
        ]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]

    filters = (Filter * len(program))(*(Filter(*f) for f in program))
    fprog = Program(len(program), filters)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return failed("the seccomp filter")
    return None


def hard_limits(memory: int, cpu: int, uid: int | None) -> None:
    """Hard limits: address space, CPU time, processes, file size, no core file (a backstop: the runner
    measures and stops first). Set as root before becoming ``uid``, or as the ordinary user the check runs
    as, they cannot be raised again.

    Args:
        memory: bytes of address space. cpu: CPU seconds. uid: the user the solution will run as (None: this
            process's own); it may start 32 processes more than that user has now.
    """
    try:
        import resource
    except ImportError:
        return
    mine = uid if uid is not None else os.getuid()
    running = _processes_of(mine)
    for limit, value in (
        (resource.RLIMIT_AS, memory),
        (resource.RLIMIT_CPU, cpu),
        (resource.RLIMIT_NPROC, running + 32),
        (resource.RLIMIT_FSIZE, 64 << 20),
        (resource.RLIMIT_CORE, 0),
    ):
        try:
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError):
            pass


def _processes_of(uid: int) -> int:
    """How many processes (threads included, as RLIMIT_NPROC counts them) the user ``uid`` has now."""
    count = 0
    try:
        names = os.listdir("/proc")
    except OSError:
        return 0
    for name in names:
        if name.isdigit():
            try:
                st = os.stat(f"/proc/{name}")
                if st.st_uid == uid:
                    count += len(os.listdir(f"/proc/{name}/task"))
            except OSError:
                pass
    return count
