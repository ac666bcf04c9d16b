"""What a teacher uploads to grade an exercise on Gradescope or PrairieLearn.

``write_autograder("backprop", "gradescope", out)`` writes into ``out``:

- ``setup.sh``: Gradescope runs it once, as root, while it builds the autograder's image: it installs
  Python, pip and Graphviz (for the failure drawings) with apt-get, then micrograph's wheel with pip;
- ``run_autograder``: Gradescope runs it for every submission: it checks
  ``/autograder/submission/backprop.py`` with ``micrograph exercise check ... --format gradescope --seed S``
  and writes ``/autograder/results/results.json``;
- ``micrograph-VERSION-py3-none-any.whl``: micrograph, built from this checkout;
- ``autograder.zip``: the three above at the root of the archive, which is what Gradescope's "Configure
  Autograder" page takes.

For ``"prairielearn"``: ``grade_backprop.py`` (the external grader's entrypoint: it checks
``/grade/student/backprop.py`` with ``--format prairielearn`` and writes ``/grade/results/results.json``),
a ``Dockerfile`` for the grading image (Python, Graphviz, the wheel), the wheel, and a ``README.md`` with
the question's ``info.json`` options.

The grading scripts write results.json after the check has ended, so nothing the student's code wrote there
is kept; a missing submission file, a checker that does not answer, or one that runs past
:data:`CHECK_TIMEOUT` gives a results.json with score 0 and a message saying which. The root directory
(``/autograder``, ``/grade``) can be moved with the environment variable ``MICROGRAPH_AUTOGRADER_ROOT``,
which is how the tests run a script end to end in a temporary directory.

Gradescope's layout and scripts: https://gradescope-autograders.readthedocs.io/en/latest/specs/.
PrairieLearn's: https://prairielearn.readthedocs.io/en/latest/externalGrading/.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from lessons.exercises import EXERCISES
from lessons.exercises.platforms import PLATFORMS
from micrograph import __version__
from viz.render import write_atomic

__all__ = [
    "write_autograder",
    "build_wheel",
    "checkout_root",
    "AutograderError",
    "ROOT_VARIABLE",
    "CHECK_TIMEOUT",
]

ROOT_VARIABLE = "MICROGRAPH_AUTOGRADER_ROOT"
"""The environment variable that moves the platform's root directory (``/autograder``, ``/grade``)."""

CHECK_TIMEOUT = 600
"""Seconds the grading script lets the whole check run (the check's own limits are far shorter)."""

_ROOTS = {"gradescope": ("/autograder", "submission"), "prairielearn": ("/grade", "student")}


class AutograderError(Exception):
    """The autograder cannot be written: no checkout to build the wheel from, or the build failed."""


_SCRIPT = '''#!/usr/bin/env python3
"""{platform_title} runs this for every submission: micrograph checks {root}/{submission}/{exercise}.py and
writes {root}/results/results.json ({spec}).

Written by `micrograph exercise autograder {exercise} --platform {platform} --seed {seed}`. The root
directory {root} can be moved with the environment variable {variable}.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

EXERCISE = {exercise_q}
SEED = {seed}
FORMAT = {platform_q}
ROOT = Path(os.environ.get({variable_q}, {root_q}))
SUBMISSION = ROOT / {submission_q}
RESULTS = ROOT / "results" / "results.json"
TIMEOUT = {timeout}  # seconds for the whole check; its own limits per case are far shorter


def unchecked(headline, details=()):
    """A results.json with score 0 for a submission that could not be checked, and why."""
    from lessons.exercises.platforms import to_platform, unchecked_result

    return to_platform(FORMAT, unchecked_result(EXERCISE, headline, seed=SEED, details=list(details)))


def check(path):
    """The platform's results.json for the student's file, from `micrograph exercise check`."""
    command = [sys.executable, "-m", "micrograph", "exercise", "check", str(path), "--exercise", EXERCISE,
               "--format", FORMAT, "--seed", str(SEED), "--no-progress"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return unchecked(f"the check of {{path.name}} did not finish within {{TIMEOUT}} s and was stopped")
    sys.stderr.write(done.stderr)
    try:
        results = json.loads(done.stdout)
    except ValueError:
        results = None
    if done.returncode not in (0, 1) or not isinstance(results, dict):
        why = (done.stderr.strip().splitlines() or [f"exit status {{done.returncode}}"])[-1]
        return unchecked(f"micrograph could not check {{path.name}}: {{why}}")
    return results


def find_submission():
    """The student's file: {{EXERCISE}}.py at the top of the submission, else the one file of that name
    in a folder of it (an upload zipped with its folder); else None and why."""
    name = f"{{EXERCISE}}.py"
    if (SUBMISSION / name).is_file():
        return SUBMISSION / name, ""
    if not SUBMISSION.is_dir():
        return None, f"there is no {{name}} in your submission: it is empty"
    inside = sorted(p for p in SUBMISSION.rglob(name) if p.is_file())
    if len(inside) == 1:
        return inside[0], ""
    if inside:
        where = ", ".join(str(p.relative_to(SUBMISSION)) for p in inside)
        return None, f"your submission has {{len(inside)}} files named {{name}} ({{where}}): submit one"
    found = sorted(str(p.relative_to(SUBMISSION)) for p in SUBMISSION.rglob("*") if p.is_file())
    shown = ", ".join(found[:20]) + (f" and {{len(found) - 20}} more" if len(found) > 20 else "")
    return None, (
        f"there is no {{name}} in your submission: name your solution {{name}} "
        f"(the files submitted: {{shown or 'none'}})"
    )


def main():
    path, why = find_submission()
    print(f"checking {{path}} for exercise {{EXERCISE}} (seed {{SEED}})" if path is not None else why)
    results = check(path) if path is not None else unchecked(why)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    temporary = RESULTS.with_name(".results.json.tmp")
    temporary.write_text(json.dumps(results, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(temporary, RESULTS)  # written after the check: nothing the student's code wrote there stays
    print(results.get("message") or results.get("output") or "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

_SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder's image (Ubuntu 22.04 by default):
# Python, pip and Graphviz (micrograph draws the failures with it), then micrograph's wheel.
# Written by `micrograph exercise autograder {exercise} --platform gradescope --seed {seed}`.
set -euo pipefail
apt-get update
apt-get install -y python3 python3-pip graphviz
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
    echo "micrograph needs Python 3.10 or later: choose the Ubuntu 22.04 base image (or later)" >&2
    exit 1
fi
# Ubuntu 24.04's Python refuses system-wide installs unless told that this image is micrograph's alone.
python3 -m pip install /autograder/source/{wheel} \\
    || python3 -m pip install --break-system-packages /autograder/source/{wheel}
"""

_DOCKERFILE = """# The image PrairieLearn's external grader runs for micrograph's exercises: Python, Graphviz
# (micrograph draws the failures with it) and micrograph. Written by
# `micrograph exercise autograder {exercise} --platform prairielearn --seed {seed}`.
FROM python:3.12-slim
RUN apt-get update && apt-get install -y --no-install-recommends graphviz && rm -rf /var/lib/apt/lists/*
COPY {wheel} /tmp/{wheel}
RUN python -m pip install --no-cache-dir /tmp/{wheel} && rm /tmp/{wheel}
"""

_README = """# micrograph's `{exercise}` exercise on PrairieLearn

Written by `micrograph exercise autograder {exercise} --platform prairielearn --seed {seed}`. PrairieLearn's
external grading is described at {spec}.

1. Build the grading image and push it where PrairieLearn can pull it:

       docker build -t YOUR_DOCKERHUB_NAME/micrograph-grader .
       docker push YOUR_DOCKERHUB_NAME/micrograph-grader

2. Copy `{script}` into your course's `serverFilesCourse/micrograph/`.

3. In the question's `info.json`:

       "gradingMethod": "External",
       "externalGradingOptions": {{
           "enabled": true,
           "image": "YOUR_DOCKERHUB_NAME/micrograph-grader",
           "serverFilesCourse": ["micrograph/"],
           "entrypoint": "/grade/serverFilesCourse/micrograph/{script}",
           "timeout": 60
       }}

4. In the question's `question.html`, let the student submit `{exercise}.py` (`<pl-file-editor
   file-name="{exercise}.py">` with the template from `micrograph exercise start {exercise}`, or
   `<pl-file-upload file-names="{exercise}.py">`), and show the results with `<pl-external-grader-results>`.

The script checks `/grade/student/{exercise}.py` with `micrograph exercise check --format prairielearn
--seed {seed}` and writes `/grade/results/results.json`: the score in [0, 1], one test per case with its
points, the first failure diagnosed in full and its drawing as an image. A missing `{exercise}.py` scores 0
with a message naming the files that were submitted. To grade with cases the students have not seen, write
the autograder again with another `--seed`.
"""


def checkout_root() -> Path:
    """The micrograph checkout this code runs from (where ``setup.cfg`` and ``pyproject.toml`` are).

    Raises:
        AutograderError: micrograph is installed from a wheel, not run from a checkout, so there are no
            sources to build the wheel from.
    """
    root = Path(__file__).resolve().parents[2]
    needed = (
        "setup.cfg",
        "pyproject.toml",
        "micrograph/__init__.py",
        "viz/__init__.py",
        "lessons/__init__.py",
    )
    missing = [name for name in needed if not (root / name).is_file()]
    if missing:
        raise AutograderError(
            f"micrograph is not installed from a checkout ({root} has no {missing[0]}): the autograder "
            "ships micrograph's wheel built from its sources; run this from a clone of micrograph "
            "(pip install -e .)"
        )
    return root


def _copy_sources(root: Path, into: Path) -> None:
    """The files a wheel is built from, copied, so the build leaves nothing (build/, egg-info) behind."""
    for name in ("setup.cfg", "pyproject.toml", "setup.py", "README.md", "MANIFEST.in", "LICENSE"):
        if (root / name).is_file():
            shutil.copy2(root / name, into / name)
    for package in ("micrograph", "viz", "lessons"):
        shutil.copytree(root / package, into / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def build_wheel(root: Path | None = None) -> tuple[str, bytes]:
    """micrograph's wheel built from the checkout: (its file name, its bytes).

    It runs ``python -m pip wheel --no-deps --no-build-isolation`` on a copy of the sources, so it needs
    no network and leaves the checkout as it was.

    Raises:
        AutograderError: no checkout (see :func:`checkout_root`), or pip failed (its last line quoted).
    """
    root = checkout_root() if root is None else root
    with tempfile.TemporaryDirectory(prefix="micrograph-wheel-") as tmp:
        sources, out = Path(tmp) / "src", Path(tmp) / "out"
        sources.mkdir()
        _copy_sources(root, sources)
        command = [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(sources),
        ]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            raise AutograderError(
                "building micrograph's wheel took longer than 300 s and was stopped"
            ) from None
        wheels = sorted(out.glob("micrograph-*.whl")) if done.returncode == 0 else []
        if not wheels:
            raise AutograderError(_build_failure(done.stdout + done.stderr))
        return wheels[0].name, wheels[0].read_bytes()


def _build_failure(log: str) -> str:
    if "No module named 'setuptools'" in log or "Cannot import 'setuptools" in log:
        return (
            "cannot build micrograph's wheel: setuptools is missing (python -m pip install setuptools wheel)"
        )
    if "bdist_wheel" in log:
        return "cannot build micrograph's wheel: the `wheel` package is missing (python -m pip install wheel)"
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    return f"cannot build micrograph's wheel: {lines[-1] if lines else 'pip wheel failed'}"


def _zip(files: dict[str, bytes], executable: set[str]) -> bytes:
    """A zip archive of the files at its root (Gradescope's form), scripts marked executable."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if name in executable else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buf.getvalue()


def _files(exercise: str, platform: str, seed: int, wheel: str) -> tuple[dict[str, str], set[str]]:
    """The text files of the platform's autograder, and which of them are executable."""
    root, submission = _ROOTS[platform]
    fields = {
        "exercise": exercise,
        "seed": seed,
        "platform": platform,
        "root": root,
        "submission": submission,
        "variable": ROOT_VARIABLE,
        "timeout": CHECK_TIMEOUT,
        "wheel": wheel,
        "platform_title": {"gradescope": "Gradescope", "prairielearn": "PrairieLearn"}[platform],
        "spec": {
            "gradescope": "https://gradescope-autograders.readthedocs.io/en/latest/specs/",
            "prairielearn": "https://prairielearn.readthedocs.io/en/latest/externalGrading/",
        }[platform],
    }
    quoted = {
        f"{key}_q": json.dumps(fields[key])
        for key in ("exercise", "platform", "variable", "root", "submission")
    }
    script = _SCRIPT.format(**fields, **quoted)
    if platform == "gradescope":
        return {"setup.sh": _SETUP_SH.format(**fields), "run_autograder": script}, {
            "setup.sh",
            "run_autograder",
        }
    name = f"grade_{exercise}.py"
    return (
        {
            name: script,
            "Dockerfile": _DOCKERFILE.format(**fields),
            "README.md": _README.format(script=name, **fields),
        },
        {name},
    )


def _check_arguments(exercise: str, platform: str, out: Path, seed: int) -> None:
    if exercise not in EXERCISES:
        raise ValueError(f"there is no exercise {exercise!r}; the exercises are {', '.join(EXERCISES)}")
    if platform not in PLATFORMS:
        raise ValueError(f"there is no platform {platform!r}; the platforms are {', '.join(PLATFORMS)}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0, got {seed!r}")
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"{out} is a file; --out must be a directory")


def _refuse_existing(out: Path, names: list[str]) -> None:
    existing = [str(out / name) for name in names if (out / name).exists() or (out / name).is_symlink()]
    if existing:
        verb = "exists" if len(existing) == 1 else "exist"
        raise FileExistsError(f"{', '.join(existing)} {verb}; not overwriting")


def write_autograder(
    exercise: str, platform: str, out: Path, *, force: bool = False, seed: int = 0
) -> list[Path]:
    """Write what a teacher uploads to grade ``exercise`` on ``platform`` into the directory ``out``.

    Gradescope: ``setup.sh``, ``run_autograder``, micrograph's wheel and ``autograder.zip`` (the three at
    its root). PrairieLearn: ``grade_EXERCISE.py``, ``Dockerfile``, the wheel and ``README.md``. The
    scripts run ``micrograph exercise check --format PLATFORM --seed SEED`` on the student's
    ``EXERCISE.py``; see the module's docstring for what they do when that file is missing.

    Args:
        exercise: the exercise (``lessons.exercises.EXERCISES``).
        platform: ``"gradescope"`` or ``"prairielearn"``.
        out: the directory to write into; made if missing.
        force: replace files that exist; without it, nothing is written if any of them exists.
        seed: the seed of the check's random cases (a teacher may grade with one the students have not seen).

    Returns:
        The paths written, in the order above.

    Raises:
        ValueError: an unknown exercise or platform, or a seed that is not a whole number >= 0.
        NotADirectoryError: ``out`` is a file.
        FileExistsError: a file to write exists and ``force`` is False (naming every such file).
        AutograderError: micrograph does not run from a checkout, or its wheel could not be built.
        OSError: a file cannot be written (each is written atomically, never through a symlink).
    """
    out = Path(out)
    _check_arguments(exercise, platform, out, seed)
    names = [*_files(exercise, platform, seed, "")[0], f"micrograph-{__version__}-py3-none-any.whl"]
    if platform == "gradescope":
        names.append("autograder.zip")
    if not force:
        _refuse_existing(out, names)  # before the wheel is built: a refusal costs nothing
    wheel_name, wheel = build_wheel()
    texts, executable = _files(exercise, platform, seed, wheel_name)
    data = {name: text.encode("utf-8") for name, text in texts.items()}
    data[wheel_name] = wheel
    if platform == "gradescope":
        data["autograder.zip"] = _zip(data, executable)
    if not force:
        _refuse_existing(out, list(data))
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, content in data.items():
        path = write_atomic(out / name, content)
        if name in executable:
            path.chmod(0o755)
        written.append(path)
    return written
