"""micrograd's demo training step, in micrograd and in each way micrograph runs it, under three protocols.

``MLP(2, [16, 16, 1])`` on two-moons points, hinge loss + 1e-4 L2 over every parameter, SGD with
micrograd's schedule, the same initial weights everywhere. Variants: micrograd 0.1.0 (PyPI), micrograph
eager (micrograd's code with micrograph's imports), micrograph replay (one graph of the whole batch,
``Graph.forward`` + ``Graph.backprop`` per step), micrograph compiled (one per-example loss graph compiled
once, replayed per example), and plain floats (forward and backward derived by hand,
``benchmarks/plain_mlp.py``). :func:`demo_worker` times one variant under one protocol in its own process;
:func:`demo_section` and :func:`versions_section` (one Python after another) are parts 3 and 6 of
``run.py``.
"""

from __future__ import annotations

import gc
import math
import random
import subprocess
import sys
import time
from collections.abc import Callable
from itertools import pairwise
from operator import add
from typing import Any

from measure import ROOT, mean, run_worker, table

if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))
from micrograd_programs import ALPHA, demo_step

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


PROTOCOLS = {"auto": "gc auto", "collect": "+ gc.collect()", "off": "gc disabled"}
"""How the cyclic garbage collector runs during the timed demo steps (see the module docstring)."""


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
        step = demo_step(micrograd.engine.Value, model, X, Y)
    elif variant == "eager":
        from micrograph.engine import Value
        from micrograph.nn import MLP

        model = MLP(2, [16, 16, 1])
        for p, v in zip(model.parameters(), init):
            p.data = v
        step = demo_step(Value, model, X, Y)
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
