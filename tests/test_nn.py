"""Neuron, Layer, MLP; Algorithm 6.3 (forward_mlp) and Algorithm 6.4 (backward_mlp) against Algorithm 6.2."""

from __future__ import annotations

import dataclasses
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from micrograph import Graph, Value, grad, nn

ACTS = ["relu", "tanh", "sigmoid", "identity"]


# --- construction -------------------------------------------------------------------------------


def test_micrograd_defaults():
    random.seed(0)
    m = nn.MLP(3, [4, 4, 1])
    assert [len(layer.neurons) for layer in m.layers] == [4, 4, 1]
    assert [n.nonlin for layer in m.layers for n in layer.neurons] == [True] * 8 + [False]
    assert len(m.parameters()) == (3 + 1) * 4 + (4 + 1) * 4 + (4 + 1) * 1
    assert all(-1 <= p.data <= 1 for p in nn.weights(m))
    assert all(n.b.data == 0.0 for layer in m.layers for n in layer.neurons)
    assert repr(m) == (
        "MLP of [Layer of [ReLUNeuron(3), ReLUNeuron(3), ReLUNeuron(3), ReLUNeuron(3)], "
        "Layer of [ReLUNeuron(4), ReLUNeuron(4), ReLUNeuron(4), ReLUNeuron(4)], Layer of [LinearNeuron(4)]]"
    )


def test_neuron_and_layer_signatures():
    n = nn.Neuron(3, nonlin=False, seed=1)
    assert repr(n) == "LinearNeuron(3)" and len(n.parameters()) == 4
    assert n.parameters() == [*n.w, n.b]
    layer = nn.Layer(3, 2, nonlin=True, seed=1)
    assert repr(layer) == "Layer of [ReLUNeuron(3), ReLUNeuron(3)]"
    out = layer([1.0, 2.0, 3.0])
    assert isinstance(out, list) and len(out) == 2
    assert isinstance(nn.Layer(3, 1, seed=1)([1.0, 2.0, 3.0]), Value)  # one neuron: a Value, as micrograd
    # a seed given to a Layer makes different neurons, not copies
    assert layer.neurons[0].w[0].data != layer.neurons[1].w[0].data


def test_weights_use_the_global_generator_in_micrograds_order():
    random.seed(42)
    m = nn.MLP(2, [3, 1])
    random.seed(42)
    expected = []
    for nin, nout in [(2, 3), (3, 1)]:
        for _ in range(nout):
            expected += [random.uniform(-1, 1) for _ in range(nin)] + [0.0]
    assert [p.data for p in m.parameters()] == expected


def test_seed_and_rng_are_reproducible_and_leave_the_global_generator_alone():
    random.seed(7)
    before = random.random()
    random.seed(7)
    a = nn.MLP(4, [5, 3], seed=3)
    assert random.random() == before
    b = nn.MLP(4, [5, 3], seed=3)
    c = nn.MLP(4, [5, 3], rng=random.Random(3))
    assert (
        [p.data for p in a.parameters()]
        == [p.data for p in b.parameters()]
        == [p.data for p in c.parameters()]
    )
    assert [p.data for p in a.parameters()] != [p.data for p in nn.MLP(4, [5, 3], seed=4).parameters()]


@pytest.mark.parametrize(
    ("init", "limit"), [("uniform", 1.0), ("glorot", math.sqrt(6 / (30 + 20))), ("he", math.sqrt(6 / 30))]
)
def test_init_limits(init, limit):
    m = nn.MLP(30, [20], init=init, seed=0)
    ws = [w.data for w in nn.weights(m)]
    assert max(map(abs, ws)) <= limit
    assert max(map(abs, ws)) > 0.9 * limit  # 600 draws reach close to the limit
    assert abs(sum(ws) / len(ws)) < 0.1 * limit


@pytest.mark.parametrize("act", ACTS)
def test_activation_builds_its_op_on_hidden_layers_only(act):
    m = nn.MLP(2, [3, 2], activation=act, seed=0)
    outs = m([0.5, -1.0])
    assert len(outs) == 2 and all(o.op.name == "add" for o in outs)  # the last layer is linear
    hidden = m.layers[0].neurons[0]([0.5, -1.0])
    assert hidden.op.name == {"relu": "relu", "tanh": "tanh", "sigmoid": "sigmoid", "identity": "add"}[act]
    assert repr(m.layers[0].neurons[0]).startswith(
        {"relu": "ReLU", "tanh": "Tanh", "sigmoid": "Sigmoid"}.get(act, "Linear")
    )


def test_forward_builds_micrograds_graph_shape():
    # a = sum((wi*xi for ...), b): b + w1 x1 + w2 x2 ..., then the activation
    n = nn.Neuron(3, seed=0)
    h = n([1.0, 2.0, 3.0])
    assert h.op.name == "relu"
    node = h.inputs[0]
    for i in (2, 1, 0):
        assert node.op.name == "add"
        prod = node.inputs[1]
        assert prod.op.name == "mul" and prod.inputs[0] is n.w[i] and prod.inputs[1].data == float(i + 1)
        node = node.inputs[0]
    assert node is n.b
    assert h.data == max(0.0, sum(w.data * x for w, x in zip(n.w, [1.0, 2.0, 3.0], strict=True)))


def _built(make):  # type: ignore[no-untyped-def]
    """(the node ``make()`` returns, None) or (None, the error it raised, as type and message)."""
    try:
        return make(), None
    except (TypeError, ValueError, ArithmeticError) as e:
        return None, (type(e), str(e))


def _same_nodes(a: Value, b: Value, given_nodes: list[Value]) -> None:
    """Two graphs built from the same given nodes: the same nodes, the given ones shared, the rest new."""
    ga, gb = Graph(a), Graph(b)
    assert ga.parents == gb.parents and len(ga.nodes) == len(gb.nodes)
    for u, v in zip(ga.nodes, gb.nodes):
        assert (u.op, u.is_constant, u.label, u.meta) == (v.op, v.is_constant, v.label, v.meta)
        assert u.data == v.data or (math.isnan(u.data) and math.isnan(v.data))
        assert (u is v) == any(u is g for g in given_nodes)


_NUMBER = st.one_of(
    st.floats(-1e200, 1e200, allow_nan=False), st.integers(-(10**6), 10**6), st.sampled_from([1e308, -1e308])
)


@settings(max_examples=300, derandomize=True)
@given(
    terms=st.lists(st.tuples(_NUMBER, st.one_of(_NUMBER, _NUMBER.map(Value)), st.booleans()), max_size=6),
    bias=st.one_of(_NUMBER.map(Value), _NUMBER),
)
def test_a_neurons_written_out_sum_builds_the_operators_nodes(terms, bias) -> None:  # type: ignore[no-untyped-def]
    # Neuron.__call__ writes b + w1 x1 + ... out node by node: the same nodes as micrograd's
    # sum(map(mul, w, x), b), the same values, the same constants wrapped, the same errors
    from operator import mul

    from micrograph.mlp import _weighted_sum

    w = [Value(wi) if is_value else wi for wi, _, is_value in terms]
    x = [xi for _, xi, _ in terms]
    written, error = _built(lambda: _weighted_sum(bias, w, x))
    operators, expected = _built(lambda: sum(map(mul, w, x), bias))
    assert error == expected
    if expected is None:
        if isinstance(operators, Value):
            given_nodes = [v for v in [*w, *x, bias] if isinstance(v, Value)]
            _same_nodes(written, operators, given_nodes)
        else:  # no Value among the terms: a number, as the operators give
            assert written == operators or (math.isnan(written) and math.isnan(operators))


def test_a_neuron_builds_the_same_nodes_as_its_preactivation_and_activation() -> None:
    n = nn.Neuron(4, activation="tanh", seed=3)
    x = [Value(0.5), 2.0, Value(-1.5), 3]
    a = n.preactivation(x)
    _same_nodes(n(x), n.activate(a), [*n.w, n.b, x[0], x[2]])


def test_parameters_are_labelled_with_the_books_names():
    m = nn.MLP(2, [3, 1], seed=0)
    assert m.layers[0].neurons[2].w[1].label == "W1[2,1]" and m.layers[1].neurons[0].b.label == "b2[0]"


def test_zero_grad():
    m = nn.MLP(2, [3, 1], seed=0)
    m([1.0, 2.0]).backward()
    assert any(p.grad != 0 for p in m.parameters())
    m.zero_grad()
    assert all(p.grad == 0.0 for p in m.parameters())


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: nn.MLP(0, [2]), r"nin must be a positive integer, got 0"),
        (lambda: nn.MLP(2, []), r"at least one layer width, got \[\]"),
        (lambda: nn.MLP(2, [3, 0]), r"every width in nouts must be a positive integer, got 0"),
        (lambda: nn.MLP(2, 3), r"nouts must be a list of layer widths, got 3"),
        (lambda: nn.MLP(2, [3], activation="gelu"), r"activation must be one of .*, got 'gelu'"),
        (lambda: nn.MLP(2, [3], init="normal"), r"MLP\(init=...\): init must be one of .*, got 'normal'"),
        (lambda: nn.MLP(2, [3], seed=1, rng=random.Random(1)), "give seed= or rng=, not both"),
        (lambda: nn.Layer(2, 0), r"nout must be a positive integer, got 0"),
        (lambda: nn.Neuron(2.5), r"nin must be a positive integer, got 2.5"),
    ],
)
def test_bad_construction(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_wrong_feature_count():
    m = nn.MLP(3, [2], seed=0)
    with pytest.raises(ValueError, match=r"x must have 3 features, got 2"):
        m([1.0, 2.0])
    with pytest.raises(ValueError, match=r"x must have 3 features, got 4"):
        m.layers[0].neurons[0]([1.0, 2.0, 3.0, 4.0])


# --- Algorithm 6.3 ------------------------------------------------------------------------------


def test_forward_mlp_keeps_a_and_h():
    m = nn.MLP(3, [4, 2], activation="tanh", seed=0)
    x = [0.5, -1.0, 2.0]
    fwd = nn.forward_mlp(m, x, 1, loss="cross_entropy", l2=0.01)
    assert fwd.a[0] == [] and [v.data for v in fwd.h[0]] == x
    assert [len(a) for a in fwd.a] == [0, 4, 2] and [len(h) for h in fwd.h] == [3, 4, 2]
    for k in (1, 2):
        for m_, neuron in enumerate(m.layers[k - 1].neurons):
            a = neuron.b.data + sum(w.data * h.data for w, h in zip(neuron.w, fwd.h[k - 1], strict=True))
            assert fwd.a[k][m_].data == pytest.approx(a, rel=1e-15)
    assert [h.data for h in fwd.h[1]] == [math.tanh(a.data) for a in fwd.a[1]]
    assert fwd.h[2] == fwd.a[2] == fwd.y_hat  # the output layer is linear
    assert [v.data for v in fwd.y_hat] == [v.data for v in m(x)]
    omega = sum(w.data**2 for w in nn.weights(m))
    assert fwd.J.data == pytest.approx(fwd.loss.data + 0.01 * omega, rel=1e-15)
    assert fwd.J.label == "J" and fwd.a[1][0].label == "a1[0]" and fwd.h[1][0].label == "h1[0]"


def test_forward_mlp_without_regularizer_has_no_penalty():
    m = nn.MLP(2, [2, 1], seed=0)
    fwd = nn.forward_mlp(m, [1.0, 2.0], 1, loss="hinge")
    assert fwd.penalty is None and fwd.J is fwd.loss


def test_forward_mlp_keeps_what_j_is_defined_with():
    model = nn.MLP(2, [3, 2], seed=0)
    fwd = nn.forward_mlp(model, [1.0, 2.0], 1, loss="mse", l2=0.25, l1=1, decay_biases=True)
    # the target as the loss takes it: class 1 of 2 outputs one-hot for mse
    assert fwd.model is model
    assert fwd.cost == nn.CostDefinition(nn.LOSSES["mse"], [0.0, 1.0], 0.25, 1.0, True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fwd.cost.l2 = 0.0


# --- Algorithm 6.4 against Algorithm 6.2 ---------------------------------------------------------


def assert_same_gradients(model, x, y, **kw):
    fwd = nn.forward_mlp(model, x, y, **kw)
    table = Graph(fwd.J).backprop()  # Algorithm 6.2 on the graph of J
    book = nn.backward_mlp(fwd)  # Algorithm 6.4 on Algorithm 6.3's record
    params = model.parameters()
    assert set(book) == set(params)
    for p in params:
        assert math.isclose(book[p], table[p], rel_tol=1e-12, abs_tol=1e-12), (p.label, book[p], table[p])
    model.zero_grad()
    fwd.J.backward()  # the micrograd surface: the same numbers in .grad
    for p in params:
        assert math.isclose(book[p], p.grad, rel_tol=1e-12, abs_tol=1e-12), p.label
    return book


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("lam", [0.0, 0.05])
@pytest.mark.parametrize(
    ("loss", "nouts", "y"),
    [("cross_entropy", [5, 4, 3], 2), ("mse", [5, 4, 2], [0.5, -1.0]), ("hinge", [5, 1], -1),
     ("binary_cross_entropy", [4, 1], 1)],
)  # fmt: skip
def test_algorithm_6_4_equals_algorithm_6_2(act, lam, loss, nouts, y):
    model = nn.MLP(3, nouts, activation=act, seed=11)
    rng = random.Random(5)
    for _ in range(3):
        x = [rng.uniform(-2, 2) for _ in range(3)]
        book = assert_same_gradients(model, x, y, loss=loss, l2=lam)
        if lam == 0.0 and act == "identity":
            # a hand check of the last layer: grad_b(l) = g, grad_W(l) = g h(l-1)^T
            fwd = nn.forward_mlp(model, x, y, loss=loss)
            last = model.layers[-1].neurons[0]
            assert book[last.w[0]] == pytest.approx(book[last.b] * fwd.h[-2][0].data, rel=1e-12)


@pytest.mark.parametrize("act", ACTS)
def test_algorithm_6_4_with_l1_and_penalised_biases(act):
    model = nn.MLP(4, [6, 3], activation=act, seed=2)
    # move the biases away from 0 so the penalty on them matters
    for p in model.parameters():
        if p.label.startswith("b"):
            p.data = 0.3
    assert_same_gradients(
        model, [0.1, -0.2, 0.3, 1.5], 0, loss="cross_entropy", l2=0.01, l1=0.02, decay_biases=True
    )
    g_w = nn.backward_mlp(nn.forward_mlp(model, [0.1, -0.2, 0.3, 1.5], 0, l2=0.0))
    g_decay = nn.backward_mlp(nn.forward_mlp(model, [0.1, -0.2, 0.3, 1.5], 0, l2=0.1))
    w = model.layers[0].neurons[0].w[0]
    b = model.layers[0].neurons[0].b
    assert g_decay[w] - g_w[w] == pytest.approx(2 * 0.1 * w.data)  # grad_W Omega = 2 W
    assert g_decay[b] == g_w[b]  # biases are not penalised by default


def test_algorithm_6_4_with_relu_units_at_zero():
    # a(k) exactly 0: the engine's step H(0) = 0 is used by both algorithms
    model = nn.MLP(2, [2, 2], seed=0)
    for p in model.layers[0].parameters():
        p.data = 0.0
    assert_same_gradients(model, [1.0, 2.0], 1, loss="cross_entropy")


def test_algorithm_6_4_agrees_with_symbol_to_symbol_and_finite_differences():
    model = nn.MLP(2, [3, 2], activation="tanh", seed=4)
    x, y = [0.7, -0.4], 1
    fwd = nn.forward_mlp(model, x, y, l2=0.01)
    book = nn.backward_mlp(fwd)
    params = model.parameters()
    symbolic = grad(fwd.J, params)  # Algorithm 6.5
    for p, g in zip(params, symbolic, strict=True):
        assert g.data == pytest.approx(book[p], rel=1e-12, abs=1e-14)
    h = 1e-6
    for p in params:
        p.data += h
        up = nn.forward_mlp(model, x, y, l2=0.01).J.data
        p.data -= 2 * h
        dn = nn.forward_mlp(model, x, y, l2=0.01).J.data
        p.data += h
        assert book[p] == pytest.approx((up - dn) / (2 * h), rel=1e-5, abs=1e-8)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"x": [1.0], "y": 0}, "the model takes 2 features per example, got 1: [1.0]"),
        ({"x": [1.0, 2.0], "y": 3}, "labels must be class indices 0..2 for 3 outputs, got 3"),
        (
            {"x": [1.0, 2.0], "y": 0, "loss": "hinge"},
            "loss 'hinge' needs a model with one output, this one has 3",
        ),
        (
            {"x": [1.0, 2.0], "y": 0, "loss": "nll"},
            "loss must be one of ['binary_cross_entropy', 'cross_entropy', 'hinge', 'mse'], got 'nll'",
        ),
        ({"x": [1.0, 2.0], "y": 0, "l2": -1.0}, "l2 must be a finite number >= 0, got -1.0"),
        ({"x": [1.0, 2.0], "y": 0, "l1": float("inf")}, "l1 must be a finite number >= 0, got inf"),
        ({"x": [1.0, float("nan")], "y": 0}, "features must be finite numbers, got nan in [1.0, nan]"),
    ],
)
def test_forward_mlp_bad_input(kw, message):
    # Algorithm 6.4 takes forward_mlp's record: bad inputs, targets and lambdas are refused here, once
    model = nn.MLP(2, [3, 3], seed=0)
    x, y = kw.pop("x"), kw.pop("y")
    with pytest.raises(ValueError) as e:
        nn.forward_mlp(model, x, y, **kw)
    assert str(e.value) == f"forward_mlp(model, x, y): {message}"


@pytest.mark.parametrize(
    ("forward", "got"),
    [(None, "NoneType"), ((1.0, 2.0), "tuple"), ("minibatch", "MinibatchForward"), ("model", "MLP")],
)
def test_backward_mlp_refuses_what_is_not_forward_mlps_record(forward, got):
    model = nn.MLP(2, [3, 3], seed=0)
    if forward == "minibatch":
        forward = nn.forward_minibatch(model, [[1.0, 2.0]], [0])
    elif forward == "model":
        forward = model
    with pytest.raises(TypeError) as e:
        nn.backward_mlp(forward)
    assert str(e.value) == f"backward_mlp(forward): forward must be forward_mlp's MLPForward, got {got}"


def test_backward_mlp_refuses_a_record_whose_layers_do_not_fit_its_model():
    model = nn.MLP(2, [3, 2], seed=0)
    fwd = nn.forward_mlp(model, [1.0, 2.0], 1)
    cut = dataclasses.replace(fwd, h=[fwd.h[0], fwd.h[1][:2], fwd.h[2]])
    with pytest.raises(ValueError) as e:
        nn.backward_mlp(cut)
    assert str(e.value) == (
        "backward_mlp(forward): forward's h(0..l) must have its model's widths [2, 3, 2] and a(1..l) "
        "those of h(1..l), got [2, 2, 2] and [3, 2]"
    )


def test_backward_mlp_reads_the_record_and_runs_no_forward_pass_of_its_own():
    model = nn.MLP(2, [3, 2], activation="tanh", seed=1)
    fwd = nn.forward_mlp(model, [0.5, -1.0], 0, l2=0.1)
    model.layers[0].neurons[0].b.data += 0.75  # after the forward pass: a(1), h(1) stay as recorded
    book = nn.backward_mlp(fwd)
    table = Graph(fwd.J).backprop()  # Algorithm 6.2 on the recorded graph, with its stored values
    again = nn.backward_mlp(nn.forward_mlp(model, [0.5, -1.0], 0, l2=0.1))  # a new pass sees the new b
    w = model.layers[1].neurons[0].w[0]  # its gradient is g h(1)[0]: the recorded h(1) or the new one
    assert book[w] == pytest.approx(table[w], rel=1e-12) and abs(book[w] - again[w]) > 1e-3


def test_algorithm_6_4_on_each_example_of_a_minibatch():
    model = nn.MLP(2, [4, 3], activation="sigmoid", seed=3)
    X, Y = [[0.5, -1.0], [1.5, 0.25], [-0.3, 0.8]], [2, 0, 1]
    cost = nn.forward_minibatch(model, X, Y, l2=0.05)
    params = model.parameters()
    per_example = [nn.backward_mlp(e) for e in cost.examples]  # each example's J is its L
    for e, y, book in zip(cost.examples, Y, per_example, strict=True):
        assert e.cost == nn.CostDefinition(nn.LOSSES["cross_entropy"], y)
        table = Graph(e.J).backprop()
        assert all(math.isclose(book[p], table[p], rel_tol=1e-12, abs_tol=1e-12) for p in params)
    # J = (1/B) sum_b L_b + lambda sum w^2: the mean of the examples' gradients plus 2 lambda w on weights
    table = Graph(cost.J).backprop()
    weights = set(nn.weights(model))
    for p in params:
        mean = sum(book[p] for book in per_example) / len(X)
        want = mean + (2 * 0.05 * p.data if p in weights else 0.0)
        assert math.isclose(want, table[p], rel_tol=1e-12, abs_tol=1e-12), p.label


@settings(max_examples=30, deadline=None)
@given(
    nin=st.integers(1, 4),
    hidden=st.lists(st.integers(1, 4), min_size=0, max_size=2),
    act=st.sampled_from(ACTS),
    loss=st.sampled_from(["cross_entropy", "mse", "hinge", "binary_cross_entropy"]),
    lam=st.sampled_from([0.0, 0.1]),
    seed=st.integers(0, 1000),
)
def test_algorithm_6_4_equals_algorithm_6_2_on_random_networks(nin, hidden, act, loss, lam, seed):
    rng = random.Random(seed)
    nout = 1 if loss in ("hinge", "binary_cross_entropy") else rng.randint(1, 3)
    model = nn.MLP(nin, [*hidden, nout], activation=act, init=rng.choice(nn.INITS), rng=rng)
    for p in model.parameters():  # non-zero biases too
        p.data = rng.uniform(-1.5, 1.5)
    x = [rng.uniform(-2, 2) for _ in range(nin)]
    y = {
        "cross_entropy": rng.randrange(nout),
        "mse": [rng.uniform(-1, 1) for _ in range(nout)],
        "hinge": rng.choice([0, 1]),
        "binary_cross_entropy": rng.choice([0, 1]),
    }[loss]
    assert_same_gradients(model, x, y, loss=loss, l2=lam, l1=lam / 2, decay_biases=bool(seed % 2))
