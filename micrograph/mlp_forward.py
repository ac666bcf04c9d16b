"""Algorithm 6.3: forward propagation through an MLP to the cost J = L(y_hat, y) + lambda Omega(theta).

:func:`forward_mlp` runs the book's loop over the layers of a :class:`micrograph.mlp.MLP`, keeping a(k)
and h(k) for Algorithm 6.4 (:mod:`micrograph.mlp_backward`); the cost's regularizer lambda Omega(theta)
(L2 and L1 penalties over the weights, the biases too if asked) is built here, and training
(:mod:`micrograph.train`) builds its cost with the same functions and checks.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4, Algorithm 6.3; section 7.1
(the penalties).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from micrograph.engine import Value, sum_nodes
from micrograph.errors import short_repr, typed_repr
from micrograph.losses import LossSpec, l1, l2, loss_spec
from micrograph.mlp import MLP, tag, weights

__all__ = [
    "CostDefinition",
    "MLPForward",
    "MinibatchForward",
    "forward_minibatch",
    "forward_mlp",
    "model_loss_spec",
]


def model_loss_spec(loss: Any, model: MLP, where: str) -> LossSpec:
    """The loss named ``loss`` for ``model``, an :class:`MLP` (see :func:`micrograph.losses.loss_spec`).

    Raises:
        TypeError: if model is not an MLP. ValueError: as :func:`~micrograph.losses.loss_spec`.
    """
    if not isinstance(model, MLP):
        raise TypeError(f"{where}: model must be an MLP, got {type(model).__name__}")
    return loss_spec(loss, model.nouts[-1], where)


def _check_lambda(value: Any, name: str, where: str) -> float:
    if (
        not isinstance(value, numbers.Real)
        or isinstance(value, bool)
        or not (math.isfinite(value) and float(value) >= 0)
    ):
        raise ValueError(f"{where}: {name} must be a finite number >= 0, got {value!r}")
    return float(value)


def _check_features(x: Any, nin: int, where: str) -> list[float]:
    if isinstance(x, (str, bytes)) or not isinstance(x, Iterable):
        raise ValueError(f"{where}: an example must be a sequence of {nin} numbers, got {typed_repr(x)}")
    row = list(x)
    if len(row) != nin:
        raise ValueError(
            f"{where}: the model takes {nin} features per example, got {len(row)}: {short_repr(row)}"
        )
    out = []
    for v in row:
        if not isinstance(v, numbers.Real) or isinstance(v, bool) or not math.isfinite(v):
            raise ValueError(
                f"{where}: features must be finite numbers, got {short_repr(v)} in {short_repr(row)}"
            )
        out.append(float(v))
    return out


def _penalised(model: MLP, decay_biases: bool) -> list[Value]:
    return model.parameters() if decay_biases else weights(model)


def _regularizer(model: MLP, lam_l2: float, lam_l1: float, decay_biases: bool) -> Value | None:
    """lambda Omega(theta) = lambda_2 sum w^2 + lambda_1 sum |w| over the penalised parameters, or None."""
    params = _penalised(model, decay_biases) if (lam_l2 or lam_l1) else []
    return _penalty(params, lam_l2, lam_l1)


def _penalty(params: list[Value], lam_l2: float, lam_l1: float) -> Value | None:
    """lambda_2 l2(params) + lambda_1 l1(params), the terms whose lambda is not 0; None if both are.

    The node is tagged as the regularizer (``NodeMeta.role``), so a view draws it as one part of the cost.
    """
    term: Value | None = None
    if lam_l2:
        term = lam_l2 * l2(params)
    if lam_l1:
        t1 = lam_l1 * l1(params)
        term = t1 if term is None else term + t1
    return None if term is None else tag(term, "regularizer")


@dataclass(frozen=True)
class CostDefinition:
    """What the cost J = L(y_hat, y) + lambda Omega(theta) of one forward pass is defined with.

    Attributes:
        loss: the loss L (its :class:`~micrograph.losses.LossSpec`).
        y: the target, as the loss takes it (checked by :meth:`~micrograph.losses.LossSpec.check_target`).
        l2: lambda for the L2 penalty sum w^2 (>= 0). l1: lambda for the L1 penalty sum |w| (>= 0); both 0:
            J has no regularizer (J = L).
        decay_biases: whether Omega penalises the biases too.
    """

    loss: LossSpec
    y: Any
    l2: float = 0.0
    l1: float = 0.0
    decay_biases: bool = False


@dataclass
class MLPForward:
    """What Algorithm 6.3 computes and keeps for Algorithm 6.4.

    Attributes:
        model: the MLP the pass ran through (its W(k) and b(k)).
        a: a[k] for k = 1..l, the pre-activations a(k) = b(k) + W(k) h(k-1) (lists of Values; a[0] is []).
        h: h[k] for k = 0..l: h(0) = x (leaves labelled x1..), h(k) = f(a(k)) (lists of Values).
        y_hat: h(l), the network's output (a list of Values).
        loss: L(y_hat, y), a Value.
        penalty: lambda Omega(theta), a Value, or None without a regularizer.
        J: the cost J = L(y_hat, y) + lambda Omega(theta), a Value.
        cost: what J is defined with: the loss, the checked target, the penalty's lambdas and whether
            the biases are penalised (a :class:`CostDefinition`).
    """

    model: MLP
    a: list[list[Value]]
    h: list[list[Value]]
    y_hat: list[Value]
    loss: Value
    penalty: Value | None
    J: Value
    cost: CostDefinition


def forward_mlp(
    model: MLP,
    x: Sequence[float],
    y: Any,
    *,
    loss: str = "cross_entropy",
    l2: float = 0.0,
    l1: float = 0.0,
    decay_biases: bool = False,
) -> MLPForward:
    """Algorithm 6.3: forward propagation through the MLP to the cost J, keeping a(k) and h(k).

        h(0) = x
        for k = 1, ..., l:
            a(k) = b(k) + W(k) h(k-1)
            h(k) = f(a(k))
        y_hat = h(l)
        J = L(y_hat, y) + lambda Omega(theta)

    The nodes are those ``model(x)`` builds (micrograd's graph), labelled with the book's names.

    Args:
        model: the MLP (its last layer is linear, so f is the identity there).
        x: one example, nin numbers.
        y: its target: a class index (cross_entropy, mse with several outputs), 0/1 (binary_cross_entropy),
            0/1 or -1/+1 (hinge), or nout numbers (mse).
        loss: ``"cross_entropy"``, ``"mse"``, ``"hinge"`` or ``"binary_cross_entropy"``.
        l2: lambda for the L2 penalty sum w^2 (>= 0). l1: lambda for the L1 penalty sum |w| (>= 0).
        decay_biases: penalise the biases too (default False: weights only, as the book's section 7.1).

    Returns:
        An :class:`MLPForward`, which holds all :func:`~micrograph.mlp_backward.backward_mlp` needs.

    Raises:
        TypeError: model is not an MLP.
        ValueError: wrong feature count, a target out of range, an unknown loss, a negative lambda.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4, Algorithm 6.3.
    """
    where = "forward_mlp(model, x, y)"
    spec = model_loss_spec(loss, model, where)
    lam2, lam1 = _check_lambda(l2, "l2", where), _check_lambda(l1, "l1", where)
    y = spec.check_target(y, model.nouts[-1], where)  # the target as the loss takes it
    a, h, L = _example(model, x, y, spec, where)
    penalty = _regularizer(model, lam2, lam1, decay_biases)
    # J = L(y_hat, y) + lambda Omega(theta)
    J = L if penalty is None else tag(L + penalty, "cost")
    J.label = "J"
    cost = CostDefinition(spec, y, lam2, lam1, bool(decay_biases))
    return MLPForward(model=model, a=a, h=h, y_hat=h[-1], loss=L, penalty=penalty, J=J, cost=cost)


def _example(
    model: MLP, x: Any, target: Any, spec: LossSpec, where: str, row: int | None = None
) -> tuple[list[list[Value]], list[list[Value]], Value]:
    """Algorithm 6.3's loop on one example and its loss: a(k), h(k) (labelled and tagged) and L.

    ``target`` is the example's target as the loss takes it (:meth:`LossSpec.check_target`'s). The inputs
    are labelled x1, x2, ..., or X[row,0], X[row,1], ... for row ``row`` of a minibatch X.
    """
    xs = _check_features(x, model.nin, where)
    names = [f"x{j + 1}" if row is None else f"X[{row},{j}]" for j in range(len(xs))]
    x_leaves = [Value(v, label=names[j]) for j, v in enumerate(xs)]
    for j, x_j in enumerate(x_leaves):
        tag(x_j, "input", 0, j)
    h: list[list[Value]] = [x_leaves]  # h(0) = x
    a: list[list[Value]] = [[]]
    for k, layer in enumerate(model.layers, start=1):
        # a(k) = b(k) + W(k) h(k-1)
        a_k = [n.preactivation(h[k - 1]) for n in layer.neurons]
        # h(k) = f(a(k))
        h_k = [n.activate(a) for n, a in zip(layer.neurons, a_k, strict=True)]
        for m, (a_km, h_km) in enumerate(zip(a_k, h_k, strict=True)):
            a_km.label = f"a{k}[{m}]"
            if h_km is not a_km:
                h_km.label = f"h{k}[{m}]"
        a.append(a_k)
        h.append(h_k)
    # L(y_hat, y), y_hat = h(l)
    L = tag(spec.fn(h[-1], target), "loss")
    L.label = "L"
    return a, h, L


@dataclass
class MinibatchForward:
    """Algorithm 6.3 on a minibatch: each example's forward pass, the mean loss, the regularizer, J.

    Attributes:
        examples: one :class:`MLPForward` per example, in order (each without the regularizer: its J is
            its L, and its cost is defined by the loss and its target alone).
        loss: the mean loss (1/B) sum_b L(y_hat_b, y_b), a Value.
        penalty: lambda Omega(theta), a Value, or None without a regularizer.
        J: the cost J = (1/B) sum_b L(y_hat_b, y_b) + lambda Omega(theta), a Value.
    """

    examples: list[MLPForward]
    loss: Value
    penalty: Value | None
    J: Value


def forward_minibatch(
    model: MLP,
    X: Sequence[Sequence[float]],
    Y: Sequence[Any],
    *,
    loss: str = "cross_entropy",
    l2: float = 0.0,
    l1: float = 0.0,
    decay_biases: bool = False,
) -> MinibatchForward:
    """A minibatch's cost as one graph: Algorithm 6.3 on each example, then the mean loss and lambda Omega.

    J = (1/B) sum_b L(y_hat_b, y_b) + lambda Omega(theta): the cost that training back-propagates
    (section 6.5.7 draws this graph for a one-hidden-layer network with weight decay), built as
    :func:`micrograph.nn.train` builds it. Example b's inputs are leaves labelled X[b,0], X[b,1], ...; every
    node of the layers, the losses, the regularizer and J carries its role (``NodeMeta.role``).

    Args:
        model: the MLP.
        X: B >= 1 examples of nin numbers. Y: their B targets (as :func:`forward_mlp`'s y).
        loss, l2, l1, decay_biases: as :func:`forward_mlp`.

    Returns:
        A :class:`MinibatchForward`.

    Raises:
        ValueError: no examples, X and Y of different lengths, or as :func:`forward_mlp`.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4 (Algorithm 6.3) and
    section 6.5.7 (the minibatch cost with weight decay).
    """
    where = "forward_minibatch(model, X, Y)"
    spec = model_loss_spec(loss, model, where)
    lam2, lam1 = _check_lambda(l2, "l2", where), _check_lambda(l1, "l1", where)
    if len(X) != len(Y) or not len(X):
        raise ValueError(
            f"{where}: X and Y must hold the same number (>= 1) of examples, got {len(X)} and {len(Y)}"
        )
    examples = []
    for row, (x, y) in enumerate(zip(X, Y, strict=True)):
        target = spec.check_target(y, model.nouts[-1], where)
        a, h, L = _example(model, x, target, spec, where, row)
        # example b's J is its L: no regularizer, so its cost is L(y_hat_b, y_b) alone
        cost = CostDefinition(spec, target)
        examples.append(MLPForward(model=model, a=a, h=h, y_hat=h[-1], loss=L, penalty=None, J=L, cost=cost))
    mean = tag(sum_nodes([e.loss for e in examples]) * (1.0 / len(examples)), "loss")  # (1/B) sum_b L_b
    mean.label = "mean L"
    penalty = _regularizer(model, lam2, lam1, decay_biases)
    J = mean if penalty is None else tag(mean + penalty, "cost")
    J.label = "J"
    return MinibatchForward(examples=examples, loss=mean, penalty=penalty, J=J)
