"""``micrograph steps EXPRESSION``: the step-through page of Algorithms 6.1 and 6.2 (or 6.5 and 6.6).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithms 6.1, 6.2, 6.5, 6.6.
"""

from __future__ import annotations

import argparse

from lessons.cli.common import (
    Parser,
    UserError,
    at_option,
    expression_and_output,
    expression_argument,
    force_option,
    leaves,
    max_nodes_option,
    out_option,
    wrt_option,
)
from micrograph import pseudocode

__all__ = ["add", "run"]


def add(st: Parser) -> None:
    """Declare ``steps``'s arguments."""
    expression_argument(st)
    at_option(st)
    st.add_argument(
        "--algorithm",
        choices=list(pseudocode.STEP_PAGES),
        default="6.2",
        help="6.2 (default): Algorithm 6.1 (forward) then 6.2 (symbol-to-number back-propagation), node by "
        "node; 6.6: Algorithm 6.5 (G pruned to G', grad_table[z] = 1) then one frame per call of "
        "build_grad (Algorithm 6.6, symbol-to-symbol), G and B side by side with the nodes each call adds "
        "to B highlighted; all: both, one page",
    )
    wrt_option(
        st,
        "with --algorithm 6.6 or all: a variable of T, the targets of Algorithm 6.5 (repeatable; "
        "default: every variable)",
    )
    out_option(st, "the page to write (.html)", required=True)
    force_option(st)
    max_nodes_option(st, 80, "refuse bigger graphs: G, or G and B together for 6.6 (default 80)")


def run(args: argparse.Namespace) -> int:
    """Write the page; 0, or a UserError (--wrt without Algorithm 6.5, no variable, the output refused)."""
    if args.wrt and args.algorithm == "6.2":
        raise UserError("--wrt chooses T for Algorithm 6.5: give it with --algorithm 6.6 or --algorithm all")
    z, chosen, out = expression_and_output(
        args.expression, args.at, args.wrt, args.out, args.force, (".html",)
    )
    wrt = chosen or None
    if args.algorithm != "6.2" and wrt is None and not leaves(z):
        raise UserError(f"{args.expression!r} has no variables: Algorithm 6.5 needs one to differentiate by")
    import viz

    written = viz.steps(
        z, out, algorithm=args.algorithm, wrt=wrt, overwrite=args.force, max_nodes=args.max_nodes
    )
    shown = pseudocode.named(pseudocode.STEP_PAGES[args.algorithm])
    print(f"wrote {written}: {shown} step by step on z = {args.expression}")
    return 0
