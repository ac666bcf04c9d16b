"""The built site (``micrograph site``) served on localhost and opened in chromium, offline.

What the site's benchmark (``benchmarks/site.py``) and its screenshot (``docs/screenshots.py``) both do, and
what ``tests/test_site.py``'s fixtures do: serve a built site with :func:`lessons.publish.site.server` in a
thread, and open it in fresh browser contexts in which every request that leaves the server is blocked and
recorded, so a page that needs a file from elsewhere shows it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lessons.publish import site

READY_MS = 120_000
"""Milliseconds a load may take before it fails (the page loads Python; a busy machine is slow)."""

WATCH = """() => {
  window.longTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.longTasks.push([e.startTime, e.duration]);
  }).observe({ type: "longtask", buffered: true });
  return performance.now();
}"""
"""Records every long task of the page's thread (those before it from the browser's buffer, the boot's)
in ``window.longTasks`` as [start, duration] in ms; returns the page's clock now."""

REFUSALS = """addEventListener("securitypolicyviolation", (e) => {
  console.error(`Content-Security-Policy refused ${e.blockedURI || "an inline script or style"}` +
                ` (${e.effectiveDirective}) in ${e.documentURI}`);
});"""
"""Run in every document a page loads from an address (the page, its frames): each
``securitypolicyviolation`` event said on the console, where :class:`OfflinePages` records it."""


@contextmanager
def served(directory: str | Path) -> Iterator[str]:
    """Serve the built site in ``directory`` on 127.0.0.1 (a free port) during the block; yields its URL."""
    httpd = site.server(directory)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


class OfflinePages:
    """Fresh browser contexts on the site at ``url``, each request off that server blocked and recorded.

    Args:
        browser: a Playwright browser (``tests/conftest.py: launch_chromium``).
        url: the served site's address, as :func:`served` yields it.

    Attributes:
        blocked: every URL a page asked for off the server (aborted).
        errors: every uncaught script error of a page.
        refusals: every Content-Security-Policy violation in a page or its frames: the browser's console
            message, and the ``securitypolicyviolation`` event of each document loaded from an address
            (:data:`REFUSALS`).
        wheel_fetches: how often micrograph's wheel was fetched in the latest context: once by the page's
            Python worker (python.js), once by each Web Worker it starts for an exercise check (the
            worker's last step before it answers).
    """

    def __init__(self, browser: Any, url: str) -> None:
        self.browser = browser
        self.url = url
        self.blocked: list[str] = []
        self.errors: list[str] = []
        self.refusals: list[str] = []
        self.wheel_fetches = 0

    def _route(self, route: Any) -> None:
        if route.request.url.startswith(self.url):
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()

    def _console(self, message: Any) -> None:
        if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text:
            self.refusals.append(message.text)

    def _finished(self, request: Any) -> None:
        if "/wheels/micrograph-" in request.url:
            self.wheel_fetches += 1

    def open(
        self,
        query: str = "",
        viewport: tuple[int, int] = (1280, 800),
        early: Callable[[Any], None] | None = None,
    ) -> tuple[Any, Any, float]:
        """Open the page (``query``: e.g. ``"?lesson=2"``) in a new context (empty cache) and wait until it is
        interactive (``body[data-ready=true]``); ``early(page)``, if given, acts on the page once its script
        has started and before the wait (a reader who does not wait for the page to be ready).

        Returns:
            (the context, the page, seconds from ``goto`` to interactive); close the context when done.

        Raises:
            playwright's TimeoutError: not interactive within :data:`READY_MS`.
        """
        context = self.browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
        context.route("**/*", self._route)
        context.on("requestfinished", self._finished)
        context.on("console", self._console)
        context.add_init_script(REFUSALS)
        page = context.new_page()
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.wheel_fetches = 0
        start = time.perf_counter()
        page.goto(self.url + query)
        if early is not None:
            page.wait_for_function("'micrographTimes' in window")  # app.js has started
            early(page)
        page.wait_for_selector("body[data-ready=true]", timeout=READY_MS)
        return context, page, time.perf_counter() - start

    def workers_started(self, page: Any, workers: int, timeout: float = 120.0) -> None:
        """Wait until ``workers`` exercise workers have fetched micrograph's wheel (then each unpacks it and
        defines two functions), and half a second more; at most ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while self.wheel_fetches < 1 + workers and time.monotonic() < deadline:
            page.wait_for_timeout(100)  # Playwright delivers its events while it waits
        page.wait_for_timeout(500)
