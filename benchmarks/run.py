"""micrograph's benchmark: deep chains, bytes per node, and micrograd's demo training step, as ratios.

Run from the repository root::

    python benchmarks/run.py            # the full run (minutes: the 1e6 chain is the longest part)
    python benchmarks/run.py --quick    # a smoke run: small sizes, one step
    make bench                          # the full run in the project's virtual environment

Every measurement runs in a fresh subprocess (``--worker ...``), so no run inherits another's heap or
garbage-collector state, and every ratio compares figures measured in the same run of this script:

1. **Chain**: ``u = relu(u * 0.999 + 0.1)`` with N operations (N / 3 steps), N = 1e3 ... 1e6. Building
   the nodes, ``z.backward()`` (Algorithm 6.2 from the node), then the replay of the built graph:
   ``Graph(z)``, ``Graph.forward`` (Algorithm 6.1), ``Graph.backprop`` (Algorithm 6.2), and (N <= 1e5)
   ``compile_graph`` and one compiled call. Nanoseconds per operation, and the growth against N = 1e3.
2. **Memory**: bytes per node of a live chain of 1e5 operations (tracemalloc: every Python allocation),
   micrograph against micrograd.
3. **micrograd's demo step**: ``MLP(2, [16, 16, 1])`` on 100 two-moons points, hinge loss + 1e-4 L2 over
   every parameter, SGD with micrograd's schedule, the same initial weights everywhere. Variants:
   micrograd 0.1.0 (PyPI), micrograph eager (micrograd's code with micrograph's imports), micrograph
   replay (one graph of the whole batch, ``Graph.forward`` + ``Graph.backprop`` per step), micrograph
   compiled (one per-example loss graph compiled once, replayed per example), and plain floats
   (forward and backward derived by hand, ``benchmarks/plain_mlp.py``). Three protocols: *gc auto*, the
   mean step time with the garbage collector left on as a user has it (micrograd's graphs, which sit in
   reference cycles, are freed whenever the collector runs; the cost is spread over steps),
   *+ collect*, each step followed by ``gc.collect()``, timed until the graph is gone (after
   ``gc.freeze()`` of what existed before the timed steps, so a collection walks only the step's objects),
   and *gc disabled* for both libraries, the engines' own cost (micrograd's graphs are then never freed).
   Every variant runs in each of ``--rounds`` interleaved rounds (3 by default); the best round counts.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import math
import os
import random
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from itertools import pairwise
from operator import add
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
for _p in (str(ROOT), str(HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import exercises  # noqa: E402  (benchmarks/exercises.py, found through HERE)

ALPHA = 1e-4
SIZES = [2, 16, 16, 1]
VARIANTS = ["micrograd", "eager", "replay", "compiled", "plain", "plain_skip"]
LABELS = {
    "micrograd": "micrograd 0.1.0",
    "eager": "micrograph eager",
    "replay": "micrograph replay",
    "compiled": "micrograph compiled",
    "plain": "plain floats, by hand",
    "plain_skip": "plain floats, skipping zeros",
}


# -------------------------------------------------------------------------------------------------
# Workers: each runs in its own process and prints one JSON object.


def chain_worker(n_ops: int, compile_max: int, repeats: int) -> dict[str, Any]:
    """Build, backward, replay and (small N) compile the chain u = relu(u * 0.999 + 0.1), N operations.

    A 1,000-operation chain is built and differentiated first (warm-up, not timed). Chains of up to 1e4
    operations are measured ``repeats`` times and each phase keeps its fastest time (small timings are
    noisy); larger ones once.
    """
    from micrograph import Graph, Value, compile_graph, paused_gc

    steps = n_ops // 3
    repeats = repeats if n_ops <= 10_000 else 1

    collector = {"seconds": 0.0, "full": 0, "started": 0.0}

    def watch(phase: str, info: dict[str, int]) -> None:  # gc.callbacks: time inside each collection
        if phase == "start":
            collector["started"] = time.perf_counter()
        else:
            collector["seconds"] += time.perf_counter() - collector["started"]
            collector["full"] += info["generation"] == 2

    def once(steps: int, compiled: bool) -> dict[str, Any]:
        gc.collect()  # the previous run's garbage (a compiled function's namespace holds cycles) goes first
        collector.update(seconds=0.0, full=0)
        gc.callbacks.append(watch)
        t0 = time.perf_counter()
        x = Value(0.5)
        u = x
        for _ in range(steps):
            u = (u * 0.999 + 0.1).relu()
        t1 = time.perf_counter()
        u.backward()
        t2 = time.perf_counter()
        gc.callbacks.remove(watch)
        g = Graph(u)
        t3 = time.perf_counter()
        g.forward()
        t4 = time.perf_counter()
        g.backprop()
        t5 = time.perf_counter()
        out: dict[str, Any] = {
            "build": t1 - t0, "backward": t2 - t1, "graph": t3 - t2, "forward": t4 - t3, "backprop": t5 - t4,
            "collector": collector["seconds"], "full_collections": collector["full"],
        }  # fmt: skip
        if compiled:
            t6 = time.perf_counter()
            f = compile_graph(g, [x])
            t7 = time.perf_counter()
            f()
            t8 = time.perf_counter()
            out.update(compile=t7 - t6, compiled_call=t8 - t7, parts=f.parts)
            del f
        del x, u, g
        gc.collect()
        with paused_gc():  # the same chain with Python's cyclic collector paused, as a user may build one
            t9 = time.perf_counter()
            u = Value(0.5)
            for _ in range(steps):
                u = (u * 0.999 + 0.1).relu()
            t10 = time.perf_counter()
            u.backward()
            t11 = time.perf_counter()
            del u
        out.update(build_paused=t10 - t9, backward_paused=t11 - t10)
        return out

    once(333, True)  # warm-up
    runs = [once(steps, 3 * steps <= compile_max) for _ in range(repeats)]
    best = {key: min(r[key] for r in runs) for key in runs[0]}
    best.update(ops=3 * steps, nodes=1 + 5 * steps, repeats=repeats)
    if 3 * steps <= compile_max:
        best.update(compile_mixed=compile_mixed(steps))
    return best


def engine_chain_worker(engine: str, n_ops: int) -> dict[str, Any]:
    """Build and back-propagate the chain u = relu(u * 0.999 + 0.1) of n_ops operations in another engine.

    ``engine`` is ``micrograph``, ``micrograd`` (0.1.0, whose recursive topological sort needs the
    recursion limit raised and a large thread stack at this depth) or ``torch`` (scalar tensors, CPU).
    The same protocol as the chain worker: a 1,000-operation warm-up, ``gc.collect()`` before the timed
    chain, the collector on, build and ``backward()`` timed together.
    """
    import threading

    if engine == "torch":
        import torch

        torch.set_num_threads(1)

        def make(v: float) -> Any:
            return torch.tensor(v, dtype=torch.float64, requires_grad=True)

        relu = torch.relu
    elif engine == "micrograd":
        from micrograd.engine import Value as MValue

        make, relu = MValue, MValue.relu
    else:
        from micrograph import Value

        make, relu = Value, Value.relu  # type: ignore[assignment]

    def once(steps: int) -> float:
        gc.collect()
        t0 = time.perf_counter()
        x = make(0.5)
        u = x
        for _ in range(steps):
            u = relu(u * 0.999 + 0.1)
        u.backward()
        t1 = time.perf_counter()
        del x, u
        return t1 - t0

    result: dict[str, Any] = {}

    def run() -> None:
        once(333)  # warm-up
        result["seconds"] = min(once(n_ops // 3) for _ in range(5 if n_ops <= 10_000 else 1))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4 * n_ops))
    threading.stack_size(min(2**31 - 2**20, max(2**26, n_ops * 2**10)))  # micrograd recurses per node
    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "seconds" not in result:
        raise RuntimeError(f"{engine}'s chain of {n_ops} operations failed (see the worker's stderr)")
    return {"engine": engine, "ops": 3 * (n_ops // 3), "seconds": result["seconds"]}


GC_MODES = {
    "default": "collector as it starts (gc.get_threshold())",
    "threshold": "oldest generation's threshold x10 (gc.set_threshold(t0, t1, 10 * t2))",
    "freeze": "gc.freeze() every 10,000 steps of the loop",
    "paused": "collector paused while building (micrograph.paused_gc)",
}
"""What a user who builds a million-node graph in their own loop can do about the collector."""


def gc_worker(mode: str, n_ops: int) -> dict[str, Any]:
    """The chain's build + backward time per operation under one of :data:`GC_MODES`."""
    from micrograph import Value, paused_gc

    def build(steps: int) -> Any:
        u = Value(0.5)
        for k in range(steps):
            u = (u * 0.999 + 0.1).relu()
            if mode == "freeze" and k % 10_000 == 9_999:
                gc.freeze()
        return u

    build(333).backward()  # warm-up
    gc.collect()
    t0 = time.perf_counter()
    if mode == "threshold":
        t = gc.get_threshold()
        gc.set_threshold(t[0], t[1], 10 * t[2])
    if mode == "paused":
        with paused_gc():
            u = build(n_ops // 3)
    else:
        u = build(n_ops // 3)
    u.backward()
    seconds = time.perf_counter() - t0
    return {"mode": mode, "ops": 3 * (n_ops // 3), "seconds": seconds, "threshold": list(gc.get_threshold())}


def compile_mixed(steps: int) -> float:
    """compile_graph's time on a chain whose activation is drawn at random per step (relu, tanh, sigmoid).

    The same size as the benchmark's chain, but no two parts of the generated code have the same text, so
    none is compiled from the cache of parts: the cost of a graph without repeated structure.
    """
    from micrograph import Graph, Value, compile_graph

    gc.collect()
    rng = random.Random(0)
    x = Value(0.5)
    u = x
    for _ in range(steps):
        u = u * 0.999 + 0.1
        r = rng.random()
        u = u.relu() if r < 0.4 else u.tanh() if r < 0.8 else u.sigmoid()
    g = Graph(u)
    t = time.perf_counter()
    compile_graph(g, [x])
    return time.perf_counter() - t


def memory_worker(engine: str, n_ops: int) -> dict[str, Any]:
    """Bytes per node of a live chain of n_ops operations, by tracemalloc (every Python allocation)."""
    if engine == "micrograd":
        from micrograd.engine import Value as V
    else:
        from micrograph.engine import Value as V  # type: ignore[assignment]
    steps = n_ops // 3
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    x = V(0.5)
    u = x
    for _ in range(steps):
        u = (u * 0.999 + 0.1).relu()
    live = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    nodes = 1 + 5 * steps  # per step: the constant 0.999, the product, the constant 0.1, the sum, the relu
    assert u is not None
    return {"engine": engine, "nodes": nodes, "bytes": live, "bytes_per_node": live / nodes}


def _demo_data(n: int) -> tuple[list[list[float]], list[float]]:
    from micrograph import datasets

    X, y = datasets.moons(n=n, noise=0.1, seed=0)
    return [list(map(float, row)) for row in X], [2.0 * t - 1.0 for t in y]


def _initial_parameters() -> list[float]:
    """micrograd's initialisation (w ~ U(-1, 1), b = 0) from a fixed seed, in ``parameters()`` order."""
    rng = random.Random(1337)
    params = []
    for nin, nout in pairwise(SIZES):
        for _ in range(nout):
            params += [rng.uniform(-1, 1) for _ in range(nin)] + [0.0]
    return params


def _micrograd_style_step(
    Value: Any, model: Any, X: list[list[float]], Y: list[float]
) -> Callable[[int], float]:
    """micrograd's demo step, verbatim but for the imports (``Value`` and ``model`` come from the engine)."""

    def step(k: int) -> float:
        inputs = [list(map(Value, xrow)) for xrow in X]
        scores = list(map(model, inputs))
        losses = [(1 + -yi * scorei).relu() for yi, scorei in zip(Y, scores)]
        data_loss = sum(losses) * (1.0 / len(losses))
        reg_loss = ALPHA * sum(p * p for p in model.parameters())
        total_loss = data_loss + reg_loss
        model.zero_grad()
        total_loss.backward()
        learning_rate = 1.0 - 0.9 * k / 100
        for p in model.parameters():
            p.data -= learning_rate * p.grad
        return float(total_loss.data)

    return step


PARTS = ["chain", "memory", "demo", "engines", "gc", "versions", "exercises", "explorer", "site"]
"""The benchmark's parts, in the order they run (``--only``)."""

PROTOCOLS = {"auto": "gc auto", "collect": "+ gc.collect()", "off": "gc disabled"}
"""How the cyclic garbage collector runs during the timed demo steps (see the module docstring)."""


def demo_worker(variant: str, steps: int, protocol: str, n_points: int) -> dict[str, Any]:
    """Time micrograd's demo training step for one variant; returns step times, setup time, losses."""
    collect = protocol == "collect"
    X, Y = _demo_data(n_points)
    init = _initial_parameters()
    setup = 0.0
    if variant == "micrograd":
        import micrograd.engine
        import micrograd.nn

        model = micrograd.nn.MLP(2, [16, 16, 1])
        for p, v in zip(model.parameters(), init):
            p.data = v
        step = _micrograd_style_step(micrograd.engine.Value, model, X, Y)
    elif variant == "eager":
        from micrograph.engine import Value
        from micrograph.nn import MLP

        model = MLP(2, [16, 16, 1])
        for p, v in zip(model.parameters(), init):
            p.data = v
        step = _micrograd_style_step(Value, model, X, Y)
    elif variant == "replay":
        step, setup = _replay_step(X, Y, init)
    elif variant == "compiled":
        step, setup = _compiled_step(X, Y, init)
    elif variant in ("plain", "plain_skip"):
        from plain_mlp import PlainMLP

        plain = PlainMLP(init, SIZES)
        skip = variant == "plain_skip"

        def step(k: int) -> float:
            return plain.step(X, Y, 1.0 - 0.9 * k / 100, ALPHA, skip_zero=skip)[0]
    else:
        raise ValueError(f"unknown variant {variant!r}")
    losses = [step(0)]  # warm-up step, not timed
    if protocol == "off":
        gc.collect()
        gc.disable()  # the engine's own cost: no collector for either library
    if collect:
        # Everything alive now (modules, the model, a replayed or compiled graph) moves to the permanent
        # generation: gc.collect() then scans only what the timed steps create, so its cost is that of
        # freeing the step's graph, not of walking the interpreter's own objects.
        gc.collect()
        gc.freeze()
    times = []
    for k in range(1, steps + 1):
        t0 = time.perf_counter()
        losses.append(step(k))
        if collect:
            gc.collect()
        times.append(time.perf_counter() - t0)
    return {"variant": variant, "protocol": protocol, "times": times, "setup": setup, "losses": losses}


def _replay_step(
    X: list[list[float]], Y: list[float], init: list[float]
) -> tuple[Callable[[int], float], float]:
    """The whole batch's graph built once (micrograd's loss); each step replays Algorithms 6.1 and 6.2."""
    from micrograph import Graph
    from micrograph.engine import Value
    from micrograph.nn import MLP

    t0 = time.perf_counter()
    model = MLP(2, [16, 16, 1])
    params = model.parameters()
    for p, v in zip(params, init):
        p.data = v
    inputs = [list(map(Value, xrow)) for xrow in X]
    scores: list[Any] = list(map(model, inputs))
    losses = [(1 + -yi * scorei).relu() for yi, scorei in zip(Y, scores)]
    total_loss: Any = sum(losses) * (1.0 / len(losses)) + ALPHA * sum(p * p for p in params)
    g = Graph(total_loss)
    setup = time.perf_counter() - t0

    def step(k: int) -> float:
        J = g.forward()  # Algorithm 6.1 with the parameters' current .data
        table = g.backprop()  # Algorithm 6.2
        learning_rate = 1.0 - 0.9 * k / 100
        for p in params:
            p.data -= learning_rate * table[p]
        return J

    return step, setup


def _compiled_step(
    X: list[list[float]], Y: list[float], init: list[float]
) -> tuple[Callable[[int], float], float]:
    """One example's loss graph (features, target, parameters as leaves) compiled once, replayed per example.

    The L2 term is a second compiled graph of the parameters alone. The setup time (building both graphs
    and compiling them) is the compile time reported.
    """
    from micrograph import Graph, compile_graph
    from micrograph.engine import Value
    from micrograph.nn import MLP

    t0 = time.perf_counter()
    model = MLP(2, [16, 16, 1])
    params = model.parameters()
    for p, v in zip(params, init):
        p.data = v
    x0, x1, y = Value(0.0, label="x0"), Value(0.0, label="x1"), Value(1.0, label="y")
    loss = (1 + -y * model([x0, x1])).relu()
    g = Graph(loss)
    f = compile_graph(g, params)
    penalty: Any = ALPHA * sum(p * p for p in params)
    reg = compile_graph(Graph(penalty), params)
    setup = time.perf_counter() - t0
    i0, i1, iy = g.index[x0], g.index[x1], g.index[y]
    leaves, reg_leaves = g.leaves, reg.graph.leaves
    inv = 1.0 / len(X)
    evaluate, evaluate_reg = f.evaluate, reg.evaluate

    def step(k: int) -> float:
        u = [v.data for v in leaves]
        total = 0.0
        grads = [0.0] * len(params)
        for (a, b), t in zip(X, Y):
            u[i0] = a
            u[i1] = b
            u[iy] = t
            value, g_example = evaluate(u)
            total += value
            grads = list(map(add, grads, g_example))
        r, g_reg = evaluate_reg([v.data for v in reg_leaves])
        learning_rate = 1.0 - 0.9 * k / 100
        for p, gp, gr in zip(params, grads, g_reg):
            p.data -= learning_rate * (gp * inv + gr)
        return total * inv + r

    return step, setup


# -------------------------------------------------------------------------------------------------
# The driver.


def run_worker(args: list[str], timeout: float = 1800, python: str | None = None) -> dict[str, Any]:
    """Run ``run.py --worker ...`` in a fresh interpreter (``python``, default this one); return its JSON."""
    cmd = [python or sys.executable, str(Path(__file__).resolve()), "--worker", *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"worker {' '.join(args)} failed:\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = ["| " + " | ".join(str(c).rjust(w) for c, w in zip(r, widths)) + " |" for r in rows]
    return "\n".join([line, sep, *body])


def chain_section(sizes: list[int], compile_max: int, repeats: int) -> tuple[str, dict[str, Any]]:
    results = []
    for n in sizes:
        print(f"  chain N = {n:.0e} ...", file=sys.stderr, flush=True)
        results.append(run_worker(["chain", str(n), str(compile_max), str(repeats)]))
    base = results[0]
    per = lambda r, key: r[key] / r["ops"] * 1e9
    paused = lambda r: (r["build_paused"] + r["backward_paused"]) / r["ops"]
    own = lambda r: (r["build"] + r["backward"] - r["collector"]) / r["ops"]  # the engine's own time
    rows = []
    for r in results:
        total = r["build"] + r["backward"]
        base_total = base["build"] + base["backward"]
        rows.append([
            f"{r['ops']:.0e}", f"{r['nodes']:,}",
            f"{per(r, 'build'):.0f}", f"{per(r, 'backward'):.0f}", f"{total / r['ops'] * 1e9:.0f}",
            f"{(total / r['ops']) / (base_total / base['ops']):.2f}x",
            f"{per(r, 'graph'):.0f}", f"{per(r, 'forward'):.0f}", f"{per(r, 'backprop'):.0f}",
            f"{per(r, 'compile'):.0f}" if "compile" in r else "-",
            f"{per(r, 'compiled_call'):.0f}" if "compile" in r else "-",
            f"{per(r, 'build_paused'):.0f}", f"{per(r, 'backward_paused'):.0f}",
            f"{paused(r) / paused(base):.2f}x",
            f"{per(r, 'collector'):.0f}", f"{r['full_collections']}",
            f"{own(r) / own(base):.2f}x",
        ])  # fmt: skip
    header = [
        "N ops", "nodes", "build ns/op", "backward ns/op", "total ns/op", "total vs 1e3",
        "Graph() ns/op", "forward ns/op", "backprop ns/op", "compile ns/op", "compiled call ns/op",
        "build, GC paused", "backward, GC paused", "total, GC paused, vs 1e3",
        "in the collector ns/op", "full collections", "total less collector, vs 1e3",
    ]  # fmt: skip
    last = results[-1]
    per_op = lambda r: (r["build"] + r["backward"]) / r["ops"]
    growth = per_op(last) / per_op(base)
    growth_paused = (
        (last["build_paused"] + last["backward_paused"])
        / last["ops"]
        / ((base["build_paused"] + base["backward_paused"]) / base["ops"])
    )
    facts = {"chain_growth": growth, "chain_growth_paused": growth_paused, "chain_max": last["ops"]}
    compiled = [r for r in results if "compile" in r]
    if compiled:
        facts.update(compile_us=per(compiled[-1], "compile") / 1e3, compile_n=compiled[-1]["ops"])
        facts.update(compile_mixed_us=per(compiled[-1], "compile_mixed") / 1e3)
    return table(rows, header), {**facts, "chain": results}


def memory_section(n_ops: int) -> tuple[str, dict[str, Any]]:
    print(f"  memory, chain of {n_ops:.0e} ops ...", file=sys.stderr, flush=True)
    ours = run_worker(["memory", "micrograph", str(n_ops)])
    theirs = run_worker(["memory", "micrograd", str(n_ops)])
    ratio = ours["bytes_per_node"] / theirs["bytes_per_node"]
    rows = [
        [name, f"{r['nodes']:,}", f"{r['bytes'] / 2**20:.1f}", f"{r['bytes_per_node']:.0f}", f"{rel:.2f}"]
        for name, r, rel in (("micrograd 0.1.0", theirs, 1.0), ("micrograph", ours, ratio))
    ]
    facts = {"memory_ratio": ratio, "bytes_per_node": ours["bytes_per_node"]}
    return table(rows, ["engine", "nodes", "MiB", "bytes/node", "vs micrograd"]), facts


def demo_section(steps: int, n_points: int, rounds: int = 1) -> tuple[str, dict[str, Any]]:
    """The demo step of every variant under every protocol, ``rounds`` times over, interleaved.

    A variant's time under a protocol is the mean of its ``steps`` timed steps, in the best of the rounds:
    the rounds run every variant in turn, so a slow spell of a shared machine falls on all variants
    alike, and the best round is the one least disturbed (as ``timeit`` takes the best of its repeats).
    """
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    t: dict[tuple[str, str], float] = {}
    for r in range(rounds):
        for protocol, shown in PROTOCOLS.items():
            for v in VARIANTS:
                print(f"  demo step: {v}, {shown}, round {r + 1}/{rounds} ...", file=sys.stderr, flush=True)
                result = run_worker(["demo", v, str(steps), protocol, str(n_points)])
                if (v, protocol) not in t or mean(result["times"]) < t[v, protocol]:
                    runs[v, protocol], t[v, protocol] = result, mean(result["times"])
    ref_losses = runs["micrograd", "auto"]["losses"]
    rows = []
    for v in VARIANTS:
        losses = runs[v, "auto"]["losses"]
        diff = max(abs(a - b) / abs(b) for a, b in zip(losses, ref_losses))
        setup = runs[v, "auto"]["setup"]
        row = [LABELS[v]]
        for protocol in PROTOCOLS:
            ms = t[v, protocol]
            row += [f"{ms * 1e3:.1f}", f"{t['micrograd', protocol] / ms:.1f}x"]
        row += [
            f"{t[v, 'auto'] / t['plain', 'auto']:.2f}x",
            f"{setup * 1e3:.0f}" if setup else "-",
            f"{diff:.0e}",
        ]
        rows.append(row)
    header = ["variant"]
    for shown in PROTOCOLS.values():
        header += [f"ms ({shown})", "vs micrograd"]
    header += ["vs plain (gc auto)", "setup/compile ms", "loss rel. diff"]
    compile_time = runs["compiled", "auto"]["setup"]
    facts = {
        **{f"eager_speedup_{p}": t["micrograd", p] / t["eager", p] for p in PROTOCOLS},
        "compiled_speedup": min(t["micrograd", p] / t["compiled", p] for p in PROTOCOLS),
        "compiled_vs_plain": max(t["compiled", p] / t["plain", p] for p in PROTOCOLS),
        "compile_in_eager_steps": compile_time / t["eager", "auto"],
        "compile_ms": compile_time * 1e3,
        "losses_agree": max(
            max(abs(a - b) / abs(b) for a, b in zip(runs[v, "auto"]["losses"], ref_losses)) for v in VARIANTS
        ),
    }
    return table(rows, header), facts


ENGINES = {"micrograph": "micrograph", "micrograd": "micrograd 0.1.0", "torch": "PyTorch (CPU, scalars)"}


def engines_section(sizes: list[int]) -> tuple[str, dict[str, Any]]:
    """The chain in micrograph, micrograd and PyTorch at the smallest and largest size: ns/op and ratios.

    PyTorch is left out, and said so, when it is not installed (``pip install 'micrograph[bench]'``).
    """
    import importlib.util

    engines = [e for e in ENGINES if e != "torch" or importlib.util.find_spec("torch") is not None]
    ends = [sizes[0], sizes[-1]]
    got: dict[tuple[str, int], float] = {}
    for n in ends:
        for e in engines:
            print(f"  chain in {e}, N = {n:.0e} ...", file=sys.stderr, flush=True)
            r = run_worker(["engine_chain", e, str(n)])
            got[e, n] = r["seconds"] / r["ops"] * 1e9
    small, big = ends
    rows = [
        [ENGINES[e], f"{got[e, small]:.0f}", f"{got[e, big]:.0f}", f"{got[e, big] / got[e, small]:.2f}x",
         f"{got[e, big] / got['micrograph', big]:.1f}x"]
        for e in engines
    ]  # fmt: skip
    header = ["engine", f"ns/op at {small:.0e}", f"ns/op at {big:.0e}", "growth",
              f"its ns/op / micrograph's at {big:.0e}"]  # fmt: skip
    facts: dict[str, Any] = {"engines_n": big}
    for e in engines:
        if e != "micrograph":
            facts[f"per_op_vs_{e}"] = got[e, big] / got["micrograph", big]
    if "torch" not in engines:
        facts["torch_missing"] = True
    return table(rows, header), facts


def gc_section(n_ops: int, rounds: int) -> tuple[str, dict[str, Any]]:
    """The chain's build + backward under each of :data:`GC_MODES`, against the default.

    Each mode runs once in each of ``rounds`` interleaved rounds, in a fresh process; the fastest counts.
    """
    got: dict[str, dict[str, Any]] = {}
    for r in range(rounds):
        for mode in GC_MODES:
            shown = f"chain of {n_ops:.0e}, collector {mode}, round {r + 1}/{rounds}"
            print(f"  {shown} ...", file=sys.stderr, flush=True)
            result = run_worker(["gc", mode, str(n_ops)])
            if mode not in got or result["seconds"] < got[mode]["seconds"]:
                got[mode] = result
    base = got["default"]["seconds"]
    rows = [
        [GC_MODES[m], f"{r['seconds'] / r['ops'] * 1e9:.0f}", f"{base / r['seconds']:.2f}x"]
        for m, r in got.items()
    ]
    return table(rows, ["chain build + backward, collector", "ns/op", "speed-up"]), {}


def discover_pythons() -> list[str]:
    """The interpreters of nox's test environments (``.nox/tests-3-1X``), made by ``nox -s tests``."""
    envs = ROOT.glob(".nox/tests-*/bin/python")
    found = sorted(envs, key=lambda p: [int(x) for x in p.parent.parent.name.split("-")[1:]])
    return [str(p) for p in found]


def versions_section(
    pythons: list[str], steps: int, n_points: int, rounds: int
) -> tuple[str, dict[str, Any]]:
    """micrograd's demo step, micrograd and micrograph eager, under each Python, interleaved rounds."""
    t: dict[tuple[str, str, str], float] = {}
    version: dict[str, str] = {}
    for python in pythons:
        out = subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                             capture_output=True, text=True, check=True)  # fmt: skip
        version[python] = out.stdout.strip()
    for r in range(rounds):
        for python in pythons:
            for protocol in PROTOCOLS:
                for v in ("micrograd", "eager"):
                    shown = f"Python {version[python]}: {v}, {PROTOCOLS[protocol]}, round {r + 1}/{rounds}"
                    print(f"  {shown} ...", file=sys.stderr, flush=True)
                    res = run_worker(["demo", v, str(steps), protocol, str(n_points)], python=python)
                    key = (python, v, protocol)
                    t[key] = min(t.get(key, math.inf), mean(res["times"]))
    rows = []
    facts: dict[str, Any] = {"versions": {}}
    for python in pythons:
        row = [version[python]]
        for protocol in PROTOCOLS:
            m, e = t[python, "micrograd", protocol], t[python, "eager", protocol]
            row += [f"{m * 1e3:.1f}", f"{e * 1e3:.1f}", f"{m / e:.1f}x"]
            facts["versions"].setdefault(version[python], {})[protocol] = m / e
        rows.append(row)
    header = ["Python"]
    for shown in PROTOCOLS.values():
        header += [f"micrograd ms ({shown})", "eager ms", "speed-up"]
    return table(rows, header), facts


def peak_worker(n_ops: int) -> dict[str, Any]:
    """The peak resident memory of building the chain of n_ops operations and ``z.backward()``, in MB."""
    import resource

    from micrograph import Value

    u = Value(0.5)
    for _ in range(n_ops // 3):
        u = (u * 0.999 + 0.1).relu()
    u.backward()
    return {"ops": n_ops, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


PEAK_BEFORE_MB = 890.0
"""The peak memory of the 1e6-operation chain through backward before the push form (tuple inputs, the
pull form with consumer lists behind Value.backward): the figure the memory target halves."""

COMPILE_BEFORE_US = 73.0
"""compile_graph's cost per operation on the chain before (7 s for a 1e5 chain), which the target divides:
one statement per node of G and of B (built by Algorithm 6.6). Measured again beside the fused generator,
in one run of the chain worker on the project machine: 53.7 us before, 11.1 us after."""


def targets(f: dict[str, Any]) -> str:
    """The performance targets against this run's figures (rows whose part did not run are left out)."""
    rows = []
    if "eager_speedup_auto" in f:
        rows += [
            ["eager step vs micrograd, collector in its default state", ">= 8x",
             f"{f['eager_speedup_auto']:.1f}x", f["eager_speedup_auto"] >= 8],
            ["eager step vs micrograd, gc.collect() after each step", ">= 8x",
             f"{f['eager_speedup_collect']:.1f}x", f["eager_speedup_collect"] >= 8],
            ["eager step vs micrograd, collector disabled for both", ">= 3x",
             f"{f['eager_speedup_off']:.1f}x", f["eager_speedup_off"] >= 3],
            ["nn.train(compile=True)'s step vs plain floats by hand (worst protocol)", "<= 1.2x",
             f"{f['compiled_vs_plain']:.2f}x", f["compiled_vs_plain"] <= 1.2],
            ["losses of every variant vs micrograd's (max rel. diff)", "<= 1e-9", f"{f['losses_agree']:.0e}",
             f["losses_agree"] <= 1e-9],
        ]  # fmt: skip
    if "engines_n" in f:
        n = f["engines_n"]
        for e in ("micrograd", "torch"):
            if f"per_op_vs_{e}" in f:
                ratio = f[f"per_op_vs_{e}"]
                rows.append([f"chain build + backward per operation at {n:.0e}, {ENGINES[e]}'s / ours",
                             ">= 1x", f"{ratio:.1f}x", ratio >= 1])  # fmt: skip
        if f.get("torch_missing"):
            missing = f"... PyTorch at {n:.0e}: not installed (pip install 'micrograph[bench]')"
            rows.append([missing, "-", "-", None])
    for version, ratio in f.get("versions", {}).items():
        rows += [
            [f"Python {version}: eager step vs micrograd, collector in its default state", ">= 8x",
             f"{ratio['auto']:.1f}x", ratio["auto"] >= 8],
            [f"Python {version}: eager step vs micrograd, collector disabled for both", ">= 3x",
             f"{ratio['off']:.1f}x", ratio["off"] >= 3],
        ]  # fmt: skip
    if "compile_us" in f:
        goal = COMPILE_BEFORE_US / 5
        rows.append([f"compile_graph per operation (chain of {f['compile_n']:.0e})", f"<= {goal:.1f} us",
                     f"{f['compile_us']:.1f} us", f["compile_us"] <= goal])  # fmt: skip
        rows.append(["... the same with random activations (no two generated parts alike)", "(for reference)",
                     f"{f['compile_mixed_us']:.1f} us", f["compile_mixed_us"] <= goal])  # fmt: skip
    if "peak_mb" in f:
        goal = PEAK_BEFORE_MB / 2
        rows.append([f"peak memory, chain of {f['peak_ops']:.0e} ops through backward", f"<= {goal:.0f} MB",
                     f"{f['peak_mb']:.0f} MB", f["peak_mb"] <= goal])  # fmt: skip
    if "bytes_per_node" in f:
        rows.append(
            ["bytes per live node", "<= 100", f"{f['bytes_per_node']:.1f}", f["bytes_per_node"] <= 100]
        )
    rows += exercises.target_rows(f)
    marked = [[a, b, c, "-" if d is None else "met" if d else "NOT met"] for a, b, c, d in rows]
    return table(marked, ["target", "goal", "measured", ""])


def page_sections(parts: set[str], quick: bool) -> None:
    """Print parts 8 and 9, which open pages in chromium: the explorer's costs, the site's budgets."""
    if "explorer" in parts:
        from explorer import section as explorer_section  # benchmarks/explorer.py: the explorer's costs

        print("8. The explorer (benchmarks/explorer.py)\n\n" + explorer_section(quick=quick) + "\n")
    if "site" in parts:
        print("9. The browser site's budgets (benchmarks/site.py)\n\n" + site_section(quick) + "\n")


def site_section(quick: bool) -> str:
    """benchmarks/site.py's section, the module loaded by its path: ``site`` names the standard library's."""
    spec = importlib.util.spec_from_file_location("micrograph_site_benchmark", HERE / "site.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {HERE / 'site.py'}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.section(quick=quick))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small sizes and one step: a smoke run")
    parser.add_argument("--steps", type=int, default=None, help="timed demo steps per variant (default 10)")
    parser.add_argument(
        "--rounds", type=int, default=3, help="interleaved rounds of the demo step (default 3)"
    )
    parser.add_argument("--only", choices=PARTS, action="append", help="run only this part (repeatable)")
    parser.add_argument(
        "--python", action="append", metavar="EXE",
        help="also time the eager demo step with this interpreter (repeatable; default: nox's test "
        "environments .nox/tests-3-1X, made by `nox -s tests`, each with micrograph and micrograd installed)",
    )  # fmt: skip
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        kind, *rest = args.worker
        if kind == "chain":
            result = chain_worker(int(rest[0]), int(rest[1]), int(rest[2]))
        elif kind == "memory":
            result = memory_worker(rest[0], int(rest[1]))
        elif kind == "peak":
            result = peak_worker(int(rest[0]))
        elif kind == "engine_chain":
            result = engine_chain_worker(rest[0], int(rest[1]))
        elif kind == "gc":
            result = gc_worker(rest[0], int(rest[1]))
        else:
            result = demo_worker(rest[0], int(rest[1]), rest[2], int(rest[3]))
        print(json.dumps(result))
        return 0

    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000, 1_000_000]
    steps = args.steps or (1 if args.quick else 10)
    n_mem = 10_000 if args.quick else 100_000
    import micrograd

    print(f"micrograph benchmark{' (quick)' if args.quick else ''}: Python {sys.version.split()[0]}, "
          f"micrograd {getattr(micrograd, '__version__', '0.1.0')}, {os.cpu_count()} CPUs, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")  # fmt: skip
    parts = set(args.only or PARTS)
    facts: dict[str, Any] = {}
    if "chain" in parts:
        text, more = chain_section(sizes, compile_max=100_000, repeats=1 if args.quick else 5)
        facts.update(more)
        print("1. Chain u = relu(u * 0.999 + 0.1): ns per operation (build = making the nodes, backward =")
        print("   z.backward(); replay: Graph(z), Graph.forward, Graph.backprop; compile: compile_graph)\n")
        print(text + "\n")
    if "memory" in parts:
        text, more = memory_section(n_mem)
        facts.update(more)
        peak_ops = 10_000 if args.quick else 1_000_000
        print(f"  peak memory, chain of {peak_ops:.0e} ops ...", file=sys.stderr, flush=True)
        peak = run_worker(["peak", str(peak_ops)])
        facts.update(peak_mb=peak["peak_mb"], peak_ops=peak_ops)
        print(f"2. Memory of a live chain of {n_mem:.0e} operations (tracemalloc)\n")
        print(text + "\n")
    if "demo" in parts:
        n_points = 30 if args.quick else 100
        text, more = demo_section(steps, n_points, rounds=1 if args.quick else args.rounds)
        facts.update(more)
        rounds = 1 if args.quick else args.rounds
        print(f"3. micrograd's demo step: MLP(2, [16, 16, 1]), {n_points} two-moons points, hinge + 1e-4 L2,")
        print(f"   SGD; mean of {steps} step(s) after one warm-up, best of {rounds} interleaved round(s)\n")
        print(text + "\n")
    if "engines" in parts:
        text, more = engines_section(sizes)
        facts.update(more)
        print("4. The same chain in micrograph, micrograd and PyTorch: build + backward, ns per operation\n")
        print(text + "\n")
    if "gc" in parts:
        n_gc = sizes[-1]
        text, more = gc_section(n_gc, 1 if args.quick else args.rounds)
        facts.update(more)
        print(f"5. A chain of {n_gc:.0e} operations built in the user's own loop: the collector's knobs")
        print(f"   (best of {1 if args.quick else args.rounds} interleaved round(s))\n")
        print(text + "\n")
    if "versions" in parts:
        found = [] if args.quick else discover_pythons()  # a smoke run times this interpreter only
        pythons = args.python if args.python is not None else found
        here = Path(sys.executable).resolve()
        pythons = [sys.executable] + [p for p in pythons if Path(p).resolve() != here]
        rounds = 1 if args.quick else args.rounds
        n_points = 30 if args.quick else 100
        text, more = versions_section(pythons, steps, n_points, rounds)
        facts.update(more)
        print(f"6. micrograd's demo step per Python: mean of {steps} step(s), best of {rounds} round(s)\n")
        print(text + "\n")
    if "exercises" in parts:
        text, more = exercises.section(runs=1 if args.quick else 3, worst=not args.quick)
        facts.update(more)
        print("7. The exercise checker: a correct solution's whole check (judge, runner, every case)\n")
        print(text + "\n")
    page_sections(parts, args.quick)
    print("Targets\n")
    print(targets(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
