"""viz.animate: Algorithms 6.1 and 6.2 as a GIF or an MP4, one frame per step, and micrograph render."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import viz
from micrograph import Graph, Value
from micrograph.families import chain
from viz.frames import frames

iio = pytest.importorskip("imageio.v3")
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
MICROGRAPH = [sys.executable, "-m", "micrograph"]
ENV = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}


@needs_dot
def test_gif_has_one_frame_per_step_and_the_duration(tmp_path: Path) -> None:
    z, _ = chain(3)
    before = [(v.data, v.grad) for v in Graph(z).nodes]
    out = viz.animate(z, tmp_path / "bp.gif", frame_seconds=0.5)
    images = iio.imread(out, index=None)
    expected = len(frames(Graph(z)))  # 1 input + 3 nodes + return, seed + 3 iterations + return
    assert expected == 10 and images.shape[0] == expected
    assert images.shape[1] >= 100 and images.shape[2] >= 600  # the whole graph and its caption
    meta = iio.immeta(out, index=0)
    assert meta["duration"] == 500
    assert [(v.data, v.grad) for v in Graph(z).nodes] == before  # the graph is only observed
    # frames differ: the highlighted node moves and values appear
    assert len({images[k].tobytes() for k in range(expected)}) == expected


@needs_dot
def test_mp4_frames_and_size(tmp_path: Path) -> None:
    pytest.importorskip("imageio_ffmpeg")
    import imageio.v2 as iio2

    a, b = Value(2.0, label="a"), Value(-3.0, label="b")
    z = a * b + a
    out = viz.animate(z, tmp_path / "bp.mp4", frame_seconds=0.25)
    reader = iio2.get_reader(out)
    try:
        meta = reader.get_meta_data()
        count = reader.count_frames()
    finally:
        reader.close()
    assert count == len(frames(Graph(z)))
    assert meta["fps"] == 4.0
    assert meta["size"][0] % 16 == 0 and meta["size"][1] % 16 == 0


def test_bad_arguments(tmp_path: Path) -> None:
    z = Value(1.0) * 2
    with pytest.raises(ValueError, match=r"must end in \.gif or \.mp4"):
        viz.animate(z, tmp_path / "x.avi")
    with pytest.raises(ValueError, match="frame_seconds must be a positive number"):
        viz.animate(z, tmp_path / "x.gif", frame_seconds=0)
    with pytest.raises(TypeError, match="z must be a Value"):
        viz.animate(1.0, tmp_path / "x.gif")  # type: ignore[arg-type]
    (tmp_path / "x.gif").write_bytes(b"mine")
    with pytest.raises(FileExistsError):
        viz.animate(z, tmp_path / "x.gif", overwrite=False)
    assert (tmp_path / "x.gif").read_bytes() == b"mine"


@needs_dot
def test_micrograph_render_writes_gif(tmp_path: Path) -> None:
    out = tmp_path / "bp.gif"
    done = subprocess.run(
        [*MICROGRAPH, "render", "tanh(tanh(tanh(w)))", "--at", "w=0.5", "--out", str(out)],
        capture_output=True, timeout=300, check=False, env=ENV,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert iio.imread(out, index=None).shape[0] == 10
    again = subprocess.run(
        [*MICROGRAPH, "render", "tanh(w)", "--at", "w=0.5", "--out", str(out)],
        capture_output=True, timeout=120, check=False, env=ENV,
    )  # fmt: skip
    assert again.returncode == 2 and len(again.stderr.decode().strip().splitlines()) == 1
