"""``micrograph lesson N --expr ... --at ...`` and ``micrograph steps EXPR --at ... --out page.html``."""

from __future__ import annotations

import shutil

import pytest

from lessons.cli import main


def test_lesson_on_the_students_expression(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["lesson", "2", "--expr", "x*y + exp(x)", "--at", "x=1", "--at", "y=2"]) == 0
    out = capsys.readouterr().out
    assert "z = x*y + exp(x) at x = 1.000, y = 2.000" in out
    assert "dz/dx = 4.718" in out  # y + e^x at x = 1, y = 2
    assert "dz/dy = 1.000" in out
    assert "End of lesson 2" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["lesson", "3", "--expr", "x*y", "--at", "x=1", "--at", "y=2"],
            "lesson 3 does not take an expression",
        ),
        (["lesson", "2", "--at", "x=1"], "--at needs --expr"),
        (["lesson", "2", "--expr", "x*y", "--at", "x=1"], "no value for y"),
        (["lesson", "2", "--expr", "x*y", "--at", "x=1", "--at", "x=2", "--at", "y=1"], "given twice"),
        (["lesson", "2", "--expr", "log(x)", "--at", "x=0"], "log"),
        (["lesson", "1", "--expr", "__import__('os')"], "is not allowed"),
        (["steps", "x*y", "--at", "x=1", "--out", "p.html"], "no value for y"),
        (["steps", "x*y", "--at", "x=1", "--at", "y=1", "--out", "p.svg"], ".html"),
    ],
)
def test_bad_requests_are_one_line_and_status_2(argv, message, capsys, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    first = err.strip().splitlines()[0]
    assert message in first and first.startswith("micrograph: error: ") and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 or "^" in err  # an expression's error points at the column


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
def test_steps_writes_the_page_for_the_expression_and_never_overwrites(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    page = tmp_path / "page.html"
    assert main(["steps", "x*y + exp(x)", "--at", "x=1", "--at", "y=2", "--out", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert "x_1 = 1.000" in text and "return {grad_table[u(i)] | i = 1, ..., n_i}" in text
    assert "= 4.718." in text  # grad_table[u1] = dz/dx
    assert main(["steps", "x*y", "--at", "x=1", "--at", "y=2", "--out", str(page)]) == 2
    assert "exists" in capsys.readouterr().err
    assert page.read_text(encoding="utf-8") == text


def test_derivative_of_sqrt_at_zero_names_sqrt_not_a_division(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["render", "sqrt(w)", "--at", "w=0", "--wrt", "w"]) == 2
    err = capsys.readouterr().err
    assert "derivative of sqrt" in err and not err.startswith("micrograph: error: div(")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
@pytest.mark.parametrize(
    "extra, calls, first",
    [
        (["--algorithm", "6.6"], 4, "Algorithm 6.5 (symbol-to-symbol"),
        (["--algorithm", "6.6", "--wrt", "y"], 2, "Algorithm 6.5 (symbol-to-symbol"),
        (["--algorithm", "all", "--wrt", "x", "--wrt", "y"], 4, "Algorithm 6.1 (forward propagation)"),
    ],
)
def test_steps_algorithm_66_writes_one_frame_per_build_grad_call(
    extra, calls, first, capsys, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    page = tmp_path / "page.html"
    argv = ["steps", "x*y + exp(x)", "--at", "x=1", "--at", "y=2", "--out", str(page), *extra]
    assert main(argv) == 0
    assert "step by step on z = x*y + exp(x)" in capsys.readouterr().out
    text = page.read_text(encoding="utf-8")
    assert text.count('data-algorithm="6.6"') == calls
    assert first in text.split('<section class="frame current"', 1)[1].split("</h2>", 1)[0]
    if "--wrt" in extra and "x" not in extra:
        assert "T = {u2 (y)}" in text and "grad_table[u2 (y)] = u" in text
    else:
        assert "grad_table[u1 (x)] = u" in text and " = 4.718. " in text  # dz/dx = y + e^x


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--algorithm", "6.7"], "argument --algorithm: invalid choice: '6.7'"),
        (["--algorithm", "6.6", "--wrt", "q"], "--wrt q: the expression has no variable 'q'"),
        (["--wrt", "x"], "--wrt chooses T for Algorithm 6.5"),
    ],
)
def test_steps_bad_algorithm_or_wrt_is_one_line_and_status_2(extra, message, capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    page = tmp_path / "page.html"
    try:
        status = main(["steps", "x*y", "--at", "x=1", "--at", "y=2", "--out", str(page), *extra])
    except SystemExit as e:  # argparse's own check of the choices, one line through micrograph's parser
        status = e.code
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and err[0].startswith("micrograph")
    assert not page.exists()
