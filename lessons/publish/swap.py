"""The tour's directory: built beside ``--out`` in a hidden directory, swapped in whole under a lock.

:func:`built_beside` gives the tour a new directory ``.NAME.building-*`` beside ``out``, locked while it
is built, and moves it into place at the end, so ``out`` holds either the earlier tour or the new one,
whole, even if the run is interrupted (Ctrl-C or SIGTERM remove the unfinished directory; after a SIGKILL,
the next tour beside it removes the unfinished directory once it is an hour old, no tour holds its lock, and
it holds the tour's :data:`CLAIM`, written the moment the directory is made: a directory of the user's whose
name merely looks like one, such as ``.out.old-mybackup``, is never swept). Every tour's directory holds a
marker (:data:`MARKER`, written by :func:`mark`) listing the files it wrote: an existing ``out`` is
replaced only if every file in it is listed there, or it is empty, so files added by hand are never deleted.
The check is made again at the moment of the swap, under a lock on the parent directory.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # not POSIX: no locks (concurrent tours are then checked at the swap only)
    fcntl = None  # type: ignore[assignment]

__all__ = ["CLAIM", "MARKER", "STALE_SECONDS", "built_beside", "mark"]

MARKER = ".micrograph-tour"
"""A file in every tour's directory: a directory without it is not replaced (it may hold the user's files)."""

CLAIM = ".micrograph-tour-work"
"""A file in each hidden directory the tour makes beside ``--out`` (the one it builds in, the one an earlier
tour is moved aside to), written as the directory is made: only a directory holding it is ever swept."""


@contextlib.contextmanager
def built_beside(root: Path, *, replace: bool) -> Iterator[Path]:
    """A new directory to build the tour in, beside ``root``; moved into place when the block ends.

    An existing ``root`` is replaced only with ``replace``, and only if every file in it is one the earlier
    tour wrote (listed in its :data:`MARKER`) or it is empty. If the block raises (SIGTERM included, as a
    KeyboardInterrupt), the new directory is removed and ``root`` is left as it was.

    Raises:
        FileExistsError: ``root`` holds an earlier tour and ``replace`` is False, or files the tour did not
            write, or it appeared while the tour ran.
        FileNotFoundError: the parent directory of ``root`` does not exist.
        NotADirectoryError: ``root`` exists and is not a directory.
        OSError: a file cannot be written (its ``filename`` names it under ``root``, not the hidden copy).
    """
    existed = _check_destination(root, replace)
    _sweep_stale(root)
    building = _claimed(root, "building")
    with _locked(building), _terminate_as_interrupt():
        try:
            yield building
            with _locked(root.parent):
                _swap(building, root, replace=replace, existed=existed)
        except OSError as e:
            shutil.rmtree(building, ignore_errors=True)
            raise _as_destination(e, building, root) from e
        except BaseException:
            shutil.rmtree(building, ignore_errors=True)
            raise


def mark(building: Path, files: list[Path]) -> None:
    """Write the :data:`MARKER` of a finished tour, listing ``files`` (paths inside ``building``), and make
    the directory readable by others, as a directory made by hand would be.

    Raises:
        OSError: the marker cannot be written (its ``filename`` names it).
    """
    from viz.files import write_atomic

    listed = "".join(f"{Path(f).relative_to(building).as_posix()}\n" for f in files)
    with _naming(building / MARKER):
        write_atomic(building / MARKER, (_MARKER_HEAD + listed).encode("utf-8"), overwrite=False)
    os.chmod(building, 0o755)


_MARKER_HEAD = "written by micrograph tour; the files it wrote:\n"

STALE_SECONDS = 3600
"""Seconds after which an unlocked, unfinished ``.NAME.building-*`` directory is removed by a new tour."""


def _foreign(root: Path) -> list[str]:
    """The entries of an earlier tour's directory that the tour did not write (relative paths, sorted).

    The tour's :data:`MARKER` lists the files it wrote; a directory without the marker (or with the marker
    of a version that did not list them) is foreign as a whole unless it is empty.
    """
    entries = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    if not entries:
        return []
    try:
        head, *listed = (root / MARKER).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError, ValueError):
        return entries
    if head + "\n" != _MARKER_HEAD:
        return entries
    allowed = {MARKER, *listed}
    for f in listed:
        allowed.update(p.as_posix() for p in Path(f).parents if p != Path("."))
    return [e for e in entries if e not in allowed]


def _check_destination(root: Path, replace: bool) -> bool:
    """Refuse what :func:`run` must not replace; return whether ``root`` exists now.

    Raises:
        FileNotFoundError, NotADirectoryError, FileExistsError: as :func:`run` says.
    """
    if not root.parent.is_dir():
        raise FileNotFoundError(
            f"cannot write the tour into {root}: the directory {root.parent} does not exist"
        )
    if root.is_symlink() or (root.exists() and not root.is_dir()):
        raise NotADirectoryError(f"{root} exists and is not a directory")
    if not root.is_dir():
        return False
    _check_contents(root, root, replace)
    return True


def _check_contents(where: Path, root: Path, replace: bool) -> None:
    """Refuse to replace ``where`` (the directory ``root``, or it moved aside) unless it is empty, or an
    earlier tour and ``replace``: name the files the tour did not write."""
    foreign = _foreign(where)
    if foreign:
        if not (where / MARKER).is_file():
            raise FileExistsError(
                f"{root} exists and holds files that are not a micrograph tour; not replacing them "
                "(choose another directory)"
            )
        more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        raise FileExistsError(
            f"{root} exists and holds files the tour did not write ({', '.join(foreign[:3])}{more}); "
            "not replacing them, even with --force (move them away, or choose another directory)"
        )
    if any(where.iterdir()) and not replace:
        raise FileExistsError(f"{root} exists and holds an earlier tour; not replacing it without --force")


def _swap(new: Path, root: Path, *, replace: bool, existed: bool) -> None:
    """Move the finished tour into place (the caller holds the lock on the parent directory).

    The destination is checked again here: one that appeared during the run is replaced only with
    ``replace`` and only if it is empty or a tour; an earlier tour is first moved aside and checked there
    (nothing can be added to it under its old name meanwhile), and put back if anything foreign is in it.
    """
    (new / CLAIM).unlink()  # the finished tour holds the files it wrote and its marker only
    if not root.exists() and not root.is_symlink():
        os.rename(new, root)
        return
    if root.is_symlink() or not root.is_dir():
        raise NotADirectoryError(f"{root} exists and is not a directory")
    if not existed and not replace and any(root.iterdir()):
        raise FileExistsError(f"{root} exists: it was created while the tour ran; not replacing it")
    old = _claimed(root, "old")
    try:
        os.rename(root, old / "tour")
    except BaseException:
        (old / CLAIM).unlink()
        old.rmdir()
        raise
    try:
        _check_contents(old / "tour", root, replace)
        os.rename(new, root)
    except BaseException:
        os.rename(old / "tour", root)  # put the earlier directory back, whole
        (old / CLAIM).unlink()
        old.rmdir()
        raise
    shutil.rmtree(old, ignore_errors=True)


def _claimed(root: Path, what: str) -> Path:
    """A new hidden directory ``.NAME.WHAT-*`` beside ``root``, holding the tour's :data:`CLAIM`."""
    made = Path(tempfile.mkdtemp(dir=root.parent, prefix=f".{root.name}.{what}-"))
    try:
        (made / CLAIM).write_text("made by micrograph tour: removed when the tour ends or is found stale\n")
    except BaseException:
        shutil.rmtree(made, ignore_errors=True)
        raise
    return made


def _sweep_stale(root: Path) -> None:
    """Remove unfinished tours of ``root`` left by a killed run: directories the tour made (they hold its
    :data:`CLAIM`), older than an hour and not locked."""
    now = time.time()
    for prefix in (f".{root.name}.building-", f".{root.name}.old-"):
        for d in root.parent.glob(glob.escape(prefix) + "*"):
            try:
                claim = d / CLAIM
                if d.is_symlink() or not d.is_dir() or claim.is_symlink() or not claim.is_file():
                    continue
                if now - d.stat().st_mtime < STALE_SECONDS:
                    continue
                with _locked(d, wait=False):
                    shutil.rmtree(d)
            except (OSError, BlockingIOError):  # locked by a running tour, or already gone
                continue


@contextlib.contextmanager
def _locked(directory: Path, *, wait: bool = True) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``directory`` (a running tour's, or the parent during the swap).

    Raises:
        BlockingIOError: ``wait`` is False and another process holds the lock.
    """
    if fcntl is None:
        yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt while the tour runs, so its unfinished directory is removed."""

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: signals stay as they are
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _as_destination(e: OSError, building: Path, root: Path) -> OSError:
    """The error naming the file as the user will look for it: ``out/lesson1/...``, not the hidden copy."""
    name = str(e.filename or "")
    if e.errno is None or not name.startswith(str(building)):
        return e
    return type(e)(e.errno, e.strerror, str(root / Path(name).relative_to(building)))


@contextlib.contextmanager
def _naming(path: Path) -> Iterator[None]:
    """An OSError without a file name (a full disk says only "No space left on device") names ``path``."""
    try:
        yield
    except OSError as e:
        if e.filename is None and e.errno is not None:
            raise OSError(e.errno, e.strerror, str(path)) from e
        raise
