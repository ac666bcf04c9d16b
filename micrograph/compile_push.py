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
  ``push_function`` called;
* :func:`backward`: ``Value.backward`` when :data:`micrograph.push.COMPILED` is true: the loop over
  :func:`reverse_order`, the order it walks, z first, by :func:`micrograph.order.topological_order`'s
  depth-first search written for speed: a node's state kept in its ``.grad`` instead of a set (a test holds
  the two orders equal on random graphs), and :func:`unmark`, which undoes it.

The text is the rules', operation for operation, so the gradients are those of the plain loop bit for bit
(a test holds them equal on random graphs). One push is left out, where leaving it out changes no bit: a
node of an operation of :data:`INLINED` whose gradient is zero (below a ReLU that is off, say) would add
terms 0 × du/dx_k = ±0.0, and a sum that starts from +0.0 never becomes -0.0, so adding ±0.0 to it
changes nothing. Like the plain loop, the loop raises OverflowError for a
gradient that is not finite (checked at the leaves, which every such gradient reaches), and what a rule
raises where a derivative does not exist; ``backward`` then restores every gradient and lets Algorithm
6.2 name the edge. (A rule's operation that overflows is an error in the plain loop, whose rules call the
table's checked operations, and a term that is not finite here, which the check stops at a leaf: either
way Algorithm 6.2 then decides.)

The module reads the node's slots (``data``, ``grad``, ``op``, ``_a``, ``_b``) and the table only: it sits
below the node's class, which it never imports. What it writes is ``.grad``.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from micrograph.ops import ADD, MUL, RELU, TANH, Op
from micrograph.templates import derivative_source

if TYPE_CHECKING:
    from micrograph.engine import Value

__all__ = ["INLINED", "backward", "push_source", "push_function", "push_loop", "reverse_order", "unmark"]

INLINED = (ADD, MUL, RELU, TANH)
"""The operations whose pushes the loop holds written out, most frequent first: the rest are called.

Each one's local derivatives are finite wherever its node exists (1, the other argument, a ReLU's 0 or 1,
1 - tanh(x)²; a test holds it on extreme arguments), so a zero gradient pushes only terms ±0.0 through it,
which the loop leaves out."""

Push = Callable[[Any, float], None]
"""``push(node, g)``: add g × du/dx_k into the ``.grad`` of each parent x_k of ``node``."""

_functions: dict[Op, Push] = {}  # push_function's, compiled once per operation
_loop: list[Callable[[list[Value]], None]] = []  # push_loop's, compiled on first use

# CPython 3.10 gives a function's code its caches of attribute and global look-ups at its 1,024th call, and
# never before (3.11 and later specialize code as it runs, whatever the count of calls). The search and the
# loop of backward are called once a graph, so on 3.10 they would run uncached for the first thousand
# graphs, their look-ups about 1.5 times as slow: each is called that many times on a trivial input at
# first use instead (about a millisecond, once). docs/performance.md, *Per Python version*, has the times.
_CALLS_BEFORE_CACHES = 1024 if sys.version_info < (3, 11) else 0
_search_cold = [_CALLS_BEFORE_CACHES > 0]  # until backward has called reverse_order those times


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

    A node of an :data:`INLINED` operation whose gradient is zero pushes nothing: its terms would be ±0.0
    (its derivatives are finite), and adding ±0.0 to a sum that started from +0.0 changes no bit. (Any
    other operation's rule still runs: it may raise where its derivative does not exist, or give
    0 × inf = nan, as in the plain loop.) A node that no push reached still holds the search's mark from
    :func:`reverse_order`; the loop sets it to 0.0.

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
    namespace["_done"] = _DONE
    head = [
        f"def push_all(order, {', '.join(f'_op{k}=_op{k}' for k in range(len(INLINED)))}, _done=_done):\n",
        "    for node in order:\n",
        "        g = node.grad\n",
        "        op = node.op\n",
        "        if g == 0.0:  # an operation written out here pushes terms +-0.0, which change no sum\n",
        "            if g is _done:  # no push reached the node: the search's mark cleared\n",
        "                node.grad = 0.0\n",
        f"            if op is None or {' or '.join(f'op is _op{k}' for k in range(len(INLINED)))}:\n",
        "                continue\n",
    ]
    tail = [
        "        elif op is not None:\n",
        "            (_compiled.get(op) or push_function(op))(node, g)\n",
        "        elif g - g != 0.0:  # a leaf's gradient inf or nan: backward lets Algorithm 6.2 say where\n",
        "            raise OverflowError('not finite')\n",
    ]
    source = "".join(head + branches + tail)
    exec(compile(source, "<Value.backward's pushes>", "exec"), namespace)  # text from the table's rules
    push_all = namespace["push_all"]
    for _ in range(_CALLS_BEFORE_CACHES):  # CPython 3.10: the loop's look-ups cached (see above)
        push_all([])
    _loop.append(push_all)
    return push_all


def backward(z: Value, gradient: float) -> bool:
    """:func:`micrograph.push.backward`'s order and pushes, written for speed: add dz/du into every ``.grad``.

    :func:`reverse_order` (which also sets the earlier gradients aside), z's gradient seeded, the
    compiled :func:`push_loop`, the earlier gradients added back: the plain loop's steps, with the same
    results bit for bit. The caller pauses the collector.

    Args:
        z: the node to back-propagate from.
        gradient: the seed dz/dz (a float).

    Returns:
        True; False if a push failed (a derivative that does not exist, a gradient not finite), every
        ``.grad`` then as it was before the call, for the caller to let Algorithm 6.2 name the edge.

    Raises:
        ValueError: the graph has a cycle (no ``.grad`` changed). KeyboardInterrupt and the like pass
        through with every ``.grad`` as it was.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6.
    """
    if _search_cold[0]:  # CPython 3.10: the search's look-ups cached (see above), on a leaf of z's class
        _search_cold[0] = False
        leaf = object.__new__(z.__class__)
        leaf.grad, leaf._a, leaf._b = 0.0, None, None
        for _ in range(_CALLS_BEFORE_CACHES):
            reverse_order(leaf)
    order, held = reverse_order(z)
    z.grad = gradient
    try:
        push_loop()(order)
    except (ArithmeticError, ValueError):
        unmark(order, held)
        return False
    except BaseException:
        unmark(order, held)
        raise
    add_back(order, held)
    return True


def add_back(order: list[Value], held: list[tuple[Value, float]]) -> None:
    """The gradients set aside before the pushes, added back into their nodes (``.grad += old``).

    Raises:
        OverflowError: a node's sum overflows (its earlier gradient and this call's, each finite); every
            ``.grad`` of ``order`` is then as it was before the call.
    """
    totals = [node.grad + old for node, old in held]  # IEEE addition is commutative: the pushes' order kept
    for (node, old), total in zip(held, totals):
        if total - total != 0.0:
            new = node.grad
            unmark(order, held)
            raise OverflowError(
                f"backward: the gradient accumulated in {node!r} overflows: {old!r} held before this call "
                f"+ {new!r} from it; every .grad is as it was (call zero_grad() between steps)"
            )
    for (node, _), total in zip(held, totals):
        node.grad = total


# The marks of reverse_order's search, each a float 0.0 of its own, told apart by identity: _OPEN for a node
# whose parents are being searched, _DONE for a node in the order. No other .grad is ever one of these
# objects (a sum makes a new float), and a node in the order needs no reset afterwards: its gradient is
# already the 0.0 that the pushes add into, and push_loop sets the mark of a node that no push reached.
_OPEN = float("0")
_DONE = float("0")


def reverse_order(z: Value) -> tuple[list[Value], list[tuple[Value, float]]]:
    """The ancestors of z, z first, each before its parents; every ``.grad`` among them set to zero.

    The reverse of :func:`micrograph.order.topological_order` ``((z,))``, node for node (a test holds them
    equal), by the same depth-first search written for ``Value.backward``, where speed matters most: a
    node's state is kept in its ``.grad`` (its old gradient is set aside first), so no set of finished nodes
    is built and looked up. A node is opened when it first reaches the top of the stack: its unfinished
    parents are pushed, the second above the first (a parent pushed twice is skipped when it comes up
    finished), and the parent now on top is opened at once, without a turn of the outer loop. A node is
    finished (appended to the order) when it is on top again, or at once if no parent is unfinished, so
    every node comes after its parents, and the first parent's ancestors before the second's; the order
    is then reversed.

    Returns:
        The order, and the nodes that held a non-zero gradient with those gradients (``backward`` adds them
        back at the end; :func:`unmark` restores them).

    Raises:
        ValueError: the graph has a cycle (made through the parent slots); every ``.grad`` is restored.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.1 and 6.5.6.
    """
    order: list[Value] = []
    held: list[tuple[Value, float]] = []
    keep, append = held.append, order.append
    opened, done = _OPEN, _DONE
    stack = [z]
    push, pop = stack.append, stack.pop
    try:
        while stack:
            node = stack[-1]
            g = node.grad
            if g is opened:  # on top again: its parents are finished, and so is it
                pop()
                node.grad = done
                append(node)
                continue
            if g is done:  # pushed twice, finished since
                pop()
                continue
            while True:  # node, on top of the stack, is opened; then its parent on top, at once
                if g:
                    keep((node, g))
                a = node._a  # the opened nodes are the path: an opened parent closes a cycle
                if a is None:
                    break
                b = node._b
                if b is not None:
                    gb = b.grad
                    if gb is not done:
                        if gb is opened or b is node:
                            raise _cycle(node)
                        node.grad = opened
                        push(b)
                        ga = a.grad
                        if ga is done:
                            node, g = b, gb
                            continue
                        if ga is opened:
                            raise _cycle(node)
                        push(a)
                        node, g = a, ga
                        continue
                ga = a.grad
                if ga is done:
                    break
                if ga is opened or a is node:
                    raise _cycle(node)
                node.grad = opened
                push(a)
                node, g = a, ga
            pop()  # every parent finished: so is the node
            node.grad = done
            append(node)
    except BaseException:  # a cycle, or interrupted: every node marked so far gets its gradient back
        unmark(order, held, stack)
        raise
    order.reverse()
    return order, held


def unmark(order: list[Value], held: list[tuple[Value, float]], more: Iterable[Value] = ()) -> None:
    """Undo :func:`reverse_order` and any pushes since: each ``.grad`` of ``order`` as it was before.

    Args:
        order: the nodes :func:`reverse_order` returned (or finished, if it was interrupted).
        held: the gradients it set aside.
        more: nodes it may have marked besides (its stack, when it was interrupted).
    """
    for node in order:
        node.grad = 0.0
    for node in more:  # the stack: opened nodes, and pushed ones not opened yet (their .grad untouched)
        if node.grad is _OPEN or node.grad is _DONE:
            node.grad = 0.0
    for node, old in held:
        node.grad = old


def _cycle(node: Value) -> ValueError:
    return ValueError(
        f"the graph has a cycle: the node {node!r} is its own ancestor (a node's parents must be built "
        "before it; were its parent slots changed by hand?)"
    )
