"""The book's excerpts in /work/shared/book/, normalised so that a quotation can be looked up in them.

Normalising keeps only lower-case letters and digits, after dropping LaTeX commands (``\\frac``, ``\\text``
...): the PDF extraction garbles symbols and breaks lines, the LaTeX excerpts spell u(i) as ``u^{(i)}``, and
micrograph writes ``u(i) ← x_i``; all three reduce to the same letters (``uixi``).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

BOOK = Path("/work/shared/book")


def normalise(text: str) -> str:
    """``text`` reduced to lower-case ASCII letters and digits, LaTeX commands removed."""
    text = re.sub(r"\\[A-Za-z]+", "", text)
    text = text.replace("ŷ", "y")  # the PDF writes ŷ as y and a combining mark
    return re.sub(r"[^a-z0-9]", "", text.lower())


@functools.lru_cache(maxsize=1)
def corpus() -> str:
    """All the excerpts, normalised and joined ("" when the book's folder is absent)."""
    if not BOOK.is_dir():
        return ""
    return "|".join(normalise(p.read_text(encoding="utf-8")) for p in sorted(BOOK.glob("*.txt")))


def in_book(text: str) -> bool:
    """Whether every line of ``text`` is the book's words (found, normalised, in an excerpt)."""
    words = corpus()
    return all(normalise(line) in words for line in text.splitlines() if normalise(line))
