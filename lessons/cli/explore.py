"""``micrograph explore EXPRESSION`` or ``micrograph explore --mlp DATA``: the explorer, one HTML page where G
and B follow the sliders; for ``--mlp``, a small network's minibatch cost drawn by layers or neurons.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5, Algorithms 6.1, 6.2, 6.5, 6.6;
sections 6.5.4 and 6.5.7 (an MLP's minibatch cost by layers).
"""

from __future__ import annotations

import argparse
from typing import Any

from lessons.cli.common import (
    Parser,
    UserError,
    at_option,
    bindings,
    expression_argument,
    force_option,
    hidden_option,
    integer,
    leaves,
    max_nodes_option,
    out_option,
    output_file,
    real,
    seed_option,
    wrt_option,
)
from lessons.cli.train import DATASETS

__all__ = ["add", "run", "MAX_BATCH", "MAX_WIDTH"]

MAX_BATCH = 64
"""The largest minibatch ``--batch`` draws: every example adds a copy of the network's scalars to G, so the
largest only with a small ``--hidden`` and a raised ``--max-nodes``."""
MAX_WIDTH = 64
"""The widest hidden layer ``--hidden`` draws."""
_MAX_SCALARS = 20_000
"""``viz.explore_groups.MAX_SCALARS``, the largest G explored by groups, for the help (read without importing
the explorer, which imports Graphviz's package)."""
_MLP_ONLY = ("level", "hidden", "batch", "l2", "seed")
"""The options that shape the network of ``--mlp``: an expression has no use for them."""


def add(xp: Parser) -> None:
    """Declare ``explore``'s arguments."""
    expression_argument(xp, 'e.g. "tanh(x*y + exp(x))" (or --mlp DATA instead)', optional=True)
    at_option(xp, "the starting value of a variable")
    wrt_option(xp, "draw B for these variables (repeatable; default: every variable)")
    out_option(xp, "the page to write (.html)", required=True)
    force_option(xp)
    max_nodes_option(
        xp,
        300,
        "refuse to draw bigger graphs (default 300; with --mlp, the most boxes in one drawing, and a "
        "group of more scalars is not opened); raising it costs layout time: G and B of about 500 nodes "
        "each take a few tenths of a second of Graphviz",
    )
    xp.add_argument(
        "--predict", action="store_true", help="hide the grad_table: type each entry from u(n) down"
    )
    mlp = xp.add_argument_group("a network instead of an expression (sections 6.5.4 and 6.5.7)")
    mlp.add_argument("--mlp", choices=DATASETS, help="explore an MLP's minibatch cost on this data set")
    mlp.add_argument(
        "--level",
        choices=("layers", "neurons"),
        default="layers",
        help="with --mlp: the level shown first, one box per layer or per neuron (default layers)",
    )
    hidden_option(mlp, MAX_WIDTH, "with --mlp (see --batch for what fits): ")
    mlp.add_argument(
        "--batch",
        type=integer(1, MAX_BATCH),
        default=2,
        help=f"with --mlp: the examples in the minibatch, 1 to {MAX_BATCH} (default 2). Each example adds a "
        "box per neuron, so not every --batch goes with every --hidden: a network of more than --max-nodes "
        f"boxes by neurons (about batch x (hidden + 8) on iris) or of more than {_MAX_SCALARS} scalars is "
        "refused at once. At the default --max-nodes, --batch 16 --hidden 8 fits on iris; --batch 64 needs "
        "a larger --max-nodes whatever --hidden; --batch 64 --hidden 64 has too many scalars for any",
    )
    mlp.add_argument(
        "--l2",
        type=real(0.0, above=False),
        default=1e-3,
        help="with --mlp: weight decay lambda (default 1e-3)",
    )
    seed_option(mlp, 2**63 - 1, "with --mlp: seed for the split and the weights")
    # None marks an option of --mlp's not given, so that one given with an expression (which would ignore
    # it) is refused; _run_mlp fills in the defaults the help states.
    defaults = {name: xp.get_default(name) for name in _MLP_ONLY}
    xp.set_defaults(mlp_defaults=defaults, **dict.fromkeys(_MLP_ONLY))


def run(args: argparse.Namespace) -> int:
    """Write the page; 0, or a UserError for an output refused or options that do not go together (an
    option of --mlp's, such as --level, with an expression; a network too large to explore)."""
    if args.mlp is not None:
        return _run_mlp(args)
    if args.expression is None:
        raise UserError("explore needs an EXPRESSION, or --mlp DATA for a network")
    for name in _MLP_ONLY:
        if getattr(args, name) is not None:
            option = "--" + name
            raise UserError(
                f"{option} is for --mlp DATA (a network): an expression is drawn node by node; leave "
                f"{option} out"
            )
    from micrograph.expr import build

    env, wrt_names = bindings(args.expression, args.at, args.wrt)
    out = output_file(args.out, args.force, (".html",))
    z = build(args.expression, env)  # a DomainError stops here, before anything is written
    by_name = leaves(z)
    import viz

    wrt = [by_name[n] for n in wrt_names] or None
    explorer = viz.explore(z, wrt, max_nodes=args.max_nodes, predict=args.predict)
    return _written(explorer, out, args.force)


def _run_mlp(args: argparse.Namespace) -> int:
    """``--mlp DATA``: the minibatch cost of a one-hidden-layer MLP on DATA, explored by layers or neurons."""
    if args.expression is not None:
        raise UserError(f"give an EXPRESSION or --mlp {args.mlp}, not both (got {args.expression.strip()!r})")
    for given, option in ((args.at, "--at"), (args.wrt, "--wrt"), (args.predict, "--predict")):
        if given:
            raise UserError(
                f"{option} is for an expression; --mlp {args.mlp} explores the network's parameters"
            )
    for name, default in args.mlp_defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, default)
    from micrograph import datasets, nn

    out = output_file(args.out, args.force, (".html",))
    X, y = getattr(datasets, args.mlp)()
    train, _ = datasets.standardize(*datasets.split(X, y, test_fraction=0.3, seed=args.seed))
    Xb, yb = train[0][: args.batch], train[1][: args.batch]
    model = nn.MLP(len(X[0]), [args.hidden, len(set(y))], activation="tanh", seed=args.seed)
    cost = nn.forward_minibatch(model, Xb, yb, l2=args.l2)  # J = (1/B) sum_b L_b + lambda Omega(theta)
    import viz
    from viz.dot import GraphTooLarge

    try:  # too large at either level: refused before B, the frames and any layout are made
        explorer = viz.explore(cost.J, max_nodes=args.max_nodes, level=args.level)
    except GraphTooLarge as e:
        raise UserError(_too_large(e, args)) from None
    return _written(explorer, out, args.force)


def _too_large(e: Any, args: argparse.Namespace) -> str:
    """The line that refuses a network too large to explore (a ``viz.GraphTooLarge``), naming the options
    that change it: ``--batch`` and ``--hidden`` always, ``--max-nodes`` when a larger one would do.
    ``--level`` is not one: the page holds both levels whatever level it opens at."""
    from viz.explore_groups import MAX_SCALARS

    network = f"--mlp {args.mlp} --batch {args.batch} --hidden {args.hidden}"
    if e.what == "G" and e.limit == MAX_SCALARS:
        return (
            f"{network} makes a G of {e.size} scalars, more than the {MAX_SCALARS} the explorer shows by "
            "layers and neurons: give a smaller --batch or --hidden"
        )
    return (
        f"{network}: {e.what} would have {e.size} boxes, more than --max-nodes {e.limit} (the page holds "
        f"both levels, whatever --level): give a smaller --batch or --hidden, or --max-nodes {e.size} (or "
        "more; Graphviz's layout time grows faster than the drawing)"
    )


def _written(explorer: Any, out: Any, force: bool) -> int:
    written = explorer.save(out, overwrite=force)
    print(
        f"wrote {written} ({explorer.spec['n']} nodes, {len(explorer.spec['frames'])} frames); "
        "open it in a browser"
    )
    return 0
