"""Writing files safely: each file micrograph writes is written whole or not at all, never through a link.

:func:`write_atomic` puts the bytes in a temporary file in the destination's directory, then renames it
over the destination (``os.replace``), or links it into place where the destination must not exist yet.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1 (the drawings it writes).
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

__all__ = ["write_atomic"]


def _kept_mode(dest: Path) -> int:
    """The permission bits a file written to ``dest`` gets: those of the regular file it replaces (read
    without following a symlink; set-id and sticky bits dropped), else 0644."""
    try:
        st = os.lstat(dest)
    except OSError:
        return 0o644
    return stat.S_IMODE(st.st_mode) & 0o777 if stat.S_ISREG(st.st_mode) else 0o644


def write_atomic(
    path: str | os.PathLike[str], data: bytes, *, overwrite: bool = True, mode: int | None = None
) -> Path:
    """Write ``data`` to ``path`` atomically: a temporary file in the same directory, then a rename.

    Args:
        path: the destination; its directory must exist.
        data: the bytes to write.
        overwrite: if False and ``path`` exists, raise instead of replacing it (checked again at the rename,
            where the filesystem allows it, so a file created meanwhile is not clobbered).
        mode: the file's permissions, set before it gets its name (0o600: never readable by others, even
            for a moment); None keeps those of the regular file it replaces, else 0644.

    Returns:
        The destination as a Path.

    A symbolic link at ``path`` is replaced by the file, never written through: nothing outside the
    destination's directory is touched. A regular file at ``path`` keeps its permission bits (a private
    0600 file stays private); a new file gets 0644.

    Raises:
        FileExistsError: ``path`` exists and ``overwrite`` is False.
        FileNotFoundError: the directory does not exist.
        IsADirectoryError: ``path`` is a directory.
        OSError: the file cannot be written (a read-only directory, a name too long ...), naming ``path``.
    """
    dest = Path(path)
    if not overwrite and (dest.exists() or dest.is_symlink()):
        raise FileExistsError(f"{dest} exists; pass overwrite=True to replace it")
    if dest.is_dir() and not dest.is_symlink():
        raise IsADirectoryError(f"{dest} is a directory; give a file name such as {dest / 'graph.svg'}")
    directory = dest.parent
    if not directory.is_dir():
        raise FileNotFoundError(f"cannot write {dest}: the directory {directory} does not exist")
    mode = _kept_mode(dest) if mode is None else mode
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{dest.name}.", suffix=".tmp")
    except OSError as e:  # read-only, a name too long, a file system that refuses: name the destination
        raise type(e)(e.errno, e.strerror, str(dest)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        if overwrite:
            os.replace(tmp, dest)
        else:
            try:
                os.link(tmp, dest)  # fails if dest appeared meanwhile: never clobbers
            except FileExistsError:
                raise FileExistsError(f"{dest} exists; pass overwrite=True to replace it") from None
            except OSError:  # a filesystem without hard links
                os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return dest
