"""A graph G and its gradients compiled to straight-line Python: fast replay of Algorithms 6.1/6.2.

Section 6.5.5 of the book: once the graph exists, "a generic graph evaluation engine can later compute the
derivatives for any specific numeric values". :meth:`Graph.forward` and :meth:`Graph.backprop` are that
engine as an interpreter: a loop over the stored order that looks up each node's operation.
:func:`compile_graph` writes the same computations out as Python source and lets Python compile it, into a
:class:`CompiledGraph` that a training loop calls with new numbers, building no node.

The compiler's rooms, one thought each:

* :mod:`micrograph.templates`: the operation table as code (each operation's expression template, each
  derivative rule written out by calling it on placeholders): no formula is written anywhere else;
* :mod:`micrograph.compile_emitter`: one statement emitter for Algorithm 6.1, two dialects (Python,
  JavaScript);
* :mod:`micrograph.compile_python`: the Python dialect, Algorithm 6.1's statements and Algorithm 6.2's
  sums over G' (the nodes between ``wrt`` and z, as Algorithm 6.5 prunes), fused, split into parts;
* :mod:`micrograph.compile_javascript`: the JavaScript dialect, G and B for the explorer page;
* :mod:`micrograph.compile_push`: the push form of ``Value.backward`` as one compiled loop.

The source holds only generated identifiers, numbers and comments made of them: a node's label (user
text) never goes into the code, and an operation outside micrograph's table is always called, never
templated.

Errors are those of the interpreter. Algorithm 6.1 rejects an operation outside its domain and any value
of G that is not finite; the generated code adds up every value of G whose consumers could hide an inf or
nan (:attr:`Op.passes_non_finite <micrograph.ops.Op>`: relu's argument, but not an addition's), which with
the output makes any non-finite value of G reach the check sum. The call adds the returned gradients to
that sum: the backward terms are products and sums, so a non-finite value anywhere in the backward pass
reaches a gradient. When the sum is not finite or an operation raises, the call re-runs Algorithms 6.1 and
6.2 on the graph, which raise the same :class:`~micrograph.DomainError` naming the node, or return their
own numbers (when only the check sum overflowed, or the interpreter lets an infinite gradient through).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 (Algorithms 6.1, 6.2),
6.5.5 (symbol-to-symbol derivatives), 6.5.6 (Algorithm 6.5).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

from micrograph.backprop import run_algorithm_6_2
from micrograph.compile_python import Function, Writer
from micrograph.engine import Value
from micrograph.errors import check_graph, typed_repr
from micrograph.forward import input_values
from micrograph.graph import Graph, Inputs, as_values
from micrograph.memory import paused_gc

__all__ = ["CompiledGraph", "compile_graph"]


class CompiledGraph:
    """A graph G compiled with its gradient: ``f(values) -> (z, [dz/dw for w in wrt])``, no nodes built.

    Made by :func:`compile_graph`. Calling it takes what :meth:`Graph.forward` takes and changes no node.

    Attributes:
        graph (Graph): G, the graph compiled.
        wrt (list[Value]): the nodes the gradients are taken with respect to, in the order returned.
        keep (list[Value]): nodes of G whose values :meth:`evaluate_all` returns too.
        source (str): the generated Python source (every part, and how the driver calls them).
        n_statements (int): how many assignments of a value or a gradient the source has.
        parts (int): how many functions the source was split into (1 unless the graph is large).
        compile_seconds (float): the time :func:`compile_graph` took, in seconds.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 and 6.5.6.
    """

    __slots__ = ("graph", "wrt", "keep", "source", "n_statements", "parts", "compile_seconds", "_fn")

    def __init__(
        self, graph: Graph, wrt: list[Value], keep: list[Value], source: str, fn: Function,
        n_statements: int, parts: int,
    ) -> None:  # fmt: skip
        self.graph = graph
        self.wrt = wrt
        self.keep = keep
        self.source = source
        self._fn = fn
        self.n_statements = n_statements
        self.parts = parts
        self.compile_seconds = 0.0

    def __repr__(self) -> str:
        return (
            f"<CompiledGraph of {self.graph!r}: {len(self.wrt)} gradient(s), "
            f"{self.n_statements} statements in {self.parts} part(s)>"
        )

    def __call__(self, values: Inputs | None = None) -> tuple[float, list[float]]:
        """Algorithms 6.1 and 6.2 as compiled code: z and its gradients at the given inputs.

        Args:
            values: what :meth:`Graph.forward` takes: ``{leaf: number}`` (leaves not named keep their
                current ``.data``, so parameters updated in place are seen), a sequence of numbers in
                ``graph.leaves`` order or in ``graph.variables`` order, or None for the current values.

        Returns:
            ``(value, grads)``: z = u(n) as a float, and dz/dw for every w in ``wrt`` (a list of floats).

        Raises:
            ValueError, TypeError: bad ``values``, as :meth:`Graph.forward` raises them.
            DomainError: the same error Algorithm 6.1 or 6.2 raises on the graph, naming the node.
        """
        return self.evaluate(input_values(self.graph, values)[: self.graph.n_inputs])

    def evaluate(self, x: Sequence[float]) -> tuple[float, list[float]]:
        """The fast path of ``f(values)``: ``x`` holds u(1)..u(n_i) as floats, in ``graph.leaves`` order.

        No parsing: this is what a training loop calls once it has the input list (e.g.
        ``[v.data for v in graph.leaves]`` with an example's features written in).

        Args:
            x: the values of u(1)..u(n_i), floats, ``len(x) == graph.n_inputs``.

        Returns:
            ``(value, grads)`` as :meth:`__call__`.

        Raises:
            ValueError: if ``len(x)`` is not n_i, or an input is not finite (the engine's operations take
                finite numbers only).
            DomainError: as :meth:`__call__`.
        """
        value, grads, _ = self.evaluate_all(x)
        return value, grads

    def evaluate_all(self, x: Sequence[float]) -> tuple[float, list[float], list[float]]:
        """:meth:`evaluate`, also returning the values of the ``keep`` nodes: ``(value, grads, kept)``.

        Raises:
            ValueError, DomainError: as :meth:`evaluate`.
        """
        if len(x) != self.graph.n_inputs:
            raise ValueError(
                f"evaluate: got {len(x)} values for the {self.graph.n_inputs} inputs of {self.graph!r}"
            )
        try:
            value, grads, kept, check = self._fn(x)
            check += sum(grads)  # a non-finite value in B reaches a gradient (see the module's docstring)
            check += sum(x)  # a non-finite input may vanish in a value (relu(nan) would be 0): refuse it
        except (ArithmeticError, ValueError):  # an operation outside its domain
            check = math.nan
        # some value is inf or nan (or the check sum overflowed): the interpreter decides
        if check - check != 0.0:
            return self._interpreted(x)
        return value, grads, kept

    def _interpreted(self, x: Sequence[float]) -> tuple[float, list[float], list[float]]:
        """Algorithms 6.1 and 6.2 on the graph itself, with every node's ``.data`` restored afterwards.

        Raises exactly what they raise; returns their numbers when they succeed.
        """
        g = self.graph
        saved = [v.data for v in g.nodes]
        try:
            value = g.forward(list(x))
            kept = [v.data for v in self.keep]
            table, _ = run_algorithm_6_2(g)
        finally:
            with paused_gc():
                for v, d in zip(g.nodes, saved):
                    v.data = d
        index = g.index
        return value, [table[index[w]] if w in index else 0.0 for w in self.wrt], kept


def compile_graph(
    g: Graph, wrt: Value | Sequence[Value], *, keep: Sequence[Value] = (), part_size: int = 5000
) -> CompiledGraph:
    """Compile G and its gradients to one Python function: ``f(values) -> (z, grads)``.

    G's nodes u(1)..u(n) are written out from the operations' code templates (Algorithm 6.1), then
    the grad_table entries of G' from the operations' derivative rules (Algorithm 6.2 on the graph pruned
    as Algorithm 6.5 prunes it), fused into few statements (see the module's docstring).

    Args:
        g: the graph G (its output is z).
        wrt: the nodes to differentiate with respect to (usually leaves of G: variables, parameters), or
            one node. A node z does not depend on gets a gradient of 0.
        keep: nodes of G whose values :meth:`CompiledGraph.evaluate_all` also returns (e.g. a model's
            output inside a loss graph).
        part_size: the most operations one generated function computes (a statement computes up to
            :data:`~micrograph.compile_emitter.FUSE`); larger graphs are split into parts, each compiled on
            its own, which bounds the memory Python's compiler needs.

    Returns:
        A :class:`CompiledGraph` ``f``: ``f(values)`` returns ``(value, grads)``; ``f.source`` is the code.

    Raises:
        TypeError: if ``g`` is not a Graph, ``wrt`` is not a Value or a sequence of them, or ``part_size``
            is not an int.
        ValueError: if ``wrt`` is empty, ``part_size < 1`` or a ``keep`` node is not in G.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3, 6.5.5, 6.5.6.
    """
    start = time.perf_counter()
    check_graph(g, "compile_graph")
    if isinstance(wrt, Value):
        wrt = [wrt]
    if isinstance(part_size, bool) or not isinstance(part_size, int):
        raise TypeError(f"compile_graph: part_size must be an int, got {typed_repr(part_size)}")
    if part_size < 1:
        raise ValueError(f"compile_graph: part_size must be at least 1, got {part_size!r}")
    targets = as_values(wrt, "compile_graph", "wrt")
    kept = list(keep)
    for v in kept:
        if v not in g.index:
            raise ValueError(f"compile_graph: keep={v!r} is not a node of {g!r}")
    with paused_gc():
        source, fn, n_statements, parts = Writer(g, targets, kept).write(part_size)
    f = CompiledGraph(g, targets, kept, source, fn, n_statements, parts)
    f.compile_seconds = time.perf_counter() - start
    return f
