"""micrograd's own programs as text, and a runner: what tests/test_micrograd_compat.py runs with micrograd and
with micrograph, and tests/test_engine.py with micrograph alone (micrograd is not needed to import this).

The README example and the training loop of ``demo.ipynb``; ``make_moons`` stands in for scikit-learn's.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from typing import Any

import numpy as np

from micrograph import datasets

# micrograd's README example, literally
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


ALPHA = 1e-4
"""The demo's L2 weight."""


def demo_step(Value: Any, model: Any, X: list[list[float]], Y: list[float]) -> Callable[[int], float]:
    """micrograd's demo step, verbatim but for the imports (``Value`` and ``model`` come from the engine)."""

    def step(k: int) -> float:
        inputs = [list(map(Value, xrow)) for xrow in X]
        scores = list(map(model, inputs))
        losses = [(1 + -yi * scorei).relu() for yi, scorei in zip(Y, scores)]
        data_loss = sum(losses) * (1.0 / len(losses))
        reg_loss = ALPHA * sum(p * p for p in model.parameters())
        total_loss = data_loss + reg_loss
        model.zero_grad()
        total_loss.backward()
        learning_rate = 1.0 - 0.9 * k / 100
        for p in model.parameters():
            p.data -= learning_rate * p.grad
        return float(total_loss.data)

    return step
