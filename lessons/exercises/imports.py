"""What a solution may import: each exercise's allow-list, checked in the source before the solution runs.

An exercise asks for an algorithm written with a few tools: the local derivatives with :mod:`math`, Algorithm
6.2 with Python, :mod:`math` and the counted tools. A module that computes the answer another way
(``cmath``'s complex step, ``sympy.diff``, ``numpy.gradient``) is not what the exercise asks for, so each
exercise keeps an :class:`Imports`, its allow-list, in its judge module (``IMPORTS``). :meth:`Imports.refused`
reads the source with :mod:`ast` (``import``, ``from ... import``, and ``__import__`` or
``importlib.import_module`` called with a constant name) before the solution runs; the process that runs the
solution gets the same list (:meth:`Imports.request`) and refuses the other modules at the solution's own
import statements, for names the source does not spell out.

micrograph's own packages (``micrograph``, ``lessons``, ``viz``) are left to that process's import guard,
which knows which of the engine's modules an exercise may use and says which algorithm the others
implement.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass
from typing import Any

__all__ = ["Imports", "HARMLESS", "OWN", "COMPLEX", "allowed"]

HARMLESS = (
    "__future__",
    "typing",
    "collections",
    "itertools",
    "functools",
    "operator",
    "heapq",
    "bisect",
    "dataclasses",
)
"""Standard modules that compute no derivative and no order of a graph: allowed in every exercise but
``derivatives`` (which allows ``__future__`` and ``typing`` only, with ``math``)."""

OWN = ("micrograph", "lessons", "viz")
"""micrograph's packages: the child's import guard decides which of their modules a solution may use."""


def allowed(name: str, modules: frozenset[str] | tuple[str, ...]) -> bool:
    """True if the module ``name`` is one of ``modules``, a submodule of one, or one of micrograph's own."""
    return name.split(".")[0] in OWN or any(name == m or name.startswith(m + ".") for m in modules)


@dataclass(frozen=True)
class Imports:
    """An exercise's allow-list.

    Attributes:
        asks: what the exercise asks for, completing "this exercise asks you to write ..."
            (``"the local derivatives with math"``).
        modules: the modules a solution may import (each with its submodules).
        real: whether the source must keep to real numbers: no imaginary literal, no ``complex``, no
            ``.imag``, ``.real`` or ``.conjugate`` (the local derivatives, where a complex step would compute
            them without their rules).
    """

    asks: str
    modules: frozenset[str]
    real: bool = False

    @classmethod
    def python(cls, asks: str, *more: str) -> Imports:
        """The allow-list of an algorithm written in Python: :mod:`math`, the :data:`HARMLESS` modules, and
        ``more``."""
        return cls(asks, frozenset({"math", *HARMLESS, *more}))

    def message(self, module: str) -> str:
        """The one sentence that refuses ``module``."""
        return f"this exercise asks you to write {self.asks}; {module} is not allowed here"

    def refused(self, source: str) -> tuple[str, int] | None:
        """The first module the source imports that the exercise does not allow, with its line, or None.

        A source that does not parse gives None: loading it reports the syntax error (or, for one nested
        past the parser's limits, that error); so does one with a line of more than :data:`LONGEST`
        tokens, which is not parsed here.
        """
        if _too_long(source):
            return None
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return None
        found = sorted((line, name) for name, line in _imported(tree) if not allowed(name, self.modules))
        if self.real:
            found = sorted(found + [(line, COMPLEX) for line in _complex(tree)])
        return (found[0][1], found[0][0]) if found else None

    def request(self) -> dict[str, Any]:
        """The allow-list as plain data for the process that runs the solution: the modules, the sentence
        with ``{module}`` where the refused module's name goes, and micrograph's packages it leaves to its
        own guard."""
        return {"modules": sorted(self.modules), "message": self.message("{module}"), "own": list(OWN)}


LONGEST = 10_000
"""Tokens of one logical line past which the judge does not parse a source: Python 3.10's parser recurses in
C once per link of a chain (``1+1+...+1``, ``a.b.c...``, ``f()()...``), and a long enough chain crashes the
process that parses it. The solution's own process compiles it, and reports what happens."""


def _too_long(source: str) -> bool:
    """True if a logical line of ``source`` has more than :data:`LONGEST` tokens (read by
    :mod:`tokenize`, which keeps no stack); a source that does not tokenize is left to the parser."""
    count = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            count = 0 if token.type == tokenize.NEWLINE else count + 1
            if count > LONGEST:
                return True
    except (tokenize.TokenError, SyntaxError):
        return False
    return False


COMPLEX = "the complex step (complex numbers)"
"""What :meth:`Imports.refused` names for a source that computes with complex numbers where ``real``."""


def _complex(tree: ast.AST) -> list[int]:
    """The lines that spell out a complex number: an imaginary literal, the name ``complex``, ``.imag``,
    ``.real`` or ``.conjugate``."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if (isinstance(node, ast.Constant) and isinstance(node.value, complex))
        or (isinstance(node, ast.Name) and node.id == "complex")
        or (isinstance(node, ast.Attribute) and node.attr in ("imag", "real", "conjugate"))
    ]


def _imported(tree: ast.AST) -> list[tuple[str, int]]:
    """(module, line) of every import the source spells out."""
    out: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.module, node.lineno))
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            first = node.args[0]
            if (
                name in ("__import__", "import_module")
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
            ):
                out.append((first.value, node.lineno))
    return out
