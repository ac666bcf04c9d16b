"""The command never shows a traceback for a user's mistake, and never replaces what the user wrote.

Every case is a reproducer: an input that once gave a traceback (exit 1), wrote through a symlink, replaced
a file without --force, or left a half-written tour. A fuzz test runs a few hundred random and crafted
command lines (fixed seed) and accepts exit status 0 or 2 only, with no traceback.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import main, refused

from lessons import cli

ROOT = Path(__file__).resolve().parent.parent


BAD = [
    (["render", "1" + "0" * 320 + "*w", "--at", "w=0"], "too large for a float"),
    (["render", "tanh(1e999)*x", "--at", "x=1"], "too large for a float"),
    (["render", "w*2", "--at", "w=0.5", "--max-nodes", "0"], "--max-nodes"),
    (["render", "x", "--at", "x=1", "--at", "x=2"], "given twice"),
    (["render", "tahn(w)", "--at", "w=1"], "did you mean tanh?"),
    (["render", "sqrt(w)", "--at", "w=0", "--wrt", "w"], "the derivative of sqrt"),
    (["render", "w*2", "--at", "w=0.5", "--out", "no/such/dir/f.svg"], "does not exist"),
    (["render", "w*2", "--at", "w=0.5", "--out", "a" * 300 + ".svg"], "cannot write"),
    (["train", "iris", "--batch-size", "0"], "--batch-size"),
    (["train", "iris", "--lr", "inf"], "--lr"),
    (["train", "iris", "--l2", "-1"], "--l2"),
    (["train", "iris", "--l2", "nan"], "--l2"),
    (["blowup", "--budget", "0"], "--budget"),
    (["tour", "--out", "no/such/dir/tour"], "does not exist"),
]


NUMBERS = [
    (["train", "iris", "--epochs", "1e21"], "--epochs"),
    (["train", "iris", "--epochs", "1000000000000000000000"], "--epochs"),
    (["train", "iris", "--epochs", "9" * 5000], "--epochs"),
    (["train", "iris", "--hidden", "100000"], "--hidden"),
    (["train", "iris", "--batch-size", "-3"], "--batch-size"),
    (["train", "iris", "--seed", "-1"], "--seed"),
    (["train", "iris", "--seed", "1" * 40], "--seed"),
    (["train", "iris", "--lr", "1e400"], "--lr"),
    (["train", "iris", "--lr", "-0.1"], "--lr"),
    (["train", "iris", "--l2", "inf"], "--l2"),
    (["train", "iris", "--lr", "١"], "--lr"),
    (["blowup", "--budget", "1e300"], "--budget"),
    (["blowup", "--budget", "1" + "0" * 30], "--budget"),
    (["blowup", "--max-depth", "61"], "--max-depth"),
    (["render", "w", "--at", "w=1", "--max-nodes", "1" + "0" * 30], "--max-nodes"),
    (["steps", "w*2", "--at", "w=1", "--out", "p.html", "--max-nodes", "-1"], "--max-nodes"),
    (["explore", "w*2", "--at", "w=1", "--out", "p.html", "--max-nodes", "0"], "--max-nodes"),
]
"""Numeric options out of range, each an adversarial report's reproducer."""


@pytest.mark.parametrize("args, says", BAD + NUMBERS, ids=[" ".join(a)[:50] for a, _ in BAD + NUMBERS])
def test_a_mistake_is_one_line_and_exit_2(
    args: list[str],
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    refused(args, capsys, says)
    assert list(tmp_path.iterdir()) == []


def test_the_command_itself_exits_2_with_one_line(tmp_path: Path) -> None:
    for args in (["render", "w*2", "--at", "w=0.5", "--out", "/proc/f.svg"], ["train", "iris", "--lr", "0"]):
        done = subprocess.run(
            [sys.executable, "-m", "micrograph", *args], capture_output=True, text=True, cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_an_expression_may_start_with_a_minus(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = main(["render", "-x", "--at", "x=1"], capsys)
    assert status == 0 and "−u1" in out
    status, out, _ = main(["render", "--at", "x=2", "-x*x"], capsys)
    assert status == 0 and "-4.000" in out


def test_version_and_help_text(capsys: pytest.CaptureFixture[str]) -> None:
    from micrograph import __version__

    assert cli.main(["--version"]) == 0 and __version__ in capsys.readouterr().out
    assert cli.main(["train", "--help"]) == 0
    text = capsys.readouterr().out
    assert "70% train" in " ".join(text.split()) and "%%" not in text


def test_train_replaces_a_symlink_instead_of_writing_through_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    out = tmp_path / "D"
    out.mkdir()
    (out / "summary.json").symlink_to("../victim.txt")
    status, _, err = main(["train", "iris", "--epochs", "1", "--out", str(out), "--quiet"], capsys)
    assert status == 2 and "exist" in err  # without --force: refused
    status, _, err = main(["train", "iris", "--epochs", "1", "--out", str(out), "--force", "--quiet"], capsys)
    assert status == 0, err
    assert victim.read_text() == "mine\n"
    assert not (out / "summary.json").is_symlink() and "accuracy" in (out / "summary.json").read_text()


DIRECTORY_COMMANDS = [
    ["train", "iris", "--epochs", "1", "--quiet", "--out"],
    ["notebooks", "--out"],
    ["exercise", "autograder", "backprop", "--platform", "gradescope", "--out"],
    ["site", "--out"],
    ["tour", "--out"],
]


@pytest.mark.parametrize("command", DIRECTORY_COMMANDS, ids=lambda c: c[0])
def test_an_output_directory_is_never_a_symlink_and_its_parents_are_not_made(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("real").mkdir()
    Path("D").symlink_to("real")
    refused([*command, "D"], capsys, "D is a symlink; not writing through it")
    refused([*command, "D", "--force"], capsys, "symlink")
    refused([*command, "nope/deeper/out"], capsys, "does not exist")
    assert sorted(os.listdir()) == ["D", "real"] and os.listdir("real") == []


def test_the_tour_without_graphviz_says_so_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    err = refused(["tour", "--out", "t"], capsys, "Graphviz's 'dot' program is not on PATH")
    assert "apt-get install graphviz" in err and ".dot" not in err.replace("'dot'", "")
    assert os.listdir() == []


def test_render_without_graphviz_does_not_replace_an_existing_dot_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    monkeypatch.setattr(shutil, "which", lambda name: None)
    (tmp_path / "g.dot").write_text("mine\n")
    status, _, err = main(["render", "w*2", "--at", "w=0.5", "--out", str(tmp_path / "g.svg")], capsys)
    assert status == 2 and "Graphviz" in err
    assert (tmp_path / "g.dot").read_text() == "mine\n"


def _tour(tmp_path: Path, *args: str) -> tuple[int, str]:
    return cli.main(["tour", "--out", str(tmp_path / "T"), "--lessons", "1", "--quiet", *args]), ""


def test_tour_replaces_nothing_without_force_and_never_other_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = main(["tour", "--out", str(tmp_path / "T"), "--lessons", "1", "--quiet"], capsys)
    assert status == 0, err
    page = tmp_path / "T" / "lesson1" / "index.html"
    page.write_text("edited by hand\n")
    status, _, err = main(["tour", "--out", str(tmp_path / "T"), "--lessons", "1", "--quiet"], capsys)
    assert status == 2 and "--force" in err and page.read_text() == "edited by hand\n"
    status, _, err = main(
        ["tour", "--out", str(tmp_path / "T"), "--lessons", "1", "--quiet", "--force"], capsys
    )
    assert status == 0 and page.read_text() != "edited by hand\n"
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine\n")
    status, _, err = main(["tour", "--out", str(mine), "--lessons", "1", "--quiet", "--force"], capsys)
    assert status == 2 and "not a micrograph tour" in err and (mine / "notes.txt").read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["T", "mine"]  # no temporary directory left


def test_an_interrupted_tour_leaves_the_old_one_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lessons.publish import tour

    assert main(["tour", "--out", str(tmp_path / "T"), "--lessons", "1,2", "--quiet"], capsys)[0] == 0
    before = {p.relative_to(tmp_path): p.read_bytes() for p in (tmp_path / "T").rglob("*") if p.is_file()}

    def interrupted(*args: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(tour, "_flipbooks", interrupted)  # after every lesson's files were written
    status, _, err = main(
        ["tour", "--out", str(tmp_path / "T"), "--lessons", "1,2", "--quiet", "--force"], capsys
    )
    assert status == 2 and "interrupted" in err
    after = {p.relative_to(tmp_path): p.read_bytes() for p in (tmp_path / "T").rglob("*") if p.is_file()}
    assert after == before
    assert [p.name for p in tmp_path.iterdir()] == ["T"]


# --- fuzz: random and crafted command lines -----------------------------------------------------------

_ATOMS = ["x", "y", "2", "0.5", "-1", "1e308", "1e-308", "0", "1" + "0" * 400, "w", "tanh", "()", "x.y"]
_FUNCS = ["exp", "log", "tanh", "sigmoid", "relu", "sin", "cos", "sqrt", "tahn", "eval", "__import__", "open"]
_OPS = ["+", "-", "*", "/", "**", "//", "%", "@", "<", " and ", ","]


def _expression(rng: random.Random, depth: int = 0) -> str:
    r = rng.random()
    if depth > 3 or r < 0.3:
        return rng.choice(_ATOMS)
    if r < 0.55:
        return f"{_expression(rng, depth + 1)} {rng.choice(_OPS)} {_expression(rng, depth + 1)}"
    if r < 0.8:
        return f"{rng.choice(_FUNCS)}({_expression(rng, depth + 1)})"
    if r < 0.9:
        return f"-{_expression(rng, depth + 1)}"
    return rng.choice(["", " ", "x[0]", "lambda: 1", "'s'", "x if y else 2", "((x)", "x)", "#", "\\", "x;y"])


def _valid(rng: random.Random, depth: int = 0) -> str:
    if depth > 3 or rng.random() < 0.35:
        return rng.choice(["x", "y", "2", "0.5", "x"])
    if rng.random() < 0.5:
        return f"({_valid(rng, depth + 1)} {rng.choice(['+', '-', '*', '/', '**'])} {_valid(rng, depth + 1)})"
    return f"{rng.choice(_FUNCS[:8])}({_valid(rng, depth + 1)})"


def _command(rng: random.Random, tmp: Path) -> list[str]:
    kind = rng.choice(["render", "render", "valid", "valid", "blowup", "train", "lesson", "bogus"])
    if kind == "valid":  # well-formed: exit 0, or 2 where an operation leaves its domain
        text = _valid(rng)
        args = ["render", text] + [
            a for n, v in (("x", "0.7"), ("y", "-0.3")) if n in text for a in ("--at", f"{n}={v}")
        ]
        return args + (["--wrt", "x"] if "x" in text and rng.random() < 0.5 else [])
    if kind == "render":
        args = ["render", _expression(rng)]
        for name in rng.sample(["x", "y", "w", "z", "tanh", "1x"], rng.randint(0, 3)):
            args += ["--at", f"{name}={rng.choice(['1', '-2.5', '0', 'nan', 'inf', '1e400', 'a', ''])}"]
        if rng.random() < 0.3:
            args += ["--wrt", rng.choice(["x", "y", "q"])]
        if rng.random() < 0.2:
            args += ["--max-nodes", rng.choice(["0", "-1", "3", "x"])]
        if rng.random() < 0.2:
            args += ["--out", str(tmp / rng.choice(["f.svg", "f.txt", "no/dir/f.svg", "", "."]))]
        return args
    if kind == "blowup":
        return [
            "blowup",
            "--max-depth",
            rng.choice(["0", "3", "61", "x"]),
            "--budget",
            rng.choice(["0", "-5", "100"]),
        ]
    if kind == "train":
        return ["train", rng.choice(["iris", "nope"]), "--epochs", rng.choice(["0", "-1", "x"]),
                "--lr", rng.choice(["nan", "-1", "0"])]  # fmt: skip
    if kind == "lesson":
        return ["lesson", rng.choice(["0", "99", "-3", "x"])]
    return [rng.choice(["bogus", "--frobnicate", "", "render --help"])]


def test_fuzz_the_command_exits_0_or_2_and_never_shows_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    rng = random.Random(20261123)
    seen = {0: 0, 2: 0}
    for _ in range(300):
        args = _command(rng, tmp_path)
        try:
            status = cli.main(args)
        except SystemExit as e:  # argparse: a usage error (2) or --help (0)
            status = int(e.code or 0)
        _, err = capsys.readouterr()
        assert status in (0, 2), (args, err)
        assert "Traceback" not in err, (args, err)
        if status == 2:
            assert err.strip(), args
        seen[status] += 1
    assert seen[0] > 50 and seen[2] > 100  # the cases reach both outcomes
