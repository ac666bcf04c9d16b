"""The compiler's JavaScript dialect: G and the nodes built on it (B) as straight-line JavaScript.

The explorer page evaluates G, the grad_table and B in the browser as the user moves a slider. The code
it runs is written here, by the statement emitter the Python dialect uses
(:class:`~micrograph.compile_emitter.Emitter`, Algorithm 6.1's statements) in the
:data:`~micrograph.compile_emitter.JAVASCRIPT` dialect: each operation's ``js`` template, JavaScript
literals, and every node a slot of one ``Float64Array``. The derivatives are nodes of B built by the
table's rules (Algorithm 6.6), so no derivative is written in JavaScript; labels never go into the source.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3, 6.5.5 and 6.5.6.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from micrograph.compile_emitter import FUNCTION, JAVASCRIPT, Emitter, Node, Positions
from micrograph.engine import Value
from micrograph.errors import check_graph, typed_repr
from micrograph.graph import Graph
from micrograph.ops import Op
from micrograph.order import topological_order
from micrograph.templates import op_text

__all__ = ["JavaScriptProgram", "compile_javascript"]


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

    The statements come from the emitter the Python dialect uses (Algorithm 6.1's statements), with the
    JavaScript dialect: the operations' ``js`` templates, JavaScript literals, slots for names, and every
    value named (no fusion: the page reads every slot).
    """

    def __init__(self, g: Graph) -> None:
        self.g = g
        self.emitter = Emitter(JAVASCRIPT, self._function)
        self.book: dict[Value, str] = {}  # node -> the book's name, for comments

    @staticmethod
    def _function(op: Op) -> str:
        raise ValueError(
            f"compile_javascript: {op_text(op)} has no JavaScript template (Op.js); only the operations of "
            "micrograph's table can be written as JavaScript"
        )

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
            return f"{self.book[v]} = {op_text(v.op)}({', '.join(self.book[p] for p in v.inputs)})"

        def steps(vs: Iterable[Value]) -> list[Node]:
            return [(slot[v], v.op, [slot[p] for p in v.inputs], v.data) for v in vs]

        n_i = g.n_inputs
        named = [True] * len(nodes)
        leaf = self.emitter.leaf_comment
        body = [f"u[{j}] = x[{j}]; // {leaf(j, nodes[j])}" for j in range(n_i)]
        body.append("// Algorithm 6.1: u(i) <- f(i)(Pa(u(i))) for i = n_i+1, ..., n")
        body += [text for _, text in self.emitter.forward(steps(g.nodes[n_i:]), named, comment)[0]]
        if later:
            body.append("// nodes built on G's nodes by the derivative rules (B), by the same generator")
            body += [text for _, text in self.emitter.forward(steps(later), named, comment)[0]]
        names = Positions(JAVASCRIPT)
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

    The same statement emitter as :func:`~micrograph.compile.compile_graph`, in the JavaScript dialect (each
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
    check_graph(g, "compile_javascript")
    more = list(extra)
    for k, v in enumerate(more):
        if not isinstance(v, Value):
            raise TypeError(f"compile_javascript: extra[{k}] must be a Value, got {typed_repr(v)}")
    for v in topological_order(more) if more else []:
        if v.op is None and v not in g.index and not v.is_constant:
            raise ValueError(
                f"compile_javascript: {v!r} is a variable that is not in {g!r}; extra nodes may only "
                "depend on G's nodes and constants"
            )
    return _JavaScriptGenerator(g).program(more)
