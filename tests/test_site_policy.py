"""The site's Content-Security-Policy (``micrograph site``): the page admits its own files only, and nothing
the page does (a lesson's picture, an exercise checked, the explorer drawn and moved) is refused by it.

The built pages carry the policies :mod:`viz.page` writes: the page's (scripts, workers, fetches and frames
of the site only; no inline script, no ``eval``), and the explorer's frame's, which leaves the explorer's page
its own policy (its one script admitted by its digest). In Debian's chromium every refusal is heard: the
browser's console message and each document's ``securitypolicyviolation`` event (tests/site_browser.py); the
shared page's fixture fails any site test during which one happened (tests/site_page.py).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import pytest
from exercise_solutions import CORRECT
from site_page import SharedPage, expect, type_solution

from lessons.publish import site
from lessons.publish.web import explorer_html
from viz.page import frame_policy, site_policy

FIRST_IN_HEAD = re.compile(r'<head>\n<meta http-equiv="Content-Security-Policy" content="([^"]*)">\n')
"""A page's policy, the first element of its ``<head>`` (it applies only to what follows it)."""


def _directives(policy: str) -> dict[str, list[str]]:
    return {name: values for name, *values in (d.split() for d in policy.split(";"))}


def _staged_policy(site_dir: Path, name: str) -> dict[str, list[str]]:
    page = (site_dir / name).read_text(encoding="utf-8")
    found = FIRST_IN_HEAD.search(page)
    assert found is not None and page.count('http-equiv="Content-Security-Policy"') == 1, name
    assert found.group(1) == (site_policy() if name == "index.html" else frame_policy())
    return _directives(found.group(1))


@pytest.mark.slow
def test_the_built_pages_carry_the_policies_viz_writes(site_dir: Path) -> None:
    page = _staged_policy(site_dir, "index.html")
    assert page["default-src"] == ["'none'"]
    for directive in ("script-src", "worker-src", "connect-src", "frame-src"):
        assert page[directive] == ["'self'"], directive  # no inline script, no eval, nothing from elsewhere
    assert page["img-src"] == ["data:"]
    assert page["object-src"] == page["base-uri"] == page["form-action"] == ["'none'"]
    everything = " ".join(v for values in page.values() for v in values)
    assert "*" not in everything and "eval" not in everything and "http" not in everything
    frame = _staged_policy(site_dir, "explorer.html")
    assert frame["default-src"] == ["'none'"] and frame["script-src"] == ["'unsafe-inline'"]
    # ... enforced with the policy of the explorer's page written into that frame: its one script runs
    explorer = explorer_html("tanh(tanh(tanh(w)))", "w=0.5")
    (script,) = re.findall(r"<script>(.*?)</script>", explorer, re.S)
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', explorer)
    assert policy is not None and _directives(policy.group(1))["default-src"] == ["'none'"]
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    assert _directives(policy.group(1))["script-src"] == [f"'sha256-{digest}'"]


def test_a_page_is_given_one_policy() -> None:
    source = (site.SOURCE / "src" / "index.html").read_text(encoding="utf-8")
    staged = site.with_policy(source, site.page_policy("index.html"), "index.html")
    assert FIRST_IN_HEAD.search(staged) is not None
    for page in (staged, source.replace("<head>\n", "<head>")):
        with pytest.raises(site.SiteError) as refused:
            site.with_policy(page, site.page_policy("index.html"), "index.html")
        assert str(refused.value) == (
            "site/src/index.html needs one '<head>' line and no policy of its own: the build adds it"
        )


@pytest.mark.slow
def test_the_policy_refuses_nothing_the_page_does(shared_page: SharedPage) -> None:
    pages = shared_page.pages
    start = len(pages.refusals), len(pages.errors), len(pages.blocked)
    shared_page.open()  # loaded in this test: what the page does as it loads is heard too
    page = shared_page.page

    page.get_by_label("Lesson", exact=True).select_option("2")  # a lesson's drawing
    page.get_by_role("button", name="Start lesson").click()
    for _ in range(3):
        page.get_by_role("button", name="Next step").click()
    page.locator("#lesson-picture svg g.node").first.wait_for()

    type_solution(page, CORRECT["backprop"])  # an exercise checked: its own worker, the judge's drawing
    page.get_by_role("button", name="Check").click()
    page.wait_for_function(
        "() => /PASS|FAIL|could not/.test(document.getElementById('check-status').textContent)",
        timeout=120_000,
    )
    status, report = (str(page.locator(s).text_content()) for s in ("#check-status", "#report"))
    assert status.startswith("PASS"), report  # a correct solution: the report says why if it is not

    page.get_by_role("button", name="Explorer").click()  # G and B drawn by the explorer's own script
    page.get_by_role("button", name="Draw G and B").click()
    frame = page.frame_locator("#explorer-frame")
    frame.locator("g[data-node]").first.wait_for(timeout=60_000)
    assert frame.locator("g[data-node]").count() == 4 and frame.locator("g[data-bnode]").count() > 0
    page.wait_for_function("() => document.getElementById('explorer-frame').style.height !== ''")
    grad = frame.locator("output.mg-grad-of")
    expect(grad).to_have_text("0.5339")  # dtanh(tanh(tanh(w)))/dw at w = 0.5, as the explorer writes it
    frame.get_by_role("slider", name="value of u1 (w)").fill("-1.3")  # its script runs the program again
    expect(grad).not_to_have_text("0.5339")
    assert (pages.refusals[start[0] :], pages.errors[start[1] :], pages.blocked[start[2] :]) == ([], [], [])

    # and a refusal would be heard: an inline script added to the page does not run, and the browser says why
    with page.expect_console_message(lambda m: "Content Security Policy" in m.text):
        page.evaluate("() => { const s = document.createElement('script'); s.textContent = 'window.ran = 1'; "
                      "document.body.append(s); }")  # fmt: skip
    assert page.evaluate("() => window.ran") is None
    assert "script-src 'self'" in pages.refusals[start[0]]
    shared_page.failed = True  # the next test loads the page afresh
