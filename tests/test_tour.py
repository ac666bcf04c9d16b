"""The tour: every lesson run, every diagram (SVG) and plot (PNG) written, an index.html linking them all."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

import lessons
from lessons.publish import tour


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.images: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "a" and a.get("href"):
            self.links.append(a["href"] or "")
        if tag == "img" and a.get("src"):
            self.images.append(a["src"] or "")


pytestmark = pytest.mark.slow  # runs every lesson: the tour


def _links(page: Path) -> _Links:
    p = _Links()
    p.feed(page.read_text(encoding="utf-8"))
    return p


@pytest.fixture(scope="module")
def toured(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tour.TourResult]:
    import lessons.l5_mlp as l5

    saved = l5.EPOCHS
    l5.EPOCHS = 3  # the tour's code path, with a short training run
    try:
        out = tmp_path_factory.mktemp("tour")
        result = tour.run(out, progress=False)
    finally:
        l5.EPOCHS = saved
    return out, result


def test_every_lesson_and_step_ran(toured):
    out, result = toured
    assert result.lessons == len(lessons.LESSONS)
    shown = 0
    for n in lessons.LESSONS:
        page = (out / f"lesson{n}" / tour.INDEX).read_text(encoding="utf-8")
        count = page.count("<div class='step'")
        assert count >= 3
        shown += count
    assert shown == result.steps
    assert len(lessons.start(1)) == (out / "lesson1" / tour.INDEX).read_text().count("<div class='step'")


def test_every_file_written_is_linked_from_the_index(toured):
    out, result = toured
    index = out / tour.INDEX
    linked = set(_links(index).links)
    for f in result.files:
        rel = f.relative_to(out).as_posix()
        if rel == tour.INDEX:
            continue
        assert rel in linked, rel
    for href in linked:
        assert (out / href).exists(), href


def test_each_link_has_one_line_of_explanation(toured):
    out, _ = toured
    html = (out / tour.INDEX).read_text(encoding="utf-8")
    items = re.findall(r"<li>(.*?)</li>", html)
    assert items
    for item in items:
        text = re.sub(r"<[^>]+>", "", item)
        assert ": " in text and len(text.split(": ", 1)[1]) > 10, item


def test_diagrams_are_svg_and_plots_are_png(toured):
    _, result = toured
    svgs = [f for f in result.files if f.suffix == ".svg"]
    pngs = [f for f in result.files if f.suffix == ".png"]
    assert len(svgs) >= 20 and len(pngs) >= 3
    for f in svgs:
        assert ET.parse(f).getroot().tag.endswith("svg")
    for f in pngs:
        assert f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the blowup, memory and training plots
    assert any(f.parent.name == "lesson3" for f in pngs)
    assert any(f.parent.name == "lesson4" for f in pngs)
    assert any(f.parent.name == "lesson5" for f in pngs)


def test_step_through_pages_are_written_and_self_contained(toured):
    out, _ = toured
    pages = sorted(out.glob("steps_*.html"))
    assert len(pages) == 4  # lessons 1, 2, figure 6.10 (Algorithms 6.1/6.2), figure 6.10 (Algorithm 6.6)
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "<svg" in text
        assert not re.search(r"(src|href)=[\"']https?://", text)  # no network needed


def test_lesson_pages_show_text_code_and_images(toured):
    out, _ = toured
    page = out / "lesson2" / tour.INDEX
    html = page.read_text(encoding="utf-8")
    assert "Code that ran" in html and "grad_table" in html
    assert "micrograph/backprop.py, lines" in html and "total += term" in html  # the engine's own lines
    for src in _links(page).images:
        assert (page.parent / src).exists()


def test_readme_keeps_the_make_commands_and_its_example_runs():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text(encoding="utf-8")
    assert "make demo" in readme and "make test" in readme
    assert "\ndemo:" in makefile and "\ntest:" in makefile and "tour --out" in makefile
    assert "docs/fig_6_10.svg" in readme
    assert (Path(__file__).resolve().parents[1] / "docs" / "fig_6_10.svg").exists()
    performance = readme.split("## Performance", 1)[1]
    assert "(docs/performance.md)" in performance and "micrograph compiled |" in performance
    assert "| target " in performance and " met |" in performance  # make bench's targets table
    example = readme.split("## Ten lines", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    assert 8 <= len(example.strip().splitlines()) <= 12
    namespace: dict[str, object] = {}
    exec(compile(example.replace("print(", "_ = ("), "README.md", "exec"), namespace)  # the README's own code
    w, d2z = namespace["w"], namespace["d2z"]
    assert abs(w.grad - 0.5339122920544043) < 1e-12  # type: ignore[attr-defined]
    assert d2z.data != 0.0  # type: ignore[attr-defined]
    for n in lessons.LESSONS:
        assert f"| {n} | " in readme


def test_figure_6_10_for_slides_tex_pdf_and_gif(toured):
    """The tour writes figure 6.10 as TikZ, its PDF (where pdflatex is), and the GIF (the slides extra)."""
    import shutil

    out, _ = toured
    tex = (out / "fig_6_10.tex").read_text(encoding="utf-8")
    assert "\\begin{tikzpicture}" in tex and r"$\partial$z/$\partial$w" in tex
    if shutil.which("pdflatex"):
        assert (out / "fig_6_10.pdf").read_bytes().startswith(b"%PDF")
    try:
        import imageio.v3 as iio
    except ModuleNotFoundError:
        return
    frames = iio.imread(out / "fig_6_10_backprop.gif", index=None)
    assert frames.shape[0] == 10  # Algorithms 6.1 and 6.2 on z = f(f(f(w))): 5 + 5 steps


def test_the_tour_writes_every_lesson_as_a_notebook(toured):
    pytest.importorskip("nbformat", reason="the notebook extra: pip install 'micrograph[notebook]'")
    out, _ = toured
    written = sorted(p.name for p in (out / "notebooks").glob("*.ipynb"))
    assert written == sorted(f"lesson{n}.ipynb" for n in lessons.LESSONS)
    index = (out / "index.html").read_text(encoding="utf-8")
    assert all(f"notebooks/{name}" in index for name in written)
