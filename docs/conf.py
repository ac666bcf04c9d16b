"""Sphinx configuration of micrograph's documentation site (``make docs``: ``sphinx-build -W``).

Why Sphinx with MyST-NB and autodoc, not MkDocs Material with mkdocstrings: the lessons are Jupyter
notebooks generated from the lesson modules (``lessons.publish.notebooks``), and MyST-NB executes them during
the build with the kernel that runs micrograph, so every number and picture on a lesson page is computed
when the site is built, and a notebook that raises fails the build. autodoc with napoleon reads the
Google-style docstrings as they are written, and Sphinx's ``-W`` turns every broken cross-reference,
missing file and docstring markup error into a failure. The README and ``docs/*.md`` stay Markdown
(MyST), so the repository's pages and the site's are the same files.

What is generated at build time (into ``docs/_generated``, git-ignored): the eight lesson notebooks
(``micrograph notebooks``), figure 6.10 drawn by ``viz.draw_side_by_side``, and the explorer's saved page
of figure 6.10 (``viz.explore(...).save``), which ``figure_6_10.md`` embeds in an iframe.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import micrograph  # noqa: E402

project = "micrograph"
author = "the micrograph authors"
copyright = "2026, the micrograph authors"
release = micrograph.__version__
version = release

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]

exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"

# The README links its pictures and pages from the repository's root (docs/...): included from here,
# ``relative-images`` and ``relative-docs`` rewrite them.
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3

# Lessons: executed at every build, in order, failing the build on any error and on any output to stderr
# (a warning, such as tqdm's "IProgress not found" when ipywidgets is missing: -W turns it into an error).
# The executed notebooks are kept in _build/jupyter_execute, where tests/test_notebooks.py reads them.
nb_execution_mode = "force"
nb_execution_timeout = 600
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True
nb_output_stderr = "warn"

autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True  # "Attributes:" as fields: autodoc documents the members themselves

html_theme = "furo"
html_title = f"micrograph {release}"
html_static_path: list[str] = []
html_extra_path = ["_generated/extra"]

GENERATED = HERE / "_generated"


def _generate() -> None:
    """Write the lesson notebooks, figure 6.10 and the explorer page into ``docs/_generated``."""
    import viz
    from lessons.publish.notebooks import write_notebooks
    from micrograph.families import chain

    if GENERATED.exists():
        shutil.rmtree(GENERATED)
    (GENERATED / "extra").mkdir(parents=True)
    (GENERATED / "lessons").mkdir()
    write_notebooks(GENERATED / "lessons")
    z, w = chain(3)  # figure 6.10: z = f(f(f(w))), f = tanh, at w = 0.5 (README, lesson 6)
    viz.render(viz.draw_side_by_side(z, w), GENERATED / "fig_6_10.svg")
    viz.explore(z, wrt=[w]).save(GENERATED / "extra" / "explorer_fig_6_10.html")


_BARS = re.compile(r"(?<![|`\\])\|([A-Za-z_][A-Za-z0-9_()]*)\|(?![|`])")


def _plain_text_docstring(app, what, name, obj, options, lines):  # type: ignore[no-untyped-def]
    """Read micrograph's docstrings as the plain text they are written as (help() shows them so).

    Two habits of that text mean something else in reStructuredText: ``|w|`` (an absolute value) is a
    substitution reference, and a block of pseudo-code indented under a paragraph (Algorithm 6.3's
    loop) is a block quote whose deeper lines are an error. The first is escaped; the second becomes
    a literal block, as it reads in a terminal. Runs after napoleon has turned the Google sections into
    fields, which are left alone.
    """
    out: list[str] = []
    for k, line in enumerate(lines):
        if not line.lstrip().startswith(("``", ".. ", ">>>")):
            line = _BARS.sub(r"\\|\1\\|", line)
        starts_block = (
            k >= 2 and line.startswith(" ") and line.strip() and not lines[k - 1].strip()
            and lines[k - 2].strip() and not lines[k - 2].startswith((" ", ":", ".."))
            and not lines[k - 2].rstrip().endswith("::")
        )  # fmt: skip
        if starts_block:
            out += ["::", ""]
        out.append(line)
    lines[:] = out


def setup(app):  # type: ignore[no-untyped-def]
    app.connect("autodoc-process-docstring", _plain_text_docstring)


_generate()
