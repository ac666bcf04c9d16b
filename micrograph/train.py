"""Training an MLP: minibatch stochastic gradient descent with momentum, a schedule, history, accuracy.

Each step builds the objective J = mean loss + lambda Omega(theta) as a graph and back-propagates it
(Algorithm 6.2, through ``Value.backward``), or replays a compiled graph (``compile=True``,
:func:`micrograph.compile_graph`).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 8.3 (Algorithms 8.1, 8.2).
"""

from __future__ import annotations

import math
import numbers
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import add
from typing import Any

from micrograph.compile import CompiledGraph, compile_graph
from micrograph.engine import Value
from micrograph.errors import DomainError
from micrograph.graph import Graph
from micrograph.losses import LossSpec
from micrograph.mlp import MLP, _check_count, tag
from micrograph.mlp_forward import _check_features, _check_lambda, _regularizer, model_loss_spec

__all__ = ["History", "TrainingError", "accuracy", "predict", "train"]

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
    spec: LossSpec,
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
        losses.append(tag(spec.fn(outs, y), "loss"))
        correct += spec.correct([o.data for o in outs], y)
    J: Value = tag(sum(losses) * (1.0 / len(losses)), "loss")  # type: ignore[arg-type]
    penalty = _regularizer(model, lam2, lam1, decay_biases)
    return (J if penalty is None else tag(J + penalty, "cost")), correct


def _graph_batch_fn(model: MLP, spec: LossSpec, lam2: float, lam1: float, decay_biases: bool) -> BatchFn:
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
    model: MLP, spec: LossSpec, lam2: float, lam1: float, decay_biases: bool, compile: bool
) -> BatchFn:
    if compile:
        return _compiled_batch_fn(model, spec, lam2, lam1, decay_biases)
    return _graph_batch_fn(model, spec, lam2, lam1, decay_biases)


def _compiled_batch_fn(model: MLP, spec: LossSpec, lam2: float, lam1: float, decay_biases: bool) -> BatchFn:
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
                    u = inputs[id(f)] = [v.data for v in f.graph.leaves]
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


def _check_data(data: Any, model: MLP, spec: LossSpec, name: str) -> tuple[list[list[float]], list[Any]]:
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
    spec = model_loss_spec(loss, model, "accuracy(model, data)")
    X, Y = _check_data(data, model, spec, "data")
    right = 0
    for x, y in zip(X, Y, strict=True):
        out = model(x)
        outs = [out] if isinstance(out, Value) else out
        right += spec.correct([o.data for o in outs], y)
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
            ``loss="hinge", l2=1e-4, decay_biases=True, shuffle=False, lr=1.0, schedule=lambda k: 1.0 -
            0.9 * k / 100`` (its penalty sums the squares of every parameter, biases too).
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
    spec = model_loss_spec(loss, model, "train(model, ...)")
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
