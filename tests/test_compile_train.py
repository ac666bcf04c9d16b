"""Training on compiled graphs (``nn.train(..., compile=True)``) gives eager training's losses and weights.

Each model is trained twice from the same weights, eagerly (graphs built every step, micrograd's way) and
compiled (one example's graph compiled once, replayed): the losses, accuracies and final weights agree.
"""

from __future__ import annotations

import math


def _train_both(make: object, data: tuple[list[list[float]], list[object]], **kw: object) -> None:
    from micrograph import nn

    runs = []
    for compiled in (False, True):
        model = make()  # type: ignore[operator]
        history = nn.train(model, data, progress=False, compile=compiled, **kw)  # type: ignore[arg-type]
        runs.append((history, [p.data for p in model.parameters()]))
    (h_eager, p_eager), (h_comp, p_comp) = runs
    for a, b in zip(h_eager.loss + h_eager.accuracy, h_comp.loss + h_comp.accuracy):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), (a, b)
    assert len(h_comp.loss) == len(h_eager.loss)
    for a, b in zip(p_eager, p_comp):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), (a, b)


def test_train_compiled_equals_eager_micrograd_demo_shape() -> None:
    from micrograph import datasets, nn

    X, y = datasets.moons(n=30, noise=0.1, seed=0)
    y_pm = [2.0 * t - 1.0 for t in y]
    _train_both(
        lambda: nn.MLP(2, [8, 8, 1], seed=1), (X, y_pm), loss="hinge", lr=1.0, epochs=3, l2=1e-4,
        schedule=lambda k: 1.0 - 0.9 * k / 100, shuffle=False,
    )  # fmt: skip


def test_train_compiled_equals_eager_cross_entropy_momentum_l1_minibatches() -> None:
    from micrograph import datasets, nn

    X, y = datasets.iris()
    _train_both(
        lambda: nn.MLP(4, [6, 3], seed=2), (X[::3], y[::3]), loss="cross_entropy", lr=0.05, epochs=2,
        batch_size=16, momentum=0.9, l2=1e-3, l1=1e-4,
    )  # fmt: skip


def test_train_compiled_equals_eager_with_many_real_valued_mse_targets() -> None:
    from micrograph import nn

    X = [[0.1 * i, 0.05 * i * i - 0.3] for i in range(24)]
    y = [0.5 * x0 - x1 + 0.01 * i for i, (x0, x1) in enumerate(X)]  # 24 distinct targets: some compiled
    _train_both(
        lambda: nn.MLP(2, [5, 1], activation="tanh", seed=3), (X, y), loss="mse", lr=0.05, epochs=2,
        batch_size=8, l2=1e-3,
    )  # fmt: skip


def test_train_compiled_equals_eager_when_the_loss_picks_its_formula_from_values() -> None:
    # binary cross-entropy builds softplus(z) as log(1 + exp(z)) when z <= 0 and z + log(1 + exp(-z))
    # otherwise: a graph compiled at z <= 0 overflows at z = 800, where the eager step is fine
    from micrograph import nn

    X = [[800.0], [-800.0], [0.5], [-0.25]]
    y = [1, 0, 1, 0]

    def make() -> nn.MLP:
        model = nn.MLP(1, [1], seed=0)
        model.layers[0].neurons[0].w[0].data = 1.0
        model.layers[0].neurons[0].b.data = 0.0
        return model

    _train_both(make, (X, y), loss="binary_cross_entropy", lr=1e-3, epochs=2, shuffle=False)
