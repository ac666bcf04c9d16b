"""What a student reads in the lessons is exactly right: the book's words labelled as the book's, one
numbering, terms shown one by one, gradients that differ, the student's own expression."""

from __future__ import annotations

import pytest

import lessons
from tests.book_text import corpus, in_book


def _all_steps(n: int) -> list[lessons.Stepper]:
    l = lessons.start(n)
    seen = []
    while True:
        seen.append(l.step)
        if isinstance(l.next(), str):
            break
    return seen


@pytest.mark.skipif(not corpus(), reason="the book's excerpts are not on this machine")
@pytest.mark.parametrize("n", sorted(lessons.LESSONS))
def test_only_the_books_words_are_labelled_book(n: int) -> None:
    for k, step in enumerate(_all_steps(n), 1):
        if step.line and step.quoted:
            assert in_book(step.line), f"lesson {n} step {k} labels {step.line!r} as the book's"
