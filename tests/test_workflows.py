"""The door that is a link: the workflow that publishes the site and the documentation as static pages.

``.github/workflows/pages.yml`` follows GitHub Actions' conventions (checked against the workflow schema that
check-jsonschema ships, offline) and builds what the README promises with the README's own commands: the site
with ``make site`` at the Pages address, the documentation with ``make docs`` under ``docs/``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"


def _problems(text: str) -> list[str]:
    """What GitHub Actions' workflow schema (check-jsonschema ships it, offline) finds wrong in ``text``."""
    import jsonschema
    from check_jsonschema import builtin_schemas

    vendored = Path(builtin_schemas.__file__).parent / "vendor" / "github-workflows.json"
    schema = json.loads(vendored.read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema)
    flow = yaml.safe_load(text)
    if isinstance(flow, dict) and True in flow:  # YAML 1.1 reads the key `on` as true; GitHub reads "on"
        flow["on"] = flow.pop(True)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(flow)]


def test_the_linter_can_fail() -> None:
    broken = WORKFLOW.read_text(encoding="utf-8").replace("runs-on:", "run-on:")
    assert _problems(broken)


def test_it_builds_and_publishes_what_the_readme_promises() -> None:
    flow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    trigger = flow.get("on", flow.get(True))  # YAML 1.1 reads the key `on` as true
    assert trigger["push"]["branches"] == ["main"]
    assert flow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    build = flow["jobs"]["build"]["steps"]
    commands = [s.get("run", "") for s in build]
    assert "make site" in commands and "make docs" in commands
    publish = next(c for c in commands if "public" in c)
    assert "cp -R site-out/. public/" in publish and "cp -R docs/_build/html public/docs" in publish
    assert (
        build[-1]["uses"].startswith("actions/upload-pages-artifact@")
        and build[-1]["with"]["path"] == "public"
    )
    deploy = flow["jobs"]["deploy"]
    assert deploy["needs"] == "build" and deploy["steps"][0]["uses"].startswith("actions/deploy-pages@")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert ".github/workflows/pages.yml" in readme
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "\nsite:" in make and "\ndocs:" in make and "SITE ?= site-out" in make


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / ".github" / "workflows").glob("*.yml")))
def test_every_workflow_follows_github_actions_conventions(name: str) -> None:
    text = (ROOT / ".github" / "workflows" / name).read_text(encoding="utf-8")
    assert not _problems(text)
