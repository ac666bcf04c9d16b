"""``python -m micrograph`` and the ``micrograph`` console script: the command-line interface."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run the ``micrograph`` command (see :mod:`micrograph.cli`)."""
    from micrograph.cli import main as cli_main

    try:
        return cli_main(argv)
    except BrokenPipeError:  # the reader went away (micrograph render ... | head): stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
