"""The solution's own view of the machine (Linux, as root): micrograph's files hidden, its own IPC and temp.

A user id of its own keeps the solution from the judge's files and processes, but not from files every
user may read: micrograph's installed packages (the engine's algorithms, the judges and their answers) and,
in a checkout, the whole tree (the tests' solutions, the git history). Before the child becomes the check's
user, :func:`enclose` gives it, and every process it will start, namespaces of its own
(``unshare(CLONE_NEWNS | CLONE_NEWIPC)``):

* a mount namespace in which each directory of micrograph's files is covered by an empty read-only
  directory (a ``tmpfs`` of no size), and the shared temporary directories other than ``/tmp`` (which holds
  the check's own directory) by private ones, so that what the solution leaves there goes with it;
* an IPC namespace, so that System V shared memory, semaphores and message queues it makes end with it.

Nothing is mounted in the judge's namespace, and the namespaces end when the solution's last process does.
The child loads this file from the check's private directory, before the import guard: standard library
only.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5 (the exercises' checker).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

__all__ = ["PRIVATE_TMP", "enclose"]

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REC, MS_PRIVATE = 0x4000, 1 << 18

PRIVATE_TMP = ("/var/tmp", "/dev/shm", "/run/lock")
"""The shared temporary directories that the solution gets private copies of (``/var/lock`` is a link to
``/run/lock``); ``/tmp`` stays shared, since it holds the check's directory, and is swept after the check."""


def enclose(hidden: Sequence[str]) -> str | None:
    """Give this process namespaces of its own with each directory of ``hidden`` covered (see the module).

    Call it as root, before becoming the check's user, in a process with one thread.

    Args:
        hidden: absolute paths of directories to cover with an empty read-only one.

    Returns:
        None when every directory is covered; else why not (the namespaces are not to be trusted then).
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

    if unshare(CLONE_NEWNS | CLONE_NEWIPC) != 0:
        return failed("unshare")
    if mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:  # no mount of ours reaches the judge's
        return failed("making / private")
    for directory in hidden:
        flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
        if mount(b"micrograph-hidden", os.fsencode(directory), b"tmpfs", flags, b"size=4k,mode=0555") != 0:
            return failed(f"covering {directory}")
    for directory in PRIVATE_TMP:
        if os.path.isdir(directory) and not os.path.islink(directory):
            options = b"size=64m,mode=1777"  # writable by all, each user's files their own (sticky)
            mount(b"micrograph-tmp", os.fsencode(directory), b"tmpfs", MS_NOSUID | MS_NODEV, options)
    return None
