"""What the site's build computes before it saves the memory of the page's Python (``web.prepare``).

The build runs ``prepare`` in Node, where there is no Graphviz, and the page starts from the memory it left:
the page must then get what a Python that never ran ``prepare`` gives, the catalogue and the first step alike.
"""

from __future__ import annotations

import subprocess
import sys

from lessons.publish import site

FIRST_VIEW = """
import sys
from lessons.publish import web
from viz.render import set_layout

def no_graphviz(source):
    raise RuntimeError("the build has no Graphviz")

set_layout(no_graphviz)
if sys.argv[1] == "prepared":
    web.prepare()
set_layout(lambda source: '<svg xmlns="http://www.w3.org/2000/svg"><title>laid out</title></svg>')
print(web.catalogue())
print(web.LessonView(1).move("here", 0, 80))
"""


def _first_view(how: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", FIRST_VIEW, how], cwd=site.ROOT, capture_output=True, text=True, check=True
    )
    return done.stdout


def test_prepare_lays_nothing_out_and_the_page_gets_what_it_would_without_it() -> None:
    prepared = _first_view("prepared")
    assert prepared == _first_view("fresh")
    catalogue, step = prepared.splitlines()
    assert '"number": 1' in catalogue and "laid out" in step
