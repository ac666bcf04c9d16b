"""Store against recompute: what a derivative cost, and equation 6.52's way, every forward value stored.

Section 6.5.2 of the book takes the chain w -> x = f(w) -> y = f(x) -> z = f(y) of figure 6.9 and writes
dz/dw two ways:

* equation 6.52, ``f'(y) f'(x) f'(w)``: each subexpression x, y is computed once, stored, and reused.
  That is what back-propagation does (Algorithms 6.1 and 6.2): :func:`store_grad`, here.
* equation 6.53, ``f'(f(f(w))) f'(f(w)) f'(w)``: every subexpression is recomputed from w wherever it is
  needed, the naive chain rule: :func:`micrograph.naive.naive_grad`. It needs almost no memory, but on a
  chain of depth d it evaluates d(d + 1)/2 subexpressions instead of d, and on a graph where subexpressions
  are shared it sums over exponentially many paths.

Between the two, :func:`micrograph.checkpoint.checkpoint_grad` keeps only every k-th forward value and
recomputes the pieces in between during the backward pass.

Every method returns a :class:`CountedGradient`: the derivative and what it cost. The counts mean:

* ``local_derivatives``: evaluations of a local derivative du(i)/du(j), one operation table rule
  ``op.local_derivative(k, args, out)`` each. Only edges of G' count (the edges out of the nodes that
  depend on w, as in Algorithm 6.5); an edge from a constant or from another variable contributes nothing
  to dz/dw.
* ``recomputed``: forward subexpressions u(i) = f(i)(...) evaluated with ``op.f`` *beyond the one
  forward pass* that computes z. The naive rule does no stored pass, so all of its evaluations count.
* ``peak_values``: the peak number of forward values (values of nodes u(i), leaves included once they are
  read) held at once. Derivative numbers are not counted: every method keeps some (the grad_table, the
  naive recursion's partial products); this is the store-versus-recompute side of the trade-off.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.3, figure 6.9,
equations 6.50-6.53, Algorithms 6.1-6.2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from micrograph.backprop import run_algorithm_6_2
from micrograph.engine import Value
from micrograph.errors import typed_repr
from micrograph.forward import evaluate
from micrograph.graph import Graph, SubGraph

__all__ = ["CountedGradient", "store_grad"]


@dataclass(frozen=True)
class CountedGradient:
    """A derivative dz/dw and what it cost: operations and memory.

    Attributes:
        method: ``"naive"`` (equation 6.53, recompute), ``"store"`` (equation 6.52, back-propagation) or
            ``"checkpoint"`` (store every k-th value, recompute the rest).
        value: dz/dw as a float; None if the budget stopped the computation.
        local_derivatives: local derivatives du(i)/du(j) evaluated (edges of G' only).
        recomputed: forward subexpressions evaluated beyond the one forward pass that computes z.
        peak_values: the peak number of forward values held at once.
        complete: False if the budget stopped the computation.
        stopped: None, or why it stopped and how far it got.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.2, equations 6.52-6.53.
    """

    method: str
    value: float | None
    local_derivatives: int
    recomputed: int
    peak_values: int
    complete: bool
    stopped: str | None

    @property
    def operations(self) -> int:
        """``local_derivatives + recomputed``: the operations counted in plots and budgets."""
        return self.local_derivatives + self.recomputed

    def __str__(self) -> str:
        """One line for lessons and the terminal, e.g. ``naive: dz/dw = 0.533912, 3 local derivatives
        + 6 recomputed = 9 operations, at most 2 values held``."""
        value = "not computed" if self.value is None else f"{self.value:.6g}"
        text = (
            f"{self.method}: dz/dw = {value}, {self.local_derivatives:,} local derivatives + "
            f"{self.recomputed:,} recomputed = {self.operations:,} operations, "
            f"at most {self.peak_values:,} values held"
        )
        return text if self.stopped is None else f"{text} ({self.stopped})"


def _check_nodes(where: str, z: Any, w: Any) -> None:
    if not isinstance(z, Value):
        raise TypeError(f"{where}(z, w): z must be a Value, got {typed_repr(z)}")
    if not isinstance(w, Value):
        raise TypeError(f"{where}(z, w): w must be a Value, got {typed_repr(w)}")


def _pruned(graph: Graph, w: Value, G_prime: SubGraph | None = None) -> list[bool]:
    """G' (the nodes that depend on w) as flags aligned with ``graph.nodes``."""
    in_G = [False] * len(graph.nodes)
    index = graph.index
    for v in (G_prime if G_prime is not None else graph.prune([w])).nodes:
        in_G[index[v]] = True
    return in_G


def store_grad(z: Value, w: Value) -> CountedGradient:
    """dz/dw the back-propagation way (equation 6.52): one stored forward pass, one local derivative per edge.

    Algorithm 6.1 computes every value u(1)..u(n) from the leaves' ``.data`` and keeps all of them; then
    Algorithm 6.2's loop runs over the nodes of G' (those that depend on w), from z down:
    grad_table[u(j)] = sum over consumers u(i) of grad_table[u(i)] * du(i)/du(j), each local derivative
    evaluated once with the operation table's rule on the stored values.

    Counts: ``local_derivatives`` = the number of edges of G' (:func:`naive_cost`'s ``edges``);
    ``recomputed`` = 0; ``peak_values`` = n, every forward value of G. The value equals Algorithm 6.2's
    ``Graph(z).backprop()[w]`` (which evaluates every edge of G, G' and the rest).

    Args:
        z: the output node, a Value.
        w: the node to differentiate with respect to.

    Returns:
        A :class:`CountedGradient` with ``method="store"``, always complete. 0.0 if z does not depend on w.

    Raises:
        TypeError: if z or w is not a Value.
        DomainError: if a value or a local derivative does not exist at the leaves' current values.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.3, equation 6.52,
    Algorithms 6.1 and 6.2.
    """
    _check_nodes("store_grad", z, w)
    graph = Graph(z)
    in_G = _pruned(graph, w)
    # Algorithm 6.1: every forward value, kept
    u = evaluate(graph, where="store_grad")
    # Algorithm 6.2 over G' (the nodes that depend on w), on the stored values
    grad_table, evaluations = run_algorithm_6_2(
        graph,
        values=u,
        members=in_G,
        where="store_grad",
    )
    value = grad_table[graph.index[w]] if in_G[-1] else 0.0
    return CountedGradient("store", value, evaluations, 0, len(u), True, None)
