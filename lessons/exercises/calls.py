"""The calls, one per exercise: the student's module loaded, its function called on a case, the answer
made plain data, on the solution's side of the wall.

An exercise names its call (``call_backprop`` ...) in its entry
(:meth:`lessons.exercises.exercise.Exercise.entry`), which the judge sends as plain data with the solution;
this file, copied into the check's private directory, holds the calls themselves. Each call takes the case's
request (the graph as records, the inputs), builds what the exercise gives (:mod:`lessons.exercises.given`),
calls the student's function, and returns the result with what the harness observed: the tools' counts, the
first change to the graph, the calls a build_grad made. It runs in
the child interpreter (:mod:`lessons.exercises.child`) and in the page's Web Worker: standard library only
at import.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import json
import linecache
import sys
import types
from typing import Any

from lessons.exercises.given import Plain, SubGraph, build_nodes, graph_of, mutation, records_of_B, snapshot

__all__ = ["Solution", "Missing", "TOOLS", "call_derivatives", "call_topo", "call_forward",
           "call_backprop", "call_naive", "call_build_grad", "call_mlp_backward"]  # fmt: skip

TOOLS = "lessons.exercises.tools"


def _builtins(imports: dict[str, Any]) -> dict[str, Any]:
    """The builtins of the solution's module, whose ``__import__`` refuses the modules the exercise does not
    allow (``imports``: the judge's allow-list, :meth:`lessons.exercises.imports.Imports.request`).

    Only the solution's own import statements go through it: the modules it imports (numpy, the engine)
    import theirs with the interpreter's own builtins."""
    import builtins

    modules = tuple(imports.get("modules", ()))
    own = tuple(imports.get("own", ()))
    message = str(imports.get("message", "{module} is not allowed here"))
    real = builtins.__import__

    def __import__(
        name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
    ) -> Any:
        if (
            level == 0
            and isinstance(name, str)
            and name.split(".")[0] not in own
            and not any(name == m or name.startswith(m + ".") for m in modules)
        ):
            refused = ImportError(message.replace("{module}", name), name=name)
            refused.refused = True  # type: ignore[attr-defined]  # the allow-list's, for the report
            raise refused
        return real(name, globals, locals, fromlist, level)

    namespace = dict(vars(builtins))
    namespace["__import__"] = __import__
    return namespace


class Solution:
    """The student's module, loaded from its source text (its imports checked against ``imports``, the
    exercise's allow-list, when the judge sends one)."""

    def __init__(
        self, source: str, filename: str, exercise: str, imports: dict[str, Any] | None = None
    ) -> None:
        self.exercise = exercise
        self.filename = filename
        self.module = types.ModuleType(f"micrograph_exercise_{exercise}")
        self.module.__file__ = filename
        if imports is not None:
            self.module.__dict__["__builtins__"] = _builtins(imports)
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        try:
            code = compile(source, filename, "exec", dont_inherit=True)
        except ValueError as e:  # a NUL byte, before Python 3.11 (a SyntaxError since)
            raise SyntaxError(str(e)) from None
        sys.modules[self.module.__name__] = self.module
        exec(code, self.module.__dict__)

    def function(self, name: str) -> Any:
        fn = self.module.__dict__.get(name)
        if not callable(fn):
            raise Missing(name)
        return fn


class Missing(Exception):
    pass


def _graph(
    request: dict[str, Any], plain: Plain, recomputed: bool = False
) -> tuple[Any, list[tuple[Any, ...]]]:
    """G rebuilt from the request, its nodes known to ``plain`` by position, and their state before the
    solution is called (to find what it changed). ``recomputed``: every node that is not a leaf holds nan
    in place of its value, which a solution that must recompute it never reads."""
    G, _ = graph_of(request)
    if recomputed:
        for v in G.nodes:
            if v.op is not None:
                v.data = float("nan")
    plain.refs = {id(v): i for i, v in enumerate(G.nodes)}
    return G, snapshot(G.nodes)


def _tools() -> Any:
    """The counted tools, their counts reset for the call that follows: the tools' own counts, never what
    the solution says of itself."""
    tools = sys.modules[TOOLS]
    tools.reset_counts()
    return tools


def call_derivatives(sol: Solution, request: dict[str, Any], plain: Plain) -> dict[str, Any]:
    """The local derivatives: the function the request names, at each of its points."""
    fn = sol.function(request["function"])
    results = [plain(fn(*args, out)) for args, out in request["points"]]
    return {"result": results}


def call_topo(sol: Solution, request: dict[str, Any], plain: Plain) -> dict[str, Any]:
    """topological_order(z) on the nodes of the shuffled records, each known by the id the request gave it."""
    fn = sol.function("topological_order")
    made = build_nodes(request["records"])
    refs = {id(v): rid for rid, v in made.items()}
    plain.refs = refs
    nodes = list(made.values())
    before = snapshot(nodes)
    order = fn(made[request["z"]])
    changed = mutation(nodes, before)
    if changed:
        changed[0] = list(made)[changed[0]]
    return {"result": plain(order), "mutation": changed}


def call_forward(sol: Solution, request: dict[str, Any], plain: Plain) -> dict[str, Any]:
    """forward(G, x), Algorithm 6.1 at the request's inputs."""
    fn = sol.function("forward")
    G, before = _graph(request, plain)
    u = fn(G, list(request["x"]))
    return {"result": plain(u), "mutation": mutation(G.nodes, before)}


def call_backprop(sol: Solution, request: dict[str, Any], plain: Plain) -> dict[str, Any]:
    """backprop(G), Algorithm 6.2, with the local derivatives it evaluated, counted and in order."""
    fn = sol.function("backprop")
    G, before = _graph(request, plain)
    tools = _tools()
    table = fn(G)
    counts = tools.counts()
    calls = [[plain.refs.get(id(node), -1), k] for node, k in tools.calls()[:400]]
    return {
        "result": plain(table),
        "mutation": mutation(G.nodes, before),
        "counts": counts,
        "calls": calls,
    }


def call_naive(sol: Solution, request: dict[str, Any], plain: Plain) -> dict[str, Any]:
    """naive_grad(z, w), equation 6.53, with the local derivatives and recomputations it made, counted; the
    values of the nodes that are not leaves are nan (equation 6.53 recomputes them: a solution that reads
    one, as ``.data`` or through ``tools.local_derivative(u, k)`` without args and out, answers nan)."""
    fn = sol.function("naive_grad")
    G, before = _graph(request, plain, recomputed=True)
    tools = _tools()
    result = fn(G.output, G.nodes[request["w"]])
    counts = tools.counts()
    value = getattr(result, "value", result)
    return {"result": plain(value), "mutation": mutation(G.nodes, before), "counts": counts}


class _Recursion:
    """``sys.setprofile``'s callback: for each function of the solution's file, how many of its calls were
    made while it was already running, so a recursion is counted whatever helper it goes through."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.depth: dict[Any, int] = {}
        self.again: dict[Any, int] = {}

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event not in ("call", "return") or frame.f_code.co_filename != self.filename:
            return
        code = frame.f_code
        depth = self.depth.get(code, 0)
        if event == "return":
            self.depth[code] = max(depth - 1, 0)  # a frame that started before the count returns too
            return
        if depth:
            self.again[code] = self.again.get(code, 0) + 1
        self.depth[code] = depth + 1

    def most(self) -> tuple[int, str]:
        """The largest count and its function's name ((0, "") when nothing recursed)."""
        if not self.again:
            return 0, ""
        code = max(self.again, key=self.again.__getitem__)
        return self.again[code], code.co_name


def call_build_grad(sol: Solution, request: dict[str, Any], plain: Plain) -> dict[str, Any]:
    """Algorithm 6.6 driven as Algorithm 6.5 drives it, with B as records and the calls counted."""
    from micrograph import engine, ops

    fn = sol.function("build_grad")
    G, _ = graph_of(request)
    G_prime = SubGraph(G, request["members"])
    T = [G.nodes[j] for j in request["targets"]]
    before = snapshot(G.nodes)
    seed = engine.as_value(1.0)
    grad_table: dict[Any, Any] = {G.output: seed}
    recursion = _Recursion(sol.filename)
    bprop, bprops = ops.Op.bprop, [0]

    def counted(self: Any, *args: Any, **kw: Any) -> Any:  # Algorithm 6.6 calls it once per consumer of V
        bprops[0] += 1
        return bprop(self, *args, **kw)

    ops.Op.bprop = counted  # type: ignore[method-assign]
    sys.setprofile(recursion)
    try:
        results = [fn(V, G, G_prime, grad_table) for V in T]
    finally:
        sys.setprofile(None)
        ops.Op.bprop = bprop  # type: ignore[method-assign]
    entries = {G.index[v]: r for v, r in grad_table.items() if v in G.index}
    B = records_of_B(G, [*results, *entries.values()])
    calls, function = recursion.most()
    return {
        "result": [B["ref"](r) for r in results],
        "entries": [[j, B["ref"](r)] for j, r in sorted(entries.items())],
        "B": B["records"],
        "seed_kept": grad_table.get(G.output) is seed,
        "calls": calls,
        "recursive": function,
        "bprop": bprops[0],
        "mutation": mutation(G.nodes, before),
    }


def call_mlp_backward(sol: Solution, request: dict[str, Any], plain: Plain) -> dict[str, Any]:
    """backward_mlp(net), Algorithm 6.4 on the numbers of one example's forward pass."""
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
