"""The machinery of a check: cases that pass or fail, calling the student's code, catching what it does.

* :class:`Checker` runs the cases of one exercise in order and stops at the first failure;
* :meth:`Checker.call` calls the student's function: an exception becomes a :class:`Failure` showing the
  student's own traceback lines (the frames of micrograph, of this checker and of Python's library left
  out), with a specific diagnosis where the exception tells one (a recursion limit, a missing key);
* :func:`snapshot` and :func:`mutation` catch a solution that changes the graph it was given.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import sysconfig
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import micrograph
import viz
from lessons.exercises.report import Failure
from micrograph.engine import Value
from micrograph.graph import Graph

__all__ = ["Fail", "Checker", "snapshot", "mutation", "close", "shown", "student_traceback"]

_HIDDEN = tuple(
    os.path.dirname(os.path.abspath(p)) + os.sep
    for p in (micrograph.__file__, viz.__file__, __file__, contextlib.__file__)
) + tuple(p + os.sep for p in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})


class Fail(Exception):
    """Raised by a checker with the :class:`Failure` that ends the check."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.headline)
        self.failure = failure


def close(a: Any, b: float) -> bool:
    """True if the number a equals b to rounding (relative 1e-9, absolute 1e-12)."""
    if isinstance(a, bool) or not isinstance(a, (int, float)):
        return False
    a = float(a)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def shown(x: Any) -> str:
    """A value as a report shows it: numbers with 10 significant digits, anything else as its repr."""
    if isinstance(x, bool) or x is None:
        return repr(x)
    if isinstance(x, (int, float)):
        return f"{float(x):.10g}"
    text = repr(x)
    return text if len(text) <= 60 else text[:59] + "…"


def student_traceback(e: BaseException) -> str:
    """The traceback of ``e`` with only the student's frames, and the exception's last line."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if not f.filename.startswith(_HIDDEN)]
    lines = traceback.StackSummary.from_list(frames).format()
    if len(lines) > 12:  # a recursion: the first frames and the last, with the count between
        lines = [*lines[:4], f"  ... {len(lines) - 8} more lines ...\n", *lines[-4:]]
    return "".join(lines) + "".join(traceback.format_exception_only(type(e), e))


def snapshot(nodes: list[Value]) -> list[tuple[Any, ...]]:
    """What a solution must not change in a graph: every node's value, grad, operation, parents, label."""
    return [(v.data, v.grad, v.op, tuple(map(id, v.inputs)), v.label) for v in nodes]


def _same(a: Any, b: Any) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def mutation(graph: Graph, before: list[tuple[Any, ...]]) -> str:
    """ "" if no node changed since :func:`snapshot`, else the first change in words."""
    fields = ("data", "grad", "op", "inputs", "label")
    for j, (v, old) in enumerate(zip(graph.nodes, before)):
        new = (v.data, v.grad, v.op, tuple(map(id, v.inputs)), v.label)
        for name, x, y in zip(fields, old, new):
            if not _same(x, y):
                what = f"u{j + 1}" + (f" ({v.label})" if v.label and name != "label" else "")
                if name in ("data", "grad"):
                    return f"{what}.{name} changed from {shown(x)} to {shown(y)}"
                return f"{what}.{name} changed"
    return ""


class Checker:
    """Runs one exercise's cases in order; records each; stops at the first failure.

    Attributes:
        checks: (case, passed) for each case run.
        progress: called with a case's name as it starts (the parent process restarts its clock).
    """

    def __init__(self, progress: Callable[[str], None] | None = None) -> None:
        self.checks: list[tuple[str, bool]] = []
        self.current = ""
        self.progress = progress

    @contextlib.contextmanager
    def case(self, name: str) -> Iterator[None]:
        """A case: passes if the block ends normally; a :class:`Fail` inside records it as failed."""
        self.current = name
        if self.progress is not None:
            self.progress(name)
        try:
            yield
        except Fail as e:
            e.failure.case = name
            self.checks.append((name, False))
            raise
        self.checks.append((name, True))

    def fail(self, headline: str, **kw: Any) -> Fail:
        """A :class:`Fail` for the current case (raise it)."""
        return Fail(Failure(self.current, headline, **kw))

    def call(
        self,
        fn: Callable[..., Any],
        *args: Any,
        what: str,
        graph: Graph | None = None,
        deep: bool = False,
        book: str = "order",
    ) -> Any:
        """Call the student's ``fn(*args)``; an exception becomes a :class:`Fail` with their traceback.

        Args:
            fn: the student's function.
            what: how the call reads in the report, e.g. ``"backprop(G)"``.
            graph: the graph the call works on, to name a node in a KeyError.
            deep: the case is the deep chain (a RecursionError there gets its explanation).
            book: the book's sentence a recursion-limit failure quotes (a key of ``BOOK``).

        Returns:
            What ``fn`` returned. The student's prints go to stderr, so ``--json`` output stays clean.
        """
        try:
            with contextlib.redirect_stdout(sys.stderr):
                return fn(*args)
        except Fail:
            raise
        except RecursionError as e:
            raise self.fail(
                f"{what} hit Python's recursion limit ({sys.getrecursionlimit()} nested calls)"
                + (f" on a graph {len(graph.nodes):,} nodes deep." if graph is not None else "."),
                details=[
                    "A recursive function nests one call per level of the graph; Python stops at its "
                    "recursion limit, and the graphs of deep networks (and this chain) are deeper.",
                ],
                mistake="recursion",
                hint="walk the graph with a loop over the ordered list u(1)..u(n), or with an explicit "
                "stack (a Python list you push to and pop from), instead of a function that calls itself.",
                book=book,
                traceback=student_traceback(e),
            ) from None
        except KeyError as e:
            key = e.args[0] if e.args else None
            if graph is not None and isinstance(key, Value) and key in graph.index:
                name = f"u{graph.index[key] + 1}" + (f" ({key.label})" if key.label else "")
                raise self.fail(
                    f"{what} raised KeyError: a table has no entry for {name} yet when your code reads it.",
                    details=[
                        "An entry is read before the loop has written it: the order of the loop is wrong, "
                        "or an entry is never written."
                    ],
                    mistake="missing-entry",
                    node=name,
                    traceback=student_traceback(e),
                ) from None
            raise self._exception(e, what) from None
        except NotImplementedError as e:
            raise self.fail(
                f"{what} is not written yet: it raised NotImplementedError (the template's TODO).",
                mistake="todo",
                hint="replace the `raise NotImplementedError` lines with your code.",
                traceback=student_traceback(e),
            ) from None
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            raise self._exception(e, what) from None

    def _exception(self, e: BaseException, what: str) -> Fail:
        return self.fail(
            f"{what} raised {type(e).__name__}: {e}".rstrip(": "),
            mistake="exception",
            traceback=student_traceback(e),
        )
