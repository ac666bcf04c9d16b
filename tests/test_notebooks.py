"""The lessons as notebooks: generated from the lesson modules, executed by a real Jupyter kernel.

Each notebook is executed in a Jupyter kernel when the documentation site is built (MyST-NB, with nbclient
and ipykernel); any error, any output on stderr (a warning, such as tqdm's "IProgress not found" when
ipywidgets is missing) fails that build, and the tests read the notebooks it executed. The notebook's text
and code are the lesson's own (``Stepper.text``, ``Step.code``), and its executed pictures are the lesson's
pictures.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import lessons
from lessons.stepper import Stepper

nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed (the dev extra)")

from lessons.publish.notebooks import notebook, write_notebooks  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXECUTED = ROOT / "docs" / "_build" / "jupyter_execute" / "_generated" / "lessons"
"""Where the documentation site's build (``make docs``) keeps the lesson notebooks it executed."""
pytestmark = pytest.mark.slow


def _pictures(nb: object) -> int:
    return sum(
        1
        for c in nb.cells  # type: ignore[attr-defined]
        for o in c.get("outputs", [])
        if o.output_type in ("display_data", "execute_result") and "image/svg+xml" in o.get("data", {})
    )


@pytest.mark.parametrize("n", sorted(lessons.LESSONS))
def test_each_lesson_notebook_ran_in_a_kernel_without_errors_or_warnings(n: int) -> None:
    """The notebook holds the lesson's steps, and the documentation site's build executed it in a Jupyter
    kernel (MyST-NB, docs/conf.py: an error or any output on stderr fails that build) with the pictures
    the lesson shows. The executed copy is the build's, read here rather than executed a second time."""
    nb = notebook(n)
    nbformat.validate(nb)
    stepper = Stepper(lessons.LESSONS[n])
    markdown = [c.source for c in nb.cells if c.cell_type == "markdown"]
    code = [c.source for c in nb.cells if c.cell_type == "code"][1:]  # after the setup cell
    k = 0
    while True:
        step = stepper.step
        assert markdown[k + 1].startswith(f"## Step {k + 1}: {step.title}")
        first = " ".join(stepper.text.split("\n\n")[0].split())
        assert first[:60] in markdown[k + 1]
        assert step.lesson_code in code[k]  # the code cell runs the lesson's own step
        assert stepper.code and stepper.code in markdown[k + 1]  # and shows the engine's lines that ran
        values = stepper.values()  # and the table of the values now, which the text speaks of
        assert not values or f"*Values now:*\n\n```text\n{values}\n```" in markdown[k + 1]
        k += 1
        if stepper.at_end:
            break
        stepper.next()
    assert len(code) == k
    executed_path = EXECUTED / f"lesson{n}.ipynb"
    if not executed_path.is_file():
        pytest.skip(f"the documentation site is not built ({executed_path} is missing): run make docs")
    executed = nbformat.read(executed_path, as_version=4)
    assert [c.source for c in executed.cells] == [c.source for c in nb.cells], (
        f"{executed_path} was built from other lesson code: run make docs"
    )
    problems = [
        (c.source.splitlines()[0], o)
        for c in executed.cells
        for o in c.get("outputs", [])
        if o.output_type == "error" or (o.output_type == "stream" and o.name == "stderr")
    ]
    assert problems == []
    assert _pictures(executed) == _pictures(nb)  # the executed cells show the pictures the lesson shows


def test_write_notebooks_and_the_command(tmp_path: Path) -> None:
    out = tmp_path / "nb"
    out.mkdir()
    paths = write_notebooks(out)
    assert [p.name for p in paths] == [f"lesson{n}.ipynb" for n in sorted(lessons.LESSONS)]
    for p in paths:
        nbformat.validate(nbformat.read(p, as_version=4))
    with pytest.raises(FileExistsError):
        write_notebooks(out)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "micrograph", *args], capture_output=True, text=True,
                              cwd=tmp_path, env=env, timeout=300)  # fmt: skip

    before = (out / "lesson1.ipynb").read_bytes()
    done = run("notebooks", "--out", "nb")
    assert done.returncode == 2 and "without --force" in done.stderr and len(done.stderr.splitlines()) == 1
    assert (out / "lesson1.ipynb").read_bytes() == before
    done = run("notebooks", "--out", "nb", "--force")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("wrote ") == len(lessons.LESSONS)
    done = run("notebooks", "--out", "missing/deeper")
    assert done.returncode == 2 and "does not exist" in done.stderr
