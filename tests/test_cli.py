"""The ``micrograph`` command: each subcommand, --help everywhere; every user error exits 2 with one line."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import run_micrograph

from lessons.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
SUBCOMMANDS = [
    "tour", "lesson", "render", "steps", "explore", "notebooks", "blowup", "train", "exercise", "site",
]  # fmt: skip


def _user_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run main(argv); assert exit status 2, a 'micrograph: error:' first line and no traceback."""
    capsys.readouterr()  # forget what earlier calls printed
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("micrograph: error: "), err
    assert "Traceback" not in err
    return err


# --- help ----------------------------------------------------------------------------------------------


def test_help_on_the_command_and_every_subcommand():
    done = run_micrograph("--help")
    assert done.returncode == 0
    for sub in SUBCOMMANDS:
        assert sub in done.stdout
    for sub in SUBCOMMANDS:
        done = run_micrograph(sub, "--help")
        assert done.returncode == 0, sub
        assert f"usage: micrograph {sub}" in done.stdout


def test_no_arguments_prints_help():
    done = run_micrograph()
    assert done.returncode == 0 and "tour" in done.stdout


def test_bad_usage_is_one_line_and_status_2():
    done = run_micrograph("render")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "error:" in done.stderr
    done = run_micrograph("frobnicate")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1


def test_parser_has_every_subcommand():
    assert set(build_parser().commands) == set(SUBCOMMANDS)


# --- render --------------------------------------------------------------------------------------------


def test_render_figure_6_10_side_by_side(tmp_path, capsys):
    out = tmp_path / "fig_6_10.svg"
    assert main(["render", "tanh(tanh(tanh(w)))", "--at", "w=0.5", "--wrt", "w", "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    assert f"wrote {out}" in stdout
    assert "dz/dw = 0.533912" in stdout  # computed: d/dw tanh(tanh(tanh(w))) at 0.5
    text = "".join(ET.parse(out).getroot().itertext())
    assert "forward graph G" in text and "backward subgraph B" in text


def test_render_without_wrt_draws_G_only(tmp_path, capsys):
    out = tmp_path / "g.svg"
    assert main(["render", "x*y + exp(x)", "--at", "x=1", "--at", "y=2", "--out", str(out)]) == 0
    text = "".join(ET.parse(out).getroot().itertext())
    assert "backward subgraph B" not in text and "exp" in text


def test_steps_refuses_g_and_b_too_large_in_one_sentence(tmp_path, capsys):
    """G alone fits (31 nodes) but not G beside B: the message says so, as a sentence, with the size."""
    expr = "tanh(" * 30 + "w" + ")" * 30
    out = tmp_path / "s.html"
    err = _user_error(
        capsys, ["steps", expr, "--at", "w=0.5", "--algorithm", "6.6", "--wrt", "w", "--out", str(out)]
    )
    assert err.startswith(
        "micrograph: error: the drawing of G and B has 90 nodes, more than --max-nodes 80: "
    )
    assert err.rstrip().endswith("or pass --max-nodes 90 (or more) to draw it anyway.")
    assert len(err.strip().splitlines()) == 1 and not out.exists()


def test_render_refuses_a_missing_directory_and_creates_nothing(tmp_path, capsys):
    """One behaviour everywhere: a file is written into an existing directory only (as viz.save and l.svg)."""
    out = tmp_path / "a" / "b" / "g.svg"
    err = _user_error(capsys, ["render", "w*w", "--at", "w=3", "--out", str(out)])
    assert "does not exist; create it first" in err
    assert not (tmp_path / "a").exists()


def test_a_graph_too_large_is_refused_in_the_command_lines_words(tmp_path, capsys):
    """The command names its own option, --max-nodes, and the size that would draw it; no Python argument."""
    expr = " + ".join(f"x*{k}" for k in range(1, 200))  # 597 nodes
    out = tmp_path / "g.svg"
    err = _user_error(capsys, ["render", expr, "--at", "x=1", "--out", str(out)])
    assert err.startswith("micrograph: error: the graph has 597 nodes, more than --max-nodes 300: ")
    assert err.rstrip().endswith(
        "Draw a smaller expression, or pass --max-nodes 597 (or more) to draw it anyway."
    )
    assert "max_nodes=" not in err and "viz.text" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
    assert (
        main(["render", expr, "--at", "x=1", "--out", str(out), "--max-nodes", "597"]) == 0 and out.exists()
    )


def test_render_does_not_overwrite_without_force(tmp_path, capsys):
    out = tmp_path / "g.svg"
    out.write_text("keep me")
    err = _user_error(capsys, ["render", "w*w", "--at", "w=3", "--out", str(out)])
    assert "--force" in err and out.read_text() == "keep me"
    assert main(["render", "w*w", "--at", "w=3", "--out", str(out), "--force"]) == 0
    assert out.read_text().lstrip().startswith("<?xml") or "<svg" in out.read_text()


def test_syntax_error_is_one_line_with_the_expression_and_its_column(capsys):
    err = _user_error(capsys, ["render", "tanh(w +)", "--at", "w=0.5"])
    assert err.splitlines() == ["micrograph: error: in 'tanh(w +)': syntax error: invalid syntax at column 9"]
    long = "w + " * 40 + "tanh(w +)"
    (line,) = _user_error(capsys, ["render", long, "--at", "w=0.5"]).splitlines()
    assert "in '... + w + w + " in line and "tanh(w +)': syntax error" in line and "column 169" in line


@pytest.mark.parametrize(
    "expr, fragment",
    [
        ("__import__('os')", "calling __import__() is not allowed"),
        ("w.__class__", "attribute access"),
        ("(lambda: w)()", "only calls of plain function names"),
        ("lambda: w", "lambda"),
        ("[w for w in (1, 2)]", "comprehensions"),
        ("w[0]", "subscripts"),
        ("open('x')", "calling open() is not allowed"),
    ],
)
def test_forbidden_constructs_are_refused_saying_what_is_allowed(capsys, expr, fragment):
    err = _user_error(capsys, ["render", expr, "--at", "w=0.5"])
    first = err.splitlines()[0]
    assert fragment in first and "allowed:" in first and "tanh" in first


def test_unknown_name_and_missing_or_unused_values(capsys):
    err = _user_error(capsys, ["render", "w + q", "--at", "w=1"])
    assert "q" in err and "--at q=NUMBER" in err
    err = _user_error(capsys, ["render", "w + 1", "--at", "w=1", "--at", "v=2"])
    assert "no variable 'v'" in err
    err = _user_error(capsys, ["render", "w + 1", "--at", "w=1", "--wrt", "x"])
    assert "--wrt x" in err
    err = _user_error(capsys, ["render", "w + 1", "--at", "w=abc"])
    assert "not a number" in err


def test_domain_error_prints_its_message(capsys, tmp_path):
    out = tmp_path / "never.svg"
    err = _user_error(capsys, ["render", "log(w)", "--at", "w=-1", "--out", str(out)])
    assert "outside the domain of log" in err and "x > 0" in err
    assert not out.exists()
    err = _user_error(capsys, ["render", "sqrt(w - 2)", "--at", "w=1"])
    assert "sqrt" in err


def test_bad_output_suffix_and_a_file_in_the_way(capsys, tmp_path):
    err = _user_error(capsys, ["render", "w", "--at", "w=1", "--out", str(tmp_path / "g.txt")])
    assert ".svg" in err
    blocker = tmp_path / "file"
    blocker.write_text("")
    err = _user_error(capsys, ["render", "w", "--at", "w=1", "--out", str(blocker / "g.svg")])
    assert "not a directory" in err


def test_graph_too_large_is_a_user_error(capsys):
    expr = "+".join(["w"] * 400)
    err = _user_error(capsys, ["render", expr, "--at", "w=1", "--max-nodes", "50"])
    assert "50" in err


def test_user_errors_in_a_real_process_have_no_traceback():
    done = run_micrograph("render", "__import__('os').system('echo hacked')", "--at", "w=1")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and "hacked" not in done.stdout
    assert done.stderr.startswith("micrograph: error: ")


# --- blowup, train, lesson, tour -------------------------------------------------------------------------


def test_blowup_writes_the_plot_and_prints_counts(tmp_path, capsys):
    out = tmp_path / "blowup.png"
    assert main(["blowup", "--family", "ladder", "--max-depth", "8", "--out", str(out), "--quiet"]) == 0
    stdout = capsys.readouterr().out
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "ladder" in stdout and "256" in stdout  # 2**8 paths at depth 8
    assert main(["blowup", "--max-depth", "60", "--quiet"]) == 0  # the deepest, numbers of 27 digits
    stdout = capsys.readouterr().out
    assert max(map(len, stdout.splitlines())) <= 80 and "* the closed form" in stdout, stdout
    err = _user_error(capsys, ["blowup", "--max-depth", "0"])
    assert "--max-depth" in err
    err = _user_error(capsys, ["blowup", "--max-depth", "4", "--out", str(out)])
    assert "exists" in err


def test_train_writes_loss_curve_and_summary(tmp_path, capsys):
    out = tmp_path / "iris"
    assert main(["train", "iris", "--hidden", "4", "--epochs", "3", "--out", str(out), "--quiet"]) == 0
    assert (out / "loss.png").read_bytes()[:4] == b"\x89PNG"
    import json

    summary = json.loads((out / "summary.json").read_text())
    assert summary["epochs"] == 3 and 0 <= summary["test_accuracy"] <= 1
    err = _user_error(capsys, ["train", "iris", "--epochs", "1", "--out", str(out)])
    assert "--force" in err
    err = _user_error(capsys, ["train", "iris", "--lr", "-1"])
    assert "--lr" in err


def test_train_on_2d_data_draws_the_decision_boundary(tmp_path, capsys):
    out = tmp_path / "moons"
    assert main(["train", "moons", "--hidden", "4", "--epochs", "2", "--out", str(out), "--quiet"]) == 0
    assert (out / "boundary.png").exists()


def test_lesson_subcommand_lists_and_prints(capsys):
    assert main(["lesson"]) == 0
    assert "1. " in capsys.readouterr().out
    err = _user_error(capsys, ["lesson", "99"])
    assert "no lesson 99" in err
    done = run_micrograph("lesson", "1", stdin="")
    assert done.returncode == 0 and "End of lesson 1" in done.stdout


def test_tour_refuses_to_overwrite_without_force(tmp_path, capsys):
    (tmp_path / "index.html").write_text("an earlier tour")
    err = _user_error(capsys, ["tour", "--out", str(tmp_path), "--lessons", "1"])
    assert "not replacing" in err  # not a tour micrograph wrote: not replaced, even with --force
    assert (tmp_path / "index.html").read_text() == "an earlier tour"


def test_progress_bars_stay_off_a_stderr_that_is_not_a_terminal(tmp_path):
    """Redirected to a file or a pipe, stderr gets the summary lines only, not tqdm's carriage returns."""
    done = run_micrograph("tour", "--out", str(tmp_path / "t"), "--lessons", "1")
    assert done.returncode == 0, done.stderr
    assert "\r" not in done.stderr and "lesson/s" not in done.stderr and "tour:" not in done.stderr


def test_tour_rejects_an_unknown_lesson(capsys, tmp_path):
    err = _user_error(capsys, ["tour", "--out", str(tmp_path / "t"), "--lessons", "1,42"])
    assert "42" in err


@pytest.mark.parametrize("which", ["GraphTooLarge", "GraphvizMissing", "TrainingError"])
def test_known_error_classes_are_one_line_by_class_not_by_name(
    which: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The command catches the classes themselves: a subclass with another name is still one line."""
    from lessons import cli
    from micrograph.train import TrainingError
    from viz.dot import GraphTooLarge
    from viz.render import GraphvizMissing

    base = {
        "GraphTooLarge": GraphTooLarge,
        "GraphvizMissing": GraphvizMissing,
        "TrainingError": TrainingError,
    }
    error = {
        "GraphTooLarge": lambda: GraphTooLarge(500, 300),
        "GraphvizMissing": lambda: GraphvizMissing(),
        "TrainingError": lambda: TrainingError("loss is nan", epoch=1, step=2, batch=3),
    }[which]()
    renamed = type("Renamed" + which, (base[which],), {})
    error.__class__ = renamed

    ran: list[object] = []

    def fail(args: object) -> int:
        ran.append(args)
        raise error

    monkeypatch.setitem(cli.COMMANDS, "render", cli.COMMANDS["render"]._replace(run=fail))
    status = cli.main(["render", "x*2", "--at", "x=1", "--out", str(tmp_path / "never.svg")])
    err = capsys.readouterr().err
    assert len(ran) == 1  # the error came from the command, not from render refusing its --out
    assert status == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "never.svg").exists()


def _helps() -> list[list[str]]:
    """The --help of the command, of every subcommand and of every exercise action."""
    from lessons.cli import COMMANDS
    from lessons.cli.exercise import ACTIONS

    commands = [[name, "--help"] for name in COMMANDS]
    return [["--help"], *commands, *([["exercise", a, "--help"] for a in ACTIONS])]


@pytest.mark.parametrize("argv", _helps(), ids=lambda argv: " ".join(argv[:-1]) or "micrograph")
def test_every_help_fits_an_80_column_terminal(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert main(argv) == 0
    shown = capsys.readouterr().out
    assert shown and max(map(len, shown.splitlines())) <= 80, shown
