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

import os
import re

import pytest

pytest.importorskip("micrograd")

from micrograd_programs import DEMO, README_EXAMPLE, run, with_micrograph

STEPS = int(os.environ.get("MICROGRAPH_COMPAT_STEPS", "2"))


def test_readme_example_prints_micrograds_numbers():
    expected = ["24.7041", "138.8338", "645.5773"]
    assert run(README_EXAMPLE)[0] == expected  # micrograd itself (micrograph: tests/test_engine.py)
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
