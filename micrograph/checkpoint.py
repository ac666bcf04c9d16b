"""Checkpointing: dz/dw storing about every k-th forward value and recomputing the rest going backward.

Between storing every value (equation 6.52, :func:`micrograph.store.store_grad`) and recomputing every
value (equation 6.53, :func:`micrograph.naive.naive_grad`), :func:`checkpoint_grad` keeps only the values a
later segment of k nodes uses and recomputes each segment when the backward pass reaches it: Algorithms
6.1 and 6.2, run one segment at a time. About sqrt(n) values for about one extra forward pass. The book
does not describe it; the idea is Griewank's checkpointing (Griewank 1992, "Achieving logarithmic growth of
temporal and spatial complexity in reverse automatic differentiation"; the ``revolve`` schedule, Griewank
& Walther 2000), brought to deep networks by Chen, Xu, Zhang & Guestrin (2016), "Training deep nets with
sublinear memory cost".

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3 (Algorithms 6.1, 6.2), with
checkpointing from Griewank (1992) and Chen et al. (2016).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Container
from typing import Any

from micrograph.backprop import run_algorithm_6_2
from micrograph.engine import Value
from micrograph.errors import typed_repr
from micrograph.forward import evaluate_segment
from micrograph.graph import Graph
from micrograph.memory import paused_gc
from micrograph.store import CountedGradient, _check_nodes, _pruned

__all__ = ["checkpoint_grad"]


def checkpoint_grad(z: Value, w: Value, k: int | None = None) -> CountedGradient:
    """dz/dw storing about every k-th forward value and recomputing the rest during the backward pass.

    The nodes u(1)..u(n), in topological order, are cut into segments of k nodes. The forward pass runs
    Algorithm 6.1 one segment at a time (:func:`micrograph.forward.evaluate_segment`) and keeps only the
    *checkpoints*: the values that a later segment uses (on a chain, the last value of every segment),
    and, at its end, the values of the last segment. The backward pass then takes the segments from the
    last to the first: it recomputes the segment's values from the checkpoints (every segment but the
    last), runs Algorithm 6.2 on the segment (:func:`micrograph.backprop.run_algorithm_6_2` with
    ``segment=``: the terms grad_table[u(i)] * du(i)/du(j) of the segment's consumers u(i) in G', each
    local derivative once, added to the entries that later segments gave), and drops the segment's values.

    On a chain of n nodes with the default k = ceil(sqrt(n)), that holds about 2 sqrt(n) values at peak
    (the checkpoints below the current segment plus the segment itself) instead of n, for about one
    extra forward pass (each value outside the checkpoints and the last segment is recomputed once).
    k = 1 stores every used value; k >= n is one segment: back-propagation with every value stored.
    Exactly, on a chain of n >= 2 nodes cut into m = ceil(n/k) >= 2 segments, the last of r = n - (m-1)k
    nodes: ``peak_values`` = max(m - 2 + k, m - 1 + r) and ``recomputed`` = (m - 1)(k - 1) - 1 for
    k >= 2 (each earlier segment recomputes its k nodes but its checkpoint, and the first holds the leaf
    w, which is read, not computed), 0 for k = 1.

    Counts: ``local_derivatives`` = the number of edges of G' (as :func:`store_grad`); ``recomputed`` =
    the values recomputed during the backward pass; ``peak_values`` = the peak number of forward values
    held (measured, forward and backward pass), see :mod:`micrograph.store`.

    Not in the book: checkpointing is Griewank's (1992; the ``revolve`` schedule of Griewank & Walther
    2000); Chen, Xu, Zhang & Guestrin (2016), "Training deep nets with sublinear memory cost", apply it
    with sqrt(n) segments to deep networks.

    Args:
        z: the output node, a Value.
        w: the node to differentiate with respect to.
        k: the segment length, a positive int; None for ceil(sqrt(n)), n the number of nodes of G.

    Returns:
        A :class:`CountedGradient` with ``method="checkpoint"``, always complete; the value equals
        :func:`store_grad`'s up to rounding (the same products, summed in another order).

    Raises:
        TypeError: if z or w is not a Value, or k is not an int.
        ValueError: if k < 1, or a leaf holds inf or nan and an operation takes it (as Algorithm 6.1).
        DomainError: if a value or a local derivative does not exist at the leaves' current values, or a
            gradient overflows.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3 (Algorithms 6.1, 6.2),
    with checkpointing from Griewank (1992) and Chen et al. (2016).
    """
    _check_nodes("checkpoint_grad", z, w)
    graph = Graph(z)
    n = len(graph.nodes)
    k = _segment_length(n, k)
    in_G = _pruned(graph, w)
    segments = [(lo, min(n, lo + k)) for lo in range(0, n, k)]
    checkpoints = _checkpoints(graph, k)
    held: dict[int, float] = {}  # the forward values held, by position
    grad_table = [0.0] * n
    grad_table[n - 1] = 1.0  # grad_table[u(n)] <- 1
    peak = recomputed = evaluations = 0
    where = "checkpoint_grad"
    with paused_gc():
        # forward: Algorithm 6.1 segment by segment, keeping the checkpoints
        for lo, hi in segments:
            evaluate_segment(graph, lo, hi, held, where=where)
            peak = max(peak, len(held))
            if hi < n:  # the last segment's values stay for the backward pass
                _drop(held, lo, hi, checkpoints)
        # backward: from the last segment
        for lo, hi in reversed(segments):
            recomputed += evaluate_segment(graph, lo, hi, held, where=where)
            peak = max(peak, len(held))
            # Algorithm 6.2's sums: this segment's consumers' terms, added to
            # the entries that later segments gave
            _, counted = run_algorithm_6_2(
                graph,
                values=held,
                members=in_G,
                segment=(lo, hi),
                known=grad_table,
                where=where,
            )
            evaluations += counted
            # the segment is done: its values (checkpoints included) go
            _drop(held, lo, hi, ())
    value = grad_table[graph.index[w]] if in_G[-1] else 0.0
    return CountedGradient("checkpoint", value, evaluations, recomputed, peak, True, None)


def _segment_length(n: int, k: Any) -> int:
    """checkpoint_grad's k, checked; ceil(sqrt(n)) for None."""
    if k is None:
        return max(1, math.isqrt(n - 1) + 1) if n > 1 else 1  # ceil(sqrt(n))
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"checkpoint_grad: k must be an int or None, got {typed_repr(k)}")
    if k < 1:
        raise ValueError(f"checkpoint_grad: k must be at least 1, got {k!r}")
    return int(k)


def _checkpoints(graph: Graph, k: int) -> set[int]:
    """The positions whose value a later segment of k nodes uses: the values the forward pass keeps."""
    last_use = [-1] * len(graph.nodes)  # the last consumer of every node, in topological order
    for i, pa in enumerate(graph.parents):
        for j in pa:
            last_use[j] = i
    return {j for j, i in enumerate(last_use) if i >= 0 and i // k > j // k}


def _drop(held: dict[int, float], lo: int, hi: int, keep: Container[int]) -> None:
    """Forget the values of positions lo..hi-1, but those in ``keep``."""
    for p in range(lo, hi):
        if p not in keep:
            held.pop(p, None)
