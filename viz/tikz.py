"""A drawing as TikZ for LaTeX documents and slides, from Graphviz's own layout.

Graphviz lays the drawing out (``dot -Tjson``: every node's position and size, a record's fields, every
edge's Bézier spline, the clusters' boxes); this module only writes that layout as TikZ commands, so the
picture in a paper or a Beamer slide is the same as the SVG. Text is escaped for LaTeX (``\\ & % $ # _ { }
~ ^``), and the symbols micrograph's labels use (∂, ×, ′, −, ÷, σ, √, ², ·, ≠, ≥) are written as math, so
the output compiles with pdflatex and the standard packages only (``tikz``, ``xcolor``).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, figure 6.10 (G and B side by side).
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from typing import Any

import graphviz

from micrograph.errors import typed_repr

__all__ = ["to_tikz", "escape_latex"]

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
_MATH = {
    "∂": r"$\partial$",
    "×": r"$\times$",
    "′": r"$'$",
    "″": r"$''$",
    "‴": r"$'''$",
    "−": r"$-$",
    "÷": r"$\div$",
    "σ": r"$\sigma$",
    "√": r"$\surd$",
    "²": r"$^2$",
    "·": r"$\cdot$",
    "≠": r"$\neq$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "→": r"$\rightarrow$",
    "⇢": r"-\,-\,$\rightarrow$",  # amssymb's \dashrightarrow without amssymb
    "—": "---",
    "–": "--",
    "…": r"\ldots{}",
}


_GREEK_CAPITALS = {"Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega"}
_GREEK_AS_LATIN = {"Alpha": "A", "Beta": "B", "Epsilon": "E", "Zeta": "Z", "Eta": "H", "Iota": "I",
                   "Kappa": "K", "Mu": "M", "Nu": "N", "Omicron": "O", "Rho": "P", "Tau": "T", "Chi": "X",
                   "omicron": "o"}  # fmt: skip
"""Greek letters that LaTeX writes with Latin ones (no math command of their own)."""


def _greek(ch: str) -> str | None:
    """A Greek letter as math (``α`` -> ``$\\alpha$``), or as the Latin letter it looks like (``Α``)."""
    m = re.fullmatch(r"GREEK (SMALL|CAPITAL) LETTER ([A-Z]+)", unicodedata.name(ch, ""))
    if m is None:
        return None
    word = m.group(2).capitalize().replace("Lamda", "Lambda")  # Unicode spells it LAMDA
    if m.group(1) == "SMALL":
        word = word.lower()
    if word in _GREEK_AS_LATIN:
        return _GREEK_AS_LATIN[word]
    return f"$\\{word}$" if word.islower() or word in _GREEK_CAPITALS else None


_NOT_IN_T1 = set("ĦħĸĿŀŉŦŧſ")
"""The letters of Latin-1 and Latin Extended-A that LaTeX's T1 fonts do not have (found by compiling)."""


def _latin(ch: str) -> bool:
    """A letter of Latin-1 or Latin Extended-A (``ï``, ``ç``, ``ß``, ``ł``) that LaTeX's utf8 input and T1
    fonts print as it is, so it is passed through as UTF-8."""
    return "\u00c0" <= ch <= "\u017f" and unicodedata.category(ch).startswith("L") and ch not in _NOT_IN_T1


def escape_latex(text: str) -> str:
    """``text`` as LaTeX (UTF-8, for ``\\usepackage[T1]{fontenc}``) that prints it literally.

    Special characters are escaped; micrograph's symbols and Greek letters are written as math; Latin
    letters with accents pass through as UTF-8; Graphviz's ellipsis (a cut label) is ``\\ldots``; any other
    non-ASCII character (or control character) becomes ``?``, which pdflatex can always print.
    """
    out = []
    for ch in text:
        if ch in _LATEX_SPECIAL:
            out.append(_LATEX_SPECIAL[ch])
        elif ch in _MATH:
            out.append(_MATH[ch])
        elif " " <= ch <= "~" or _latin(ch):
            out.append(ch)
        else:
            out.append(_greek(ch) or "?")
    return "".join(out)


def _color(value: str | None, default: str) -> str:
    """A Graphviz colour ``#rrggbb`` as an xcolor expression; names are passed through when simple."""
    value = value or default
    m = re.fullmatch(r"#([0-9a-fA-F]{2})([0-9a-fA-F]{2})([0-9a-fA-F]{2})([0-9a-fA-F]{2})?", value)
    if m and m.group(4) and int(m.group(4), 16) == 0:  # fully transparent: Graphviz's "no pen"
        return "none"
    if m:
        r, g, b = (int(x, 16) for x in m.groups()[:3])
        return f"{{rgb,255:red,{r};green,{g};blue,{b}}}"
    return value if re.fullmatch(r"[a-z]+", value) else "black"


def _fields(label: str) -> list[str]:
    """The fields of a record label (``a|b|c``, ``\\|`` an escaped bar), unescaped."""
    parts, cur, k = [], [], 0
    while k < len(label):
        ch = label[k]
        if ch == "\\" and k + 1 < len(label):
            cur.append(label[k + 1])
            k += 2
            continue
        if ch == "|":
            parts.append("".join(cur))
            cur = []
        elif ch not in "{}":
            cur.append(ch)
        k += 1
    parts.append("".join(cur))
    return parts


def _html_lines(label: str) -> list[str]:
    """The text lines of an HTML-like label: rows and ``<BR/>`` break lines, other tags are dropped."""
    text = re.sub(r"(?i)<br\s*/?>|</tr>", "\n", label)
    text = re.sub(r"<[^>]*>", "", text)
    return [html.unescape(line).strip() for line in text.split("\n") if line.strip()]


def _points(spec: str) -> list[tuple[float, float]]:
    return [(float(a), float(b)) for a, b in (p.split(",")[:2] for p in spec.split())]


def _edge_path(pos: str) -> tuple[list[tuple[float, float]], tuple[float, float] | None]:
    """A Graphviz spline ``e,x,y p0 p1 ...`` as its Bézier points and the arrow's end point."""
    end = None
    items = []
    for item in pos.split():
        if item.startswith("e,"):
            x, y = item[2:].split(",")
            end = (float(x), float(y))
        elif not item.startswith("s,"):
            items.append(item)
    return _points(" ".join(items)), end


def _xy(p: tuple[float, float]) -> str:
    return f"({p[0]:.2f},{p[1]:.2f})"


def _box(x0: float, y0: float, x1: float, y1: float, options: str) -> str:
    return f"  \\draw[{options}] {_xy((x0, y0))} rectangle {_xy((x1, y1))};"


def _text(x: float, y: float, options: str, text: str) -> str:
    return f"  \\node[{options}] at {_xy((x, y))} {{{text}}};"


_ANCHOR = {"l": "base west", "c": "base", "r": "base east"}


def _size(points: float) -> str:
    """Graphviz's font size in points as the nearest of LaTeX's standard sizes in a 10pt document (so no
    font is scaled to an odd size, which would need bitmap fonts generated on the fly)."""
    for limit, command in ((7.5, "\\tiny"), (9.0, "\\scriptsize"), (11.0, "\\footnotesize"),
                           (13.0, "\\small"), (15.0, "\\normalsize")):  # fmt: skip
        if points <= limit:
            return command
    return "\\large"


def _xdot(ops: list[dict[str, Any]]) -> list[str]:
    """Graphviz's own drawing operations for a label (xdot: ``_ldraw_``) as TikZ commands.

    Used for the graph's label, which is a title or, under figure 6.10, the legend (an HTML-like table of
    swatches): polygons filled and outlined in the pen and fill colours set before them, lines, and text
    at the baseline Graphviz computed, in its font size.
    """
    pen, fill, size, dashed = "black", "white", 10.0, False
    lines = []
    for op in ops:
        kind = op.get("op")
        if kind == "c":
            pen = _color(op.get("color"), "black")
        elif kind == "C":
            fill = _color(op.get("color"), "white")
        elif kind == "S":
            dashed = str(op.get("style", "")).startswith("dashed")
        elif kind == "F":
            size = float(op.get("size", size))
        elif kind in ("P", "p", "L"):
            path = " -- ".join(_xy((float(x), float(y))) for x, y in op.get("points", []))
            if not path:
                continue
            style = f"draw={pen}" + (",dashed" if dashed else "")
            if kind == "P":
                lines.append(f"  \\filldraw[{style},fill={fill}] {path} -- cycle;")
            elif kind == "p":
                lines.append(f"  \\draw[{style}] {path} -- cycle;")
            else:
                lines.append(f"  \\draw[{style}] {path};")
        elif kind == "T":
            (x, y), text = op["pt"], str(op.get("text", ""))
            font = f"font=\\sffamily{_size(size)}"
            where = f"anchor={_ANCHOR.get(op.get('align', 'c'), 'base')},inner sep=0pt"
            lines.append(_text(float(x), float(y), f"{where},text={pen},{font}", escape_latex(text)))
    return lines


def _cluster(obj: dict[str, Any]) -> list[str]:
    """A cluster's rounded box and its label."""
    x0, y0, x1, y1 = (float(v) for v in obj["bb"].split(","))
    frame = f"draw={_color(obj.get('color'), 'black')},fill={_color(obj.get('fillcolor'), 'white')}"
    lines = [_box(x0, y0, x1, y1, "rounded corners=4pt," + frame)]
    if obj.get("label") and "lp" in obj:
        ((lx, ly),) = _points(obj["lp"])
        ink = f"text={_color(obj.get('fontcolor'), 'black')}"
        lines.append(_text(lx, ly, ink, escape_latex(obj["label"])))
    return lines


def _edge(edge: dict[str, Any]) -> list[str]:
    """An edge's Bézier spline with its arrow head, and its label; nothing for an invisible edge."""
    if "invis" in edge.get("style", "") or "pos" not in edge:
        return []
    pts, end = _edge_path(edge["pos"])
    if not pts:
        return []
    path = _xy(pts[0])
    for k in range(1, len(pts) - 2, 3):
        path += f" .. controls {_xy(pts[k])} and {_xy(pts[k + 1])} .. {_xy(pts[k + 2])}"
    if end is not None:
        path += f" -- {_xy(end)}"
    dashed = ",dashed" if "dashed" in edge.get("style", "") else ""
    lines = [f"  \\draw[-latex,draw={_color(edge.get('color'), 'black')}{dashed}] {path};"]
    for key, at in (("label", "lp"), ("headlabel", "head_lp")):  # viz.dot numbers arguments at the head
        if edge.get(key) and at in edge:
            ((lx, ly),) = _points(edge[at])
            lines.append(_text(lx, ly, "font=\\sffamily\\scriptsize", escape_latex(edge[key])))
    return lines


def _node(obj: dict[str, Any]) -> list[str]:
    """A node: a record's boxes, one per field, or a box of the node's size with one row per text line."""
    ((x, y),) = _points(obj["pos"])
    style = obj.get("style", "")
    draw = _color(obj.get("color"), "black")
    fill = _color(obj.get("fillcolor"), "white") if "filled" in style else "white"
    ink = _color(obj.get("fontcolor"), "black")
    extra = ",dashed" if "dashed" in style else ""
    extra += ",line width=1.2pt" if float(obj.get("penwidth", "1") or 1) > 1 else ""
    label = obj.get("label", obj["name"])
    lines = []
    if obj.get("rects"):  # a record: one box per field, as Graphviz placed them
        for (x0, y0, x1, y1), text in zip(
            ((float(v) for v in r.split(",")) for r in obj["rects"].split()), _fields(label)
        ):
            lines.append(_box(x0, y0, x1, y1, f"draw={draw},fill={fill}{extra}"))
            lines.append(_text((x0 + x1) / 2, (y0 + y1) / 2, f"text={ink}", escape_latex(text)))
        return lines
    w, h = float(obj.get("width", 0.75)) * 72 / 2, float(obj.get("height", 0.5)) * 72 / 2
    texts = [label]
    table = re.match(r"\s*<TABLE([^>]*)>", label, re.I)
    if table:  # an HTML-like label: the box's colours and border are the table's
        texts = _html_lines(label)
        draw, fill, extra, ink = _table_style(table.group(1), label)
    lines.append(_box(x - w, y - h, x + w, y + h, f"draw={draw},fill={fill}{extra}"))
    step = 2 * h / len(texts)
    for k, t in enumerate(texts):
        top = y + h - k * step
        if k:
            lines.append(f"  \\draw[draw={draw}] {_xy((x - w, top))} -- {_xy((x + w, top))};")
        lines.append(_text(x, top - step / 2, f"text={ink}", escape_latex(t)))
    return lines


def _table_style(attributes: str, label: str) -> tuple[str, str, str, str]:
    """An HTML-like table's frame colour, fill, extra line options and text colour."""
    attrs = dict(re.findall(r'(\w+)="([^"]*)"', attributes.upper()))
    draw = _color(attrs.get("COLOR", "").lower() or None, "black")
    fill = _color(attrs.get("BGCOLOR", "").lower() or None, "white")
    extra = ",dashed" if attrs.get("STYLE", "").find("DASHED") >= 0 else ""
    extra += ",line width=1.2pt" if int(attrs.get("BORDER", "1") or 1) > 1 else ""
    font = re.search(r'<FONT[^>]*COLOR="([^"]*)"', label, re.I)
    return draw, fill, extra, _color(font.group(1) if font else None, "black")


def to_tikz(
    drawing: graphviz.Digraph | graphviz.Graph, *, standalone: bool = True, scale: float = 1.0
) -> str:
    """The drawing as TikZ, laid out by Graphviz: G, B, or figure 6.10's G and B side by side.

    Args:
        drawing: a ``graphviz.Digraph`` from :func:`viz.draw` or :func:`viz.draw_side_by_side`.
        standalone: a complete LaTeX document (a page the picture's size, for ``pdflatex f.tex``) when True;
            only the ``tikzpicture`` environment (for ``\\input`` in a paper or a slide) when False. The
            picture needs ``\\usepackage{tikz}`` (``xcolor`` comes with it).
        scale: a factor on the layout's coordinates (1.0: Graphviz's points); text keeps its size.

    Returns:
        The LaTeX source, as a string (no file is written; see :func:`viz.render`).

    Raises:
        viz.GraphvizMissing or graphviz.ExecutableNotFound: Graphviz's ``dot`` is not installed.
        TypeError: ``drawing`` is not a Graphviz drawing (a Value z: pass ``viz.draw(z)``).
        ValueError: ``scale`` is not a positive number.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, figure 6.10.
    """
    if not isinstance(drawing, (graphviz.Digraph, graphviz.Graph)):
        raise TypeError(
            "to_tikz takes a drawing from viz.draw or viz.draw_side_by_side (e.g. viz.draw(z)), got "
            f"{typed_repr(drawing)}"
        )
    if not isinstance(scale, (int, float)) or not scale > 0:
        raise ValueError(f"to_tikz: scale must be a positive number, got {scale!r}")
    layout: dict[str, Any] = json.loads(drawing.pipe(format="json"))
    lines = [f"\\begin{{tikzpicture}}[x={scale:g}pt,y={scale:g}pt,font=\\sffamily\\small]"]
    objects = layout.get("objects", [])
    for obj in objects:  # clusters first, so nodes are drawn over them
        if "bb" in obj and "pos" not in obj:
            lines += _cluster(obj)
    for edge in layout.get("edges", []):
        lines += _edge(edge)
    for obj in objects:
        if "pos" in obj:
            lines += _node(obj)
    lines += _xdot(layout.get("_ldraw_", []))  # the graph's own label: a title, or figure 6.10's legend
    lines.append("\\end{tikzpicture}")
    picture = "\n".join(lines) + "\n"
    return _document(picture, layout, scale) if standalone else picture


def _document(picture: str, layout: dict[str, Any], scale: float) -> str:
    """The picture as a LaTeX document whose page is the picture's size."""
    # A page the size of the picture, with classes every TeX installation has (article; no standalone).
    x0, y0, x1, y1 = (float(v) for v in layout.get("bb", "0,0,100,100").split(","))
    width, height = (x1 - x0) * scale + 8, (y1 - y0) * scale + 8
    return (
        "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n"
        # Latin Modern's outline fonts where installed; T1 text without them is bitmap (Type 3) fonts
        "\\IfFileExists{lmodern.sty}{\\usepackage{lmodern}}{}\n"
        "\\usepackage{tikz}\n\\pagestyle{empty}\n"
        f"\\paperwidth={width:.0f}pt \\paperheight={height + 12:.0f}pt\n"
        "\\hoffset=-1in \\voffset=-1in \\oddsidemargin=4pt \\topmargin=4pt \\headheight=0pt \\headsep=0pt\n"
        f"\\textwidth={width:.0f}pt \\textheight={height + 4:.0f}pt \\parindent=0pt\n"
        "\\begin{document}\n" + picture + "\\end{document}\n"
    )
