"""An MLP collapsed by meaning (viz.groups): layers and neurons of random networks; drawings by groups.

The groups are checked against what the network is, not against the grouping's own rule: the a(k) and h(k)
nodes Algorithm 6.3 returns (``forward_minibatch``), the parameters of each layer and neuron, the count of
scalars a neuron builds (nin products, nin additions, the activation). The drawings' numbers are read back
from the DOT source and compared with the engine's (node values, Algorithm 6.2's grad_table) as
``viz.words.fmt`` writes them.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.4 and 6.5.7.
"""

from __future__ import annotations

import html
import random
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import viz
from micrograph import Graph, grad, nn
from micrograph.engine import Value
from micrograph.order import topological_order
from viz.groups import LEVELS, group_backward, group_graph
from viz.words import fmt, node_names

LOSS_TARGETS = {
    "cross_entropy": lambda rng, nout: rng.randrange(nout),
    "mse": lambda rng, nout: [rng.uniform(-1, 1) for _ in range(nout)],
}


def random_cost(seed: int, nin: int, hidden: list[int], act: str, batch: int, loss: str, lam: float) -> Any:
    """A random network's minibatch cost (Algorithm 6.3 on each example, the mean loss, lambda Omega)."""
    rng = random.Random(seed)
    nout = rng.randint(1, 3)
    model = nn.MLP(nin, [*hidden, nout], activation=act, rng=rng)
    for p in model.parameters():
        p.data = rng.uniform(-1.5, 1.5)
    X = [[rng.uniform(-2, 2) for _ in range(nin)] for _ in range(batch)]
    Y = [LOSS_TARGETS[loss](rng, nout) for _ in range(batch)]
    return model, nn.forward_minibatch(model, X, Y, loss=loss, l2=lam)


networks = st.fixed_dictionaries({
    "seed": st.integers(0, 10_000),
    "nin": st.integers(1, 3),
    "hidden": st.lists(st.integers(1, 3), min_size=0, max_size=2),
    "act": st.sampled_from(["relu", "tanh", "sigmoid", "identity"]),
    "batch": st.integers(1, 3),
    "loss": st.sampled_from(sorted(LOSS_TARGETS)),
    "lam": st.sampled_from([0.0, 0.1]),
})  # fmt: skip


@settings(max_examples=25, deadline=None, derandomize=True)
@given(networks)
def test_every_node_is_in_exactly_one_group_and_each_neuron_holds_its_scalars(net: dict[str, Any]) -> None:
    model, cost = random_cost(**net)
    G = Graph(cost.J)
    index = G.index
    for level in LEVELS:
        grouping = group_graph(G, level)
        members = [i for g in grouping.groups for i in g.members]
        assert sorted(members) == list(range(len(G.nodes)))  # each node once
        assert all(grouping.group_of[i] == k for k, g in enumerate(grouping.groups) for i in g.members)
    by_neuron = group_graph(G, "neurons")
    by_layer = group_graph(G, "layers")
    sizes = [model.nin, *model.nouts]
    for e, example in enumerate(cost.examples):
        for k, layer in enumerate(model.layers, start=1):
            for m, neuron in enumerate(layer.neurons):
                a, h = index[example.a[k][m]], index[example.h[k][m]]
                group = by_neuron.groups[by_neuron.group_of[a]]
                assert by_neuron.group_of[h] == by_neuron.group_of[a]  # a and h in one box
                assert (group.kind, group.layer, group.neuron, group.example) == ("neuron", k, m, e + 1)
                # nin products w_i x_i, nin additions (b + w_1 x_1 + ...), h = f(a) unless f is the identity
                assert len(group.members) == 2 * sizes[k - 1] + (a != h)
                assert set(group.tagged.get("a", [])) == {a} and set(group.tagged.get("h", [h])) == {h}
                assert all(by_layer.group_of[i] == by_layer.group_of[a] for i in group.members)
                params = by_neuron.groups[by_neuron.group_of[index[neuron.b]]]
                assert set(params.members) == {index[p] for p in neuron.parameters()}
            weights = by_layer.groups[by_layer.group_of[index[layer.neurons[0].w[0]]]]
            assert set(weights.members) == {index[w] for n in layer.neurons for w in n.w}
            assert (weights.kind, weights.layer) == ("weights", k)
            whole = by_layer.groups[by_layer.group_of[index[example.a[k][0]]]]
            assert (whole.kind, whole.layer) == ("layer", k)
            assert len(whole.members) == len(cost.examples) * len(layer.neurons) * (
                2 * sizes[k - 1] + (example.a[k][0] is not example.h[k][0])
            )
    for level, grouping in (("layers", by_layer), ("neurons", by_neuron)):
        kinds = {g.kind for g in grouping.groups}
        assert (
            "scalar" not in kinds and "node" not in kinds
        )  # every node of the cost is a part of the network
        assert ("regularizer" in kinds) == bool(net["lam"]), level


@settings(max_examples=15, deadline=None, derandomize=True)
@given(networks)
def test_every_node_of_B_is_in_exactly_one_group_and_gradients_lie_with_their_nodes(
    net: dict[str, Any],
) -> None:
    model, cost = random_cost(**net)
    G = Graph(cost.J)
    params = model.parameters()
    result = grad(cost.J, params)
    B = [v for v in topological_order(result) if v not in G.index]
    for level in LEVELS:
        grouping = group_graph(G, level)
        b_grouping = group_backward(G, grouping, B)
        assert sorted(k for g in b_grouping.groups for k in g.members) == list(range(len(B)))
        position = {v: k for k, v in enumerate(B)}
        weights = set(nn.weights(model))
        for p, d in zip(params, result, strict=True):
            box = b_grouping.groups[b_grouping.group_of[position[d]]]
            if p in weights:  # dJ/dW(k)[m, i] = dJ/d(w x) x: a node of its own, in the box of its weights
                assert box.key == grouping.groups[grouping.group_of[G.index[p]]].key
            elif len(cost.examples) == 1:  # a bias used once passes a(k)'s entry on: it is dJ/da(k)[m]
                a = cost.examples[0].a
                k, m = p.meta.layer, p.meta.neuron  # type: ignore[union-attr]
                assert box.key == grouping.groups[grouping.group_of[G.index[a[k][m]]]].key


def _boxes(source: str) -> dict[str, list[str]]:
    """Each node of a DOT source (a box of viz.html_box) and the text of its rows."""
    out = {}
    for name, label in re.findall(r"^\s*(\w+) \[label=<(.*)>\]$", source, flags=re.M):
        out[name] = [html.unescape(t) for t in re.findall(r'<FONT COLOR="[^"]*">(.*?)</FONT>', label)]
    return out


def _numbers(row: str) -> list[str]:
    return row.split(" = ", 1)[1].split(", … (")[0].split(", ")


@settings(max_examples=10, deadline=None, derandomize=True)
@given(networks)
def test_the_boxes_show_the_engines_values_and_grad_table_entries(net: dict[str, Any]) -> None:
    model, cost = random_cost(**net)
    G = Graph(cost.J)
    table = G.backprop()
    order = G.index.__getitem__
    source = viz.draw(cost.J, level="layers", grad_table=table).source
    boxes = _boxes(source)
    for k, _ in enumerate(model.layers, start=1):
        a = sorted((e.a[k][m] for e in cost.examples for m in range(len(e.a[k]))), key=order)
        (rows,) = [r for r in boxes.values() if r[0].startswith(f"layer {k} · ")]
        (values,) = [r for r in rows if r.startswith(f"a({k}) = ") and not r.startswith(f"a({k}) = b(")]
        assert _numbers(values) == [fmt(v.data) for v in a[:4]]
        (grads,) = [r for r in rows if r.startswith(f"∂J/∂a({k}) = ")]
        assert _numbers(grads) == [fmt(table[v]) for v in a[:4]]
        assert (f"({len(a)} in all)" in values) == (len(a) > 4)
    shown = [_numbers(r) for rows in boxes.values() for r in rows if r.startswith(("J = ", "L = "))]
    assert any(fmt(cost.J.data) in numbers for numbers in shown)
    by_neuron = _boxes(viz.draw(cost.J, level="neurons", grad_table=table, max_nodes=1000).source)
    first = cost.examples[0]
    many = len(cost.examples) > 1
    (rows,) = [
        r
        for r in by_neuron.values()
        if r[0].startswith(f"neuron 0 of layer 1{' · example 1' if many else ' · '}")
    ]
    assert f"a1[0] = {fmt(first.a[1][0].data)}" in rows
    assert f"∂J/∂a1[0] = {fmt(table[first.a[1][0]])}" in rows


def test_a_drawing_by_layers_is_the_network_of_section_6_5_7() -> None:
    model = nn.MLP(2, [3, 2], activation="relu", seed=1)
    cost = nn.forward_minibatch(model, [[0.5, -1.0], [1.5, 0.25]], [0, 1], l2=0.01)
    source = viz.draw(cost.J, level="layers", grad_table=Graph(cost.J).backprop()).source
    boxes = {rows[0].split(" · ")[0]: name for name, rows in _boxes(source).items()}
    assert sorted(boxes) == sorted([
        "inputs x = h(0)", "weights W(1) of layer 1", "biases b(1) of layer 1", "layer 1",
        "weights W(2) of layer 2", "biases b(2) of layer 2", "layer 2",
        "L: the loss of each example and their mean", "λΩ(θ): the regularizer", "J = L + λΩ(θ): the cost",
    ])  # fmt: skip
    edges = set(re.findall(r"^\s*(\w+) -> (\w+)", source, flags=re.M))
    name = {k.split(":")[0].split(" of ")[0]: v for k, v in boxes.items()}
    expected = {
        ("inputs x = h(0)", "layer 1"), ("weights W(1)", "layer 1"), ("biases b(1)", "layer 1"),
        ("layer 1", "layer 2"), ("weights W(2)", "layer 2"), ("biases b(2)", "layer 2"), ("layer 2", "L"),
        ("L", "J = L + λΩ(θ)"), ("weights W(1)", "λΩ(θ)"), ("weights W(2)", "λΩ(θ)"),
        ("λΩ(θ)", "J = L + λΩ(θ)"),
    }  # fmt: skip
    assert {(name[a], name[b]) for a, b in expected} == edges  # the arrows of section 6.5.7, no others
    rows = _boxes(source)[name["layer 1"]]
    assert rows[1:3] == ["a(1) = b(1) + W(1) h(0)", "h(1) = ReLU(a(1))"]


def test_expanding_draws_exactly_the_groups_scalars() -> None:
    model = nn.MLP(3, [2, 2], activation="tanh", seed=2)
    cost = nn.forward_minibatch(model, [[0.5, -1.0, 2.0]], [1], l2=0.1)
    G = Graph(cost.J)
    names = node_names(G)
    unit = cost.examples[0].h[1][1]
    for level in LEVELS:
        grouping = group_graph(G, level)
        group = grouping.groups[grouping.group_of[G.index[unit]]]
        source = viz.draw(cost.J, level=level, expand=[unit], max_nodes=1000).source
        (cluster,) = re.findall(r"subgraph cluster_\w+ \{(.*?)\n\t\}", source, flags=re.S)
        inside = set(re.findall(r"^\s*(u\d+) \[label=", cluster, flags=re.M))
        assert inside == {names[G.nodes[i]] for i in group.members}
        drawn = set(re.findall(r"^\s*(u\d+) \[label=", source, flags=re.M))
        assert drawn == inside  # no other scalar: the rest are boxes
        assert len(_boxes(source)) == len(grouping.groups) - 1 + len(group.members)


def test_draw_by_groups_refuses_what_it_cannot_draw() -> None:
    model = nn.MLP(2, [2, 1], seed=0)
    cost = nn.forward_minibatch(model, [[1.0, 2.0]], [[0.5]], loss="mse")
    with pytest.raises(ValueError, match="level"):
        viz.draw(cost.J, level="rows")
    with pytest.raises(ValueError, match=r"expand\[0\]"):
        viz.draw(cost.J, level="layers", expand=[Value(1.0)])
    with pytest.raises(viz.GraphTooLarge, match="max_nodes=3") as large:
        viz.draw(cost.J, level="neurons", max_nodes=3)
    said = str(
        large.value
    )  # a network is made smaller by its minibatch and hidden units, not as an expression
    assert "Draw a smaller network (a smaller minibatch, fewer hidden units), or pass max_nodes=" in said
    assert "expression" not in said and "expression" not in large.value.text("page")
    with pytest.raises(viz.GraphTooLarge, match="smaller network"):
        viz.explore(cost.J, level="layers", max_nodes=3)
    with pytest.raises(ValueError, match="level"):
        viz.draw_side_by_side(cost.J, model.parameters(), level="rows")


def test_a_graph_not_built_by_nn_is_its_scalars_and_what_only_they_use() -> None:
    x, w = Value(1.0, label="x"), Value(2.0, label="w")
    y = (x * w).tanh() + x
    G = Graph(y)
    grouping = group_graph(G, "layers")
    assert sorted(i for g in grouping.groups for i in g.members) == list(range(len(G.nodes)))
    # x feeds two nodes that lie in one group (y's), so it joins y's group with everything else
    (group,) = grouping.groups
    assert group.kind == "node" and group.members[-1] == G.index[y]
