"""The chart of second derivatives, lesson 8: the Hessian H as a heat map, and H v beside it.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.10, equation 6.59.
"""

from __future__ import annotations

from collections.abc import Sequence

from viz.charts.model import Cells, Chart, Panel

__all__ = ["hessian"]


def hessian(
    H: Sequence[Sequence[float]],
    names: Sequence[str],
    Hv: Sequence[float] | None = None,
    v: Sequence[float] | None = None,
) -> Chart:
    """The Hessian H as a heat map, each entry written in its cell; beside it H v, if given.

    Args:
        H: the n x n Hessian (rows of numbers), e.g. from ``grad`` applied twice.
        names: the n variables' names, for the axes.
        Hv: ``hessian_vector_product``'s result as numbers, drawn as a column beside H; None for none.
        v: the vector v of H v, for the column's title.

    Returns:
        The Chart: H, and H v beside it.

    Raises:
        ValueError: H not square, or names, Hv or v of another length than H.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.10, equation 6.59.
    """
    n = len(H)
    if any(len(row) != n for row in H):
        raise ValueError(f"plot_hessian: H must be square, got rows of lengths {[len(r) for r in H]}")
    if len(names) != n or (Hv is not None and len(Hv) != n) or (v is not None and len(v) != n):
        raise ValueError(f"plot_hessian: names, Hv and v must have n = {n} entries each")
    values = [[float(x) for x in row] for row in H]
    top = max((abs(x) for row in values for x in row), default=1.0) or 1.0
    ticks = [f"∂{x}" for x in names]
    panels = [
        Panel(
            "H = ∂²f / ∂xᵢ∂xⱼ  (grad of grad)",
            [Cells(values, top, ticks, ticks, colorbar=True)],
            grid=False,
            weight=float(n),
        )
    ]
    if Hv is not None:
        shown = "" if v is None else ",\nv = (" + ", ".join(f"{x:g}" for x in v) + ")"
        column = Cells([[float(h)] for h in Hv], top, None, [""] * n)
        panels.append(Panel(f"H v (eq. 6.59){shown}", [column], grid=False, small_title=True))
    return Chart("", panels, 2.0 + 1.1 * n + (1.4 if Hv is not None else 0.0), 1.2 + 0.9 * n, name="hessian")
