"""Back-propagation step by step as one HTML flip-book: the frames of Algorithms 6.1/6.2 and of 6.5/6.6.

The frames and their prose are :mod:`viz.frames`, :mod:`viz.narration` and :mod:`viz.symbolic_frames` (the
engine's algorithms observed); this module draws each frame with Graphviz and puts them in one
self-contained page (:mod:`viz.page`), moved through with buttons or the arrow keys. Each frame's drawing is
kept legible as the lessons' pictures are (:mod:`viz.pictures`): at 1:1, shrunk while its text stays 9 px or
more, else in a pane that pans and zooms.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 and 6.5.6, Algorithms 6.1,
6.2, 6.5 and 6.6.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Sequence
from pathlib import Path

from micrograph import pseudocode
from micrograph.engine import Value
from micrograph.errors import DomainError, typed_repr
from micrograph.graph import Graph
from viz import style
from viz.dot import check_size, digraph, figure_6_10
from viz.files import write_atomic
from viz.frames import Frame, frames
from viz.page import html_page
from viz.pictures import pictures_script
from viz.render import pipe_svgs, svg_element
from viz.symbolic_frames import SymbolicFrame, SymbolicSteps, call_node_name, symbolic_frames
from viz.words import clean, fmt, node_names, node_rows

__all__ = ["steps"]

# ---------------------------------------------------------------------------------------------
# The HTML page.

_SCRIPT = """
(function () {
  micrographPictures.showAll();  // each frame's drawing, legible; a hidden frame's when it is shown
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


_WIDTH = re.compile(r'<svg\b[^>]*?\swidth="([\d.]+)pt"')


def _inline_svg(svg: str, prefix: str) -> str:
    """Graphviz's SVG ready to inline: no XML prolog or DOCTYPE, ids made unique per frame."""
    return re.sub(r'\bid="', f'id="{prefix}', svg_element(svg))


def _picture_html(svg: str, name: str) -> str:
    """A frame's drawing as one of :mod:`viz.pictures`' pictures, named ``name`` (plain text). Its box starts
    at the drawing's width at 1:1 (Graphviz's points are CSS points), so the pseudo-code stays beside it
    where both fit, and shrinks to the legible width the pictures' script gives it, below which it goes on a
    line of its own (the script takes the drawing's own size away once it has measured it)."""
    width = _WIDTH.search(svg)
    basis = f' style="flex-basis: {width.group(1)}pt"' if width else ""
    return f'<div class="graph mg-picture" role="figure" aria-label="{html.escape(name)}"{basis}>{svg}</div>'


def _code_html(algorithm: pseudocode.Algorithm, current: Sequence[int]) -> str:
    """An algorithm's pseudo-code with the lines being executed marked, under a caption saying whose words
    they are: the book's (``The book, Algorithm 6.2``) or, where ``quoted`` is False, micrograph's summary."""
    e = html.escape
    if algorithm.quoted:
        caption = f"The book, Algorithm {algorithm.number}"
    else:
        caption = f"micrograph's summary of Algorithm {algorithm.number}, not the book's words"
    code = "\n".join(
        f'<span class="line{" current" if i in current else ""}">{e(line)}</span>'
        for i, line in enumerate(algorithm.lines)
    )
    quoted = "book" if algorithm.quoted else "summary"
    return (
        f'<figure class="code" data-words="{quoted}"><figcaption>{e(caption)}</figcaption>'
        f'<div class="algo">{code}</div></figure>'
    )


def _explain_html(text: str) -> str:
    return "".join(f'<p class="explain">{html.escape(p)}</p>' for p in text.split("\n\n"))


def _frame_html(k: int, frame: Frame, graph: Graph, svg: str, count_in_algo: tuple[int, int]) -> str:
    e = html.escape
    nodes = graph.nodes
    names = node_names(graph)
    algo = pseudocode.ALGORITHMS[frame.algorithm]
    title = "forward propagation" if frame.algorithm == "6.1" else "back-propagation"
    if frame.algorithm == "6.1":
        head, col = "u(i)", frame.values
    else:
        head, col = "grad_table[u(i)] = ∂u(n)/∂u(i)", frame.grads
    rows = []
    for i, cells in enumerate(node_rows(graph, {head: col}, names=names, empty="—")):
        cls = " ".join(c for c, on in (("current", i == frame.node), ("empty", col[i] is None)) if on)
        *text, shown = (e(c) for c in cells)
        cols = "".join(f"<td>{c}</td>" for c in text)
        rows.append(f'<tr class="{cls}">{cols}<td class="num">{shown}</td></tr>')
    table = (
        f'<table class="gt"><thead><tr><th>node</th><th>label</th><th>computation</th><th>{e(head)}</th></tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table>"
    )
    terms = ""
    if frame.terms:
        uj = names[nodes[frame.node or 0]]
        items = "".join(
            f"<li>∂{names[nodes[i]]}/∂{uj} (argument {kk + 1} of {e(nodes[i].op.name)}) = "
            f"{e(form) + ' = ' if form else ''}{e(fmt(d))}; grad_table[{names[nodes[i]]}] = {e(fmt(g))}</li>"
            for i, kk, g, d, form in frame.terms
        )
        terms = f'<ul class="terms">{items}</ul>'
    idx, of = count_in_algo
    return (
        f'<section class="frame" id="frame{k + 1}" data-algorithm="{frame.algorithm}">'
        f"<h2>Algorithm {frame.algorithm} ({title}), step {idx} of {of}</h2>"
        f'<p class="explain">{e(frame.explanation)}</p>{terms}'
        f'<div class="cols">{_picture_html(svg, f"the graph G at step {idx} of Algorithm {frame.algorithm}")}'
        f"<div>{_code_html(algo, frame.lines)}{table}</div></div></section>"
    )


def _symbolic_frame_html(k: int, frame: SymbolicFrame, svg: str) -> str:
    e = html.escape
    rows = "".join(
        f'<tr><td>{e(name)}</td><td>{e(computes)}</td><td class="num">{e(value)}</td></tr>'
        for name, computes, value in frame.rows
    )
    table = (
        f'<table class="gt"><thead><tr>{"".join(f"<th>{e(c)}</th>" for c in frame.columns)}</tr></thead>'
        f"<tbody>{rows}</tbody></table>"
        if frame.rows
        else ""
    )
    return (
        f'<section class="frame" id="frame{k + 1}" data-algorithm="{frame.algorithm}">'
        f"<h2>{e(frame.heading)}</h2>{_explain_html(frame.explanation)}"
        f'<div class="cols wide">{_picture_html(svg, f"G and B, {frame.heading}")}'
        f"<div>{_code_html(pseudocode.ALGORITHMS[frame.algorithm], frame.lines)}{table}</div></div>"
        "</section>"
    )


def _grad_table(graph: Graph, fs: Sequence[Frame]) -> dict[Value, float]:
    """The grad_table G's boxes show beside B: the observed Algorithm 6.2's last frame when the page has
    its frames, else Algorithm 6.2 run once here for every frame of Algorithm 6.6 ({} where a local
    derivative does not exist: G's boxes then show no grad)."""
    if fs:
        return {v: g for v, g in zip(graph.nodes, fs[-1].grads) if g is not None}
    try:
        return dict(graph.backprop())
    except DomainError:
        return {}


def steps(
    z: Value,
    path: str | os.PathLike[str],
    *,
    algorithm: str = "6.2",
    wrt: Value | Sequence[Value] | None = None,
    overwrite: bool = True,
    max_nodes: int = 80,
) -> Path:
    """Write back-propagation on the graph of z, step by step, as one self-contained HTML page.

    With ``algorithm="6.2"`` (the default), Algorithm 6.1 then Algorithm 6.2 (symbol-to-number): each
    frame shows the graph with the node being computed highlighted (values not computed yet are ``?``,
    grad_table entries not filled yet ``—``), the book's pseudo-code with the current line marked, what
    the step computes in numbers, and the table filled so far (u(i) for Algorithm 6.1, the grad_table
    for Algorithm 6.2).

    With ``algorithm="6.6"``, Algorithm 6.5 then 6.6 (symbol-to-symbol), from one run of
    :func:`micrograph.grad` with an observer (:func:`symbolic_frames`): a first frame with G' highlighted
    (the rest of G faded) and grad_table[z] ← 1, one frame per call of build_grad in the order grad made
    them (V, its consumers C in G', get_inputs(C, G'), D = grad_table[C], the term op.bprop built, the
    sum grad_table[V] and its value, the nodes of B the call added, highlighted in the drawing of G and
    B side by side), and a last frame returning grad_table restricted to T. Algorithm 6.6's pseudo-code is
    captioned as micrograph's summary, not the book's words. ``algorithm="all"`` puts the frames of both
    on one page, 6.1 and 6.2 first. Every node has one name on the page, the drawing's u(i).

    The SVG drawings, stylesheet and scripts are inlined: the page loads nothing from the network. Move
    with the next/previous buttons or the arrow keys (Home/End jump). Each drawing is kept legible by
    :func:`viz.pictures.pictures_script`, as the tour's lesson pages are (text at 9 px or more, else a pane
    that pans and zooms), and the page is no wider than a phone's screen. Labels are escaped, and a
    Content-Security-Policy admits only the page's own scripts.

    Args:
        z: the output u(n), a Value. Its graph is not changed (grad adds B beside it).
        path: the HTML file to write (atomically).
        algorithm: ``"6.2"``, ``"6.6"`` or ``"all"`` (:data:`micrograph.pseudocode.STEP_PAGES`).
        wrt: for Algorithm 6.5, the targets T (a Value or a sequence of Values); by default the graph's
            variables (the inputs that are not constants, in u(i) order). Ignored for ``"6.2"``.
        overwrite: if False, an existing file is an error.
        max_nodes: the largest graph shown: G for Algorithms 6.1/6.2, G and B together for 6.5/6.6 (each
            frame holds a drawing of the whole graph).

    Returns:
        The path written.

    Raises:
        ValueError: ``algorithm`` is not one of :data:`~micrograph.pseudocode.STEP_PAGES`; T is empty,
            or z has no variables and no ``wrt`` is given.
        GraphTooLarge: the graph (or G and B together) has more than ``max_nodes`` nodes.
        FileExistsError: the file exists and ``overwrite`` is False.
        GraphvizMissing: Graphviz's ``dot`` program is not installed (nothing is written).
        DomainError: an operation or local derivative is undefined at the graph's values.
        TypeError: z or a target is not a Value.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 and 6.5.6,
    Algorithms 6.1, 6.2, 6.5 and 6.6.
    """
    if algorithm not in pseudocode.STEP_PAGES:
        raise ValueError(
            f"steps(algorithm=...): must be one of {', '.join(repr(a) for a in pseudocode.STEP_PAGES)}, "
            f"got {algorithm!r}"
        )
    if not isinstance(z, Value):
        raise TypeError(f"steps(z, path): z must be a Value, got {typed_repr(z)}")
    dest = Path(path)
    if not overwrite and dest.exists():
        raise FileExistsError(f"{dest} exists; pass overwrite=True to replace it")
    graph = Graph(z)
    check_size(len(graph.nodes), max_nodes)
    dots = []
    fs: list[Frame] = []
    if algorithm in ("6.2", "all"):
        fs = frames(graph)
        for f in fs:
            highlight = [] if f.node is None else [graph.nodes[f.node]]
            dots.append(digraph(graph, data=f.values, grads=f.grads, highlight=highlight))
    sym: list[SymbolicFrame] = []
    run: SymbolicSteps | None = None
    if algorithm in ("6.6", "all"):
        run = symbolic_frames(z, wrt)
        sym = run.frames
        table = _grad_table(graph, fs)
        for sf in sym:
            drawing = figure_6_10(graph, run.targets, run.gradients, table, highlight=sf.highlight,
                                  max_nodes=max_nodes)  # fmt: skip
            dots.append(drawing)
    svgs = pipe_svgs(dots)
    n61 = sum(1 for f in fs if f.algorithm == "6.1")
    sections = []
    for k, (f, svg) in enumerate(zip(fs, svgs)):
        within = (k + 1, n61) if f.algorithm == "6.1" else (k + 1 - n61, len(fs) - n61)
        sections.append(_frame_html(k, f, graph, _inline_svg(svg, f"f{k + 1}_"), within))
    for k, (sf, svg) in enumerate(zip(sym, svgs[len(fs) :]), len(fs)):
        sections.append(_symbolic_frame_html(k, sf, _inline_svg(svg, f"f{k + 1}_")))
    sections[0] = sections[0].replace('class="frame"', 'class="frame current"', 1)
    zname = clean(z.label) or node_names(graph)[z]
    total = len(sections)
    what = pseudocode.named(pseudocode.STEP_PAGES[algorithm])
    if run is not None:  # say what T is, with the names the frames use
        zname += f", T = {{{', '.join(call_node_name(v, run.names) for v in run.targets)}}}"
    body = (
        f"<h1>{what}, step by step, on {html.escape(zname)} "
        f"({len(graph.nodes)} nodes, n_i = {graph.n_inputs})</h1>"
        '<div class="nav"><button id="prev" type="button">◀ previous</button>'
        f'<span id="counter" class="counter">step 1 of {total}</span>'
        '<button id="next" type="button">next ▶</button>'
        '<span class="help keys">or use the ← → arrow keys (Home, End)</span></div>\n' + "\n".join(sections)
    )
    page = html_page(
        title=f"Back-propagation step by step: {zname}",
        css=style.HTML_CSS,
        body=body,
        script=(pictures_script(), _SCRIPT),
        body_attrs='data-frame="1"',
    )
    return write_atomic(dest, page.encode("utf-8"), overwrite=overwrite)
