"""``python -m micrograph`` and the ``micrograph`` console script: the command-line interface."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run the ``micrograph`` command (see :mod:`micrograph.cli`)."""
    from micrograph.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
