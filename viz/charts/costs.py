"""The charts of the naive chain rule's cost: operations against depth (figure 6.9's families) and memory
against computation (store, recompute, checkpoint), lessons 3 and 4.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.3 (figure 6.9, eq.
6.50-6.53); checkpointing: Chen et al. (2016).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from viz import style
from viz.charts.model import Chart, Line, Mark, Panel, Rule

__all__ = ["OPERATIONS", "blowup", "memory"]

OPERATIONS = "operations (local derivatives + recomputed nodes)"
"""The y label of the operation counts: what :func:`micrograph.naive_grad` and back-propagation count."""


def _family_title(family: str) -> str:
    return {
        "chain": "chain: z = f(f(...f(w))), one path",
        "ladder": "ladder: each level uses the previous twice, 2^d paths",
    }.get(family, family)


def _by_depth(rows: Sequence[Mapping[str, Any]], key: str) -> tuple[list[float], list[float]]:
    """(the depths, the column ``key``) of ``families.blowup_rows`` rows."""
    return [float(r["depth"]) for r in rows], [float(r[key]) for r in rows]


def blowup(
    max_depth: int = 20,
    *,
    families: Sequence[str] = ("chain", "ladder"),
    max_operations: int = 2_000_000,
    rows: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
) -> Chart:
    """Operations to compute dz/dw against depth: the naive chain rule (eq. 6.53) vs back-propagation.

    One panel per family of :mod:`micrograph.families`, log y axis. The naive rule's counts are measured
    by :func:`micrograph.naive_grad` (local derivatives + recomputed nodes) until its budget stops it;
    deeper points are the closed form of :func:`micrograph.families.expected_counts`, drawn dashed with
    hollow markers ("extrapolated"). Back-propagation's count is one local derivative per edge
    (Algorithm 6.2), measured at every depth.

    Args:
        max_depth: the deepest graph, an int >= 1.
        families: the families to draw, names in ``micrograph.families.FAMILIES``.
        max_operations: the naive rule's budget per depth (see ``families.blowup_rows``).
        rows: already computed ``families.blowup_rows`` tables by family name; families missing from it
            are computed.

    Returns:
        The Chart: one panel per family.

    Raises:
        ValueError: an unknown family, no family, or max_depth < 1.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.2, figure 6.9, eq. 6.50-6.53.
    """
    from micrograph import families as fam

    names = list(families)
    if not names:
        raise ValueError("blowup: give at least one family, e.g. families=('chain', 'ladder')")
    given = rows or {}
    c = style.PLOT_COLORS
    panels = []
    for name in names:
        table = given.get(name) or fam.blowup_rows(name, max_depth, max_operations=max_operations)
        done = [r for r in table if r["naive_complete"]]
        rest = [r for r in table if not r["naive_complete"]]
        marks: list[Mark] = [
            Line(*_by_depth(table, "backprop_ops"), c["backprop"], "back-propagation (Algorithm 6.2)",
                 marker="circle"),
            Line(*_by_depth(done, "naive_ops"), c["naive"], "naive chain rule (eq. 6.53), measured",
                 marker="square"),
        ]  # fmt: skip
        if rest:
            marks += [
                Line(*_by_depth(done[-1:] + rest, "naive_ops"), c["naive"], dash="dashed"),
                Line(*_by_depth(rest, "naive_ops"), c["naive"], "naive, extrapolated by the closed form",
                     dash="none", marker="square", hollow=True),
                Rule(max_operations, style.PLOT_REFERENCE,
                     f"naive rule's budget ({max_operations:,} operations)"),
            ]  # fmt: skip
        panels.append(
            Panel(
                _family_title(name),
                marks,
                "depth d (nodes)",
                OPERATIONS,
                y_log=True,
                x_integers=True,
                legend="below",
            )
        )
    return Chart(
        "Operations to compute dz/dw:\nthe naive chain rule blows up, back-propagation stays linear",
        panels,
        max(6.4, 5.2 * len(names)),
        5.6,
        name="blowup",
    )


def memory(n_max: int = 64) -> Chart:
    """Memory against computation on a chain of n operations: store (back-propagation), recompute, checkpoint.

    Left: the peak number of forward values held at once; right: the operations (local derivatives +
    recomputed nodes), both against the chain's length n, from :func:`micrograph.families.memory_rows`.

    Args:
        n_max: the longest chain, an int >= 1.

    Returns:
        The Chart: two panels.

    Raises:
        ValueError: n_max < 1.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.3 (eq. 6.52 stores,
    eq. 6.53 recomputes); checkpointing: Chen et al. (2016).
    """
    from micrograph import families as fam

    rows = fam.memory_rows(n_max)
    n = [float(r["n"]) for r in rows]
    c = style.PLOT_COLORS
    kinds = [
        ("store", "store every value (back-propagation, eq. 6.52)"),
        ("recompute", "recompute (naive chain rule, eq. 6.53)"),
        ("checkpoint", "checkpoint every ~√n values"),
    ]
    peak: list[Mark] = [Line(n, [r[f"{k}_peak"] for r in rows], c[k], text) for k, text in kinds]
    ops: list[Mark] = [Line(n, [r[f"{k}_ops"] for r in rows], c[k], text) for k, text in kinds]
    return Chart(
        "dz/dw on a chain z = tanh(tanh(...tanh(w))): memory traded for computation",
        [
            Panel(
                "memory: values held at once",
                peak,
                "chain length n (operations)",
                "values held at peak",
                legend="upper left",
            ),
            Panel("computation", ops, "chain length n (operations)", OPERATIONS, y_log=True),
        ],
        10.5,
        4.4,
        name="memory",
    )
