"""The spans of engine code that more than one lesson shows, with the values a step's live objects give.

Each function takes the numbers from the live objects a step already holds (a graph, a result the engine
returned) and returns the :class:`~lessons.engine_lines.EngineLines` to show: the lines are read from the
engine's source when shown, never copied here.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

from lessons.engine_lines import Bound, EngineLines
from micrograph import Graph, Value
from micrograph.store import CountedGradient

__all__ = [
    "backprop_call",
    "forward_call",
    "graph_order",
    "grad_call",
    "hessian_vector",
    "naive_sum",
    "pulled_term",
    "stored",
]


def graph_order(graph: Graph) -> EngineLines:
    """``Graph(z)``: the nodes in a topological order, the inputs u(1)..u(n_i) first."""
    return EngineLines(
        "micrograph.graph:Graph._build",
        "order = topological_order",
        "self.n_inputs: int = n_i",
        (
            Bound("order = topological_order", "len(order)", (len(graph.nodes),)),
            Bound("n_i = len(leaves)", "n_i", (graph.n_inputs,)),
        ),
        caption="Graph(z), the list u(1)..u(n), inputs first",
    )


def forward_call(u_n: float, caption: str = "") -> EngineLines:
    """``Graph.forward``: Algorithm 6.1 (:func:`micrograph.forward.evaluate`), committed to the nodes.

    Args:
        u_n: the value of u(n) the call returned (the live node's ``.data``).
    """
    return EngineLines(
        "micrograph.forward:forward",
        bound=(Bound("u = evaluate(graph, values, observe=observe)", "u[-1]", (u_n,)),),
        caption=caption,
    )


def backprop_call(evaluations: int, caption: str = "") -> EngineLines:
    """``Graph.backprop``: Algorithm 6.2's loop (:func:`run_algorithm_6_2`) wrapped in a GradTable."""
    return EngineLines(
        "micrograph.backprop:backprop",
        bound=(Bound("table, evaluations = run_algorithm_6_2(", "evaluations", (evaluations,)),),
        caption=caption,
    )


def pulled_term(caption: str) -> EngineLines:
    """Algorithm 6.2's term for one edge, on numbers: the rule's local derivative times grad_table[u(i)],
    added to the sum; shown by a step that reads a run an earlier step made (``reported``)."""
    return EngineLines(
        "micrograph.backprop:run_algorithm_6_2", "d = rule(u[a], u[i])", "total += term", caption=caption,
        reported=True,
    )  # fmt: skip


def stored(result: CountedGradient) -> EngineLines:
    """``store_grad``: equation 6.52, every forward value kept, then Algorithm 6.2 over G'."""
    return EngineLines(
        "micrograph.store:store_grad",
        "# Algorithm 6.1: every forward value, kept",
        'return CountedGradient("store"',
        (
            Bound("u = evaluate(graph, where=", "len(u)", (result.peak_values,)),
            Bound("grad_table, evaluations = run_algorithm_6_2(", "evaluations", (result.local_derivatives,)),
            Bound("value = grad_table", "value", (result.value,)),
        ),
        caption="equation 6.52",
    )


def naive_sum(result: CountedGradient, *, peak: bool = False) -> EngineLines:
    """``naive_grad``'s sum over the paths from z to w (equation 6.53), from its result on a chain.

    On a chain the one path is summed last, after the last local derivative: the total and the peak of
    values held (``peak``) are then the result's.
    """
    bound = [Bound("total += p", "total", (result.value,), last=True)]
    if peak:
        bound.append(Bound("total += p", "run.peak", (result.peak_values,), last=True))
    return EngineLines(
        "micrograph.naive:naive_grad",
        "stack: list[tuple[Value, float]]",
        "stack.extend(branches)",
        tuple(bound),
        caption="equation 6.53, every subexpression recomputed",
    )


def grad_call(G_prime: int, result: list[Value], names: dict[Value, str], caption: str = "") -> EngineLines:
    """``grad(z, T)``: Algorithm 6.5, G pruned to G', grad_table[z] <- 1, build_grad from z down.

    Args:
        G_prime: the number of nodes of G'.
        result: the gradient nodes it returned, in T's order.
        names: the names of those nodes, as the step's picture gives them.
    """
    return EngineLines(
        "micrograph.symbolic:grad",
        "with paused_gc():",
        "result = [grad_table[V] for V in targets]",
        (
            Bound("G_prime = G.prune(targets)", "len(G_prime)", (G_prime,)),
            Bound(
                "result = [grad_table[V] for V in targets]",
                "result",
                (list(result),),
                ("[" + ", ".join(names.get(v, "?") for v in result) + "]",),
            ),
        ),
        caption=caption,
    )


def hessian_vector(v: list[float], *more: Bound, caption: str = "") -> EngineLines:
    """``hessian_vector_product``: H v as the gradient of (grad z)^T v, equation 6.59."""
    return EngineLines(
        "micrograph.symbolic:hessian_vector_product",
        "g = grad(z, wrt)",
        "return grad(gv, wrt)",
        (Bound("g = grad(z, wrt)", "v", (list(v),)), *more),
        caption=caption or "equation 6.59",
    )
