"""What a teacher uploads to grade an exercise on Gradescope or PrairieLearn.

``write_autograder("backprop", "gradescope", out)`` writes into ``out``:

- ``setup.sh``: Gradescope runs it once, as root, while it builds the autograder's image: it installs
  Python, pip and Graphviz (for the failure drawings) with apt-get, then micrograph's wheel with pip, and
  makes micrograph's installed packages, the secret and the wheel unreadable to other users;
- ``run_autograder``: Gradescope runs it for every submission: it checks
  ``/autograder/submission/backprop.py`` with ``micrograph exercise check ... --format gradescope --seed S``
  (S the student's own seed) and writes ``/autograder/results/results.json``;
- ``micrograph_secret``: the teacher's secret, from which each student's seed is derived (mode 0600);
- ``micrograph-VERSION-py3-none-any.whl``: micrograph, built from this checkout;
- ``autograder.zip``: the four above at the root of the archive, which is what Gradescope's "Configure
  Autograder" page takes.

For ``"prairielearn"``: ``grade_backprop.py`` (the external grader's entrypoint: it checks
``/grade/student/backprop.py`` with ``--format prairielearn`` and writes ``/grade/results/results.json``),
a ``Dockerfile`` for the grading image (Python, Graphviz, the wheel, micrograph's files unreadable to
others), a ``README.md`` with the question's ``info.json`` options, the secret and the wheel.

**Each student's cases.** The scripts derive the seed of the random cases from the student's identity and
the secret (:mod:`lessons.exercises.grading`: Gradescope's user id from ``submission_metadata.json``;
PrairieLearn's ``variant_seed``, as PrairieLearn gives an external grader no identity). The secret is the
``secret`` given (``--secret-file``) or a new random one; it lives in a file of its own, root's with mode
0600 in the grading container, never in the results. The results name the seed, so the teacher re-runs a
student's check with ``micrograph exercise check FILE --seed N``; the fixed ``seed`` is used, and said, where
no identity is found.

**Timeouts.** The check stops itself after :data:`~lessons.exercises.limits.WALL_LIMIT` seconds at worst
(its solution may spend :data:`~lessons.exercises.limits.BUDGET` seconds of CPU and waiting in all, plus
the interpreters' start-ups); the scripts stop a check that hangs after :data:`CHECK_TIMEOUT` seconds, and
PrairieLearn's README asks for a job ``"timeout"`` of :data:`PRAIRIELEARN_TIMEOUT` (its default is 30 s).
Gradescope's own default timeout is 10 minutes.

**Refusals.** Run as root (as on both platforms) while micrograph's installed files or the secret are
readable by the solution's user, a script does not grade: score 0 with one line saying what the course
staff must fix (:func:`lessons.exercises.grading.refused_result` gives each platform's convention).

The grading scripts write results.json after the check has ended, so nothing the student's code wrote there
is kept; a missing submission file, a checker that does not answer, or one that runs past
:data:`CHECK_TIMEOUT` gives a results.json with score 0 and a message saying which. The root directory
(``/autograder``, ``/grade``) can be moved with the environment variable ``MICROGRAPH_AUTOGRADER_ROOT``,
which is how the tests run a script end to end in a temporary directory.

Gradescope's layout and scripts: https://gradescope-autograders.readthedocs.io/en/latest/specs/, its
submission metadata: https://gradescope-autograders.readthedocs.io/en/latest/submission_metadata/, its
timeout: https://gradescope-autograders.readthedocs.io/en/latest/troubleshooting/. PrairieLearn's:
https://prairielearn.readthedocs.io/en/latest/externalGrading/ (``timeout``: "optional and defaults to 30
seconds ... cannot exceed 600 seconds").

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import io
import json
import secrets
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from lessons.exercises import EXERCISES, autograder_templates
from lessons.exercises.grading import MIN_SECRET, SECRET_FILE, read_secret
from lessons.exercises.limits import BUDGET, WALL_LIMIT
from lessons.exercises.platforms import PLATFORMS
from lessons.exercises.sandbox import PACKAGES
from micrograph import __version__
from viz.files import write_atomic

__all__ = ["write_autograder", "autograder_secret", "build_wheel", "checkout_root", "AutograderError",
           "ROOT_VARIABLE", "CHECK_TIMEOUT", "PRAIRIELEARN_TIMEOUT"]  # fmt: skip

ROOT_VARIABLE = "MICROGRAPH_AUTOGRADER_ROOT"
"""The environment variable that moves the platform's root directory (``/autograder``, ``/grade``)."""

CHECK_TIMEOUT = int(WALL_LIMIT) + 30
"""Seconds the grading script lets the whole check run: the check's own wall-clock limit
(:data:`~lessons.exercises.limits.WALL_LIMIT`) and 30 s for the judge's start and its drawing of the
failure, so only a checker that hangs is stopped here."""

PRAIRIELEARN_TIMEOUT = CHECK_TIMEOUT + 30
"""The ``"timeout"`` the PrairieLearn README asks for (PrairieLearn's default is 30 s, its maximum 600 s):
the grading script's :data:`CHECK_TIMEOUT` and 30 s for the container's start and the script's own work."""

_ROOTS = {"gradescope": ("/autograder", "submission"), "prairielearn": ("/grade", "student")}

_SECRET_PATHS = {
    "gradescope": f'ROOT / "source" / {json.dumps(SECRET_FILE)}',  # unzipped into /autograder/source
    "prairielearn": f"Path(__file__).resolve().parent / {json.dumps(SECRET_FILE)}",  # beside the script
}

_SECRET_PLACES = {
    "gradescope": f"/autograder/source/{SECRET_FILE}",
    "prairielearn": f"{SECRET_FILE} beside this script",
}

_SECRET_COPIES = {
    "gradescope": ("[SECRET]", "the one copy"),
    "prairielearn": (
        f'[SECRET, *sorted((ROOT / "shared").rglob({json.dumps(SECRET_FILE)}))]',
        "PrairieLearn also copies serverFilesCourse to /grade/shared",
    ),
}

_IDENTITIES = {
    "gradescope": 'the "id" of each of the "users" in /autograder/submission_metadata.json',
    "prairielearn": (
        '"variant_seed" in /grade/data/data.json (PrairieLearn passes no\n   student identity; each '
        "student works on a variant of their own)"
    ),
}

_REFUSALS = {
    "gradescope": "exit status 1",
    "prairielearn": (
        'marked "gradable": false (no\n   points, no attempt used) with exit status 0, as PrairieLearn reads '
        "results.json only from a\n   grader that exits with 0"
    ),
}


class AutograderError(Exception):
    """The autograder cannot be written: no checkout to build the wheel from, or the build failed."""


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


def _zip(files: dict[str, bytes], modes: dict[str, int]) -> bytes:
    """A zip archive of the files at its root (Gradescope's form), each with its permissions."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.external_attr = modes.get(name, 0o644) << 16
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
        "pl_timeout": PRAIRIELEARN_TIMEOUT,
        "wall": WALL_LIMIT,
        "budget": BUDGET,
        "wheel": wheel,
        "packages": " ".join(PACKAGES),
        "secret_file": SECRET_FILE,
        "secret_path": _SECRET_PATHS[platform],
        "secret_where": _SECRET_PLACES[platform],
        "secret_copies": _SECRET_COPIES[platform][0],
        "secret_copies_why": _SECRET_COPIES[platform][1],
        "identity": _IDENTITIES[platform],
        "refusal": _REFUSALS[platform],
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
    script = autograder_templates.SCRIPT.format(**fields, **quoted)
    if platform == "gradescope":
        return {"setup.sh": autograder_templates.SETUP_SH.format(**fields), "run_autograder": script}, {
            "setup.sh",
            "run_autograder",
        }
    name = f"grade_{exercise}.py"
    return (
        {
            name: script,
            "Dockerfile": autograder_templates.DOCKERFILE.format(**fields),
            "README.md": autograder_templates.README.format(script=name, **fields),
        },
        {name},
    )


def _check_arguments(exercise: str, platform: str, out: Path, seed: int, secret: bytes | None) -> None:
    if exercise not in EXERCISES:
        raise ValueError(f"there is no exercise {exercise!r}; the exercises are {', '.join(EXERCISES)}")
    if platform not in PLATFORMS:
        raise ValueError(f"there is no platform {platform!r}; the platforms are {', '.join(PLATFORMS)}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0, got {seed!r}")
    if secret is not None and (not isinstance(secret, bytes) or len(secret.strip()) < MIN_SECRET):
        raise ValueError(f"secret must be at least {MIN_SECRET} bytes, got {secret!r:.40}")
    if out.is_symlink():
        raise NotADirectoryError(f"{out} is a symlink; not writing through it")
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"{out} is a file; --out must be a directory")


def _refuse_existing(out: Path, names: list[str]) -> None:
    existing = [str(out / name) for name in names if (out / name).exists() or (out / name).is_symlink()]
    if existing:
        verb = "exists" if len(existing) == 1 else "exist"
        raise FileExistsError(f"{', '.join(existing)} {verb}; not overwriting")


def autograder_secret(out: Path, secret_file: str | Path | None, force: bool) -> tuple[bytes | None, str]:
    """The secret to write an autograder into ``out`` with, and a sentence saying where it comes from.

    ``secret_file`` (``--secret-file``) gives it. Without one, rewriting an autograder (``force``) keeps the
    secret already in ``out``, so the students' cases stay the same; otherwise it is None: a new random
    secret (:func:`write_autograder` makes it).

    Raises:
        OSError: ``secret_file`` cannot be read (FileNotFoundError: it does not exist).
        ValueError: the secret is too short (fewer than :data:`~lessons.exercises.grading.MIN_SECRET` bytes).
    """
    kept = Path(out) / SECRET_FILE
    if secret_file is not None:
        return read_secret(secret_file), f"the secret of {secret_file}"
    if force and kept.is_file() and not kept.is_symlink():
        return read_secret(kept), f"the secret already in {kept}, kept: the students' cases stay the same"
    return None, "a new random secret"


def write_autograder(
    exercise: str,
    platform: str,
    out: Path,
    *,
    force: bool = False,
    seed: int = 0,
    secret: bytes | None = None,
) -> list[Path]:
    """Write what a teacher uploads to grade ``exercise`` on ``platform`` into the directory ``out``.

    Gradescope: ``setup.sh``, ``run_autograder``, ``micrograph_secret``, micrograph's wheel and
    ``autograder.zip`` (the four at its root). PrairieLearn: ``grade_EXERCISE.py``, ``Dockerfile``,
    ``README.md``, ``micrograph_secret`` and the wheel. The scripts run ``micrograph exercise check
    --format PLATFORM --seed S`` on the student's ``EXERCISE.py``, S derived from the student and the
    secret; see the module's docstring for what they do otherwise.

    Args:
        exercise: the exercise (``lessons.exercises.EXERCISES``).
        platform: ``"gradescope"`` or ``"prairielearn"``.
        out: the directory to write into; made if missing.
        force: replace files that exist; without it, nothing is written if any of them exists.
        seed: the fixed seed of the check's random cases, used where the platform gives no student identity.
        secret: the teacher's secret (at least 16 bytes; whitespace around it is dropped), or None for a new
            random one. It is written to ``micrograph_secret`` with mode 0600.

    Returns:
        The paths written, in the order above.

    Raises:
        ValueError: an unknown exercise or platform, a seed that is not a whole number >= 0, or a secret
            that is not bytes of at least 16.
        NotADirectoryError: ``out`` is a file or a symbolic link (never written through).
        FileExistsError: a file to write exists and ``force`` is False (naming every such file).
        AutograderError: micrograph does not run from a checkout, or its wheel could not be built.
        OSError: a file cannot be written (each is written atomically, never through a symlink; without
            ``force``, created exclusively, so a file made while the wheel was built is not replaced).
    """
    out = Path(out)
    _check_arguments(exercise, platform, out, seed, secret)
    names = [
        *_files(exercise, platform, seed, "")[0],
        SECRET_FILE,
        f"micrograph-{__version__}-py3-none-any.whl",
    ]
    if platform == "gradescope":
        names.append("autograder.zip")
    if not force:
        _refuse_existing(out, names)  # before the wheel is built: a refusal costs nothing
    wheel_name, wheel = build_wheel()
    texts, executable = _files(exercise, platform, seed, wheel_name)
    data = {name: text.encode("utf-8") for name, text in texts.items()}
    data[SECRET_FILE] = (secrets.token_hex(32).encode("ascii") if secret is None else secret.strip()) + b"\n"
    data[wheel_name] = wheel
    modes = {name: 0o755 if name in executable else 0o644 for name in data}
    modes[SECRET_FILE] = modes[wheel_name] = 0o600  # the wheel holds the answer keys: no other user reads it
    if platform == "gradescope":
        data["autograder.zip"] = _zip(data, modes)
        modes["autograder.zip"] = 0o600  # it holds the secret
    if not force:
        _refuse_existing(out, list(data))
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for (
        name,
        content,
    ) in data.items():  # without force each is created exclusively: none made meanwhile is lost
        try:
            written.append(write_atomic(out / name, content, mode=modes[name], overwrite=force))
        except FileExistsError:
            raise FileExistsError(f"{out / name} exists; not overwriting") from None
    return written
