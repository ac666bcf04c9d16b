"""Exercise ``mlp_backward``: Algorithm 6.4, the MLP's backward pass on numbers, layer by layer.

The solution gets one example's forward pass (Algorithm 6.3) as plain numbers, indexed as the book does, and
the activations' derivative ``net.f_prime``; the answer key is :func:`micrograph.nn.backward_mlp`. The
networks have non-zero biases and several λ (zero among them), so a penalty on the biases, or none on the
weights, changes the answer. How the exercise is judged, template and all, is :data:`JUDGING`; its name and
place are a row of :data:`lessons.exercises.judges.TABLE`.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4, Algorithm 6.4.
"""

from __future__ import annotations

import random
import types
from collections.abc import Iterator
from typing import Any

from lessons.exercises import answers
from lessons.exercises.drawing import Mark
from lessons.exercises.exercise import Judging
from lessons.exercises.imports import Imports
from lessons.exercises.judges import mistakes
from lessons.exercises.judges.mistakes import Mistake, failure
from lessons.exercises.schema import plain
from lessons.exercises.verdict import Case, Fail, close, decode, differ, draw, shown
from micrograph import backprop, nn
from micrograph.engine import Value
from micrograph.graph import Graph
from micrograph.ops import op_by_name

__all__ = ["JUDGING", "CODES", "MISTAKES", "cases", "NETS", "mlp_example"]

CODES: tuple[str, ...] = (
    "mutation", "shape", "transposed", "bias-decay", "no-f-prime", "wrong-b", "no-penalty", "penalty-half",
    "wrong-W",
)  # fmt: skip
"""The codes of the mistakes this judge gives, each a row of ``mistakes.toml``'s [mlp_backward] table."""

MISTAKES: dict[str, Mistake] = mistakes.of("mlp_backward", CODES)
"""The mistakes this exercise recognises."""

NETS: list[tuple[str, int, list[int], str, float, int]] = [
    ("MLP(3, [2, 1]), tanh, λ = 0.01", 3, [2, 1], "tanh", 0.01, 1),
    ("MLP(3, [4, 2]), tanh, λ = 0.05", 3, [4, 2], "tanh", 0.05, 2),
    ("MLP(2, [3, 3, 2]), sigmoid, λ = 0.1", 2, [3, 3, 2], "sigmoid", 0.1, 3),
    ("MLP(2, [3, 2]), relu, λ = 0", 2, [3, 2], "relu", 0.0, 4),
]
"""The fixed networks: (title, n_in, layer sizes, activation, λ, seed of the weights and biases)."""


def mlp_example(
    nin: int, nouts: list[int], activation: str, lam: float, seed: int
) -> tuple[dict[str, Any], Any, Any]:
    """A network with non-zero biases and one example through Algorithm 6.3 (MSE loss, L2 penalty λ).

    Returns:
        ``(net, model, forward)``: what the solution receives (plain data), the model, and the forward pass.
    """
    model = nn.MLP(nin, nouts, activation=activation, seed=seed)
    rng = random.Random(seed)
    for layer in model.layers:
        for neuron in layer.neurons:
            neuron.b.data = round(rng.uniform(-0.5, 0.5), 3) or 0.125
    x = [round(0.3 + 0.4 * i, 2) * (-1) ** i for i in range(nin)]
    y = [0.5 - 0.3 * m for m in range(nouts[-1])]
    fwd = nn.forward_mlp(model, x, y, loss="mse", l2=lam)
    table = Graph(fwd.J).backprop()
    activations = [None] + [nn.ACTIVATIONS[layer.neurons[0].activation] for layer in model.layers]
    net = {
        "l": len(model.layers),
        "W": [None] + [[[w.data for w in n.w] for n in layer.neurons] for layer in model.layers],
        "b": [None] + [[n.b.data for n in layer.neurons] for layer in model.layers],
        "a": [None] + [[v.data for v in a_k] for a_k in fwd.a[1:]],
        "h": [[v.data for v in h_k] for h_k in fwd.h],
        "g": [table[v] for v in fwd.y_hat],
        "lam": lam,
        "activations": [None if op is None else op.name for op in activations],
        "x": x,
        "y": y,
    }
    return net, model, fwd


def _layers(result: Any, l: int, what: str) -> dict[int, Any]:  # noqa: E741 -- the book's name
    if isinstance(result, dict):
        return result
    if isinstance(result, list):
        if len(result) == l + 1:
            return dict(enumerate(result))
        if len(result) == l:
            return {k + 1: r for k, r in enumerate(result)}
    raise Fail(
        failure(
            MISTAKES["shape"],
            f"{what} must be a dict {{k: ...}} (or a list indexed by k) for the layers "
            f"k = 1..{l}; got {shown(result)}.",
        )
    )


def _shape(x: Any) -> tuple[int, ...] | None:
    if not isinstance(x, list):
        return None
    if x and all(isinstance(r, list) for r in x):
        widths = {len(r) for r in x}
        return (len(x), widths.pop()) if len(widths) == 1 else None
    return (len(x),)


def _shape_text(x: Any) -> str:
    shape = _shape(x)
    if shape is not None:
        return str(shape)
    return f"no shape: it is {shown(x)}" + (
        " (a list of lists of different lengths)" if isinstance(x, list) else ""
    )


def _wrong(
    graph: Graph, param: Value, code: str, e: float, a: Any, name: tuple[str, str, str], **kw: Any
) -> Fail:
    """The failure of a wrong gradient of ``param``, drawn on J's graph with the right gradients.

    ``name``: the entry (``grad_b[2][0]``), where it is in the network (``layer 2, unit 0``) and the node
    (``b(2)[0]``); ``kw``: the failure's hint and the drawing's marks."""
    entry, place, node = name
    marks = kw.pop("marks", ())
    return Fail(
        failure(
            MISTAKES[code],
            f"{entry} is wrong ({place}): expected {shown(e)}, yours {shown(a)}.",
            node=node,
            expected=e,
            actual=a,
            details=differ(e, a),
            **kw,
            **draw(
                graph,
                wrong=graph.index[param],
                expected=shown(e),
                actual=shown(a),
                marks=marks,
                grads=list(backprop(graph).values()),
                title=f"Algorithm 6.4: {entry} is the first wrong gradient (grad: the right values)",
            ),
        )
    )


def _activation_edge(graph: Graph, fwd: Any, k: int, m: int, text: str) -> tuple[Mark, ...]:
    a_node, h_node = fwd.a[k][m], fwd.h[k][m]
    if a_node is h_node or h_node not in graph.index:
        return ()
    return (Mark(graph.index[a_node], graph.index[h_node], 0, text),)


def _check_b(
    net: dict[str, Any], fwd: Any, key: dict[Value, float], graph: Graph, k: int, bk: Any, layer: Any
) -> None:
    lam = net["lam"]
    for m, neuron in enumerate(layer.neurons):
        e, a = key[neuron.b], bk[m]
        if close(a, e):
            continue
        act = net["activations"][k]
        fp = (
            1.0
            if act is None
            else float(op_by_name(act).local_derivative(0, (net["a"][k][m],), net["h"][k][m]))
        )
        code = "wrong-b"
        marks: tuple[Mark, ...] = ()
        if lam and close(a, e + 2 * lam * neuron.b.data):
            code = "bias-decay"
        elif fp not in (0.0, 1.0) and close(a, e / fp):
            code = "no-f-prime"
            marks = _activation_edge(graph, fwd, k, m, f"f′(a) = {fp:.4g} missing")
        hint = (
            f"multiply g by f′(a({k})) element-wise first." if code == "no-f-prime" else MISTAKES[code].hint
        )
        name = (f"grad_b[{k}][{m}]", f"layer {k}, unit {m}", f"b({k})[{m}]")
        raise _wrong(graph, neuron.b, code, e, a, name, hint=hint, marks=marks)


def _check_W(net: dict[str, Any], key: dict[Value, float], graph: Graph, k: int, Wk: Any, layer: Any) -> None:
    lam = net["lam"]
    for m, neuron in enumerate(layer.neurons):
        for i, w in enumerate(neuron.w):
            e, a = key[w], Wk[m][i]
            if close(a, e):
                continue
            code = "wrong-W"
            if lam and close(a, e - 2 * lam * w.data):
                code = "no-penalty"
            elif lam and close(a, e - lam * w.data):  # ∇W of λ ΣW² written as λ W: the 2 left out
                code = "penalty-half"
            hint = (
                f"add λ ∇W Ω = 2λ W({k}) to g h({k - 1})ᵀ." if code == "no-penalty" else MISTAKES[code].hint
            )
            name = (f"grad_W[{k}][{m}][{i}]", f"layer {k}, row {m}, column {i}", f"W({k})[{m}][{i}]")
            raise _wrong(graph, w, code, e, a, name, hint=hint)


def _compare(
    net: dict[str, Any], model: Any, fwd: Any, key: dict[Value, float], gW: dict[Any, Any], gb: dict[Any, Any]
) -> None:
    graph = Graph(fwd.J)
    for k in range(net["l"], 0, -1):  # Algorithm 6.4's order: k = l, l - 1, ..., 1
        layer = model.layers[k - 1]
        rows, cols = len(layer.neurons), len(net["h"][k - 1])
        Wk, bk = gW.get(k), gb.get(k)
        shape_W = _shape(Wk)
        if shape_W != (rows, cols):
            code = "transposed" if shape_W == (cols, rows) else "shape"
            hint = f"∇W({k}) J = g h({k - 1})ᵀ: entry [m][i] = g[m] × h({k - 1})[i]."
            raise Fail(
                failure(
                    MISTAKES[code],
                    f"grad_W[{k}] has shape {_shape_text(Wk)}; W({k}) is {rows} × {cols} "
                    f"(a row per unit of h({k}), a column per unit of h({k - 1})), and so is its gradient.",
                    hint=hint,
                )
            )
        if _shape(bk) != (rows,):
            raise Fail(
                failure(
                    MISTAKES["shape"],
                    f"grad_b[{k}] has shape {_shape_text(bk)}; b({k}) has {rows} entries.",
                    book="mlp_b",
                )
            )
        _check_b(net, fwd, key, graph, k, bk, layer)
        _check_W(net, key, graph, k, Wk, layer)


def _judge(net: dict[str, Any], model: Any, fwd: Any, key: dict[Value, float]) -> Any:
    def judge(answer: dict[str, Any]) -> None:
        if answer.get("mutation"):
            raise Fail(
                failure(MISTAKES["mutation"], "backward_mlp(net) changed net's lists (W, b, a, h or g).")
            )
        result = decode(answer.get("result"))
        if not (isinstance(result, list) and len(result) == 2):
            raise Fail(
                failure(
                    MISTAKES["shape"],
                    f"backward_mlp(net) returned {shown(result)}; it must return (grad_W, grad_b).",
                    book="",
                )
            )
        l = net["l"]  # noqa: E741
        _compare(net, model, fwd, key, _layers(result[0], l, "grad_W"), _layers(result[1], l, "grad_b"))

    return judge


def cases(seed: int) -> Iterator[Case]:
    """The fixed networks, then one drawn from the seed."""
    rng = random.Random(seed)
    sizes = [rng.randint(1, 4) for _ in range(rng.randint(1, 3))]
    act, lam = rng.choice(["tanh", "sigmoid"]), rng.choice([0.0, 0.02, 0.2])
    nin = rng.randint(1, 4)
    drawn = (f"MLP({nin}, {sizes}), {act}, λ = {lam:g} (from seed {seed})", nin, sizes, act, lam, 100 + seed)
    for title, nin, nouts, act, lam, s in [*NETS, drawn]:
        net, model, fwd = mlp_example(nin, nouts, act, lam, s)
        key = nn.backward_mlp(fwd)
        request = {k: net[k] for k in ("l", "W", "b", "a", "h", "g", "lam", "activations")}
        yield Case(
            title, request, _judge(net, model, fwd, key), what="backward_mlp(net)", book="mlp_loop", cpu=1.0
        )


def _reference() -> Any:
    """micrograph's Algorithm 6.4 in the exercise's shape: ``backward_mlp(net)`` -> (grad_W, grad_b), for a
    ``net`` that holds the model, one example (x, y) and λ (``net.model``, ``net.x``, ``net.y``,
    ``net.lam``)."""

    def backward_mlp(net: Any) -> tuple[dict[int, Any], dict[int, Any]]:
        fwd = nn.forward_mlp(net.model, net.x, net.y, loss="mse", l2=net.lam)  # Algorithm 6.3
        grads = nn.backward_mlp(fwd)  # Algorithm 6.4
        layers = list(enumerate(net.model.layers, 1))
        grad_W = {k: [[grads[w] for w in n.w] for n in layer.neurons] for k, layer in layers}
        grad_b = {k: [grads[n.b] for n in layer.neurons] for k, layer in layers}
        return grad_W, grad_b

    return types.SimpleNamespace(backward_mlp=backward_mlp)


TEMPLATE = '''\
"""Algorithm 6.4, the backward pass of an MLP on numbers, layer by layer.

The book (section 6.5.4, Algorithm 6.4):

@ALGORITHM_6_4@

net holds one example's forward pass (Algorithm 6.3) as numbers, indexed as the
book does (k = 1..l; index 0 of W, b, a is unused):
    net.l            the number of layers
    net.W[k][m][i]   the weight of layer k from unit i of h(k-1) to unit m
                     of h(k)
    net.b[k][m], net.a[k][m], net.h[k][m]   (net.h[0] is x)
    net.g            grad_yhat J, one number per output
    net.lam          lambda; Omega(theta) = the sum of the squares of the
                     weights (not the biases)
    net.f_prime(k, a, h)   f'(a) for layer k's activation at a (whose
                           activation is h)
Return (grad_W, grad_b): dicts {k: ...} with grad_W[k] shaped like W[k],
grad_b[k] like b[k].

@SEE@
@CHECK@
"""


def backward_mlp(net):
    """Return (grad_W, grad_b) for every layer k = 1..l."""
    grad_W, grad_b = {}, {}
    g = list(net.g)
    # TODO: the loop over k from l down to 1, the four lines of the book.
    raise NotImplementedError
'''

JUDGING = Judging(
    template=TEMPLATE,
    cases=cases,
    answer=answers.Schema({"result": plain, "mutation": answers.NET_MUTATION}),
    imports=Imports.python("Algorithm 6.4 in Python, with math or numpy", "numpy"),
    reference=_reference,
)
"""How the exercise is judged: the template, the judge (:func:`cases`, :data:`MISTAKES`), what a solution may
import, micrograph's own Algorithm 6.4 as the reference."""
