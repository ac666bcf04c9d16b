"""``micrograph notebooks --out DIR``: every lesson as a Jupyter notebook, generated from the lesson.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import argparse
from typing import Any

from lessons.cli.common import UserError, output_dir, path

__all__ = ["add", "run"]


def add(sub: Any) -> None:
    """Declare ``notebooks`` and its arguments."""
    nbp = sub.add_parser(
        "notebooks",
        help="every lesson as a Jupyter notebook (lesson1.ipynb ...), generated from the lessons themselves",
        description="Run each lesson once and write it as a notebook: its text as Markdown cells, the code "
        "of each step as a code cell, its pictures as the cells' outputs.",
        epilog="example: micrograph notebooks --out notebooks/",
    )
    nbp.add_argument(
        "--out", required=True, type=path, help="the directory to write into (created if missing)"
    )
    nbp.add_argument("--force", action="store_true", help="overwrite existing notebooks")


def run(args: argparse.Namespace) -> int:
    """Write the notebooks; 0, or a UserError (nbformat missing, a notebook there without --force).

    Without --force each notebook is created exclusively: one made meanwhile is not replaced (exit 2).
    """
    try:  # checked before anything is created
        import nbformat  # noqa: F401 - the notebook extra
    except ImportError:
        raise UserError("micrograph notebooks needs nbformat: pip install 'micrograph[notebook]'") from None
    import lessons
    from lessons.publish.notebooks import write_notebooks

    files = [f"lesson{n}.ipynb" for n in lessons.LESSONS]
    out = output_dir(args.out, args.force, files)
    for p in write_notebooks(out, overwrite=args.force):
        print(f"wrote {p}")
    return 0
