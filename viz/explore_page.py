"""The explorer shipped: one self-contained HTML page, or a Jupyter widget (anywidget), one script in both.

The page's script is d3-zoom (vendored from npm, static/vendor), the program that
:func:`micrograph.compile.compile_javascript` generated, and the explorer's ES modules (static/explorer:
one file a part of the page, see explorer.js) joined here into one classic script (:func:`explorer_script`)
that defines ``micrographExplorer`` and nothing else. Joined in Python, the saved page stays one file that
needs no network, its one ``<script>`` admitted by its digest (:mod:`viz.page`), and the widget's ``_esm``
is the same script with an ES ``export default``.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import json
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any

from viz import style
from viz.files import write_atomic
from viz.page import html_page

__all__ = ["Explorer", "page_html", "explorer_script", "join_modules", "d3_zoom", "EXPLORER_MODULES"]

EXPLORER_MODULES = (
    "words", "model", "pan", "panes", "boxes", "focus", "stepping", "sum", "predict", "groups", "explorer",
)  # fmt: skip
"""The explorer page's ES modules, ``static/explorer/NAME.js``, each after the modules it imports; the last
(explorer.js) lays the page out and exports ``mount``, ``page``, ``widget`` and ``fmt``."""

_IMPORT = re.compile(r'^import \{([^}]*)\} from "\./([\w-]+)\.js";$')
_EXPORT = re.compile(r"^export (?:function|const|let|var) ([A-Za-z_$][\w$]*)")
_EXPORT_LIST = re.compile(r"^export \{([^}]*)\};$")


def _asset(name: str) -> str:
    return resources.files("viz").joinpath("static").joinpath(name).read_text(encoding="utf-8")


def _css() -> str:
    """The explorer's stylesheet: the pages' colours set on ``.mg-explorer`` (a notebook's own are left
    alone), then the explorer's section of the pages' one stylesheet (:func:`viz.style.stylesheet`)."""
    return style.stylesheet("explorer", scope=".mg-explorer")


def explorer_script() -> str:
    """The explorer's ES modules as one classic script that defines ``micrographExplorer`` only.

    Raises:
        ValueError: as :func:`join_modules`.
    """
    return join_modules(EXPLORER_MODULES, "micrographExplorer")


def join_modules(names: tuple[str, ...], defines: str) -> str:
    """ES modules of ``static/explorer`` as one classic script that defines the variable ``defines`` only.

    Each module runs in a function scope of its own, in the order of ``names`` (each after the modules it
    imports); an import ``import { a, b as c } from "./m.js";`` becomes ``var a = mg_m.a, ...`` from the
    modules before it, an ``export function f`` (``const``, ``let``, ``var``) or ``export { f };`` the object
    the scope returns. ``defines`` is the last module's exports.

    Raises:
        ValueError: a module imports from a module not before it, a name that module does not export, or
            uses an ``import`` or ``export`` of another form (the modules keep to these four).
    """
    exports: dict[str, list[str]] = {}
    out = [f"var {defines} = (function () {{", '"use strict";']
    for name in names:
        where = f"viz/static/explorer/{name}.js"
        body: list[str] = []
        mine: list[str] = []
        for line in _asset(f"explorer/{name}.js").splitlines():
            imported = _IMPORT.match(line)
            listed = _EXPORT_LIST.match(line)
            declared = _EXPORT.match(line)
            if imported:
                body.append(_imports(imported.group(1), imported.group(2), exports, where))
            elif listed:
                mine += [n.strip() for n in listed.group(1).split(",") if n.strip()]
            elif declared:
                mine.append(declared.group(1))
                body.append(line.removeprefix("export "))
            elif re.match(r"\s*(import|export)\b", line):
                raise ValueError(f"{where}: {line.strip()!r}: an import or export the join does not read")
            else:
                body.append(line)
        exports[name] = mine
        returned = ", ".join(f"{e}: {e}" for e in mine)
        out += [
            f"var mg_{name} = (function () {{",
            '"use strict";',
            *body,
            f"return {{ {returned} }};",
            "})();",
        ]
    out += [f"return mg_{names[-1]};", "})();"]
    return "\n".join(out) + "\n"


def _imports(names: str, source: str, exports: dict[str, list[str]], where: str) -> str:
    """``var a = mg_m.a, c = mg_m.b;`` for ``import { a, b as c } from "./m.js";``."""
    if source not in exports:
        raise ValueError(f"{where}: imports from ./{source}.js, which is not a module before it")
    bound = []
    for item in names.split(","):
        name, _, local = item.strip().partition(" as ")
        if name not in exports[source]:
            raise ValueError(f"{where}: ./{source}.js exports no {name!r}")
        bound.append(f"{local or name} = mg_{source}.{name}")
    return f"var {', '.join(bound)};"


def d3_zoom() -> str:
    """d3-zoom and what it needs, vendored from npm (static/vendor): a script defining ``micrographD3``."""
    return _asset("vendor/d3-zoom.bundle.js")


def _script(program: str) -> str:
    """d3-zoom (vendored from npm), the generated program and the explorer's script, in that order."""
    return d3_zoom() + "\n" + program + "\n" + explorer_script()


def _json_for_html(data: Any) -> str:
    """JSON that is safe inside a ``<script type="application/json">`` element (no ``<``, ``>``, ``&``)."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def page_html(spec: dict[str, Any], program: str) -> str:
    """The explorer as one self-contained HTML page (the content of :meth:`Explorer.save`)."""
    body = (
        '<div id="micrograph-explorer" class="mg-explorer"></div>\n'
        f'<script type="application/json" id="micrograph-spec">{_json_for_html(spec)}</script>'
    )
    script = _script(program) + "\nmicrographExplorer.page(forward_backward, micrographD3);\n"
    return html_page(title=f"micrograph explorer: {spec['title']}", css=_css(), body=body, script=script)


def _widget_class() -> Any:
    try:
        import anywidget
        import traitlets
    except ImportError:
        return None

    class ExplorerWidget(anywidget.AnyWidget):  # type: ignore[misc]
        """The explorer as a Jupyter widget (anywidget): the page's script runs in the notebook."""

        _css = _css()
        spec = traitlets.Unicode("{}").tag(sync=True)

    return ExplorerWidget


class Explorer:
    """An explorer of one graph: a Jupyter widget (``.widget``) and a page (``.save(path)``).

    Displayed in Jupyter (the last expression of a cell), it shows the widget; without anywidget installed
    it displays the saved page's HTML in an iframe-free ``text/html`` output instead.

    Attributes:
        spec (dict): the page's data (layout SVG, names, frames, slots).
        program (str): the generated JavaScript (Algorithms 6.1 and 6.2 as straight-line code).
    """

    def __init__(self, spec: dict[str, Any], program: str) -> None:
        self.spec = spec
        self.program = program
        self._widget: Any = None

    def __repr__(self) -> str:
        return (
            f"<Explorer of {self.spec['title']}: {self.spec['n']} nodes, {len(self.spec['frames'])} frames>"
        )

    @property
    def widget(self) -> Any:
        """The anywidget widget (built on first use).

        Raises:
            ImportError: anywidget is not installed (``pip install micrograph[explore]``).
        """
        if self._widget is None:
            cls = _widget_class()
            if cls is None:
                raise ImportError("viz.explore needs anywidget in Jupyter: pip install 'micrograph[explore]'")
            esm = (
                _script(self.program)
                + "\nexport default { render({ model, el }) {"
                + " return micrographExplorer.widget(model, el, forward_backward, micrographD3); } };\n"
            )  # fmt: skip
            self._widget = cls(spec=json.dumps(self.spec, allow_nan=False), _esm=esm)
        return self._widget

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        try:
            return self.widget._repr_mimebundle_(**kwargs)
        except ImportError:
            return {"text/plain": repr(self)}

    def html(self) -> str:
        """The self-contained HTML page."""
        return page_html(self.spec, self.program)

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = True) -> Path:
        """Write the explorer as one self-contained HTML page (atomically; never through a symlink).

        Args:
            path: the file to write.
            overwrite: if False, an existing file is an error.

        Returns:
            The path written.

        Raises:
            FileExistsError: the file exists and ``overwrite`` is False.
        """
        return write_atomic(Path(path), self.html().encode("utf-8"), overwrite=overwrite)
