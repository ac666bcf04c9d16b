"""micrograph's own functions in each exercise's shape, to compare with in a REPL.

They are the engine's algorithms, not solutions: a check refuses them (the exercise asks for the algorithm
written out, and the process that runs a solution cannot reach micrograph's own).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from micrograph import Graph, backprop, build_grad, naive_grad, nn
from micrograph.forward import evaluate
from micrograph.ops import OPS

__all__ = ["REFERENCES"]


def _derivatives() -> Any:
    from lessons.exercises.judges.derivatives import DERIVATIVE_RULES

    def rule(opname: str, k: int) -> Callable[..., float]:
        op = OPS[opname]
        return lambda *args: float(op.local_derivative(k, args[:-1], args[-1]))  # (x[, y], out)

    return types.SimpleNamespace(**{f: rule(op, k) for f, op, k in DERIVATIVE_RULES})


def _mlp(net: Any) -> tuple[dict[int, Any], dict[int, Any]]:
    grads = nn.backward_mlp(net.model, net.x, net.y, loss="mse", l2=net.lam)  # Algorithm 6.4
    grad_W = {
        k: [[grads[w] for w in n.w] for n in layer.neurons] for k, layer in enumerate(net.model.layers, 1)
    }
    grad_b = {k: [grads[n.b] for n in layer.neurons] for k, layer in enumerate(net.model.layers, 1)}
    return grad_W, grad_b


REFERENCES: dict[str, Callable[[], Any]] = {
    "derivatives": _derivatives,
    "topo": lambda: types.SimpleNamespace(topological_order=lambda z: Graph(z).nodes),
    "forward": lambda: types.SimpleNamespace(forward=lambda G, x: evaluate(G, x)),  # Algorithm 6.1
    "backprop": lambda: types.SimpleNamespace(backprop=lambda G: backprop(G)),  # Algorithm 6.2
    "build_grad": lambda: types.SimpleNamespace(build_grad=build_grad),  # Algorithm 6.6
    "mlp_backward": lambda: types.SimpleNamespace(backward_mlp=_mlp),
    "naive": lambda: types.SimpleNamespace(naive_grad=naive_grad),  # equation 6.53
}
"""{exercise: a function returning the reference namespace}."""
