"""The judge: builds each case and its answer key, sends the case to the runner, scores the answer.

The judge never runs the student's code. For each case of an exercise it builds the graph (or the network)
with micrograph's engine, keeps the engine's answer (Algorithm 6.1, 6.2, 6.4, 6.6 ...) on this side, and
sends the runner only the question as plain data (:mod:`lessons.exercises.runner`). What comes back is plain
data too (numbers, lists, node positions, the records of B); the judge decodes it into its own objects,
compares it with the answer key, and, for a wrong answer, diagnoses it (the first wrong node, the terms of
its sum, the recognised mistake, the book's sentence, a drawing). Every case runs and is scored, so a
timeout or a crash in one case hides none of the others; the first failure is diagnosed in full.

An exercise is a module of :mod:`lessons.exercises.judges` with ``cases(seed)``, an iterator of
:class:`Case`: its name, its request, and the function that judges an answer. The random cases come from
``seed``, which the report prints, so a teacher can grade with a seed the students have not seen.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

from lessons.exercises import answers
from lessons.exercises.drawing import failure_svg
from lessons.exercises.imports import Imports
from lessons.exercises.limits import IsolationError, Limits, Output, Stop
from lessons.exercises.report import CaseResult, Failure, Report
from lessons.exercises.runner import Runner
from micrograph.engine import Value
from micrograph.graph import Graph

__all__ = [
    "Case",
    "judging",
    "Fail",
    "NodeRef",
    "Foreign",
    "close",
    "shown",
    "node_name",
    "draw",
    "decode",
    "graph_request",
    "mutation_text",
    "judge_solution",
    "TOLERANCE",
]

REL_TOL, ABS_TOL = 1e-9, 1e-12
TOLERANCE = f"relative {REL_TOL:g}, absolute {ABS_TOL:g}"
"""How close a number must be to the engine's to count as equal, in words."""


class Fail(Exception):
    """Raised by a case's judge with the :class:`Failure` that fails it."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.headline)
        self.failure = failure


@dataclass(frozen=True)
class NodeRef:
    """A node of the case's graph, as the solution returned it: its 0-based position j (u(j+1))."""

    j: int


@dataclass(frozen=True)
class Foreign:
    """Something the solution returned that is neither a number nor a node of the graph (shown as text)."""

    text: str


@dataclass
class Case:
    """One case of an exercise.

    Attributes:
        name: what the case is, as the report shows it.
        request: the question, plain data for the runner (the graph as records, the inputs ...).
        judge: ``judge(answer)`` raises :class:`Fail` for a wrong answer; ``answer`` is the runner's plain
            data (the solution's ``result`` and what was counted).
        graph: the case's G on the judge's side, to name a node in an exception (a KeyError), or None.
        what: how the call reads in the report, e.g. ``"backprop(G)"``.
        book: the key of the book's sentence a recursion-limit failure quotes.
        points: what the case is worth.
        extra: the case's hooks: ``key_error`` and ``exception`` refine the failure of an answer that
            raised, ``stopped`` that of a case the runner stopped (``hook(case, failure, error_or_stop)``).
        cpu: the CPU seconds the case may use, scaled to its size (0: the check's default per case).
        exercise: the exercise's name, whose schema the answer must fit (:mod:`lessons.exercises.answers`);
            :func:`lessons.exercises.judges.cases` sets it.
    """

    name: str
    request: dict[str, Any]
    judge: Callable[[dict[str, Any]], None]
    graph: Graph | None = None
    what: str = ""
    book: str = "order"
    points: float = 1.0
    extra: dict[str, Any] = field(default_factory=dict)
    cpu: float = 0.0
    exercise: str = ""


def close(a: Any, b: float) -> bool:
    """True if the number a equals b to rounding (:data:`TOLERANCE`); a non-number, or an integer too large
    for a float, is never close."""
    if isinstance(a, bool) or not isinstance(a, (int, float)):
        return False
    try:
        a = float(a)
    except OverflowError:
        return False
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def shown(x: Any) -> str:
    """A value as a report shows it: numbers with 10 significant digits (``an integer of 401 digits`` for
    one too large for a float), nodes as u(i), else its text, at most 60 characters; it never raises."""
    if isinstance(x, bool) or x is None:
        return repr(x)
    if isinstance(x, (int, float)):
        return answers.number_text(x)
    if isinstance(x, NodeRef):
        return f"the node u{x.j + 1}"
    if isinstance(x, Foreign):
        return x.text
    return answers.brief(x)


def differ(expected: float, actual: Any) -> str:
    """When two numbers agree to 6 significant digits but are not equal: by how much, and the tolerance."""
    if isinstance(actual, bool) or not isinstance(actual, (int, float)):
        return ""
    try:
        a = float(actual)
    except OverflowError:  # an integer too large for a float agrees with no float
        return ""
    if f"{a:.6g}" == f"{expected:.6g}":
        return (
            "The two agree to 6 significant digits but differ by "
            f"{abs(a - expected):.3g}; numbers count as equal within {TOLERANCE}."
        )
    return ""


def node_name(graph: Graph, j: int) -> str:
    """u(j+1) as a report names it: ``u3 (x)``, and ``u5 (the output z)`` for u(n)."""
    v = graph.nodes[j]
    label = v.label
    if j == len(graph.nodes) - 1:
        label = f"{label}, the output" if label and label != "z" else "the output z"
    return f"u{j + 1}" + (f" ({label})" if label else "")


def draw(graph: Graph, **kw: Any) -> dict[str, Any]:
    """The failure drawing's fields of a :class:`Failure`: the SVG, or why there is none."""
    svg, note = failure_svg(graph, **kw)
    return {"svg": svg, "drawing_note": note}


def decode(x: Any, depth: int = 0) -> Any:
    """The runner's plain data as the judge reads it: dicts, lists, numbers, NodeRef, Foreign.

    It never raises: what is not plain data (a malformed tag, a value nested deeper than
    :data:`lessons.exercises.answers.MAX_DEPTH`) becomes a :class:`Foreign` that shows it."""
    if depth > answers.MAX_DEPTH:
        return Foreign("a value nested too deeply")
    if isinstance(x, list):
        return [decode(v, depth + 1) for v in x]
    if not isinstance(x, dict):
        return x
    if "dict" in x:
        pairs = x["dict"]
        if not (isinstance(pairs, list) and all(isinstance(p, list) and len(p) == 2 for p in pairs)):
            return Foreign(shown(x))
        out: dict[Any, Any] = {}
        for k, v in pairs:
            key = decode(k, depth + 3)
            try:
                out[key] = decode(v, depth + 3)
            except TypeError:  # an unhashable key (a list): shown, not used
                out[Foreign(shown(key))] = decode(v, depth + 3)
        return out
    node = x.get("node")
    if isinstance(node, int) and not isinstance(node, bool):
        return NodeRef(node)
    if "value" in x:
        return Foreign(f"a node that is not in G (value {shown(x['value'])})")
    what = x.get("object", "?")
    return Foreign(what if isinstance(what, str) else shown(what))


def graph_request(graph: Graph) -> dict[str, Any]:
    """G as plain data: ``[id, op, param, parents, data, label, constant]`` per node (id = position)."""
    records = []
    for j, v in enumerate(graph.nodes):
        op = v.op
        records.append(
            [
                j,
                None if op is None else op.name,
                None if op is None else op.param,
                list(graph.parents[j]),
                v.data,
                v.label,
                v.is_constant,
            ]
        )
    return {"records": records, "n_inputs": graph.n_inputs}


def mutation_text(graph: Graph, change: list[Any], names: Callable[[int], str] | None = None) -> str:
    """The first change a solution made to the graph, in words (from the runner's ``mutation``), or ""."""
    if not change:
        return ""
    j, fieldname, old, new = change
    name = names(j) if names is not None else node_name(graph, j)
    if fieldname in ("data", "grad"):
        return f"{name}.{fieldname} changed from {shown(old)} to {shown(new)}"
    return f"{name}.{fieldname} changed"


# ---------------------------------------------------------------------------------------------------------
# From the runner's answer to a failure.


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
        name = node_name(case.graph, key)
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
    misfit = answers.problem("load", answer, {})
    if misfit:
        return answers.failure(f"loading {filename}", misfit)
    if answer.get("ok"):
        return None
    error = answer.get("error", {})
    name = f"loading {filename}"
    if error.get("kind") == "syntax":
        return Failure(
            name,
            f"{filename} has a syntax error (line {error.get('line')}).",
            mistake="syntax",
            traceback=str(error.get("traceback", "")),
        )
    failure = raised(error, Case(name, {}, lambda a: None, what=f"importing {filename}"))
    if failure.mistake == "exception":
        failure.mistake = "load"
    return failure


def exercise_imports(exercise: str) -> Imports | None:
    """The allow-list of an exercise's imports (its judge module's ``IMPORTS``), or None for none."""
    from lessons.exercises import judges  # the judges import this module: found when a check starts

    try:
        module = judges.module(exercise)
    except ValueError:
        return None
    found = getattr(module, "IMPORTS", None)
    return found if isinstance(found, Imports) else None


def import_failure(imports: Imports | None, source: str, filename: str) -> Failure | None:
    """The failure of a solution that imports a module its exercise does not allow (read before it runs)."""
    refused = imports.refused(source) if imports is not None else None
    if imports is None or refused is None:
        return None
    module, line = refused
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    return Failure(f"loading {name}", f"{imports.message(module)} (line {line} of {name}).", mistake="import")


# ---------------------------------------------------------------------------------------------------------
# A whole check.


def judge_case(case: Case, answer: dict[str, Any] | Stop) -> Failure | None:
    """The failure of one case, or None if the answer is right; an answer that does not fit its exercise's
    schema (:mod:`lessons.exercises.answers`) is that case's failure, never judged."""
    if isinstance(answer, Stop):
        hook = case.extra.get("stopped")
        return stopped(answer, case) if hook is None else hook(case, stopped(answer, case), answer)
    misfit = answers.problem(case.exercise, answer, case.request)
    if misfit:
        return answers.failure(case.name, misfit)
    if not answer.get("ok"):
        failure = raised(answer.get("error", {}), case)
        refine = (
            case.extra.get("key_error") if failure.mistake == "missing-entry" else case.extra.get("exception")
        )
        return refine(case, failure, answer.get("error", {})) if refine is not None else failure
    try:
        case.judge(answer)
    except Fail as e:
        e.failure.case = case.name
        e.failure.actual = _as_reported(e.failure.actual)
        return e.failure
    return None


def _as_reported(x: Any) -> Any:
    """A failure's actual value as the report keeps it (JSON): a number a float holds, text, or None."""
    if x is None or isinstance(x, str):
        return x
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        try:
            float(x)
        except OverflowError:
            return shown(x)
        return x
    return shown(x)


Question = tuple[str, dict[str, Any]]
"""What the judge asks the student's side: ``("load", {"source", "filename", "imports"})`` (``imports``: the
exercise's allow-list, :meth:`Imports.request`) or ``("case", request)``."""


def judging(
    exercise: str,
    title: str,
    cases: Iterator[Case],
    source: str,
    filename: str,
    *,
    seed: int,
    output: Output,
) -> Generator[Question, dict[str, Any] | Stop, Report]:
    """The judge's loop as a generator: yields each question, receives the answer, returns the report.

    A driver sends every question to where the solution runs and sends back its answer (plain data, or a
    :class:`Stop` saying why there is none): :func:`judge_solution` drives it with the local
    :class:`Runner`; the site's page drives it with a Web Worker. The driver restarts the solution's side
    after a :class:`Stop` (a case that ran out of time) and feeds ``output`` with what the solution printed.

    Args:
        exercise, title, cases, source, filename, seed: as for :func:`judge_solution`.
        output: what the solution printed, fed by the driver (read when the report is made).

    Returns:
        The :class:`Report` (as the generator's return value, ``StopIteration.value``).
    """
    start = time.monotonic()
    results: list[CaseResult] = []
    imports = exercise_imports(exercise)
    question: dict[str, Any] = {"source": source, "filename": filename}
    if imports is not None:
        question["imports"] = imports.request()
    loaded = yield ("load", question)
    first = import_failure(imports, source, filename) or load_failure(loaded, filename)
    for case in cases:
        if first is not None and first.case.startswith("loading"):  # every case fails, at no cost
            failure: Failure | None = Failure(case.name, f"not run: {first.headline}", mistake=first.mistake)
        else:
            request = {**case.request, "cpu": case.cpu} if case.cpu else case.request
            failure = judge_case(case, (yield ("case", request)))
        results.append(
            CaseResult(
                case.name,
                failure is None,
                case.points if failure is None else 0.0,
                case.points,
                "" if failure is None else failure.headline,
                "" if failure is None else failure.mistake,
            )
        )
        if failure is not None and first is None:
            first = failure
    output.close()
    return Report(
        exercise,
        title,
        results,
        first,
        time.monotonic() - start,
        seed=seed,
        output_text=output.text(),
        output_lines=output.lines,
        output_cut=output.cut,
        sha256=hashlib.sha256(source.encode("utf-8")).hexdigest(),
    )


def judge_solution(
    exercise: str,
    title: str,
    cases: Iterator[Case],
    source: str,
    filename: str,
    *,
    seed: int,
    limits: Limits,
) -> Report:
    """Run every case of ``exercise`` on the solution and score it.

    Args:
        exercise: the exercise's name. title: what it asks, for the report.
        cases: the cases, built lazily (a case's answer key is built just before it runs).
        source: the solution's source text; filename: its name in tracebacks and the report.
        seed: the seed of the random cases (printed in the report).
        limits: the runner's limits.

    Returns:
        The :class:`Report`: every case with its points, the first failure diagnosed.

    Raises:
        IsolationError: the solution cannot be run apart from the judge (the judge is root and cannot make
            it another user): the check refuses to grade rather than run it as root.
    """
    with Runner(exercise, source, filename, limits) as runner:
        loop = judging(exercise, title, cases, source, filename, seed=seed, output=runner.output)
        try:
            op, request = next(loop)
            while True:
                answer = runner.load(request) if op == "load" else runner.run(request)
                error = answer.get("error") if isinstance(answer, dict) else None
                if op == "load" and isinstance(error, dict) and error.get("kind") == "isolation":
                    raise IsolationError(str(error.get("message", "the solution cannot be isolated")))
                op, request = loop.send(answer)
        except StopIteration as done:
            report: Report = done.value
    return report


def value_of(x: Any) -> Any:
    """The number a node reference or a number stands for (a Value's data), else ``x``."""
    return x.data if isinstance(x, Value) else x
