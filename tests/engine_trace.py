"""What the engine's lines really did while a lesson ran: each pass through a span, with its values.

A lesson step shows lines of micrograph's own code with the values they gave
(:class:`lessons.engine_lines.EngineLines`). :class:`Watch` checks that claim against the interpreter:
while a step runs it traces (``sys.settrace``) the frames of the engine's files, and for each watched span
records every *pass*: from an execution of the span's first statement (each time round when it is a
loop's header, else when the frame enters the span) to the next one or to the frame's return. A pass
holds the lines that ran and the value of each shown expression right after each run of its statement
(after a loop's header, only when the loop went on into its body).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from lessons.engine_lines import Bound, EngineLines, Span

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Pass:
    """One pass through a span: the lines that ran, and {(line, expr): [value after each run]}."""

    step: int
    ran: set[int] = field(default_factory=set)
    values: dict[tuple[int, str], list[Any]] = field(default_factory=dict)


@dataclass
class _Watched:
    span: Span
    exprs: dict[int, set[str]]  # bound line -> the expressions shown after it
    passes: list[Pass] = field(default_factory=list)


def _snapshot(value: Any) -> Any:
    """A value as it is now: containers copied (the engine goes on changing them), objects as themselves."""
    if isinstance(value, (list, tuple)):
        return [_snapshot(v) for v in value]
    return value


def same(shown: Any, real: Any) -> bool:
    """Whether a value a step shows is the engine's: numbers equal (NaN to NaN), objects the same object,
    sequences item by item."""
    if isinstance(shown, (list, tuple)) and isinstance(real, (list, tuple)):
        return len(shown) == len(real) and all(same(a, b) for a, b in zip(shown, real))
    if isinstance(shown, float) and isinstance(real, float) and math.isnan(shown) and math.isnan(real):
        return True
    if isinstance(shown, (int, float, str, bool)) or shown is None:
        return type(shown) is type(real) and shown == real if isinstance(shown, bool) else shown == real
    return shown is real


def _filename(path: str) -> str:
    """The file name a span's code runs under: its file's, or a compiled function's (``<name, compiled by
    ...>``, as :mod:`micrograph.compile_nodes` names it)."""
    return f"<{path}>" if ", compiled by " in path else str((ROOT / path).resolve())


class Watch:
    """Traces the engine while steps run: :meth:`run` a step, then :meth:`passes` of a span so far."""

    def __init__(self, spans: list[EngineLines]) -> None:
        self.step = 0
        self.watched: dict[tuple[str, int, int], _Watched] = {}
        for s in spans:
            span = s.span
            w = self.watched.setdefault((span.path, span.first, span.last), _Watched(span, {}))
            for b in s.bound:
                w.exprs.setdefault(span.find(b.line), set()).add(b.expr)
        self.files: dict[str, list[_Watched]] = {}
        for w in self.watched.values():
            self.files.setdefault(_filename(w.span.path), []).append(w)
        self._frames: dict[int, dict[tuple[str, int, int], Any]] = {}

    def run(self, step: int, fn: Any, *args: Any) -> Any:
        """Call ``fn(*args)`` as step ``step`` (1-based), tracing the watched spans."""
        self.step = step
        before = sys.gettrace()
        sys.settrace(self._call)
        try:
            return fn(*args)
        finally:
            sys.settrace(before)
            self._frames.clear()

    def passes(self, lines: EngineLines) -> list[Pass]:
        span = lines.span
        return self.watched[(span.path, span.first, span.last)].passes

    # --- tracing ----------------------------------------------------------------------------------------
    def _call(self, frame: FrameType, event: str, arg: Any) -> Any:
        watched = self.files.get(frame.f_code.co_filename)
        if not watched:
            return None
        code = frame.f_code
        last = max((line for _, _, line in code.co_lines() if line is not None), default=code.co_firstlineno)
        mine = [w for w in watched if w.span.first <= last and code.co_firstlineno <= w.span.last]
        if not mine:
            return None
        state: dict[tuple[str, int, int], Any] = {}
        self._frames[id(frame)] = state

        def local(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "exception":
                for w in mine:
                    st = state.get((w.span.path, w.span.first, w.span.last))
                    if st is not None:
                        st["pending"] = None  # the statement raised: it gave no value
                return local
            line = frame.f_lineno
            for w in mine:
                self._event(w, state, frame, event, line)
            return local

        return local

    def _event(self, w: _Watched, state: dict[Any, Any], frame: FrameType, event: str, line: int) -> None:
        key = (w.span.path, w.span.first, w.span.last)
        st = state.setdefault(key, {"pass": None, "pending": None})
        pending = st["pending"]
        if pending is not None:  # the values after the statement that ran before this event
            start, own, end, loop = pending
            done = event == "return" or not start <= line <= own
            if done:
                st["pending"] = None
                if not loop or (event == "line" and own < line <= end):
                    for expr in w.exprs.get(start, ()):
                        try:
                            value = _snapshot(eval(expr, frame.f_globals, dict(frame.f_locals)))
                        except Exception as e:  # a name not bound on this path
                            value = e
                        st["pass"].values.setdefault((start, expr), []).append(value)
        if event == "return":
            st["pass"] = None
            return
        if event != "line":
            return
        span = w.span
        inside, st["inside"] = st.get("inside", False), span.first <= line <= span.last
        # a pass starts at the span's first statement: each time round when it is a loop, else on entering
        # (a ``with`` statement's exit is reported at its first line too)
        if line == span.entry and (line in span.loops or not inside):
            st["pass"] = Pass(self.step)
            w.passes.append(st["pass"])
        if st["pass"] is None or not st["inside"]:
            return
        st["pass"].ran.add(line)
        if line in span.statements:
            own, end = span.statements[line]
            st["pending"] = (line, own, end, line in span.loops)


def matches(lines: EngineLines, p: Pass) -> bool:
    """Whether pass ``p`` ran the span's first statement and gave every value the step shows."""
    span = lines.span
    if span.entry not in p.ran:
        return False
    return all(_gave(b, p.values.get((span.find(b.line), b.expr), [])) for b in lines.bound)


def _gave(b: Bound, real: list[Any]) -> bool:
    if not b.values:
        return not real
    if b.last:
        return bool(real) and same(b.values[0], real[-1])
    return same(list(b.values), real)
