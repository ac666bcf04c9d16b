"""``python -m micrograph``: the ``micrograph`` command, which belongs to the teaching application.

The engine package holds the engine and nothing else; its command line is :mod:`lessons.cli` (one module
per subcommand). This file is the one place in ``micrograph/`` that names the application: it runs
:func:`lessons.cli.main`, as the ``micrograph`` console script does (``setup.cfg``), so that
``python -m micrograph`` keeps working. ``tests/test_layers.py`` holds that nothing else in the engine
imports ``lessons`` or ``viz``.
"""

from __future__ import annotations

import sys

from lessons.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
