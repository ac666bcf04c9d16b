"""What micrograph's grading scripts decide inside a course platform's container, before the check runs.

The scripts that :mod:`lessons.exercises.autograder` writes (Gradescope's ``run_autograder``, PrairieLearn's
``grade_EXERCISE.py``) import this module from the installed wheel:

- **A variant per student**: :func:`student_seed` derives the seed of the check's random cases from the
  student's identity and a secret the teacher keeps (HMAC-SHA256, reduced to ``0 .. 2**31 - 1``, the range
  of ``micrograph exercise check --seed``), so two students do not get the same cases and nobody can
  compute another's without the secret. The result names the seed, so a teacher re-runs one student's
  check with ``micrograph exercise check FILE --seed N``.

  - Gradescope writes ``/autograder/submission_metadata.json`` for each submission; its ``"users"`` list
    holds each submitter's ``"id"``, ``"email"`` and ``"name"``, several for a group submission
    (https://gradescope-autograders.readthedocs.io/en/latest/submission_metadata/).
    :func:`gradescope_student` takes the users' ids: one student's id, or a group's ids sorted and joined,
    so every member of a group gets the group's cases whoever uploads.
  - PrairieLearn passes no identity to an external grader: ``/grade/data/data.json`` holds the question's
    ``params``, ``correct_answers``, ``submitted_answers``, ``variant_seed``, ``options`` and the like
    (``buildDirectory`` in PrairieLearn's ``apps/prairielearn/src/lib/externalGraderCommon.ts``), and the
    maintainers keep the student's identity out of grading (PrairieLearn issues 719 and 3822).
    :func:`prairielearn_student` takes ``variant_seed``: each student works on a variant of their own, so
    the variant stands for the student (a new variant, which a homework may offer, brings new cases).

  Where no identity is found, the teacher's fixed ``--seed`` is used and the output says so.

- **micrograph's files out of the solution's reach**: in the container the judge runs as root and the
  solution as a user of its own (:mod:`lessons.exercises.sandbox`), which must not read micrograph's
  installed packages (they hold the answer key) nor the secret. :func:`unprotected` says what is still
  readable by others; the platform's setup removes those bits, and the script refuses to grade otherwise.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

from lessons.exercises.sandbox import PACKAGES, exposed, readable_by_others

__all__ = ["SECRET_FILE", "MIN_SECRET", "SEEDS", "student_seed", "read_secret",
           "gradescope_student", "prairielearn_student", "choose_seed", "add_note", "package_dirs",
           "unprotected", "refused_result"]  # fmt: skip

SECRET_FILE = "micrograph_secret"
"""The name of the file, in the autograder's files, that holds the teacher's secret (root's, mode 0600)."""

MIN_SECRET = 16
"""The fewest bytes a secret may have: shorter ones could be guessed from the seeds the results show."""

SEEDS = 2**31
"""Seeds are ``0 .. SEEDS - 1``, the range of ``micrograph exercise check --seed``."""


def student_seed(secret: bytes, student: str) -> int:
    """The seed of one student's cases: HMAC-SHA256(``secret``, ``student``) reduced to ``0 .. 2**31 - 1``.

    The same student always gets the same seed, other students other seeds (two of them share one with
    probability 2^-31), and without the secret a seed says nothing about another student's.

    Args:
        secret: the teacher's secret (at least :data:`MIN_SECRET` bytes).
        student: the student's identity as text (a Gradescope user id, a PrairieLearn variant seed).

    Raises:
        TypeError: ``secret`` is not bytes or ``student`` is not a string.
        ValueError: ``secret`` is shorter than :data:`MIN_SECRET` bytes, or ``student`` is empty.
    """
    if not isinstance(secret, bytes):
        raise TypeError(f"secret must be bytes, got {type(secret).__name__}")
    if not isinstance(student, str):
        raise TypeError(f"student must be a string, got {type(student).__name__}")
    if len(secret) < MIN_SECRET:
        raise ValueError(f"the secret has {len(secret)} bytes; it needs at least {MIN_SECRET}")
    if not student:
        raise ValueError("student must not be empty")
    digest = hmac.new(secret, student.encode("utf-8"), hashlib.sha256).digest()
    return int.from_bytes(digest, "big") % SEEDS


def read_secret(path: str | os.PathLike[str]) -> bytes:
    """The secret in the file ``path``: its bytes without the whitespace around them (a final newline).

    Raises:
        OSError: the file cannot be read (FileNotFoundError when it is missing).
        ValueError: it holds fewer than :data:`MIN_SECRET` bytes, saying how to make one.
    """
    secret = Path(path).read_bytes().strip()
    if len(secret) < MIN_SECRET:
        raise ValueError(
            f"the secret in {path} has {len(secret)} bytes; it needs at least {MIN_SECRET} "
            "(make one with: python -c 'import secrets; print(secrets.token_hex(32))' > FILE)"
        )
    return secret


def _read_json(path: Path) -> tuple[object, str]:
    try:
        return json.loads(path.read_text(encoding="utf-8")), ""
    except FileNotFoundError:
        return None, f"there is no {path}"
    except (OSError, UnicodeDecodeError) as e:
        return None, f"{path} cannot be read ({getattr(e, 'strerror', None) or e})"
    except ValueError:
        return None, f"{path} is not JSON"


def gradescope_student(root: str | os.PathLike[str]) -> tuple[str | None, str]:
    """The submitter's identity from Gradescope's ``ROOT/submission_metadata.json``, or None and why.

    The identity is the ``"id"`` of each entry of ``"users"`` (whole numbers or text), sorted and joined
    with commas: a student's id, or a group's ids.
    """
    path = Path(root) / "submission_metadata.json"
    data, why = _read_json(path)
    if why:
        return None, why
    users = data.get("users") if isinstance(data, dict) else None
    if not isinstance(users, list) or not users:
        return None, f'{path} lists no "users"'
    ids = []
    for user in users:
        uid = user.get("id") if isinstance(user, dict) else None
        if isinstance(uid, bool) or not isinstance(uid, (int, str)) or not str(uid).strip():
            return None, f'a user in {path} has no "id"'
        ids.append(str(uid).strip())
    return ",".join(sorted(set(ids))), ""


def prairielearn_student(root: str | os.PathLike[str]) -> tuple[str | None, str]:
    """The identity PrairieLearn gives: ``variant_seed`` in ``ROOT/data/data.json``, or None and why."""
    path = Path(root) / "data" / "data.json"
    data, why = _read_json(path)
    if why:
        return None, why
    seed = data.get("variant_seed") if isinstance(data, dict) else None
    if isinstance(seed, bool) or not isinstance(seed, (int, str)) or not str(seed).strip():
        return None, f'{path} has no "variant_seed"'
    return f"variant {str(seed).strip()}", ""


_STUDENT = {"gradescope": gradescope_student, "prairielearn": prairielearn_student}


def choose_seed(
    platform: str, root: str | os.PathLike[str], secret: bytes, fixed: int
) -> tuple[int, str | None, str]:
    """The seed of this submission's cases, the student it belongs to, and a sentence saying which.

    Args:
        platform: ``"gradescope"`` or ``"prairielearn"``.
        root: the platform's root directory (``/autograder``, ``/grade``).
        secret: the teacher's secret.
        fixed: the seed used when the platform gives no identity.

    Returns:
        ``(seed, student, sentence)``: the student's seed (:func:`student_seed`), their identity and
        "seed S, this student's own (ID)"; or ``fixed``, None and "the fixed seed S: no student identity
        was found (WHY)".

    Raises:
        ValueError: an unknown platform, or a secret that is too short.
    """
    if platform not in _STUDENT:
        raise ValueError(f"there is no platform {platform!r}; the platforms are {', '.join(_STUDENT)}")
    student, why = _STUDENT[platform](root)
    if student is None:
        return fixed, None, f"the fixed seed {fixed}: no student identity was found ({why})"
    seed = student_seed(secret, student)
    return seed, student, f"seed {seed}, this student's own ({student})"


def add_note(platform: str, results: dict, line: str) -> dict:
    """``results`` (a platform's results.json) with ``line`` added to the text shown for the whole
    submission: Gradescope's ``output``, PrairieLearn's ``message``."""
    key = "output" if platform == "gradescope" else "message"
    text = results.get(key) or ""
    results[key] = f"{text}\n{line}" if text else line
    return results


def package_dirs() -> list[Path]:
    """The directories of micrograph's packages (:data:`PACKAGES`) as this interpreter imports them.

    Raises:
        ImportError: a package is not installed.
    """
    dirs = []
    for name in PACKAGES:
        module = importlib.import_module(name)
        dirs.append(Path(module.__file__ or "").resolve().parent)
    return dirs


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def unprotected(secrets: Sequence[str | os.PathLike[str]], dirs: Sequence[Path] | None = None) -> str:
    """What the solution could read that it must not, as one line saying how to fix it; "" if nothing.

    Only where the judge is root does the solution run as a user of its own, so only there is it checked
    (elsewhere the solution runs as the judge's own user and nothing can be kept from it). Each copy of
    the secret is made root's with mode 0600 first (a platform may copy it with other permissions); then
    no copy and no package directory may be readable by others
    (:func:`~lessons.exercises.sandbox.readable_by_others`; a package directory that others may search is
    caught by its ``__init__.py``, which they could then open by name).

    Args:
        secrets: the secret's file and any copy the platform made of it.
        dirs: the package directories; :func:`package_dirs` by default.

    Raises:
        ImportError: a package is not installed (only where the judge is root).
    """
    if not _is_root():
        return ""
    for secret in secrets:
        try:
            os.chown(secret, 0, 0)
            os.chmod(secret, 0o600)
        except OSError:
            pass  # judged below: if it stays readable by others, grading is refused
        if readable_by_others(secret):
            return (
                f"the autograder's secret {secret} is readable by the student's code: make it root's with "
                f"mode 0600 (chown root:root {secret}; chmod 600 {secret})"
            )
    readable = [str(d) for d in (package_dirs() if dirs is None else dirs) if exposed(d)]
    if readable:
        return (
            f"micrograph's installed files are readable by the student's code ({', '.join(readable)}): "
            f"run chmod -R o-rwx on them in the image's setup (see the autograder's setup.sh or Dockerfile)"
        )
    return ""


def refused_result(platform: str, exercise: str, why: str, seed: int) -> tuple[dict, int]:
    """The results.json of a submission the autograder refuses to grade, and the script's exit status.

    The message is ``why``, one line saying what the course staff must fix. Gradescope: score 0 and exit
    status 1. Gradescope's documentation ties its failure message to results.json alone, not to the exit
    status ("The autograder failed to execute correctly ... is returned when the autograder does not
    produce a valid JSON file in /autograder/results/results.json",
    https://gradescope-autograders.readthedocs.io/en/latest/troubleshooting/), so the line reaches the
    student and the non-zero status marks the run in the staff's log. PrairieLearn: ``"gradable": false``
    with the line in ``format_errors``, and exit status 0; PrairieLearn reads results.json only when the
    entrypoint exits with 0 (``runJob`` in ``apps/grader-host/src/index.ts``: ``succeeded`` requires exit
    code 0), and a submission that is not gradable costs the student no attempt and no points
    (https://prairielearn.readthedocs.io/en/latest/externalGrading/, "Grading results"). On both,
    ``extra_data`` says ``"graded": false``, so a class report (:mod:`lessons.exercises.classreport`) leaves
    the file out: it holds no student's score.

    Raises:
        ValueError: an unknown platform.
    """
    from lessons.exercises.platforms import to_platform, unchecked_result

    headline = f"micrograph refuses to grade this submission: {why}"
    results = to_platform(platform, unchecked_result(exercise, headline, seed=seed))
    results["extra_data"]["graded"] = False  # a class report leaves it out: no student's score
    if platform == "prairielearn":
        results["gradable"] = False
        results["format_errors"] = [headline]
        return results, 0
    return results, 1
