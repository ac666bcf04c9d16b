"""The command's edges, each reproducer of the adversarial reports as a test: one line, exit 2, never a
traceback; a numeric option out of range, a closed stdout, an option's value starting with a minus."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import main, refused

import lessons
from micrograph import nn

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _shell(words: str) -> subprocess.CompletedProcess[str]:
    """``python -m micrograph WORDS`` run by the shell, so that WORDS may close a stream (``>&-``)."""
    command = f"{sys.executable} -m micrograph {words}"
    return subprocess.run(["sh", "-c", command], capture_output=True, text=True, env=ENV, timeout=120)


@pytest.mark.parametrize("shell", ["--version >&-", "lesson >&-", "render 'w*2' --at w=1 >&-"])
def test_a_closed_stdout_is_one_line_and_exit_2(shell: str) -> None:
    done = _shell(shell)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr == "micrograph: error: standard output is closed; nothing can be shown\n"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full, a device that is always full")
@pytest.mark.parametrize("shell", ["--version", "--help", "lesson 2", "render 'w*2' --at w=1"])
def test_a_full_standard_output_is_named_in_one_line(shell: str) -> None:
    done = _shell(f"{shell} > /dev/full")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr == "micrograph: error: cannot write standard output: No space left on device\n"


def test_a_closed_stderr_still_runs() -> None:
    done = _shell("--version 2>&-")
    assert done.returncode == 0 and done.stdout.startswith("micrograph ")


def test_every_lesson_runs_on_a_variable_alone(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = main(["lesson", "1", "--expr", "w", "--at", "w=1"], capsys)
    assert status == 0 and "Traceback" not in err, err
    assert "n_i = 1" in out
    refused(["lesson", "1", "--expr", "3"], capsys, "no variable")
    for n in (1, 2, 6, 7):
        l = lessons.start(n, expr="w", at={"w": 1})  # noqa: E741 - the lessons' name for a stepper
        steps = 1
        while not isinstance(l.next(), str):
            steps += 1
        assert l.at_end and steps >= 2


@pytest.mark.parametrize("command", ["render", "explore"])
def test_an_output_name_starting_with_a_minus_is_written_as_given(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    name = "-o.svg" if command == "render" else "-o.html"
    status, _, err = main([command, "w*2", "--at", "w=1", "--out", name], capsys)
    assert status == 0, err
    assert [p.name for p in tmp_path.iterdir()] == [name]
    status, _, err = main([command, "w*2", "--at", "w=1", "--out", "--force"], capsys)
    assert status == 2 and "--out" in err  # a forgotten value is not filled with the next option


def test_a_large_network_is_refused_before_it_is_allocated() -> None:
    with pytest.raises(ValueError, match=r"MLP\(nin, nouts\).*at most 10,000,000"):
        nn.MLP(2, [2**53 + 1])
    with pytest.raises(ValueError, match="parameters"):
        nn.MLP(2, [4000, 4000])
    with pytest.raises(ValueError, match=r"Layer\(nin, nout\)"):
        nn.Layer(10**7, 2)
    with pytest.raises(ValueError, match=r"Neuron\(nin\)"):
        nn.Neuron(10**8)
    assert len(nn.MLP(3, [8, 2]).parameters()) == 4 * 8 + 9 * 2


def test_a_huge_exponent_is_shown_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = main(["render", "w**1e308", "--at", "w=1"], capsys)
    assert status == 0 and "u1^1e+308" in out and "0000000000" not in out
    status, out, _ = main(["render", "w**3", "--at", "w=1"], capsys)
    assert status == 0 and "u1^3 " in out


def test_a_variable_given_twice_to_wrt_is_one(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = main(["render", "w*w", "--at", "w=3", "--wrt", "w", "--wrt", "w"], capsys)
    assert status == 0 and out.count("dz/dw = 6") == 1


@pytest.mark.parametrize(
    "args",
    [
        ["train", "iris", "--out", ""],
        ["render", "w", "--at", "w=1", "--out", ""],
        ["tour", "--out", " "],
        ["blowup", "--out", ""],
        ["notebooks", "--out", ""],
    ],
)
def test_an_empty_output_name_isrefused(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    refused(args, capsys, "empty")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("digits", ["١٢", "１２", "½"])
def test_a_value_is_read_in_the_digits_0_to_9_only(digits: str, capsys: pytest.CaptureFixture[str]) -> None:
    refused(["render", "w*2", "--at", f"w={digits}"], capsys, "not a number")


def test_notebooks_without_nbformat_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "nbformat", None)  # import nbformat raises ImportError
    monkeypatch.chdir(tmp_path)
    refused(["notebooks", "--out", "nb"], capsys, "nbformat")
    assert list(tmp_path.iterdir()) == []


FULL_DISK = {
    "render": (
        ["render", "w*2", "--at", "w=1", "--out", "{d}/z.tex"],
        "cannot write {d}/z.tex: No space left",
    ),
    "tour": (["tour", "--out", "{d}/T", "--lessons", "1", "--quiet"], "{d}/T/"),
}
"""A command that writes a file, and what its error on a full disk says: the file, or the tour's folder."""


@pytest.mark.parametrize("command", sorted(FULL_DISK))
def test_a_full_disk_names_the_output_file(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    args, names = FULL_DISK[command]
    err = refused([a.format(d=tmp_path) for a in args], capsys, names.format(d=tmp_path))
    assert "No space left on device" in err and ".building-" not in err
    assert list(tmp_path.iterdir()) == []  # no file, no half-built tour


def test_the_parser_is_built_without_importing_what_the_commands_use() -> None:
    """--help is cheap: building the parser loads neither the drawing layer, the lessons' machinery, the
    exercises nor any heavy library; each subcommand imports those when it runs."""
    heavy = ("viz", "lessons.stepper", "lessons.exercises", "lessons.publish.tour", "lessons.publish.site",
             "matplotlib", "graphviz", "tqdm", "nbformat", "micrograph.nn", "micrograph.compile")  # fmt: skip
    code = (
        "import sys; from lessons import cli; cli.build_parser(); "
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=120)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
