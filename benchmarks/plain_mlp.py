"""The plain-float baseline: micrograd's demo step with the MLP's forward and backward derived by hand.

The same arithmetic as the graph engines (hinge loss ``max(0, 1 - y * score)`` averaged over the batch,
plus ``alpha * sum(p * p)`` over every parameter, SGD), on lists of floats, with no graph at all. It is
written to be a fair, reasonably efficient pure-Python baseline: dot products with ``map(operator.mul)``
inside ``sum``, gradient rows added with ``map(operator.add)``, list comprehensions.

Two versions: ``skip_zero=False`` does the same arithmetic as a graph's backward pass (every example's
backward pass, multiplied by the ReLU gates even where they are 0); ``skip_zero=True`` skips what is
exactly zero (the backward pass of an example whose hinge is inactive, the rows of inactive units), as
someone deriving it by hand might.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4, Algorithms 6.3 and 6.4.
"""

from __future__ import annotations

from itertools import pairwise
from operator import add, mul

__all__ = ["PlainMLP"]


class PlainMLP:
    """An MLP as lists of floats: ``W[k][m]`` is neuron m's weight row in layer k, ``B[k][m]`` its bias.

    Args:
        params: the parameters in micrograd's ``model.parameters()`` order (per layer, per neuron: w..., b).
        sizes: the layer widths including the input, e.g. ``[2, 16, 16, 1]``.
    """

    def __init__(self, params: list[float], sizes: list[int]) -> None:
        self.sizes = sizes
        self.W: list[list[list[float]]] = []
        self.B: list[list[float]] = []
        k = 0
        for nin, nout in pairwise(sizes):
            rows, biases = [], []
            for _ in range(nout):
                rows.append(list(params[k : k + nin]))
                biases.append(params[k + nin])
                k += nin + 1
            self.W.append(rows)
            self.B.append(biases)

    def parameters(self) -> list[float]:
        """The parameters in micrograd's order."""
        return [p for rows, bs in zip(self.W, self.B) for w, b in zip(rows, bs) for p in (*w, b)]

    def step(
        self, X: list[list[float]], Y: list[float], lr: float, alpha: float, skip_zero: bool = False
    ) -> tuple[float, int]:
        """One SGD step on J = mean_b max(0, 1 - y_b score_b) + alpha sum p^2; returns (J, correct)."""
        W, B = self.W, self.B
        last = len(W) - 1
        gW = [[[0.0] * len(w) for w in rows] for rows in W]
        gB = [[0.0] * len(bs) for bs in B]
        total = 0.0
        correct = 0
        for x, y in zip(X, Y):
            hs = [x]  # h(0) = x, h(1), ..., h(l)  (Algorithm 6.3)
            pre = []  # a(1), ..., a(l)
            h = x
            for k, (rows, bs) in enumerate(zip(W, B)):
                a = [sum(map(mul, w, h), b) for w, b in zip(rows, bs)]
                pre.append(a)
                h = a if k == last else [v if v > 0.0 else 0.0 for v in a]
                hs.append(h)
            score = h[0]
            correct += (y > 0) == (score > 0)
            margin = 1.0 + -y * score
            active = margin > 0.0
            if active:
                total += margin
            elif skip_zero:
                continue  # relu inactive: this example's gradient is zero
            g = [-y if active else 0.0]  # dL/da(l) (Algorithm 6.4, from the top layer down)
            for k in range(last, -1, -1):
                hin = hs[k]
                gWk, gBk = gW[k], gB[k]
                for m, gm in enumerate(g):
                    if gm != 0.0 or not skip_zero:
                        gWk[m] = list(map(add, gWk[m], [gm * v for v in hin]))
                        gBk[m] += gm
                if k:
                    dh = [0.0] * len(hin)
                    for gm, w in zip(g, W[k]):
                        if gm != 0.0 or not skip_zero:
                            dh = list(map(add, dh, [gm * v for v in w]))
                    g = [d * (1.0 if a > 0.0 else 0.0) for d, a in zip(dh, pre[k - 1])]
        n = len(X)
        inv = 1.0 / n
        reg = alpha * sum(p * p for p in self.parameters())
        two_alpha = 2.0 * alpha
        for k in range(len(W)):
            for m, w in enumerate(W[k]):
                gw = gW[k][m]
                W[k][m] = [p - lr * (gp * inv + two_alpha * p) for p, gp in zip(w, gw)]
                b = B[k][m]
                B[k][m] = b - lr * (gB[k][m] * inv + two_alpha * b)
        return total * inv + reg, correct
