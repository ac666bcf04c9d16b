"""Algorithms 6.1 and 6.2 as an animation for slides: a GIF or an MP4, one frame per step.

The frames are those of :func:`viz.frames.frames` (the engine's Algorithm 6.1 and 6.2 observed, not copied),
each drawn by :func:`viz.dot.digraph` with the step's node highlighted and its explanation as the title,
rendered to PNG by Graphviz, padded to one size, and written by imageio (GIF with Pillow, MP4 with the
ffmpeg binary that the imageio-ffmpeg wheel ships). Needs the ``slides`` extra:
``pip install 'micrograph[slides]'``.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithms 6.1 and 6.2.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from micrograph.engine import Value
from micrograph.errors import typed_repr
from micrograph.graph import Graph
from viz.dot import check_size, digraph
from viz.files import write_atomic
from viz.frames import frames
from viz.render import TIMEOUT_SECONDS, GraphvizFailed, GraphvizMissing

__all__ = ["animate"]

FORMATS = (".gif", ".mp4")


def _png(dot: Any, dpi: int) -> bytes:
    exe = shutil.which("dot")
    if exe is None:
        raise GraphvizMissing()
    done = subprocess.run(
        [exe, "-Tpng", f"-Gdpi={dpi}", "-Gbgcolor=white"], input=dot.source.encode("utf-8"),
        capture_output=True, timeout=TIMEOUT_SECONDS, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise GraphvizFailed(f"Graphviz failed: {done.stderr.decode('utf-8', 'replace').strip()[:200]}")
    return done.stdout


def animate(
    z: Value,
    path: str | os.PathLike[str],
    *,
    frame_seconds: float = 1.0,
    dpi: int = 96,
    overwrite: bool = True,
    max_nodes: int = 40,
) -> Path:
    """Write the frames of Algorithms 6.1 and 6.2 on the graph of z as an animated GIF or an MP4.

    One frame per step of :func:`viz.frames.frames`: the inputs, each computed node, Algorithm 6.1's
    return, the seed grad_table[z] = 1, each iteration j of Algorithm 6.2 and its return; the node of the
    step is highlighted and the step's explanation is the caption. Frames are padded (white) to the size of
    the largest; an MP4's size is rounded up to a multiple of 16 pixels, as video codecs need.

    Args:
        z: the output u(n), a Value; its graph is not changed.
        path: the file to write, ending in ``.gif`` or ``.mp4`` (written atomically).
        frame_seconds: how long each frame is shown, in seconds (> 0).
        dpi: the resolution of the frames (Graphviz's points to pixels: ``w * dpi / 72``).
        overwrite: if False, an existing file is an error.
        max_nodes: the largest graph animated (every frame draws the whole graph).

    Returns:
        The path written.

    Raises:
        TypeError: z is not a Value.
        ValueError: another suffix; frame_seconds or dpi not positive.
        FileExistsError: the file exists and ``overwrite`` is False.
        GraphTooLarge: the graph has more than ``max_nodes`` nodes.
        GraphvizMissing, GraphvizFailed: Graphviz's ``dot`` is missing or failed.
        ModuleNotFoundError: imageio (or imageio-ffmpeg for MP4) is not installed; the message names the
            ``slides`` extra.
        DomainError: an operation or local derivative is undefined at the graph's values.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithms 6.1 and 6.2.
    """
    if not isinstance(z, Value):
        raise TypeError(f"animate(z, path): z must be a Value, got {typed_repr(z)}")
    dest = Path(path)
    suffix = dest.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"animate: cannot write {dest}: the file name must end in .gif or .mp4")
    number = isinstance(frame_seconds, (int, float)) and not isinstance(frame_seconds, bool)
    if not number or not frame_seconds > 0:
        raise ValueError(f"animate: frame_seconds must be a positive number (seconds), got {frame_seconds!r}")
    if isinstance(dpi, bool) or not isinstance(dpi, int) or dpi <= 0:
        raise ValueError(f"animate: dpi must be a positive int, got {dpi!r}")
    if not overwrite and dest.exists():
        raise FileExistsError(f"{dest} exists; pass overwrite=True to replace it")
    try:
        import imageio.v3 as iio
        import numpy as np
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError(
            f"animate needs imageio ({e.name} is missing): pip install 'micrograph[slides]'"
        ) from None
    graph = Graph(z)
    check_size(len(graph.nodes), max_nodes)
    images = []
    for k, f in enumerate(fs := frames(graph), 1):
        title = f"Algorithm {f.algorithm}, step {k} of {len(fs)}: {f.explanation}"
        title = title if len(title) <= 110 else title[:107] + "..."
        dot = digraph(graph, data=f.values, grads=f.grads, title=title,
                      highlight=[] if f.node is None else [graph.nodes[f.node]])  # fmt: skip
        image = iio.imread(io.BytesIO(_png(dot, dpi)), extension=".png")
        images.append(image[..., :3] if image.ndim == 3 else np.stack([image] * 3, axis=-1))
    height = max(im.shape[0] for im in images)
    width = max(im.shape[1] for im in images)
    if suffix == ".mp4":
        height, width = -(-height // 16) * 16, -(-width // 16) * 16
    stack = np.full((len(images), height, width, 3), 255, dtype=np.uint8)
    for k, im in enumerate(images):
        stack[k, : im.shape[0], : im.shape[1]] = im
    if suffix == ".gif":
        data = iio.imwrite("<bytes>", stack, extension=".gif", duration=frame_seconds * 1000, loop=0)
    else:
        try:
            import imageio.v2 as iio2
            import imageio_ffmpeg  # noqa: F401  (the ffmpeg binary)
        except ModuleNotFoundError as e:
            raise ModuleNotFoundError(
                f"animate to .mp4 needs imageio-ffmpeg ({e.name} is missing): "
                "pip install 'micrograph[slides]'"
            ) from None
        with tempfile.TemporaryDirectory() as tmp:
            video = Path(tmp) / "frames.mp4"
            writer = iio2.get_writer(video, fps=1.0 / frame_seconds, codec="libx264", macro_block_size=16)
            try:
                for frame in stack:
                    writer.append_data(frame)
            finally:
                writer.close()
            data = video.read_bytes()
    return write_atomic(dest, data, overwrite=overwrite)
