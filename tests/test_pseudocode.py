"""The book's pseudo-code typed once (micrograph.pseudocode) is the book's text, and every view quotes it."""

from __future__ import annotations

import pytest

from micrograph import pseudocode
from tests.book_text import corpus, in_book

pytestmark = pytest.mark.skipif(not corpus(), reason="the book's excerpts are not on this machine")


@pytest.mark.parametrize("number", ["6.1", "6.2", "6.3", "6.4", "6.5"])
def test_quoted_algorithms_are_the_books_words(number: str) -> None:
    algo = pseudocode.ALGORITHMS[number]
    assert algo.quoted
    for line in algo.lines:
        assert in_book(line), f"Algorithm {number}: {line!r} is not in the book"


def test_algorithm_6_6_is_not_passed_off_as_the_book() -> None:
    assert not pseudocode.ALGORITHM_6_6.quoted
    assert "micrograph" in pseudocode.ALGORITHM_6_6.name


def test_return_line_of_algorithm_6_2_has_n_i() -> None:
    assert pseudocode.ALGORITHM_6_2.lines[-1] == "return {grad_table[u(i)] | i = 1, ..., n_i}"


def test_push_form_is_quoted_from_section_6_5_6() -> None:
    assert in_book(pseudocode.PUSH_FORM)


def test_normalise_catches_a_wrong_line() -> None:
    assert not in_book("for j = 1 up to n - 1 do")


def test_step_pages_name_their_algorithms_and_are_the_commands_choices() -> None:
    from lessons.cli import build_parser

    assert pseudocode.named(("6.5",)) == "Algorithm 6.5"
    assert pseudocode.named(pseudocode.STEP_PAGES["all"]) == "Algorithms 6.1, 6.2, 6.5 and 6.6"
    assert all(n in pseudocode.ALGORITHMS for page in pseudocode.STEP_PAGES.values() for n in page)
    steps = build_parser().commands["steps"]
    assert steps.parse_args(["x", "--out", "p.html"]).algorithm == "6.2"
    for name in pseudocode.STEP_PAGES:
        assert steps.parse_args(["x", "--out", "p.html", "--algorithm", name]).algorithm == name
    with pytest.raises(SystemExit):
        steps.parse_args(["x", "--out", "p.html", "--algorithm", "6.3"])
