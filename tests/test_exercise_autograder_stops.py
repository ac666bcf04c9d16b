"""The grading script's own edges, run as the platform runs it: a submission's folder as its working directory
must not put a package in micrograph's place, and a script the platform stops (SIGTERM) stops the check and
the student's code with it, leaving no process behind."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_exercise_course import gradescope_layout, private_site, run_script, script_env
from test_exercise_platforms import OVERWRITE_BACKPROP

__all__ = ["private_site"]  # the session's fixture, shared with test_exercise_course

PLANTED = 'print(\'{"score": 1000.0, "tests": [], "output": "planted"}\')\n'
"""A ``micrograph/__main__.py`` a submission's folder holds: the results a forged checker would print."""


@pytest.mark.slow
def test_a_package_in_the_submission_s_folder_is_not_the_checker(tmp_path: Path, private_site: Path) -> None:
    root = gradescope_layout(tmp_path)
    submission = root / "submission"
    (submission / "backprop.py").write_text(OVERWRITE_BACKPROP)
    (submission / "micrograph").mkdir()
    (submission / "micrograph" / "__init__.py").write_text("")
    (submission / "micrograph" / "__main__.py").write_text(PLANTED)
    done = run_script(root / "source" / "run_autograder", root, private_site, cwd=submission)
    assert done.returncode == 0, done.stderr
    out = json.loads((root / "results" / "results.json").read_text())
    assert out["output"] != "planted" and out["extra_data"]["mistake"] == "overwrite"
    assert 0 < out["score"] < sum(t["max_score"] for t in out["tests"])


def _children() -> dict[int, list[int]]:
    """{pid: its children's pids} of every process now."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # ended meanwhile
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    return children


def _descendants(pid: int) -> set[int]:
    children, found, todo = _children(), set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _alive(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the processes from /proc")
def test_sigterm_to_the_script_stops_the_check_and_the_student_s_code(
    tmp_path: Path, private_site: Path
) -> None:
    root = gradescope_layout(tmp_path)
    (root / "submission" / "backprop.py").write_text("def backprop(G):\n    while True:\n        pass\n")
    script = subprocess.Popen(
        [str(root / "source" / "run_autograder")],
        env=script_env(root, private_site),
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        started = time.monotonic()
        while len(tree := _descendants(script.pid)) < 2:  # the check, and the solution's interpreter
            assert script.poll() is None and time.monotonic() - started < 60, "the check did not start"
            time.sleep(0.1)
        time.sleep(1.0)  # the solution's loop running
        tree = _descendants(script.pid)
        script.send_signal(signal.SIGTERM)
        script.communicate(timeout=60)
    finally:
        if script.poll() is None:
            script.kill()
            script.communicate()
    assert script.returncode == 128 + signal.SIGTERM
    left = [pid for pid in tree if _alive(pid)]
    assert left == [], f"still running after the script ended: {left}"
    assert not (root / "results" / "results.json").exists()
