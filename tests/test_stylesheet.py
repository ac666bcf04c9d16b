"""The pages' one stylesheet: every colour written once, in viz.style, and every page's rules from
viz/static/micrograph.css.

The step pages, the tour's pages, the lessons' pictures, the explorer and the site's page each take one
section of micrograph.css, after viz.style.PAGE's colours as CSS custom properties (--mg-NAME). No CSS,
JavaScript or HTML file of ours writes a colour itself; in chromium, each page shows viz.style's colours.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import importlib
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from matplotlib.colors import CSS4_COLORS, to_rgb

import viz
from lessons.publish import site
from micrograph import Value
from viz import style

ROOT = Path(__file__).resolve().parents[1]
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")

HEX = re.compile(r"(?<![&\w])#(?:[0-9a-fA-F]{8}|[0-9a-fA-F]{6}|[0-9a-fA-F]{3,4})\b")
"""A colour written in hexadecimal (an HTML entity such as ``&#8592;`` is not one)."""
FUNCTION = re.compile(r"\b(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch|color)\(", re.I)
"""A colour written as a CSS function."""
COMMENT = re.compile(r"/\*.*?\*/", re.S)
QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")


def colours_written(text: str, css: bool) -> list[str]:
    """The colours ``text`` writes: hexadecimal and functional everywhere; in CSS (``css``), also a named
    colour (CSS's own names, as matplotlib lists them) in a declaration, and no hexadecimal in selectors
    (``#editor`` is an id)."""
    if not css:
        return HEX.findall(text) + FUNCTION.findall(text)
    text = COMMENT.sub("", text)
    found = FUNCTION.findall(text)
    for block in re.findall(r"\{([^{}]*)\}", text):  # the declarations, inside @media too
        found += HEX.findall(block)
        words = re.findall(r"[A-Za-z][\w-]*", QUOTED.sub("", block))  # white-space is no colour
        found += [w for w in words if w.lower() in CSS4_COLORS]
    return found


def our_files() -> list[Path]:
    """Every CSS, JavaScript and HTML file of ours that a page loads or inlines (not the vendored bundles)."""
    found = [*(ROOT / "viz" / "static").rglob("*.css"), *(ROOT / "viz" / "static" / "explorer").glob("*.js")]
    for pattern in ("*.css", "*.js", "*.html"):
        found += (ROOT / "site" / "src").glob(pattern)
    return sorted(found)


def test_the_colour_finder_finds_each_way_of_writing_one() -> None:
    css = '#editor { color: #2a2; border: 1px solid Gray; background: rgb(1, 2, 3); font-family: "Tan" }'
    assert colours_written(css, css=True) == ["rgb(", "#2a2", "Gray"]
    js = 'el.style.fill = "#ffe14d"; x = "&#8592;"; y = "#lesson"'
    assert colours_written(js, css=False) == ["#ffe14d"]
    assert colours_written("a { color: var(--mg-text); border: 1px solid currentColor; }", css=True) == []


def test_no_css_js_or_html_of_ours_writes_a_colour() -> None:
    files = our_files()
    assert [p.relative_to(ROOT).as_posix() for p in files if p.suffix == ".css"] == [
        "viz/static/micrograph.css"
    ]  # one stylesheet: the site's page, the explorer, the step and tour pages' rules are all in it
    assert len(files) > 15, files  # the explorer's modules and the site's page are read
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert colours_written(text, css=path.suffix == ".css") == [], path.relative_to(ROOT)


@pytest.mark.parametrize("kind", style.SECTIONS)
def test_each_kind_of_page_takes_its_section_after_viz_styles_colours(kind: str) -> None:
    css = style.stylesheet(kind)
    colours, rules = css.split("\n", 1)
    assert colours == ":root { " + "".join(f"--mg-{k}: {v}; " for k, v in style.PAGE.items()) + "}"
    assert rules == style.SECTIONS[kind] and rules.startswith(f"/* @section {kind}:")
    assert colours_written(rules, css=True) == []


def test_the_named_stylesheets_are_the_sections() -> None:
    assert list(style.SECTIONS) == ["steps", "tour", "picture", "explorer", "site"]
    assert style.HTML_CSS == style.stylesheet("steps")
    assert style.TOUR_CSS == style.stylesheet("tour")
    assert style.PICTURE_CSS == style.stylesheet("picture")
    explorer = importlib.import_module("viz.explore_page")._css()
    assert explorer == style.css_variables(".mg-explorer") + style.SECTIONS["explorer"]
    with pytest.raises(ValueError, match=r"^kind 'slides' is not a section of micrograph.css: one of steps,"):
        style.stylesheet("slides")


def test_every_colour_the_stylesheet_uses_is_viz_styles_and_every_one_is_used() -> None:
    text = COMMENT.sub("", (ROOT / "viz" / "static" / style.STYLESHEET).read_text(encoding="utf-8"))
    used = set(re.findall(r"var\(--mg-([\w-]+)", text)) - {"vh"}  # --mg-vh: a height explorer.js sets
    assert used == set(style.PAGE)
    assert re.findall(r"--mg-[\w-]+\s*:", text) == []  # no colour is set in the stylesheet itself
    assert all(re.fullmatch(r"#[0-9a-f]{6}", v) for v in style.PAGE.values()), style.PAGE


def rgb(name: str) -> str:
    """PAGE's colour ``name`` as chromium computes it."""
    r, g, b = (round(255 * c) for c in to_rgb(style.PAGE[name]))
    return f"rgb({r}, {g}, {b})"


COMPUTED = """([selector, property]) => getComputedStyle(document.querySelector(selector))[property]"""


def computed(page: Any, selector: str, prop: str) -> str:
    return str(page.evaluate(COMPUTED, [selector, prop]))


@needs_dot
def test_a_step_page_and_the_explorer_show_viz_styles_colours(browser: Any, tmp_path: Path) -> None:
    x, y = Value(1.0, label="x"), Value(2.0, label="y")
    z = x * y + x.exp()
    steps_page = viz.steps(z, tmp_path / "steps.html")
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(steps_page.resolve().as_uri())
    assert computed(page, "body", "color") == rgb("text")
    assert computed(page, ".frame.current .algo", "backgroundColor") == rgb("code")
    assert computed(page, ".frame.current .algo .line.current", "backgroundColor") == rgb("current")
    assert computed(page, ".help", "color") == rgb("aside")
    viz.explore(z).save(tmp_path / "explore.html")
    page.goto((tmp_path / "explore.html").resolve().as_uri())
    page.wait_for_selector(".mg-pane svg")
    assert computed(page, ".mg-explorer", "color") == rgb("text")
    assert computed(page, ".mg-pane-b", "backgroundColor") == rgb("pane-b")
    assert computed(page, ".mg-algo", "backgroundColor") == rgb("code")
    page.close()


@pytest.mark.slow
def test_the_site_ships_its_section_and_its_page_shows_viz_styles_colours(
    site_dir: Path, browser: Any, url: str
) -> None:
    assert "style.css" not in site.PAGE_FILES  # not copied from site/src: written from the one stylesheet
    assert (site_dir / site.STYLESHEET).read_text(encoding="utf-8") == style.stylesheet("site")
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(url)
    assert computed(page, "body", "color") == rgb("ink")
    assert computed(page, "#explorer-frame", "borderTopColor") == rgb("field")
    page.close()
