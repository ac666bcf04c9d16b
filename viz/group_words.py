"""What the box of a layer or a neuron says: its title, the book's formula, and rows of the engine's numbers.

A row of numbers is a :class:`Row`: a head (``a(1) = ``), the nodes whose numbers it shows (at most
:data:`SHOWN`), and a tail saying how many there are in all. Python writes the numbers the engine computed
(a node's value, a grad_table entry), and the explorer's page writes its own into the same rows (the slots of
its generated program) from the same heads and nodes, so both say the same thing; neither adds, averages or
otherwise computes a number of its own.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4 (Algorithm 6.3's names: x,
W(k), b(k), a(k), h(k), L, lambda Omega(theta), J).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from micrograph.engine import Value
from viz.groups import Group
from viz.words import clean, count, fmt

__all__ = ["SHOWN", "Row", "heading", "titles", "value_rows", "backward_rows", "row_text"]

SHOWN = 4
"""The most numbers a row of a box writes; a row of more says how many there are in all."""

_ROLES = ("input", "weight", "bias", "a", "h", "loss", "regularizer", "cost")


@dataclass
class Row:
    """One row of numbers in a box: ``head`` then the numbers of ``nodes`` (comma-separated) then ``tail``.

    Attributes:
        head: ``"a(1) = "``, ``"∂J/∂h1[3] = "``.
        nodes: the positions (in G, or in B's list) of the nodes whose numbers are written, at most SHOWN.
        tail: ``", … (16 in all)"`` when the row stands for more nodes, else ``""``.
        grad: True when the numbers are the grad_table entries of the nodes of G (else their values).
    """

    head: str
    nodes: list[int]
    tail: str
    grad: bool


def row_text(row: Row, number: Callable[[int], float | None]) -> str:
    """The row as text, each node's number ``number(position)`` formatted as :func:`viz.words.fmt`."""
    return row.head + ", ".join(fmt(number(i)) for i in row.nodes) + row.tail


def _name(role: str, g: Group, nodes: Sequence[Value], level: str) -> str:
    """The book's name of the role's nodes in the group: ``a(1)`` for a layer, ``a1[3]`` for a neuron."""
    k, m = g.layer, g.neuron
    if role in ("loss", "regularizer", "cost"):
        return {"loss": "L", "regularizer": "λΩ", "cost": "J"}[role]
    if role == "input":
        return "x" if level == "layers" or len(nodes) != 1 else clean(nodes[0].label, 12) or "x"
    if level == "layers":
        return f"{'W' if role == 'weight' else 'b' if role == 'bias' else role}({k})"
    if role == "weight":
        return f"W{k}[{m},:]"
    return f"{'b' if role == 'bias' else role}{k}[{m}]"


def _rows(
    g: Group, nodes: Sequence[Value], level: str, prefix: str, grad: bool, names: Sequence[str] = ()
) -> list[Row]:
    out = []
    for role in _ROLES:
        members = g.tagged.get(role)
        if not members:
            continue
        name = names[_ROLES.index(role)] if names else _name(role, g, [nodes[i] for i in members], level)
        tail = f", … ({len(members)} in all)" if len(members) > SHOWN else ""
        out.append(Row(head=f"{prefix}{name} = ", nodes=members[:SHOWN], tail=tail, grad=grad))
    return out


def value_rows(g: Group, nodes: Sequence[Value], level: str, zname: str) -> list[Row]:
    """A box of G's rows: the values of its tagged nodes by role, then their grad_table entries dz/du."""
    return _rows(g, nodes, level, "", False) + _rows(g, nodes, level, f"∂{zname}/∂", True)


def backward_rows(g: Group, twin: Group | None, B: Sequence[Value], G: Sequence[Value], level: str,
                  zname: str) -> list[Row]:  # fmt: skip
    """A box of B's rows: the values of its gradient nodes (grad_table entries), by the role of their u.

    ``twin`` is the group of G with the same key, whose tagged nodes name the roles (``∂J/∂a(1) = ``).
    """
    names = [_name(role, twin, [G[i] for i in twin.tagged.get(role, [])], level) if twin else role
             for role in _ROLES]  # fmt: skip
    return _rows(g, B, level, f"∂{zname}/∂", False, names)


def heading(g: Group, lines: Sequence[str]) -> list[str]:
    """A box's lines above its numbers: its name and how many scalars it holds, then its formula."""
    return [f"{lines[0]} · {count(len(g.members), 'scalar')}", *lines[1:]]


def titles(g: Group, nodes: Sequence[Value], level: str, names: Mapping[Value, str], zname: str) -> list[str]:
    """What the group is (its name, the first line) and the book's formula for it (the lines after)."""
    k, m = g.layer, g.neuron
    kind = g.kind
    if kind == "layer":
        h = g.tagged.get("h")
        f = nodes[h[0]].op.symbol if h and nodes[h[0]].op is not None else ""  # type: ignore[union-attr]
        lines = [f"layer {k}", f"a({k}) = b({k}) + W({k}) h({k - 1 if k else '?'})"]
        lines.append(f"h({k}) = {f}(a({k}))" if f else f"h({k}) = a({k}), f the identity")
        return lines
    if kind == "neuron":
        h = g.tagged.get("h")
        f = nodes[h[0]].op.symbol if h and nodes[h[0]].op is not None else ""  # type: ignore[union-attr]
        example = f" · example {g.example}" if g.examples > 1 else ""
        lines = [
            f"neuron {m} of layer {k}{example}",
            f"a{k}[{m}] = b{k}[{m}] + W{k}[{m},:] h({k - 1 if k else '?'})",
        ]
        lines.append(f"h{k}[{m}] = {f}(a{k}[{m}])" if f else f"h{k}[{m}] = a{k}[{m}], f the identity")
        return lines
    if kind in ("weights", "biases"):
        what = "weights W" if kind == "weights" else "biases b"
        return [f"{what}({k}) of layer {k}"]
    if kind == "parameters":
        return [f"W{k}[{m},:], b{k}[{m}]: neuron {m}'s parameters"]
    if kind == "input":
        return [
            "inputs x = h(0)"
            if level == "layers"
            else f"input {_name('input', g, [nodes[g.members[0]]], level)}"
        ]
    if kind == "loss":
        if len(g.tagged.get("loss", [])) > 1:  # by layers: every example's loss and their mean
            return ["L: the loss of each example and their mean"]
        if g.of:
            return [f"L: the mean loss over {g.of} examples"]
        return [f"L: the loss{f' of example {g.example}' if g.examples > 1 else ''}"]
    if kind == "regularizer":
        return ["λΩ(θ): the regularizer"]
    if kind == "cost":
        return ["J = L + λΩ(θ): the cost"]
    root = nodes[g.members[-1]]  # an untagged node and the nodes only it uses
    who = clean(root.label, 20) or names.get(root, "?")
    return [f"{who} and the {count(len(g.members) - 1, 'node')} only it uses"]
