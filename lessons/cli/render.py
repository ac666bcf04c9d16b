"""``micrograph render EXPRESSION``: an expression's node table, and its graph G (or G and B) drawn.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, figure 6.10.
"""

from __future__ import annotations

import argparse
import sys

from lessons.cli.common import (
    PROG,
    Parser,
    at_option,
    expression_and_output,
    expression_argument,
    force_option,
    max_nodes_option,
    out_option,
    wrt_option,
)

__all__ = ["add", "run", "SUFFIXES"]

SUFFIXES = (".svg", ".png", ".pdf", ".dot", ".tex", ".gif", ".mp4")
"""The files ``render --out`` writes."""


def add(r: Parser) -> None:
    """Declare ``render``'s arguments."""
    expression_argument(r)
    at_option(r)
    wrt_option(r, "differentiate with respect to this variable (repeatable): draws B beside G")
    out_option(
        r,
        "the file to write: .svg, .png, .pdf, .dot, .tex (TikZ, for LaTeX), "
        ".gif or .mp4 (Algorithms 6.1 and 6.2 animated, for slides)",
    )
    force_option(r)
    max_nodes_option(r, 300, "refuse to draw bigger graphs (default 300)")


def run(args: argparse.Namespace) -> int:
    """Print the node table and write the drawing; 0, or a UserError for an output refused."""
    z, wrt, out = expression_and_output(args.expression, args.at, args.wrt, args.out, args.force, SUFFIXES)
    import viz

    if wrt:
        from micrograph import Graph, grad

        dz = grad(z, wrt)  # Algorithm 6.5: B, drawn beside G (a derivative that does not exist: its error)
        z.backward()  # Algorithm 6.2, once: the table below and G's boxes show each node's dz/du
        table = {v: v.grad for v in Graph(z).nodes}
        dot = viz.draw_side_by_side(z, wrt, gradients=dz, grad_table=table, max_nodes=args.max_nodes)
    else:
        dot = viz.draw(z, max_nodes=args.max_nodes, title=args.expression)
        z.backward()  # Algorithm 6.2: the table below shows each node's gradient dz/du
    print(viz.text(z))
    for v in wrt:
        print(f"dz/d{v.label} = {v.grad:.6g}   (Algorithm 6.2; B's node from grad() holds the same)")
    if out is None:
        print(f"{PROG}: nothing written (give --out FILE.svg to draw it)", file=sys.stderr)
        return 0
    if out.suffix.lower() == ".tex":  # TikZ from Graphviz's layout: a LaTeX document for pdflatex
        written = viz.write_atomic(out, viz.to_tikz(dot).encode("utf-8"), overwrite=args.force)
    elif out.suffix.lower() in (".gif", ".mp4"):  # Algorithms 6.1 and 6.2 on G, one frame per step
        written = viz.animate(z, out, overwrite=args.force, max_nodes=args.max_nodes)
    else:
        written = viz.render(dot, out, overwrite=args.force)  # nothing replaced without --force (nor g.dot)
    print(f"wrote {written}")
    return 0
