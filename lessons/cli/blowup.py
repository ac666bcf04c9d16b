"""``micrograph blowup``: the naive chain rule's operations against back-propagation's, counted and plotted.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, figure 6.9, eqs. 6.50-6.53.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from lessons.cli.common import Parser, force_option, integer, out_option, output_file, quiet_option

__all__ = ["add", "run", "SUFFIXES"]

SUFFIXES = (".png", ".svg", ".pdf")
"""The plots ``blowup --out`` writes."""


def add(b: Parser) -> None:
    """Declare ``blowup``'s arguments."""
    b.add_argument(
        "--family",
        choices=["chain", "ladder", "both"],
        default="both",
        help="which family of graphs (default: both)",
    )
    b.add_argument("--max-depth", type=integer(1, 60), default=20, help="the deepest graph (default 20)")
    b.add_argument(
        "--budget",
        type=integer(1, 10**12),
        default=2_000_000,
        help="stop the naive rule after this many operations per depth; deeper points use the "
        "closed form (default 2000000)",
    )
    out_option(b, "the plot to write: .png, .svg or .pdf")
    force_option(b)
    quiet_option(b)


def run(args: argparse.Namespace) -> int:
    """Count, print the table and write the plot; 0, or a UserError for an output refused.

    The plot is created exclusively unless --force: a file made while the counts run is not replaced.
    """
    from tqdm import tqdm

    from micrograph import families

    fams = list(families.FAMILIES) if args.family == "both" else [args.family]
    out = output_file(args.out, args.force, SUFFIXES) if args.out is not None else None
    rows: dict[str, list[dict[str, Any]]] = {}
    with tqdm(
        total=len(fams) + (out is not None),
        desc="blowup",
        unit="stage",
        file=sys.stderr,
        disable=args.quiet or not sys.stderr.isatty(),
    ) as bar:
        for fam in fams:
            bar.set_postfix_str(f"counting {fam} (naive chain rule vs back-propagation)")
            rows[fam] = families.blowup_rows(fam, args.max_depth, max_operations=args.budget)
            bar.update()
        if out is not None:
            bar.set_postfix_str("plotting")
            import viz

            fig = viz.plot_blowup(
                args.max_depth, None, families=tuple(fams), max_operations=args.budget, rows=rows
            )
            viz.save(fig, out, overwrite=args.force)
            bar.update()
    for fam in fams:
        print(f"{fam}: the naive chain rule (eq. 6.53) against back-propagation (eq. 6.52)")
        print(f"  {'depth':>5}  {'paths w->z':>14}  {'naive':>18}  {'backprop':>8}")
        for r in rows[fam]:
            mark = "" if r["naive_complete"] else " *"
            row = f"  {r['depth']:>5}  {r['paths']:>14,}  {r['naive_ops']:>18,}  {r['backprop_ops']:>8,}"
            print(row + mark)
        if not all(r["naive_complete"] for r in rows[fam]):
            print("  * the closed form: the naive run was stopped by the budget (--budget)")
    if out is not None:
        print(f"wrote {out}")
    return 0
