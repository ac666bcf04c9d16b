"""``python -m micrograph`` and the ``micrograph`` console script: the command-line interface."""

from __future__ import annotations

import os
import signal
import sys

SIGPIPE_STATUS = 128 + int(getattr(signal, "SIGPIPE", 13))
"""The exit status a shell reports for a program killed by SIGPIPE (141)."""


def main(argv: list[str] | None = None) -> int:
    """Run the ``micrograph`` command (see :mod:`micrograph.cli`); return the exit status.

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
        print("micrograph: error: standard output is closed; nothing can be shown", file=sys.stderr)
        return 2
    from micrograph.cli import main as cli_main

    try:
        try:
            status = cli_main(argv)
        finally:  # also after argparse's --help and --version, which end in SystemExit
            sys.stdout.flush()
        return status
    except BrokenPipeError:  # the reader went away: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return SIGPIPE_STATUS


if __name__ == "__main__":
    sys.exit(main())
