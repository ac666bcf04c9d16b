"""Loss functions L(y_hat, y) and regularizers Omega(theta), built from Value operations.

Every function here returns a :class:`~micrograph.engine.Value` made of the engine's operations, so the
engine differentiates it like any other graph: Algorithm 6.2 (``Graph(J).backprop()``, ``J.backward()``) or
Algorithm 6.5 (``grad(J, T)``). Nothing here defines a derivative.

* :func:`mse`: mean squared error.
* :func:`hinge`: micrograd's "max-margin" loss ``(1 + -y * score).relu()``.
* :func:`cross_entropy`: softmax cross-entropy of logits, through a stable log-sum-exp.
* :func:`binary_cross_entropy`: logistic loss of one logit, stable for any logit.
* :func:`l2`, :func:`l1`: the penalties Omega(theta) weighted by lambda in Algorithm 6.3.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.2.2 (output units and
cost functions), 6.5.4 (Algorithm 6.3) and 7.1 (parameter norm penalties).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from micrograph.engine import Value, as_value, sum_nodes
from micrograph.errors import typed_repr

__all__ = ["binary_cross_entropy", "cross_entropy", "hinge", "l1", "l2", "mse"]


def _as_outputs(pred: Any, where: str) -> list[Value]:
    """A model output (one Value, a number, or a sequence of them) as a non-empty list of Values."""
    if isinstance(pred, Value) or (isinstance(pred, numbers.Real) and not isinstance(pred, bool)):
        return [as_value(pred)]
    if isinstance(pred, (str, bytes)) or not isinstance(pred, Iterable):
        raise TypeError(f"{where}: expected a Value or a sequence of Values, got {typed_repr(pred)}")
    out = [as_value(p) for p in pred]
    if not out:
        raise ValueError(f"{where}: the prediction is empty")
    return out


def _one_output(pred: Any, where: str) -> Value:
    outs = _as_outputs(pred, where)
    if len(outs) != 1:
        raise ValueError(f"{where}: needs one output (a score or a logit), got {len(outs)} outputs")
    return outs[0]


def _real(x: Any, where: str) -> float:
    if isinstance(x, Value):
        return x.data
    if isinstance(x, numbers.Real) and not isinstance(x, bool):
        return float(x)
    raise TypeError(f"{where}: expected a real number, got {typed_repr(x)}")


def mse(pred: Value | Sequence[Value], target: float | Sequence[float]) -> Value:
    """Mean squared error (1/k) sum_i (y_hat_i - y_i)^2 over the k outputs of one example.

    Args:
        pred: y_hat, one Value or k Values (a model's output).
        target: y, one number or k numbers.

    Returns:
        A Value; for k = 1 it is the node ``(y_hat - y) ** 2``.

    Raises:
        ValueError: if the prediction is empty or ``target`` has a different length.
        TypeError: if a target is not a real number.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.2.1.1 (eq. 6.14).
    """
    outs = _as_outputs(pred, "mse(pred, target)")
    if isinstance(target, Iterable) and not isinstance(target, (str, bytes)):
        ys = [_real(t, "mse(pred, target)") for t in target]
    else:
        ys = [_real(target, "mse(pred, target)")]
    if len(ys) != len(outs):
        raise ValueError(
            f"mse(pred, target): target has {len(ys)} components, the prediction has {len(outs)}"
        )
    terms = [(p - t) ** 2 for p, t in zip(outs, ys, strict=True)]
    return terms[0] if len(terms) == 1 else sum_nodes(terms) * (1.0 / len(terms))


def _sign_label(target: Any, where: str) -> float:
    """A binary class as -1.0 / +1.0: accepts -1, +1 (micrograd's demo) and 0, 1 (0 is read as -1)."""
    y = _real(target, where)
    if y not in (-1.0, 0.0, 1.0):
        raise ValueError(f"{where}: target must be a binary class 0/1 or -1/+1, got {target!r}")
    return 1.0 if y > 0 else -1.0


def hinge(score: Value | Sequence[Value], target: float) -> Value:
    """micrograd's "max-margin" (SVM hinge) loss max(0, 1 - y * score) for one example.

    Built exactly as micrograd's demo writes it, ``(1 + -y * score).relu()``, so the graph has the same
    shape (a constant -y, a product, a sum with 1, a ReLU).

    Args:
        score: the model's single output (a Value, or a list holding one Value).
        target: the class, +1 / -1 as in micrograd's demo, or 1 / 0 (0 is read as -1).

    Returns:
        A Value >= 0; zero when the example is on the right side with margin 1.

    Raises:
        ValueError: if the score is not a single output or the target is not a binary class.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 5.7.2 (support vector
    machines); Karpathy, micrograd ``demo.ipynb``.
    """
    s = _one_output(score, "hinge(score, target)")
    y = _sign_label(target, "hinge(score, target)")
    return (1 + -y * s).relu()


def cross_entropy(logits: Sequence[Value], target: int) -> Value:
    """Softmax cross-entropy -log softmax(z)_y = log sum_i exp(z_i) - z_y, computed stably.

    The log-sum-exp is shifted by m = max_i z_i, taken as a constant (a number, not a node):
    log sum_i exp(z_i) = m + log sum_i exp(z_i - m). Every exponent is <= 0, so logits of 1000 do not
    overflow. The gradient is unchanged because d/dz_i of the shifted form is still softmax(z)_i - [i = y]
    (m's own dependence on z cancels out, so treating it as a constant is exact).

    Args:
        logits: z, k >= 1 Values (or numbers): the unnormalised log-probabilities of the k classes.
        target: y, the class index, an integer in 0..k-1.

    Returns:
        A Value >= 0 (up to rounding).

    Raises:
        ValueError: if the logits are empty or the target is not an integer in range.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.2.2.3 (softmax units,
    eq. 6.30-6.33) and section 4.1 (the log-sum-exp stabilisation).
    """
    z = _as_outputs(logits, "cross_entropy(logits, target)")
    if not isinstance(target, numbers.Integral) or isinstance(target, bool) or not 0 <= int(target) < len(z):
        raise ValueError(
            f"cross_entropy(logits, target): target must be a class index in 0..{len(z) - 1}, got {target!r}"
        )
    m = max(v.data for v in z)  # a constant: the log-sum-exp shift
    log_sum_exp = sum_nodes([(v - m).exp() for v in z]).log() + m
    return log_sum_exp - z[int(target)]


def binary_cross_entropy(logit: Value | Sequence[Value], target: float) -> Value:
    """Logistic loss -[y log sigma(z) + (1 - y) log(1 - sigma(z))] = softplus(z) - y z, from a logit z.

    Built stably as ``log(1 + exp(z)) - y z`` for z <= 0 and ``log(1 + exp(-z)) + (1 - y) z`` for z > 0
    (the same function): exp only sees a non-positive number, so z = +-1000 does not overflow, and no
    large terms cancel. Both forms have the derivative sigma(z) - y.

    Args:
        logit: z, the model's single output (a Value, or a list holding one).
        target: y, the probability of class 1: 0 or 1 for a label (any number in [0, 1] is accepted).

    Returns:
        A Value >= 0 for targets 0 and 1.

    Raises:
        ValueError: if the logit is not a single output or the target is outside [0, 1].

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.2.2.2 (sigmoid units,
    eq. 6.23 and the softplus function of section 3.10).
    """
    z = _one_output(logit, "binary_cross_entropy(logit, target)")
    y = _real(target, "binary_cross_entropy(logit, target)")
    if not 0.0 <= y <= 1.0:
        raise ValueError(f"binary_cross_entropy(logit, target): target must be in [0, 1], got {target!r}")
    # softplus(z) - y z, arranged so that no large term cancels: for z > 0 it is log(1 + exp(-z)) + (1 - y) z
    if z.data > 0:
        J = (1 + (-z).exp()).log()
        return J + (1.0 - y) * z if y != 1.0 else J
    J = (1 + z.exp()).log()
    return J - y * z if y != 0.0 else J


def _params(params: Iterable[Value], where: str) -> list[Value]:
    ps = list(params)
    for k, p in enumerate(ps):
        if not isinstance(p, Value):
            raise TypeError(f"{where}: params[{k}] must be a Value, got {typed_repr(p)}")
    if not ps:
        raise ValueError(f"{where}: no parameters given")
    return ps


def l2(params: Iterable[Value]) -> Value:
    """The L2 penalty Omega(theta) = sum_i w_i^2 (weight decay), built as ``sum(p * p for p in params)``.

    The same expression as micrograd's demo (``alpha * sum((p*p for p in model.parameters()))``). The
    book's section 7.1.1 writes Omega = (1/2) ||w||^2; the 1/2 only rescales lambda. Which parameters are
    penalised is the caller's choice: :func:`micrograph.nn.train` and Algorithm 6.3
    (:func:`micrograph.nn.forward_mlp`) pass the weights and not the biases by default.

    Args:
        params: the parameters to penalise, Values (at least one).

    Returns:
        A Value; multiply by lambda to get the term lambda Omega(theta) of Algorithm 6.3.

    Raises:
        ValueError: if ``params`` is empty. TypeError: if one is not a Value.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 7.1.1, Algorithm 6.3.
    """
    ps = _params(params, "l2(params)")
    return sum_nodes([p * p for p in ps])


def l1(params: Iterable[Value]) -> Value:
    """The L1 penalty Omega(theta) = sum_i |w_i|.

    |w| is built as ``w * sign(w)`` with sign(w) a constant (-1, 0 or +1 from w's current value): the
    value is exactly |w| and the derivative is sign(w), taking 0 at w = 0 (the subgradient the book uses
    in eq. 7.20).

    Args:
        params: the parameters to penalise, Values (at least one).

    Returns:
        A Value; multiply by lambda for the term lambda Omega(theta) of Algorithm 6.3.

    Raises:
        ValueError: if ``params`` is empty. TypeError: if one is not a Value.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 7.1.2, Algorithm 6.3.
    """
    ps = _params(params, "l1(params)")
    return sum_nodes([p * (1.0 if p.data > 0 else -1.0 if p.data < 0 else 0.0) for p in ps])


# -------------------------------------------------------------------------------------------------------
# Losses by name: how each reads its target and decides whether a prediction is right.


@dataclass(frozen=True)
class LossSpec:
    """A loss by name: its function, whether it needs one output, how it reads a target and a prediction."""

    name: str
    fn: Callable[[list[Value], Any], Value]
    one_output: bool

    def check_target(self, y: Any, nout: int, where: str) -> Any:
        """The target as the loss takes it; ValueError naming ``where`` if it is out of range."""
        if self.name == "cross_entropy":
            if not isinstance(y, numbers.Integral) or isinstance(y, bool) or not 0 <= int(y) < nout:
                raise ValueError(
                    f"{where}: labels must be class indices 0..{nout - 1} for {nout} outputs, got {y!r}"
                )
            return int(y)
        if self.name in ("hinge", "binary_cross_entropy"):
            allowed = (0.0, 1.0, -1.0) if self.name == "hinge" else (0.0, 1.0)
            if not isinstance(y, numbers.Real) or isinstance(y, bool) or float(y) not in allowed:
                raise ValueError(
                    f"{where}: labels for {self.name} must be in {sorted(set(allowed))}, got {y!r}"
                )
            return float(y)
        # mse: a number per output, or a class index one-hot encoded when there are several outputs
        if nout > 1 and isinstance(y, numbers.Integral) and not isinstance(y, bool):
            if not 0 <= int(y) < nout:
                raise ValueError(
                    f"{where}: labels must be class indices 0..{nout - 1} for {nout} outputs, got {y!r}"
                )
            return [1.0 if i == int(y) else 0.0 for i in range(nout)]
        ys = list(y) if isinstance(y, Iterable) and not isinstance(y, (str, bytes)) else [y]
        if len(ys) != nout or not all(isinstance(t, numbers.Real) and math.isfinite(t) for t in ys):
            raise ValueError(f"{where}: mse targets must be {nout} finite number(s) per example, got {y!r}")
        return [float(t) for t in ys]

    def correct(self, out: list[float], y: Any) -> bool:
        """Whether the prediction is right: argmax for several outputs, the sign of a single score."""
        if len(out) > 1:
            guess = max(range(len(out)), key=out.__getitem__)
            truth = y if isinstance(y, int) else max(range(len(y)), key=y.__getitem__)
            return bool(guess == truth)
        if self.name == "mse":  # a regression-style output against an integer label: nearest label
            target = y[0] if isinstance(y, list) else y
            return abs(out[0] - target) < 0.5
        return (out[0] > 0) == (y > 0)


LOSSES: dict[str, LossSpec] = {
    "cross_entropy": LossSpec("cross_entropy", cross_entropy, one_output=False),
    "mse": LossSpec("mse", mse, one_output=False),
    "hinge": LossSpec("hinge", hinge, one_output=True),
    "binary_cross_entropy": LossSpec("binary_cross_entropy", binary_cross_entropy, one_output=True),
}
"""The losses :func:`train`, :func:`forward_mlp` and :func:`backward_mlp` know by name."""


def loss_spec(loss: Any, nout: int, where: str) -> LossSpec:
    """The loss named ``loss`` for a model with ``nout`` outputs.

    Raises:
        ValueError: an unknown name, or a one-output loss (hinge, binary cross-entropy) for ``nout`` > 1.
    """
    if loss not in LOSSES:
        raise ValueError(f"{where}: loss must be one of {sorted(LOSSES)}, got {loss!r}")
    spec = LOSSES[loss]
    if spec.one_output and nout != 1:
        raise ValueError(f"{where}: loss {loss!r} needs a model with one output, this one has {nout}")
    return spec
