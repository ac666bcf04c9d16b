"""Training: real results on Iris, two moons and Wine; the SGD loop's mechanics; bad input.

The three real-data tests train for real (seeded, so the numbers are stable).
"""

from __future__ import annotations

import math
import random

import pytest
from micrograd_programs import demo_step

from micrograph import Value, datasets, nn
from micrograph import train as train_module

# --- real results ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_iris_held_out_accuracy():
    X, y = datasets.iris()
    train, test = datasets.split(X, y, test_fraction=0.3, seed=0)
    train, test = datasets.standardize(train, test)
    model = nn.MLP(4, [8, 3], activation="tanh", seed=0)
    history = nn.train(model, train, loss="cross_entropy", l2=1e-4, lr=0.1, epochs=20, batch_size=16, seed=0,
                       test=test, progress=False)  # fmt: skip
    assert nn.accuracy(model, test) >= 0.9
    assert history.test_accuracy[-1] == nn.accuracy(model, test)
    assert history.loss[-1] < history.loss[0] / 3
    assert len(history.loss) == len(history.test_loss) == history.epochs == 20
    assert history.steps == 20 * math.ceil(105 / 16)


def demo_loop(model: nn.MLP, X: list[list[float]], y: list[int], steps: int) -> list[float]:
    """micrograd's demo.ipynb training loop, written against micrograph (the loss of each step)."""
    step = demo_step(Value, model, X, [yi * 2 - 1 for yi in y])
    return [step(k) for k in range(steps)]


@pytest.mark.slow
def test_two_moons_reaches_training_accuracy_1_with_micrograds_demo_recipe():
    # micrograd's demo: MLP(2, [16, 16, 1]) with the global generator seeded 1337, max-margin loss, 1e-4 L2
    # on every parameter, full-batch SGD for 100 steps with lr = 1.0 - 0.9 k / 100. The 100 steps replay the
    # compiled loss graph (compile=True: the same numbers as the eager path to 1e-9, in a fraction of its
    # time); the first steps of the eager path are checked against micrograd's loop below.
    X, y = datasets.moons(100, noise=0.1, seed=1)
    random.seed(1337)
    model = nn.MLP(2, [16, 16, 1])
    history = nn.train(model, (X, y), loss="hinge", l2=1e-4, decay_biases=True, lr=1.0,
                       schedule=lambda k: 1.0 - 0.9 * k / 100, epochs=100, batch_size=None, shuffle=False,
                       progress=False, compile=True)  # fmt: skip
    assert nn.accuracy(model, (X, y)) == 1.0
    assert history.accuracy[-1] == 1.0
    assert history.lr[0] == 1.0 and history.lr[-1] == pytest.approx(1.0 - 0.9 * 99 / 100)
    assert history.loss[-1] < 0.02 and history.loss[0] > 0.5


@pytest.mark.slow
def test_train_is_micrograds_demo_loop():
    X, y = datasets.moons(100, noise=0.1, seed=1)
    random.seed(1337)
    model = nn.MLP(2, [16, 16, 1])
    random.seed(1337)
    twin = nn.MLP(2, [16, 16, 1])
    history = nn.train(model, (X, y), loss="hinge", l2=1e-4, decay_biases=True, lr=1.0,
                       schedule=lambda k: 1.0 - 0.9 * k / 100, epochs=2, shuffle=False,
                       progress=False)  # fmt: skip
    assert history.loss == pytest.approx(demo_loop(twin, X, y, 2), rel=1e-12)
    assert params(model) == pytest.approx(params(twin), rel=1e-12, abs=1e-15)


@pytest.mark.slow
def test_wine_held_out_accuracy_after_standardisation():
    X, y = datasets.wine()
    train, test = datasets.split(X, y, test_fraction=0.3, seed=0)
    train, test = datasets.standardize(train, test)
    model = nn.MLP(13, [8, 3], activation="tanh", init="glorot", seed=0)
    nn.train(model, train, loss="cross_entropy", l2=1e-4, lr=0.1, epochs=5, batch_size=16, seed=0,
             progress=False)  # fmt: skip
    assert nn.accuracy(model, test) >= 0.9


# --- mechanics ------------------------------------------------------------------------------------


def tiny():
    X, y = datasets.moons(24, noise=0.1, seed=3)
    return X, y


def params(model):
    return [p.data for p in model.parameters()]


def test_one_step_is_plain_sgd():
    X, y = tiny()
    model = nn.MLP(2, [3, 1], seed=1)
    before = params(model)
    ref = nn.MLP(2, [3, 1], seed=1)
    J, _ = train_module._objective(ref, X, y, nn.LOSSES["mse"], 0.0, 0.0, False)
    J.backward()
    nn.train(model, (X, y), loss="mse", lr=0.05, epochs=1, shuffle=False, progress=False)
    assert params(model) == pytest.approx(
        [b - 0.05 * p.grad for b, p in zip(before, ref.parameters(), strict=True)]
    )


def test_momentum_accumulates_velocity():
    X, y = tiny()
    m0 = nn.MLP(2, [3, 1], seed=1)
    m1 = nn.MLP(2, [3, 1], seed=1)
    start = params(m0)
    nn.train(m0, (X, y), loss="mse", lr=0.05, epochs=2, shuffle=False, progress=False)
    nn.train(m1, (X, y), loss="mse", lr=0.05, epochs=2, momentum=0.9, shuffle=False, progress=False)
    # the first step is the same; the second moves further with momentum (v2 = 0.9 v1 - eps g2)
    assert params(m0) != params(m1)
    step0 = [abs(a - b) for a, b in zip(params(m0), start, strict=True)]
    step1 = [abs(a - b) for a, b in zip(params(m1), start, strict=True)]
    assert sum(step1) > sum(step0)


def test_momentum_formula_on_a_single_weight():
    # one weight w, one example x = 1, target 0, mse: J = w^2, g = 2w; v <- a v - eps g; w <- w + v
    model = nn.MLP(1, [1], seed=0)
    model.layers[0].neurons[0].w[0].data = 1.0
    nn.train(model, ([[1.0]], [[0.0]]), loss="mse", lr=0.1, momentum=0.5, epochs=2, progress=False)
    w, v = 1.0, 0.0
    b, vb = 0.0, 0.0
    for _ in range(2):
        g = 2 * (w + b)
        v = 0.5 * v - 0.1 * g
        vb = 0.5 * vb - 0.1 * g
        w, b = w + v, b + vb
    assert params(model) == pytest.approx([w, b], rel=1e-12)


def test_schedule_by_step_and_by_epoch():
    X, y = tiny()
    seen: list[int] = []

    def schedule(k: int) -> float:
        seen.append(k)
        return 1.0 / (1 + k)

    h = nn.train(nn.MLP(2, [3, 1], seed=0), (X, y), loss="hinge", lr=0.5, epochs=3, batch_size=10,
                 schedule=schedule, progress=False)  # fmt: skip
    assert seen == list(range(9)) and h.steps == 9  # 3 batches per epoch (10, 10, 4)
    assert h.lr == pytest.approx([0.5 / 3, 0.5 / 6, 0.5 / 9])
    seen.clear()
    h = nn.train(nn.MLP(2, [3, 1], seed=0), (X, y), loss="hinge", lr=0.5, epochs=3, batch_size=10,
                 schedule=schedule, schedule_by="epoch", progress=False)  # fmt: skip
    assert seen == [0, 0, 0, 1, 1, 1, 2, 2, 2] and h.lr == pytest.approx([0.5, 0.25, 0.5 / 3])


def test_shuffling_is_seeded():
    X, y = tiny()
    runs = []
    for seed in (5, 5, 6):
        model = nn.MLP(2, [4, 1], seed=0)
        nn.train(model, (X, y), loss="hinge", lr=0.1, epochs=2, batch_size=5, seed=seed, progress=False)
        runs.append(params(model))
    assert runs[0] == runs[1] and runs[0] != runs[2]


def test_history_with_and_without_test_data():
    X, y = datasets.moons(40, seed=1)
    (Xtr, ytr), (Xte, yte) = datasets.split(X, y, seed=1)
    h = nn.train(nn.MLP(2, [4, 1], seed=0), (Xtr, ytr), loss="binary_cross_entropy", lr=0.3, epochs=4,
                 batch_size=8, progress=False)  # fmt: skip
    assert len(h.loss) == len(h.accuracy) == len(h.lr) == 4 and h.test_loss == h.test_accuracy == []
    assert all(0 <= a <= 1 for a in h.accuracy)
    model = nn.MLP(2, [4, 1], seed=0)
    h = nn.train(model, (Xtr, ytr), loss="binary_cross_entropy", lr=0.3, epochs=4, batch_size=8,
                 test=(Xte, yte), progress=False)  # fmt: skip
    assert len(h.test_loss) == len(h.test_accuracy) == 4
    assert h.test_accuracy[-1] == nn.accuracy(model, (Xte, yte), loss="binary_cross_entropy")
    # the held-out loss is the same objective J = mean L + lambda Omega, evaluated on the test set
    expected = sum(nn.binary_cross_entropy(model(x), t).data for x, t in zip(Xte, yte, strict=True)) / len(
        Xte
    )
    assert h.test_loss[-1] == pytest.approx(expected, rel=1e-12)


def test_l1_and_weight_decay_shrink_weights():
    X, y = tiny()
    norms = []
    for kw in ({}, {"l2": 0.5}, {"l1": 0.05}):
        model = nn.MLP(2, [6, 1], seed=0)
        nn.train(model, (X, y), loss="hinge", lr=0.1, epochs=15, progress=False, **kw)
        norms.append(sum(abs(w.data) for w in nn.weights(model)))
    assert norms[1] < norms[0] and norms[2] < norms[0]


def test_numpy_inputs_are_accepted():
    np = pytest.importorskip("numpy")
    X, y = tiny()
    model = nn.MLP(2, [3, 1], seed=0)
    nn.train(model, (np.array(X), np.array(y)), loss="hinge", lr=0.1, epochs=1, progress=False)
    assert nn.accuracy(model, (np.array(X), np.array(y))) == nn.accuracy(model, (X, y))


def test_progress_bar_on_stderr_and_off(capsys):
    X, y = tiny()
    nn.train(nn.MLP(2, [3, 1], seed=0), (X, y), loss="hinge", lr=0.1, epochs=2, progress=True)
    err = capsys.readouterr().err
    assert "train" in err and "epoch" in err
    nn.train(nn.MLP(2, [3, 1], seed=0), (X, y), loss="hinge", lr=0.1, epochs=2, progress=False)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("compiled", [False, True])
def test_divergence_names_the_epoch_and_step(compiled):
    X, y = tiny()
    model = nn.MLP(2, [8, 8, 1], seed=0)
    with pytest.raises(
        nn.TrainingError, match=r"diverged at epoch 1 of 5, step 2 \(batch 2 of this epoch\)"
    ) as info:
        nn.train(model, (X, y), loss="mse", lr=1e200, epochs=5, batch_size=12, shuffle=False, progress=False,
                 compile=compiled)  # fmt: skip
    assert (info.value.epoch, info.value.step, info.value.batch) == (1, 2, 2)


def test_compiled_training_follows_the_eager_path():
    X, y = tiny()
    runs = []
    for compiled in (False, True):
        model = nn.MLP(2, [4, 1], seed=0)
        h = nn.train(model, (X, y), loss="hinge", lr=0.1, l2=1e-3, epochs=3, batch_size=8, progress=False,
                     compile=compiled)  # fmt: skip
        runs.append((h.loss, params(model)))
    assert runs[1][0] == pytest.approx(runs[0][0], rel=1e-9)
    assert runs[1][1] == pytest.approx(runs[0][1], rel=1e-9, abs=1e-12)


# --- bad input ------------------------------------------------------------------------------------


def good(**kw):
    X, y = datasets.moons(10, seed=0)
    args = {"loss": "hinge", "lr": 0.1, "epochs": 1, "progress": False}
    args.update(kw)
    data = args.pop("data", (X, y))
    model = args.pop("model", nn.MLP(2, [3, 1], seed=0))
    return nn.train(model, data, **args)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"data": ([[1.0, 2.0, 3.0]], [1])}, r"the model takes 2 features per example, got 3"),
        ({"data": ([[1.0, 2.0]], [2])}, r"label 0: labels for hinge must be in \[-1.0, 0.0, 1.0\], got 2"),
        ({"data": ([[1.0, 2.0]], [5]), "loss": "cross_entropy", "model": nn.MLP(2, [3], seed=0)},
         r"labels must be class indices 0\.\.2 for 3 outputs, got 5"),
        ({"data": ([], [])}, r"train is empty \(0 examples\)"),
        ({"data": ([[1.0, 2.0]], [])}, r"X has 1 examples but y has 0 labels"),
        ({"batch_size": 0}, r"batch_size must be a positive integer, got 0"),
        ({"batch_size": 2.5}, r"batch_size must be a positive integer, got 2.5"),
        ({"lr": 0}, r"the learning rate must be a positive finite number, got 0"),
        ({"lr": -0.1}, r"the learning rate must be a positive finite number, got -0.1"),
        ({"lr": "0.1"}, r"the learning rate must be a positive finite number, got '0.1'"),
        ({"lr": float("nan")}, r"the learning rate must be a positive finite number, got nan"),
        ({"lr": True}, r"the learning rate must be a positive finite number, got True"),
        ({"epochs": 0}, r"epochs must be a positive integer, got 0"),
        ({"momentum": 1.0}, r"momentum must be a number in \[0, 1\), got 1.0"),
        ({"l2": -1e-4}, r"l2 must be a finite number >= 0, got -0.0001"),
        ({"schedule": lambda k: -1.0}, r"schedule\(0\) at step 0 must be a finite number >= 0, got -1.0"),
        ({"schedule": 0.5}, r"schedule must be a callable"),
        ({"loss": "cross_entropy"}, r"labels must be class indices 0\.\.0 for 1 outputs"),
        ({"loss": "nll"}, r"loss must be one of .*, got 'nll'"),
        ({"test": ([[1.0]], [0])}, r"test=\(X, y\)\), example 0: the model takes 2 features per example"),
        ({"data": ([[1.0, float("inf")]], [1])}, r"features must be finite numbers, got inf"),
    ],
)  # fmt: skip
def test_bad_input_names_the_argument_and_value(kw, message):
    with pytest.raises(ValueError, match=message):
        good(**kw)


def test_accuracy_bad_input():
    model = nn.MLP(2, [3], seed=0)
    with pytest.raises(ValueError, match=r"data is empty"):
        nn.accuracy(model, ([], []))
    with pytest.raises(ValueError, match=r"labels must be class indices 0\.\.2 for 3 outputs, got 3"):
        nn.accuracy(model, ([[0.0, 1.0]], [3]))
