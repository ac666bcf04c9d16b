"""Writing drawings to files: SVG, PNG, PDF or DOT source, atomically, with a clear message without Graphviz.

Every file is written by :func:`viz.files.write_atomic`, so an interrupted render leaves either the old file
or the new one, never half an SVG. :func:`svg_element` is the one place an SVG loses its XML prolog.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1 (drawing graphs).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import graphviz

from micrograph.errors import typed_repr
from viz.files import write_atomic

__all__ = [
    "render", "pipe_svg", "pipe_svgs", "svg_element", "GraphvizMissing", "GraphvizFailed", "FORMATS",
    "INSTALL_HINT", "dot_available", "set_layout",
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
            f"got {typed_repr(dot)}"
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
    if done.returncode < 0:  # killed by a signal: dot itself crashed (2.43 does on some large graphs)
        raise GraphvizFailed(
            f"Graphviz's dot crashed ({_signal_name(-done.returncode)}) laying out {dest}, a drawing of "
            f"{dot.source.count('->')} edges: draw a smaller graph, or install a newer Graphviz"
        )
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


_PROLOG = re.compile(r"^.*?(?=<svg)", re.S)


def svg_element(svg: str) -> str:
    """An SVG document as the ``<svg>`` element alone, ready to inline in HTML or a notebook: the XML
    prolog, DOCTYPE and comments before it removed (a text without ``<svg`` is returned as it is)."""
    return _PROLOG.sub("", svg, count=1)


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


def pipe_svgs(dots: Sequence[graphviz.Digraph], processes: int = 2) -> list[str]:
    """The SVG text of each drawing, in order: :func:`pipe_svg` for many drawings, at most ``processes`` runs
    of ``dot`` at once (one by one with a layout set by :func:`set_layout`: a browser's Python has no
    threads and no ``dot``).

    Each drawing has a run of its own, although a run takes about 10 ms to start: one run over several
    graphs lays a later graph with clusters out differently from the same graph alone (Graphviz 2.43), and
    a drawing must not depend on what was drawn before it.

    Args:
        dots: the drawings (graphviz Digraphs). processes: the most ``dot`` runs at once (1 or more).

    Raises:
        ValueError: ``processes`` is less than 1.
        GraphvizMissing: no ``dot`` program and no layout set by :func:`set_layout`.
        RuntimeError: Graphviz failed or timed out on a drawing.
    """
    if processes < 1:
        raise ValueError(f"processes must be 1 or more, got {processes!r}")
    dots = list(dots)
    if _LAYOUT or len(dots) < 2 or processes == 1 or sys.platform == "emscripten":
        return [pipe_svg(d) for d in dots]
    with ThreadPoolExecutor(max_workers=processes) as pool:
        return list(pool.map(pipe_svg, dots))


def _signal_name(number: int) -> str:
    """``SIGSEGV`` for 11, or ``signal N`` for a number this system does not name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
