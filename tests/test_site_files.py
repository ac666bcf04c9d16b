"""A site that lacks a file its page loads: the build refuses to write it, ``--serve`` refuses to serve it,
and a page whose scripts cannot load says so on screen instead of "Loading Python…" for ever.

The reading of what a page loads (``lessons.publish.site_files``) runs on small hand-written sites (fast); the
build, and the page in Debian's chromium, on a site built by ``micrograph site`` (slow: npm and pip).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from site_browser import served
from site_page import build_or_skip

from lessons import cli
from lessons.publish import site
from lessons.publish.site_files import Missing, missing_files
from lessons.publish.swap import SITE

PAGE = """<!doctype html><html><head>
<link rel="stylesheet" href="style.css"><link rel="icon" href="data:,">
<script src="loading.js"></script><script type="module" src="app.js"></script>
</head><body><a href="licenses/index.txt">licenses</a><a href="https://example.org/">off the site</a>
</body></html>
"""
APP = """import { Editor } from "./vendor.js";
import{loadPyodide}from"./pyodide/pyodide.mjs";
export { draw } from './charts.js';
const manifest = await (await fetch("manifest.json")).json();
for (const name of manifest.wheels) await fetch("wheels/" + name);
const worker = new Worker("worker.js", { type: "module" });
import("node:fs");  // a bare name: not a file of the site
"""
FILES = {
    "index.html": PAGE,
    "style.css": "body { background: url('paper.png') }",
    "paper.png": "",
    "loading.js": "",
    "app.js": APP,
    "vendor.js": "export const Editor = 1;",
    "charts.js": "export function draw() {}",
    "worker.js": 'import { loadPyodide } from "./pyodide/pyodide.mjs";',
    "pyodide/pyodide.mjs": 'let t=`${e.indexURL}pyodide.asm.mjs`;e.indexURL+"python_stdlib.zip"',
    "pyodide/pyodide.asm.mjs": '_(e+"pyodide.asm.wasm")',
    "pyodide/pyodide.asm.wasm": "",
    "pyodide/python_stdlib.zip": "",
    "manifest.json": json.dumps({"micrograph": "micrograph-0.1.0-py3-none-any.whl", "wheels": ["tqdm.whl"]}),
    "wheels/micrograph-0.1.0-py3-none-any.whl": "",
    "wheels/tqdm.whl": "",
    "licenses/index.txt": "",
}


def _site(tmp_path: Path, without: str = "") -> Path:
    for name, text in FILES.items():
        if name != without:
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(text)
    return tmp_path


def test_a_complete_site_lacks_nothing(tmp_path: Path) -> None:
    assert missing_files(_site(tmp_path)) == []


@pytest.mark.parametrize(
    "without, by, how",
    [
        ("index.html", "the site", "serves"),
        ("loading.js", "index.html", "loads as a script"),
        ("app.js", "index.html", "loads as a script"),
        ("style.css", "index.html", "links"),
        ("paper.png", "style.css", "uses"),
        ("licenses/index.txt", "index.html", "links"),
        ("vendor.js", "app.js", "imports"),
        ("pyodide/pyodide.mjs", "app.js", "imports"),
        ("charts.js", "app.js", "imports"),
        ("manifest.json", "app.js", "fetches"),
        ("worker.js", "app.js", "starts as a worker"),
        ("pyodide/pyodide.asm.mjs", "pyodide/pyodide.mjs", "names"),
        ("pyodide/python_stdlib.zip", "pyodide/pyodide.mjs", "names"),
        ("pyodide/pyodide.asm.wasm", "pyodide/pyodide.asm.mjs", "names"),
        ("wheels/micrograph-0.1.0-py3-none-any.whl", "manifest.json", "names"),
        ("wheels/tqdm.whl", "manifest.json", "names"),
    ],
)
def test_each_kind_of_reference_names_the_file_it_lacks(
    tmp_path: Path, without: str, by: str, how: str
) -> None:
    assert missing_files(_site(tmp_path, without)) == [Missing(without, by, how)]


def test_serve_refuses_a_site_that_lacks_a_file(tmp_path: Path) -> None:
    _site(tmp_path, without="vendor.js")
    (tmp_path / SITE.marker).write_text("")
    with pytest.raises(site.SiteError) as caught:
        site.serve(tmp_path)
    assert str(caught.value) == (
        f"{tmp_path} lacks vendor.js (app.js imports it): "
        f"build it again with  micrograph site --out {tmp_path} --force"
    )


@pytest.mark.slow
def test_a_relative_out_gets_every_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """esbuild runs in the npm cache: a relative --out once put vendor.js there, not in the site."""
    monkeypatch.chdir(tmp_path)
    build_or_skip(Path("site-out"))
    assert (tmp_path / "site-out" / "vendor.js").stat().st_size > 100_000
    assert missing_files(tmp_path / "site-out") == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site-out"]  # nothing left beside it


@pytest.mark.slow
def test_a_build_that_lacks_a_file_exits_2_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if shutil.which("npm") is None and not os.environ.get("CI"):
        pytest.skip("npm is not installed")
    monkeypatch.setattr(site, "PAGE_FILES", tuple(n for n in site.PAGE_FILES if n != "charts.js"))
    monkeypatch.chdir(tmp_path)
    status = cli.main(["site", "--out", "site-out"])
    err = capsys.readouterr().err
    assert status == 2
    *progress, last = err.splitlines()  # the build's progress lines (pip, npm), then the one error
    assert last == (
        "micrograph: error: the site built for site-out lacks charts.js (app.js imports it); "
        "site-out was not written"
    )
    assert not any("error" in line or "Traceback" in line for line in progress)
    assert list(tmp_path.iterdir()) == []


# --- the page in chromium when its scripts cannot load ----------------------------------------------------


@pytest.fixture
def broken(site_dir: Path, tmp_path: Path) -> Path:
    """A copy of the built site, to break."""
    copy = tmp_path / "site"
    shutil.copytree(site_dir, copy)
    return copy


@contextmanager
def _status(browser: Any, directory: Path, hold: str = "", wait_seconds: float = 0) -> Iterator[str]:
    """The page's status line once the page says it failed (``hold``: a file whose request never gets an
    answer; ``wait_seconds``: the page's clock is moved on that far after it loads)."""
    with served(directory) as url:
        context = browser.new_context()
        if hold:
            context.route(f"**/{hold}", lambda route: None)  # never answered
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        if wait_seconds:
            page.clock.install()
        page.goto(url, wait_until="commit")  # a module graph still loading holds back DOMContentLoaded
        page.wait_for_selector("#status", state="attached")  # loading.js has run: it is above the status
        if wait_seconds:
            page.clock.fast_forward(int(wait_seconds * 1000))
        page.wait_for_selector("html[data-load-failed=true]", timeout=30_000)
        try:
            yield str(page.locator("#status").text_content())
            assert page.locator("body[data-ready=true]").count() == 0
        finally:
            context.close()


@pytest.mark.slow
def test_a_missing_module_is_named_on_the_page(browser: Any, broken: Path) -> None:
    (broken / "vendor.js").unlink()
    with _status(browser, broken) as status:
        assert status == (
            "micrograph could not load vendor.js (HTTP 404): the page cannot start without it; reload the "
            "page, or build the site again (micrograph site --out DIR --force)."
        )


@pytest.mark.slow
def test_an_import_that_names_nothing_is_named_on_the_page(browser: Any, broken: Path) -> None:
    (broken / "vendor.js").write_text("export const Plot = {};\n")  # EditorView and the others are missing
    with _status(browser, broken) as status:
        assert status.startswith("micrograph could not load app.js: SyntaxError: The requested module")
        assert "does not provide an export named" in status


@pytest.mark.slow
def test_scripts_that_never_arrive_are_named_after_a_minute(browser: Any, site_dir: Path) -> None:
    with _status(browser, site_dir, hold="vendor.js", wait_seconds=61) as status:
        assert status == (
            "micrograph could not load app.js and the files it imports in 60 s: reload the page (a slow "
            "connection takes longer; the page goes on loading meanwhile)."
        )


def test_the_page_loads_its_failure_script_first() -> None:
    """loading.js must be a plain script (it runs before the module script and while it fails), from a
    file (a content-security policy of script-src 'self' admits it), and shipped."""
    page = (site.SOURCE / "src" / "index.html").read_text()
    assert page.index('<script src="loading.js"></script>') < page.index(
        '<script type="module" src="app.js">'
    )
    assert "<script>" not in page
    assert "loading.js" in site.PAGE_FILES
