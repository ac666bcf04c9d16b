"""viz.to_tikz: TikZ from Graphviz's layout for G, B and figure 6.10, labels escaped; compiled by pdflatex."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import viz
from micrograph import Value, grad
from micrograph.families import chain
from viz.tikz import escape_latex

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
MICROGRAPH = [sys.executable, "-m", "micrograph"]  # this checkout's, first on the path
ENV = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
needs_pdflatex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")


def _compile(tex: str, tmp_path: Path, name: str) -> Path:
    src = tmp_path / f"{name}.tex"
    src.write_text(tex, encoding="utf-8")
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", src.name],
        cwd=tmp_path, capture_output=True, timeout=180, check=False,
    )  # fmt: skip
    log = done.stdout.decode("utf-8", "replace")
    assert done.returncode == 0, [line for line in log.splitlines() if line.startswith("!")]
    pdf = tmp_path / f"{name}.pdf"
    assert pdf.read_bytes().startswith(b"%PDF")
    return pdf


def test_escape_latex() -> None:
    assert escape_latex("a_b & 50% $x# {y} ~^\\") == (
        r"a\_b \& 50\% \$x\# \{y\} \textasciitilde{}\textasciicircum{}\textbackslash{}"
    )
    assert escape_latex("∂z/∂w × tanh′") == r"$\partial$z/$\partial$w $\times$ tanh$'$"
    assert escape_latex("é\x07") == "é?"  # a Latin letter passes through as UTF-8; a control character is ?


@needs_dot
def test_figure_6_10_tikz_has_every_node_and_edge() -> None:
    z, w = chain(3)
    tex = viz.to_tikz(viz.draw_side_by_side(z, w), standalone=False)
    assert tex.startswith("\\begin{tikzpicture}") and tex.rstrip().endswith("\\end{tikzpicture}")
    # two clusters and 9 boxes (4 nodes of G, 5 of B), each row of a box as Graphviz drew it
    assert tex.count("rectangle") == 2 + 9
    assert tex.count("{data ") == 9 and tex.count("{grad ") == 4
    assert r"$\partial$z/$\partial$y (u5)" in tex and r"tanh$'$(u3)" in tex
    # edges: 3 in G, 3 dashed from G into B, 4 in B; the invisible layout edges are not drawn
    assert len(re.findall(r"\\draw\[-latex", tex)) == 10
    assert len(re.findall(r"\\draw\[-latex[^\]]*dashed", tex)) == 3


@needs_dot
@needs_pdflatex
def test_tikz_compiles_for_G_B_and_side_by_side(tmp_path: Path) -> None:
    z, w = chain(3)
    w.label = "w_0 & 100% {$#}"  # LaTeX's special characters in a label
    dz = grad(z, w)
    for name, drawing in (
        ("G", viz.draw(z)),
        ("B", viz.draw(dz)),
        ("fig_6_10", viz.draw_side_by_side(z, w)),
    ):
        tex = viz.to_tikz(drawing)
        assert r"w\_0 \& 100\% \{\$\#\}" in tex
        _compile(tex, tmp_path, name)


@needs_dot
@needs_pdflatex
def test_micrograph_render_writes_tex(tmp_path: Path) -> None:
    out = tmp_path / "f.tex"
    done = subprocess.run(
        [*MICROGRAPH, "render", "tanh(tanh(tanh(w)))", "--at", "w=0.5", "--wrt", "w", "--out", str(out)],
        capture_output=True, timeout=120, check=False, env=ENV,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"wrote {out}" in done.stdout.decode()
    _compile(out.read_text(encoding="utf-8"), tmp_path, "g")
    again = subprocess.run(
        [*MICROGRAPH, "render", "tanh(w)", "--at", "w=0.5", "--out", str(out)],
        capture_output=True, timeout=120, check=False, env=ENV,
    )  # fmt: skip
    assert again.returncode == 2 and len(again.stderr.decode().strip().splitlines()) == 1


def test_scale_must_be_positive() -> None:
    with pytest.raises(ValueError, match="scale must be a positive number"):
        viz.to_tikz(viz.draw(Value(1.0)), scale=0)


@needs_dot
def test_figure_6_10_tikz_has_the_legend_the_svg_has() -> None:
    from viz import style
    from viz.tikz import _color

    z, w = chain(3)
    drawing = viz.draw_side_by_side(z, w)
    tex = viz.to_tikz(drawing, standalone=False)
    svg = drawing.pipe(format="svg").decode()
    for text, attrs in style.LEGEND:  # each swatch: its words, on its fill colour, outlined in its colour
        assert f">{text.replace(chr(39), '&#39;')}<" in svg
        swatch = re.search(
            rf"\\filldraw\[draw=none(?:,dashed)?,fill={re.escape(_color(attrs['fillcolor'], ''))}\] "
            rf"(\(.*?) -- cycle;\n"
            rf"  \\draw\[draw={re.escape(_color(attrs['color'], ''))}(,dashed)?\] \1 -- cycle;\n"
            rf"  \\node\[anchor=base west,inner sep=0pt,text=[^\]]*\] at \([\d.]+,[\d.]+\) "
            rf"\{{{re.escape(escape_latex(text))}\}};",
            tex,
        )
        assert swatch, text
        assert bool(swatch.group(2)) == ("dashed" in attrs.get("style", "")), text
    assert r"$\rightarrow$ argument (1, 2: position)}" in tex
    assert r"-\,-\,$\rightarrow$ dashed: B uses a value of G}" in tex
    # the legend lies below the drawing's nodes, inside the picture, as Graphviz placed it
    ys = [float(y) for y in re.findall(r"at \([\d.]+,([\d.]+)\) \{variable \(input\)\}", tex)]
    nodes = [float(y) for y in re.findall(r"at \([\d.]+,([\d.]+)\) \{data ", tex)]
    assert len(ys) == 1 and ys[0] < min(nodes)


@needs_dot
def test_a_drawings_title_is_in_its_tikz() -> None:
    z, _ = chain(2)
    tex = viz.to_tikz(viz.draw(z, title="figure 6.9 & 100%"), standalone=False)
    assert r"{figure 6.9 \& 100\%}" in tex
    assert "{figure" not in viz.to_tikz(viz.draw(z), standalone=False)


@needs_dot
@needs_pdflatex
def test_figure_6_10_tikz_with_its_legend_compiles(tmp_path: Path) -> None:
    z, w = chain(3)
    tex = viz.to_tikz(viz.draw_side_by_side(z, w))
    assert "{node of B}" in tex
    _compile(tex, tmp_path, "legend")


@needs_dot
@needs_pdflatex
def test_figure_6_10_pdf_has_outline_fonts_where_latin_modern_is_installed(tmp_path: Path) -> None:
    """With Latin Modern installed (.ci/run installs it), no font of the PDF is a bitmap (pdfTeX lists
    each embedded font file at the end of its log: .pfb outlines, or ...pk bitmaps)."""
    found = subprocess.run(["kpsewhich", "lmodern.sty"], capture_output=True, text=True, check=False)
    if not found.stdout.strip():
        pytest.skip("Latin Modern (lmodern.sty) is not installed")
    z, w = chain(3)
    _compile(viz.to_tikz(viz.draw_side_by_side(z, w)), tmp_path, "fonts")
    log = (tmp_path / "fonts.log").read_text(encoding="utf-8", errors="replace")
    embedded = re.findall(r"<([^<>\s]+\.(?:pfb|\d+pk))>", log)
    assert embedded and all(name.endswith(".pfb") for name in embedded), embedded


# --- labels in other alphabets: UTF-8 through, Greek as math, checked by compiling ------------------------


def test_non_ascii_labels_pass_through_or_are_mapped_not_lost() -> None:
    assert escape_latex("naïve α→β") == r"naïve $\alpha$$\rightarrow$$\beta$"
    assert escape_latex("ça, Ünter, ß, ł, Ω, Α, ο") == r"ça, Ünter, ß, ł, $\Omega$, A, o"
    assert escape_latex("x…") == r"x\ldots{}"  # Graphviz's and viz's ellipsis of a cut label
    assert escape_latex("λ") == r"$\lambda$"  # Unicode's name is LAMDA


_ALPHABET = (
    "abcXYZ019 _&%$#{}~^\\<>|"
    + "".join(chr(c) for c in range(0xC0, 0x180) if chr(c).isalpha())
    + "".join(chr(c) for c in range(0x391, 0x3CA) if chr(c).isalpha())
    + "∂×′−÷σ√²·≠≥≤→—–…中\u2028\x07"
)


@needs_dot
@needs_pdflatex
def test_random_labels_in_many_alphabets_compile(tmp_path: Path) -> None:
    import random

    rng = random.Random(2026)
    random_labels = ["".join(rng.choice(_ALPHABET) for _ in range(12)) for _ in range(12)]
    labels = ["naïve α→β", "a\u2028b", *random_labels]
    leaves = [Value(0.5 + k, label=text) for k, text in enumerate(labels)]
    z = leaves[0]
    for v in leaves[1:]:
        z = z + v
    tex = viz.to_tikz(viz.draw(z, max_nodes=100))
    assert "naïve $\\alpha$$\\rightarrow$$\\beta$" in tex
    assert "a\\textbackslash{}u2028b" in tex  # U+2028 is shown as in the SVG drawing: visibly, as \u2028
    for text in labels[2:]:
        kept = [ch for ch in text if "\u00c0" <= ch <= "\u017f" and ch.isalpha() and ch not in "ĦħĸĿŀŉŦŧſ"]
        assert all(ch in tex for ch in kept)  # accented Latin letters are in the source as UTF-8
    _compile(tex, tmp_path, "alphabets")
