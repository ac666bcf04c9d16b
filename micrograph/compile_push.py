"""The pushes of ``Value.backward`` compiled from the operation table: the push form as generated code.

``Value.backward`` (:func:`micrograph.push.backward`) walks the nodes from z in reverse topological order
and lets each push its gradient into its parents, ``parent.grad += g * du/dx_k``, calling the operation's
rule for du/dx_k (section 6.5.6). This module writes the same pushes out as Python source and compiles
them, so that no rule is called and no method is looked up per node:

* :func:`push_source`: the statements of one node's pushes for one operation, each local derivative its
  rule written out by :func:`micrograph.templates.derivative_source` (a rule that cannot be written out is
  called);
* :func:`push_function`: those statements compiled as ``push(node, g)``, once per operation;
* :func:`push_loop`: the whole loop, ``push_all(order)``, compiled once, on first use: the statements of
  the most frequent operations (:data:`INLINED`) written into it, every other operation's
  ``push_function`` called.

The text is the rules', operation for operation, so the gradients are those of the plain loop bit for bit
(a test holds them equal on random graphs). Like the plain loop, the loop raises OverflowError for a
gradient that is not finite (checked at the leaves, which every such gradient reaches), and what a rule
raises where a derivative does not exist; ``backward`` then restores every gradient and lets Algorithm
6.2 name the edge. (A rule's operation that overflows is an error in the plain loop, whose rules call the
table's checked operations, and a term that is not finite here, which the check stops at a leaf: either
way Algorithm 6.2 then decides.)

The module reads the node's slots (``data``, ``grad``, ``op``, ``_a``, ``_b``) and the table only: it sits
below the node's class, which it never imports.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from micrograph.ops import ADD, MUL, RELU, TANH, Op
from micrograph.templates import derivative_source

if TYPE_CHECKING:
    from micrograph.engine import Value

__all__ = ["INLINED", "push_source", "push_function", "push_loop"]

INLINED = (ADD, MUL, RELU, TANH)
"""The operations whose pushes the loop holds written out, most frequent first: the rest are called."""

Push = Callable[[Any, float], None]
"""``push(node, g)``: add g × du/dx_k into the ``.grad`` of each parent x_k of ``node``."""

_functions: dict[Op, Push] = {}  # push_function's, compiled once per operation
_loop: list[Callable[[list[Value]], None]] = []  # push_loop's, compiled on first use


def push_source(op: Op) -> tuple[list[str], dict[str, Any]]:
    """The statements of one node's pushes for ``op``, and the names they use besides ``node`` and ``g``.

    Each statement adds g × du/dx_k into the ``.grad`` of parent x_k (``node._a``, ``node._b``), with
    du/dx_k written out from :func:`~micrograph.templates.derivative_source`; where a rule cannot be written
    out (it branches on a value), the rule is called.

    Returns:
        (lines, namespace): Python statements (no indentation) and the globals they need.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6.
    """
    namespace: dict[str, Any] = {"math": math}
    try:
        texts = []
        for k in range(op.arity):
            text, functions = derivative_source(op, k)
            namespace.update(functions)
            texts.append(text)
    except TypeError:  # a rule that branches on a value: call it
        rules = [f"_{op.name}_d{k}" for k in range(op.arity)]
        texts = [f"{rule}({'x, y, out' if op.arity == 2 else 'x, out'})" for rule in rules]
        namespace.update(dict(zip(rules, op.derivs)))
    body = ["a = node._a"] + (["b = node._b"] if op.arity == 2 else [])
    used = " ".join(texts)
    if re.search(r"\bx\b", used):
        body.append("x = a.data")
    if op.arity == 2 and re.search(r"\by\b", used):
        body.append("y = b.data")
    if re.search(r"\bout\b", used):
        body.append("out = node.data")
    for parent, text in zip("ab", texts):
        body.append(f"{parent}.grad += g" if text == "1.0" else f"{parent}.grad += g * {text}")
    return body, namespace


def push_function(op: Op) -> Push:
    """``push(node, g)`` for a node of ``op``: :func:`push_source`'s statements, compiled once per operation.

    The same results as calling the rules, bit for bit.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6.
    """
    push = _functions.get(op)
    if push is None:
        body, namespace = push_source(op)
        source = "def push(node, g):\n" + "".join(f"    {line}\n" for line in body)
        exec(compile(source, f"<push {op!r}>", "exec"), namespace)  # text from the table's own rules
        push = _functions[op] = namespace["push"]
    return push


def push_loop() -> Callable[[list[Value]], None]:
    """``push_all(order)``: each node of ``order`` (z first) pushes g × du/dx_k into its parents.

    Compiled on the first call: for the operations of :data:`INLINED` their :func:`push_source`
    statements are written into the loop (no call per node); any other operation's
    :func:`push_function` is called. Either way the arithmetic is the table's rule.

    Gradients are checked where they end, at the leaves: a gradient that is not finite is pushed on as a
    term that is not finite (inf × d is inf or nan, for any d), so it reaches every leaf below it. The
    check costs one test per leaf rather than one per node.

    Raises (from the compiled loop): OverflowError for a gradient that is not finite; ArithmeticError or
    ValueError from a rule (a derivative that does not exist).
    """
    if _loop:
        return _loop[0]
    namespace: dict[str, Any] = {"math": math, "push_function": push_function, "_compiled": _functions}
    branches = []
    for k, op in enumerate(INLINED):
        body, names = push_source(op)
        for name, value in names.items():  # each operation's helpers under names of their own
            if value is math:
                continue
            own = f"_op{k}{name}"
            body = [re.sub(rf"\b{re.escape(name)}\b", own, line) for line in body]
            namespace[own] = value
        namespace[f"_op{k}"] = op
        branches.append(f"        {'if' if k == 0 else 'elif'} op is _op{k}:\n")
        branches += [f"            {line}\n" for line in body]
    head = [
        f"def push_all(order, {', '.join(f'_op{k}=_op{k}' for k in range(len(INLINED)))}):  # locals\n",
        "    for node in order:\n",
        "        g = node.grad\n",
        "        op = node.op\n",
    ]
    tail = [
        "        elif op is not None:\n",
        "            (_compiled.get(op) or push_function(op))(node, g)\n",
        "        elif g - g != 0.0:  # a leaf's gradient inf or nan: backward lets Algorithm 6.2 say where\n",
        "            raise OverflowError('not finite')\n",
    ]
    source = "".join(head + branches + tail)
    exec(compile(source, "<Value.backward's pushes>", "exec"), namespace)  # text from the table's rules
    _loop.append(namespace["push_all"])
    return _loop[0]
