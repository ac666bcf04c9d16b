"""Writing drawings to files: SVG, PNG, PDF or DOT source, atomically, with a clear message without Graphviz.

Every file micrograph's visualizer writes goes through :func:`write_atomic`: the bytes go to a temporary
file in the destination's directory, which is then renamed over the destination (``os.replace``), so an
interrupted render leaves either the old file or the new one, never half an SVG.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1 (drawing graphs).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import graphviz

__all__ = [
    "render", "write_atomic", "pipe_svg", "GraphvizMissing", "GraphvizFailed", "FORMATS", "INSTALL_HINT",
    "dot_available", "set_layout",
]  # fmt: skip

FORMATS = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".dot": "dot", ".gv": "dot"}
"""File suffix -> output format."""

INSTALL_HINT = (
    "Install Graphviz's 'dot' program: `sudo apt-get install graphviz` (Debian/Ubuntu), "
    "`brew install graphviz` (macOS), or `conda install -c conda-forge graphviz`; "
    "the Python package alone (`pip install graphviz`) does not include it."
)

TIMEOUT_SECONDS = 120.0
"""Graphviz is stopped after this long (it can take minutes on a big graph; see viz.GraphTooLarge)."""


class GraphvizMissing(RuntimeError):
    """Graphviz's ``dot`` program is not installed: the ``.dot`` source was written instead.

    Attributes:
        dot_path (Path): where the DOT source was written.
    """

    def __init__(self, dot_path: Path | None = None, requested: Path | None = None) -> None:
        self.dot_path = dot_path
        if dot_path is None or requested is None:
            super().__init__("Graphviz's 'dot' program is not on PATH: no graph layout. " + INSTALL_HINT)
            return
        super().__init__(
            f"cannot write {requested}: Graphviz's 'dot' program is not on PATH. The graph's DOT source "
            f"was written to {dot_path} instead (render it later with `dot -T{requested.suffix[1:]} "
            f"{dot_path.name} -o {requested.name}`). {INSTALL_HINT}"
        )


class GraphvizFailed(RuntimeError):
    """Graphviz's ``dot`` ran but failed, or took longer than :data:`TIMEOUT_SECONDS` and was stopped."""


def dot_available() -> bool:
    """True if Graphviz's ``dot`` program is on PATH."""
    return shutil.which("dot") is not None


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


def render(
    dot: graphviz.Digraph | graphviz.Graph,
    path: str | os.PathLike[str],
    *,
    overwrite: bool = True,
    dpi: int | None = None,
) -> Path:
    """Write a drawing to ``path``, in the format its suffix names: ``.svg``, ``.png``, ``.pdf`` or ``.dot``.

    Runs Graphviz's ``dot`` program (``.dot``/``.gv`` need none) and writes its output atomically.

    Args:
        dot: a drawing, e.g. from :func:`viz.draw` or :func:`viz.draw_side_by_side`.
        path: the file to write; its directory must exist.
        overwrite: if False, an existing file is an error.
        dpi: dots per inch of a PNG (Graphviz's default is 96); a graph w points wide is
            ``round(w * dpi / 72)`` pixels wide. Ignored for SVG, PDF and DOT.

    Returns:
        The path written, a Path.

    Raises:
        TypeError: ``dot`` is not a drawing.
        ValueError: an unknown suffix, or a dpi that is not a positive number.
        FileExistsError: the file exists and ``overwrite`` is False.
        GraphvizMissing: ``dot`` is not installed (a RuntimeError); the DOT source has then been written
            next to ``path`` with the suffix ``.dot``, and the message says how to install Graphviz.
        GraphvizFailed: Graphviz failed or took longer than two minutes (a RuntimeError).
    """
    if not isinstance(dot, (graphviz.Digraph, graphviz.Graph)):
        raise TypeError(
            f"render(dot, path): dot must be a drawing such as viz.draw(z) (a graphviz Digraph), "
            f"got {type(dot).__name__} {dot!r}"
        )
    dest = Path(path)
    fmt = FORMATS.get(dest.suffix.lower())
    if fmt is None:
        raise ValueError(f"cannot tell the format of {dest}: use one of the suffixes {', '.join(FORMATS)}")
    if dpi is not None and (not isinstance(dpi, (int, float)) or dpi <= 0):
        raise ValueError(f"dpi must be a positive number, got {dpi!r}")
    if not overwrite and dest.exists():
        raise FileExistsError(f"{dest} exists; pass overwrite=True to replace it")
    source = dot.source.encode("utf-8")
    if fmt == "dot":
        return write_atomic(dest, source, overwrite=overwrite)
    exe = shutil.which("dot")
    if exe is None:
        dot_path = dest.with_suffix(".dot")
        if not overwrite and (dot_path.exists() or dot_path.is_symlink()):
            raise GraphvizMissing(None, dest)  # the fallback would replace a file: nothing is written
        write_atomic(dot_path, source, overwrite=overwrite)
        raise GraphvizMissing(dot_path, dest)
    args = [exe, f"-T{fmt}"]
    if dpi is not None and fmt == "png":
        args.append(f"-Gdpi={dpi}")
    try:
        done = subprocess.run(args, input=source, capture_output=True, timeout=TIMEOUT_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise GraphvizFailed(
            f"Graphviz took more than {TIMEOUT_SECONDS:.0f} s to lay out {dest} and was stopped. "
            "Draw a smaller graph (see max_nodes)."
        ) from None
    if done.returncode != 0:
        first = done.stderr.decode("utf-8", "replace").strip().splitlines()[:1] or ["no message"]
        raise GraphvizFailed(f"Graphviz failed on {dest}: {first[0]}")
    return write_atomic(dest, done.stdout, overwrite=overwrite)


_LAYOUT: list[Callable[[str], str]] = []


def set_layout(layout: Callable[[str], str] | None) -> None:
    """Lay drawings out with ``layout(dot_source) -> svg_text`` instead of the ``dot`` program.

    In a browser (micrograph running in Pyodide) there is no ``dot`` program: the page lays drawings out
    with Graphviz compiled to WebAssembly and hands :func:`pipe_svg` that function. ``None`` restores the
    ``dot`` program.
    """
    _LAYOUT[:] = [] if layout is None else [layout]


def pipe_svg(dot: graphviz.Digraph) -> str:
    """The SVG text of a drawing (for inlining in HTML and for Jupyter).

    Raises:
        GraphvizMissing: no ``dot`` program (nothing is written) and no layout set by :func:`set_layout`.
        RuntimeError: Graphviz failed or timed out.
    """
    if _LAYOUT:
        return _LAYOUT[0](dot.source)
    exe = shutil.which("dot")
    if exe is None:
        raise GraphvizMissing()
    try:
        done = subprocess.run([exe, "-Tsvg"], input=dot.source.encode("utf-8"), capture_output=True,
                              timeout=TIMEOUT_SECONDS, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"Graphviz took more than {TIMEOUT_SECONDS:.0f} s; it was stopped") from None
    if done.returncode != 0:
        raise RuntimeError(f"Graphviz failed: {done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout.decode("utf-8")
