"""The mistakes of a grad_table entry, catalogued once for the exercise checker and the explorer.

Algorithm 6.2 sets grad_table[u(j)] ← Σ_i grad_table[u(i)] ∂u(i)/∂u(j), one term per edge out of u(j), and
a wrong entry is often that sum computed in a way that can be named: the first consumer's terms only, a
term left out, a term without its local derivative ... Each such way is a row of :data:`ENTRY_MISTAKES`
(its code and its words), and :func:`wrong_entries` lists, for one entry, the wrong numbers each row
gives, as :class:`Wrong` recipes over the sum's terms. The checker (``lessons.exercises.judges.entry``)
names a student's wrong entry by the first recipe whose number it is; the explorer's predict mode
(:func:`viz.explore.explore`) ships the same recipes and words to its page, which evaluates them at
the inputs the student chose and names a typed number the same way, with the same words. A number that
two different recipes give is said to be either mistake, by both, the first in this order named first.
The catalogue lives in viz, below both: the explorer (viz) must not import the checker (lessons).

A recipe says, for each term of the sum in Algorithm 6.2's order, what the mistake adds in its place
(:data:`USES`): ``p`` the term itself, ``x`` nothing (left out), ``g`` grad_table[u(i)] alone (no local
derivative), ``d`` ∂u(i)/∂u(j) alone (no grad_table factor), ``n`` the term negated. The terms are added
one after another from 0, as Algorithm 6.2 adds them, so ``"ppp"`` is the right entry to the last bit.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.2, and section
6.5.6 ("we simply sum the gradients arriving from different paths").
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from micrograph.backprop import Term

__all__ = ["ENTRY_MISTAKES", "USES", "SUBSET_TERMS", "Wrong", "wrong_entries", "distinct"]

ENTRY_MISTAKES: dict[str, str] = {
    "seed": "grad_table[u(n)] not started at 1",
    "repeated-argument": "one term for a parent used twice",
    "first-consumer": "the first consumer's terms only",
    "overwrite": "terms overwritten, not added",
    "missing-term": "some edges' terms left out",
    "sign": "terms added with a wrong sign",
    "no-local-derivative": "terms without their local derivative",
    "no-grad-factor": "terms without their grad_table factor",
    "wrong-sum": "a wrong sum",
}
"""The mistakes of a grad_table entry, {code: what it is, in words, at most 40 characters}, in the order a
wrong number is named by (the first row whose recipe gives the number first). ``seed`` is u(n)'s only row
and ``wrong-sum`` the last of every other entry; both stand for any number."""

USES: dict[str, str] = {
    "x": "left out",
    "g": "without its local derivative",
    "d": "without its factor grad_table[u(i)]",
    "n": "with its sign changed",
}
"""What a recipe does to one term, in words, for each letter but ``p`` (the term as it is)."""

SUBSET_TERMS = 6
"""``missing-term`` lists every proper subset of the terms for an entry of at most this many terms (63
recipes at most), and beyond it only each term left out alone and every term left out: the page ships
every recipe, and the subsets of a 12-term entry would be 4,095 of them."""


@dataclass(frozen=True)
class Wrong:
    """A wrong grad_table entry one mistake gives.

    Attributes:
        code: the mistake, a key of :data:`ENTRY_MISTAKES`.
        uses: one letter of :data:`USES` (or ``p``) per term of the sum, in Algorithm 6.2's order; None
            for a row that stands for any number (``seed``, ``wrong-sum``).
    """

    code: str
    uses: str | None

    def value(self, terms: Sequence[Term]) -> float:
        """The entry this mistake gives from the sum's terms: each replaced as ``uses`` says, added in order.

        Raises:
            ValueError: the row stands for any number, or ``terms`` are not as many as ``uses`` letters.
        """
        if self.uses is None:
            raise ValueError(f"the mistake {self.code!r} stands for any number: it gives no entry of its own")
        if len(terms) != len(self.uses):
            raise ValueError(f"{self.code!r} is a recipe for {len(self.uses)} terms, given {len(terms)}")
        total = 0.0
        for use, t in zip(self.uses, terms):
            if use == "p":
                total += t.product
            elif use == "n":
                total += -t.product
            elif use == "g":
                total += t.grad_i
            elif use == "d":
                total += t.derivative  # and x, the term left out, adds nothing
        return total

    def as_data(self) -> dict[str, Any]:
        """The row as the explorer's page gets it (JSON): ``code``, and ``uses`` with each run of three or
        more equal letters written as its length and the letter (``"200pd"`` is 200 ``p`` then ``d``), so a
        row that changes one term of an entry of n terms is not n letters long; None for any number."""
        if self.uses is None:
            return {"code": self.code, "uses": None}
        runs = ((use, len(list(same))) for use, same in itertools.groupby(self.uses))
        return {"code": self.code, "uses": "".join(f"{k}{use}" if k > 2 else use * k for use, k in runs)}

    def changed(self) -> list[int]:
        """The positions of the terms this mistake changes (every letter but ``p``)."""
        return [t for t, use in enumerate(self.uses or "") if use != "p"]


def wrong_entries(edges: Sequence[tuple[int, int]], *, output: bool = False) -> list[Wrong]:
    """Every wrong entry the catalogue names for one grad_table entry, in :data:`ENTRY_MISTAKES`' order.

    Which recipes apply depends on the sum's edges only, never on the numbers, so the explorer lists them
    once and its page evaluates them at any inputs.

    Args:
        edges: the terms of grad_table[u(j)]'s sum in Algorithm 6.2's order, each (i, k): u(i) takes u(j)
            as argument k (0-based), as ``Graph.consumer_edges[j]`` or a ``BackpropStep``'s terms give them.
        output: u(j) is u(n), whose entry is set to 1, not summed: its one row is ``seed``.

    Returns:
        The recipes in the order a number is named by: ``repeated-argument`` (the second edge into a consumer
        that takes u(j) twice left out), ``first-consumer`` (the terms of the first consumer alone),
        ``overwrite`` (one term alone, the last first), ``missing-term`` (a proper subset of the terms, the
        largest first; see :data:`SUBSET_TERMS`), ``sign`` (every term negated), ``no-local-derivative`` and
        ``no-grad-factor`` (every term, then each term alone, replaced by one of its two factors), and
        ``wrong-sum`` (any number).
    """
    if output:
        return [Wrong("seed", None)]
    n = len(edges)
    everything = set(range(n))

    def keep(kept: set[int]) -> str:
        return "".join("p" if t in kept else "x" for t in range(n))

    def one(t: int, use: str) -> str:
        return "p" * t + use + "p" * (n - t - 1)

    rows = [
        Wrong("repeated-argument", keep(everything - {t}))
        for t, (i, k) in enumerate(edges)
        if k == 1 and (i, 0) in edges
    ]
    consumers = list(dict.fromkeys(i for i, _ in edges))
    if len(consumers) > 1:
        rows.append(Wrong("first-consumer", keep({t for t, (i, _) in enumerate(edges) if i == consumers[0]})))
    if n > 1:
        rows += [Wrong("overwrite", keep({t})) for t in reversed(range(n))]
    sizes = range(n - 1, -1, -1) if n <= SUBSET_TERMS else (n - 1, 0)
    rows += [
        Wrong("missing-term", keep(set(kept)))
        for size in sizes
        for kept in itertools.combinations(range(n), size)
    ]
    if n:
        rows.append(Wrong("sign", "n" * n))
    for code, use in (("no-local-derivative", "g"), ("no-grad-factor", "d")):  # in every term, or in one
        rows += [Wrong(code, use * n)] if n > 1 else []
        rows += [Wrong(code, one(t, use)) for t in range(n)]
    rows.append(Wrong("wrong-sum", None))
    return rows


def distinct(rows: Iterable[Wrong]) -> list[Wrong]:
    """The rows with each recipe once, at its first row.

    A recipe the catalogue lists twice (the first consumer's terms are also a subset of the terms) gives the
    same number at every input, and is named by its first row's code; two different recipes that give the
    same number at some inputs (the second edge of ``a * a`` left out, or the first) are both kept, and a
    number both give is said to be either mistake.
    """
    seen: set[str | None] = set()
    out = []
    for w in rows:
        if w.uses not in seen:
            out.append(w)
            seen.add(w.uses)
    return out
