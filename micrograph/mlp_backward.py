"""Algorithm 6.4: the gradients of the cost J on every W(k) and b(k), layer by layer from the last.

:func:`backward_mlp` is the book's specialised back-propagation for a chain of fully-connected layers, on
the record of Algorithm 6.3 (:func:`micrograph.mlp_forward.forward_mlp`): the floats of the a(k) and h(k)
it kept, and what its cost J was defined with. It writes no derivative of its own: f'(a) is the
activation's rule in the operation table, and the gradients of the loss and of the regularizer are
Algorithm 6.2 run on their own small graphs.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4, Algorithm 6.4.
"""

from __future__ import annotations

from micrograph.engine import Value
from micrograph.graph import Graph
from micrograph.mlp import ACTIVATIONS, MLP
from micrograph.mlp_forward import MLPForward, _penalised, _penalty

__all__ = ["backward_mlp"]


def backward_mlp(forward: MLPForward) -> dict[Value, float]:
    """Algorithm 6.4: the gradients of J on every W(k) and b(k), layer by layer from k = l down to 1.

    The book begins "After the forward computation": ``forward`` is that computation's record (Algorithm
    6.3, :func:`~micrograph.mlp_forward.forward_mlp`), and the loop runs on floats from its stored a(k)
    and h(k):

        g <- grad_{y_hat} J = grad_{y_hat} L(y_hat, y)
        for k = l, l-1, ..., 1:
            g <- grad_{a(k)} J = g * f'(a(k))                   (element-wise)
            grad_{b(k)} J = g + lambda grad_{b(k)} Omega(theta)
            grad_{W(k)} J = g h(k-1)^T + lambda grad_{W(k)} Omega(theta)
            g <- grad_{h(k-1)} J = W(k)^T g

    This is the book's specialised back-propagation for a chain of fully-connected layers; it equals the
    generic Algorithm 6.2 on the graph of J (``Graph(forward.J).backprop()``) to rounding. J is the one
    ``forward`` was built with (``forward.cost``: the loss, the target, the penalty's lambdas). f'(a) comes
    from the engine's operation table (the activation op's derivative rule); grad_{y_hat} L is Algorithm
    6.2 run on the small graph of L alone (leaves holding y_hat's numbers), and lambda grad Omega likewise
    on the graph of lambda Omega alone (leaves holding the parameters' numbers: 2 lambda_2 w + lambda_1
    sign(w)), so no derivative is defined twice.

    Args:
        forward: the :class:`~micrograph.mlp_forward.MLPForward` that
            :func:`~micrograph.mlp_forward.forward_mlp` returned (or one of the examples of
            :func:`~micrograph.mlp_forward.forward_minibatch`, whose J is its L).

    Returns:
        {parameter: dJ/dparameter} for every parameter of ``forward.model`` (floats).

    Raises:
        TypeError: forward is not an MLPForward.
        ValueError: forward's h(0..l) or a(1..l) do not have its model's widths (a record built or
            changed by hand).

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4, Algorithm 6.4.
    """
    where = "backward_mlp(forward)"
    if not isinstance(forward, MLPForward):
        raise TypeError(f"{where}: forward must be forward_mlp's MLPForward, got {type(forward).__name__}")
    model, cost = forward.model, forward.cost
    widths = [model.nin, *model.nouts]
    h_widths, a_widths = [len(h_k) for h_k in forward.h], [len(a_k) for a_k in forward.a[1:]]
    if h_widths != widths or a_widths != widths[1:]:
        raise ValueError(
            f"{where}: forward's h(0..l) must have its model's widths {widths} and a(1..l) those of "
            f"h(1..l), got {h_widths} and {a_widths}"
        )
    # g <- grad_{y_hat} J: Algorithm 6.2 on L(y_hat, y) with y_hat as leaves
    y_leaves = [Value(v.data) for v in forward.y_hat]
    table = Graph(cost.loss.fn(y_leaves, cost.y)).backprop()
    g = [table.get(v, 0.0) for v in y_leaves]
    # lambda grad Omega, by Algorithm 6.2 on the regularizer (the table's rules, as for g)
    omega = _regularizer_gradient(model, cost.l2, cost.l1, cost.decay_biases)
    grads: dict[Value, float] = {}
    for k in range(len(model.layers), 0, -1):  # k = l, l-1, ..., 1
        layer = model.layers[k - 1]
        op = ACTIVATIONS[layer.neurons[0].activation]
        a_k = [v.data for v in forward.a[k]]
        h_k = [v.data for v in forward.h[k]]
        h_prev = [v.data for v in forward.h[k - 1]]
        # g <- g * f'(a(k)), f' the operation table's rule (x, out) -> df/dx
        if op is not None:
            for m in range(len(g)):
                g[m] *= op.local_derivative(0, (a_k[m],), h_k[m])
        for m, neuron in enumerate(layer.neurons):
            # grad_b(k) = g + lambda grad_b Omega
            grads[neuron.b] = g[m] + omega.get(neuron.b, 0.0)
            # grad_W(k) = g h(k-1)^T + lambda grad_W Omega: row m, column i
            for i, w in enumerate(neuron.w):
                grads[w] = g[m] * h_prev[i] + omega.get(w, 0.0)
        # g <- W(k)^T g: entry i is column i of W(k) times g (row m: neuron m)
        W = [[w.data for w in neuron.w] for neuron in layer.neurons]
        columns = range(len(h_prev))
        g = [sum(W[m][i] * g_m for m, g_m in enumerate(g)) for i in columns]
    return grads


def _regularizer_gradient(model: MLP, lam_l2: float, lam_l1: float, decay_biases: bool) -> dict[Value, float]:
    """{p: d(lambda Omega)/dp} for each penalised parameter p, by Algorithm 6.2 on lambda Omega.

    lambda Omega is built on leaves holding the parameters' values, as the loss is built on leaves holding
    y_hat, so the derivative is the operation table's rules (mul's, for w * w and w * sign(w)): 2 lambda_2 w
    + lambda_1 sign(w), never written out here.
    """
    params = _penalised(model, decay_biases) if (lam_l2 or lam_l1) else []
    leaves = [Value(p.data) for p in params]
    term = _penalty(leaves, lam_l2, lam_l1)
    if term is None:
        return {}
    table = Graph(term).backprop()
    return {p: table.get(leaf, 0.0) for p, leaf in zip(params, leaves, strict=True)}
