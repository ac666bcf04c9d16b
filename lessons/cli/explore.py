"""``micrograph explore EXPRESSION``: the explorer, one HTML page where G and B follow the sliders.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5, Algorithms 6.1, 6.2, 6.5, 6.6.
"""

from __future__ import annotations

import argparse
from typing import Any

from lessons.cli.common import MAX_NODES, at_option, bindings, integer, leaves, output_file, path

__all__ = ["add", "run"]


def add(sub: Any) -> None:
    """Declare ``explore`` and its arguments."""
    xp = sub.add_parser(
        "explore",
        help="one HTML page: drag each variable, watch G and B change, step through Algorithms 6.1/6.2",
        description="Parse an expression (as render does, never eval) and write the explorer as one "
        "self-contained HTML page: a slider per variable, G and B recomputed in the browser by JavaScript "
        "generated from the operation table, the frames of Algorithms 6.1 and 6.2, and a node's "
        "grad_table entry as the book's sum when clicked.",
        epilog='example: micrograph explore "tanh(x*y + exp(x))" --at x=1 --at y=2 --out z.html',
    )
    xp.takes_expression = True
    xp.add_argument("expression", help='e.g. "tanh(x*y + exp(x))"')
    at_option(xp, "the starting value of a variable")
    xp.add_argument(
        "--wrt",
        action="append",
        default=[],
        metavar="NAME",
        help="draw B for these variables (repeatable; default: every variable)",
    )
    xp.add_argument("--out", required=True, type=path, help="the page to write (.html)")
    xp.add_argument("--force", action="store_true", help="overwrite an existing file")
    xp.add_argument(
        "--max-nodes",
        type=integer(1, MAX_NODES),
        default=300,
        help="refuse to draw bigger graphs (default 300); raising it costs layout time: G and B of about 500 "
        "nodes each take a few tenths of a second of Graphviz",
    )
    xp.add_argument(
        "--predict", action="store_true", help="hide the grad_table: type each entry from u(n) down"
    )


def run(args: argparse.Namespace) -> int:
    """Write the page; 0, or a UserError for an output refused."""
    from micrograph.expr import build

    env, wrt_names = bindings(args.expression, args.at, args.wrt)
    out = output_file(args.out, args.force, (".html",))
    z = build(args.expression, env)  # a DomainError stops here, before anything is written
    by_name = leaves(z)
    import viz

    wrt = [by_name[n] for n in wrt_names] or None
    explorer = viz.explore(z, wrt, max_nodes=args.max_nodes, predict=args.predict)
    written = explorer.save(out, overwrite=args.force)
    print(
        f"wrote {written} ({explorer.spec['n']} nodes, {len(explorer.spec['frames'])} frames); "
        "open it in a browser"
    )
    return 0
