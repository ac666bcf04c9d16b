"""The compiler's Python dialect: G's values and the gradients over G' as fused straight-line statements.

:func:`micrograph.compile.compile_graph` hands a graph to :class:`Writer`, which writes:

* **Forward** (Algorithm 6.1): the inputs u(1)..u(n_i) unpacked from the list ``x``, then u(i) for
  i = n_i+1..n in the stored order, by the emitter both dialects share (:class:`~micrograph.compile_emitter.
  Emitter`).
* **Backward** (Algorithm 6.2 on G', the nodes between ``wrt`` and z, as Algorithm 6.5 prunes): a
  dialect of Algorithm 6.2 that writes each sum as a statement instead of adding it. It walks the order
  and the edges that :func:`micrograph.backprop.sweep` gives Algorithm 6.2's own loop: for every node u(j)
  of G', from the last to the first, grad_table[u(j)] is the sum, over the edges to its consumers u(i) in
  the order Algorithm 6.2 adds them, of grad_table[u(i)] times du(i)/du(j). Each local derivative is the
  operation's own rule written out by :func:`micrograph.templates.derivative_source`; a rule that cannot
  be written out is called. No derivative formula is written here.

A value used once is written into its consumer's statement (see :mod:`micrograph.compile_emitter`), and so
is a gradient read by one term only, so a chain's backward pass takes one statement per
:data:`~micrograph.compile_emitter.FUSE` products. Every other value keeps a name: ``u5`` is u(5),
``grad_u5`` is grad_table[u(5)].

**Parts.** A graph of more than ``part_size`` operations is split into functions (parts), each compiled
on its own, so that Python's compiler never holds more than one part at a time. A part names its values
relative to its own first node and takes what earlier parts computed as arguments; so parts that do the
same operations on the same pattern of values (the steps of a long chain, repeated blocks) have the
same text, and each distinct text is compiled once (a small cache of code objects). A driver calls
the parts in order, passing values between them in one list.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 (Algorithms 6.1, 6.2)
and 6.5.6 (Algorithm 6.5).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from micrograph.backprop import sweep
from micrograph.compile_emitter import FUNCTION, FUSE, PREFIX, PYTHON, Emitter, Positions
from micrograph.engine import Value
from micrograph.graph import ConsumerEdge as Edge
from micrograph.graph import Graph
from micrograph.ops import OPS, Op
from micrograph.templates import derivative_source, op_text, trusted

__all__ = ["Writer", "Function"]

CHECK_TERMS = 20
"""How many values one check-sum statement adds up (keeps each line short)."""

SUM_TERMS = 20
"""How many terms of a gradient's sum one statement adds (a node with many consumers gets partial sums,
``sK``: Python's compiler recurses into a long sum)."""

Function = Callable[[Sequence[float]], tuple[float, list[float], list[float], float]]
"""The generated ``forward_backward(x) -> (z, grads, kept, check sum)``."""


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


class Writer:
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
        self.emitter = Emitter(PYTHON, self._function)
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
        return self._callable(op.f, f"the numeric function f of {op_text(op)}")

    def derivative_template(self, op: Op, k: int) -> tuple[str, bool, bool, bool]:
        """du/dx_k with fields {0} (x), {1} (y, or out for one argument), {2} (out); and which it reads.

        The rule written out by :func:`~micrograph.templates.derivative_source`; a rule that cannot be
        written out, or one of an operation outside the table, is called with all of them, as Algorithm
        6.2 calls it.
        """
        found = self.derivative_templates.get((op, k))
        if found is None:
            fields = {"x": "{0}", "y": "{1}", "out": f"{{{op.arity}}}"}
            text = None
            if trusted(op):
                try:
                    text, functions = derivative_source(op, k)
                except TypeError:
                    pass
                else:
                    text = _ARGUMENT.sub(lambda m: fields[m.group()], text)
                    what = "a numeric function a rule calls"
                    text = _RULE_FUNCTION.sub(lambda m: self._callable(functions[m.group()], what), text)
            if text is None:
                rule = self._callable(op.rule(k), f"derivative rule {k} of {op_text(op)}, called")
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
            if len(terms) > SUM_TERMS:  # a long sum: partial sums, in the same order, a few terms each
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
        """A long sum as partial sums ``sK``, in the same order, :data:`SUM_TERMS` terms each; the last."""
        expr = ""
        for t in range(0, len(terms), SUM_TERMS):
            key = f"p{len(sizes)}"
            group = terms[t : t + SUM_TERMS]
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
        for t in range(0, len(names), CHECK_TERMS):
            head = "check = " if t == 0 else "check = check + "
            lines.append(head + " + ".join(names[t : t + CHECK_TERMS]))
        return lines

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
        n_i, nodes, leaf = self.g.n_inputs, self.g.nodes, self.emitter.leaf_comment
        names = Positions(PYTHON)
        leaves = [f"    {names[f'f{j}']},  # {leaf(j, nodes[j])}" for j in range(n_i)]
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

            own = {key: f"{PREFIX[key[0]]}{int(key[1:]) - base[key[0]] + 1}" for key, _ in chunk}
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
