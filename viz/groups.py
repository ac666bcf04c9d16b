"""An MLP's scalars collapsed by meaning: into layers or neurons, as the book and courses draw a network.

The nodes micrograph's nn builds carry their role in Algorithm 6.3 (``NodeMeta.role``: an input x, a weight,
a bias, a pre-activation a, an activation h, a loss L, the regularizer lambda Omega, the cost J), their layer
k and their neuron m. A *level* says which of them make one group:

* ``"layers"``: the inputs x; W(k) and b(k) of each layer; layer k (every a(k) and h(k), over every example
  of a minibatch); the loss L (each example's and their mean); lambda Omega(theta); J. Section 6.5.7 of the
  book draws a minibatch's cost this way, one node per layer's matrix.
* ``"neurons"``: each input; each neuron's parameters W(k)[m, :] and b(k)[m]; each neuron applied to one
  example (its a, its h); each loss; lambda Omega(theta); J.

The nodes between the tagged ones (the products W x and their running sums, a loss's softmax) carry no tag:
each joins the group of its consumers when they all lie in one group (walked from the output down, so a
node's consumers are placed first). A node whose consumers lie in several groups starts a group of its own,
which the nodes that only it uses then join (a user's loss written by hand is one such group). So every
node lies in exactly one group, found from the graph alone: drawing runs no algorithm.

The backward subgraph B is grouped the same way: a gradient node dz/du (a grad_table entry) lies in the group
of u (when one node is the entry of several, as an addition passes its entry on, of the last in G's order
that carries a role), and B's other nodes join their consumers' group.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4 (Algorithm 6.3), section
6.5.7 (the minibatch cost of an MLP drawn by layers), section 6.5.6 (B).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from micrograph.engine import Value
from micrograph.graph import Graph

__all__ = ["LEVELS", "Group", "Grouping", "group_graph", "group_backward"]

LEVELS = ("layers", "neurons")
"""The levels an MLP is drawn at (``"scalars"``, every node, is the ordinary drawing)."""

_LAYER_KEY = {
    "input": lambda k, m: ("input",),
    "weight": lambda k, m: ("weights", k),
    "bias": lambda k, m: ("biases", k),
    "a": lambda k, m: ("layer", k),
    "h": lambda k, m: ("layer", k),
    "loss": lambda k, m: ("loss",),
    "regularizer": lambda k, m: ("regularizer",),
    "cost": lambda k, m: ("cost",),
}


@dataclass
class Group:
    """One box of a drawing by layers or neurons: the scalars it stands for.

    Attributes:
        key: what the group is: ``("layer", k)``, ``("weights", k)``, ``("neuron", i)`` (the neuron whose
            pre-activation is node i), ``("loss", i)``, ``("node", j)`` (node j and what only it uses; in
            B ``("bnode", j)``) ...
        kind: ``key[0]`` (``"node"`` for both kinds of untagged group), or ``"scalar"`` for a group of one
            untagged node (drawn as the node itself).
        members: the positions of its nodes (in G, or in B's list for a group of B), ascending.
        tagged: {role: positions of its members that carry that role}, in order (what its box shows).
        layer, neuron: the layer k and neuron m its tagged members share, else None.
        example: at the level of neurons, for a neuron or an example's loss, which application it is (1,
            2, ... in G's order), else None.
        examples: with ``example``, how many applications of that neuron (or examples' losses) there are.
        of: for a loss computed from other losses (the mean over a minibatch), how many; else 0.
    """

    key: tuple[Hashable, ...]
    kind: str
    members: list[int] = field(default_factory=list)
    tagged: dict[str, list[int]] = field(default_factory=dict)
    layer: int | None = None
    neuron: int | None = None
    example: int | None = None
    examples: int = 0
    of: int = 0


@dataclass
class Grouping:
    """The groups of a graph at one level.

    Attributes:
        level: ``"layers"`` or ``"neurons"``.
        groups: the groups in reading order: the inputs, layer by layer its parameters and neurons, the
            losses, the regularizer, J, then the groups of untagged nodes.
        group_of: for each node position, the position of its group in ``groups``.
        edges: (group u, group v) for each pair joined by an edge of the graph from a node of u to one of
            v, u != v, each once, in the order of the graph's edges.
    """

    level: str
    groups: list[Group]
    group_of: list[int]
    edges: list[tuple[int, int]]


def _role(v: Value) -> tuple[str, int | None, int | None]:
    meta = v.meta
    if meta is None or not meta.role:
        return "", None, None
    return meta.role, meta.layer, meta.neuron


def _key(v: Value, i: int, level: str, index: dict[Value, int]) -> tuple[Hashable, ...] | None:
    """The group of a tagged node at ``level``; None for an untagged one."""
    role, k, m = _role(v)
    if not role:
        return None
    if level == "layers":
        return _LAYER_KEY[role](k, m)
    if role in ("input", "loss"):
        return (role, i)
    if role in ("weight", "bias"):
        return ("parameters", k, m)
    if role == "h":  # h = f(a): the neuron is keyed by its pre-activation a
        a = v.inputs[0] if v.inputs else None
        if a is not None and _role(a) == ("a", k, m):
            return ("neuron", index[a])
    if role in ("a", "h"):
        return ("neuron", i)
    return (role,)


def _check_level(level: str, where: str) -> None:
    if level not in LEVELS:
        raise ValueError(f"{where}: level must be one of {list(LEVELS)}, got {level!r}")


def _claim(
    keys: list[tuple[Hashable, ...] | None], consumers: Sequence[Sequence[int]], own: str
) -> list[tuple[Hashable, ...]]:
    """Every untagged node joins its consumers' group when they share one, else starts its own ``(own, j)``;
    walked from the last node down, so a node's consumers are placed before it."""
    out: list[tuple[Hashable, ...]] = [()] * len(keys)
    for j in range(len(keys) - 1, -1, -1):
        key = keys[j]
        if key is None:
            theirs = {out[i] for i in consumers[j]}
            key = theirs.pop() if len(theirs) == 1 else (own, j)
        out[j] = key
    return out


def _join(group: Group, j: int, v: Value) -> None:
    """Node j (the node v) joins the group: a member, a tagged member if it has a role; the group keeps the
    layer and neuron its tagged members share."""
    group.members.append(j)
    role, k, m = _role(v)
    if not role:
        return
    group.tagged.setdefault(role, []).append(j)
    if len(group.tagged) == 1 and len(group.tagged[role]) == 1:
        group.layer, group.neuron = k, m
    elif (group.layer, group.neuron) != (k, m):
        group.layer = group.layer if group.layer == k else None
        group.neuron = group.neuron if group.neuron == m else None


def _gather(
    level: str, keys: list[tuple[Hashable, ...]], nodes: Sequence[Value], parents: Sequence[Sequence[int]]
) -> Grouping:
    """The groups from each node's key: members, tagged members, the edges between groups."""
    position: dict[tuple[Hashable, ...], int] = {}
    groups: list[Group] = []
    group_of = []
    for j, key in enumerate(keys):
        g = position.get(key)
        if g is None:
            g = position[key] = len(groups)
            groups.append(Group(key=key, kind=str(key[0])))
        group_of.append(g)
        _join(groups[g], j, nodes[j])
    edges: dict[tuple[int, int], None] = {}
    for i, pa in enumerate(parents):
        for j in pa:
            if group_of[j] != group_of[i]:
                edges[(group_of[j], group_of[i])] = None
    for u, v in edges:  # a loss computed from losses: their mean over the minibatch
        if groups[u].kind == groups[v].kind == "loss":
            groups[v].of += 1
    applied: dict[tuple[str, int | None, int | None], int] = {}
    for group in groups:
        if group.kind in ("node", "bnode"):  # an untagged node and what only it uses
            group.kind = "scalar" if len(group.members) == 1 else "node"
        if level == "neurons" and group.kind in ("neuron", "loss") and not group.of:
            which = (group.kind, group.layer, group.neuron)  # the how-manieth application (example)
            applied[which] = group.example = applied.get(which, 0) + 1
    for group in groups:
        if group.example is not None:
            group.examples = applied[(group.kind, group.layer, group.neuron)]
    return Grouping(level=level, groups=groups, group_of=group_of, edges=list(edges))


def group_graph(graph: Graph, level: str) -> Grouping:
    """The groups of G at ``level``: every node in exactly one (see the module's docstring).

    Args:
        graph: G.
        level: ``"layers"`` or ``"neurons"``.

    Returns:
        A :class:`Grouping` whose positions are G's (``graph.index``).

    Raises:
        ValueError: an unknown level.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.4 and 6.5.7.
    """
    _check_level(level, "group_graph(graph, level)")
    nodes, index = graph.nodes, graph.index
    keys = [_key(v, i, level, index) for i, v in enumerate(nodes)]
    consumers = [[e[0] for e in edges] for edges in graph.consumers()]
    return _reorder(_gather(level, _claim(keys, consumers, "node"), nodes, graph.parents))


_KIND_ORDER = {"input": 0, "weights": 1, "biases": 2, "parameters": 1, "layer": 3, "neuron": 3}
_END_ORDER = {"loss": 0, "regularizer": 1, "cost": 2}


def _reading(g: Group) -> tuple[int, ...]:
    """The order a reader takes the groups in (and Tab does): the inputs, then layer by layer its parameters
    and its neurons (example by example, neuron 0 first), then the losses, the regularizer, J; groups of
    untagged nodes last, in G's order."""
    if g.kind == "input":  # example by example: the leaves' order
        return (0, 0, 0, 0, 0, g.members[0])
    if g.kind in _KIND_ORDER:
        layer = g.layer or 0
        return (0, layer, _KIND_ORDER[g.kind], g.example or 0, g.neuron or 0, g.members[0])
    if g.kind in _END_ORDER:
        return (1, _END_ORDER[g.kind], 1 if g.of else 0, g.example or 0, 0, g.members[0])
    return (2, 0, 0, 0, 0, g.members[-1])


def _reorder(grouping: Grouping) -> Grouping:
    """The same grouping with its groups in reading order (:func:`_reading`)."""
    order = sorted(range(len(grouping.groups)), key=lambda g: _reading(grouping.groups[g]))
    new = {old: k for k, old in enumerate(order)}
    return Grouping(
        level=grouping.level,
        groups=[grouping.groups[g] for g in order],
        group_of=[new[g] for g in grouping.group_of],
        edges=[(new[u], new[v]) for u, v in grouping.edges],
    )


def group_backward(graph: Graph, grouping: Grouping, B: Sequence[Value]) -> Grouping:
    """The groups of B's nodes ``B`` (in B's topological order), G's grouping carried over.

    A gradient node dz/du lies in u's group (see the module's docstring when it is the entry of several);
    B's other nodes join their consumers' group in B, as in G. Keys are G's, so a group of B and the
    group of G with the same key stand for the same part of the network.

    Args:
        graph: G. grouping: G's grouping. B: the nodes of B to group, parents before children.

    Returns:
        A :class:`Grouping` whose positions are those of ``B``; its ``tagged`` lists B's gradient nodes by
        the role of the node of G they are the entry of.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, figure 6.10.
    """
    position = {v: k for k, v in enumerate(B)}
    index, groups = graph.index, grouping.groups
    entry_of = [_entry_of(v, index) for v in B]
    keys = [None if u is None else groups[grouping.group_of[index[u]]].key for u in entry_of]
    consumers: list[list[int]] = [[] for _ in B]
    parents = []
    for k, v in enumerate(B):
        pa = [position[p] for p in v.inputs if p in position]
        parents.append(pa)
        for j in pa:
            consumers[j].append(k)
    out = _gather(grouping.level, _claim(keys, consumers, "bnode"), B, parents)
    in_g = {g.key: g for g in groups}
    for g in out.groups:
        twin = in_g.get(g.key)
        if twin is not None:  # the same part of the network as a group of G
            g.kind, g.layer, g.neuron = twin.kind, twin.layer, twin.neuron
            g.example, g.examples, g.of = twin.example, twin.examples, twin.of
        g.tagged = {}  # B's gradient nodes, by the role of the node of G they are the entry of
        for k in g.members:
            u = entry_of[k]
            if u is not None and _role(u)[0]:
                g.tagged.setdefault(_role(u)[0], []).append(k)
    return _reorder(out)


def _entry_of(v: Value, index: dict[Value, int]) -> Value | None:
    """The node of G whose grad_table entry the node v of B is: of several (an addition passes its entry on
    unchanged, so one node of B can be the entry of a sum's every term), the last in G's order that carries
    a role (a(k) rather than the running sums that feed it, a(k) rather than the loss's z - max z), else
    the last; None for a node of B that is no entry."""
    of = [u for u in (v.meta.grad_of if v.meta is not None else ()) if u in index]
    tagged = [u for u in of if _role(u)[0]]
    return max(tagged or of, key=index.__getitem__) if of else None
