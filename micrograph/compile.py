"""A graph G and its backward subgraph B compiled to straight-line Python: fast replay of Algorithms 6.1/6.2.

Section 6.5.5 of the book: once the graph exists, "a generic graph evaluation engine can later compute the
derivatives for any specific numeric values". :meth:`Graph.forward` and :meth:`Graph.backprop` are that
engine as an interpreter: a loop over the stored order that looks up each node's operation. This module
writes the same loop out as Python source, one assignment per node, and lets Python compile it:

* **Forward** (Algorithm 6.1): the inputs u(1)..u(n_i) taken from the list ``x`` (``(u1, u2, ...) = x``,
  one line each), then ``u5 = u3 * u4`` for every u(i), i = n_i+1..n, in the stored order, each from the
  operation's code template (:attr:`micrograph.ops.Op.code`), or a call of the operation's own numeric
  function ``f`` where it has no template.
* **Backward**: not a second set of derivative templates. :func:`micrograph.grad` (Algorithms 6.5/6.6)
  builds the backward subgraph B from the operation table's derivative rules; B is an ordinary graph of
  ordinary nodes, so the *same* generator writes it out, after G. The gradient nodes of B are named
  ``grad_u5`` (the grad_table entry dz/du(5)), B's other nodes continue the numbering ``u(n+1), ...``,
  and B's constants (the seed 1, the 1 in tanh's rule ...) are written as numbers.

**Dialects.** The same statement generator writes JavaScript (:func:`compile_javascript`), from the ``js``
template beside each operation's Python one: G's nodes, then B and any other nodes built on G by the
derivative rules, one assignment per node into a ``Float64Array``. The explorer page (:mod:`viz.explore`)
evaluates G and B with it, in the browser.

The source holds only generated identifiers, numbers and comments made of them: a node's label (user
text) never goes into the code. Each statement computes one node, so no expression is nested deeper than
one operation; a graph of more than ``part_size`` statements is split into several functions (parts), each
compiled separately, so that Python's compiler never holds more than one part at a time (a chain of
100,000 nodes compiles in a few seconds).

Errors are those of the interpreter. Algorithm 6.1 rejects an operation outside its domain and any value
of G that is not finite; the generated code adds G's values up (one inf or nan makes the sum inf or nan),
and the call adds the returned gradients to that sum: B's operations pass an inf or nan on (products,
sums, differences, and divisions whose divisor is a value of G), so a non-finite value anywhere in B
reaches a gradient. When the sum is not finite or an operation raises (in G or in B), the call re-runs
Algorithms 6.1 and 6.2 on the graph, which raise the same :class:`~micrograph.DomainError` naming the node,
or return their own numbers (when only the check sum overflowed, or the interpreter lets an infinite
gradient through).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 (Algorithms 6.1, 6.2),
6.5.5 (symbol-to-symbol derivatives), 6.5.6 (Algorithms 6.5, 6.6).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from micrograph.backprop import grad_table_list
from micrograph.engine import Value
from micrograph.forward import input_values
from micrograph.graph import Graph, Inputs, topological_order
from micrograph.memory import paused_gc
from micrograph.ops import OPS, Op, pow_const
from micrograph.symbolic import grad

__all__ = ["CompiledGraph", "compile_graph", "JavaScriptProgram", "compile_javascript"]

FUNCTION = "forward_backward"
"""The generated function: ``forward_backward(x) -> (u(n), [dz/dw for w in wrt], [kept], check sum)``."""

_CHECK_TERMS = 10
"""How many values one check-sum statement adds up (keeps each line short)."""


class CompiledGraph:
    """A graph G compiled with its gradient: ``f(values) -> (z, [dz/dw for w in wrt])``, no nodes built.

    Made by :func:`compile_graph`. Calling it takes what :meth:`Graph.forward` takes and changes no node.

    Attributes:
        graph (Graph): G, the graph compiled.
        wrt (list[Value]): the nodes the gradients are taken with respect to, in the order returned.
        source (str): the generated Python source (one statement per node, commented).
        backward (list[Value]): the gradient nodes of B returned by :func:`micrograph.grad`, in wrt order.
        keep (list[Value]): nodes of G whose values :meth:`evaluate_all` returns too.
        n_statements (int): how many node statements the source has (G's and B's, inputs included).
        parts (int): how many functions the source was split into (1 unless the graph is large).
        compile_seconds (float): the time :func:`compile_graph` took, in seconds.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 and 6.5.6.
    """

    __slots__ = (
        "graph", "wrt", "keep", "source", "backward", "n_statements", "parts", "compile_seconds", "_fn",
    )  # fmt: skip

    def __init__(
        self, graph: Graph, wrt: list[Value], keep: list[Value], source: str, backward: list[Value],
        fn: Callable[[Sequence[float]], tuple[float, list[float], list[float], float]], n_statements: int,
        parts: int,
    ) -> None:  # fmt: skip
        self.graph = graph
        self.wrt = wrt
        self.keep = keep
        self.source = source
        self.backward = backward
        self._fn = fn
        self.n_statements = n_statements
        self.parts = parts
        self.compile_seconds = 0.0

    def __repr__(self) -> str:
        return (
            f"<CompiledGraph of {self.graph!r}: {len(self.wrt)} gradient(s), "
            f"{self.n_statements} statements in {self.parts} part(s)>"
        )

    def __call__(self, values: Inputs | None = None) -> tuple[float, list[float]]:
        """Algorithms 6.1 and 6.2 as compiled code: z and its gradients at the given inputs.

        Args:
            values: what :meth:`Graph.forward` takes: ``{leaf: number}`` (leaves not named keep their
                current ``.data``, so parameters updated in place are seen), a sequence of numbers in
                ``graph.leaves`` order or in ``graph.variables`` order, or None for the current values.

        Returns:
            ``(value, grads)``: z = u(n) as a float, and dz/dw for every w in ``wrt`` (a list of floats).

        Raises:
            ValueError, TypeError: bad ``values``, as :meth:`Graph.forward` raises them.
            DomainError: the same error Algorithm 6.1 or 6.2 raises on the graph, naming the node.
        """
        return self.evaluate(input_values(self.graph, values)[: self.graph.n_inputs])

    def evaluate(self, x: Sequence[float]) -> tuple[float, list[float]]:
        """The fast path of ``f(values)``: ``x`` holds u(1)..u(n_i) as floats, in ``graph.leaves`` order.

        No parsing: this is what a training loop calls once it has the input list (e.g.
        ``[v.data for v in graph.leaves]`` with an example's features written in).

        Args:
            x: the values of u(1)..u(n_i), floats, ``len(x) == graph.n_inputs``.

        Returns:
            ``(value, grads)`` as :meth:`__call__`.

        Raises:
            ValueError: if ``len(x)`` is not n_i, or an input is not finite (the engine's operations take
                finite numbers only).
            DomainError: as :meth:`__call__`.
        """
        value, grads, _ = self.evaluate_all(x)
        return value, grads

    def evaluate_all(self, x: Sequence[float]) -> tuple[float, list[float], list[float]]:
        """:meth:`evaluate`, also returning the values of the ``keep`` nodes: ``(value, grads, kept)``.

        Raises:
            ValueError, DomainError: as :meth:`evaluate`.
        """
        if len(x) != self.graph.n_inputs:
            raise ValueError(
                f"evaluate: got {len(x)} values for the {self.graph.n_inputs} inputs of {self.graph!r}"
            )
        try:
            value, grads, kept, check = self._fn(x)
            check += sum(grads)  # a non-finite value in B reaches a gradient (see the module's docstring)
            check += sum(x)  # a non-finite input may vanish in a value (relu(nan) would be 0): refuse it
        except (ArithmeticError, ValueError):  # an operation outside its domain
            check = math.nan
        # some value is inf or nan (or the check sum overflowed): the interpreter decides
        if check - check != 0.0:
            return self._interpreted(x)
        return value, grads, kept

    def _interpreted(self, x: Sequence[float]) -> tuple[float, list[float], list[float]]:
        """Algorithms 6.1 and 6.2 on the graph itself, with every node's ``.data`` restored afterwards.

        Raises exactly what they raise; returns their numbers when they succeed.
        """
        g = self.graph
        saved = [v.data for v in g.nodes]
        try:
            value = g.forward(list(x))
            kept = [v.data for v in self.keep]
            table = grad_table_list(g)
        finally:
            with paused_gc():
                for v, d in zip(g.nodes, saved):
                    v.data = d
        index = g.index
        return value, [table[index[w]] if w in index else 0.0 for w in self.wrt], kept


def compile_graph(
    g: Graph, wrt: Value | Sequence[Value], *, keep: Sequence[Value] = (), part_size: int = 5000
) -> CompiledGraph:
    """Compile G and its backward subgraph B to one Python function: ``f(values) -> (z, grads)``.

    B is built by :func:`micrograph.grad` (Algorithms 6.5/6.6) on G's nodes; G's nodes u(1)..u(n) and then
    B's nodes are written out by one code generator, one assignment per node in topological order.

    Args:
        g: the graph G (its output is z).
        wrt: the nodes to differentiate with respect to (usually leaves of G: variables, parameters), or
            one node.
            A node z does not depend on gets a gradient of 0.
        keep: nodes of G whose values :meth:`CompiledGraph.evaluate_all` also returns (e.g. a model's
            output inside a loss graph).
        part_size: the most node statements one generated function holds; larger graphs are split into
            parts, each compiled on its own, which bounds the memory Python's compiler needs.

    Returns:
        A :class:`CompiledGraph` ``f``: ``f(values)`` returns ``(value, grads)``; ``f.source`` is the code.

    Raises:
        TypeError: if ``g`` is not a Graph, ``wrt`` is not a Value or a sequence of them, or ``part_size``
            is not an int.
        ValueError: if ``wrt`` is empty, ``part_size < 1`` or a ``keep`` node is not in G.
        DomainError: if B cannot be built at the graph's current values (a local derivative that does not
            exist there, such as sqrt's at 0): :func:`micrograph.grad` evaluates B's nodes as it builds them.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3, 6.5.5, 6.5.6.
    """
    start = time.perf_counter()
    if not isinstance(g, Graph):
        raise TypeError(f"compile_graph takes a Graph (e.g. Graph(z)), got {type(g).__name__} {g!r}")
    if isinstance(wrt, Value):
        wrt = [wrt]
    if isinstance(part_size, bool) or not isinstance(part_size, int):
        raise TypeError(
            f"compile_graph: part_size must be an int, got {type(part_size).__name__} {part_size!r}"
        )
    if part_size < 1:
        raise ValueError(f"compile_graph: part_size must be at least 1, got {part_size!r}")
    if isinstance(wrt, (str, bytes)) or not isinstance(wrt, Iterable):
        raise TypeError(
            f"compile_graph: wrt must be a Value or a sequence of Values, got {type(wrt).__name__} {wrt!r}"
        )
    targets = list(wrt)
    if not targets:
        raise ValueError("compile_graph: wrt is empty; give the nodes to differentiate with respect to")
    for k, v in enumerate(targets):
        if not isinstance(v, Value):
            raise TypeError(f"compile_graph: wrt[{k}] must be a Value, got {type(v).__name__} {v!r}")
    kept = list(keep)
    for v in kept:
        if v not in g.index:
            raise ValueError(f"compile_graph: keep={v!r} is not a node of {g!r}")
    backward = grad(g.output, targets)  # B: Algorithms 6.5 and 6.6, the same derivative rules as 6.2
    with paused_gc():
        source, parts, n_statements, namespace = _Generator(g, backward, kept).generate(part_size)
        fn = _build(parts, namespace)
    f = CompiledGraph(g, targets, kept, source, backward, fn, n_statements, len(parts) - 1 or 1)
    f.compile_seconds = time.perf_counter() - start
    return f


# -------------------------------------------------------------------------------------------------
# The code generator: one statement per node, for G and for B alike.


def _literal(x: float) -> str:
    """A float as Python source: ``repr`` for a finite number, a namespace name for inf and nan."""
    if math.isfinite(x):
        return f"({x!r})" if x < 0.0 or (x == 0.0 and math.copysign(1.0, x) < 0.0) else repr(x)
    if math.isnan(x):
        return "NAN"
    return "INF" if x > 0.0 else "(-INF)"


def _trusted(op: Op) -> bool:
    """Whether ``op`` is an operation of micrograph's own table (whose template and name may go into code)."""
    if OPS.get(op.name) is op:
        return True
    return op.name == "pow" and op.param is not None and op.arity == 1 and pow_const(op.param) is op


class _Generator:
    """Writes the statements of G and B; names every node; splits the statements into parts."""

    def __init__(self, g: Graph, backward: list[Value], keep: list[Value]) -> None:
        self.g = g
        self.backward = backward
        self.keep = keep
        self.names: dict[Value, str] = {}  # node -> identifier or number
        self.book: dict[Value, str] = {}  # node -> the book's name, for comments
        self.functions: dict[Any, str] = {}  # an Op's numeric f -> its name in the namespace
        self.namespace: dict[str, Any] = {"math": math, "INF": math.inf, "NAN": math.nan}
        self.header: list[str] = []

    # --- names ------------------------------------------------------------------------------------
    def _name_nodes(self) -> list[Value]:
        """Name G's nodes u1..un and B's nodes; return B's computed nodes in topological order."""
        g = self.g
        index = g.index
        for i, v in enumerate(g.nodes):
            self.names[v] = f"u{i + 1}"
            self.book[v] = f"u({i + 1})"
        order = [v for v in topological_order(self.backward) if v not in index]
        m = len(g.nodes)
        computed = []
        for v in order:
            if v.op is None:  # a constant of B (the seed 1, a rule's 1.0 ...): written as a number
                self.names[v] = self.book[v] = _literal(v.data)
                continue
            of = v.grad_of
            if of is not None and of in index:  # a grad_table entry: dz/du(k)
                k = index[of] + 1
                self.names[v] = f"grad_u{k}"
                self.book[v] = f"grad_table[u({k})]"
            else:
                m += 1
                self.names[v] = f"u{m}"
                self.book[v] = f"u({m}) of B"
            computed.append(v)
        return computed

    def _function(self, op: Op) -> str:
        """The namespace name bound to ``op.f`` (for operations without a code template)."""
        name = self.functions.get(op.f)
        if name is None:
            if _trusted(op) and op.param is None:
                name = f"f_{op.name}"
            else:
                name = f"f_{len(self.functions) + 1}"
            self.functions[op.f] = name
            self.namespace[name] = op.f
            self.header.append(f"# {name}: the numeric function f of {self._op_text(op)}")
        return name

    @staticmethod
    def _op_text(op: Op) -> str:
        if not _trusted(op):
            return "an operation outside micrograph's table"
        return op.name if op.param is None else f"pow_const({op.param!r})"

    # --- one statement per node: the generator used for G and for B --------------------------------
    @staticmethod
    def template(op: Op) -> str | None:
        """The dialect's expression template of a trusted operation (Python: ``op.code``)."""
        return op.code

    @staticmethod
    def line(name: str, expr: str, comment: str) -> str:
        """One assignment in the dialect."""
        return f"{name} = {expr}  # {comment}"

    def statement(self, v: Value) -> str:
        """``name = expression  # comment`` for a computed node v (of G or of B)."""
        op = v.op
        args = [self.names[p] for p in v.inputs]
        template = self.template(op) if _trusted(op) else None
        if template is not None:
            expr = template.format(*args)
        else:
            expr = f"{self._function(op)}({', '.join(args)})"
        shown = ", ".join(self.book[p] for p in v.inputs)
        return self.line(self.names[v], expr, f"{self.book[v]} = {self._op_text(op)}({shown})")

    def _leaf(self, v: Value) -> str:
        j = self.g.index[v]
        return f"u{j + 1} = x[{j}]  # {self._leaf_comment(v)}"

    def _leaf_comment(self, v: Value) -> str:
        j = self.g.index[v]
        what = f"constant {_literal(v.data)}" if v.is_constant else "variable"
        return f"u({j + 1}) <- x_{j + 1}, an input ({what})"

    # --- the source ---------------------------------------------------------------------------------
    def generate(self, part_size: int) -> tuple[str, list[str], int, dict[str, Any]]:
        """Return (source, the source of each function, number of node statements, namespace)."""
        g = self.g
        n_i = g.n_inputs
        b_nodes = self._name_nodes()
        computed = g.nodes[n_i:] + b_nodes  # G's u(n_i+1)..u(n), then B's nodes
        n_forward = len(g.nodes) - n_i
        lines = [self.statement(v) for v in computed]  # the same generator for G and B
        returned = [g.output, *self.backward, *self.keep]

        total = len(computed)
        chunks = [list(range(s, min(s + part_size, total))) for s in range(0, total, part_size)] or [[]]
        part_of: dict[Value, int] = {computed[s]: k for k, chunk in enumerate(chunks) for s in chunk}
        leaves: list[dict[int, None]] = [{} for _ in range(len(chunks) + 1)]  # per part: input positions used
        live_in: list[dict[Value, None]] = [{} for _ in range(len(chunks) + 1)]
        live_out: list[dict[Value, None]] = [{} for _ in chunks]
        index = g.index

        def use(node: Value, k: int) -> None:
            j = index.get(node)
            if j is not None and j < n_i:
                leaves[k][j] = None
            elif node in part_of and part_of[node] != k:
                live_in[k][node] = None
                live_out[part_of[node]][node] = None

        for k, chunk in enumerate(chunks):
            for s in chunk:
                for p in computed[s].inputs:
                    use(p, k)
        main = len(chunks)
        for v in returned:
            use(v, main)

        names = self.names
        result = (
            f"{names[g.output]}, [{', '.join(names[w] for w in self.backward)}], "
            f"[{', '.join(names[v] for v in self.keep)}]"
        )
        single = len(chunks) == 1
        texts: list[str] = []
        for k, chunk in enumerate(chunks):
            body: list[str] = []
            if single and len(leaves[k].keys() | leaves[main].keys()) == n_i:
                # Algorithm 6.1, lines 1-3: u(i) <- x_i for i = 1..n_i, as one unpacking (one line per input)
                unpack = [f"    {names[v]},  # {self._leaf_comment(v)}" for v in g.nodes[:n_i]]
                body += ["(", *unpack, ") = x"]
            elif single:
                body += [self._leaf(g.nodes[j]) for j in sorted(leaves[k].keys() | leaves[main].keys())]
            else:
                body += [self._leaf(g.nodes[j]) for j in sorted(leaves[k])]
            for s in chunk:
                if s == 0 and n_forward:
                    body.append("# Algorithm 6.1: u(i) <- f(i)(Pa(u(i))) for i = n_i+1, ..., n")
                if s == n_forward:
                    body.append(
                        "# Algorithm 6.2 as the backward subgraph B (built by Algorithms 6.5 and 6.6), "
                        "written by the same generator"
                    )
                body.append(lines[s])
            sums = [names[computed[s]] for s in chunk if s < n_forward]
            if sums:
                body.append("# the values of G added up: one inf or nan among them makes the sum inf or nan")
            for t in range(0, len(sums), _CHECK_TERMS):
                body.append("check = check + " + " + ".join(sums[t : t + _CHECK_TERMS]))
            if single:
                texts.append(
                    f"def {FUNCTION}(x):\n    check = 0.0\n"
                    + "".join(f"    {line}\n" for line in body)
                    + f"    return {result}, check\n"
                )
            else:
                params = ", ".join(["x", *(names[v] for v in live_in[k]), "check"])
                outs = ", ".join([*(names[v] for v in live_out[k]), "check"])
                texts.append(
                    f"def part_{k + 1}({params}):\n"
                    + "".join(f"    {line}\n" for line in body)
                    + f"    return {outs}\n"
                )
        if not single:
            body = ["check = 0.0"]
            body += [self._leaf(g.nodes[j]) for j in sorted(leaves[main])]
            for k in range(len(chunks)):
                params = ", ".join(["x", *(names[v] for v in live_in[k]), "check"])
                outs = ", ".join([*(names[v] for v in live_out[k]), "check"])
                body.append(f"{outs} = part_{k + 1}({params})")
            body.append(f"return {result}, check")
            texts.append(f"def {FUNCTION}(x):\n" + "".join(f"    {line}\n" for line in body))

        header = [
            "# Generated by micrograph.compile_graph: Algorithms 6.1 and 6.2 of Goodfellow, Bengio &",
            "# Courville (2016), Deep Learning, section 6.5, written out as straight-line code.",
            f"# G: n = {len(g.nodes)} nodes, n_i = {n_i} inputs; B: {len(b_nodes)} computed nodes.",
            f"# {FUNCTION}(x): x holds u(1)..u(n_i); returns (u(n), [dz/dw for w in wrt], [kept], check).",
            *self.header,
        ]
        source = "\n".join(header) + "\n\n\n" + "\n\n".join(texts)
        return source, texts, len(computed) + n_i, self.namespace


def _build(texts: list[str], namespace: dict[str, Any]) -> Any:
    """Compile every function's text on its own (bounded compiler memory) into one namespace."""
    for k, text in enumerate(texts):
        exec(compile(text, f"<micrograph compiled graph, part {k + 1}>", "exec"), namespace)
    return namespace[FUNCTION]


# -------------------------------------------------------------------------------------------------
# The JavaScript dialect: the same statements, from the operations' ``js`` templates, for the explorer page.


def _js_literal(x: float) -> str:
    """A float as JavaScript source (``repr`` is valid JavaScript for a finite float)."""
    if math.isfinite(x):
        return f"({x!r})" if x < 0.0 or (x == 0.0 and math.copysign(1.0, x) < 0.0) else repr(x)
    if math.isnan(x):
        return "NaN"
    return "Infinity" if x > 0.0 else "(-Infinity)"


class JavaScriptProgram:
    """G, and nodes computed from G's nodes (B, local derivatives), as one straight-line JavaScript function.

    Made by :func:`compile_javascript`. ``source`` defines ``function forward_backward(x, u)``: ``x``
    holds u(1)..u(n_i) (numbers, in ``graph.leaves`` order), ``u`` is a ``Float64Array(size)`` that the
    function fills, one slot per node: slot i < n is G's u(i+1) (Algorithm 6.1), the slots after hold the
    other nodes, each computed from its parents by its operation's JavaScript template.

    A value outside an operation's domain makes that node NaN or an infinity (and the nodes that use it
    follow). The first non-finite slot in slot order is therefore the node whose operation failed, with
    finite arguments: :meth:`Graph.forward` would raise :class:`~micrograph.DomainError` there.

    Attributes:
        graph (Graph): G.
        source (str): the JavaScript source (a function declaration, no other statement).
        slot (dict[Value, int]): every node's slot in ``u``.
        nodes (list[Value]): the node of every slot, in slot order (G's nodes first).
        size (int): the number of slots.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 and 6.5.6.
    """

    __slots__ = ("graph", "source", "slot", "nodes", "size")

    def __init__(self, graph: Graph, source: str, nodes: list[Value]) -> None:
        self.graph = graph
        self.source = source
        self.nodes = nodes
        self.slot = {v: k for k, v in enumerate(nodes)}
        self.size = len(nodes)

    def __repr__(self) -> str:
        return f"<JavaScriptProgram of {self.graph!r}: {self.size} slots>"


class _JavaScriptGenerator(_Generator):
    """The JavaScript dialect of :class:`_Generator`: every node a slot ``u[k]`` of one Float64Array."""

    @staticmethod
    def template(op: Op) -> str | None:
        return op.js

    @staticmethod
    def line(name: str, expr: str, comment: str) -> str:
        return f"{name} = {expr}; // {comment}"

    def _function(self, op: Op) -> str:
        what = self._op_text(op)
        raise ValueError(
            f"compile_javascript: {what} has no JavaScript template (Op.js); only the operations of "
            "micrograph's table can be written as JavaScript"
        )

    def program(self, extra: Sequence[Value]) -> JavaScriptProgram:
        g = self.g
        index = g.index
        nodes = list(g.nodes)
        later = [v for v in topological_order(list(extra)) if v not in index]
        nodes += later
        for k, v in enumerate(nodes):
            self.names[v] = f"u[{k}]"
            if k < len(g.nodes):
                self.book[v] = f"u({k + 1})"
            elif v.grad_of is not None and v.grad_of in index:
                self.book[v] = f"grad_table[u({index[v.grad_of] + 1})]"
            else:
                self.book[v] = f"slot {k}"
        n_i = g.n_inputs
        body = [f"u[{j}] = x[{j}]; // {self._leaf_comment(v)}" for j, v in enumerate(g.nodes[:n_i])]
        body.append("// Algorithm 6.1: u(i) <- f(i)(Pa(u(i))) for i = n_i+1, ..., n")
        body += [self.statement(v) for v in g.nodes[n_i:]]
        if later:
            body.append("// nodes built on G's nodes by the derivative rules (B), by the same generator")
        for v in later:
            if v.op is None:  # a constant of B (the seed 1, a rule's 1.0 ...)
                body.append(f"u[{self.slot_of(v)}] = {_js_literal(v.data)}; // constant")
            else:
                body.append(self.statement(v))
        header = [
            "// Generated by micrograph.compile_javascript: Algorithm 6.1 on G and the nodes of B, written",
            "// out as straight-line JavaScript from the operation table's js templates.",
            f"// G: n = {len(g.nodes)} nodes, n_i = {n_i} inputs; {len(nodes)} slots in all.",
        ]
        source = (
            "\n".join(header)
            + f"\nfunction {FUNCTION}(x, u) {{\n"
            + "".join(f"  {line}\n" for line in body)
            + "}\n"
        )
        return JavaScriptProgram(g, source, nodes)

    def slot_of(self, v: Value) -> str:
        return self.names[v][2:-1]


def compile_javascript(g: Graph, extra: Iterable[Value] = ()) -> JavaScriptProgram:
    """G and the nodes ``extra`` depend on, as straight-line JavaScript: the compiler's JavaScript dialect.

    The same statement generator as :func:`compile_graph`, with each operation's ``js`` template in place
    of its Python one: one assignment per node, Algorithm 6.1 over G's nodes u(1)..u(n), then every node
    that ``extra`` needs and G does not hold, in topological order. ``extra`` is typically B, built on G by
    :func:`micrograph.grad` (Algorithms 6.5/6.6), and local derivatives built by calling an operation's
    rule on G's nodes: so the derivatives in the JavaScript come from the table's rules, never from a
    formula written in JavaScript. Labels never go into the source.

    Args:
        g: the graph G.
        extra: nodes built from G's nodes (each must depend on G's nodes or on constants only).

    Returns:
        A :class:`JavaScriptProgram`.

    Raises:
        TypeError: if ``g`` is not a Graph or an element of ``extra`` is not a Value.
        ValueError: if a node needs an operation outside micrograph's table (no JavaScript template), or
            a node of ``extra`` depends on a leaf that is not in G.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3, 6.5.5, 6.5.6.
    """
    if not isinstance(g, Graph):
        raise TypeError(f"compile_javascript takes a Graph (e.g. Graph(z)), got {type(g).__name__} {g!r}")
    more = list(extra)
    for k, v in enumerate(more):
        if not isinstance(v, Value):
            raise TypeError(f"compile_javascript: extra[{k}] must be a Value, got {type(v).__name__} {v!r}")
    for v in topological_order(more) if more else []:
        if v.op is None and v not in g.index and not v.is_constant:
            raise ValueError(
                f"compile_javascript: {v!r} is a variable that is not in {g!r}; extra nodes may only "
                "depend on G's nodes and constants"
            )
    return _JavaScriptGenerator(g, [], []).program(more)
