"""How wide a line of a box's text can be drawn: an upper bound from the fonts Helvetica resolves to.

Graphviz sizes a box (an HTML-like table, :func:`viz.boxes.html_box`) to its own measure of the text, and
every renderer of the SVG lays the same text out again in whatever font it picks for the SVG's
``font-family="Helvetica,sans-Serif"``. The two widths differ: on a Linux machine Graphviz's pango resolves
Helvetica to DejaVu Sans and measures it with hinted, whole-point metrics, about 1.6% narrower than the
unhinted layout ``rsvg-convert`` draws (5 points on a row of 330), more than the table's cell padding of 2;
a browser or cairosvg picks Liberation Sans instead. A box sized to Graphviz's measure alone has its
longest row run into its right edge in some renderers.

:func:`text_width` bounds the drawn width from above: the sum of each character's advance, the larger of
its advances in DejaVu Sans (the widest of these fonts for most glyphs) and in Liberation Sans (Helvetica's
and Arial's metrics, wider for a few capitals: J, P, E), in thousandths of an em rounded up, times
:data:`SLACK` for renderers that round advances to whole pixels. A box asks Graphviz for at least that much
room (``WIDTH``), so its text fits whichever of these fonts draws it.

The widths were read from matplotlib's copy of DejaVu Sans (``mpl-data/fonts/ttf/DejaVuSans.ttf``, a
dependency already) and from Liberation Sans; ``tests/test_box_text_fits.py`` checks them against the
fonts it finds.
"""

from __future__ import annotations

__all__ = ["SLACK", "DEFAULT_ADVANCE", "advance", "text_width"]

SLACK = 1.02
"""A renderer that rounds glyph advances to whole pixels draws a line up to about 2% wider."""

DEFAULT_ADVANCE = 1000
"""The advance of a character not in the tables below, in thousandths of an em: one em, as wide as the
widest glyphs a box's words use (``…``, ``—``) and a CJK ideograph in its fallback font."""

# The advances of " " (32) to "~" (126), the larger of DejaVu Sans's and Liberation Sans's, in thousandths
# of an em rounded up.
_ASCII = (
    318, 401, 460, 838, 637, 951, 780, 275, 391, 391, 500, 838, 318, 361, 318, 337,  # space to /
    637, 637, 637, 637, 637, 637, 637, 637, 637, 637, 337, 337, 838, 838, 838, 557,  # 0 to ?
    1016, 685, 687, 723, 771, 667, 611, 778, 752, 295, 500, 667, 558, 863, 749, 788,  # @ to O
    667, 788, 723, 667, 611, 732, 685, 989, 686, 667, 686, 391, 337, 391, 838, 557,  # P to _
    500, 613, 635, 550, 635, 616, 353, 635, 634, 278, 278, 580, 278, 975, 634, 612,  # ` to o
    635, 635, 412, 521, 393, 634, 592, 818, 592, 592, 525, 637, 337, 637, 838,  # p to ~
)  # fmt: skip

# The other characters micrograph writes in a box (symbols of the book's formulas, Greek letters,
# arrows, the ellipsis of a long row), in thousandths of an em.
_OTHER = {
    "±": 838, "²": 401, "³": 401, "¹": 401, "·": 334, "×": 838, "÷": 838, "ß": 630, "ç": 550, "é": 616,
    "ï": 278, "Α": 685, "Δ": 685, "Σ": 632, "Ω": 765, "α": 660, "β": 639, "γ": 592, "δ": 612, "ε": 541,
    "η": 634, "θ": 612, "λ": 592, "μ": 637, "π": 690, "σ": 634, "ᵀ": 433, "ᵢ": 179, "⁻": 528, "–": 557,
    "—": 1000, "…": 1000, "′": 228, "″": 374, "‴": 521, "←": 1000, "↑": 838, "→": 1000, "↓": 838, "⇢": 838,
    "∂": 518, "∇": 669, "∈": 872, "−": 838, "√": 638, "≈": 838, "≠": 838, "≤": 838, "≥": 838, "∑": 713,
    "∏": 824, "∞": 834, "∫": 521, "⊙": 838, "▶": 770, "◀": 770, "✗": 838,
}  # fmt: skip


def advance(ch: str) -> int:
    """A character's advance, in thousandths of an em (:data:`DEFAULT_ADVANCE` for one not in the tables)."""
    code = ord(ch)
    if 32 <= code <= 126:
        return _ASCII[code - 32]
    return _OTHER.get(ch, DEFAULT_ADVANCE)


def text_width(text: str, size: float) -> float:
    """An upper bound, in points, of the width of one line of ``text`` drawn at ``size`` points in any of
    the fonts Helvetica resolves to. Kerning is left out: it narrows a line far more often than it widens
    it, and :data:`SLACK` covers the odd pair that widens it."""
    return sum(advance(ch) for ch in text) * size / 1000 * SLACK
