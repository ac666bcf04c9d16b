"""A graph G and its gradients compiled to straight-line Python: fast replay of Algorithms 6.1/6.2.

Section 6.5.5 of the book: once the graph exists, "a generic graph evaluation engine can later compute the
derivatives for any specific numeric values". :meth:`Graph.forward` and :meth:`Graph.backprop` are that
engine as an interpreter: a loop over the stored order that looks up each node's operation. This module
writes the same computations out as Python source and lets Python compile it:

* **Forward** (Algorithm 6.1): the inputs u(1)..u(n_i) unpacked from the list ``x``, then u(i) for
  i = n_i+1..n in the stored order, each from its operation's code template (:attr:`micrograph.ops.Op.code`,
  e.g. ``{0} * {1}``), or a call of the operation's own numeric function ``f`` where it has no template.
* **Backward** (Algorithm 6.2 on G', the nodes between ``wrt`` and z, as Algorithm 6.5 prunes): a
  dialect of Algorithm 6.2 that writes each sum as a statement instead of adding it. It walks the order
  and the edges that :func:`micrograph.backprop.sweep` gives Algorithm 6.2's own loop: for every node u(j)
  of G', from the last to the first, grad_table[u(j)] is the sum, over the edges to its consumers u(i) in
  the order Algorithm 6.2 adds them, of grad_table[u(i)] times du(i)/du(j). Each local derivative is the
  operation's own rule written out by :meth:`micrograph.ops.Op.derivative_source` (the rule called on
  placeholders), so the text computes what the rule computes, operation for operation; a rule that
  cannot be written out is called. No derivative formula is written here.

**One emitter, two dialects.** Algorithm 6.1's statements are written by one emitter (:class:`_Emitter`)
for both languages; a :class:`Dialect` says what differs: the operation's template (``Op.code`` or
``Op.js``), number literals, the names of values (``u5`` or the slot ``u[4]``) and how a statement ends.
The Python dialect (:data:`PYTHON`) also writes the backward statements above; the JavaScript one
(:data:`JAVASCRIPT`, :func:`compile_javascript`, for the explorer page) gets its derivatives as nodes of B
built by the rules, so it writes only Algorithm 6.1's statements, over G's nodes and then B's.

**Fewer statements.** CPython's ``compile()`` costs about a microsecond per syntax-tree node, so a value
used once, by an operation whose template names it once, and needed nowhere else, is not given a
statement of its own: its expression is written into its consumer's (``u7 = (u4 * u5) + u6``), at most
:data:`FUSE` operations per statement. The same holds for a gradient read by one term only, so a chain's
backward pass takes one statement per :data:`FUSE` products. Every other value keeps a name: ``u5`` is
u(5), ``grad_u5`` is grad_table[u(5)].

**Parts.** A graph of more than ``part_size`` operations is split into functions (parts), each compiled
on its own, so that Python's compiler never holds more than one part at a time. A part names its values
relative to its own first node and takes what earlier parts computed as arguments; so parts that do the
same operations on the same pattern of values (the steps of a long chain, repeated blocks) have the
same text, and each distinct text is compiled once (a small cache of code objects). A driver calls
the parts in order, passing values between them in one list.

The source holds only generated identifiers, numbers and comments made of them: a node's label (user
text) never goes into the code, and an operation outside micrograph's table is always called, never
templated.

Errors are those of the interpreter. Algorithm 6.1 rejects an operation outside its domain and any value
of G that is not finite; the generated code adds up every value of G whose consumers could hide an inf or
nan (:attr:`Op.passes_non_finite <micrograph.ops.Op>`: relu's argument, but not an addition's), which with the
output makes any non-finite value of G reach the check sum. The call adds the returned gradients to that
sum: the backward terms are products and sums, so a non-finite value anywhere in the backward pass reaches
a gradient. When the sum is not finite or an operation raises, the call re-runs Algorithms 6.1 and 6.2 on
the graph, which raise the same :class:`~micrograph.DomainError` naming the node, or return their own
numbers (when only the check sum overflowed, or the interpreter lets an infinite gradient through).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 (Algorithms 6.1, 6.2),
6.5.5 (symbol-to-symbol derivatives), 6.5.6 (Algorithm 6.5).
"""

from __future__ import annotations

import math
import operator
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from micrograph.backprop import run_algorithm_6_2, sweep
from micrograph.engine import Value, as_values
from micrograph.forward import input_values
from micrograph.graph import ConsumerEdge as Edge
from micrograph.graph import Graph, Inputs, topological_order
from micrograph.memory import paused_gc
from micrograph.ops import OPS, Op, pow_const

__all__ = [
    "CompiledGraph",
    "compile_graph",
    "JavaScriptProgram",
    "compile_javascript",
    "Dialect",
    "PYTHON",
    "JAVASCRIPT",
]

FUNCTION = "forward_backward"
"""The generated function: ``forward_backward(x) -> (u(n), [dz/dw for w in wrt], [kept], check sum)``."""

FUSE = 12
"""The most operations one generated statement computes (bounds the nesting of an expression)."""

_CHECK_TERMS = 20
"""How many values one check-sum statement adds up (keeps each line short)."""

_SUM_TERMS = 20
"""How many terms of a gradient's sum one statement adds (a node with many consumers gets partial sums,
``sK``: Python's compiler recurses into a long sum)."""

_PREFIX = {"f": "u", "g": "grad_u", "p": "s"}
"""The identifier of a value (``f``), a gradient (``g``) and a partial sum (``p``): u5, grad_u5, s5."""

Function = Callable[[Sequence[float]], tuple[float, list[float], list[float], float]]


class CompiledGraph:
    """A graph G compiled with its gradient: ``f(values) -> (z, [dz/dw for w in wrt])``, no nodes built.

    Made by :func:`compile_graph`. Calling it takes what :meth:`Graph.forward` takes and changes no node.

    Attributes:
        graph (Graph): G, the graph compiled.
        wrt (list[Value]): the nodes the gradients are taken with respect to, in the order returned.
        keep (list[Value]): nodes of G whose values :meth:`evaluate_all` returns too.
        source (str): the generated Python source (every part, and how the driver calls them).
        n_statements (int): how many assignments of a value or a gradient the source has.
        parts (int): how many functions the source was split into (1 unless the graph is large).
        compile_seconds (float): the time :func:`compile_graph` took, in seconds.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 and 6.5.6.
    """

    __slots__ = ("graph", "wrt", "keep", "source", "n_statements", "parts", "compile_seconds", "_fn")

    def __init__(
        self, graph: Graph, wrt: list[Value], keep: list[Value], source: str, fn: Function,
        n_statements: int, parts: int,
    ) -> None:  # fmt: skip
        self.graph = graph
        self.wrt = wrt
        self.keep = keep
        self.source = source
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
            table, _ = run_algorithm_6_2(g)
        finally:
            with paused_gc():
                for v, d in zip(g.nodes, saved):
                    v.data = d
        index = g.index
        return value, [table[index[w]] if w in index else 0.0 for w in self.wrt], kept


def compile_graph(
    g: Graph, wrt: Value | Sequence[Value], *, keep: Sequence[Value] = (), part_size: int = 5000
) -> CompiledGraph:
    """Compile G and its gradients to one Python function: ``f(values) -> (z, grads)``.

    G's nodes u(1)..u(n) are written out from the operations' code templates (Algorithm 6.1), then
    the grad_table entries of G' from the operations' derivative rules (Algorithm 6.2 on the graph pruned
    as Algorithm 6.5 prunes it), fused into few statements (see the module's docstring).

    Args:
        g: the graph G (its output is z).
        wrt: the nodes to differentiate with respect to (usually leaves of G: variables, parameters), or
            one node. A node z does not depend on gets a gradient of 0.
        keep: nodes of G whose values :meth:`CompiledGraph.evaluate_all` also returns (e.g. a model's
            output inside a loss graph).
        part_size: the most operations one generated function computes (a statement computes up to
            :data:`FUSE`); larger graphs are split into parts, each compiled on its own, which bounds the
            memory Python's compiler needs.

    Returns:
        A :class:`CompiledGraph` ``f``: ``f(values)`` returns ``(value, grads)``; ``f.source`` is the code.

    Raises:
        TypeError: if ``g`` is not a Graph, ``wrt`` is not a Value or a sequence of them, or ``part_size``
            is not an int.
        ValueError: if ``wrt`` is empty, ``part_size < 1`` or a ``keep`` node is not in G.

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
    targets = as_values(wrt, "compile_graph", "wrt")
    kept = list(keep)
    for v in kept:
        if v not in g.index:
            raise ValueError(f"compile_graph: keep={v!r} is not a node of {g!r}")
    with paused_gc():
        source, fn, n_statements, parts = _Writer(g, targets, kept).write(part_size)
    f = CompiledGraph(g, targets, kept, source, fn, n_statements, parts)
    f.compile_seconds = time.perf_counter() - start
    return f


# -------------------------------------------------------------------------------------------------
# Templates: an operation's expression (either dialect) and its derivative rules, written out.


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


def _op_text(op: Op) -> str:
    """An operation's name for a comment (never the name of an operation outside the table)."""
    if not _trusted(op):
        return "an operation outside micrograph's table"
    return op.name if op.param is None else f"pow_const({op.param!r})"


def _template(op: Op, dialect: str | None, function: Callable[[Op], str]) -> str:
    """The expression of ``op`` with fields ``{0}``, ``{1}`` for its arguments, in either dialect.

    The dialect's template (``op.code`` or ``op.js``) of an operation of the table, else a call of the
    name ``function(op)`` returns.
    """
    if dialect is not None and _trusted(op):
        return dialect
    return f"{function(op)}({', '.join(f'{{{k}}}' for k in range(op.arity))})"


def _js_literal(x: float) -> str:
    """A float as JavaScript source (``repr`` is valid JavaScript for a finite float)."""
    if math.isfinite(x):
        return f"({x!r})" if x < 0.0 or (x == 0.0 and math.copysign(1.0, x) < 0.0) else repr(x)
    if math.isnan(x):
        return "NaN"
    return "Infinity" if x > 0.0 else "(-Infinity)"


def _python_name(key: str) -> str:
    """A field's identifier in Python: ``{f4}`` is ``u5`` (u(5)), ``{g4}`` is ``grad_u5``, ``{p4}`` ``s5``."""
    return f"{_PREFIX[key[0]]}{int(key[1:]) + 1}"


def _javascript_name(key: str) -> str:
    """A field's slot in JavaScript: ``{f4}`` is ``u[4]``, the fifth slot of the Float64Array."""
    return f"u[{key[1:]}]"


@dataclass(frozen=True)
class Dialect:
    """How one language writes the emitter's statements: templates, literals, names, statement ends.

    Attributes:
        language: its name, for messages.
        template: the :class:`~micrograph.ops.Op` attribute holding the language's expression template of
            an operation (``"code"`` or ``"js"``), ``{0}``, ``{1}`` standing for the arguments.
        literal: a float as a literal of the language.
        name: the identifier of a field (``"f4"``: the value of u(5); ``"g4"``: its grad_table entry).
        end: what ends a statement.
        comment: what starts a comment.
    """

    language: str
    template: str
    literal: Callable[[float], str]
    name: Callable[[str], str]
    end: str
    comment: str


PYTHON = Dialect("Python", "code", _literal, _python_name, "", "#")
"""The compiler's Python dialect (:func:`compile_graph`)."""
JAVASCRIPT = Dialect("JavaScript", "js", _js_literal, _javascript_name, ";", "//")
"""The compiler's JavaScript dialect (:func:`compile_javascript`, for the explorer page)."""

Node = tuple[int, Op | None, Sequence[int], float]
"""A node for the emitter: (position, operation or None for a constant, parents' positions, value)."""


class _Emitter:
    """Algorithm 6.1 as statements of one dialect: u(i) <- f(i)(Pa(u(i))) for each node, in order.

    The one statement generator of both dialects. A statement is a text whose fields (``{f12}``: the value
    of the node at position 12) become the dialect's names when the statements are put into functions.
    A value that needs no name of its own (``named`` false: read once, by a template naming it once) is
    written into its consumer's expression, up to :data:`FUSE` operations per statement.
    """

    def __init__(self, dialect: Dialect, function: Callable[[Op], str]) -> None:
        """``function(op)``: the name to call an operation without this dialect's template by (or raise)."""
        self.dialect = dialect
        self.function = function
        self.templates: dict[Op, tuple[str, tuple[int, ...]]] = {}

    def template(self, op: Op) -> tuple[str, tuple[int, ...]]:
        """The expression of u = op(...) with fields {0}, {1}, and how often each field occurs."""
        found = self.templates.get(op)
        if found is None:
            text = _template(op, getattr(op, self.dialect.template), self.function)
            found = (text, tuple(text.count(f"{{{k}}}") for k in range(op.arity)))
            self.templates[op] = found
        return found

    def statement(self, key: str, expr: str, comment: str = "") -> str:
        """``{key} = expr``, the dialect's end, and a comment if one is given."""
        note = f" {self.dialect.comment} {comment}" if comment else ""
        return f"{{{key}}} = {expr}{self.dialect.end}{note}"

    def forward(
        self,
        nodes: Iterable[Node],
        named: Sequence[bool],
        comment: Callable[[int], str] | None = None,
    ) -> tuple[list[tuple[str, str]], list[int]]:
        """The statements computing ``nodes`` (in topological order) and the operations each computes.

        Args:
            nodes: the nodes to compute, :data:`Node` tuples; a parent not among them is read by its field.
            named: by position, whether a value gets a statement (and a name) of its own.
            comment: the comment of the statement of the node at a position, if any.

        Returns:
            ``(statements, sizes)``: ``(the field set, the text)`` pairs, and how many operations each has.
        """
        statements: list[tuple[str, str]] = []
        sizes: list[int] = []
        pending: dict[int, tuple[str, int]] = {}  # a value not named yet: its expression, its size
        for i, op, parents, data in nodes:
            if op is None:  # a constant: its literal
                expr, size = self.dialect.literal(data), 0
            else:
                args = []
                size = 1
                for p in parents:
                    e = pending.pop(p, None)
                    if e is not None and size + e[1] <= FUSE:
                        args.append(f"({e[0]})")
                        size += e[1]
                        continue
                    if e is not None:
                        statements.append((f"f{p}", self.statement(f"f{p}", e[0])))
                        sizes.append(e[1])
                    args.append(f"{{f{p}}}")
                expr = self.template(op)[0].format(*args)
            if named[i]:
                statements.append((f"f{i}", self.statement(f"f{i}", expr, comment(i) if comment else "")))
                sizes.append(size)
            else:
                pending[i] = (expr, size)
        return statements, sizes


_ARGUMENT = re.compile(r"\b(x|y|out)\b")
_FIELD = re.compile(r"\{([fgp]\d+)\}")
_RULE_FUNCTION = re.compile(r"\b_f\d+\b")
_TABLE_FUNCTIONS = {op.f: f"f_{name}" for name, op in OPS.items()}


@lru_cache(maxsize=32)
def _code(text: str) -> Any:
    """``text`` compiled; a part whose text was compiled before (another step of a chain) is not again."""
    return compile(text, "<micrograph compiled graph>", "exec")


class _Arguments(dict):  # type: ignore[type-arg]
    """The identifiers of one part: its own values by position, any other value an argument a0, a1, ...

    ``inputs`` lists the fields read from other parts (or the graph's inputs), in order of first use.
    """

    def __init__(self, own: dict[str, str], text: str) -> None:
        super().__init__(own)
        self.inputs = [key for key in dict.fromkeys(_FIELD.findall(text)) if key not in own]
        self.update(zip(self.inputs, [f"a{m}" for m in range(len(self.inputs))]))


class _Positions(dict):  # type: ignore[type-arg]
    """The identifiers of the one function: every field named by its position, by the dialect's names
    (``{f4}`` is ``u5`` in Python, ``u[4]`` in JavaScript)."""

    def __init__(self, dialect: Dialect) -> None:
        super().__init__()
        self.name = dialect.name

    def __missing__(self, key: str) -> str:
        name = self[key] = self.name(key)
        return name


class _Writer:
    """Writes G's values and the gradients over G' as fused statements, in one function or in parts.

    A statement is kept as a text with a field for every value it reads or sets: ``{f12}`` is the value
    of u(13) (position 12), ``{g12}`` its grad_table entry. The fields become identifiers when the
    statements are split into functions (absolute names in one function, relative ones in parts).
    """

    def __init__(self, g: Graph, wrt: list[Value], keep: list[Value]) -> None:
        self.g = g
        self.wrt = wrt
        self.keep = keep
        self.namespace: dict[str, Any] = {"math": math, "INF": math.inf, "NAN": math.nan}
        self.callables: dict[Any, str] = {}  # a numeric function or a rule -> its name in the namespace
        self.header: list[str] = []
        self.emitter = _Emitter(PYTHON, self._function)
        self.derivative_templates: dict[tuple[Op, int], tuple[str, bool, bool, bool]] = {}

    # --- templates ---------------------------------------------------------------------------------
    def _callable(self, fn: Any, what: str) -> str:
        """The namespace name bound to ``fn`` (a numeric function or a derivative rule)."""
        name = self.callables.get(fn)
        if name is None:
            name = _TABLE_FUNCTIONS.get(fn) or f"f_{len(self.callables) + 1}"
            self.callables[fn] = name
            self.namespace[name] = fn
            self.header.append(f"# {name}: {what}")
        return name

    def _function(self, op: Op) -> str:
        return self._callable(op.f, f"the numeric function f of {_op_text(op)}")

    def derivative_template(self, op: Op, k: int) -> tuple[str, bool, bool, bool]:
        """du/dx_k with fields {0} (x), {1} (y, or out for one argument), {2} (out); and which it reads.

        The rule written out by :meth:`Op.derivative_source`; a rule that cannot be written out, or
        one of an operation outside the table, is called with all of them, as Algorithm 6.2 calls it.
        """
        found = self.derivative_templates.get((op, k))
        if found is None:
            fields = {"x": "{0}", "y": "{1}", "out": f"{{{op.arity}}}"}
            text = None
            if _trusted(op):
                try:
                    text, functions = op.derivative_source(k)
                except TypeError:
                    pass
                else:
                    text = _ARGUMENT.sub(lambda m: fields[m.group()], text)
                    what = "a numeric function a rule calls"
                    text = _RULE_FUNCTION.sub(lambda m: self._callable(functions[m.group()], what), text)
            if text is None:
                rule = self._callable(op.rule(k), f"derivative rule {k} of {_op_text(op)}, called")
                text = f"{rule}({', '.join(f'{{{m}}}' for m in range(op.arity + 1))})"
            found = (text, "{0}" in text, op.arity == 2 and "{1}" in text, f"{{{op.arity}}}" in text)
            self.derivative_templates[op, k] = found
        return found

    # --- the statements ----------------------------------------------------------------------------
    def write(self, part_size: int) -> tuple[str, Function, int, int]:
        """Return (source, the function, number of statements, number of parts)."""
        g = self.g
        n, n_i = len(g.nodes), g.n_inputs
        sub = g.prune(self.wrt)  # G' (Algorithm 6.5): the nodes between wrt and z
        member = [v in sub for v in g.nodes]
        named, checked, grad_uses = self._names(member)
        # Algorithm 6.1: u(i) <- f(i)(Pa(u(i))) for i = n_i+1, ..., n, by the emitter both dialects share
        program = ((i, g.nodes[i].op, g.parents[i], 0.0) for i in range(n_i, n))
        statements, sizes = self.emitter.forward(program, named)
        n_forward = len(statements)
        same = self._backward(member, grad_uses, statements, sizes)
        results = [f"f{n - 1}"]
        for w in self.wrt:
            at = g.index.get(w)
            results.append("0.0" if at is None else "1.0" if at == n - 1 else f"g{same.get(at, at)}")
        results += [f"f{g.index[v]}" for v in self.keep]
        checks = {f"f{i}" for i in range(n_i, n) if checked[i]}
        if sum(sizes) <= part_size:
            return self._one_function(statements, n_forward, results, checks)
        chunks: list[list[tuple[str, str]]] = [[]]
        total = 0
        for statement, size in zip(statements, sizes):
            if total + size > part_size and chunks[-1]:
                chunks.append([])
                total = 0
            chunks[-1].append(statement)
            total += size
        return self._parts(chunks, results, checks)

    def _names(self, member: list[bool]) -> tuple[list[bool], list[bool], list[int]]:
        """Which values need a name (read twice, read by a derivative, returned, or checked for inf and
        nan), which are checked, and how many terms read each gradient."""
        g = self.g
        nodes, parents, index = g.nodes, g.parents, g.index
        n, n_i = len(nodes), g.n_inputs
        out = n - 1
        named = [True] * n_i + [False] * (n - n_i)
        checked = [False] * n
        uses = [0] * n
        grad_uses = [0] * n
        named[out] = checked[out] = True
        for v in self.keep:
            named[index[v]] = True
        for op in dict.fromkeys(v.op for v in nodes[n_i:]):  # in order of first use: the same text every run
            self.emitter.template(op)
        for i in range(n_i, n):
            op = nodes[i].op
            counts = self.emitter.template(op)[1]
            for k, p in enumerate(parents[i]):
                uses[p] += 1
                if counts[k] != 1:
                    named[p] = True
                if not op.passes_non_finite[k] and p >= n_i:
                    checked[p] = named[p] = True
                if member[p] and member[i]:
                    grad_uses[i] += 1
                    _, reads_x, reads_y, reads_out = self.derivative_template(op, k)
                    named[parents[i][0]] = named[parents[i][0]] or reads_x
                    named[i] = named[i] or reads_out
                    if reads_y:
                        named[parents[i][1]] = True
        for i in range(n_i, n):
            named[i] = named[i] or uses[i] > 1
        return named, checked, grad_uses

    def _backward(
        self, member: list[bool], grad_uses: list[int], statements: list[tuple[str, str]], sizes: list[int]
    ) -> dict[int, int]:
        """Algorithm 6.2 over G', in the Python dialect: the statements of grad_table[u(j)] = sum over the
        edges to consumers u(i) of grad_table[u(i)] * du(i)/du(j), walking the order and the edges that
        :func:`micrograph.backprop.sweep` gives Algorithm 6.2's own loop, the terms in its order.

        Returns the gradients that equal another's (an addition passes it on): {position: that one's}.
        """
        wrt_at = {self.g.index[w] for w in self.wrt if w in self.g.index}
        waiting: dict[int, tuple[str, int]] = {}  # a gradient not named yet: its expression, its size
        same: dict[int, int] = {}
        order, edges = sweep(self.g)
        for j in order:  # for j = n - 1 down to 1, in G'
            if not member[j]:
                continue
            terms, size, bare = self._terms(edges[j], waiting, same, statements, sizes)
            passed_on = len(terms) == 1 and bare is not None and terms[0] == f"({bare})"
            expr = bare if passed_on and bare is not None else " + ".join(terms)
            size += len(terms) - 1
            if len(terms) > _SUM_TERMS:  # a long sum: partial sums, in the same order, a few terms each
                expr, size = self._partial_sums(terms, statements, sizes), 1
            if expr[:2] == "{g" and expr[-1] == "}" and expr.count("{") == 1:  # 0.0 + g * 1.0 is g
                same[j] = int(expr[2:-1])
            elif grad_uses[j] != 1 or j in wrt_at:
                statements.append((f"g{j}", f"{{g{j}}} = {expr}"))
                sizes.append(max(size, 1))
            else:
                waiting[j] = (expr, size)
        return same

    def _terms(
        self,
        edges: Sequence[Edge],
        waiting: dict[int, tuple[str, int]],
        same: dict[int, int],
        statements: list[tuple[str, str]],
        sizes: list[int],
    ) -> tuple[list[str], int, str | None]:
        """The terms grad_table[u(i)] * du(i)/du(j) of one sum, their size, and the one gradient passed
        on unparenthesised (or None)."""
        parents, out = self.g.parents, len(self.g.nodes) - 1
        terms = []
        size = 0
        bare = None  # the one term's text without parentheses, where it is a gradient passed on
        for i, k, _, _, _ in edges:
            op = self.g.nodes[i].op
            d = self.derivative_template(op, k)[0].format(*[f"{{f{p}}}" for p in parents[i]], f"{{f{i}}}")
            if i == out:  # grad_table[z] = 1: the term is the local derivative itself
                terms.append(d)
                size += 1
                continue
            i = same.get(i, i)
            e = waiting.pop(i, None)
            G = f"{{g{i}}}"
            if e is not None and size + e[1] <= FUSE:
                G = f"({e[0]})"
                size += e[1]
                bare = e[0]
            elif e is not None:
                statements.append((f"g{i}", f"{{g{i}}} = {e[0]}"))
                sizes.append(e[1])
            if d == "1.0":  # g * 1.0 is g
                terms.append(G)
                continue
            terms.append(f"(-{G})" if d == "(-1.0)" else f"{G} * {d}")
            size += 1
        return terms, size, bare

    @staticmethod
    def _partial_sums(terms: list[str], statements: list[tuple[str, str]], sizes: list[int]) -> str:
        """A long sum as partial sums ``sK``, in the same order, :data:`_SUM_TERMS` terms each; the last."""
        expr = ""
        for t in range(0, len(terms), _SUM_TERMS):
            key = f"p{len(sizes)}"
            group = terms[t : t + _SUM_TERMS]
            statements.append((key, f"{{{key}}} = {' + '.join([expr, *group] if expr else group)}"))
            sizes.append(len(group))
            expr = f"{{{key}}}"
        return expr

    # --- the functions -------------------------------------------------------------------------------
    @staticmethod
    def _check_lines(names: list[str]) -> list[str]:
        if not names:
            return ["check = 0.0"]
        lines = ["# the values of G that an operation could hide an inf or nan of, added up"]
        for t in range(0, len(names), _CHECK_TERMS):
            head = "check = " if t == 0 else "check = check + "
            lines.append(head + " + ".join(names[t : t + _CHECK_TERMS]))
        return lines

    def _leaf_comment(self, j: int) -> str:
        v = self.g.nodes[j]
        what = f"constant {_literal(v.data)}" if v.is_constant else "variable"
        return f"u({j + 1}) <- x_{j + 1}, an input ({what})"

    def _header(self, parts: int) -> list[str]:
        g = self.g
        return [
            "# Generated by micrograph.compile_graph: Algorithms 6.1 and 6.2 of Goodfellow, Bengio &",
            "# Courville (2016), Deep Learning, section 6.5, written out as straight-line code.",
            f"# G: n = {len(g.nodes)} nodes, n_i = {g.n_inputs} inputs; {parts} function(s).",
            "# uK is the value u(K), grad_uK is grad_table[u(K)] (in a part, K counts from its first node).",
            *self.header,
        ]

    def _one_function(
        self, statements: list[tuple[str, str]], n_forward: int, results: list[str], checks: set[str]
    ) -> tuple[str, Function, int, int]:
        """All statements in ``forward_backward(x)``, every value named by its position: u(5) is ``u5``."""
        n_i = self.g.n_inputs
        names = _Positions(PYTHON)
        leaves = [f"    {names[f'f{j}']},  # {self._leaf_comment(j)}" for j in range(n_i)]
        body = ["(", *leaves, ") = x"]
        for s, (_, text) in enumerate(statements):
            if s == 0 and n_forward:
                body.append("# Algorithm 6.1: u(i) <- f(i)(Pa(u(i))) for i = n_i+1, ..., n")
            if s == n_forward:
                body.append("# Algorithm 6.2 over the nodes Algorithm 6.5 keeps, from the last to the first:")
                body.append("# grad_table[u(j)] = sum over consumers u(i) of grad_table[u(i)] * du(i)/du(j)")
            body.append(text.format_map(names))
        body += self._check_lines([names[key] for key, _ in statements if key in checks])
        shown = [names[key] if key[0] in "fg" else key for key in results]
        z, grads, kept = shown[0], shown[1 : 1 + len(self.wrt)], shown[1 + len(self.wrt) :]
        body.append(f"return {z}, [{', '.join(grads)}], [{', '.join(kept)}], check")
        text = f"def {FUNCTION}(x):\n" + "".join(f"    {line}\n" for line in body)
        exec(_code(text), self.namespace)  # text made of generated names and numbers only
        fn = self.namespace.pop(FUNCTION)
        return "\n".join(self._header(1)) + "\n\n\n" + text, fn, len(statements), 1

    def _parts(
        self, chunks: list[list[tuple[str, str]]], results: list[str], checks: set[str]
    ) -> tuple[str, Function, int, int]:
        """The statements split into functions ``part(v, get)`` that a driver calls in order.

        ``v`` is one list: u(1)..u(n_i), then the values each part hands on, each part's check sum, and
        the constants 0.0 and 1.0. A part reads its arguments with ``get(v)`` (an ``operator.itemgetter``
        of their positions) and returns what it hands on; its own values are named relative to its first
        node, so parts doing the same operations on the same pattern of values have one text.
        """
        n_i = self.g.n_inputs
        defined_in = {key: c for c, chunk in enumerate(chunks) for key, _ in chunk}
        bodies: list[list[str]] = []
        namers: list[_Arguments] = []
        for chunk in chunks:
            base: dict[str, int] = {}  # per kind of field, the smallest position this part sets
            for key, _ in chunk:
                at = int(key[1:])
                if at < base.get(key[0], at + 1):
                    base[key[0]] = at

            own = {key: f"{_PREFIX[key[0]]}{int(key[1:]) - base[key[0]] + 1}" for key, _ in chunk}
            joined = "\n".join([text for _, text in chunk])
            names = _Arguments(own, joined)
            body = joined.format_map(names).split("\n")
            body += self._check_lines([names[key] for key, _ in chunk if key in checks])
            bodies.append(body)
            namers.append(names)
        handed_on: list[dict[str, None]] = [{} for _ in chunks]  # per part: the values later ones read
        for key in [key for names in namers for key in names.inputs] + results:
            part = defined_in.get(key)
            if part is not None:
                handed_on[part][key] = None

        slot: dict[str, int] = {}
        top = n_i
        steps = []
        texts = []
        check_slots = []
        for c, chunk in enumerate(chunks):
            names = namers[c]
            positions = [slot.get(key) or int(key[1:]) for key in names.inputs]  # slots, or u(j+1) at j
            outs = [key for key, _ in chunk if key in handed_on[c]]
            start = top
            for key in outs:
                slot[key] = top
                top += 1
            check_slots.append(top)
            top += 1
            lines = []
            if positions:
                lines.append(f"{', '.join(f'a{m}' for m in range(len(positions)))} = get(v)")
            returned = ", ".join([names[key] for key in outs] + ["check"])
            text = "def part(v, get):\n" + "".join(f"    {line}\n" for line in lines + bodies[c])
            text += f"    return ({returned},)\n"
            exec(_code(text), self.namespace)  # text made of generated names and numbers only
            get = operator.itemgetter(*positions) if positions else None
            steps.append((self.namespace.pop("part"), get, start, top))
            call = f"v[{start}:{top}] = part(v, {_getter_text(positions)})"
            texts.append(f"# part {c + 1} of {len(chunks)}: {call}\n{text}")
        constants = {"0.0": top, "1.0": top + 1}
        fetched = [slot.get(key, constants.get(key, -1)) for key in results]
        fetched = [int(key[1:]) if at < 0 else at for key, at in zip(results, fetched)]  # a leaf: u(j+1)
        pad = [0.0] * (top - n_i) + [0.0, 1.0]
        fn = _driver(steps, pad, fetched + check_slots, len(self.wrt), len(self.keep))
        driver = [
            f"# {FUNCTION}(x): v = x + [0.0] * {top - n_i} + [0.0, 1.0]; each part in order: "
            "v[start:end] = part(v, get);",
            f"# returns (v[{fetched[0]}], the gradients at {fetched[1 : 1 + len(self.wrt)]}, the kept "
            "values, the sum of the parts' check sums).",
        ]
        source = "\n".join(self._header(len(chunks)) + driver) + "\n\n\n" + "\n\n".join(texts)
        return source, fn, sum(map(len, chunks)), len(chunks)


def _getter_text(positions: list[int]) -> str:
    if len(positions) <= 6:
        return f"itemgetter({', '.join(map(str, positions))})"
    return f"itemgetter({positions[0]}, ..., {positions[-1]}) ({len(positions)} positions)"


def _driver(
    steps: list[tuple[Any, Any, int, int]], pad: list[float], fetched: list[int], n_wrt: int, n_keep: int
) -> Function:
    """``forward_backward(x)`` for a graph split into parts: run the parts in order over one list."""
    fetch = operator.itemgetter(*fetched)
    a = 1 + n_wrt
    b = a + n_keep

    def forward_backward(x: Sequence[float]) -> tuple[float, list[float], list[float], float]:
        v = list(x)
        v += pad
        for part, get, start, end in steps:
            v[start:end] = part(v, get)
        r = fetch(v)
        return r[0], list(r[1:a]), list(r[a:b]), sum(r[b:])

    return forward_backward


# -------------------------------------------------------------------------------------------------
# The JavaScript dialect: the same statements, from the operations' ``js`` templates, for the explorer page.


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


class _JavaScriptGenerator:
    """The JavaScript dialect: every node a slot ``u[k]`` of one Float64Array, one statement per node.

    The statements come from the emitter the Python dialect uses (:class:`_Emitter`, Algorithm 6.1's
    statements), with the :data:`JAVASCRIPT` dialect: the operations' ``js`` templates, JavaScript
    literals, slots for names, and every value named (no fusion: the page reads every slot).
    """

    def __init__(self, g: Graph) -> None:
        self.g = g
        self.emitter = _Emitter(JAVASCRIPT, self._function)
        self.book: dict[Value, str] = {}  # node -> the book's name, for comments

    @staticmethod
    def _function(op: Op) -> str:
        raise ValueError(
            f"compile_javascript: {_op_text(op)} has no JavaScript template (Op.js); only the operations of "
            "micrograph's table can be written as JavaScript"
        )

    def _leaf_comment(self, j: int) -> str:
        v = self.g.nodes[j]
        what = f"constant {JAVASCRIPT.literal(v.data)}" if v.is_constant else "variable"
        return f"u({j + 1}) <- x_{j + 1}, an input ({what})"

    def program(self, extra: Sequence[Value]) -> JavaScriptProgram:
        g = self.g
        index = g.index
        nodes = list(g.nodes)
        later = [v for v in topological_order(list(extra)) if v not in index]
        nodes += later
        slot = {v: k for k, v in enumerate(nodes)}
        for k, v in enumerate(nodes):
            if k < len(g.nodes):
                self.book[v] = f"u({k + 1})"
            elif v.grad_of is not None and v.grad_of in index:
                self.book[v] = f"grad_table[u({index[v.grad_of] + 1})]"
            else:
                self.book[v] = f"slot {k}"

        def comment(k: int) -> str:
            v = nodes[k]
            if v.op is None:  # a constant of B (the seed 1, a rule's 1.0 ...)
                return "constant"
            return f"{self.book[v]} = {_op_text(v.op)}({', '.join(self.book[p] for p in v.inputs)})"

        def steps(vs: Iterable[Value]) -> list[Node]:
            return [(slot[v], v.op, [slot[p] for p in v.inputs], v.data) for v in vs]

        n_i = g.n_inputs
        named = [True] * len(nodes)
        body = [f"u[{j}] = x[{j}]; // {self._leaf_comment(j)}" for j in range(n_i)]
        body.append("// Algorithm 6.1: u(i) <- f(i)(Pa(u(i))) for i = n_i+1, ..., n")
        body += [text for _, text in self.emitter.forward(steps(g.nodes[n_i:]), named, comment)[0]]
        if later:
            body.append("// nodes built on G's nodes by the derivative rules (B), by the same generator")
            body += [text for _, text in self.emitter.forward(steps(later), named, comment)[0]]
        names = _Positions(JAVASCRIPT)
        body = [line.format_map(names) for line in body]
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


def compile_javascript(g: Graph, extra: Iterable[Value] = ()) -> JavaScriptProgram:
    """G and the nodes ``extra`` depend on, as straight-line JavaScript: the compiler's JavaScript dialect.

    The same statement emitter as :func:`compile_graph`, in the :data:`JAVASCRIPT` dialect (each
    operation's ``js`` template in place of its Python one, JavaScript literals, slots): one assignment
    per node, Algorithm 6.1 over G's nodes u(1)..u(n), then every node
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
    return _JavaScriptGenerator(g).program(more)
