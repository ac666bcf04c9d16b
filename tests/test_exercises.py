"""The exercises as a student and a teacher use them: the command, the REPL, Jupyter, the progress file.

Every assertion is on what a user sees: exit statuses, the lines printed, the JSON an autograder reads,
the files written (and those not overwritten), the drawing.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from conftest import run_micrograph
from exercise_solutions import CORRECT, LOOP_BACKPROP, mutant

from lessons import exercises
from lessons.cli import main
from lessons.exercises import tools
from lessons.exercises.progress import PROGRESS_FILE
from lessons.exercises.templates import PLACES, template
from micrograph.pseudocode import ALGORITHMS

ROOT = Path(__file__).resolve().parent.parent
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")

CORRECT_BACKPROP = CORRECT["backprop"]

OVERWRITE_BACKPROP = mutant(
    LOOP_BACKPROP,
    ("        grad_table[v] = 0.0", ""),
    (
        "                    grad_table[v] += grad_table[C] * tools.local_derivative(C, k)",
        "                    grad_table[v] = grad_table[C] * tools.local_derivative(C, k)",
    ),
)
"""Algorithm 6.2 with each consumer's term assigned, not added: the README's sample report."""


# --- the command --------------------------------------------------------------------------------------


def test_start_writes_the_template_and_never_overwrites(tmp_path: Path) -> None:
    done = run_micrograph("exercise", "start", "backprop", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    path = tmp_path / "backprop.py"
    assert path.read_text(encoding="utf-8") == template("backprop")
    assert "micrograph exercise check backprop.py" in done.stdout
    path.write_text("my work\n", encoding="utf-8")
    again = run_micrograph("exercise", "start", "backprop", cwd=tmp_path)
    assert again.returncode == 2
    assert again.stderr.count("\n") == 1 and "exists; not overwriting" in again.stderr
    assert path.read_text(encoding="utf-8") == "my work\n"


@needs_dot
def test_check_exits_0_when_every_check_passes_and_1_otherwise(tmp_path: Path) -> None:
    (tmp_path / "backprop.py").write_text(CORRECT_BACKPROP, encoding="utf-8")
    ok = run_micrograph("exercise", "check", "backprop.py", cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "All 14 checks passed: 14 of 14 points" in ok.stdout
    assert "PASS  a chain 2,000 deep" in ok.stdout
    (tmp_path / "wrong.py").write_text(OVERWRITE_BACKPROP, encoding="utf-8")  # named by its marker line
    bad = run_micrograph("exercise", "check", "wrong.py", cwd=tmp_path)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "FAILED first on: a * a: one node takes the same parent twice" in bad.stdout
    assert "holds one term of its sum" in bad.stdout
    assert all(len(line) <= 80 for line in bad.stdout.splitlines() if "Drawing of the failure" not in line)
    drawing = tmp_path / "wrong.failure.svg"
    assert f"Drawing of the failure: {drawing.name}" in bad.stdout or str(drawing) in bad.stdout
    svg = drawing.read_text(encoding="utf-8")
    assert svg.startswith(exercises.SVG_MARKER) and "<svg" in svg
    assert "#c0392b" in svg  # the wrong node and edges in red
    assert "expected 3" in svg and "yours 1.5" in svg


def test_check_json_for_autograders(tmp_path: Path) -> None:
    (tmp_path / "backprop.py").write_text(OVERWRITE_BACKPROP, encoding="utf-8")
    done = run_micrograph("exercise", "check", "backprop.py", "--json", "--no-progress", cwd=tmp_path)
    assert done.returncode == 1
    assert not (tmp_path / PROGRESS_FILE).exists()
    data = json.loads(done.stdout)
    assert data["exercise"] == "backprop"
    assert data["checks_run"] == 14 and data["passed"] is False  # every case runs and is scored
    assert data["score"] == data["checks_passed"] < data["max_score"] == 14
    assert data["cases"][0]["passed"] is False and data["cases"][0]["mistake"] == "overwrite"
    assert data["seed"] == 0 and len(data["solution_sha256"]) == 64
    first = data["first_failure"]
    assert first["case"] == "a * a: one node takes the same parent twice"
    assert first["mistake"] == "overwrite"
    assert first["node"] == "u1 (a)" and first["expected"] == 3.0 and first["actual"] == 1.5
    assert "sum the gradients arriving from different paths" in first["book"]
    (tmp_path / "backprop.py").write_text(CORRECT_BACKPROP, encoding="utf-8")
    ok = json.loads(run_micrograph("exercise", "check", "backprop.py", "--json", cwd=tmp_path).stdout)
    assert (
        ok["passed"] is True and ok["checks_run"] == ok["checks_passed"] == 14 and ok["first_failure"] is None
    )


@pytest.mark.parametrize(
    "argv, says",
    [
        (["exercise", "start", "nope"], "there is no exercise 'nope'"),
        (["exercise", "check", "missing.py"], "no file 'missing.py' to check"),
        (["exercise", "check", "."], "'.' is a directory; name the solution's file in it (NAME.py)"),
        (["exercise", "report", ""], "a result's file or directory name is empty"),
        (["exercise", "check", "mystery.py"], "cannot tell which exercise mystery.py is"),
        (["exercise", "check", "mystery.py", "--exercise", "nope"], "there is no exercise 'nope'"),
        (["exercise", "check", "mystery.py", "--exercise", "topo", "--time-limit", "0"], "--time-limit"),
        (["exercise", "start"], "error:"),
        (["exercise", "start", "forward", "--dir", "no/such/dir"], "is not a directory"),
    ],
)
def test_usage_errors_exit_2_with_one_line(tmp_path: Path, argv: list[str], says: str) -> None:
    (tmp_path / "mystery.py").write_text("x = 1\n", encoding="utf-8")
    done = run_micrograph(*argv, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr


def test_the_exercise_a_file_is_comes_from_its_marker_line_then_its_name(tmp_path: Path) -> None:
    """exercises.exercise_of: the template's first line names the exercise whatever the file is called; a
    file without it is the exercise it is named after, or none; a symlink is not followed."""
    (tmp_path / "mine.py").write_text("# micrograph exercise: topo\nx = 1\n", encoding="utf-8")
    (tmp_path / "forward.py").write_text("# micrograph exercise: nope\nx = 1\n", encoding="utf-8")
    (tmp_path / "other.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "link.py").symlink_to(tmp_path / "mine.py")
    assert exercises.exercise_of(tmp_path / "mine.py") == "topo"
    assert exercises.exercise_of(tmp_path / "forward.py") == "forward"
    assert exercises.exercise_of(tmp_path / "other.py") is None
    with pytest.raises(FileNotFoundError, match="symlink"):
        exercises.exercise_of(tmp_path / "link.py")


def test_a_file_saved_with_a_byte_order_mark_is_read_as_its_text(tmp_path: Path) -> None:
    """Some editors begin a UTF-8 file with a byte-order mark: the marker line is still the first line, and
    the solution is checked as written."""
    path = tmp_path / "mine.py"
    path.write_bytes(b"\xef\xbb\xbf" + CORRECT["forward"].encode("utf-8"))
    assert exercises.exercise_of(path) == "forward"
    report = exercises.check("forward", path, record=False, drawing=None)
    assert report.passed, report.text()


def test_exercise_help_explains_the_flow(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["exercise"]) == 0
    text = capsys.readouterr().out
    phrases = ("micrograph exercise list", "micrograph exercise start backprop", "--format gradescope")
    for phrase in phrases:
        assert phrase in text


@pytest.mark.slow
def test_list_reads_the_progress_file_in_the_current_directory(tmp_path: Path) -> None:
    listed = run_micrograph("exercise", "list", cwd=tmp_path)
    assert listed.returncode == 0
    lines = listed.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert [line.split()[0] for line in lines[1:8]] == list(exercises.EXERCISES)
    assert "passed" not in listed.stdout
    (tmp_path / "backprop.py").write_text(CORRECT_BACKPROP, encoding="utf-8")
    row = next(
        line
        for line in run_micrograph("exercise", "list", cwd=tmp_path).stdout.splitlines()
        if "backprop" in line
    )
    assert row.split()[:2] == ["backprop", "started"]
    assert run_micrograph("exercise", "check", "backprop.py", cwd=tmp_path).returncode == 0
    progress = json.loads((tmp_path / PROGRESS_FILE).read_text(encoding="utf-8"))
    assert progress["exercises"]["backprop"]["passed"] is True
    row = next(
        line
        for line in run_micrograph("exercise", "list", cwd=tmp_path).stdout.splitlines()
        if "backprop" in line
    )
    assert row.split()[:2] == ["backprop", "passed"]
    # a later failure does not take the pass away; it is shown as the last result
    (tmp_path / "backprop.py").write_text(OVERWRITE_BACKPROP, encoding="utf-8")
    assert run_micrograph("exercise", "check", "backprop.py", cwd=tmp_path).returncode == 1
    progress = json.loads((tmp_path / PROGRESS_FILE).read_text(encoding="utf-8"))
    assert progress["exercises"]["backprop"] == {
        **progress["exercises"]["backprop"],
        "passed": True,
        "last": "failed",
    }
    # the listing shows the latest verdict, and that a check passed earlier
    lines = run_micrograph("exercise", "list", cwd=tmp_path).stdout.splitlines()
    k = next(k for k, line in enumerate(lines) if line.startswith("backprop"))
    assert lines[k].split()[:2] == ["backprop", "failed"]
    assert lines[k + 1] == " " * 13 + "passed earlier; the latest check failed"
    assert all(len(line) <= 80 for line in lines)
    (tmp_path / "backprop.py").write_text(CORRECT_BACKPROP, encoding="utf-8")
    assert run_micrograph("exercise", "check", "backprop.py", cwd=tmp_path).returncode == 0
    assert "backprop     passed" in str(exercises.list(tmp_path))
    assert "passed earlier" not in str(exercises.list(tmp_path))


@needs_dot
def test_the_drawing_never_replaces_a_file_of_the_student(tmp_path: Path) -> None:
    (tmp_path / "backprop.py").write_text(OVERWRITE_BACKPROP, encoding="utf-8")
    mine = tmp_path / "backprop.failure.svg"
    mine.write_text("<svg>my own drawing</svg>", encoding="utf-8")
    done = run_micrograph("exercise", "check", "backprop.py", cwd=tmp_path)
    assert done.returncode == 1
    assert mine.read_text(encoding="utf-8") == "<svg>my own drawing</svg>"
    assert "exists and is not a failure drawing; not overwriting it" in " ".join(done.stdout.split())
    mine.unlink()
    target = tmp_path / "elsewhere.svg"
    target.write_text("keep", encoding="utf-8")
    mine.symlink_to(target)
    assert run_micrograph("exercise", "check", "backprop.py", cwd=tmp_path).returncode == 1
    assert target.read_text(encoding="utf-8") == "keep"


# --- the REPL and Jupyter -----------------------------------------------------------------------------


def test_check_a_function_typed_in_the_repl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)

    def my_backprop(G):  # type: ignore[no-untyped-def]
        table = {G.nodes[-1]: 1.0}
        for v in reversed(G.nodes[:-1]):
            edges = [(C, k) for C in G.get_consumers(v) for k, p in enumerate(C.inputs) if p is v]
            table[v] = sum(table[C] * tools.local_derivative(C, k) for C, k in edges)
        return table

    report = exercises.check("backprop", my_backprop)
    assert report.passed, report.text()
    assert (tmp_path / PROGRESS_FILE).exists()
    assert "backprop     passed" in str(exercises.list())


def test_a_module_and_a_dict_are_solutions_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_rules.py").write_text(CORRECT["derivatives"], encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import my_rules  # type: ignore[import-not-found]

    assert exercises.check("derivatives", my_rules, record=False).passed
    rules = {name: getattr(my_rules, name) for name in exercises.EXERCISES["derivatives"].functions}
    assert exercises.check("derivatives", rules, record=False).passed
    with pytest.raises(TypeError, match="several functions"):
        exercises.check("derivatives", lambda x, out: 0.0, record=False)
    with pytest.raises(ValueError, match="there is no exercise 'nope'"):
        exercises.check("nope", lambda G: {}, record=False)


@needs_dot
def test_jupyter_shows_the_report_with_the_drawing_inline(tmp_path: Path) -> None:
    def wrong(G):  # type: ignore[no-untyped-def]
        return {v: 1.0 for v in G.nodes}

    report = exercises.check("backprop", wrong, record=False)
    assert not report.passed and report.failure is not None
    page = report._repr_html_()
    assert "<pre" in page and "FAILED first on: a * a" in page
    assert "<svg" in page and "<?xml" not in page  # inline, ready for the notebook
    assert report.svg_path is None  # nothing written from a REPL unless asked
    assert "report.save_svg('failure.svg')" in report.text()
    saved = Path(report.save_svg(tmp_path / "failure.svg"))
    assert saved.read_text(encoding="utf-8").startswith("<svg")
    (tmp_path / "topo.py").write_text(CORRECT["topo"], encoding="utf-8")
    passed = exercises.check("topo", tmp_path / "topo.py", record=False)
    with pytest.raises(ValueError, match="every check passed"):
        passed.save_svg(tmp_path / "none.svg")


@pytest.mark.slow
def test_each_template_is_a_todo_until_filled_in(tmp_path: Path) -> None:
    for name in exercises.EXERCISES:
        text = template(name)
        assert text.splitlines()[0] == f"# micrograph exercise: {name}"
        compile(text, f"{name}.py", "exec")  # the template itself is valid Python
        path = tmp_path / f"{name}.py"
        path.write_text(text, encoding="utf-8")
        report = exercises.check(name, path, record=False)
        assert report.failure is not None and report.failure.mistake == "todo", (name, report.text())
        assert f'File "{path}"' in report.failure.traceback


def test_each_template_names_its_lesson() -> None:
    for name, e in exercises.EXERCISES.items():
        assert f"Lesson {e.lesson} steps through it first:  python -m lessons {e.lesson}" in template(name)


def test_each_template_fits_79_columns_but_the_books_pseudo_code() -> None:
    """A student reads the template in an editor: every line, at every place, is at most 79 columns, except
    the lines of the book's pseudo-code, each one line of the book as the book prints it."""
    books = {"    " + line for algorithm in ALGORITHMS.values() for line in algorithm.lines}
    for name in exercises.EXERCISES:
        for place in PLACES:
            lines = template(name, place).splitlines()
            assert [line for line in lines if len(line) > 79 and line not in books] == [], (name, place)


def test_the_same_mistake_gives_the_same_first_failure_every_time(tmp_path: Path) -> None:
    path = tmp_path / "backprop.py"
    path.write_text(OVERWRITE_BACKPROP, encoding="utf-8")
    first = exercises.check("backprop", path, record=False).as_dict()
    second = exercises.check("backprop", path, record=False).as_dict()
    for d in (first, second):
        d.pop("seconds")
    assert first == second


@pytest.mark.slow
def test_a_case_that_runs_forever_is_stopped_and_named() -> None:
    def forever(z):  # type: ignore[no-untyped-def]
        while True:
            pass

    start = time.monotonic()
    report = exercises.check("topo", forever, record=False, time_limit=0.5)
    assert time.monotonic() - start < 30  # generous: only "it does not hang"
    assert report.failure is not None and report.failure.mistake == "timeout"
    assert report.failure.case == "a * a: one node takes the same parent twice"
    assert "used more than 0.5 s of CPU time" in report.text()
    assert len(report.cases) == 14 and report.score == 0  # every case ran, each stopped


def test_a_solution_mutating_the_graph_is_caught_for_every_exercise_that_gets_one() -> None:
    def topo(z):  # type: ignore[no-untyped-def]
        z.label = "changed"
        return [z]

    report = exercises.check("topo", topo, record=False)
    assert report.failure is not None and report.failure.mistake == "mutation"
    assert "label changed" in report.failure.headline

    def naive(z, w):  # type: ignore[no-untyped-def]
        w.data += 1.0
        return 0.0

    report = exercises.check("naive", naive, record=False)
    assert report.failure is not None and report.failure.mistake == "mutation"
    assert "u1 (w).data changed from 0.5 to 1.5" in report.failure.headline, report.text()


# --- small things a user meets --------------------------------------------------------------------------


def test_the_tour_index_lists_the_exercises() -> None:
    from lessons.publish import tour

    page = "\n".join(tour._exercises_section())
    for name in exercises.EXERCISES:
        assert f"<code>{name}</code>" in page
    assert "micrograph exercise start NAME" in page


def test_the_progress_file_is_never_written_through_a_symlink(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "target.json"
    target.write_text("keep", encoding="utf-8")
    (tmp_path / PROGRESS_FILE).symlink_to(target)
    (tmp_path / "topo.py").write_text(CORRECT["topo"], encoding="utf-8")
    assert exercises.check("topo", tmp_path / "topo.py").passed
    assert target.read_text(encoding="utf-8") == "keep"


def test_tools_name_the_argument_and_the_node() -> None:
    from micrograph import Value

    a = Value(2.0, label="a")
    u = a * a
    with pytest.raises(ValueError, match=r"has 2 argument\(s\), so k is 0 or 1; got k=2"):
        tools.local_derivative(u, 2)
    with pytest.raises(ValueError, match="is an input"):
        tools.local_derivative(a, 0)
    with pytest.raises(TypeError, match="node must be a Value"):
        tools.evaluate(2.0, [1.0])  # type: ignore[arg-type]
    tools.reset_counts()
    assert tools.local_derivative(u, 1) == 2.0 and tools.evaluate(u, [3.0, 4.0]) == 12.0
    assert tools.counts() == {"local_derivatives": 1, "evaluations": 1}


def test_the_students_prints_do_not_spoil_the_json(tmp_path: Path) -> None:
    (tmp_path / "backprop.py").write_text('print("loading")\n' + CORRECT_BACKPROP.replace(
        "    return grad_table", '    print("done")\n    return grad_table'), encoding="utf-8")  # fmt: skip
    done = run_micrograph("exercise", "check", "backprop.py", "--json", cwd=tmp_path)
    assert done.returncode == 0
    data = json.loads(done.stdout)
    assert data["passed"] is True
    assert data["output"]["text"].splitlines()[:2] == ["loading", "done"]
    lines = data["output"]["lines"]  # loaded once, 13 cases, and the growth case's 4 chains, each asked
    assert 18 <= lines <= 22 and data["output"]["text"].count("loading") == 1  # again under judge.AGAIN s


@needs_dot
def test_ipython_displays_the_report_as_html_with_the_svg() -> None:
    from IPython.core.formatters import DisplayFormatter

    def wrong(G):  # type: ignore[no-untyped-def]
        return {v: 0.0 for v in G.nodes}

    report = exercises.check("backprop", wrong, record=False)
    data, _ = DisplayFormatter().format(report)
    assert "<svg" in data["text/html"] and "FAILED first on:" in data["text/html"]
    assert "FAILED first on:" in data["text/plain"]


def test_the_readme_shows_the_report_a_student_gets(tmp_path: Path) -> None:
    """Every line of the README's sample report (but the elisions and the time) is in the real report."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    sample = readme.split("```\nexercise backprop:", 1)[1].split("```", 1)[0]
    (tmp_path / "backprop.py").write_text(OVERWRITE_BACKPROP, encoding="utf-8")
    real = run_micrograph("exercise", "check", "backprop.py", "--no-progress", cwd=tmp_path).stdout
    for line in ["exercise backprop:" + sample.splitlines()[0], *sample.splitlines()[1:]]:
        if line.strip() and line.strip() != "..." and "checks passed" not in line:
            assert line in real.splitlines(), line
    assert "2 of 14 checks passed: 2 of 14 points" in real


def test_what_the_solution_printed_cannot_take_over_the_terminal() -> None:
    from lessons.exercises.report import Report

    fake = "\x1b[2J\x1b[H\x1b[32mAll 14 checks passed\x1b[8m \u202eevil"
    report = Report("backprop", "the title", [], None, 0.1, output_text=fake, output_lines=1)
    text = report.text()
    assert "\x1b" not in text and "\u202e" not in text  # no escape sequence, no direction override
    assert "  | \\x1b[2J\\x1b[H\\x1b[32mAll 14 checks passed\\x1b[8m \\u202eevil" in text


def test_a_lone_surrogate_in_a_solution_s_message_is_written_as_its_escape() -> None:
    import json

    from lessons.exercises.report import Failure, Report, json_text

    failure = Failure("a case", "topological_order(z) raised ValueError: bad \ud800 value")
    report = Report("topo", "the title", [], failure, 0.1, output_text="\udcff", output_lines=1)
    text = report.text()
    text.encode("utf-8")  # a terminal can be written it
    assert "bad \\ud800 value" in text and "  | \\udcff" in text
    data = json_text(report.as_dict())
    data.encode("utf-8")
    assert json.loads(data)["first_failure"]["headline"].endswith("bad \ud800 value")  # the JSON says it
