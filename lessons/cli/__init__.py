"""The ``micrograph`` command: the teaching application's command line.

::

    micrograph tour --out out/                                   # every lesson, every picture, an index.html
    micrograph lesson 2                                          # step through lesson 2 (Enter, b, q)
    micrograph render "tanh(tanh(tanh(w)))" --at w=0.5 --wrt w --out fig_6_10.svg     # figure 6.10
    micrograph blowup --family ladder --max-depth 24 --out blowup.png                  # figure 6.9's argument
    micrograph train iris --hidden 8 --epochs 100 --out iris/                          # Algorithms 6.3/6.4
    micrograph exercise check backprop.py                                              # your Algorithm 6.2

Each subcommand is a module of this package with ``COMMAND``, what its ``--help`` says of it, and two
functions: ``add(parser)`` declares its arguments on the parser made from ``COMMAND``, ``run(args) -> int``
runs it and returns the exit status. What they share (the parser, the options several take, the argument
types, the output checks, the one line a mistake is reported in) is :mod:`lessons.cli.common`.
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
from types import ModuleType

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
    Parser,
    UserError,
    Version,
    add_command,
    expressions_as_positionals,
    fail,
    user_message,
)

__all__ = ["main", "build_parser", "UserError", "COMMANDS", "SIGPIPE_STATUS"]

COMMANDS: dict[str, ModuleType] = {
    "tour": tour,
    "lesson": lesson,
    "steps": steps,
    "render": render,
    "explore": explore,
    "notebooks": notebooks,
    "blowup": blowup,
    "train": train,
    "exercise": exercise,
    "site": site,
}
"""Each subcommand's module, in the order ``--help`` lists them."""

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
    for name, module in COMMANDS.items():
        module.add(add_command(sub, name, module.COMMAND))
    p.commands = dict(sub.choices)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the ``micrograph`` command with ``argv`` (``sys.argv[1:]`` by default); return the exit status.

    User errors exit 2 with one line on stderr (``micrograph: error: ...``); a syntax error in an
    expression adds the expression and a caret under the column.

    When the reader of standard output goes away early (``micrograph lesson 2 | head -3``) the command
    stops quietly: nothing on stderr, exit status 141, as a program killed by SIGPIPE. This follows the
    note on SIGPIPE in Python's :mod:`signal` documentation: the output is flushed inside the ``try``,
    and standard output is pointed at the null device so the interpreter's last flush raises nothing.
    Started with standard output closed, the command exits 2 with one line on stderr; with stderr closed, it
    runs, its messages discarded.
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
