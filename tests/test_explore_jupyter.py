"""viz.explore as a widget in a real, headless JupyterLab (from PyPI) driven by Playwright and chromium.

Starts a JupyterLab server on a free local port with a notebook that displays the explorer, runs the cell,
waits for the widget to draw, moves the slider of x, and checks that the drawing changed to the engine's
numbers, computed in the page with no round trip to the kernel.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 and 6.5.6.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CHROMIUM_AND_DOT

from micrograph import Graph, Value
from viz.words import fmt

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    *CHROMIUM_AND_DOT,
    pytest.mark.slow,
]
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
pytest.importorskip("jupyterlab", reason="jupyterlab is not installed (the dev extra)")
pytest.importorskip("anywidget", reason="anywidget is not installed (the dev extra)")
nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed (the dev extra)")

CELL = """import viz
from micrograph import Value
x = Value(0.5, label="x")
z = (x * x + x.exp()).tanh()
viz.explore(z)"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("lab")
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(CELL))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, root / "explore.ipynb")
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JUPYTER_CONFIG_DIR": str(root / ".config"),
           "JUPYTER_DATA_DIR": str(root / ".data"),
           "JUPYTER_RUNTIME_DIR": str(root / ".runtime")}  # fmt: skip
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
         "--LabApp.news_url=", "--ServerApp.allow_root=True"],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=(root / "server.log").open("wb"),
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail("JupyterLab did not start: " + (root / "server.log").read_text()[-2000:])
                time.sleep(0.5)
        yield f"{base}/lab/tree/explore.ipynb?token={token}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


def test_the_widget_redraws_when_the_slider_moves(lab: str, launch_chromium: Any) -> None:
    x = Value(0.5, label="x")
    z = (x * x + x.exp()).tanh()
    g = Graph(z)
    with sync_api.sync_playwright() as p:
        browser = launch_chromium(p)
        page: Any = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(lab)
        page.wait_for_selector(".jp-Notebook .jp-Cell .cm-content", timeout=90_000)
        page.get_by_text("| Idle").first.wait_for(timeout=90_000)  # the kernel has started
        page.click(".jp-Notebook .jp-Cell .cm-content")
        page.keyboard.press("Shift+Enter")
        page.wait_for_selector(".mg-explorer g[data-node] text.mg-data", state="attached", timeout=120_000)
        before = page.eval_on_selector_all(".mg-explorer text.mg-data", "ts => ts.map(t => t.textContent)")
        at = page.evaluate(
            """() => { const s = document.querySelector(".mg-explorer input.mg-slider");
            s.value = "-1.2"; s.dispatchEvent(new Event("input", {bubbles: true}));
            return parseFloat(s.value); }"""
        )
        after = page.eval_on_selector_all(".mg-explorer text.mg-data", "ts => ts.map(t => t.textContent)")
        drawn = page.eval_on_selector_all(
            ".mg-explorer g[data-node] text.mg-data",
            "ts => ts.map(t => [+t.parentNode.getAttribute('data-node'), t.textContent])",
        )
        shown = page.text_content(".mg-explorer output.mg-grad-of")
        browser.close()
    assert before != after
    g.forward({x: at})
    table = g.backprop()
    assert dict(drawn) == {i: f"data {fmt(v.data)}" for i, v in enumerate(g.nodes)}
    assert shown == fmt(table[x])
