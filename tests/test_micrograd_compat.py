"""micrograd code runs on micrograph by changing only the import, with micrograd's numbers.

Two programs from micrograd's repository are run as text, once with ``micrograd`` (0.1.0, from PyPI) and
once with the import changed to ``micrograph``: the README example and the training loop of
``demo.ipynb`` (MLP(2, [16, 16, 1]) on 100 two-moons points, max-margin loss, L2, SGD with a decaying
learning rate, NumPy arrays as inputs). scikit-learn is not a dependency: ``make_moons`` is provided to both
runs by :func:`micrograph.datasets.moons` (seeded from NumPy's generator, as scikit-learn's is).

micrograd is slow (seconds per demo step on a shared machine), so the demo is compared for the first
``MICROGRAPH_COMPAT_STEPS`` steps (2 by default; set it to 100 for the whole run, about 10 minutes).
"""

from __future__ import annotations

import contextlib
import io
import os
import re

import numpy as np
import pytest

pytest.importorskip("micrograd")

from micrograph import datasets

README_EXAMPLE = """
from micrograd.engine import Value

a = Value(-4.0)
b = Value(2.0)
c = a + b
d = a * b + b**3
c += c + 1
c += 1 + c + (-a)
d += d * 2 + (b + a).relu()
d += 3 * d + (b - a).relu()
e = c - d
f = e**2
g = f / 2.0
g += 10.0 / f
print(f'{g.data:.4f}') # prints 24.7041, the outcome of this forward pass
g.backward()
print(f'{a.grad:.4f}') # prints 138.8338, i.e. the numerical value of dg/da
print(f'{b.grad:.4f}') # prints 645.5773, i.e. the numerical value of dg/db
"""

# demo.ipynb, cells 1-6 (plots left out); `from sklearn.datasets import make_moons, make_blobs` is replaced
# by the make_moons below, for both runs.
DEMO = """
import random
import numpy as np
import matplotlib.pyplot as plt
from micrograd.engine import Value
from micrograd.nn import Neuron, Layer, MLP

np.random.seed(1337)
random.seed(1337)

# make up a dataset
X, y = make_moons(n_samples=100, noise=0.1)

y = y*2 - 1 # make y be -1 or 1

# initialize a model
model = MLP(2, [16, 16, 1]) # 2-layer neural network
print(model)
print("number of parameters", len(model.parameters()))

# loss function
def loss(batch_size=None):

    # inline DataLoader :)
    if batch_size is None:
        Xb, yb = X, y
    else:
        ri = np.random.permutation(X.shape[0])[:batch_size]
        Xb, yb = X[ri], y[ri]
    inputs = [list(map(Value, xrow)) for xrow in Xb]

    # forward the model to get scores
    scores = list(map(model, inputs))

    # svm "max-margin" loss
    losses = [(1 + -yi*scorei).relu() for yi, scorei in zip(yb, scores)]
    data_loss = sum(losses) * (1.0 / len(losses))
    # L2 regularization
    alpha = 1e-4
    reg_loss = alpha * sum((p*p for p in model.parameters()))
    total_loss = data_loss + reg_loss

    # also get accuracy
    accuracy = [(yi > 0) == (scorei.data > 0) for yi, scorei in zip(yb, scores)]
    return total_loss, sum(accuracy) / len(accuracy)

total_loss, acc = loss()
print(total_loss, acc)

# optimization
for k in range(100):

    # forward
    total_loss, acc = loss()

    # backward
    model.zero_grad()
    total_loss.backward()

    # update (sgd)
    learning_rate = 1.0 - 0.9*k/100
    for p in model.parameters():
        p.data -= learning_rate * p.grad

    if k % 1 == 0:
        print(f"step {k} loss {total_loss.data}, accuracy {acc*100}%")
"""

STEPS = int(os.environ.get("MICROGRAPH_COMPAT_STEPS", "2"))


def make_moons(n_samples: int = 100, noise: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's make_moons stand-in: NumPy arrays, seeded from NumPy's global generator."""
    X, y = datasets.moons(n_samples, noise=noise, seed=int(np.random.randint(2**31 - 1)))
    return np.array(X), np.array(y)


def with_micrograph(source: str) -> str:
    """The program with only its imports changed from micrograd to micrograph."""
    assert source.count("micrograd") == source.count("from micrograd.")
    return source.replace("from micrograd.", "from micrograph.")


class _Stop(Exception):
    pass


def run(source: str, steps: int | None = None) -> tuple[list[str], dict]:
    """Execute a program; return what it printed (one string per print) and its namespace.

    With ``steps``, stop once the program has printed that many "step k ..." lines.
    """
    printed: list[str] = []

    def fake_print(*args, **kw):
        buf = io.StringIO()
        print(*args, file=buf, **kw)
        printed.append(buf.getvalue().rstrip("\n"))
        if steps is not None and sum(line.startswith("step ") for line in printed) >= steps:
            raise _Stop

    namespace = {"print": fake_print, "make_moons": make_moons, "__name__": "__compat__"}
    with contextlib.suppress(_Stop):
        exec(compile(source, "<micrograd program>", "exec"), namespace)
    return printed, namespace


def test_readme_example_prints_micrograds_numbers():
    expected = ["24.7041", "138.8338", "645.5773"]
    assert run(README_EXAMPLE)[0] == expected  # micrograd itself
    printed, ns = run(with_micrograph(README_EXAMPLE))
    assert printed == expected
    from micrograph.engine import Value

    assert type(ns["g"]) is Value


STEP = re.compile(r"^step (\d+) loss ([-+0-9.e]+), accuracy ([0-9.]+)%$")


def parse(printed: list[str]) -> tuple[list[str], float, list[tuple[int, float, float]]]:
    steps = [(int(m[1]), float(m[2]), float(m[3])) for m in map(STEP.match, printed) if m]
    initial = float(re.search(r"data=([-+0-9.e]+)", printed[2])[1])  # print(total_loss, acc)
    return printed[:2], initial, steps


@pytest.mark.slow
def test_demo_training_loop_matches_micrograd_step_by_step():
    mg_printed, mg_ns = run(DEMO, steps=STEPS)
    ours_printed, ours_ns = run(with_micrograph(DEMO), steps=STEPS)
    mg_head, mg_initial, mg_steps = parse(mg_printed)
    head, initial, steps = parse(ours_printed)
    assert head == mg_head  # the model's repr and "number of parameters 337"
    assert head[1] == "number of parameters 337"
    assert initial == pytest.approx(mg_initial, rel=1e-9)
    assert len(steps) == len(mg_steps) == STEPS
    for (k, loss, acc), (mk, mloss, macc) in zip(steps, mg_steps, strict=True):
        assert k == mk
        assert loss == pytest.approx(mloss, rel=1e-9, abs=1e-12), f"step {k}"
        assert acc == macc, f"step {k}"
    # after the same updates, the same weights
    ours = [p.data for p in ours_ns["model"].parameters()]
    theirs = [float(p.data) for p in mg_ns["model"].parameters()]
    assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-12)


def test_demo_initial_weights_are_micrograds():
    import random

    from micrograd.nn import MLP as MicrogradMLP

    from micrograph.nn import MLP

    random.seed(1337)
    theirs = MicrogradMLP(2, [16, 16, 1])
    random.seed(1337)
    ours = MLP(2, [16, 16, 1])
    assert [p.data for p in ours.parameters()] == [p.data for p in theirs.parameters()]
    assert repr(ours) == repr(theirs)
    x = [0.3, -1.2]
    assert ours(x).data == theirs(x).data  # the same graph shape: the same float operations in order


def test_micrograd_style_neuron_and_layer():
    import random

    from micrograd import nn as mnn

    from micrograph import nn

    for cls_args in [("Neuron", (3,), {}), ("Neuron", (3,), {"nonlin": False}), ("Layer", (3, 4), {}),
                     ("Layer", (2, 1), {"nonlin": False})]:  # fmt: skip
        name, args, kw = cls_args
        random.seed(7)
        theirs = getattr(mnn, name)(*args, **kw)
        random.seed(7)
        ours = getattr(nn, name)(*args, **kw)
        assert repr(ours) == repr(theirs)
        assert [p.data for p in ours.parameters()] == [p.data for p in theirs.parameters()]
        x = [0.5, -2.0, 1.5][: args[0]]
        out_t, out_o = theirs(x), ours(x)
        if isinstance(out_t, list):
            assert [o.data for o in out_o] == [o.data for o in out_t]
        else:
            assert out_o.data == out_t.data
