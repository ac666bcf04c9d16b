"""A published directory (the tour's, the site's): built beside ``--out`` in a hidden directory, swapped in
whole under a lock.

:func:`built_beside` gives the command a new directory ``.NAME.building-*`` beside ``out``, locked while it
is built, and moves it into place at the end, so ``out`` holds either the earlier directory or the new one,
whole, even if the run is interrupted (Ctrl-C or SIGTERM remove the unfinished directory; after a SIGKILL,
the next run beside it removes the unfinished directory once it is an hour old, no run holds its lock, and
it holds the kind's claim (:attr:`Kind.claim`), written the moment the directory is made: a directory of the
user's whose name merely looks like one, such as ``.out.old-mybackup``, is never swept). Every finished
directory holds a marker (:attr:`Kind.marker`, written by :func:`mark`) listing the files it wrote: an
existing ``out`` is replaced only if every file in it is listed there, or it is empty, so files added by
hand are never deleted. The check is made again at the moment of the swap, under a lock on the parent
directory. The two kinds are :data:`TOUR` (``micrograph tour``) and :data:`SITE` (``micrograph site``).
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # not POSIX: no locks (concurrent runs are then checked at the swap only)
    fcntl = None  # type: ignore[assignment]

__all__ = ["SITE", "STALE_SECONDS", "TOUR", "Kind", "built_beside", "mark"]


@dataclass(frozen=True)
class Kind:
    """What a command publishes as a whole directory, and the files that say a directory is its own.

    Attributes:
        name: the command's word for it (``"tour"``), as the errors say it.
        marker: the file in every finished directory listing the files written there: a directory without
            it is not replaced (it may hold the user's files).
        legacy: the whole text of the markers earlier versions wrote without a list: a directory holding
            one of them was written, whole, by the command.
    """

    name: str
    marker: str
    legacy: tuple[str, ...] = ()

    @property
    def claim(self) -> str:
        """A file in each hidden directory made beside ``--out`` (the one built in, the one an earlier
        directory is moved aside to), written as the directory is made: only a directory holding it is
        ever swept."""
        return f"{self.marker}-work"

    @property
    def head(self) -> str:
        """The marker's first line."""
        return f"written by micrograph {self.name}; the files it wrote:\n"


TOUR = Kind("tour", ".micrograph-tour")
"""The tour (``micrograph tour``, :mod:`lessons.publish.tour`)."""

SITE = Kind(
    "site",
    ".micrograph-site",
    legacy=("built by `micrograph site`; `micrograph site --force` replaces this directory\n",),
)
"""The browser edition (``micrograph site``, :mod:`lessons.publish.site`)."""


@contextlib.contextmanager
def built_beside(root: Path, *, replace: bool, kind: Kind) -> Iterator[Path]:
    """A new directory to build ``kind`` in, beside ``root``; moved into place when the block ends.

    An existing ``root`` is replaced only with ``replace``, and only if every file in it is one the earlier
    run wrote (listed in its :attr:`Kind.marker`) or it is empty. If the block raises (SIGTERM included, as
    a KeyboardInterrupt), the new directory is removed and ``root`` is left as it was.

    Args:
        root: the directory to publish into; its parent directory must exist.
        replace: replace an earlier directory of ``kind`` (the command's ``--force``).
        kind: :data:`TOUR` or :data:`SITE`: the marker and claim files, and the word in the errors.

    Raises:
        FileExistsError: ``root`` holds an earlier directory of ``kind`` and ``replace`` is False, or files
            the command did not write, or it appeared while the command ran.
        FileNotFoundError: the parent directory of ``root`` does not exist.
        NotADirectoryError: ``root`` exists and is not a directory, or it is a symbolic link.
        OSError: a file cannot be written (its ``filename`` names it under ``root``, not the hidden copy).
    """
    existed = _check_destination(root, replace, kind)
    _sweep_stale(root, kind)
    building = _claimed(root, "building", kind)
    with _locked(building), _terminate_as_interrupt():
        try:
            yield building
            with _locked(root.parent):
                _swap(building, root, replace=replace, existed=existed, kind=kind)
        except OSError as e:
            shutil.rmtree(building, ignore_errors=True)
            raise _as_destination(e, building, root) from e
        except BaseException:
            shutil.rmtree(building, ignore_errors=True)
            raise


def mark(building: Path, files: list[Path], kind: Kind) -> None:
    """Write the :attr:`Kind.marker` of a finished directory, listing ``files`` (paths inside
    ``building``), and make the directory readable by others, as a directory made by hand would be.

    Raises:
        OSError: the marker cannot be written (its ``filename`` names it).
    """
    from viz.files import write_atomic

    listed = "".join(f"{Path(f).relative_to(building).as_posix()}\n" for f in files)
    with _naming(building / kind.marker):
        write_atomic(building / kind.marker, (kind.head + listed).encode("utf-8"), overwrite=False)
    os.chmod(building, 0o755)


STALE_SECONDS = 3600
"""Seconds after which an unlocked, unfinished ``.NAME.building-*`` directory is removed by a new run."""


def _foreign(root: Path, kind: Kind) -> list[str]:
    """The entries of an earlier directory that the command did not write (relative paths, sorted).

    The :attr:`Kind.marker` lists the files it wrote; a directory without the marker (or with an unknown
    one) is foreign as a whole unless it is empty; one with a :attr:`Kind.legacy` marker is not foreign.
    """
    entries = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    if not entries:
        return []
    try:
        text = (root / kind.marker).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return entries
    if text in kind.legacy:
        return []
    head, *listed = text.splitlines()
    if head + "\n" != kind.head:
        return entries
    allowed = {kind.marker, *listed}
    for f in listed:
        allowed.update(p.as_posix() for p in Path(f).parents if p != Path("."))
    return [e for e in entries if e not in allowed]


def _check_destination(root: Path, replace: bool, kind: Kind) -> bool:
    """Refuse what :func:`built_beside` must not replace; return whether ``root`` exists now.

    Raises:
        FileNotFoundError, NotADirectoryError, FileExistsError: as :func:`built_beside` says.
    """
    if not root.parent.is_dir():
        raise FileNotFoundError(
            f"cannot write the {kind.name} into {root}: the directory {root.parent} does not exist"
        )
    _refuse_non_directory(root)
    if not root.is_dir():
        return False
    _check_contents(root, root, replace, kind)
    return True


def _refuse_non_directory(root: Path) -> None:
    """Refuse a ``root`` that is a symbolic link or no directory (it is never written through).

    Raises:
        NotADirectoryError: it names ``root``.
    """
    if root.is_symlink():
        raise NotADirectoryError(f"{root} is a symlink; not writing through it")
    if root.exists() and not root.is_dir():
        raise NotADirectoryError(f"{root} exists and is not a directory")


def _check_contents(where: Path, root: Path, replace: bool, kind: Kind) -> None:
    """Refuse to replace ``where`` (the directory ``root``, or it moved aside) unless it is empty, or an
    earlier directory of ``kind`` and ``replace``: name the files the command did not write."""
    foreign = _foreign(where, kind)
    if foreign:
        if not (where / kind.marker).is_file():
            raise FileExistsError(
                f"{root} exists and holds files that are not a micrograph {kind.name}; not replacing them "
                "(choose another directory)"
            )
        more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        raise FileExistsError(
            f"{root} exists and holds files the {kind.name} did not write ({', '.join(foreign[:3])}{more}); "
            "not replacing them, even with --force (move them away, or choose another directory)"
        )
    if any(where.iterdir()) and not replace:
        raise FileExistsError(
            f"{root} exists and holds an earlier {kind.name}; not replacing it without --force"
        )


def _swap(new: Path, root: Path, *, replace: bool, existed: bool, kind: Kind) -> None:
    """Move the finished directory into place (the caller holds the lock on the parent directory).

    The destination is checked again here: one that appeared during the run is replaced only with
    ``replace`` and only if it is empty or of ``kind``; an earlier one is first moved aside and checked
    there (nothing can be added to it under its old name meanwhile), and put back if anything foreign is in
    it.
    """
    (new / kind.claim).unlink()  # the finished directory holds the files written and its marker only
    if not root.exists() and not root.is_symlink():
        os.rename(new, root)
        return
    _refuse_non_directory(root)
    if not existed and not replace and any(root.iterdir()):
        raise FileExistsError(
            f"{root} exists: it was created while the {kind.name} was built; not replacing it"
        )
    old = _claimed(root, "old", kind)
    try:
        os.rename(root, old / kind.name)
    except BaseException:
        (old / kind.claim).unlink()
        old.rmdir()
        raise
    try:
        _check_contents(old / kind.name, root, replace, kind)
        os.rename(new, root)
    except BaseException:
        os.rename(old / kind.name, root)  # put the earlier directory back, whole
        (old / kind.claim).unlink()
        old.rmdir()
        raise
    shutil.rmtree(old, ignore_errors=True)


def _claimed(root: Path, what: str, kind: Kind) -> Path:
    """A new hidden directory ``.NAME.WHAT-*`` beside ``root``, holding the :attr:`Kind.claim`."""
    made = Path(tempfile.mkdtemp(dir=root.parent, prefix=f".{root.name}.{what}-"))
    try:
        (made / kind.claim).write_text(
            f"made by micrograph {kind.name}: removed when the {kind.name} is built or found stale\n"
        )
    except BaseException:
        shutil.rmtree(made, ignore_errors=True)
        raise
    return made


def _sweep_stale(root: Path, kind: Kind) -> None:
    """Remove unfinished directories of ``root`` left by a killed run: directories the command made (they
    hold the :attr:`Kind.claim`), older than an hour and not locked."""
    now = time.time()
    for prefix in (f".{root.name}.building-", f".{root.name}.old-"):
        for d in root.parent.glob(glob.escape(prefix) + "*"):
            try:
                claim = d / kind.claim
                if d.is_symlink() or not d.is_dir() or claim.is_symlink() or not claim.is_file():
                    continue
                if now - d.stat().st_mtime < STALE_SECONDS:
                    continue
                with _locked(d, wait=False):
                    shutil.rmtree(d)
            except (OSError, BlockingIOError):  # locked by a running build, or already gone
                continue


@contextlib.contextmanager
def _locked(directory: Path, *, wait: bool = True) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``directory`` (a running build's, or the parent during the swap).

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
    """SIGTERM raises KeyboardInterrupt while the directory is built, so the unfinished one is removed."""

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
