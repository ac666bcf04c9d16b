"""A solution as source text: what the runner sends to the separate interpreter that runs it.

A file is read as it is. A function typed in a notebook or passed from a script is found through
:func:`inspect.getsource` (IPython and Jupyter keep every cell's text), with what it uses from its module:
the modules it refers to become import lines, the functions and classes defined beside it are added with
their own source, and plain constants are written out. A solution that cannot be written back as text (a
lambda, a function typed at the plain ``python`` prompt, which keeps no source) is refused with a sentence
saying what to do instead.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import inspect
import os
import stat
import textwrap
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["solution_source", "read_submission", "SourceError", "MAX_SOURCE"]


class SourceError(TypeError):
    """The solution cannot be turned into source text (its message says what to do)."""


def _code_names(code: types.CodeType) -> Iterator[str]:
    """The global names a function's code (and the code nested in it) may read, without recursion."""
    stack = [code]
    while stack:
        c = stack.pop()
        yield from c.co_names
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))


def _source_of(obj: Any, name: str) -> str:
    if getattr(obj, "__name__", "") == "<lambda>":
        raise SourceError(
            f"{name} is a lambda, which cannot be checked on its own: define it with def {name}(...)"
        )
    try:
        return textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        raise SourceError(
            f"the source of {name} cannot be found (the plain python prompt keeps none): write it in a file "
            "and check the file, or define it in Jupyter or IPython"
        ) from None


def _import_line(name: str, module: types.ModuleType) -> str:
    full = module.__name__
    if "." in full:
        parent, leaf = full.rsplit(".", 1)
        return f"from {parent} import {leaf}" + ("" if leaf == name else f" as {name}")
    return f"import {full}" + ("" if full == name else f" as {name}")


def _constant(x: Any) -> bool:
    if isinstance(x, (bool, int, float, str, type(None))):
        return True
    return isinstance(x, tuple) and all(_constant(v) for v in x)


def _dependencies(fns: list[Callable[..., Any]]) -> tuple[list[str], list[str]]:
    """(import and constant lines, sources of the functions and classes they use), found iteratively."""
    header: dict[str, str] = {}
    bodies: dict[int, str] = {}
    todo = list(fns)
    seen: set[int] = set()
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        code = getattr(fn, "__code__", None)
        glob = getattr(fn, "__globals__", {})
        if code is None:
            continue
        for n in _code_names(code):
            x = glob.get(n)
            if isinstance(x, types.ModuleType):
                header.setdefault(n, _import_line(n, x))
            elif inspect.isfunction(x) or inspect.isclass(x):
                if x.__module__ == getattr(fn, "__module__", None) and id(x) not in seen:
                    bodies.setdefault(id(x), _source_of(x, n))
                    if inspect.isfunction(x):
                        todo.append(x)
                elif inspect.isfunction(x) or inspect.isclass(x):
                    mod = getattr(x, "__module__", "")
                    if mod and mod != "__main__":
                        header.setdefault(
                            n, f"from {mod} import {x.__name__}" + ("" if x.__name__ == n else f" as {n}")
                        )
            elif n in glob and _constant(x):
                header.setdefault(n, f"{n} = {x!r}")
    return list(header.values()), list(bodies.values())


MAX_SOURCE = 1 << 20
"""Bytes a solution's file may have (1 MiB: a solution is a page or two of Python)."""


def read_submission(path: Path) -> str:
    """The text of a student's file, opened without following a symlink and read up to :data:`MAX_SOURCE`.

    The judge may run as root in a grading container: a submission that is a link to a file only root may
    read must not be read for the student.

    Raises:
        FileNotFoundError: no regular file at ``path``, or ``path`` is a symlink. ValueError: a file larger
        than :data:`MAX_SOURCE`.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if os.path.islink(path):
            raise FileNotFoundError(f"{path} is a symlink; the check reads only a file itself") from None
        raise FileNotFoundError(f"no file {path} to check ({e.strerror or e})") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise FileNotFoundError(f"{path} is not a regular file")
        data = f.read(MAX_SOURCE + 1)
    if len(data) > MAX_SOURCE:
        raise ValueError(f"{path} is larger than {MAX_SOURCE >> 20} MiB: a solution is a page or two of code")
    return data.decode("utf-8-sig", errors="replace")  # an editor's byte-order mark is not the text


def solution_source(functions: tuple[str, ...], solution: Any) -> tuple[str, str]:
    """The solution as ``(source text, file name)``.

    Args:
        functions: the names the exercise asks for (``("backprop",)``).
        solution: a path to the student's file; a module; a dict {name: function}; an object with the
            functions as attributes; or, for an exercise of one function, the function itself.

    Returns:
        The text the runner sends, and the name its tracebacks use.

    Raises:
        FileNotFoundError: a path that is not a file. SourceError: a solution whose source cannot be found
        (a lambda, a function typed at the plain python prompt), or a lone function for an exercise with
        several.
    """
    if isinstance(solution, (str, os.PathLike)):
        return read_submission(Path(solution)), str(solution)
    if isinstance(solution, types.ModuleType):
        file = getattr(solution, "__file__", None)
        if file and Path(file).is_file():
            return Path(file).read_text(encoding="utf-8-sig", errors="replace"), Path(file).name
        raise SourceError(f"module {solution.__name__} has no file to check")
    if isinstance(solution, dict):
        found = {n: solution[n] for n in functions if n in solution}
    elif callable(solution) and not hasattr(solution, functions[0]):
        if len(functions) != 1:
            raise SourceError(
                f"this exercise has several functions ({', '.join(functions)}): pass a module, a file, or a "
                "dict {name: function}"
            )
        found = {functions[0]: solution}
    else:
        found = {n: getattr(solution, n) for n in functions if callable(getattr(solution, n, None))}
    return _assemble(found), "solution.py"


def _assemble(found: dict[str, Callable[..., Any]]) -> str:
    for name, fn in found.items():
        module = getattr(fn, "__module__", "") or ""
        if module.startswith(("micrograph", "lessons.exercises")):
            raise SourceError(
                f"{name} is micrograph's own ({module}): the exercise asks you to write the algorithm, and "
                "the check runs your code"
            )
    header, bodies = _dependencies(list(found.values()))
    parts = ["\n".join(header)] if header else []
    own: dict[int, str] = {}
    for name, fn in found.items():
        if id(fn) not in own:
            own[id(fn)] = _source_of(fn, name)
    parts += [b for b in bodies if b not in own.values()]
    parts += list(own.values())
    aliases = [
        f"{name} = {fn.__name__}" for name, fn in found.items() if getattr(fn, "__name__", name) != name
    ]
    return "\n\n".join(parts + aliases) + "\n"
