"""Lesson 5: the MLP: Algorithms 6.3 and 6.4 on one Iris example, then training on Iris with the loss curve.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4, Algorithms 6.3 and 6.4.
Data: R. A. Fisher (1936), the Iris flowers (shipped as micrograph/data/iris.csv).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from typing import Any

import viz
from lessons.engine_lines import Bound, EngineLines
from lessons.step import Ours, Step
from micrograph import Graph, datasets, nn, pseudocode
from viz.words import fmt, table

__all__ = ["steps"]

LINES = {
    "data": Ours("x: 4 measurements of a flower (cm); y: its species, 0, 1 or 2"),
    "forward": pseudocode.ALGORITHM_6_3.line(5, 12),
    "backward": pseudocode.ALGORITHM_6_4.text,
    "train": Ours("repeat: sample a minibatch, J = mean L + λΩ(θ), back-propagate, θ ← θ − ε ∇_θ J"),
    "test": Ours("accuracy on examples never trained on"),
}

HIDDEN, LAMBDA, EPOCHS, LR, BATCH = 8, 1e-3, 60, 0.1, 16


def _data(l: Any) -> None:
    X, y = datasets.iris()  # 150 flowers, 4 features in cm, 3 species
    l.train, l.test = datasets.split(X, y, test_fraction=0.3, seed=0)
    l.train, l.test = datasets.standardize(l.train, l.test)  # mean 0, variance 1, fitted on train only
    l.model = nn.MLP(4, [HIDDEN, 3], activation="tanh", seed=0)  # W(1): 8 x 4, W(2): 3 x 8
    l.x, l.y = l.train[0][0], l.train[1][0]  # one example


def _data_text(l: Any) -> str:
    return (
        f"Iris: {len(l.train[0])} flowers to train on, {len(l.test[0])} held out, each 4 measurements "
        f"(standardized) and a species. The network is MLP(4, [{HIDDEN}, 3]): l = "
        f"{len(l.model.layers)} layers, tanh "
        "in the hidden "
        f"layer, a linear output giving 3 scores; {len(l.model.parameters())} parameters. Our example: "
        f"x = ({', '.join(fmt(v) for v in l.x)}), species y = {l.y}."
    )


def _forward(l: Any) -> None:
    l.fw = nn.forward_mlp(l.model, l.x, l.y, l2=LAMBDA)  # Algorithm 6.3, keeping a(k) and h(k)
    l.J = l.fw.J
    l.graph = Graph(l.J)


def _forward_text(l: Any) -> str:
    fw = l.fw
    scores = [v.data for v in fw.y_hat]
    top = max(scores)
    p = [math.exp(s - top) for s in scores]
    p = [q / sum(p) for q in p]
    return (
        f"Algorithm 6.3 on the example: a(1) has {len(fw.a[1])} entries (first {fmt(fw.a[1][0].data)}), "
        f"h(1) = tanh(a(1)) (first {fmt(fw.h[1][0].data)}), and y_hat = h(2) = a(2) = "
        f"({', '.join(fmt(s) for s in scores)}), scores whose softmax gives probabilities "
        f"({', '.join(fmt(q) for q in p)}) for the species. L = {fmt(fw.loss.data)} (cross-entropy: "
        f"-log of the probability of y = {l.y}), lambda Omega = "
        f"{fmt(fw.penalty.data if fw.penalty else 0.0)} "
        f"(lambda = {LAMBDA} times the sum of squared weights), J = {fmt(l.J.data)}. As a graph: "
        f"{len(l.graph.nodes)} scalar nodes, {l.graph.num_edges} edges: too many to read one by one, so "
        "the picture draws them as the network is drawn, one box per layer with its a(k) and h(k) "
        "(viz.draw(l.J, level='layers'); level='neurons' gives one box per neuron). The nodes know their "
        "layer and neuron: Algorithm 6.3 built them."
    )


def _backward(l: Any) -> None:
    l.grads_6_4 = nn.backward_mlp(l.fw)  # Algorithm 6.4, layer by layer, on Algorithm 6.3's record
    l.grad_table = l.graph.backprop()  # Algorithm 6.2 on the graph of J
    params = l.model.parameters()
    l.worst = max(abs(l.grads_6_4[p] - l.grad_table[p]) for p in params)


def _backward_text(l: Any) -> str:
    w11 = l.model.layers[0].neurons[0].w[0]
    b2 = l.model.layers[1].neurons[0].b
    return (
        f"Algorithm 6.4 walks the layers from k = {len(l.model.layers)} down to 1 with a vector g, "
        "and gives the gradient on "
        f"every weight and bias: for instance dJ/dW(1)[0,0] = {fmt(l.grads_6_4[w11])} and dJ/db(2)[0] = "
        f"{fmt(l.grads_6_4[b2])}. Algorithm 6.2 on the scalar graph of J, knowing nothing about "
        "layers, gives "
        f"{fmt(l.grad_table[w11])} and {fmt(l.grad_table[b2])}. Over all {len(l.grads_6_4)} parameters the "
        f"largest difference is {l.worst:.1e}: rounding. Algorithm 6.4 is Algorithm 6.2 specialised to a "
        "chain of layers. The picture shows the network by neurons, each box with its a, h and their "
        "grad_table entries from Algorithm 6.2, and hidden unit h1[0] opened into its scalars "
        "(viz.draw(l.J, level='neurons', grad_table=l.grad_table, expand=[l.fw.h[1][0]]))."
    )


def _kept(run: Callable[[Any], None]) -> Callable[[Any], None]:
    """A step that runs once per lesson: replays (``l.back()``, ``l.goto(k)``) restore what it left in ``l``.

    The code shown for the step stays ``run``'s own (``functools.wraps``: ``inspect`` reads the original).
    """

    @functools.wraps(run)
    def replay(l: Any) -> None:
        key = f"_kept:{run.__name__}"
        if key not in l.memo:
            before = dict(vars(l))
            run(l)
            l.memo[key] = {k: v for k, v in vars(l).items() if k not in before or before[k] is not v}
        for k, v in l.memo[key].items():
            setattr(l, k, v)

    return replay


@_kept  # training takes a few seconds: l.back() does not train again
def _train(l: Any) -> None:
    l.net = nn.MLP(4, [HIDDEN, 3], activation="tanh", seed=0)  # a new network
    # minibatch SGD: per batch Algorithm 6.3, J.backward(), theta <- theta - epsilon grad J
    l.history = nn.train(
        l.net, l.train, loss="cross_entropy", lr=LR, epochs=EPOCHS,
        batch_size=BATCH, l2=LAMBDA, seed=0, test=l.test, progress=False,
    )  # fmt: skip
    l.plot = viz.charts.training(l.history, title="Iris: MLP(4, [8, 3])")


def _train_text(l: Any) -> str:
    h, steps = l.history, EPOCHS * math.ceil(len(l.train[0]) / BATCH)
    return (
        f"nn.train(model, data, lr={LR}, epochs={EPOCHS}, batch_size={BATCH}, l2={LAMBDA}, seed=0) is "
        f"minibatch SGD: {EPOCHS} epochs; each shuffles the {len(l.train[0])} flowers and takes them in "
        f"batches of {BATCH}. Its lines below: for each batch, the batch step runs Algorithm 6.3 on the "
        f"examples, builds J = mean L + lambda Omega with lambda = {LAMBDA} as above, zeroes the gradients "
        f"and back-propagates (J.backward(), Algorithm 6.2); the loop then moves every parameter by "
        f"-{LR} times its gradient: {steps} updates. J fell from {fmt(h.loss[0])} in the first epoch to "
        f"{fmt(h.loss[-1])} in the last; training accuracy {h.accuracy[-1]:.3f} (each batch scored before "
        f"its update)."
    )


def _test(l: Any) -> None:
    l.test_accuracy = nn.accuracy(l.net, l.test)
    l.train_accuracy = nn.accuracy(l.net, l.train)


def _test_text(l: Any) -> str:
    wrong = round((1 - l.test_accuracy) * len(l.test[0]))
    return (
        f"On the {len(l.test[0])} held-out flowers, never used for training: accuracy {l.test_accuracy:.3f} "
        f"({wrong} wrong); on the training flowers {l.train_accuracy:.3f}. micrograph train iris --hidden "
        f"{HIDDEN} --epochs {EPOCHS} --l2 {LAMBDA:g} --out iris/ runs the same from the shell, to the same "
        f"numbers."
    )


def _engine_data(l: Any) -> EngineLines:
    m = l.model
    return EngineLines(
        "micrograph.mlp:MLP.__init__",
        "sz = [nin, *widths]",
        "self.layers.append(layer)",
        (
            Bound("sz = [nin, *widths]", "sz", ([m.nin, *m.nouts],)),
            Bound("layer = Layer(", "len(layer.neurons)", tuple(len(k.neurons) for k in m.layers)),
        ),
        caption=f"MLP({m.nin}, {m.nouts})",
    )


def _engine_forward(l: Any) -> list[EngineLines]:
    fw = l.fw
    return [
        EngineLines(
            "micrograph.mlp_forward:_example",
            "x_leaves = [Value(v",
            'L.label = "L"',
            (
                Bound("a_k = [n.preactivation", "len(a_k)", tuple(len(a) for a in fw.a[1:])),
                Bound('L = tag(spec.fn(h[-1], target), "loss")', "L.data", (fw.loss.data,)),
            ),
            caption="Algorithm 6.3 on one example",
        ),
        EngineLines(
            "micrograph.mlp_forward:forward_mlp",
            "a, h, L = _example(",
            'J.label = "J"',
            (Bound("J = L if penalty is None", "J.data", (l.J.data,)),),
            caption="the cost J = L + lambda Omega",
        ),
    ]


def _engine_backward(l: Any) -> EngineLines:
    return EngineLines(
        "micrograph.mlp_backward:backward_mlp",
        "grads: dict[Value, float] = {}",
        "return grads",
        (
            Bound("for k in range(len(model.layers), 0, -1):", "k", tuple(range(len(l.model.layers), 0, -1))),
            Bound("return grads", "len(grads)", (len(l.grads_6_4),)),
        ),
        caption="Algorithm 6.4, k = l down to 1",
    )


def _engine_train(l: Any) -> list[EngineLines]:
    h, last = l.history, l.net.parameters()[-1]
    return [
        EngineLines(
            "micrograph.train:_graph_batch_fn",
            "J, correct = _objective(",
            "J.backward()",
            (Bound("J.backward()", "len(params)", (len(l.net.parameters()),), last=True),),
            caption="one batch: J, then dJ/dp into every p.grad",
        ),
        EngineLines(
            "micrograph.train:train",
            "total += J",
            "history.loss.append(total / batches)",
            (
                Bound("total += J", "epoch", (h.epochs,), last=True),
                Bound("p.data -= eps * p.grad", "eps", (h.lr[-1],), last=True),
                Bound("p.data -= eps * p.grad", "p", (last,), (last.label,), last=True),
                Bound("p.data -= eps * p.grad", "p.data", (last.data,), last=True),
                Bound("history.loss.append(", "history.loss[-1]", (h.loss[-1],), last=True),
            ),
            caption="the update after each batch, and the epoch's mean J",
        ),
    ]


def _engine_test(l: Any) -> EngineLines:
    return EngineLines(
        "micrograph.train:accuracy",
        "right = 0",
        "return right / len(X)",
        (
            Bound("return right / len(X)", "len(X)", (len(l.test[0]),)),
            Bound("return right / len(X)", "right / len(X)", (l.test_accuracy,)),
        ),
        caption="nn.accuracy on the held-out flowers",
    )


def _values(l: Any) -> str:
    if hasattr(l, "history"):
        h = l.history
        rows = [
            [
                str(e + 1),
                fmt(h.loss[e]),
                f"{h.accuracy[e]:.3f}",
                f"{h.test_accuracy[e]:.3f}" if h.test_accuracy else "",
            ]
            for e in sorted({0, 1, 2, len(h.loss) // 2, len(h.loss) - 1} & set(range(len(h.loss))))
        ]
        return table(rows, ["epoch", "train loss", "train acc", "held-out acc"])
    if hasattr(l, "grads_6_4"):
        rows = []
        for k, layer in enumerate(l.model.layers, 1):
            for name, p in [(f"W({k})[0,0]", layer.neurons[0].w[0]), (f"b({k})[0]", layer.neurons[0].b)]:
                rows.append([name, fmt(p.data), fmt(l.grads_6_4[p]), fmt(l.grad_table[p])])
        return table(rows, ["parameter", "value", "Algorithm 6.4", "Algorithm 6.2"])
    if hasattr(l, "fw"):
        rows = [[f"y_hat[{m}]", fmt(v.data)] for m, v in enumerate(l.fw.y_hat)]
        return table([*rows, ["L", fmt(l.fw.loss.data)], ["J", fmt(l.J.data)]], ["node", "value"])
    return ""


def _figure(l: Any) -> Any:
    if hasattr(l, "plot"):
        return l.plot
    if hasattr(l, "grad_table"):  # by neurons, hidden unit h1[0] opened into its scalars
        return viz.draw(
            l.J,
            level="neurons",
            grad_table=l.grad_table,
            expand=[l.fw.h[1][0]],
            title="J by neurons, hidden unit h1[0] opened: grad_table entries from Algorithm 6.2",
        )
    if hasattr(l, "fw"):  # the scalar graph of J is too big to read: by layers, as a network is drawn
        return viz.draw(l.J, level="layers", grad_table={}, title="Algorithm 6.3: J = L + λΩ(θ), by layers")
    return None


def steps(l: Any) -> Iterator[Step]:
    """The steps of lesson 5 (see :mod:`lessons.step`)."""
    step = Step.showing(_values, _figure)
    yield step("Iris and a small MLP", LINES["data"], _data, _data_text, _engine_data)
    yield step(
        "Algorithm 6.3: forward to the cost J", LINES["forward"], _forward, _forward_text, _engine_forward
    )
    yield step(
        "Algorithm 6.4: back, layer by layer", LINES["backward"], _backward, _backward_text, _engine_backward
    )
    yield step("Training on Iris", LINES["train"], _train, _train_text, _engine_train)
    # its numbers: no new picture
    yield step("Held-out accuracy", LINES["test"], _test, _test_text, _engine_test, figure=None)
