"""The book's pseudo-code, typed once: Algorithms 6.1 to 6.6 of section 6.5, line by line.

The step-through pages (:mod:`viz.steps`), the lessons and the exercises quote these lines; nothing else in
micrograph types them again. Each line is the book's own words, with its mathematics written in plain text
(``u(i)`` for u^(i), ``n_i`` for the subscript, ``←``, ``∈``, ``Σ``, ``∂``). The one exception is
Algorithm 6.6, whose pseudo-code is not among the excerpts of the book micrograph quotes from: its lines
here are micrograph's summary of it (:attr:`Algorithm.quoted` is False, and every view labels it as
micrograph's words, not the book's).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5, Algorithms 6.1-6.6.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Algorithm",
    "ALGORITHM_6_1",
    "ALGORITHM_6_2",
    "ALGORITHM_6_3",
    "ALGORITHM_6_4",
    "ALGORITHM_6_5",
    "ALGORITHM_6_6",
    "ALGORITHMS",
    "PUSH_FORM",
    "STEP_PAGES",
    "named",
]


@dataclass(frozen=True)
class Algorithm:
    """One algorithm's pseudo-code.

    Attributes:
        number: ``"6.1"`` ... ``"6.6"``.
        name: what it does, in a few words (micrograph's heading, not a quotation).
        lines: the pseudo-code, one line per entry, indented as the book indents it.
        quoted: True when the lines are the book's own words; False for a summary in micrograph's words.
    """

    number: str
    name: str
    lines: tuple[str, ...]
    quoted: bool = True

    @property
    def text(self) -> str:
        """The lines joined by newlines."""
        return "\n".join(self.lines)

    def line(self, start: int, stop: int | None = None) -> str:
        """Lines ``start`` to ``stop`` (0-based, ``stop`` exclusive; one line when ``stop`` is None)."""
        return "\n".join(self.lines[start : start + 1 if stop is None else stop])

    def __str__(self) -> str:
        return self.text


ALGORITHM_6_1 = Algorithm(
    "6.1",
    "forward propagation",
    (
        "for i = 1, ..., n_i do",
        "    u(i) ← x_i",
        "end for",
        "for i = n_i + 1, ..., n do",
        "    A(i) ← {u(j) | j ∈ Pa(u(i))}",
        "    u(i) ← f(i)(A(i))",
        "end for",
        "return u(n)",
    ),
)
"""Algorithm 6.1: computing u(n) from the inputs u(1)..u(n_i), section 6.5.3."""

ALGORITHM_6_2 = Algorithm(
    "6.2",
    "back-propagation (simplified)",
    (
        "Run forward propagation (algorithm 6.1 for this example) to obtain the activations of the network",
        "Initialize grad_table, a data structure that will store the derivatives that have been computed.",
        "    The entry grad_table[u(i)] will store the computed value of ∂u(n)/∂u(i).",
        "grad_table[u(n)] ← 1",
        "for j = n − 1 down to 1 do",
        "    The next line computes ∂u(n)/∂u(j) = Σ_{i : j ∈ Pa(u(i))} ∂u(n)/∂u(i) ∂u(i)/∂u(j)",
        "    using stored values:",
        "    grad_table[u(j)] ← Σ_{i : j ∈ Pa(u(i))} grad_table[u(i)] ∂u(i)/∂u(j)",
        "end for",
        "return {grad_table[u(i)] | i = 1, ..., n_i}",
    ),
)
"""Algorithm 6.2: the grad_table filled from u(n) down to u(1), section 6.5.3."""

ALGORITHM_6_3 = Algorithm(
    "6.3",
    "forward propagation through an MLP and the cost",
    (
        "Require: Network depth, l",
        "Require: W(i), i ∈ {1, ..., l}, the weight matrices of the model",
        "Require: b(i), i ∈ {1, ..., l}, the bias parameters of the model",
        "Require: x, the input to process",
        "Require: y, the target output",
        "h(0) = x",
        "for k = 1, ..., l do",
        "    a(k) = b(k) + W(k) h(k−1)",
        "    h(k) = f(a(k))",
        "end for",
        "ŷ = h(l)",
        "J = L(ŷ, y) + λΩ(θ)",
    ),
)
"""Algorithm 6.3: a deep network's forward pass to the cost J, section 6.5.4."""

ALGORITHM_6_4 = Algorithm(
    "6.4",
    "backward computation through an MLP",
    (
        "After the forward computation, compute the gradient on the output layer:",
        "g ← ∇_ŷ J = ∇_ŷ L(ŷ, y)",
        "for k = l, l − 1, ..., 1 do",
        "    Convert the gradient on the layer's output into a gradient into the prenonlinearity activation "
        "(element-wise multiplication if f is element-wise):",
        "    g ← ∇_a(k) J = g ⊙ f′(a(k))",
        "    Compute gradients on weights and biases (including the regularization term, where needed):",
        "    ∇_b(k) J = g + λ∇_b(k) Ω(θ)",
        "    ∇_W(k) J = g h(k−1)ᵀ + λ∇_W(k) Ω(θ)",
        "    Propagate the gradients w.r.t. the next lower-level hidden layer's activations:",
        "    g ← ∇_h(k−1) J = W(k)ᵀ g",
        "end for",
    ),
)
"""Algorithm 6.4: the gradients of J layer by layer, from the output down, section 6.5.4."""

ALGORITHM_6_5 = Algorithm(
    "6.5",
    "back-propagation, the outermost skeleton",
    (
        "Require: T, the target set of variables whose gradients must be computed.",
        "Require: G, the computational graph",
        "Require: z, the variable to be differentiated",
        "Let G' be G pruned to contain only nodes that are ancestors of z and descendents of nodes in T.",
        "Initialize grad_table, a data structure associating tensors to their gradients",
        "grad_table[z] ← 1",
        "for V in T do",
        "    build_grad(V, G, G', grad_table)",
        "end for",
        "Return grad_table restricted to T",
    ),
)
"""Algorithm 6.5: prune G to G', then build_grad for each target, section 6.5.6."""

ALGORITHM_6_6 = Algorithm(
    "6.6",
    "build_grad(V, G, G', grad_table), in micrograph's words",
    (
        "if V is already in grad_table: return grad_table[V]",
        "for each consumer C of V in G' (get_consumers(V, G')):",
        "    op ← the operation that computes C (get_operation(C))",
        "    D ← build_grad(C, G, G', grad_table)",
        "    G(i) ← op.bprop(get_inputs(C, G'), V, D)",
        "G ← the sum of the G(i)",
        "grad_table[V] ← G; insert G and the operations creating it into the graph",
        "return G",
    ),
    quoted=False,
)
"""Algorithm 6.6, summarised in micrograph's words (its pseudo-code is not among the quoted excerpts)."""

ALGORITHMS: dict[str, Algorithm] = {
    a.number: a
    for a in (ALGORITHM_6_1, ALGORITHM_6_2, ALGORITHM_6_3, ALGORITHM_6_4, ALGORITHM_6_5, ALGORITHM_6_6)
}
"""Every algorithm by number: ``ALGORITHMS["6.2"]``."""

STEP_PAGES: dict[str, tuple[str, ...]] = {
    "6.2": ("6.1", "6.2"),
    "6.6": ("6.5", "6.6"),
    "all": ("6.1", "6.2", "6.5", "6.6"),
}
"""The step-through page's choices (``viz.steps(algorithm=...)``, ``micrograph steps --algorithm``): the
algorithms each one steps through, in order: symbol-to-number, symbol-to-symbol, or both."""


def named(numbers: tuple[str, ...]) -> str:
    """``"Algorithms 6.1 and 6.2"``, ``"Algorithm 6.5"``: algorithms by number, in words."""
    if len(numbers) == 1:
        return f"Algorithm {numbers[0]}"
    return f"Algorithms {', '.join(numbers[:-1])} and {numbers[-1]}"


PUSH_FORM = (
    "We can then compute the gradient with respect to each parent of z in the graph by multiplying the "
    "current gradient by the Jacobian of the operation that produced z. We continue multiplying by Jacobians "
    "traveling backwards through the graph in this way until we reach x. For any node that may be reached by "
    "going backwards from z through two or more paths, we simply sum the gradients arriving from different "
    "paths at that node."
)
"""Section 6.5.6's prose for back-propagation in the push form (each node adds into its parents)."""
