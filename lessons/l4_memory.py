"""Lesson 4: store or recompute: memory against time (equations 6.52 and 6.53, and checkpointing).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.2, equations 6.52-6.53.
Checkpointing is not in the book: Griewank (1992); Chen, Xu, Zhang & Guestrin (2016), "Training deep
nets with sublinear memory cost".
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import viz
from lessons.engine_lines import Bound, EngineLines
from lessons.engine_spans import naive_sum, stored
from lessons.step import Ours, Step
from micrograph.checkpoint import checkpoint_grad
from micrograph.families import chain, memory_rows
from micrograph.naive import naive_grad
from micrograph.store import store_grad
from viz.words import fmt, table

__all__ = ["steps"]

LINES = {
    "two": Ours(
        "(6.52) store f(w) in x: memory for every value, no recomputation\n"
        "(6.53) recompute f(w) when needed: little memory, more time"
    ),
    "checkpoint": Ours("keep every k-th value (a checkpoint); recompute each segment from its checkpoint"),
    "k": Ours("k = ceil(sqrt(n)): about 2 sqrt(n) values held, about one extra forward pass"),
    "rows": Ours("memory and operations against the chain's length n"),
}

N = 64


def _two(l: Any) -> None:
    l.z, l.w = chain(N)  # a chain of 64 tanh's: figure 6.9, longer
    l.store = store_grad(l.z, l.w)  # equation 6.52: back-propagation keeps every forward value
    l.recompute = naive_grad(l.z, l.w)  # equation 6.53: keeps almost nothing, recomputes


def _two_text(l: Any) -> str:
    s, r = l.store, l.recompute
    return (
        f"On a chain of n = {N} operations, back-propagation (6.52) holds {s.peak_values} values "
        "at its peak, "
        f"every forward value, for {s.operations} operations. The naive rule (6.53) holds {r.peak_values} "
        f"values but needs {r.operations} operations: {r.operations / s.operations:.1f} times as "
        "many. Both give "
        f"dz/dw = {fmt(s.value)}. Section 6.5.2 of the book: storing is faster when memory allows it; "
        f"recomputing is an option when memory is limited."
    )


def _checkpoint(l: Any) -> None:
    l.k = math.ceil(math.sqrt(N + 1))  # segments of about sqrt(n) nodes (the graph has N + 1)
    l.ck = checkpoint_grad(l.z, l.w, l.k)


def _checkpoint_text(l: Any) -> str:
    c = l.ck
    return (
        f"Checkpointing sits between the two: the forward pass keeps every k-th value, and the backward pass "
        f"recomputes one segment at a time from its checkpoint. With segments of k = {l.k} nodes it held "
        f"{c.peak_values} values at its peak and needed {c.operations} operations ({c.recomputed} of them "
        f"recomputations, about one extra forward pass): dz/dw = {fmt(c.value)}, the same number."
    )


def _sweep(l: Any) -> None:
    intervals = sorted({1, 2, 4, 8, 16, 32, 65, l.k})  # l.k = ceil(sqrt(n)), step 2's
    l.sweep = [(k, checkpoint_grad(l.z, l.w, k)) for k in intervals]


def _sweep_text(l: Any) -> str:
    fewest = min(r.peak_values for _, r in l.sweep)
    at = " and ".join(str(k) for k, r in l.sweep if r.peak_values == fewest)
    return (
        "The segment length k sets the trade. k = 1 stores everything "
        f"({l.sweep[0][1].peak_values} values, no "
        f"recomputation); k = {l.sweep[-1][0]} (one segment) is back-propagation again. The fewest "
        f"values held is {fewest}, at k = {at}, near sqrt({N + 1}) = {math.sqrt(N + 1):.1f}: memory "
        f"of order sqrt(n) for about twice the operations."
    )


def _rows(l: Any) -> None:
    l.rows = memory_rows(N)  # n = 1..64: peak values and operations of the three strategies
    l.plot = viz.charts.memory(N)


def _rows_text(l: Any) -> str:
    r = l.rows[-1]
    return (
        f"Over chains of n = 1 to {N}: at n = {r['n']}, store holds {r['store_peak']} values for "
        f"{r['store_ops']} operations, recompute {r['recompute_peak']} for {r['recompute_ops']}, "
        "checkpointing "
        f"{r['checkpoint_peak']} for {r['checkpoint_ops']}. The plot shows memory growing like n, 1 and "
        f"sqrt(n), and time like n, n^2 and n."
    )


def _engine_two(l: Any) -> list[EngineLines]:
    return [stored(l.store), naive_sum(l.recompute, peak=True)]


def _engine_checkpoint(l: Any) -> EngineLines:
    c = l.ck
    return EngineLines(
        "micrograph.checkpoint:checkpoint_grad",
        "with paused_gc():",
        bound=(
            Bound("recomputed += evaluate_segment(", "recomputed", (c.recomputed,), last=True),
            Bound("evaluations += counted", "evaluations", (c.local_derivatives,), last=True),
            Bound("_drop(held, lo, hi, ())", "peak", (c.peak_values,), last=True),
        ),
        caption=f"segments of k = {l.k} nodes",
    )


def _engine_sweep(l: Any) -> EngineLines:
    k, _ = min(l.sweep, key=lambda kr: kr[1].peak_values)
    n = N + 1  # the chain's nodes, w included
    return EngineLines(
        "micrograph.checkpoint:checkpoint_grad",
        "n = len(graph.nodes)",
        "checkpoints = _checkpoints(graph, k)",
        (
            Bound("n = len(graph.nodes)", "n", (n,)),
            Bound("k = _segment_length(n, k)", "k", (k,)),
            Bound("segments = [", "len(segments)", (-(-n // k),)),
        ),
        caption=f"the call with the fewest values held, k = {k}",
    )


def _engine_rows(l: Any) -> EngineLines:
    r = l.rows[-1]
    return EngineLines(
        "micrograph.families:memory_rows",
        "for n in range(1, top + 1):",
        "ckpt = checkpoint_grad(z, w)",
        (
            Bound("for n in range(1, top + 1):", "n", (r["n"],)),
            Bound("store = store_grad(z, w)", "store.peak_values", (r["store_peak"],)),
            Bound("naive = naive_grad(z, w", "naive.peak_values", (r["recompute_peak"],)),
            Bound("ckpt = checkpoint_grad(z, w)", "ckpt.peak_values", (r["checkpoint_peak"],)),
        ),
        caption=f"the longest chain, n = {r['n']}",
    )


def _values(l: Any) -> str:
    if hasattr(l, "rows"):
        pick = [r for r in l.rows if r["n"] in (1, 2, 4, 8, 16, 32, 64)]
        rows = [
            [
                str(r["n"]),
                str(r["store_peak"]),
                str(r["store_ops"]),
                str(r["recompute_peak"]),
                str(r["recompute_ops"]),
                str(r["checkpoint_peak"]),
                str(r["checkpoint_ops"]),
            ]
            for r in pick
        ]
        return table(
            rows, ["n", "store mem", "store ops", "recompute mem", "recompute ops", "ckpt mem", "ckpt ops"]
        )
    if hasattr(l, "sweep"):
        rows = [[str(k), str(r.peak_values), str(r.recomputed), str(r.operations)] for k, r in l.sweep]
        return table(rows, ["k", "peak values", "recomputed", "operations"])
    res = [("store (6.52)", l.store), ("recompute (6.53)", l.recompute)]
    if hasattr(l, "ck"):
        res.append((f"checkpoint k={l.k}", l.ck))
    rows = [[name, fmt(r.value), str(r.peak_values), str(r.operations)] for name, r in res]
    return table(rows, ["method", "dz/dw", "peak values", "operations"])


def _figure(l: Any) -> Any:
    return getattr(l, "plot", None)


def steps(l: Any) -> Iterator[Step]:
    """The steps of lesson 4 (see :mod:`lessons.step`)."""
    step = Step.showing(_values, _figure)
    yield step("Store (6.52) or recompute (6.53)", LINES["two"], _two, _two_text, _engine_two)
    yield step(
        "Checkpointing: keep every k-th value",
        LINES["checkpoint"],
        _checkpoint,
        _checkpoint_text,
        _engine_checkpoint,
    )
    yield step("The segment length sets the trade", LINES["k"], _sweep, _sweep_text, _engine_sweep)
    yield step("Memory and time against n", LINES["rows"], _rows, _rows_text, _engine_rows)
