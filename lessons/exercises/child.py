"""The student's side of an exercise check: runs the solution one case at a time, answers with plain data.

The runner (:mod:`lessons.exercises.runner`) starts this file as a fresh interpreter,
``python -I -S -B child.py LIB EXERCISE FD MEMORY CPU UID HIDE [NUMPY]``, never as a fork of the process that
holds the answer key, so nothing of the judge is in this process's memory: no expected value, no checker, no
verdict. ``LIB`` is the check's private directory (:mod:`lessons.exercises.sandbox`): the nodes and the
operation table without the engine's algorithms, the counting tools, and this file; with ``-S`` there is no
site-packages, so micrograph's own files are not on the path at all. Before the student's code runs, this
process

* blocks the modules that implement the algorithm under exercise (``micrograph.backprop``,
  ``micrograph.graph``, ``micrograph.symbolic`` ... and the whole of ``viz`` and ``lessons`` but
  ``lessons.exercises.tools``): an import of one of them fails with a message saying which algorithm the
  exercise asks for; the nodes' own ``Value.backward`` is refused the same way. The package ``micrograph``
  itself is a stub holding only what the templates document (``Value``), so that
  ``from micrograph import backprop`` fails the same way;
* sets hard limits it cannot raise again (address space, CPU time, processes, file size, no core files) and
  asks the kernel to kill it if the judge dies (``PR_SET_PDEATHSIG``);
* where it runs as root (a grading container), after loading what a solution may use (the engine's nodes
  and operations, numpy when installed), covers micrograph's own files (``HIDE``) in namespaces of its own
  (:mod:`lessons.exercises.enclosure`) and becomes the check's own unprivileged user ``UID``, so the
  solution can neither read micrograph's files nor the grader's, nor signal the judge, nor raise its own
  limits; where that fails, it answers that it cannot isolate the solution and the check refuses to grade
  (never silently as root);
* moves the request pipe off standard input (the student's ``input()`` reads nothing) and keeps the answer
  pipe on its own descriptor; the student's prints go to standard output and error, which the runner
  captures and caps.

Each request is one JSON line (a case as plain data: the graph as node records, the inputs, the call); each
answer is one JSON line of plain data: the solution's result converted to numbers, lists and dicts, node
positions in place of nodes, the backward graph B as records, the calls counted, or the exception the
solution raised with its own traceback lines. What comes back is only ever the student's answer: the judge
compares it with its own and decides.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

# This file runs before the import guard is in place and as a script: standard library only at import.
from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import traceback
import types
from typing import TYPE_CHECKING, Any


def _sibling(name: str) -> types.ModuleType:
    """``lessons.exercises.NAME`` from the file beside this one, without importing its package (whose
    ``__init__`` holds the judge): in the check's private directory and in the page's Web Worker alike."""
    full = f"lessons.exercises.{name}"
    if full in sys.modules:
        return sys.modules[full]
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(full, os.path.join(here, f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[full] = module
    spec.loader.exec_module(module)
    return module


if TYPE_CHECKING:
    import lessons.exercises.calls as _calls
    from lessons.exercises.calls import TOOLS, Missing, Solution
    from lessons.exercises.given import Plain
else:
    Plain = _sibling("given").Plain
    _calls = _sibling("calls")
    TOOLS, Missing, Solution = _calls.TOOLS, _calls.Missing, _calls.Solution

ALLOWED = {
    "micrograph.engine", "micrograph.ops", "micrograph.compile_nodes", "micrograph.meta",
    "micrograph.lecture", "micrograph.errors", "micrograph.memory",
}  # fmt: skip
"""The engine's modules a solution may import (nodes and the operation table), in an exercise that gives the
solution micrograph's nodes (``nodes`` of the exercise's entry)."""

PRELOAD = (
    "math",
    "cmath",
    "itertools",
    "functools",
    "collections",
    "operator",
    "fractions",
    "decimal",
    "statistics",
    "random",
    "copy",
    "typing",
    "dataclasses",
    "heapq",
    "bisect",
    "numbers",
    "array",
    "traceback",
    "linecache",
    "re",
    "string",
    "enum",
    "abc",
    "contextlib",
    "inspect",
    "textwrap",
    "threading",
    "time",
    "gc",
    "weakref",
    "queue",
    "pprint",
    "io",
    "struct",
    "warnings",
)
"""Modules loaded before the child drops its privileges (after that it may not read Python's own files)."""

PR_SET_PDEATHSIG = 1


class IsolationError(Exception):
    """The solution cannot be run apart from the judge (becoming the check's own user failed)."""


def _unavailable(entry: dict[str, Any], module: str) -> str:
    return (
        f"this exercise asks you to write {entry['writes']}; micrograph's own ({module}) is not available "
        "while your code is checked"
    )


class _Guard(importlib.abc.MetaPathFinder):
    """Refuses the modules a solution may not import while it is checked (first on ``sys.meta_path``)."""

    def __init__(self, entry: dict[str, Any]) -> None:
        self.entry = entry

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        top = fullname.split(".")[0]
        if top == "micrograph" and (not self.entry["nodes"] or fullname not in ALLOWED):
            raise ImportError(_unavailable(self.entry, fullname), name=fullname)
        if top in ("viz", "lessons") and fullname not in ("lessons", "lessons.exercises", TOOLS):
            raise ImportError(_unavailable(self.entry, fullname), name=fullname)
        return None


def _stub(name: str, path: list[str], entry: dict[str, Any]) -> types.ModuleType:
    """A package module that holds only what is set on it; any other name is refused with the message."""
    module = types.ModuleType(name)
    module.__path__ = path
    module.__package__ = name

    def __getattr__(attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise AttributeError(_unavailable(entry, f"{name}.{attr}"))

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    sys.modules[name] = module
    return module


def _install(root: str, entry: dict[str, Any]) -> None:
    """The stub packages, the engine's nodes and operations and the tools (where the exercise gives them),
    and the guard; ``entry`` is what the judge says of the exercise
    (:meth:`lessons.exercises.exercise.Exercise.entry`)."""
    sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != os.path.abspath(root)]
    sys.path.insert(0, root)
    micrograph = _stub("micrograph", [os.path.join(root, "micrograph")], entry)
    lessons = _stub("lessons", [], entry)
    package = _stub("lessons.exercises", [], entry)
    lessons.exercises = package  # type: ignore[attr-defined]
    if entry["nodes"]:
        import micrograph.engine as engine
        import micrograph.ops as ops

        _disable(engine, entry)
        for name in [m for m in sys.modules if m.startswith("micrograph.") and m not in ALLOWED]:
            del sys.modules[name]  # loaded by engine.py from an installed wheel: found again only past the
            vars(micrograph).pop(name.split(".")[1], None)  # guard, and not as the stub package's attribute
        micrograph.Value = engine.Value  # type: ignore[attr-defined]
        micrograph.engine, micrograph.ops = engine, ops  # type: ignore[attr-defined]
        spec = importlib.util.spec_from_file_location(
            TOOLS, os.path.join(root, "lessons", "exercises", "tools.py")
        )
        assert spec is not None and spec.loader is not None
        tools = importlib.util.module_from_spec(spec)
        sys.modules[TOOLS] = tools
        spec.loader.exec_module(tools)
        package.tools = tools  # type: ignore[attr-defined]
    sys.meta_path.insert(0, _Guard(entry))


def _disable(engine: Any, entry: dict[str, Any]) -> None:
    """The nodes' own algorithms out of reach: ``Value.backward`` (Algorithm 6.2 in its push form), the
    per-node push, the graph walks of pickling and copying, and the modules that hold them."""

    def refuse(name: str) -> Any:
        def refused(*args: Any, **kw: Any) -> Any:
            raise AttributeError(_unavailable(entry, name))

        return refused

    # absent from the private copy; present where engine.py comes from an installed wheel (a browser's)
    for name in ("backward", "_backward"):
        setattr(engine.Value, name, refuse(f"Value.{name}"))
    for name in ("__reduce__", "__deepcopy__"):  # Python's own, recursive, as in the private copy
        if name in vars(engine.Value):
            delattr(engine.Value, name)
    for name in ("push", "pickling"):
        if hasattr(engine, name):
            setattr(engine, name, refuse(f"micrograph.{name}"))


def _drop_privileges(source: str, uid: int | None, numpy_path: str | None, hide: dict[str, Any]) -> None:
    """Load what a solution may use, then enclose this process (``hide``: see :func:`main`) and, as root,
    become the check's own user ``uid``.

    numpy is loaded only for a solution whose text names it (it takes a tenth of a second), from
    ``numpy_path``, which leaves ``sys.path`` again once numpy is loaded.

    Raises:
        IsolationError: root could not become ``uid`` (a container without CAP_SETUID and CAP_SETGID), or
            could not hide micrograph's files that every user may read (without CAP_SYS_ADMIN); or, as an
            ordinary user, the enclosure is required (a result for grading) and Linux would not make it.
    """
    for name in PRELOAD:
        __import__(name)
    if "numpy" in source and numpy_path:
        sys.path.append(numpy_path)
        try:
            import numpy  # noqa: F401 -- loaded while its files are readable
        except ImportError:
            pass
        finally:
            sys.path.remove(numpy_path)
    if sys.platform == "emscripten":
        return  # in a browser's Web Worker there are no users (and no files of the grader)
    enclosure = _sibling("enclosure")
    why = enclosure.enclose(hide["dirs"], hide["writable"], hide["covered"], hide["kept"], owner=uid)
    if uid is None:
        if why is not None and hide["required"]:
            raise IsolationError(
                f"this check's result is for grading, and the solution could not be kept from micrograph's "
                f"files and yours ({why}): run it as root in a container, or where Linux lets an ordinary "
                "user make namespaces (user.max_user_namespaces), or check with the text report"
            )
        return  # the student's own check: enclosed where Linux allows it
    if why is not None and hide["required"]:
        raise IsolationError(
            f"the check runs as root, and could not hide micrograph's files, which every user may read, from "
            f"the solution ({why}): give the grading container CAP_SYS_ADMIN, make those files unreadable to "
            "others (chmod -R o-rwx), or run the check as an ordinary user"
        )
    try:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    except OSError as e:
        raise IsolationError(
            f"the check runs as root, and root could not become an unprivileged user to run the solution "
            f"({e.strerror or e}): give the grading container CAP_SETUID and CAP_SETGID, or run the check as "
            "an ordinary user"
        ) from None
    if os.getuid() != uid or os.geteuid() != uid or os.getgid() != uid:
        raise IsolationError("the solution's process still has the judge's user after dropping it")
    _die_with_parent()  # the kernel forgets this setting when the user changes


def _die_with_parent() -> None:
    """Ask the kernel to kill this process when the judge, its parent, dies (Linux; a backstop)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)
    except (ImportError, OSError, AttributeError):
        pass


# ---------------------------------------------------------------------------------------------------------
# Exceptions, as plain data.

_HIDDEN: tuple[str, ...] = ()


def _hidden(root: str) -> tuple[str, ...]:
    import sysconfig

    paths = {os.path.join(root, d) for d in ("micrograph", "viz", "lessons")}
    paths |= {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]}
    return tuple(os.path.abspath(p) + os.sep for p in paths)


def student_traceback(e: BaseException) -> str:
    """The traceback of ``e`` with only the student's frames, and the exception's last line."""
    frames = [
        f
        for f in traceback.extract_tb(e.__traceback__)
        if not os.path.abspath(f.filename).startswith(_HIDDEN)
    ]
    frames = [f for f in frames if f.filename != __file__]
    lines = traceback.StackSummary.from_list(frames).format()
    if len(lines) > 12:  # a recursion: the first frames and the last, with the count between
        lines = [*lines[:4], f"  ... {len(lines) - 8} more lines ...\n", *lines[-4:]]
    return "".join(lines) + "".join(traceback.format_exception_only(type(e), e))


def _error(e: BaseException, refs: dict[int, int]) -> dict[str, Any]:
    kind = "exception"
    key = None
    if isinstance(e, ImportError) and getattr(e, "refused", False) is True:
        kind = "import"
    elif isinstance(e, RecursionError):
        kind = "recursion"
    elif isinstance(e, NotImplementedError):
        kind = "todo"
    elif isinstance(e, KeyError) and e.args:
        key = refs.get(id(e.args[0]))
        kind = "missing-entry" if key is not None else "exception"
    elif isinstance(e, Missing):
        return {"kind": "missing-function", "name": str(e.args[0])}
    if "is not available while your code is checked" in str(e) and kind != "import":
        kind = "engine"
    text = str(e)[:500]
    return {
        "kind": kind,
        "type": type(e).__name__,
        "message": text,
        "key": key,
        "traceback": student_traceback(e)[-8000:],
        "recursion_limit": sys.getrecursionlimit(),
    }


# ---------------------------------------------------------------------------------------------------------
# The loop.


def _load(request: dict[str, Any]) -> tuple[Solution | None, dict[str, Any]]:
    try:
        name = request["exercise"]["name"]
        solution = Solution(request["source"], request["filename"], name, request.get("imports"))
        return solution, {"ok": True}
    except SyntaxError as e:
        if e.text is not None and len(e.text) > 200:  # the line and its caret would fill the report
            e.text, e.offset, e.end_offset = None, None, None
        lines = "".join(traceback.format_exception_only(type(e), e))
        return None, {"ok": False, "error": {"kind": "syntax", "line": e.lineno, "traceback": lines[-4000:]}}
    except BaseException as e:  # SystemExit too: sys.exit() at the top of the file is the solution's error
        return None, {"ok": False, "error": _error(e, {})}


def _call(entry: dict[str, Any]) -> Any:
    """The function of :mod:`lessons.exercises.calls` that runs the exercise's cases (entry's ``call``)."""
    name = str(entry["call"])
    call = vars(_calls).get(name)
    if not name.startswith("call_") or not callable(call):
        raise ValueError(f"lessons.exercises.calls has no call {name!r}")
    return call


def _answer(solution: Solution, request: dict[str, Any], call: Any) -> dict[str, Any]:
    plain = Plain({})
    try:
        answer = call(solution, request, plain)
    except BaseException as e:
        # KeyboardInterrupt too: this side runs in a session of its own (the runner's start_new_session) or
        # in a Web Worker, so Ctrl-C at a terminal reaches the judge, never here: one raised here is the
        # solution's own
        return {"ok": False, "error": _error(e, plain.refs)}
    return {"ok": True, **answer}


class Child:
    """The per-message core of the student's side: one request in, one answer out, both plain data.

    The pipe loop of :func:`main` (a CPython child of the runner) and a Web Worker running Pyodide in a
    browser both drive this object; neither holds the judge. :meth:`handle` takes a request as the runner
    sends it (``{"op": "load", "source", "filename", "imports", "exercise"}`` or ``{"op": "case", ...}``)
    and returns the answer with the request's ``id``. The load request says what this side needs of the
    exercise, as plain data (``exercise``: :meth:`lessons.exercises.exercise.Exercise.entry`): the guard is
    put in place from it, before the solution's own code runs.

    Args:
        root: the directory holding the packages ``micrograph``, ``viz`` and ``lessons``.
        exercise: the exercise's name, as the runner or the page started this side for it.
    """

    def __init__(
        self,
        root: str,
        exercise: str,
        uid: int | None = None,
        numpy_path: str | None = None,
        hide: dict[str, Any] | None = None,
    ) -> None:
        global _HIDDEN
        self.root = root
        self.exercise = exercise
        self.uid = uid
        self.numpy_path = numpy_path
        self.hide = hide or {"dirs": [], "writable": [], "covered": [], "kept": [], "required": False}
        self.solution: Solution | None = None
        self.call: Any = None
        self.enclosed = False
        _HIDDEN = _hidden(root)

    def _enclose(self, request: dict[str, Any]) -> None:
        if self.call is None:
            self.call = _call(request["exercise"])
            _install(self.root, request["exercise"])
        _drop_privileges(request["source"], self.uid, self.numpy_path, self.hide)
        self.enclosed = True  # only now: a refusal leaves every later request refused too

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to one request (plain data, JSON-serialisable), with the request's ``id``.

        ``enclose`` puts the guard in place from the exercise's entry, encloses this process and, as root,
        becomes the check's own user: its answer, ``ok`` or the ``isolation`` error, is written before any
        of the solution's code has run, so the solution cannot forge it. A load (enclosing first where no
        ``enclose`` came, as in a browser) then loads the solution."""
        if request["op"] in ("enclose", "load") and not self.enclosed:
            try:
                self._enclose(request)
            except IsolationError as e:
                return {
                    "ok": False,
                    "error": {"kind": "isolation", "message": str(e)},
                    "id": request.get("id"),
                }
        answer: dict[str, Any]
        if request["op"] == "enclose":
            answer = {"ok": True}
        elif request["op"] == "load":
            self.solution, answer = _load(request)
        elif self.solution is None:
            answer = {"ok": False, "error": {"kind": "not-loaded"}}
        else:
            answer = _answer(self.solution, request, self.call)
        answer["id"] = request.get("id")
        return answer


def main(argv: list[str]) -> None:
    """The pipe loop: ``child.py LIB EXERCISE FD MEMORY CPU UID HIDE [NUMPY]``; requests on standard input,
    answers on FD. UID is ``-`` where the solution runs as the judge's own user. HIDE is JSON,
    ``{"dirs", "writable", "covered", "kept", "required"}``: the directories of micrograph's files, to
    cover before running the solution (:mod:`lessons.exercises.enclosure`); where it runs as the judge's
    own user, the directories that stay writable, those covered with empty ones and those kept visible
    inside them; and whether a child that cannot enclose itself refuses to run it."""
    root, exercise, fd = argv[1], argv[2], int(argv[3])
    memory, cpu = int(argv[4]), int(argv[5])
    uid = None if argv[6] == "-" else int(argv[6])
    hide = json.loads(argv[7])
    numpy_path = argv[8] if len(argv) > 8 else None
    _die_with_parent()
    requests = os.fdopen(os.dup(0), "rb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # the student's input() reads nothing; the requests stay on their own descriptor
    answers = os.fdopen(fd, "w", encoding="utf-8")
    child = Child(root, exercise, uid, numpy_path, hide)
    _sibling("enclosure").hard_limits(memory, cpu, uid)
    sys.setrecursionlimit(1000)
    for line in requests:
        answer = child.handle(json.loads(line))
        sys.stdout.flush()
        sys.stderr.flush()
        answers.write(json.dumps(answer, allow_nan=True) + "\n")
        answers.flush()


if __name__ == "__main__":
    main(sys.argv)
