"""``micrograph notebooks --out DIR``: every lesson as a Jupyter notebook, generated from the lesson.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import argparse

from lessons.cli.common import Parser, UserError, force_option, out_option, output_dir

__all__ = ["add", "run"]


def add(nbp: Parser) -> None:
    """Declare ``notebooks``'s arguments."""
    out_option(nbp, "the directory to write into (created if missing)", required=True)
    force_option(nbp, "overwrite existing notebooks")


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
