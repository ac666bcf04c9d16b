"""The failures every exercise shares: a case the runner stopped, a call that raised, a solution that did not
load or imports what its exercise does not allow.

Each is a :class:`~lessons.exercises.report.Failure` with one of the codes of
:data:`lessons.exercises.judges.mistakes.GENERAL` (``timeout``, ``recursion``, ``syntax``, ``import`` ...),
made from what the student's side reports as plain data (the error's kind, type, message and the student's
own traceback lines) or from the runner's :class:`~lessons.exercises.limits.Stop`.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

from typing import Any

from lessons.exercises import answers
from lessons.exercises.imports import Imports
from lessons.exercises.limits import Stop
from lessons.exercises.report import Failure
from lessons.exercises.verdict import Case, reported_name

__all__ = ["stopped", "raised", "load_failure", "import_failure"]


def stopped(stop: Stop, case: Case) -> Failure:
    """The failure of a case the runner stopped (a limit, a crash, a broken answer, the check's budget)."""
    if stop.kind in ("budget", "stopped") and stop.detail.startswith("not run"):
        return Failure(case.name, f"{stop.detail}.", mistake="not-run")
    if stop.kind in ("cpu", "wait", "wall", "budget", "stopped"):
        return Failure(
            case.name,
            f"the solution was stopped: {stop.detail}.",
            details=[
                "Your code waited (time.sleep, a read) instead of computing."
                if stop.kind == "wait"
                else "The check was stopped from outside before this case finished."
                if stop.kind == "stopped"
                else "A busy loop: an infinite loop (a while loop whose condition never changes, an index "
                "that never reaches its end), or work that grows exponentially (every path recomputed)."
            ],
            mistake="timeout",
        )
    if stop.kind == "memory":
        return Failure(case.name, f"the solution was stopped: {stop.detail}.", mistake="memory")
    if stop.kind == "crash":
        return Failure(
            case.name,
            f"{stop.detail}: the solution called os._exit, or crashed Python.",
            mistake="crash",
        )
    return Failure(case.name, f"the solution's answer could not be read: {stop.detail}.", mistake="protocol")


def raised(error: dict[str, Any], case: Case) -> Failure:
    """The failure of a case whose call raised (the error as the runner reports it)."""
    kind = error.get("kind", "exception")
    what = case.what or "your function"
    tb = str(error.get("traceback", ""))
    text = f"{error.get('type', 'Exception')}: {error.get('message', '')}".rstrip(": ")
    if kind == "missing-function":
        return Failure(
            case.name,
            f"the solution has no function {error.get('name')}(): define it with exactly this name (see the "
            "template).",
            mistake="missing-function",
        )
    if kind == "import":
        return Failure(case.name, f"{error.get('message')}.", mistake="import", traceback=tb)
    if kind == "engine":
        return Failure(
            case.name,
            f"{what} used micrograph's own algorithm: {error.get('message')}.",
            details=[
                "The check runs your code with the graph's nodes and the book's get_consumers and "
                "get_inputs; the algorithm itself is what the exercise asks you to write."
            ],
            mistake="delegation",
            traceback=tb,
        )
    if kind == "recursion":
        graph = case.graph
        deep = f" on a graph {len(graph.nodes):,} nodes deep." if graph is not None else "."
        return Failure(
            case.name,
            f"{what} hit Python's recursion limit ({error.get('recursion_limit', 1000)} nested calls){deep}",
            details=[
                "A recursive function nests one call per level of the graph; Python stops at its recursion "
                "limit, and the graphs of deep networks (and this chain) are deeper.",
            ],
            mistake="recursion",
            hint="walk the graph with a loop over the ordered list u(1)..u(n), or with an explicit stack (a "
            "Python list you push to and pop from), instead of a function that calls itself.",
            book=case.book,
            traceback=tb,
        )
    key = case.extra.get("ref_to_pos", {}).get(error.get("key"), error.get("key"))
    if (
        kind == "missing-entry"
        and case.graph is not None
        and isinstance(key, int)
        and key < len(case.graph.nodes)
    ):
        name = reported_name(case.graph, key)
        return Failure(
            case.name,
            f"{what} raised KeyError: a table has no entry for {name} yet when your code reads it.",
            details=[
                "An entry is read before the loop has written it: the order of the loop is wrong, or an "
                "entry is never written."
            ],
            mistake="missing-entry",
            node=name,
            traceback=tb,
        )
    if kind == "todo":
        return Failure(
            case.name,
            f"{what} is not written yet: it raised NotImplementedError (the template's TODO).",
            mistake="todo",
            hint="replace the `raise NotImplementedError` lines with your code.",
            traceback=tb,
        )
    return Failure(case.name, f"{what} raised {text}", mistake="exception", traceback=tb)


def load_failure(answer: dict[str, Any] | Stop, path: str) -> Failure | None:
    """The failure of loading the solution (a syntax error, an exception at import), or None if it loaded."""
    filename = path.replace("\\", "/").rsplit("/", 1)[-1]
    if isinstance(answer, Stop):
        return stopped(answer, Case(f"loading {filename}", {}, lambda a: None))
    misfit = answers.problem(answers.LOAD, answer, {})
    if misfit:
        return answers.failure(f"loading {filename}", misfit)
    if answer.get("ok"):
        return None
    error = answer.get("error", {})
    name = f"loading {filename}"
    if error.get("kind") == "syntax":
        line = error.get("line")
        return Failure(
            name,
            f"{filename} has a syntax error" + ("." if line is None else f" (line {line})."),
            mistake="syntax",
            traceback=str(error.get("traceback", "")),
        )
    failure = raised(error, Case(name, {}, lambda a: None, what=f"importing {filename}"))
    if failure.mistake == "exception":
        failure.mistake = "load"
    return failure


def import_failure(imports: Imports, source: str, filename: str) -> Failure | None:
    """The failure of a solution that imports a module its exercise does not allow (read before it runs)."""
    refused = imports.refused(source)
    if refused is None:
        return None
    module, line = refused
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    return Failure(f"loading {name}", f"{imports.message(module)} (line {line} of {name}).", mistake="import")
