"""Algorithms 6.1 and 6.2 step by step: frames of the forward and backward passes, in one HTML page.

Every frame observes the engine's own algorithms as they run: :func:`micrograph.forward.evaluate`
(Algorithm 6.1) reports each u(i) it computes, and :func:`micrograph.backprop.run_algorithm_6_2`
(Algorithm 6.2) reports each iteration j with the terms of its sum. Nothing here computes a value or
knows a derivative.
The frame's local-derivative formula (``∂u4/∂u3 = 1 − u4 × u4``) is that same rule called on placeholder
nodes named after the arguments, so it shows what the rule computes, not a second table of derivatives.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithms 6.1 and 6.2.
"""

from __future__ import annotations

import base64
import hashlib
import html
import os
import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from micrograph import pseudocode
from micrograph.backprop import BackpropStep, run_algorithm_6_2
from micrograph.engine import Value
from micrograph.forward import evaluate, input_values
from micrograph.graph import Graph
from viz import style
from viz.dot import check_size, digraph
from viz.render import pipe_svg, write_atomic
from viz.words import clean, factor, fmt, formula, node_names

__all__ = ["steps", "frames", "Frame", "ALGORITHM_6_1", "ALGORITHM_6_2", "derivative_formula"]

ALGORITHM_6_1 = list(pseudocode.ALGORITHM_6_1.lines)
"""Algorithm 6.1 (forward propagation), line by line as the book prints it (from micrograph.pseudocode)."""

ALGORITHM_6_2 = list(pseudocode.ALGORITHM_6_2.lines)
"""Algorithm 6.2 (back-propagation, simplified), line by line as the book prints it (from pseudocode)."""


@dataclass
class Frame:
    """One step of Algorithm 6.1 or 6.2.

    Attributes:
        algorithm: ``"6.1"`` or ``"6.2"``.
        lines: the pseudo-code lines being executed (0-based indices into ALGORITHM_6_1 / ALGORITHM_6_2).
        node: the position of the node being computed (u(node + 1)), or None.
        values: u(i) known so far, one per node (None: not computed yet).
        grads: grad_table so far, one per node (None: not filled yet); all None during Algorithm 6.1.
        explanation: what happens, in words and numbers (plain text).
        terms: for a step of Algorithm 6.2, one (i, k, grad_table[u(i)], du(i)/du(j), formula) per edge.
    """

    algorithm: str
    lines: tuple[int, ...]
    node: int | None
    values: list[float | None]
    grads: list[float | None]
    explanation: str
    terms: list[tuple[int, int, float, float, str]] = field(default_factory=list)


def derivative_formula(node: Value, k: int, names: Mapping[Value, str]) -> str:
    """The local derivative ∂u(i)/∂(argument k) as the operation's rule writes it, e.g. ``1 − u4 × u4``.

    The rule ``node.op.derivs[k]`` is called on placeholder leaves named after the node's arguments and
    output (carrying their values, so the rule's domain checks pass); the nodes it builds are written
    out as an expression. Returns ``""`` if the rule cannot be shown this way.
    """
    op = node.op
    if op is None:
        return ""
    args = [Value(p.data, label=names.get(p, "?")) for p in node.inputs]
    out = Value(node.data, label=names.get(node, "?"))
    try:
        d = op.derivs[k](*args, out)
    except (ArithmeticError, ValueError, TypeError):
        return ""
    if not isinstance(d, Value):
        return _short(float(d))
    return _expression(d)


def _short(x: float) -> str:
    return f"{x:g}"


def _expression(root: Value) -> str:
    """Infix text of a small expression tree whose leaves are labelled placeholders or constants.

    Iterative (post-order with an explicit stack); a binary argument that is itself binary is bracketed.
    """
    text: dict[Value, str] = {}
    stack: list[tuple[Value, bool]] = [(root, False)]
    while stack:
        v, ready = stack.pop()
        if v in text:
            continue
        if v.op is None:
            text[v] = v.label if v.label else _short(v.data)
            continue
        if not ready:
            stack.append((v, True))
            stack.extend((p, False) for p in v.inputs)
            continue
        shown = {p: (f"({text[p]})" if p.op is not None and p.op.arity == 2 else text[p]) for p in v.inputs}
        text[v] = formula(v, shown)
    return text[root]


def frames(z: Value | Graph) -> list[Frame]:
    """The frames of Algorithm 6.1 then Algorithm 6.2 on the graph of z.

    Algorithm 6.1: one frame per input u(1)..u(n_i) (line 2), one per computed node u(i) (lines 5-6),
    one for ``return u(n)``. Algorithm 6.2: one frame for ``grad_table[u(n)] ← 1``, one per loop
    iteration j = n-1 down to 1 (line 7, the node u(j) and its terms), one for the return.

    Raises:
        DomainError: an operation or a local derivative is undefined at the graph's values.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithms 6.1, 6.2.
    """
    graph = z if isinstance(z, Graph) else Graph(z)
    nodes = graph.nodes
    n, n_i = len(nodes), graph.n_inputs
    names = node_names(graph)
    out: list[Frame] = []

    # --- Algorithm 6.1 -------------------------------------------------------------------------
    x = input_values(graph, None)  # the inputs x_i are the leaves' current values
    u: list[float | None] = [None] * n
    for i in range(n_i):  # for i = 1, ..., n_i: u(i) <- x_i
        u[i] = x[i]
        v = nodes[i]
        what = f"the constant {fmt(x[i])}" if v.is_constant else f"the input x_{i + 1} = {fmt(x[i])}"
        if v.label:
            what += f" ({clean(v.label)})"
        out.append(Frame("6.1", (0, 1), i, list(u), [None] * n, f"u{i + 1} ← x_{i + 1}: u{i + 1} is {what}."))
    parents = graph.parents

    def forward_step(i: int, value: float) -> None:  # observes Algorithm 6.1: u(i) <- f(i)(A(i))
        u[i] = value
        v = nodes[i]
        A_text = ", ".join(f"u{j + 1} = {fmt(u[j])}" for j in dict.fromkeys(parents[i]))
        numbers = formula(v, {p: factor(u[graph.index[p]]) for p in v.inputs})
        label = f" ({clean(v.label)})" if v.label else ""
        say = (
            f"i = {i + 1}: A({i + 1}) = {{{A_text}}}; u{i + 1}{label} ← f({i + 1})(A({i + 1})) = "
            f"{formula(v, names)} = {numbers} = {fmt(value)}."
        )
        out.append(Frame("6.1", (4, 5), i, list(u), [None] * n, say))

    values = evaluate(graph, observe=forward_step)  # the engine's Algorithm 6.1, watched
    out.append(Frame("6.1", (7,), n - 1, list(u), [None] * n, f"return u(n) = u{n} = {fmt(u[n - 1])}."))

    # --- Algorithm 6.2 -------------------------------------------------------------------------
    table: list[float | None] = [None] * n
    table[n - 1] = 1.0  # grad_table[u(n)] <- 1
    say = f"Forward propagation has computed every u(i). grad_table[u{n}] ← 1: ∂u{n}/∂u{n} = 1."
    out.append(Frame("6.2", (0, 1, 2, 3), n - 1, list(values), list(table), say))

    def backward_step(step: BackpropStep) -> None:  # observes one iteration j of Algorithm 6.2
        j = step.j
        terms = [
            (t.i, t.k, t.grad_i, t.derivative, derivative_formula(nodes[t.i], t.k, names)) for t in step.terms
        ]
        table[j] = step.total
        out.append(
            Frame(
                "6.2", (4, 7), j, list(values), list(table), _explain_62(j, step.total, terms, nodes), terms
            )
        )

    run_algorithm_6_2(graph, values=values, observe=backward_step)  # the engine's Algorithm 6.2, watched
    out.append(Frame("6.2", (9,), None, list(values), list(table),
                     "return the grad_table: ∂u(n)/∂u(i) for every node, as the table shows."))  # fmt: skip
    return out


def _explain_62(
    j: int, total: float, terms: list[tuple[int, int, float, float, str]], nodes: Sequence[Value]
) -> str:
    label = f" ({clean(nodes[j].label)})" if nodes[j].label else ""
    consumers = ", ".join(dict.fromkeys(f"u{i + 1}" for i, *_ in terms))
    symbolic = " + ".join(f"grad_table[u{i + 1}] · ∂u{i + 1}/∂u{j + 1}" for i, *_ in terms)
    numeric = " + ".join(f"{factor(g)} × {factor(d)}" for _, _, g, d, _ in terms)
    return (
        f"j = {j + 1}: u{j + 1}{label} is an argument of {consumers}. "
        f"grad_table[u{j + 1}] ← {symbolic} = {numeric} = {fmt(total)}."
    )


# ---------------------------------------------------------------------------------------------
# The HTML page.

_SCRIPT = """
(function () {
  var frames = document.querySelectorAll("section.frame");
  var counter = document.getElementById("counter");
  var prev = document.getElementById("prev");
  var next = document.getElementById("next");
  var k = 0;
  function show(n) {
    if (n < 0 || n >= frames.length) { return; }
    frames[k].classList.remove("current");
    k = n;
    frames[k].classList.add("current");
    counter.textContent = "step " + (k + 1) + " of " + frames.length;
    document.body.setAttribute("data-frame", String(k + 1));
    prev.disabled = k === 0;
    next.disabled = k === frames.length - 1;
  }
  prev.addEventListener("click", function () { show(k - 1); });
  next.addEventListener("click", function () { show(k + 1); });
  document.addEventListener("keydown", function (e) {
    if (e.key === "ArrowRight" || e.key === "PageDown" || e.key === " ") { show(k + 1); e.preventDefault(); }
    else if (e.key === "ArrowLeft" || e.key === "PageUp") { show(k - 1); e.preventDefault(); }
    else if (e.key === "Home") { show(0); e.preventDefault(); }
    else if (e.key === "End") { show(frames.length - 1); e.preventDefault(); }
  });
  show(0);
})();
"""

_SVG_PROLOG = re.compile(r"^.*?(?=<svg)", re.S)


def _inline_svg(svg: str, prefix: str) -> str:
    """Graphviz's SVG ready to inline: no XML prolog or DOCTYPE, ids made unique per frame."""
    svg = _SVG_PROLOG.sub("", svg, count=1)
    return re.sub(r'\bid="', f'id="{prefix}', svg)


def _frame_html(
    k: int, total: int, frame: Frame, graph: Graph, svg: str, count_in_algo: tuple[int, int]
) -> str:
    e = html.escape
    nodes = graph.nodes
    names = node_names(graph)
    algo = ALGORITHM_6_1 if frame.algorithm == "6.1" else ALGORITHM_6_2
    title = "forward propagation" if frame.algorithm == "6.1" else "back-propagation"
    code = "\n".join(
        f'<span class="line{" current" if i in frame.lines else ""}">{e(line)}</span>'
        for i, line in enumerate(algo)
    )
    if frame.algorithm == "6.1":
        head, col = "u(i)", frame.values
    else:
        head, col = "grad_table[u(i)] = ∂u(n)/∂u(i)", frame.grads
    rows = []
    for i, v in enumerate(nodes):
        cls = []
        if i == frame.node:
            cls.append("current")
        if col[i] is None:
            cls.append("empty")
        shown = fmt(col[i]) if col[i] is not None else "—"
        rows.append(
            f'<tr class="{" ".join(cls)}"><td>u{i + 1}</td><td>{e(clean(v.label))}</td>'
            f'<td>{e(formula(v, names))}</td><td class="num">{e(shown)}</td></tr>'
        )
    table = (
        f'<table class="gt"><thead><tr><th>node</th><th>label</th><th>computation</th><th>{e(head)}</th></tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table>"
    )
    terms = ""
    if frame.terms:
        items = "".join(
            f"<li>∂u{i + 1}/∂u{(frame.node or 0) + 1} (argument {kk + 1} of {e(nodes[i].op.name)}) = "
            f"{e(form) + ' = ' if form else ''}{e(fmt(d))}; grad_table[u{i + 1}] = {e(fmt(g))}</li>"
            for i, kk, g, d, form in frame.terms
        )
        terms = f'<ul class="terms">{items}</ul>'
    idx, of = count_in_algo
    return (
        f'<section class="frame" id="frame{k + 1}" data-algorithm="{frame.algorithm}">'
        f"<h2>Algorithm {frame.algorithm} ({title}), step {idx} of {of}</h2>"
        f'<p class="explain">{e(frame.explanation)}</p>{terms}'
        f'<div class="cols"><div class="graph">{svg}</div>'
        f'<div><div class="algo">{code}</div>{table}</div></div></section>'
    )


def steps(z: Value, path: str | os.PathLike[str], *, overwrite: bool = True, max_nodes: int = 80) -> Path:
    """Write Algorithms 6.1 and 6.2 on the graph of z, step by step, as one self-contained HTML page.

    Each frame shows the graph with the node being computed highlighted (values not computed yet are
    ``?``, grad_table entries not filled yet ``—``), the book's pseudo-code with the current line marked,
    what the step computes in numbers, and the table filled so far (u(i) for Algorithm 6.1, the
    grad_table for Algorithm 6.2). The SVG drawings, stylesheet and script are inlined: the page loads
    nothing from the network. Move with the next/previous buttons or the arrow keys (Home/End jump).
    Labels are escaped, and a Content-Security-Policy admits only the page's own script.

    Args:
        z: the output u(n), a Value. Its graph is not changed.
        path: the HTML file to write (atomically).
        overwrite: if False, an existing file is an error.
        max_nodes: the largest graph shown (each of its ~2n frames holds a drawing of the whole graph).

    Returns:
        The path written.

    Raises:
        GraphTooLarge: the graph has more than ``max_nodes`` nodes.
        FileExistsError: the file exists and ``overwrite`` is False.
        GraphvizMissing: Graphviz's ``dot`` program is not installed (nothing is written).
        DomainError: an operation or local derivative is undefined at the graph's values.
        TypeError: z is not a Value.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithms 6.1 and 6.2.
    """
    if not isinstance(z, Value):
        raise TypeError(f"steps(z, path): z must be a Value, got {type(z).__name__} {z!r}")
    dest = Path(path)
    if not overwrite and dest.exists():
        raise FileExistsError(f"{dest} exists; pass overwrite=True to replace it")
    graph = Graph(z)
    check_size(len(graph.nodes), max_nodes)
    fs = frames(graph)
    dots = [
        digraph(
            graph, data=f.values, grads=f.grads, highlight=[] if f.node is None else [graph.nodes[f.node]]
        )
        for f in fs
    ]
    with ThreadPoolExecutor(max_workers=2) as pool:
        svgs = list(pool.map(pipe_svg, dots))
    n61 = sum(1 for f in fs if f.algorithm == "6.1")
    sections = []
    for k, (f, svg) in enumerate(zip(fs, svgs)):
        within = (k + 1, n61) if f.algorithm == "6.1" else (k + 1 - n61, len(fs) - n61)
        sections.append(_frame_html(k, len(fs), f, graph, _inline_svg(svg, f"f{k + 1}_"), within))
    sections[0] = sections[0].replace('class="frame"', 'class="frame current"', 1)
    digest = base64.b64encode(hashlib.sha256(_SCRIPT.encode("utf-8")).digest()).decode("ascii")
    csp = f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{digest}'"
    zname = clean(z.label) or f"u{len(graph.nodes)}"
    page = (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(f'Back-propagation step by step: {zname}')}</title>"
        f"<style>{style.HTML_CSS}</style></head>\n"
        '<body data-frame="1">'
        f"<h1>Algorithms 6.1 and 6.2, step by step, on {html.escape(zname)} "
        f"({len(graph.nodes)} nodes, n_i = {graph.n_inputs})</h1>"
        '<div class="nav"><button id="prev" type="button">◀ previous</button>'
        f'<span id="counter" class="counter">step 1 of {len(fs)}</span>'
        '<button id="next" type="button">next ▶</button>'
        '<span class="help">or use the ← → arrow keys (Home, End)</span></div>\n'
        + "\n".join(sections)
        + f"\n<script>{_SCRIPT}</script>\n</body></html>\n"
    )
    return write_atomic(dest, page.encode("utf-8"), overwrite=overwrite)
