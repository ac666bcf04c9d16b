"""Neural networks on scalar Values: micrograd's Module, Neuron, Layer and MLP, the layers of Algorithm 6.3.

The classes keep micrograd's signatures and behaviour, so micrograd code runs by changing the import:
``Neuron(nin, nonlin=True)``, ``Layer(nin, nout, **kw)``, ``MLP(nin, nouts)`` (ReLU on every layer but the
last), weights drawn from ``random.uniform(-1, 1)`` in micrograd's order (neuron by neuron, weight by
weight) and biases 0, ``parameters()``, ``zero_grad()``, and the same ``repr``. A neuron's forward pass
builds micrograd's graph, ``sum((wi * xi for wi, xi in zip(w, x)), b)``, then the activation.

Added: an ``activation`` choice (relu, tanh, sigmoid, identity), an ``init`` choice (micrograd's uniform,
Glorot and He uniform), ``seed=`` or ``rng=`` for reproducible weights, and the book's names for the
parameters, W(k)[m, i] and b(k)[m]. The book's algorithms over these layers are
:mod:`micrograph.mlp_forward` (Algorithm 6.3, forward to the cost J) and :mod:`micrograph.mlp_backward`
(Algorithm 6.4, back layer by layer); training is :mod:`micrograph.train`; :mod:`micrograph.nn` gathers
them all.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.3-6.5.4 (the network of
Algorithms 6.3, 6.4); Karpathy, micrograd ``nn.py``.
"""

from __future__ import annotations

import itertools
import math
import numbers
import random
from collections.abc import Callable, Iterable, Sequence
from operator import mul
from typing import Any

from micrograph import compile_nodes
from micrograph.engine import Value
from micrograph.errors import short_repr, typed_repr
from micrograph.meta import NodeMeta
from micrograph.ops import RELU, SIGMOID, TANH, Op

__all__ = [
    "ACTIVATIONS", "INITS", "MAX_PARAMETERS", "MLP", "ROLES", "Layer", "Module", "Neuron", "tag", "weights",
]  # fmt: skip

ACTIVATIONS: dict[str, Op | None] = {"relu": RELU, "tanh": TANH, "sigmoid": SIGMOID, "identity": None}
"""The activation functions f by name: the operation of the engine's table (None for the identity).

Algorithm 6.4 takes f'(a) from the same table (``op.local_derivative``): no second definition of a derivative.
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


ROLES = ("input", "weight", "bias", "a", "h", "loss", "regularizer", "cost")
"""What a node an MLP builds is in Algorithm 6.3 (``NodeMeta.role``): an input x, a weight W(k)[m, i], a
bias b(k)[m], a pre-activation a(k)[m], an activation h(k)[m] = f(a(k)[m]), a loss L, the regularizer
lambda Omega(theta), the cost J. The nodes between (the products W x and their sums) carry none: a view
finds them from the tagged nodes they feed (see ``viz.groups``)."""


def tag(node: Value, role: str, layer: int | None = None, neuron: int | None = None) -> Value:
    """Mark ``node`` (a node of G just built) with its role in Algorithm 6.3, its layer and neuron.

    Args:
        node: the node; its label and whether it is a constant are kept.
        role: one of :data:`ROLES`.
        layer: the layer k (0 for an input), or None.
        neuron: the neuron m (the feature j for an input), or None.

    Returns:
        ``node`` itself.

    Raises:
        ValueError: ``role`` is not one of :data:`ROLES`.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4, Algorithm 6.3.
    """
    if role not in ROLES:
        raise ValueError(f"tag(node, role): role must be one of {list(ROLES)}, got {role!r}")
    node.meta = NodeMeta(constant=node.is_constant, label=node.label, role=role, layer=layer, neuron=neuron)
    return node


MAX_PARAMETERS = 10_000_000
"""The most parameters a Neuron, Layer or MLP may have. Each is a Value (a Python object of about 100
bytes) and each example's forward pass adds nodes per weight, so ten million already take gigabytes; the
check comes before anything is allocated."""


def _check_size(sizes: Sequence[int], where: str) -> None:
    """Refuse, before allocating, a network whose layer sizes ``[nin, n1, n2, ...]`` exceed MAX_PARAMETERS."""
    total = sum((a + 1) * b for a, b in itertools.pairwise(sizes))
    if total > MAX_PARAMETERS:
        raise ValueError(
            f"{where}: sizes {list(sizes)} need {total:.3g} parameters (weights and biases); micrograph "
            f"builds one Python object per scalar and allows at most {MAX_PARAMETERS:,}: use smaller layers"
        )


def _check_count(value: Any, name: str, where: str) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{where}: {name} must be a positive integer, got {short_repr(value)}")
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
            raise TypeError(f"{where}: rng must be a random.Random, got {typed_repr(rng)}")
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


_weighted_sum = compile_nodes.weighted_sum(Value)
"""A neuron's pre-activation b + sum_i w_i x_i, built for every neuron and example: the nodes of
``sum(map(mul, w, x), b)``, each product and sum built as ``*`` and ``+`` build it, compiled from the table
(:func:`micrograph.compile_nodes.weighted_sum`), so that no operator is dispatched per node."""


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

    # In an MLP, the records every a and h this neuron builds carries (role, layer k, neuron m), shared by
    # all of them: one store per node, no allocation (MLP.__init__ sets them; a lone Neuron has none).
    _a_meta: NodeMeta | None = None
    _h_meta: NodeMeta | None = None

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
        _check_size([nin, 1], "Neuron(nin)")
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
        # The same nodes in the same order as micrograd's generator, with the loop in C (no generator frame).
        a: Value = sum(map(mul, self.w, x), self.b)
        a._info = self._a_meta  # a new node (nin >= 1): no label or record of its own to keep
        return a

    def activate(self, a: Value) -> Value:
        """h = f(a) for this neuron's activation f (the node ``a`` itself for the identity)."""
        if self._f is None:
            return a
        h = self._f(a)
        h._info = self._h_meta
        return h

    def __call__(self, x: Sequence[Any]) -> Value:
        """h = f(b + w . x) for one example x of nin numbers or Values: ``activate(preactivation(x))``.

        Raises:
            ValueError: if ``x`` does not have nin components.
        """
        # preactivation and activate written out: this is called once per neuron and example.
        w = self.w
        if len(x) != len(w):
            return self.preactivation(x)  # raises its ValueError
        a = _weighted_sum(self.b, w, x)  # preactivation's nodes, written out
        a._info = self._a_meta  # a new node: its role, layer and neuron, a record shared by all (see above)
        f = self._f
        if f is None:
            return a
        h = f(a)
        h._info = self._h_meta
        return h

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
        ValueError: for a non-positive nin or nout, more than :data:`MAX_PARAMETERS` parameters, or a bad
            keyword value (see :class:`Neuron`).

    Reference: Karpathy, micrograd ``nn.py``; Goodfellow, Bengio & Courville (2016), section 6.4.
    """

    def __init__(self, nin: int, nout: int, **kw: Any) -> None:
        nout = _check_count(nout, "nout", "Layer(nin, nout)")
        _check_size([_check_count(nin, "nin", "Layer(nin, nout)"), nout], "Layer(nin, nout)")
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
        ValueError: for an empty ``nouts``, a non-positive width, more than :data:`MAX_PARAMETERS`
            parameters in all, an unknown activation or init.

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
            raise ValueError(
                f"MLP(nin, nouts): nouts must be a list of layer widths, got {short_repr(nouts)}"
            )
        widths = [_check_count(n, "every width in nouts", "MLP(nin, nouts)") for n in nouts]
        if not widths:
            raise ValueError("MLP(nin, nouts): nouts must list at least one layer width, got []")
        _check_size([nin, *widths], "MLP(nin, nouts)")
        self.activation = _check_activation(activation, "MLP(activation=...)")
        if init not in INITS:
            raise ValueError(f"MLP(init=...): init must be one of {list(INITS)}, got {init!r}")
        self.init = init
        self.nin, self.nouts = nin, widths
        draw = _make_rng(seed, rng, "MLP()")
        sz = [nin, *widths]
        last = len(widths) - 1
        self.layers: list[Layer] = []
        for i in range(len(widths)):  # layer k = i + 1: W(k) is sz[i + 1] x sz[i]
            f = "identity" if i == last else activation  # a linear last layer
            layer = Layer(sz[i], sz[i + 1], activation=f, init=init, rng=draw)
            self.layers.append(layer)
        for k, layer in enumerate(self.layers, start=1):  # the book's names: W(k)[m, i], b(k)[m]
            for m, neuron in enumerate(layer.neurons):
                for i, w in enumerate(neuron.w):
                    w.label = f"W{k}[{m},{i}]"
                    tag(w, "weight", k, m)
                neuron.b.label = f"b{k}[{m}]"
                tag(neuron.b, "bias", k, m)
                neuron._a_meta = NodeMeta(role="a", layer=k, neuron=m)
                neuron._h_meta = NodeMeta(role="h", layer=k, neuron=m)

    def __call__(self, x: Sequence[Any]) -> Value | list[Value]:
        """The network's output for one example x (nin numbers or Values): one Value or a list of Values.

        Raises:
            TypeError: if ``x`` is not nin numbers or Values: a number, a string, or a list holding another
                object (the message names its position).
            ValueError: if ``x`` does not have nin features.
        """
        what = f"MLP({self.nin}, {self.nouts}): x must be a list of {self.nin} numbers"
        if not hasattr(x, "__len__") or isinstance(x, (str, bytes)):
            raise TypeError(f"{what}, got {typed_repr(x)}")
        if len(x) != self.nin:
            raise ValueError(f"MLP({self.nin}, {self.nouts}): x must have {self.nin} features, got {len(x)}")
        for k, xk in enumerate(x):
            if not isinstance(xk, (numbers.Real, Value)):
                raise TypeError(f"{what} or Values; x[{k}] is {typed_repr(xk)}")
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
