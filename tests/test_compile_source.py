"""The code the compiler (micrograph.compile) writes, and how it is called: one statement per value of G
worth a name (uK is u(K)), fused where a value is used once, the gradients as grad_uK; the same text for
the same structure, compiled once; no label or foreign code in it; inputs by mapping, sequence or default.
"""

from __future__ import annotations

import math
import re

import pytest
from compile_checks import check_same, close

from micrograph import DomainError, Graph, Value, compile_graph
from micrograph.compile_emitter import FUSE, PYTHON
from micrograph.compile_python import _code
from micrograph.engine import as_value
from micrograph.ops import STEP, Op

# --- calling convention ------------------------------------------------------------------------------


def _example() -> tuple[Value, Value, Value, Graph]:
    x = Value(0.3, label="x")
    w = Value(-1.2, label="w")
    z = (x * w + 2.0).tanh() * x + (x / w).exp()
    return x, w, z, Graph(z)


def test_inputs_as_mapping_sequence_or_variables_and_defaults_from_data() -> None:
    x, w, _, g = _example()
    f = compile_graph(g, [x, w])
    full = [v.data for v in g.leaves]
    full[g.index[x]] = 0.5
    by_map = f({x: 0.5})
    assert by_map == f(full)
    assert by_map == f([0.5 if v is x else v.data for v in g.variables])
    w.data = 2.0  # an SGD-style update of a leaf's .data is seen by the next call
    assert f({x: 0.5}) != by_map
    check_same(g, [x, w], f, [0.5, 2.0])
    with pytest.raises(ValueError, match="not a node of this graph"):
        f({Value(1.0): 2.0})
    with pytest.raises(ValueError, match="values"):
        f([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    with pytest.raises(ValueError, match="evaluate"):
        f.evaluate([1.0])


def test_changes_no_node() -> None:
    x, w, _, g = _example()
    f = compile_graph(g, [x, w])
    before = [(v.data, v.grad) for v in g.nodes]
    f({x: 0.9, w: 0.1})
    assert [(v.data, v.grad) for v in g.nodes] == before
    with pytest.raises(DomainError):
        f({w: 0.0})  # the interpreter re-run that produces the error restores every .data
    assert [(v.data, v.grad) for v in g.nodes] == before


def test_gradient_with_respect_to_output_inner_node_and_foreign_node() -> None:
    x, _, z, g = _example()
    inner = z.inputs[0]
    stranger = Value(5.0)
    f = compile_graph(g, [z, inner, stranger, x])
    value, grads = f()
    table = g.backprop()
    assert grads[0] == 1.0 and grads[2] == 0.0
    assert close(grads[1], table[inner]) and close(grads[3], table[x])
    assert value == z.data


def test_a_single_leaf_graph() -> None:
    x = Value(2.5)
    f = compile_graph(Graph(x), [x])
    assert f({x: 4.0}) == (4.0, [1.0])


@pytest.mark.parametrize("part_size", [5000, 1])
def test_compiled_graph_keeps_requested_values(part_size: int) -> None:
    x = Value(0.5)
    h = (x * 3.0).tanh()
    z = h * h
    g = Graph(z)
    f = compile_graph(g, [x], keep=[h, x], part_size=part_size)
    assert (f.parts > 1) == (part_size == 1)
    value, grads, kept = f.evaluate_all([v.data for v in g.leaves])
    assert close(grads[0], g.backprop()[x])
    assert kept == [h.data, 0.5] and value == z.data
    with pytest.raises(ValueError, match="keep"):
        compile_graph(g, [x], keep=[Value(1.0)])


def test_bad_arguments_are_clear_errors() -> None:
    x, w, z, g = _example()
    with pytest.raises(TypeError, match="Graph"):
        compile_graph(z, [x])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="empty"):
        compile_graph(g, [])
    with pytest.raises(TypeError, match=r"wrt\[1\]"):
        compile_graph(g, [x, 2.0])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="part_size"):
        compile_graph(g, [x], part_size=0)
    single = compile_graph(g, w)  # a single Value is one target
    assert len(single({x: 1.0})[1]) == 1


# --- the source ---------------------------------------------------------------------------------------


def test_source_names_values_by_position_and_fuses_values_used_once() -> None:
    x, w, _, g = _example()
    f = compile_graph(g, [x, w])
    lines = [line.strip() for line in f.source.splitlines()]
    # Algorithm 6.1, lines 1-3: the inputs u(1)..u(n_i) unpacked from x, one commented line each
    unpack = [line for line in lines if re.match(r"^u\d+,  # u\(\d+\) <- x_\d+, an input", line)]
    assert [line.split(",")[0] for line in unpack] == [g.name(v) for v in g.leaves]
    assert ") = x" in f.source
    statements = [line for line in lines if re.match(r"^(grad_)?u\d+ = ", line)]
    assert len(statements) == f.n_statements
    forward = [s.split(" = ")[0] for s in statements if s.startswith("u")]
    positions = [int(name[1:]) for name in forward]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    assert all(g.n_inputs < k <= len(g.nodes) for k in positions)  # uK is u(K), a value of G
    assert f"{g.name(g.output)} = " in f.source  # z = u(n) always has a name
    assert len(forward) < len(g.nodes) - g.n_inputs  # values used once are written into their consumer
    assert "grad_u1 = " in f.source and "grad_u2 = " in f.source  # x = u(1), w = u(2): the returned ones
    assert "math.tanh(" in f.source and "math.exp(" in f.source  # templates of the operation table
    assert "f_tanh_grad(" in f.source  # tanh's rule calls the table's tanh_grad: written out, not copied
    compile(f.source, "<test>", "exec")  # the whole source is valid Python as shown


def test_a_chain_step_is_one_forward_statement_and_backward_steps_are_fused() -> None:
    x = Value(0.5, label="x")
    u = x
    for _ in range(50):
        u = (u * 0.999 + 0.1).relu()
    g = Graph(u)
    f = compile_graph(g, [x])
    body = [line.strip() for line in f.source.splitlines() if re.match(r"^\s+(grad_)?u\d+ = ", line)]
    forward = [line for line in body if line.startswith("u")]
    backward = [line for line in body if line.startswith("grad_")]
    # relu(u) * 0.999 + 0.1 is one statement; u, which relu reads twice and its derivative once, is named
    assert len(forward) == 51  # (the last relu is z)
    assert len(backward) <= 2 * 50 // FUSE + 2  # two products a step, FUSE operations a statement
    assert re.search(r"u\d+ = \(\(u(\d+) if u\1 > 0.0 else 0.0\) \* u\d+\) \+ u\d+", f.source)
    check_same(g, [x], f, [0.75] + [v.data for v in g.leaves[1:]])


def test_the_same_structure_gives_the_same_source() -> None:
    def build() -> tuple[Value, Value]:
        x = Value(0.5, label="x")
        u = x
        for _ in range(5):
            u = (u**2.5 + u**1.5).sigmoid() * (u**3.5).tanh() + x.relu()
        return x, u

    (x1, z1), (x2, z2) = build(), build()
    assert compile_graph(Graph(z1), [x1]).source == compile_graph(Graph(z2), [x2]).source


def test_parts_of_a_long_chain_share_their_text_and_are_compiled_once() -> None:
    x = Value(0.3, label="x")
    u = x
    for k in range(3000):
        u = (u * 0.999 + 0.1).relu() if k % 2 else (u * 1.001 - 0.05).tanh()
    g = Graph(u)
    before = _code.cache_info()
    f = compile_graph(g, [x], part_size=300)
    after = _code.cache_info()
    bodies = [part.split("\n", 1)[1] for part in f.source.split("# part ")[1:]]
    assert len(bodies) == f.parts > 20
    assert after.misses - before.misses == len(set(bodies)) <= 8  # each distinct text compiled once
    assert after.hits - before.hits == f.parts - len(set(bodies))
    check_same(g, [x], f, [0.7] + [v.data for v in g.leaves[1:]])


def test_labels_never_go_into_the_code() -> None:
    evil = "x\nimport os; os.system('echo pwned')  # \u2028"
    x = Value(0.5, label=evil)
    y = Value(1.5, label="'''; raise SystemExit")
    z = (x * y).tanh() + x.relu()
    z.label = "__import__('os')"
    f = compile_graph(Graph(z), [x, y])
    for text in ("import os", "pwned", "SystemExit", "__import__", "'''"):
        assert text not in f.source
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_ .,:;&()[]=+-*/<>#\n")
    assert set(f.source) <= allowed, set(f.source) - allowed


def test_an_operation_outside_the_table_is_called_not_templated() -> None:
    evil = Op(
        "evil\nimport os", "e", 1, lambda v: 2.0 * v, (lambda v, out: 2.0,),
        code="__import__('os').system('echo pwned')",
    )  # fmt: skip
    x = Value(0.25)
    z = evil(x) * x
    f = compile_graph(Graph(z), [x])
    assert "__import__" not in f.source and "import os" not in f.source
    assert f({x: 3.0}) == (18.0, [12.0])


def test_numbers_are_written_with_repr_and_non_finite_ones_by_name() -> None:
    assert (
        PYTHON.literal(0.1) == "0.1" and PYTHON.literal(-2.5) == "(-2.5)" and PYTHON.literal(-0.0) == "(-0.0)"
    )
    assert (
        PYTHON.literal(math.inf) == "INF"
        and PYTHON.literal(-math.inf) == "(-INF)"
        and PYTHON.literal(math.nan) == "NAN"
    )
    c = as_value(math.inf)  # a leaf may hold inf, but no operation takes it (not even step, whose value is 1)
    with pytest.raises(DomainError, match="not finite"):
        STEP(c) * Value(0.5)
    f = compile_graph(Graph(c), [c])  # a graph of that one leaf: the literal is written by name
    assert "INF" in f.source
