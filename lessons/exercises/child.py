"""The student's side of an exercise check: runs the solution one case at a time, answers with plain data.

The runner (:mod:`lessons.exercises.runner`) starts this file as a fresh interpreter,
``python -I -S -B child.py LIB EXERCISE FD MEMORY CPU UID [NUMPY]``, never as a fork of the process that
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
* where it runs as root (a grading container), becomes the check's own unprivileged user ``UID`` after
  loading what a solution may use (the engine's nodes and operations, numpy when installed), so the solution
  can neither read the grader's files, nor signal the judge, nor raise its own limits; where that fails, it
  answers that it cannot isolate the solution and the check refuses to grade (never silently as root);
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
import linecache
import os
import sys
import traceback
import types
from typing import Any

ALGORITHMS = {
    "derivatives": ("the local derivatives ∂u(i)/∂u(j)", "micrograph"),
    "topo": ("the topological order u(1)..u(n)", "micrograph.graph"),
    "forward": ("Algorithm 6.1", "micrograph.forward"),
    "backprop": ("Algorithm 6.2", "micrograph.backprop"),
    "build_grad": ("Algorithm 6.6", "micrograph.symbolic"),
    "mlp_backward": ("Algorithm 6.4", "micrograph.mlp"),
    "naive": ("the naive chain rule of equation 6.53", "micrograph.naive"),
}
"""{exercise: (what the student writes, the engine's module that implements it)}."""

ALLOWED = {
    "micrograph.engine", "micrograph.ops", "micrograph.meta", "micrograph.lecture", "micrograph.errors",
    "micrograph.memory",
}  # fmt: skip
"""The engine's modules a solution may import (nodes and the operation table), except in ``derivatives``."""

ENGINE_ONLY = ("backprop", "forward", "prune", "program", "consumers", "consumer_edges")
"""Methods of micrograph's Graph that run an algorithm: absent from the graph a solution is given."""

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


def _unavailable(exercise: str, module: str) -> str:
    what, _ = ALGORITHMS[exercise]
    return (
        f"this exercise asks you to write {what}; micrograph's own ({module}) is not available while your "
        "code is checked"
    )


class _Guard(importlib.abc.MetaPathFinder):
    """Refuses the modules a solution may not import while it is checked (first on ``sys.meta_path``)."""

    def __init__(self, exercise: str) -> None:
        self.exercise = exercise

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        top = fullname.split(".")[0]
        if top == "micrograph" and (self.exercise == "derivatives" or fullname not in ALLOWED):
            raise ImportError(_unavailable(self.exercise, fullname), name=fullname)
        if top in ("viz", "lessons") and fullname not in ("lessons", "lessons.exercises", TOOLS):
            raise ImportError(_unavailable(self.exercise, fullname), name=fullname)
        return None


TOOLS = "lessons.exercises.tools"


def _stub(name: str, path: list[str], exercise: str) -> types.ModuleType:
    """A package module that holds only what is set on it; any other name is refused with the message."""
    module = types.ModuleType(name)
    module.__path__ = path
    module.__package__ = name

    def __getattr__(attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise AttributeError(_unavailable(exercise, f"{name}.{attr}"))

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    sys.modules[name] = module
    return module


def _install(root: str, exercise: str) -> None:
    """The stub packages, the engine's nodes and operations, the tools, and the guard."""
    sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != os.path.abspath(root)]
    sys.path.insert(0, root)
    micrograph = _stub("micrograph", [os.path.join(root, "micrograph")], exercise)
    lessons = _stub("lessons", [], exercise)
    package = _stub("lessons.exercises", [], exercise)
    lessons.exercises = package  # type: ignore[attr-defined]
    if exercise != "derivatives":
        import micrograph.engine as engine
        import micrograph.ops as ops

        _disable(engine, exercise)
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
    sys.meta_path.insert(0, _Guard(exercise))


def _disable(engine: Any, exercise: str) -> None:
    """The nodes' own algorithms out of reach: ``Value.backward`` (Algorithm 6.2 in its push form), the
    per-node push, the graph walks of pickling and copying, and the modules that hold them."""

    def refuse(name: str) -> Any:
        def refused(*args: Any, **kw: Any) -> Any:
            raise AttributeError(_unavailable(exercise, name))

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


def _drop_privileges(source: str, uid: int | None, numpy_path: str | None) -> None:
    """Load what a solution may use, then, as root, become the check's own user ``uid``.

    numpy is loaded only for a solution whose text names it (it takes a tenth of a second), from
    ``numpy_path``, which leaves ``sys.path`` again once numpy is loaded.

    Raises:
        IsolationError: root could not become ``uid`` (a container without CAP_SETUID and CAP_SETGID).
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
    if sys.platform == "emscripten" or uid is None:
        return  # in a browser's Web Worker there are no users (and no files of the grader)
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


def _limits(memory: int, cpu: int, uid: int | None) -> None:
    """Hard limits: address space, CPU time, processes, file size, no core file (a backstop: the runner
    measures and stops first). Set as root before becoming ``uid``, they cannot be raised again."""
    try:
        import resource
    except ImportError:
        return
    mine = uid if uid is not None else os.getuid()
    running = _processes_of(mine)
    for limit, value in (
        (resource.RLIMIT_AS, memory),
        (resource.RLIMIT_CPU, cpu),
        (resource.RLIMIT_NPROC, running + 32),
        (resource.RLIMIT_FSIZE, 64 << 20),
        (resource.RLIMIT_CORE, 0),
    ):
        try:
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError):
            pass


def _processes_of(uid: int) -> int:
    """How many processes (threads included, as RLIMIT_NPROC counts them) the user ``uid`` has now."""
    count = 0
    try:
        names = os.listdir("/proc")
    except OSError:
        return 0
    for name in names:
        if name.isdigit():
            try:
                st = os.stat(f"/proc/{name}")
                if st.st_uid == uid:
                    count += len(os.listdir(f"/proc/{name}/task"))
            except OSError:
                pass
    return count


# ---------------------------------------------------------------------------------------------------------
# Plain data out.

MAX_ITEMS = 2_000_000


class _Plain:
    """Converts what a solution returned into JSON data: numbers, strings, lists, dicts, node references."""

    def __init__(self, refs: dict[int, int]) -> None:
        self.refs = refs  # id(node) -> its position in G
        self.items = 0

    def __call__(self, x: Any, depth: int = 0) -> Any:
        self.items += 1
        if self.items > MAX_ITEMS or depth > 12:
            raise ValueError("the result is too large or too deeply nested")
        if x is None or isinstance(x, (bool, str)):
            return x if not isinstance(x, str) else x[:200]
        if isinstance(x, float):
            return float.__float__(x)  # a float subclass: its stored number, not what its methods say
        if isinstance(x, int):
            return int.__int__(x)
        node = self.node(x)
        if node is not None:
            return node
        if isinstance(x, dict):
            return {"dict": [[self(k, depth + 1), self(v, depth + 1)] for k, v in list(x.items())]}
        if isinstance(x, (list, tuple)):
            return [self(v, depth + 1) for v in x]
        return self.other(x, depth)

    def node(self, x: Any) -> Any:
        engine = sys.modules.get("micrograph.engine")
        if engine is not None and isinstance(x, engine.Value):
            pos = self.refs.get(id(x))
            return (
                {"node": pos}
                if pos is not None
                else {"value": float.__float__(float(x.data)), "label": x.label}
            )
        return None

    def other(self, x: Any, depth: int) -> Any:
        tolist = getattr(type(x), "tolist", None)  # numpy arrays and scalars
        if tolist is not None and callable(tolist):
            return self(tolist(x), depth + 1)
        import numbers

        if isinstance(x, numbers.Real):
            return float(x)
        if isinstance(x, numbers.Complex):
            return {"object": f"complex {x!r}"[:200]}
        return {"object": f"{type(x).__name__} {x!r}"[:200]}


# ---------------------------------------------------------------------------------------------------------
# Plain data in: graphs as records.


def _build_nodes(records: list[list[Any]]) -> dict[int, Any]:
    """Nodes from records ``[id, op, param, [parent ids], data, label, constant]`` (parents listed first or
    not: nodes are made first and linked after, so a shuffled list reveals no order)."""
    from micrograph import engine, meta, ops

    made: dict[int, Any] = {}
    for rid, opname, param, _args, data, label, constant in records:
        v = engine._new(engine.Value)
        v.data, v.grad, v._a, v._b, v._info = float(data), 0.0, None, None, None
        v.op = (
            None
            if opname is None
            else (ops.pow_const(param) if param is not None else ops.op_by_name(opname))
        )
        if constant:
            v._info = meta.CONSTANT
        elif label:
            v.label = label
        made[rid] = v
    for rid, _opname, _param, args, *_ in records:
        if args:
            made[rid]._a = made[args[0]]
            made[rid]._b = made[args[1]] if len(args) > 1 else None
    return made


class Graph:
    """G as an exercise gives it: u(1)..u(n), n_i, and the book's get_consumers, get_inputs, get_operation.

    It has what the templates document and nothing that runs an algorithm: no ``backprop``, ``forward``
    or ``prune``.

    Attributes:
        nodes: u(1)..u(n), the leaves first. n_inputs: n_i. output: u(n) = z. num_edges: the edges.
        index: {node: 0-based position}. parents: for each node, its parents' positions in argument order.
    """

    def __init__(self, nodes: list[Any], n_inputs: int, members: list[int] | None = None) -> None:
        self.nodes = nodes
        self.n_inputs = n_inputs
        self.output = nodes[-1]
        self.index = {v: i for i, v in enumerate(nodes)}
        self.parents = [tuple(self.index[p] for p in v.inputs) for v in nodes]
        self.num_edges = sum(map(len, self.parents))
        keep = set(range(len(nodes))) if members is None else set(members)
        self._consumers: list[list[Any]] = [[] for _ in nodes]
        for i, pa in enumerate(self.parents):
            if i in keep:
                for j in dict.fromkeys(pa):
                    self._consumers[j].append(nodes[i])

    def __getattr__(self, name: str) -> Any:
        if name in ENGINE_ONLY:
            raise AttributeError(
                f"G.{name} is micrograph's own algorithm; it is not available while your code is checked"
            )
        raise AttributeError(f"the graph has no attribute {name!r}")

    @property
    def leaves(self) -> list[Any]:
        """u(1)..u(n_i)."""
        return self.nodes[: self.n_inputs]

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Any:
        return iter(self.nodes)

    def __contains__(self, node: object) -> bool:
        return node in self.index

    def __repr__(self) -> str:
        return f"Graph(n={len(self.nodes)}, n_inputs={self.n_inputs}, num_edges={self.num_edges})"

    def name(self, node: Any) -> str:
        """``"u1"`` for u(1), and so on."""
        return f"u{self._position(node) + 1}"

    def _position(self, node: Any) -> int:
        try:
            return self.index[node]
        except (KeyError, TypeError):
            raise ValueError(f"{node!r} is not a node of this graph") from None

    def get_consumers(self, node: Any) -> list[Any]:
        """The nodes that take ``node`` as an argument, each once, in order (section 6.5.6)."""
        return list(self._consumers[self._position(node)])

    def get_inputs(self, node: Any) -> tuple[Any, ...]:
        """The parents of ``node`` in argument order, with repeats (section 6.5.6)."""
        self._position(node)
        return tuple(node.inputs)

    def get_operation(self, node: Any) -> Any:
        """The operation that computes ``node``; None for an input (section 6.5.6)."""
        self._position(node)
        return node.op


class SubGraph(Graph):
    """G' of Algorithm 6.5: the nodes of G on a path from a target to z; consumers restricted to them."""

    def __init__(self, graph: Graph, members: list[int]) -> None:
        super().__init__(graph.nodes, graph.n_inputs, members)
        self.graph = graph
        self._members = {graph.nodes[i] for i in members}
        self.nodes = [graph.nodes[i] for i in members]

    def __contains__(self, node: object) -> bool:
        return node in self._members

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Any:
        return iter(self.nodes)


def _graph(request: dict[str, Any]) -> tuple[Graph, dict[int, Any]]:
    made = _build_nodes(request["records"])
    nodes = [made[i] for i in range(len(made))]
    return Graph(nodes, request["n_inputs"]), made


def _snapshot(nodes: list[Any]) -> list[tuple[Any, ...]]:
    return [(v.data, v.grad, v.op, id(v._a), id(v._b), v._info) for v in nodes]


def _mutation(nodes: list[Any], before: list[tuple[Any, ...]]) -> list[Any]:
    """[position, field, old, new] of the first node the solution changed, or []."""
    fields = ("data", "grad", "op", "inputs", "inputs", "label")
    for j, (v, old) in enumerate(zip(nodes, before)):
        new = (v.data, v.grad, v.op, id(v._a), id(v._b), v._info)
        for name, a, b in zip(fields, old, new):
            same = a is b or a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)
            if not same:
                plain = name in ("data", "grad")
                return [j, name, _number(a) if plain else None, _number(b) if plain else None]
    return []


def _number(x: Any) -> Any:
    try:
        return float.__float__(float(x))
    except (TypeError, ValueError, OverflowError):
        return None


# ---------------------------------------------------------------------------------------------------------
# The calls, one per exercise.


class Solution:
    """The student's module, loaded from its source text."""

    def __init__(self, source: str, filename: str, exercise: str) -> None:
        self.exercise = exercise
        self.filename = filename
        self.module = types.ModuleType(f"micrograph_exercise_{exercise}")
        self.module.__file__ = filename
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        code = compile(source, filename, "exec", dont_inherit=True)
        sys.modules[self.module.__name__] = self.module
        exec(code, self.module.__dict__)

    def function(self, name: str) -> Any:
        fn = self.module.__dict__.get(name)
        if not callable(fn):
            raise _Missing(name)
        return fn


class _Missing(Exception):
    pass


def _call_derivatives(sol: Solution, request: dict[str, Any], plain: _Plain) -> dict[str, Any]:
    fn = sol.function(request["function"])
    results = [plain(fn(*args, out)) for args, out in request["points"]]
    return {"result": results}


def _call_topo(sol: Solution, request: dict[str, Any], plain: _Plain) -> dict[str, Any]:
    fn = sol.function("topological_order")
    made = _build_nodes(request["records"])
    refs = {id(v): rid for rid, v in made.items()}
    plain.refs = refs
    nodes = list(made.values())
    before = _snapshot(nodes)
    order = fn(made[request["z"]])
    changed = _mutation(nodes, before)
    if changed:
        changed[0] = list(made)[changed[0]]
    return {"result": plain(order), "mutation": changed}


def _call_forward(sol: Solution, request: dict[str, Any], plain: _Plain) -> dict[str, Any]:
    fn = sol.function("forward")
    G, _ = _graph(request)
    plain.refs = {id(v): i for i, v in enumerate(G.nodes)}
    before = _snapshot(G.nodes)
    u = fn(G, list(request["x"]))
    return {"result": plain(u), "mutation": _mutation(G.nodes, before)}


def _call_backprop(sol: Solution, request: dict[str, Any], plain: _Plain) -> dict[str, Any]:
    fn = sol.function("backprop")
    tools = sys.modules[TOOLS]
    G, _ = _graph(request)
    plain.refs = {id(v): i for i, v in enumerate(G.nodes)}
    before = _snapshot(G.nodes)
    tools.reset_counts()
    table = fn(G)
    counts = tools.counts()
    calls = [[plain.refs.get(id(node), -1), k] for node, k in tools.calls()[:400]]
    return {"result": plain(table), "mutation": _mutation(G.nodes, before), "counts": counts, "calls": calls}


def _call_naive(sol: Solution, request: dict[str, Any], plain: _Plain) -> dict[str, Any]:
    fn = sol.function("naive_grad")
    tools = sys.modules[TOOLS]
    G, _ = _graph(request)
    plain.refs = {id(v): i for i, v in enumerate(G.nodes)}
    before = _snapshot(G.nodes)
    tools.reset_counts()
    result = fn(G.output, G.nodes[request["w"]])
    counts = tools.counts()
    value = getattr(result, "value", result)
    reported = None
    if hasattr(result, "local_derivatives"):
        reported = {
            "local_derivatives": plain(result.local_derivatives),
            "evaluations": plain(result.recomputed),
        }
    return {
        "result": plain(value),
        "mutation": _mutation(G.nodes, before),
        "counts": counts,
        "reported": reported,
    }


def _call_build_grad(sol: Solution, request: dict[str, Any], plain: _Plain) -> dict[str, Any]:
    from micrograph import engine

    fn = sol.function("build_grad")
    G, _ = _graph(request)
    G_prime = SubGraph(G, request["members"])
    T = [G.nodes[j] for j in request["targets"]]
    calls = [0]

    def counted(*args: Any, **kw: Any) -> Any:  # the module's name, so recursive calls are counted too
        calls[0] += 1
        return fn(*args, **kw)

    globals_ = getattr(fn, "__globals__", None)
    if isinstance(globals_, dict) and globals_.get("build_grad") is fn:
        globals_["build_grad"] = counted
    before = _snapshot(G.nodes)
    seed = engine.as_value(1.0)
    grad_table: dict[Any, Any] = {G.output: seed}
    try:
        results = [counted(V, G, G_prime, grad_table) for V in T]
    finally:
        if isinstance(globals_, dict) and globals_.get("build_grad") is counted:
            globals_["build_grad"] = fn
    entries = {G.index[v]: r for v, r in grad_table.items() if v in G.index}
    B = _records_of_B(G, [*results, *entries.values()])
    return {
        "result": [B["ref"](r) for r in results],
        "entries": [[j, B["ref"](r)] for j, r in sorted(entries.items())],
        "B": B["records"],
        "seed_kept": grad_table.get(G.output) is seed,
        "calls": calls[0],
        "mutation": _mutation(G.nodes, before),
    }


MAX_B = 200_000


def _records_of_B(G: Graph, roots: list[Any]) -> dict[str, Any]:
    """The nodes of B reachable from ``roots`` as records, parents first (an iterative search): G's nodes are
    referred to by position (``["g", j]``), B's by their index in the records (``["b", k]``)."""
    from micrograph import engine

    ids: dict[int, int] = {}
    records: list[list[Any]] = []
    for root in roots:
        if not isinstance(root, engine.Value) or root in G.index or id(root) in ids:
            continue
        stack: list[tuple[Any, bool]] = [(root, False)]
        opened: set[int] = set()
        while stack:
            v, ready = stack.pop()
            if id(v) in ids or v in G.index:
                continue
            if ready:
                ids[id(v)] = len(records)
                op = v.op
                records.append(
                    [
                        None if op is None else op.name,
                        None if op is None else op.param,
                        [_ref(G, ids, p) for p in v.inputs],
                        float.__float__(float(v.data)),
                        v.label,
                        v.is_constant,
                    ]
                )
                if len(records) > MAX_B:
                    raise ValueError(f"B has more than {MAX_B:,} nodes")
                continue
            if id(v) in opened:
                raise ValueError("B has a cycle: a node is its own ancestor")
            opened.add(id(v))
            stack.append((v, True))
            stack.extend((p, False) for p in v.inputs if id(p) not in ids and p not in G.index)

    def ref(x: Any) -> Any:
        if isinstance(x, engine.Value):
            return _ref(G, ids, x)
        return {"plain": _Plain({})(x)}

    return {"records": records, "ref": ref}


def _ref(G: Graph, ids: dict[int, int], v: Any) -> list[Any]:
    j = G.index.get(v)
    return ["g", j] if j is not None else ["b", ids[id(v)]]


def _call_mlp(sol: Solution, request: dict[str, Any], plain: _Plain) -> dict[str, Any]:
    from micrograph.ops import OPS

    fn = sol.function("backward_mlp")
    acts = [None if a is None else OPS[a] for a in request["activations"]]

    def f_prime(k: int, a: float, h: float) -> float:
        op = acts[k]
        return 1.0 if op is None else float(op.local_derivative(0, (float(a),), float(h)))

    net = types.SimpleNamespace(
        **{k: request[k] for k in ("l", "W", "b", "a", "h", "g", "lam")}, f_prime=f_prime
    )
    before = json.dumps([net.W, net.b, net.a, net.h, net.g])
    result = fn(net)
    changed = json.dumps([net.W, net.b, net.a, net.h, net.g], default=repr) != before
    return {"result": plain(result), "mutation": [0, "net", None, None] if changed else []}


CALLS = {
    "derivatives": _call_derivatives,
    "topo": _call_topo,
    "forward": _call_forward,
    "backprop": _call_backprop,
    "naive": _call_naive,
    "build_grad": _call_build_grad,
    "mlp_backward": _call_mlp,
}


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
    if isinstance(e, RecursionError):
        kind = "recursion"
    elif isinstance(e, NotImplementedError):
        kind = "todo"
    elif isinstance(e, KeyError) and e.args:
        key = refs.get(id(e.args[0]))
        kind = "missing-entry" if key is not None else "exception"
    elif isinstance(e, _Missing):
        return {"kind": "missing-function", "name": str(e.args[0])}
    if "is not available while your code is checked" in str(e):
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


def _load(request: dict[str, Any], exercise: str) -> tuple[Solution | None, dict[str, Any]]:
    try:
        return Solution(request["source"], request["filename"], exercise), {"ok": True}
    except SyntaxError as e:
        lines = "".join(traceback.format_exception_only(type(e), e))
        return None, {"ok": False, "error": {"kind": "syntax", "line": e.lineno, "traceback": lines[-4000:]}}
    except BaseException as e:  # SystemExit too: sys.exit() at the top of the file is the solution's error
        if isinstance(e, KeyboardInterrupt):
            raise
        return None, {"ok": False, "error": _error(e, {})}


def _answer(solution: Solution, request: dict[str, Any], exercise: str) -> dict[str, Any]:
    plain = _Plain({})
    try:
        answer = CALLS[exercise](solution, request, plain)
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        return {"ok": False, "error": _error(e, plain.refs)}
    return {"ok": True, **answer}


class Child:
    """The per-message core of the student's side: one request in, one answer out, both plain data.

    The pipe loop of :func:`main` (a CPython child of the runner) and a Web Worker running Pyodide in a
    browser both drive this object; neither holds the judge. :meth:`handle` takes a request as the runner
    sends it (``{"op": "load", "source", "filename"}`` or ``{"op": "case", ...}``) and returns the answer
    with the request's ``id``.

    Args:
        root: the directory holding the packages ``micrograph``, ``viz`` and ``lessons``.
        exercise: the exercise's name (which modules are blocked, which call is made).
    """

    def __init__(
        self, root: str, exercise: str, uid: int | None = None, numpy_path: str | None = None
    ) -> None:
        global _HIDDEN
        self.exercise = exercise
        self.uid = uid
        self.numpy_path = numpy_path
        self.solution: Solution | None = None
        _install(root, exercise)
        _HIDDEN = _hidden(root)

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to one request (plain data, JSON-serialisable), with the request's ``id``."""
        if request["op"] == "load":
            try:
                _drop_privileges(request["source"], self.uid, self.numpy_path)
            except IsolationError as e:
                return {
                    "ok": False,
                    "error": {"kind": "isolation", "message": str(e)},
                    "id": request.get("id"),
                }
            self.solution, answer = _load(request, self.exercise)
        elif self.solution is None:
            answer = {"ok": False, "error": {"kind": "not-loaded"}}
        else:
            answer = _answer(self.solution, request, self.exercise)
        answer["id"] = request.get("id")
        return answer


def main(argv: list[str]) -> None:
    """The pipe loop: ``child.py LIB EXERCISE FD MEMORY CPU UID [NUMPY]``; requests on standard input,
    answers on FD. UID is ``-`` where the solution runs as the judge's own user."""
    root, exercise, fd = argv[1], argv[2], int(argv[3])
    memory, cpu = int(argv[4]), int(argv[5])
    uid = None if argv[6] == "-" else int(argv[6])
    numpy_path = argv[7] if len(argv) > 7 else None
    _die_with_parent()
    requests = os.fdopen(os.dup(0), "rb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # the student's input() reads nothing; the requests stay on their own descriptor
    answers = os.fdopen(fd, "w", encoding="utf-8")
    child = Child(root, exercise, uid, numpy_path)
    _limits(memory, cpu, uid)
    sys.setrecursionlimit(1000)
    for line in requests:
        answer = child.handle(json.loads(line))
        sys.stdout.flush()
        sys.stderr.flush()
        answers.write(json.dumps(answer, allow_nan=True) + "\n")
        answers.flush()


if __name__ == "__main__":
    main(sys.argv)
