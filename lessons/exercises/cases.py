"""The graphs the checkers run a solution on: the cases that catch the real mistakes.

Every case is built afresh by a function, deterministically (fixed numbers, fixed seeds), so a student who
runs the check again meets the same first failure, and the checker can build one copy for the solution
and another for the engine's answer. The order is from the smallest graph that shows a mistake to the
largest: a node used twice by one operation (``a * a``), a reused node that is not a leaf
(``b = a + a; c = b + b``), constants, figure 6.9's chain, a graph that uses every operation, random DAGs
with shared and repeated parents, the ladder whose paths double at every level (6 levels, then 40: 2^40
paths, where a method that follows every path from z never finishes and Algorithm 6.2 takes a millisecond),
and a chain 2,000 deep (a recursive solution meets Python's recursion limit of 1,000 there). Apart from
these, :func:`growth_graphs` are the long graphs on which a check times a solution against the graph's
size: chains with an edge back to a random earlier node at every other node (:func:`long_graph`).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.1-6.5.3, figure 6.9.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from micrograph.engine import Value
from micrograph.errors import DomainError
from micrograph.families import chain, ladder
from micrograph.graph import Graph
from micrograph.ops import OPS, POW, pow_const

__all__ = [
    "Case",
    "graph_cases",
    "growth_graphs",
    "long_graph",
    "random_dag",
    "random_seeds",
    "every_op",
    "DEEP",
    "BIG_LADDER",
    "GROWTH",
]

DEEP = 2_000
"""The depth of the deep chain: twice the recursion limit of the process that runs a solution (1,000), and
small enough that a solution whose time grows as n² still finishes it (the growth case names that)."""

BIG_LADDER = 40
"""The levels of the big ladder: 2^40 paths from w to z on 121 nodes."""

GROWTH = (400, 800, 1_600, 3_200)
"""The sizes (nodes) of the long graphs a solution is timed on, each twice the last."""


@dataclass(frozen=True)
class Case:
    """A graph to check a solution on.

    Attributes:
        name: what the case is, as the report shows it (``"a * a: one node takes the same parent twice"``).
        build: returns a fresh ``(z, targets)``: the output and the variables to differentiate with
            respect to; each call builds new nodes with the same structure and numbers.
        deep: True for the case that a recursive solution cannot pass.
        paths: True for the case whose paths from z no solution can follow one by one.
        cpu: the CPU seconds the case may take (a correct solution needs a hundredth of that or less).
    """

    name: str
    build: Callable[[], tuple[Value, list[Value]]]
    deep: bool = False
    paths: bool = False
    cpu: float = 1.0


def _square() -> tuple[Value, list[Value]]:
    a = Value(1.5, label="a")
    return a * a, [a]


def _reused() -> tuple[Value, list[Value]]:
    a = Value(0.5, label="a")
    b = a + a
    b.label = "b"
    c = b + b
    c.label = "c"
    return c, [a]


def _constants() -> tuple[Value, list[Value]]:
    x = Value(0.7, label="x")
    z = (2 * x + 3) * x
    z.label = "z"
    return z, [x]


def _figure_6_9() -> tuple[Value, list[Value]]:
    z, w = chain(3)
    return z, [w]


def _lesson() -> tuple[Value, list[Value]]:
    x, y = Value(0.5, label="x"), Value(-1.2, label="y")
    h = x * y + x
    h.label = "h"
    z = (h - y / x).tanh()
    z.label = "z"
    return z, [x, y]


def every_op() -> tuple[Value, list[Value]]:
    """One graph using every operation of the table, and x ** c, at points inside every domain."""
    x, y = Value(0.8, label="x"), Value(1.3, label="y")
    p = POW(x, y)  # x ** y, both arguments variables
    q = x / y - y
    r = (x * y).log() + (x + y).sqrt() + x.exp().tanh()
    s = y.sigmoid() * x.sin() + y.cos() - (-x)
    t = (q * 1.5).relu() + OPS["step"](x) + pow_const(3.0)(y) + x**2
    z = p + q * r + s * t
    z.label = "z"
    return z, [x, y]


_RANDOM_OPS = [
    "add",
    "sub",
    "mul",
    "div",
    "neg",
    "exp",
    "log",
    "tanh",
    "sigmoid",
    "sqrt",
    "sin",
    "cos",
    "pow",
]


def random_dag(seed: int, n_ops: int = 14, n_leaves: int = 3) -> tuple[Value, list[Value]]:
    """A random DAG with shared parents (fan-out), repeated parents (``u * u``) and a constant.

    Nodes are added one by one, each taking its arguments among the nodes built so far, mostly the
    recent ones; one binary node in four takes the same parent twice. Every node ends up an ancestor of
    z: the nodes no other node consumes are added up into z. Values stay in every operation's domain
    (and that of its derivatives) and below 50 in size.

    Args:
        seed: the seed of ``random.Random``; the same seed builds the same graph.
        n_ops: how many operation nodes to try to add before the final sum.
        n_leaves: the number of variables x1, x2, ...

    Returns:
        ``(z, variables)``.
    """
    rng = random.Random(seed)
    leaves = [Value(round(rng.uniform(0.3, 1.8), 2), label=f"x{i + 1}") for i in range(n_leaves)]
    nodes: list[Value] = list(leaves)
    nodes.append(Value(2.0) * leaves[0])  # a constant leaf, as ``2 * x`` makes one
    used: set[Value] = {leaves[0]}
    tries = 0
    while len(nodes) < n_leaves + 1 + n_ops and tries < 20 * n_ops:
        tries += 1
        op = OPS[rng.choice(_RANDOM_OPS)]
        recent = nodes[-4:]
        a = rng.choice(recent if rng.random() < 0.7 else nodes)
        if op.arity == 2:
            b = a if rng.random() < 0.25 else rng.choice(nodes)
            args: tuple[Value, ...] = (a, b)
            if op is POW and (a.data <= 0.1 or abs(b.data) > 3):
                continue
        else:
            args = (a,)
            if op.name in ("log", "sqrt") and a.data <= 0.1:
                continue
        try:
            v = op(*args)
        except DomainError:
            continue
        if abs(v.data) > 50 or (op.name == "div" and abs(args[1].data) < 0.1):
            continue
        nodes.append(v)
        used.update(args)
    dangling = [v for v in nodes if v not in used and v.op is not None]
    z = dangling[0]
    for v in dangling[1:]:
        z = z + v
    z.label = "z"
    for v in leaves:  # a leaf no operation took: still a variable of the graph through the sum
        if v not in Graph(z).index:
            z = z + v
            z.label = "z"
    return z, leaves


def _random(seed: int) -> Callable[[], tuple[Value, list[Value]]]:
    return lambda: random_dag(seed)


def _family(
    family: Callable[[int], tuple[Value, Value]], depth: int
) -> Callable[[], tuple[Value, list[Value]]]:
    """The build of figure 6.9's chain or the ladder at a depth, differentiated with respect to w."""

    def build() -> tuple[Value, list[Value]]:
        z, w = family(depth)
        return z, [w]

    return build


def long_graph(n: int) -> Callable[[], tuple[Value, list[Value]]]:
    """The build of a long graph of ``n`` nodes: a chain from w in which every other node also reads an
    earlier node drawn at random (one generator per n), ``tanh(u(i-1))`` and ``u(i-1) + u(k)`` in turn.

    Like a chain it has one path through every node (a recursive solution meets the recursion limit, and
    the order is unique); unlike one it has about 1.5 edges per node, so that no shortcut for chains
    applies, and a method that sweeps the graph once per node (forward accumulation of every dz/du(j))
    takes time n². Its values stay in (-2, 2).
    """

    def build() -> tuple[Value, list[Value]]:
        rng = random.Random(n)
        w = Value(0.5, label="w")
        nodes = [w]
        for i in range(1, n):
            last = nodes[-1]
            nodes.append(last.tanh() if i % 2 else last + nodes[rng.randrange(len(nodes) - 1)])
        return nodes[-1], [w]

    return build


def growth_graphs() -> list[Case]:
    """The long graphs of :data:`GROWTH`'s sizes (:func:`long_graph`), on which a check times a solution
    (one call per graph)."""
    return [Case(f"a long graph of {n:,} nodes", long_graph(n), deep=True) for n in GROWTH]


def random_seeds(seed: int, count: int) -> list[int]:
    """The seeds of a check's random cases: 1..count for the check's seed 0, other numbers for others."""
    return [seed * 1000 + s for s in range(1, count + 1)]


def graph_cases(*, deep: bool = True, randoms: int = 4, seed: int = 0) -> list[Case]:
    """The graph cases, in the order the checkers try them.

    Args:
        deep: include the chain :data:`DEEP` deep.
        randoms: how many random DAGs.
        seed: the check's seed; the random DAGs' own seeds are :func:`random_seeds` of it.
    """
    cases = [
        Case("a * a: one node takes the same parent twice", _square),
        Case("b = a + a, c = b + b: a reused node that is not a leaf", _reused),
        Case("(2 * x + 3) * x: constants are leaves too", _constants),
        Case("figure 6.9: z = tanh(tanh(tanh(w)))", _figure_6_9),
        Case("z = tanh(x * y + x - y / x): two variables, argument order matters", _lesson),
        Case("every operation of the table", every_op),
    ]
    cases += [
        Case(f"random DAG (seed {s}): shared and repeated parents", _random(s))
        for s in random_seeds(seed, randoms)
    ]
    cases.append(Case("the ladder u(i) = sin(u(i-1)) + cos(u(i-1)), 6 levels: 64 paths", _family(ladder, 6)))
    cases.append(
        Case(
            f"the ladder, {BIG_LADDER} levels: 2^{BIG_LADDER} paths",
            _family(ladder, BIG_LADDER),
            paths=True,
            cpu=1.0,
        )
    )
    if deep:
        cases.append(Case(f"a chain {DEEP:,} deep", _family(chain, DEEP), deep=True, cpu=2.0))
    return cases
