"""Neural networks on scalar Values: micrograd's Module, Neuron, Layer, MLP; Algorithms 6.3 and 6.4; SGD.

The classes keep micrograd's signatures and behaviour, so micrograd code runs by changing the import:
``Neuron(nin, nonlin=True)``, ``Layer(nin, nout, **kw)``, ``MLP(nin, nouts)`` (ReLU on every layer but the
last), weights drawn from ``random.uniform(-1, 1)`` in micrograd's order (neuron by neuron, weight by
weight) and biases 0, ``parameters()``, ``zero_grad()``, and the same ``repr``. A neuron's forward pass
builds micrograd's graph, ``sum((wi * xi for wi, xi in zip(w, x)), b)``, then the activation.

Added: an ``activation`` choice (relu, tanh, sigmoid, identity), an ``init`` choice (micrograd's uniform,
Glorot and He uniform), ``seed=`` or ``rng=`` for reproducible weights; the book's Algorithm 6.3
(:func:`forward_mlp`, keeping a(k) and h(k)) and Algorithm 6.4 (:func:`backward_mlp`, the layer-by-layer
backward pass on floats), and minibatch SGD with momentum (:func:`train`).

Losses and regularizers live in :mod:`micrograph.losses` and are re-exported here.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.1-6.5 (Algorithms 6.3, 6.4)
and 8.3 (Algorithms 8.1, 8.2).
"""

from __future__ import annotations

import math
import numbers
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from micrograph.engine import Value
from micrograph.errors import DomainError
from micrograph.graph import Graph
from micrograph.losses import binary_cross_entropy, cross_entropy, hinge, l1, l2, mse
from micrograph.ops import RELU, SIGMOID, TANH, Op

__all__ = [
    "ACTIVATIONS",
    "INITS",
    "LOSSES",
    "MLP",
    "History",
    "Layer",
    "MLPForward",
    "Module",
    "Neuron",
    "TrainingError",
    "accuracy",
    "backward_mlp",
    "binary_cross_entropy",
    "cross_entropy",
    "forward_mlp",
    "hinge",
    "l1",
    "l2",
    "mse",
    "predict",
    "train",
    "weights",
]

Number = Union[int, float]

ACTIVATIONS: dict[str, Op | None] = {"relu": RELU, "tanh": TANH, "sigmoid": SIGMOID, "identity": None}
"""The activation functions f by name: the operation of the engine's table (None for the identity).

Algorithm 6.4 takes f'(a) from the same table (``op.derivs[0]``): no second definition of a derivative.
"""

_APPLY: dict[str, Callable[[Value], Value]] = {
    "relu": Value.relu,
    "tanh": Value.tanh,
    "sigmoid": Value.sigmoid,
}
_REPR = {"relu": "ReLU", "tanh": "Tanh", "sigmoid": "Sigmoid", "identity": "Linear"}

INITS = ("uniform", "glorot", "he")
"""Weight initialisations: micrograd's U(-1, 1); Glorot (Xavier) uniform U(-sqrt(6/(nin+nout)), ...);
He uniform U(-sqrt(6/nin), ...)."""


def _check_count(value: Any, name: str, where: str) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{where}: {name} must be a positive integer, got {value!r}")
    return int(value)


def _check_activation(activation: Any, where: str) -> str:
    if activation not in ACTIVATIONS:
        raise ValueError(f"{where}: activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
    return str(activation)


def _make_rng(seed: Any, rng: Any, where: str) -> Any:
    """The source of random numbers: ``rng``, a new ``random.Random(seed)``, or the ``random`` module."""
    if seed is not None and rng is not None:
        raise ValueError(f"{where}: give seed= or rng=, not both")
    if rng is not None:
        if not callable(getattr(rng, "uniform", None)):
            raise TypeError(f"{where}: rng must be a random.Random, got {type(rng).__name__} {rng!r}")
        return rng
    if seed is not None:
        return random.Random(seed)
    return random  # micrograd's behaviour: the global generator, so random.seed(...) reproduces micrograd


class Module:
    """Something with parameters: micrograd's base class.

    Reference: Karpathy, micrograd ``nn.py``.
    """

    def zero_grad(self) -> None:
        """Set every parameter's ``.grad`` to 0 (``backward()`` accumulates, as in micrograd and PyTorch)."""
        for p in self.parameters():
            p.grad = 0.0

    def parameters(self) -> list[Value]:
        """Every trainable Value in micrograd's order: layer by layer, neuron by neuron, w then b."""
        return []


class Neuron(Module):
    """One unit h = f(b + sum_i w_i x_i): micrograd's Neuron with a choice of activation and initialisation.

    Args:
        nin: the number of inputs (weights), >= 1.
        nonlin: micrograd's switch: True for a ReLU, False for a linear unit. Used when ``activation`` is
            None; an explicit ``activation`` wins (and ``nonlin`` becomes ``activation != "identity"``).
        activation: ``"relu"``, ``"tanh"``, ``"sigmoid"`` or ``"identity"``, or None for ``nonlin``'s.
        init: ``"uniform"`` (micrograd's U(-1, 1)), ``"glorot"`` or ``"he"`` (uniform; see :data:`INITS`).
        fan_out: the layer's width, used only by Glorot's limit sqrt(6 / (nin + fan_out)); 1 by default.
        seed: a seed for a private ``random.Random`` (exclusive with ``rng``).
        rng: a ``random.Random`` to draw from. Without seed and rng the global ``random.uniform`` is used,
            exactly as micrograd does: ``random.seed(s)`` then micrograd's code gets micrograd's weights.

    Attributes:
        w (list[Value]): the weights w_1..w_nin, drawn in order. b (Value): the bias, 0.
        activation (str), nonlin (bool).

    Raises:
        ValueError: for a non-positive ``nin``, an unknown activation or init, or both seed and rng.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.3 (hidden units),
    section 8.4 (initialisation, eq. 8.23); Karpathy, micrograd ``nn.py``.
    """

    def __init__(
        self,
        nin: int,
        nonlin: bool = True,
        *,
        activation: str | None = None,
        init: str = "uniform",
        fan_out: int = 1,
        seed: int | None = None,
        rng: random.Random | None = None,
    ) -> None:
        nin = _check_count(nin, "nin", "Neuron(nin)")
        if activation is None:
            activation = "relu" if nonlin else "identity"
        self.activation = _check_activation(activation, "Neuron(activation=...)")
        self.nonlin = self.activation != "identity"
        if init not in INITS:
            raise ValueError(f"Neuron(init=...): init must be one of {list(INITS)}, got {init!r}")
        fan_out = _check_count(fan_out, "fan_out", "Neuron(fan_out=...)")
        draw = _make_rng(seed, rng, "Neuron()")
        limit = {"uniform": 1.0, "glorot": math.sqrt(6.0 / (nin + fan_out)), "he": math.sqrt(6.0 / nin)}[init]
        self.init = init
        # micrograd: self.w = [Value(random.uniform(-1,1)) for _ in range(nin)]; self.b = Value(0)
        self.w = [Value(draw.uniform(-limit, limit), label=f"w{i + 1}") for i in range(nin)]
        self.b = Value(0.0, label="b")
        self._f = _APPLY.get(self.activation)

    def preactivation(self, x: Sequence[Any]) -> Value:
        """a = b + sum_i w_i x_i, built as micrograd builds it: ``sum((wi*xi for ...), b)``.

        Args:
            x: nin numbers or Values.

        Raises:
            ValueError: if ``x`` does not have nin components.
        """
        if len(x) != len(self.w):
            raise ValueError(f"{self!r}: x must have {len(self.w)} features, got {len(x)}")
        return sum((wi * xi for wi, xi in zip(self.w, x, strict=True)), self.b)

    def activate(self, a: Value) -> Value:
        """h = f(a) for this neuron's activation f (the node ``a`` itself for the identity)."""
        return a if self._f is None else self._f(a)

    def __call__(self, x: Sequence[Any]) -> Value:
        """h = f(b + w . x) for one example x of nin numbers or Values."""
        return self.activate(self.preactivation(x))

    def parameters(self) -> list[Value]:
        """``w + [b]``, as micrograd."""
        return [*self.w, self.b]

    def __repr__(self) -> str:
        return f"{_REPR[self.activation]}Neuron({len(self.w)})"


class Layer(Module):
    """nout neurons reading the same nin inputs: micrograd's Layer.

    Args:
        nin: inputs per neuron. nout: the number of neurons.
        **kw: passed to every :class:`Neuron` (``nonlin``, ``activation``, ``init``, ``rng``). A ``seed``
            makes one ``random.Random(seed)`` shared by the neurons, drawn from in order.

    Attributes:
        neurons (list[Neuron]).

    Raises:
        ValueError: for a non-positive nin or nout, or a bad keyword value (see :class:`Neuron`).

    Reference: Karpathy, micrograd ``nn.py``; Goodfellow, Bengio & Courville (2016), section 6.4.
    """

    def __init__(self, nin: int, nout: int, **kw: Any) -> None:
        nout = _check_count(nout, "nout", "Layer(nin, nout)")
        if kw.get("seed") is not None:
            kw["rng"] = _make_rng(kw.pop("seed"), kw.get("rng"), "Layer()")
        kw.pop("seed", None)
        kw.setdefault("fan_out", nout)
        self.neurons = [Neuron(nin, **kw) for _ in range(nout)]

    def __call__(self, x: Sequence[Any]) -> Value | list[Value]:
        """Every neuron's output for one example; a single Value when the layer has one neuron (micrograd)."""
        out = [n(x) for n in self.neurons]
        return out[0] if len(out) == 1 else out

    def parameters(self) -> list[Value]:
        return [p for n in self.neurons for p in n.parameters()]

    def __repr__(self) -> str:
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"


class MLP(Module):
    """A multilayer perceptron: micrograd's ``MLP(nin, nouts)``, the network of Algorithms 6.3 and 6.4.

    Layer k (k = 1..l) has weights W(k) (``layers[k-1].neurons[m].w`` is row m) and biases b(k); hidden
    layers use ``activation``, the last layer is linear (its outputs are scores or logits), as micrograd.

    Args:
        nin: the number of input features.
        nouts: the layer widths, e.g. ``[16, 16, 1]`` (a list or tuple of positive integers).
        activation: the hidden layers' f: ``"relu"`` (micrograd's), ``"tanh"``, ``"sigmoid"``, ``"identity"``.
        init: ``"uniform"`` (micrograd's U(-1, 1)), ``"glorot"`` or ``"he"``.
        seed: a seed for a private ``random.Random``; rng: a ``random.Random``. Neither: the global
            ``random.uniform``, in micrograd's order, so ``random.seed(1337)`` gives micrograd's weights.

    Attributes:
        layers (list[Layer]), nin (int), nouts (list[int]), activation (str), init (str).

    Raises:
        ValueError: for an empty ``nouts``, a non-positive width, an unknown activation or init.

    Example:
        >>> model = MLP(2, [16, 16, 1], seed=0)
        >>> model([1.0, -2.0])  # a Value: one output

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4, Algorithm 6.3;
    Karpathy, micrograd ``nn.py``.
    """

    def __init__(
        self,
        nin: int,
        nouts: Sequence[int],
        *,
        activation: str = "relu",
        init: str = "uniform",
        seed: int | None = None,
        rng: random.Random | None = None,
    ) -> None:
        nin = _check_count(nin, "nin", "MLP(nin, nouts)")
        if isinstance(nouts, (str, bytes)) or not isinstance(nouts, Iterable):
            raise ValueError(f"MLP(nin, nouts): nouts must be a list of layer widths, got {nouts!r}")
        widths = [_check_count(n, "every width in nouts", "MLP(nin, nouts)") for n in nouts]
        if not widths:
            raise ValueError("MLP(nin, nouts): nouts must list at least one layer width, got []")
        self.activation = _check_activation(activation, "MLP(activation=...)")
        if init not in INITS:
            raise ValueError(f"MLP(init=...): init must be one of {list(INITS)}, got {init!r}")
        self.init = init
        self.nin, self.nouts = nin, widths
        draw = _make_rng(seed, rng, "MLP()")
        sz = [nin, *widths]
        last = len(widths) - 1
        self.layers = [
            Layer(sz[i], sz[i + 1], activation=activation if i != last else "identity", init=init, rng=draw)
            for i in range(len(widths))
        ]
        for k, layer in enumerate(self.layers, start=1):  # the book's names: W(k)[m, i], b(k)[m]
            for m, neuron in enumerate(layer.neurons):
                for i, w in enumerate(neuron.w):
                    w.label = f"W{k}[{m},{i}]"
                neuron.b.label = f"b{k}[{m}]"

    def __call__(self, x: Sequence[Any]) -> Value | list[Value]:
        """The network's output for one example x (nin numbers or Values): one Value or a list of Values.

        Raises:
            ValueError: if ``x`` does not have nin features.
        """
        if len(x) != self.nin:
            raise ValueError(f"MLP({self.nin}, {self.nouts}): x must have {self.nin} features, got {len(x)}")
        out: Any = x
        for layer in self.layers:
            out = layer(out)
            if isinstance(out, Value):
                out = [out]
        return out[0] if len(out) == 1 else out

    def parameters(self) -> list[Value]:
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self) -> str:
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"


def weights(model: Module) -> list[Value]:
    """The weights of a model, without its biases: what the regularizer Omega(theta) penalises by default.

    Args:
        model: an :class:`MLP`, :class:`Layer` or :class:`Neuron`.
    """
    if isinstance(model, Neuron):
        return list(model.w)
    if isinstance(model, Layer):
        return [w for n in model.neurons for w in n.w]
    if isinstance(model, MLP):
        return [w for layer in model.layers for n in layer.neurons for w in n.w]
    raise TypeError(f"weights(model): expected an MLP, Layer or Neuron, got {type(model).__name__}")


# -------------------------------------------------------------------------------------------------------
# Losses by name: how each reads its target and decides whether a prediction is right.


@dataclass(frozen=True)
class _LossSpec:
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


LOSSES: dict[str, _LossSpec] = {
    "cross_entropy": _LossSpec("cross_entropy", cross_entropy, one_output=False),
    "mse": _LossSpec("mse", mse, one_output=False),
    "hinge": _LossSpec("hinge", hinge, one_output=True),
    "binary_cross_entropy": _LossSpec("binary_cross_entropy", binary_cross_entropy, one_output=True),
}
"""The losses :func:`train`, :func:`forward_mlp` and :func:`backward_mlp` know by name."""


def _loss_spec(loss: Any, model: MLP, where: str) -> _LossSpec:
    if not isinstance(model, MLP):
        raise TypeError(f"{where}: model must be an MLP, got {type(model).__name__}")
    if loss not in LOSSES:
        raise ValueError(f"{where}: loss must be one of {sorted(LOSSES)}, got {loss!r}")
    spec = LOSSES[loss]
    if spec.one_output and model.nouts[-1] != 1:
        raise ValueError(
            f"{where}: loss {loss!r} needs a model with one output, this one has {model.nouts[-1]}"
        )
    return spec


def _check_lambda(value: Any, name: str, where: str) -> float:
    if (
        not isinstance(value, numbers.Real)
        or isinstance(value, bool)
        or not (math.isfinite(value) and float(value) >= 0)
    ):
        raise ValueError(f"{where}: {name} must be a finite number >= 0, got {value!r}")
    return float(value)


def _penalised(model: MLP, decay_biases: bool) -> list[Value]:
    return model.parameters() if decay_biases else weights(model)


def _regularizer(model: MLP, lam_l2: float, lam_l1: float, decay_biases: bool) -> Value | None:
    """lambda Omega(theta) = lambda_2 sum w^2 + lambda_1 sum |w| over the penalised parameters, or None."""
    params = _penalised(model, decay_biases) if (lam_l2 or lam_l1) else []
    term: Value | None = None
    if lam_l2:
        term = lam_l2 * l2(params)
    if lam_l1:
        t1 = lam_l1 * l1(params)
        term = t1 if term is None else term + t1
    return term


def _check_features(x: Any, nin: int, where: str) -> list[float]:
    if isinstance(x, (str, bytes)) or not isinstance(x, Iterable):
        raise ValueError(f"{where}: an example must be a sequence of {nin} numbers, got {x!r}")
    row = list(x)
    if len(row) != nin:
        raise ValueError(f"{where}: the model takes {nin} features per example, got {len(row)}: {row!r}")
    out = []
    for v in row:
        if not isinstance(v, numbers.Real) or isinstance(v, bool) or not math.isfinite(v):
            raise ValueError(f"{where}: features must be finite numbers, got {v!r} in {row!r}")
        out.append(float(v))
    return out


# -------------------------------------------------------------------------------------------------------
# Algorithms 6.3 and 6.4.


@dataclass
class MLPForward:
    """What Algorithm 6.3 computes and keeps for Algorithm 6.4.

    Attributes:
        a: a[k] for k = 1..l, the pre-activations a(k) = b(k) + W(k) h(k-1) (lists of Values; a[0] is []).
        h: h[k] for k = 0..l: h(0) = x (leaves labelled x1..), h(k) = f(a(k)) (lists of Values).
        y_hat: h(l), the network's output (a list of Values).
        loss: L(y_hat, y), a Value.
        penalty: lambda Omega(theta), a Value, or None without a regularizer.
        J: the cost J = L(y_hat, y) + lambda Omega(theta), a Value.
    """

    a: list[list[Value]]
    h: list[list[Value]]
    y_hat: list[Value]
    loss: Value
    penalty: Value | None
    J: Value


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
        An :class:`MLPForward`.

    Raises:
        ValueError: wrong feature count, a target out of range, an unknown loss, a negative lambda.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4, Algorithm 6.3.
    """
    where = "forward_mlp(model, x, y)"
    spec = _loss_spec(loss, model, where)
    lam2, lam1 = _check_lambda(l2, "l2", where), _check_lambda(l1, "l1", where)
    xs = _check_features(x, model.nin, where)
    target = spec.check_target(y, model.nouts[-1], where)
    h: list[list[Value]] = [[Value(v, label=f"x{j + 1}") for j, v in enumerate(xs)]]  # h(0) = x
    a: list[list[Value]] = [[]]
    for k, layer in enumerate(model.layers, start=1):
        a_k = [n.preactivation(h[k - 1]) for n in layer.neurons]  # a(k) = b(k) + W(k) h(k-1)
        h_k = [n.activate(a_km) for n, a_km in zip(layer.neurons, a_k, strict=True)]  # h(k) = f(a(k))
        for m, (a_km, h_km) in enumerate(zip(a_k, h_k, strict=True)):
            a_km.label = f"a{k}[{m}]"
            if h_km is not a_km:
                h_km.label = f"h{k}[{m}]"
        a.append(a_k)
        h.append(h_k)
    y_hat = h[-1]  # y_hat = h(l)
    L = spec.fn(y_hat, target)
    L.label = "L"
    penalty = _regularizer(model, lam2, lam1, decay_biases)
    J = L if penalty is None else L + penalty  # J = L(y_hat, y) + lambda Omega(theta)
    J.label = "J"
    return MLPForward(a=a, h=h, y_hat=y_hat, loss=L, penalty=penalty, J=J)


def backward_mlp(
    model: MLP,
    x: Sequence[float],
    y: Any,
    *,
    loss: str = "cross_entropy",
    l2: float = 0.0,
    l1: float = 0.0,
    decay_biases: bool = False,
) -> dict[Value, float]:
    """Algorithm 6.4: the gradients of J on every W(k) and b(k), layer by layer from k = l down to 1.

    Runs Algorithm 6.3 (:func:`forward_mlp`) and then, on floats from the stored a(k) and h(k):

        g <- grad_{y_hat} J = grad_{y_hat} L(y_hat, y)
        for k = l, l-1, ..., 1:
            g <- grad_{a(k)} J = g * f'(a(k))                   (element-wise)
            grad_{b(k)} J = g + lambda grad_{b(k)} Omega(theta)
            grad_{W(k)} J = g h(k-1)^T + lambda grad_{W(k)} Omega(theta)
            g <- grad_{h(k-1)} J = W(k)^T g

    This is the book's specialised back-propagation for a chain of fully-connected layers; it equals the
    generic Algorithm 6.2 on the graph of J (``Graph(J).backprop()``) to rounding. f'(a) comes from the
    engine's operation table (the activation op's derivative rule); grad_{y_hat} L is Algorithm 6.2 run on
    the small graph of L alone (leaves holding y_hat's numbers), so no derivative is defined twice. For
    Omega: grad of lambda_2 sum w^2 is 2 lambda_2 w, of lambda_1 sum |w| is lambda_1 sign(w).

    Args:
        model, x, y, loss, l2, l1, decay_biases: as :func:`forward_mlp`.

    Returns:
        {parameter: dJ/dparameter} for every parameter of the model (floats).

    Raises:
        ValueError: as :func:`forward_mlp`.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4, Algorithm 6.4.
    """
    fwd = forward_mlp(model, x, y, loss=loss, l2=l2, l1=l1, decay_biases=decay_biases)
    spec = LOSSES[loss]
    target = spec.check_target(y, model.nouts[-1], "backward_mlp(model, x, y)")
    # g <- grad_{y_hat} J: Algorithm 6.2 on L(y_hat, y) with y_hat as leaves
    y_leaves = [Value(v.data) for v in fwd.y_hat]
    table = Graph(spec.fn(y_leaves, target)).backprop()
    g = [table.get(v, 0.0) for v in y_leaves]
    lam2, lam1 = float(l2), float(l1)

    def omega_grad(p: Value) -> float:
        """d(lambda Omega)/dp for a penalised parameter: 2 lambda_2 p + lambda_1 sign(p)."""
        w = p.data
        return 2.0 * lam2 * w + lam1 * (1.0 if w > 0 else -1.0 if w < 0 else 0.0)

    grads: dict[Value, float] = {}
    for k in range(len(model.layers), 0, -1):  # k = l, l-1, ..., 1
        layer = model.layers[k - 1]
        op = ACTIVATIONS[layer.neurons[0].activation]
        a_k = [v.data for v in fwd.a[k]]
        h_k = [v.data for v in fwd.h[k]]
        h_prev = [v.data for v in fwd.h[k - 1]]
        # g <- g * f'(a(k)), f' from the operation table's rule (x, out) -> df/dx
        if op is not None:
            g = [gi * op.local_derivative(0, (ai,), hi) for gi, ai, hi in zip(g, a_k, h_k, strict=True)]
        for m, neuron in enumerate(layer.neurons):
            # grad_b(k) = g + lambda grad_b Omega
            grads[neuron.b] = g[m] + (omega_grad(neuron.b) if decay_biases else 0.0)
            # grad_W(k) = g h(k-1)^T + lambda grad_W Omega: row m, column i
            for i, w in enumerate(neuron.w):
                grads[w] = g[m] * h_prev[i] + omega_grad(w)
        # g <- W(k)^T g
        g = [
            sum(neuron.w[i].data * g[m] for m, neuron in enumerate(layer.neurons)) for i in range(len(h_prev))
        ]
    return grads


# -------------------------------------------------------------------------------------------------------
# Training: minibatch stochastic gradient descent with momentum (Algorithms 8.1 and 8.2).


class TrainingError(RuntimeError):
    """Training stopped: the loss or a gradient became NaN or infinite.

    Attributes:
        epoch (int): the epoch (1-based). step (int): the global step (1-based). batch (int): the batch
        within the epoch (1-based).
    """

    def __init__(self, message: str, *, epoch: int, step: int, batch: int) -> None:
        super().__init__(message)
        self.epoch, self.step, self.batch = epoch, step, batch


@dataclass
class History:
    """What :func:`train` records, one entry per epoch.

    Attributes:
        loss: the training objective J (mean data loss + lambda Omega), averaged over the epoch's minibatches,
            each measured before its update (as micrograd's demo prints it).
        accuracy: the fraction of training examples classified right, measured the same way.
        test_loss: J on the held-out data at the end of the epoch (data loss + the same lambda Omega); empty
            without test data.
        test_accuracy: accuracy on the held-out data at the end of the epoch; empty without test data.
        lr: the learning rate of the epoch's last step.
        epochs: the number of epochs completed. steps: the number of SGD steps taken.
    """

    loss: list[float] = field(default_factory=list)
    accuracy: list[float] = field(default_factory=list)
    test_loss: list[float] = field(default_factory=list)
    test_accuracy: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    epochs: int = 0
    steps: int = 0


BatchFn = Callable[[list[list[float]], list[Any]], tuple[float, int]]
"""One minibatch step's computation: (X_batch, y_batch) -> (J, number correct), leaving dJ/dp in ``p.grad``
for every parameter p. :func:`train` applies the update; this is the part a compiled path replaces."""


def _objective(
    model: MLP,
    X: Sequence[Sequence[float]],
    Y: Sequence[Any],
    spec: _LossSpec,
    lam2: float,
    lam1: float,
    decay_biases: bool,
) -> tuple[Value, int]:
    """J = (1/B) sum_b L(model(x_b), y_b) + lambda Omega(theta) as one graph, and the count of right answers.

    The shape of micrograd's demo: ``sum(losses) * (1.0 / len(losses)) + alpha * sum(p*p for p in ...)``.
    """
    losses = []
    correct = 0
    for x, y in zip(X, Y, strict=True):
        out = model(x)
        outs = [out] if isinstance(out, Value) else out
        losses.append(spec.fn(outs, y))
        correct += spec.correct([o.data for o in outs], y)
    J: Value = sum(losses) * (1.0 / len(losses))  # type: ignore[assignment]
    penalty = _regularizer(model, lam2, lam1, decay_biases)
    return (J if penalty is None else J + penalty), correct


def _graph_batch_fn(model: MLP, spec: _LossSpec, lam2: float, lam1: float, decay_biases: bool) -> BatchFn:
    """The uncompiled step: build J's graph, zero the grads, back-propagate (Algorithm 6.2) into ``.grad``."""
    params = model.parameters()

    def run(X: list[list[float]], Y: list[Any]) -> tuple[float, int]:
        J, correct = _objective(model, X, Y, spec, lam2, lam1, decay_biases)
        for p in params:
            p.grad = 0.0
        J.backward()
        return J.data, correct

    return run


def _make_batch_fn(
    model: MLP, spec: _LossSpec, lam2: float, lam1: float, decay_biases: bool, compile: bool
) -> BatchFn:
    if compile:
        return _compiled_batch_fn(model, spec, lam2, lam1, decay_biases)
    return _graph_batch_fn(model, spec, lam2, lam1, decay_biases)


def _compiled_batch_fn(model: MLP, spec: _LossSpec, lam2: float, lam1: float, decay_biases: bool) -> BatchFn:
    """The compiled step: each example's loss graph is built once, compiled, and replayed (no nodes built).

    The graph of L(model(x), y) has the features x and the parameters as input leaves. The target y fixes
    its shape (the sign in the hinge loss, the logit cross-entropy picks), so one graph is compiled per
    distinct target and replayed for every example with that target (up to 16 targets; examples with
    further targets, such as many real-valued mse targets, build their graph as the eager step does and
    run Algorithm 6.2 on it; so does an example whose compiled graph meets a DomainError, since a loss may
    pick its formula from the values it was built at, e.g. the softplus branch of binary cross-entropy).
    The penalty lambda Omega(theta) is
    built afresh at every step (its size is the parameter count, and L1's sign(w) constants follow the
    weights). J and dJ/dp equal :func:`_graph_batch_fn`'s up to rounding. See
    :func:`micrograph.compile_graph`.
    """
    from operator import add

    from micrograph.compile import CompiledGraph, compile_graph

    params = model.parameters()
    features = [Value(0.0, label=f"x{i + 1}") for i in range(model.nin)]
    per_target: dict[Any, tuple[CompiledGraph, list[int]]] = {}

    def compiled(y: Any) -> tuple[CompiledGraph, list[int]] | None:
        key = tuple(y) if isinstance(y, list) else y
        if key not in per_target:
            if len(per_target) >= 16:
                return None
            out = model(features)
            outs = [out] if isinstance(out, Value) else out
            g = Graph(spec.fn(outs, y))
            per_target[key] = (compile_graph(g, params, keep=outs), [g.index.get(x, -1) for x in features])
        return per_target[key]

    def eager(x: list[float], y: Any) -> tuple[float, list[float], list[float]]:
        """One example's loss graph built and back-propagated (Algorithm 6.2), as the eager step does."""
        out = model(x)
        nodes = [out] if isinstance(out, Value) else out
        L = spec.fn(nodes, y)
        table = Graph(L).backprop()
        return L.data, [table.get(p, 0.0) for p in params], [o.data for o in nodes]

    def run(X: list[list[float]], Y: list[Any]) -> tuple[float, int]:
        total, correct = 0.0, 0
        grads = [0.0] * len(params)
        inputs: dict[int, list[float]] = {}  # per compiled graph: u(1)..u(n_i) with this step's parameters
        for x, y in zip(X, Y, strict=True):
            entry = compiled(y)
            if entry is None:  # no compiled graph for this target
                value, g_example, outs = eager(x, y)
            else:
                f, positions = entry
                u = inputs.get(id(f))
                if u is None:
                    u = inputs[id(f)] = [v.data for v in f.graph.inputs]
                for j, xj in zip(positions, x):
                    if j >= 0:
                        u[j] = xj
                try:
                    value, g_example, outs = f.evaluate_all(u)
                except DomainError:  # the graph's shape may suit other values: do what the eager step does
                    value, g_example, outs = eager(x, y)
            total += value
            grads = list(map(add, grads, g_example))
            correct += spec.correct(outs, y)
        scale = 1.0 / len(X)
        J = total * scale  # (1/B) sum_b L_b, as the eager graph computes it
        grads = [gp * scale for gp in grads]
        penalty = _regularizer(model, lam2, lam1, decay_biases)
        if penalty is not None:  # Algorithm 6.2 on lambda Omega(theta)'s own small graph
            table = Graph(penalty).backprop()
            J += penalty.data
            grads = [gp + table.get(p, 0.0) for p, gp in zip(params, grads)]
        for p, gp in zip(params, grads):
            p.grad = gp
        return J, correct

    return run


def _check_data(data: Any, model: MLP, spec: _LossSpec, name: str) -> tuple[list[list[float]], list[Any]]:
    where = f"train(..., {name}=(X, y))"
    if not isinstance(data, (tuple, list)) or len(data) != 2:
        raise ValueError(f"{where}: {name} must be a pair (X, y), got {type(data).__name__}")
    X, Y = data
    try:
        n, m = len(X), len(Y)
    except TypeError:
        raise ValueError(
            f"{where}: X and y must be sequences, got {type(X).__name__} and {type(Y).__name__}"
        ) from None
    if n == 0:
        raise ValueError(f"{where}: {name} is empty (0 examples)")
    if n != m:
        raise ValueError(f"{where}: X has {n} examples but y has {m} labels")
    rows = [_check_features(x, model.nin, f"{where}, example {i}") for i, x in enumerate(X)]
    nout = model.nouts[-1]
    ys = []
    for i, y in enumerate(Y):
        if hasattr(y, "item") and getattr(y, "ndim", None) == 0:  # a NumPy scalar label
            y = y.item()
        ys.append(spec.check_target(y, nout, f"{where}, label {i}"))
    return rows, ys


def _check_lr(lr: Any) -> float:
    if not isinstance(lr, numbers.Real) or isinstance(lr, bool) or not (math.isfinite(lr) and float(lr) > 0):
        raise ValueError(f"train(lr=...): the learning rate must be a positive finite number, got {lr!r}")
    return float(lr)


def predict(model: MLP, x: Sequence[float]) -> int:
    """The class of one example: the argmax of several outputs, or 1 if a single score is > 0 else 0."""
    out = model(x)
    if isinstance(out, Value):
        return 1 if out.data > 0 else 0
    data = [o.data for o in out]
    return max(range(len(data)), key=data.__getitem__)


def accuracy(
    model: MLP, data: tuple[Sequence[Sequence[float]], Sequence[Any]], *, loss: str | None = None
) -> float:
    """The fraction of examples the model classifies right.

    Several outputs: the argmax against a class index. One output: the sign of the score against a 0/1 or
    -1/+1 label (micrograd's ``(yi > 0) == (scorei.data > 0)``); with ``loss="mse"``, the nearest label.

    Args:
        model: an MLP. data: (X, y), X of shape n x nin, y n labels.
        loss: the loss the model was trained with (changes only the one-output mse rule).

    Raises:
        ValueError: for empty data, a wrong feature count or a label out of range.
    """
    if loss is None:
        loss = "hinge" if model.nouts[-1] == 1 else "cross_entropy"
    spec = _loss_spec(loss, model, "accuracy(model, data)")
    X, Y = _check_data(data, model, spec, "data")
    right = 0
    for x, y in zip(X, Y, strict=True):
        out = model(x)
        right += spec.correct([out.data] if isinstance(out, Value) else [o.data for o in out], y)
    return right / len(X)


def train(
    model: MLP,
    train: tuple[Sequence[Sequence[float]], Sequence[Any]],
    *,
    loss: str,
    lr: float,
    epochs: int,
    batch_size: int | None = None,
    l2: float = 0.0,
    l1: float = 0.0,
    momentum: float = 0.0,
    schedule: Callable[[int], float] | None = None,
    schedule_by: str = "step",
    seed: int | None = 0,
    shuffle: bool = True,
    decay_biases: bool = False,
    test: tuple[Sequence[Sequence[float]], Sequence[Any]] | None = None,
    progress: bool = True,
    compile: bool = False,
) -> History:
    """Minibatch stochastic gradient descent with momentum on J = mean L + lambda Omega (Algorithms 8.1, 8.2).

    Every step takes a minibatch of ``batch_size`` examples, builds J's graph, back-propagates
    (Algorithm 6.2, ``J.backward()``) and updates every parameter:

        eps_k = lr * schedule(k)                      (lr when no schedule)
        v <- momentum * v - eps_k * grad               theta <- theta + v
        (momentum = 0: theta <- theta - eps_k * grad, micrograd's ``p.data -= learning_rate * p.grad``)

    Args:
        model: an :class:`MLP`; trained in place.
        train: (X, y): X n x nin numbers (lists or a NumPy array), y n labels (see :func:`forward_mlp`).
        loss: ``"cross_entropy"``, ``"mse"``, ``"hinge"`` or ``"binary_cross_entropy"``.
        lr: the base learning rate, a positive number.
        epochs: passes over the data, a positive integer.
        batch_size: examples per step (a positive integer; larger than n means n); None for the full batch.
        l2, l1: lambda for the L2 (sum w^2) and L1 (sum |w|) penalties, >= 0.
        momentum: alpha in [0, 1) of Algorithm 8.2 (0 for plain SGD).
        schedule: a callable k -> factor: the learning rate of step k is ``lr * schedule(k)``, k counting
            from 0 (with ``schedule_by="epoch"``, k is the 0-based epoch). micrograd's demo is
            ``lr=1.0, schedule=lambda k: 1.0 - 0.9 * k / 100``.
        schedule_by: ``"step"`` or ``"epoch"``: what ``schedule`` is a function of.
        seed: the seed of the shuffling generator (a private ``random.Random``; the global one is untouched).
        shuffle: shuffle the examples at every epoch (False: the given order, as micrograd's demo).
        decay_biases: penalise the biases too (default False: the regularizer applies to weights only).
        test: held-out (X, y) evaluated at the end of every epoch, or None.
        progress: show a tqdm progress bar over the epochs.
        compile: replay compiled straight-line code instead of building graphs (same results up to rounding).

    Returns:
        A :class:`History` with per-epoch loss and accuracy, train and held-out.

    Raises:
        ValueError: empty data, a wrong feature count, a label out of range, a batch size or epoch count
            that is not a positive integer, a learning rate that is not a positive number, a negative
            lambda, momentum outside [0, 1), a schedule factor that is negative or not finite.
        TrainingError: the loss or a gradient became NaN or infinite; the message names the epoch and step.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 8.3.1 (Algorithm 8.1, SGD),
    section 8.3.2 (Algorithm 8.2, momentum), section 6.5.4 (Algorithm 6.3, the cost J).
    """
    spec = _loss_spec(loss, model, "train(model, ...)")
    rate = _check_lr(lr)
    epochs = _check_count(epochs, "epochs", "train(epochs=...)")
    if batch_size is not None:
        batch_size = _check_count(batch_size, "batch_size", "train(batch_size=...)")
    lam2, lam1 = _check_lambda(l2, "l2", "train(l2=...)"), _check_lambda(l1, "l1", "train(l1=...)")
    if not isinstance(momentum, numbers.Real) or isinstance(momentum, bool) or not 0.0 <= momentum < 1.0:
        raise ValueError(f"train(momentum=...): momentum must be a number in [0, 1), got {momentum!r}")
    if schedule is not None and not callable(schedule):
        raise ValueError(f"train(schedule=...): schedule must be a callable k -> factor, got {schedule!r}")
    if schedule_by not in ("step", "epoch"):
        raise ValueError(f"train(schedule_by=...): must be 'step' or 'epoch', got {schedule_by!r}")
    X, Y = _check_data(train, model, spec, "train")
    test_data = _check_data(test, model, spec, "test") if test is not None else None
    batch_fn = _make_batch_fn(model, spec, lam2, lam1, decay_biases, compile)

    from tqdm.auto import tqdm

    params = model.parameters()
    velocity = [0.0] * len(params)
    n = len(X)
    size = n if batch_size is None else min(batch_size, n)
    shuffler = random.Random(seed)
    history = History()
    step = 0
    bar = tqdm(range(1, epochs + 1), desc="train", unit="epoch", disable=not progress, leave=False)
    try:
        for epoch in bar:
            order = list(range(n))
            if shuffle:
                shuffler.shuffle(order)
            total, right, batches = 0.0, 0, 0
            eps = rate
            for start in range(0, n, size):
                idx = order[start : start + size]
                batches += 1
                k = step if schedule_by == "step" else epoch - 1
                eps = rate if schedule is None else rate * _factor(schedule, k, schedule_by)
                step += 1
                where = f"epoch {epoch} of {epochs}, step {step} (batch {batches} of this epoch)"
                try:
                    J, correct = batch_fn([X[i] for i in idx], [Y[i] for i in idx])
                except DomainError as e:
                    raise TrainingError(
                        f"training diverged at {where}: a value in the loss became NaN or infinite ({e}); "
                        "try a smaller learning rate", epoch=epoch, step=step, batch=batches,
                    ) from e  # fmt: skip
                _check_finite(J, params, where, epoch, step, batches)
                total += J
                right += correct
                if momentum:
                    for j, p in enumerate(params):
                        velocity[j] = momentum * velocity[j] - eps * p.grad
                        p.data += velocity[j]
                else:
                    for p in params:
                        p.data -= eps * p.grad
            history.loss.append(total / batches)
            history.accuracy.append(right / n)
            history.lr.append(eps)
            if test_data is not None:
                try:
                    Jt, right_t = _objective(model, *test_data, spec, lam2, lam1, decay_biases)
                except DomainError as e:
                    raise TrainingError(
                        f"training diverged by the end of epoch {epoch} (step {step}): the held-out loss is "
                        f"not finite ({e})", epoch=epoch, step=step, batch=batches,
                    ) from e  # fmt: skip
                history.test_loss.append(Jt.data)
                history.test_accuracy.append(right_t / len(test_data[0]))
            history.epochs, history.steps = epoch, step
            postfix = {"loss": f"{history.loss[-1]:.4g}", "acc": f"{history.accuracy[-1]:.3f}"}
            if test_data is not None:
                postfix["test_acc"] = f"{history.test_accuracy[-1]:.3f}"
            bar.set_postfix(postfix)
    finally:
        bar.close()
    return history


def _factor(schedule: Callable[[int], float], k: int, unit: str) -> float:
    f = schedule(k)
    if not isinstance(f, numbers.Real) or isinstance(f, bool) or not (math.isfinite(f) and f >= 0):
        raise ValueError(
            f"train(schedule=...): schedule({k}) at {unit} {k} must be a finite number >= 0, got {f!r}"
        )
    return float(f)


def _check_finite(J: float, params: list[Value], where: str, epoch: int, step: int, batch: int) -> None:
    if not math.isfinite(J):
        raise TrainingError(
            f"training diverged at {where}: the loss is {J!r}", epoch=epoch, step=step, batch=batch
        )
    for p in params:
        if not math.isfinite(p.grad):
            raise TrainingError(
                f"training diverged at {where}: the gradient of parameter {p.label or p!r} is {p.grad!r}; "
                "try a smaller learning rate", epoch=epoch, step=step, batch=batch,
            )  # fmt: skip
