"""The ``micrograph`` command: the teaching application's command line.

::

    micrograph tour --out out/                                   # every lesson, every picture, an index.html
    micrograph lesson 2                                          # step through lesson 2 (Enter, b, q)
    micrograph render "tanh(tanh(tanh(w)))" --at w=0.5 --wrt w --out fig_6_10.svg     # figure 6.10
    micrograph blowup --family ladder --max-depth 24 --out blowup.png                  # figure 6.9's argument
    micrograph train iris --hidden 8 --epochs 100 --out iris/                          # Algorithms 6.3/6.4
    micrograph exercise check backprop.py                                              # your Algorithm 6.2

Each subcommand is a module of this package with two functions: ``add(parser)`` declares its arguments,
``run(args) -> int`` runs it and returns the exit status. :data:`COMMANDS` lists them, a row a subcommand
with what its ``--help`` says of it (its line in ``micrograph --help``, its description, its epilog). What
they share (the parser, the options several take, the argument types, the output checks, the one line a
mistake is reported in) is :mod:`lessons.cli.common`.
The parser imports nothing heavy; each ``run`` imports what it needs, so ``--help`` is cheap.

Expressions are parsed by :mod:`micrograph.expr` (Python's ``ast`` and a whitelist; never ``eval``), and their
values checked by :func:`micrograph.expr.bind`. Every mistake a user can make exits with status 2 and one
line on stderr, never a traceback. The ``micrograph`` console script and ``python -m micrograph``
(:mod:`micrograph.__main__`, the one place the engine package names the application) both run :func:`main`.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import os
import signal
import sys

from lessons.cli import (
    blowup,
    exercise,
    explore,
    lesson,
    notebooks,
    render,
    site,
    steps,
    tour,
    train,
)
from lessons.cli.common import (
    PROG,
    Command,
    Parser,
    UserError,
    Version,
    add_command,
    expressions_as_positionals,
    fail,
    user_message,
)

__all__ = ["main", "build_parser", "UserError", "COMMANDS", "SIGPIPE_STATUS"]

COMMANDS: dict[str, Command] = {
    "tour": Command(
        tour.add,
        tour.run,
        help="run every lesson and write all diagrams, plots and an index.html",
        description="Run every lesson's steps and write each diagram (SVG), the plots (PNG), "
        "the step-through HTML pages and an index.html that links them all.",
    ),
    "lesson": Command(
        lesson.add,
        lesson.run,
        help="list the lessons, or step through one",
        description="Without N, list the lessons. With N, step through lesson N: Enter for the "
        "next step, b back, g K to go to step K, q quit; a step taller than the terminal shows a screen "
        "at a time (Enter for more, s for the rest of the step); a step that asks a question takes your "
        "prediction first (a number; Enter skips). With stdin not a terminal, print every step.",
    ),
    "steps": Command(
        steps.add,
        steps.run,
        help="write the step-through page of Algorithms 6.1 and 6.2 (or 6.5 and 6.6) for an expression",
        description="Write one self-contained HTML page that steps through Algorithm 6.1 (forward) and "
        "Algorithm 6.2 (back-propagation) on the graph of EXPRESSION, frame by frame; with --algorithm 6.6, "
        "through Algorithm 6.5 and each call of build_grad (Algorithm 6.6) instead.",
        epilog='examples: micrograph steps "x*y + exp(x)" --at x=1 --at y=2 --out page.html; '
        'micrograph steps "tanh(tanh(tanh(w)))" --at w=0.5 --algorithm 6.6 --out alg66.html',
    ),
    "render": Command(
        render.add,
        render.run,
        help="draw an expression's graph G, or G and B side by side (figure 6.10)",
        description="Parse an expression over named variables (numbers, names, + - * / ** and "
        "unary -, exp log tanh sigmoid relu sin cos sqrt; nothing else, never "
        "eval), print its "
        "node table, and draw it. With --wrt, draw G and the backward subgraph B side by side "
        "(figure 6.10).",
        epilog='example: micrograph render "tanh(tanh(tanh(w)))" --at w=0.5 --wrt w --out fig_6_10.svg',
    ),
    "explore": Command(
        explore.add,
        explore.run,
        help="one HTML page: drag each variable, watch G and B change, step through Algorithms 6.1/6.2",
        description="Parse an expression (as render does, never eval) and write the explorer as one "
        "self-contained HTML page: a slider per variable, G and B recomputed in the browser by JavaScript "
        "generated from the operation table, the frames of Algorithms 6.1 and 6.2, and a node's "
        "grad_table entry as the book's sum when clicked. With --mlp DATA instead of an expression: the "
        "cost J = mean L + lambda Omega of a minibatch of a shipped data set through a one-hidden-layer "
        "MLP (tanh, softmax cross-entropy, weight decay), drawn by layers or by neurons (G and B grouped "
        "the same way; a button switches level); click a box, or Tab to it and press Enter, to see its "
        "scalars; the sliders are the examples' inputs.",
        epilog='examples: micrograph explore "tanh(x*y + exp(x))" --at x=1 --at y=2 --out z.html; '
        "micrograph explore --mlp iris --batch 2 --level layers --out iris.html",
    ),
    "notebooks": Command(
        notebooks.add,
        notebooks.run,
        help="every lesson as a Jupyter notebook (lesson1.ipynb ...), generated from the lessons themselves",
        description="Run each lesson once and write it as a notebook: its text as Markdown cells, the code "
        "of each step as a code cell, its pictures as the cells' outputs.",
        epilog="example: micrograph notebooks --out notebooks/",
    ),
    "blowup": Command(
        blowup.add,
        blowup.run,
        help="count the naive chain rule against back-propagation, and plot it",
        description="Figure 6.9 and equations 6.50-6.53: the operations the naive chain rule "
        "needs against back-propagation, for the chain z = f(f(...f(w))) and the ladder where "
        "each level uses the previous one twice (2^depth paths).",
    ),
    "train": Command(
        train.add,
        train.run,
        help="train an MLP on a data set (Algorithms 6.3, 6.4) and plot the loss",
        description="Train a one-hidden-layer MLP with softmax cross-entropy by minibatch SGD on "
        "a shipped data set (70% train, 30% held out, standardized on the training part). "
        "Writes loss.png, summary.json and, for 2-D data, boundary.png.",
    ),
    "exercise": Command(
        exercise.add,
        exercise.run,
        help="exercises: write the book's algorithms yourself and have them checked",
        description="Exercises for section 6.5: you write the book's algorithms (local derivatives, the "
        "topological order, Algorithms 6.1, 6.2, 6.4 and 6.6, the naive chain rule), micrograph checks them.",
        epilog=exercise.FLOW,
        formatter_class=exercise.ProseAndExamples,
    ),
    "site": Command(
        site.add,
        site.run,
        help="build a static site of the lessons and exercises that runs in the browser (needs npm)",
        description="Build a static site of the lessons and exercises that runs entirely in the browser "
        "(Pyodide, micrograph's wheel, Graphviz in WebAssembly, CodeMirror): every file in --out, no network "
        "when it runs. Building needs a checkout of micrograph, npm and PyPI.",
        epilog="example: micrograph site --out site-out && micrograph site --out site-out --serve",
    ),
}
"""Each subcommand: its arguments (``add``), what it does (``run``) and what ``--help`` says of it, in the
order ``--help`` lists them."""

SIGPIPE_STATUS = 128 + int(getattr(signal, "SIGPIPE", 13))
"""The exit status a shell reports for a program killed by SIGPIPE (141)."""


def build_parser() -> Parser:
    """The argparse parser of the ``micrograph`` command (every subcommand has ``--help``).

    Its ``commands`` attribute maps each subcommand's name to its parser.
    """
    p = Parser(
        prog=PROG,
        description="micrograph: back-propagation as section 6.5 of Deep Learning "
        "(Goodfellow, Bengio & Courville, 2016) writes it, on scalars, made visible.",
        epilog="Start with: micrograph tour --out out/",
    )
    p.add_argument("--version", action=Version, help="show the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, command in COMMANDS.items():
        add_command(sub, name, command)
    p.commands = dict(sub.choices)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the ``micrograph`` command with ``argv`` (``sys.argv[1:]`` by default); return the exit status.

    User errors exit 2 with one line on stderr (``micrograph: error: ...``); an expression's error
    names the expression and the column.

    When the reader of standard output goes away early (``micrograph lesson 2 | head -3``) the command
    stops quietly: nothing on stderr, exit status 141, as a program killed by SIGPIPE. This follows the
    note on SIGPIPE in Python's :mod:`signal` documentation: the output is flushed inside the ``try``,
    and standard output is pointed at the null device so the interpreter's last flush raises nothing.
    Started with standard output closed, or writing it failing (a full disk), the command exits 2 with one
    line on stderr; with stderr closed, it runs, its messages discarded.
    """
    if sys.stderr is None:  # started with stderr closed (2>&-): its messages go nowhere
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # open for the life of the process
    if sys.stdout is None:  # started with stdout closed (micrograph --version >&-)
        return fail("standard output is closed; nothing can be shown")
    try:
        try:
            status = _run(argv)
        finally:  # also after argparse's --help and --version, which end in SystemExit
            sys.stdout.flush()
        return status
    except BrokenPipeError:  # the reader went away: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return SIGPIPE_STATUS
    except OSError as e:  # standard output itself cannot be written (a full disk: --version > /dev/full)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that the interpreter's last flush raises nothing
        return fail(f"cannot write standard output: {e.strerror or e}")


def _run(argv: list[str] | None) -> int:
    """Parse ``argv`` and run its subcommand; a user's mistake is one line and status 2."""
    parser = build_parser()
    try:
        args = parser.parse_args(expressions_as_positionals(parser, sys.argv[1:] if argv is None else argv))
    except SystemExit as e:  # a usage error (2, its line written), --help or --version (0)
        return e.code if isinstance(e.code, int) else 2
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return int(COMMANDS[args.command].run(args))
    except Exception as e:  # a user's mistake is one line; anything else is a bug and keeps its traceback
        message = user_message(e, getattr(args, "out", None))
        if message is None:
            raise
        return fail(*message)
    except KeyboardInterrupt:
        return fail("interrupted")
