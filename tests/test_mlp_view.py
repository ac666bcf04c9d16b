"""An MLP's nodes know their role, layer and neuron; the explorer's data for a network by layers or neurons;
``micrograph explore --mlp``.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4 (Algorithm 6.3), 6.5.7.
"""

from __future__ import annotations

import importlib
import json
import pickle
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from lessons import cli
from micrograph import Graph, nn
from micrograph.meta import NodeMeta
from viz import explore
from viz.groups import group_graph

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")


def _role(v: Any) -> tuple[str, int | None, int | None]:
    m = v.meta
    return ("", None, None) if m is None else (m.role, m.layer, m.neuron)


def test_the_parameters_and_every_a_and_h_carry_their_layer_and_neuron() -> None:
    model = nn.MLP(3, [4, 2], activation="tanh", seed=0)
    for k, layer in enumerate(model.layers, start=1):
        for m, neuron in enumerate(layer.neurons):
            nin = len(neuron.w)
            assert [_role(w) for w in neuron.w] == [("weight", k, m)] * nin
            assert _role(neuron.b) == ("bias", k, m) and neuron.b.label == f"b{k}[{m}]"
            assert [w.label for w in neuron.w] == [f"W{k}[{m},{i}]" for i in range(nin)]
    first, second = model([1.0, 2.0, 3.0]), model([0.5, 0.0, -1.0])
    assert [_role(o) for o in first] == [("a", 2, 0), ("a", 2, 1)]  # the last layer is linear: h = a
    assert first[0].label == "" and repr(first[0]).startswith("Value(data=")  # micrograd's surface kept
    # one record per neuron, shared by every example: building a node stores a reference, allocates nothing
    assert first[0].meta is second[0].meta
    (hidden,) = [v for v in Graph(first[0]).nodes if _role(v) == ("h", 1, 0)]
    assert hidden.op.name == "tanh" and _role(hidden.inputs[0]) == ("a", 1, 0)  # type: ignore[union-attr]
    lone = nn.Neuron(2, seed=0)
    assert lone([1.0, 1.0]).meta is None  # a neuron outside an MLP has no layer


def test_forward_mlp_and_forward_minibatch_tag_the_cost() -> None:
    model = nn.MLP(2, [3, 2], activation="relu", seed=1)
    fw = nn.forward_mlp(model, [0.5, -1.0], 1, l2=0.01)
    assert [_role(x) for x in fw.h[0]] == [("input", 0, 0), ("input", 0, 1)]
    assert _role(fw.loss) == ("loss", None, None) and fw.loss.label == "L"
    assert _role(fw.penalty) == ("regularizer", None, None) and _role(fw.J) == ("cost", None, None)
    assert fw.J.label == "J" and fw.a[1][0].label == "a1[0]"
    X, Y = [[0.5, -1.0], [1.5, 0.25], [0.0, 2.0]], [1, 0, 1]
    cost = nn.forward_minibatch(model, X, Y, l2=0.01)
    losses = [nn.forward_mlp(model, x, y).loss.data for x, y in zip(X, Y, strict=True)]
    omega = 0.01 * sum(w.data**2 for w in nn.weights(model))
    assert cost.loss.data == pytest.approx(sum(losses) / 3, rel=1e-15)
    assert cost.J.data == pytest.approx(sum(losses) / 3 + omega, rel=1e-15)
    assert [x.label for x in cost.examples[2].h[0]] == ["X[2,0]", "X[2,1]"]
    assert _role(cost.loss) == ("loss", None, None) and _role(cost.J) == ("cost", None, None)
    bare = nn.forward_minibatch(model, X[:1], Y[:1])
    assert bare.penalty is None and bare.J is bare.loss and _role(bare.J)[0] == "loss"


def test_training_tags_its_cost_and_roles_survive_pickling() -> None:
    from micrograph.train import _objective

    model = nn.MLP(2, [2, 2], seed=3)
    spec = nn.LOSSES["cross_entropy"]
    J, _ = _objective(model, [[1.0, 2.0], [0.5, 0.5]], [0, 1], spec, 0.1, 0.0, False)
    roles = {_role(v)[0] for v in Graph(J).nodes}
    assert roles == {"", "weight", "bias", "a", "h", "loss", "regularizer", "cost"}
    copy = pickle.loads(pickle.dumps(J))
    assert [_role(v) for v in Graph(copy).nodes] == [_role(v) for v in Graph(J).nodes]
    assert "role='cost'" in repr(J.meta)


def test_tag_and_forward_minibatch_refuse_bad_input() -> None:
    model = nn.MLP(2, [2], seed=0)
    with pytest.raises(ValueError, match="role must be one of"):
        nn.tag(model.layers[0].neurons[0].b, "bias term")
    with pytest.raises(ValueError, match="same number"):
        nn.forward_minibatch(model, [[1.0, 2.0]], [0, 1])
    with pytest.raises(ValueError, match="same number"):
        nn.forward_minibatch(model, [], [])
    assert isinstance(model.layers[0].neurons[0].b.meta, NodeMeta)


def _cost(batch: int = 2) -> tuple[Any, Any]:
    model = nn.MLP(2, [3, 2], activation="tanh", seed=4)
    X, Y = [[0.5, -1.0], [1.5, 0.25], [0.3, 0.3]][:batch], [1, 0, 1][:batch]
    return model, nn.forward_minibatch(model, X, Y, l2=0.01)


def _marked(svg: str, attr: str) -> set[int]:
    return {int(v) for v in re.findall(rf'{attr}="(\d+)"', svg)}


@needs_dot
def test_the_explorers_data_by_groups() -> None:
    _, cost = _cost()
    spec = explore(cost.J, level="neurons").spec
    G = Graph(cost.J)
    assert spec["mlp"]["level"] == "neurons" and sorted(spec["mlp"]["levels"]) == ["layers", "neurons"]
    assert spec["svg_g"] == spec["mlp"]["levels"]["neurons"]["svg_g"] and spec["wrt"] == []
    sliders = [inp for inp in spec["inputs"] if inp["variable"]]
    assert [s["label"] for s in sliders] == ["X[0,0]", "X[0,1]", "X[1,0]", "X[1,1]"]  # the inputs, not θ
    for level, data in spec["mlp"]["levels"].items():
        grouping = group_graph(G, level)
        boxes = [k for k, g in enumerate(grouping.groups) if g.kind != "scalar"]
        assert _marked(data["svg_g"], "data-group") == set(boxes)
        assert len(data["groups"]) == len(grouping.groups) and data["group_of"] == grouping.group_of
        for d, g in zip(data["groups"], grouping.groups, strict=True):
            assert d["members"] == g.members
            if d["svg"]:  # a group's drawing holds exactly its scalars (the others that feed it are named)
                assert _marked(d["svg"], "data-node") == set(g.members)
                assert not _marked(d["svg"], "data-outside") & set(g.members)
            for row in d["rows"]:
                assert set(row["nodes"]) <= set(g.members)
    layer = spec["mlp"]["levels"]["layers"]
    (one,) = [d for d in layer["groups"] if d["title"] == "layer 1"]
    a1 = sorted(G.index[e.a[1][m]] for e in cost.examples for m in range(3))
    (row,) = [r for r in one["rows"] if r["head"] == "a(1) = "]
    assert row["nodes"] == a1[:4] and row["tail"] == ", … (6 in all)" and not row["grad"]


@needs_dot
def test_the_explorer_by_groups_refuses_what_it_cannot_show() -> None:
    _, cost = _cost()
    with pytest.raises(ValueError, match="predict"):
        explore(cost.J, level="layers", predict=True)
    with pytest.raises(ValueError, match="level"):
        explore(cost.J, level="units")
    _, cost = _cost(3)  # layer 1: 3 examples x 3 neurons x (2 products, 2 sums, tanh) = 45 scalars
    spec = explore(cost.J, level="layers", max_nodes=40).spec
    too_big = [d for d in spec["mlp"]["levels"]["layers"]["groups"] if len(d["members"]) > 40]
    assert too_big and all(d["svg"] == "" for d in too_big)  # not laid out; the page says so
    assert "max_nodes" in spec["words"]["too_many"]


def _main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = cli.main(args)
    out, err = capsys.readouterr()
    return status, out, err


@needs_dot
def test_explore_mlp_writes_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "net.html"
    status, said, err = _main(["explore", "--mlp", "moons", "--hidden", "3", "--batch", "2", "--level",
                               "neurons", "--out", str(out)], capsys)  # fmt: skip
    assert status == 0, err
    assert f"wrote {out}" in said
    text = out.read_text(encoding="utf-8")
    spec = json.loads(re.search(r'id="micrograph-spec">(.*?)</script>', text, flags=re.S).group(1))  # type: ignore[union-attr]
    assert spec["mlp"]["level"] == "neurons"
    titles = {d["title"] for d in spec["mlp"]["levels"]["layers"]["groups"]}
    assert {"layer 1", "layer 2", "λΩ(θ): the regularizer", "J = L + λΩ(θ): the cost"} <= titles
    status, _, err = _main(["explore", "--help"], capsys)
    assert status == 0


MISTAKES = [
    (["explore", "x*x", "--mlp", "iris"], "not both"),
    (["explore", "--mlp", "iris", "--at", "x=1"], "--at is for an expression"),
    (["explore", "--mlp", "iris", "--predict"], "--predict is for an expression"),
    (["explore"], "needs an EXPRESSION, or --mlp DATA"),
    (["explore", "--mlp", "iris", "--batch", "0"], "--batch"),
    (["explore", "--mlp", "iris", "--hidden", "65"], "--hidden"),
    (["explore", "--mlp", "mnist"], "--mlp"),
    # an expression has no network for these to shape: refused, not ignored (even at their defaults)
    (["explore", "x", "--at", "x=1", "--level", "neurons"], "--level is for --mlp DATA (a network)"),
    (["explore", "x", "--at", "x=1", "--level", "layers"], "--level is for --mlp DATA"),
    (["explore", "x", "--at", "x=1", "--batch", "4"], "--batch is for --mlp DATA"),
    (["explore", "x", "--at", "x=1", "--hidden", "8"], "--hidden is for --mlp DATA"),
    (["explore", "x", "--at", "x=1", "--seed", "1"], "--seed is for --mlp DATA"),
    (["explore", "x", "--at", "x=1", "--l2", "0"], "--l2 is for --mlp DATA"),
]


@pytest.mark.parametrize("args, says", MISTAKES, ids=[" ".join(a) for a, _ in MISTAKES])
def test_explore_mlp_mistakes_are_one_line(
    args: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = _main([*args, "--out", str(tmp_path / "p.html")], capsys)
    assert status == 2, err
    lines = [line for line in err.splitlines() if line.startswith("micrograph: error:")]
    assert len(lines) == 1 and says in lines[0], err
    assert "Traceback" not in err and not (tmp_path / "p.html").exists()


# The work a refused page must not begin: B, the frames, the drawings by groups, any layout.
_EXPENSIVE = (("viz.explore", "frame_plan"), ("viz.explore", "mlp_views"), ("viz.explore", "grad"),
              ("viz.render", "pipe_svg"))  # fmt: skip


@pytest.fixture
def begun(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the expensive functions called (each still runs), in the order called."""
    called: list[str] = []

    def watched(name: str, real: Any) -> Any:
        def call(*args: Any, **kw: Any) -> Any:
            called.append(name)
            return real(*args, **kw)

        return call

    for module, name in _EXPENSIVE:
        where = importlib.import_module(module)
        monkeypatch.setattr(where, name, watched(name, getattr(where, name)))
    return called


TOO_LARGE = [  # the options after --mlp iris; what the line says
    (["--batch", "16", "--hidden", "16"], "G by neurons would have 406 boxes, more than --max-nodes 300"),
    (["--batch", "8", "--hidden", "32", "--level", "layers"], "G by neurons would have 358 boxes"),
    (["--batch", "2", "--hidden", "8", "--max-nodes", "40"], "G by neurons would have 46 boxes"),
    (["--batch", "64", "--hidden", "64"], "makes a G of 64134 scalars, more than the 20000"),
    (["--batch", "64", "--hidden", "64", "--max-nodes", "5000"], "makes a G of 64134 scalars"),
]


@pytest.mark.parametrize("args, says", TOO_LARGE, ids=[" ".join(a) for a, _ in TOO_LARGE])
def test_explore_mlp_too_large_is_refused_before_any_work(
    args: list[str], says: str, begun: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "net.html"
    status, said, err = _main(["explore", "--mlp", "iris", *args, "--out", str(out)], capsys)
    assert status == 2 and not said and not out.exists()
    (line,) = err.splitlines()
    assert line.startswith("micrograph: error: --mlp iris --batch ") and says in line, line
    assert "a smaller --batch or --hidden" in line and "expression" not in line
    scalars = "scalars" in says  # --max-nodes cannot help a G larger than the explorer groups
    assert ("--max-nodes" in line.split(":", 2)[2]) is not scalars
    if not scalars:
        size = re.search(r"have (\d+) boxes", line).group(1)  # type: ignore[union-attr]
        assert f"or --max-nodes {size} (or more" in line and "whatever --level" in line
    assert begun == []  # no B, frame, drawing or layout: G's size at every level is known from G alone


@needs_dot
def test_the_work_a_refusal_skips_is_what_an_accepted_network_does(
    begun: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "net.html"
    status, _, err = _main(["explore", "--mlp", "iris", "--batch", "1", "--hidden", "2", "--out", str(out)],
                           capsys)  # fmt: skip
    assert status == 0 and out.exists(), err
    assert {"frame_plan", "mlp_views", "grad", "pipe_svg"} <= set(begun)


def test_the_help_says_which_networks_fit(capsys: pytest.CaptureFixture[str]) -> None:
    from micrograph import datasets
    from viz.dot import GraphTooLarge
    from viz.explore_groups import MAX_SCALARS, checked_levels

    status, said, _ = _main(["explore", "--help"], capsys)
    said = " ".join(said.split())
    assert status == 0 and f"of more than {MAX_SCALARS} scalars is refused at once" in said
    assert "--batch 16 --hidden 8 fits on iris; --batch 64 needs a larger --max-nodes whatever" in said
    assert "--batch 64 --hidden 64 has too many scalars for any" in said

    def iris(batch: int, hidden: int) -> Graph:  # the network micrograph explore --mlp iris draws
        X, y = datasets.iris()
        train, _ = datasets.standardize(*datasets.split(X, y, test_fraction=0.3, seed=0))
        model = nn.MLP(4, [hidden, 3], activation="tanh", seed=0)
        return Graph(nn.forward_minibatch(model, train[0][:batch], train[1][:batch], l2=1e-3).J)

    checked_levels(iris(16, 8), 300)  # what the help says, checked as the explorer checks it
    with pytest.raises(GraphTooLarge, match="G by neurons"):
        checked_levels(iris(64, 1), 300)
    with pytest.raises(GraphTooLarge, match=f"more than {MAX_SCALARS}|max_nodes={MAX_SCALARS}"):
        checked_levels(iris(64, 64), 10**9)


def test_every_row_names_the_numbers_of_one_role() -> None:
    _, cost = _cost(3)
    G = Graph(cost.J)
    from viz.group_words import value_rows

    for level in ("layers", "neurons"):
        for g in group_graph(G, level).groups:
            for row in value_rows(g, G.nodes, level, "J"):
                roles = {_role(G.nodes[i])[0] for i in row.nodes}
                assert len(roles) == 1 and row.nodes == sorted(row.nodes)
