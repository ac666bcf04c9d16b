"""The text of the files :mod:`lessons.exercises.autograder` writes, as ``str.format`` templates.

Each file says in its comments what it does and why, for the course staff who read it before uploading.
The fields are filled by :func:`lessons.exercises.autograder.write_autograder`.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

__all__ = ["SCRIPT", "SETUP_SH", "DOCKERFILE", "README"]

SCRIPT = '''#!/usr/bin/env python3
"""{platform_title} runs this for every submission: micrograph checks {root}/{submission}/{exercise}.py with
the random cases of the student's own seed and writes {root}/results/results.json.
The platform's specification: {spec}

Written by `micrograph exercise autograder {exercise} --platform {platform} --seed {seed}`. For each
submission it:

1. refuses to grade when it runs as root (the platform's way) and the student's code could read
   micrograph's installed files or the secret: a results.json with score 0 and one line saying what the
   course staff must fix; {refusal};
2. derives the seed of the cases from the student's identity and the teacher's secret:
   HMAC-SHA256(secret, identity) reduced to 0..2**31-1 (lessons.exercises.grading.student_seed).
   The identity: {identity}.
   The secret: {secret_where}.
   It is never printed and never reaches the check's command line or environment. Without an identity
   the fixed seed {seed} is used, and the results say so;
3. runs `python -m micrograph exercise check FILE --format {platform} --seed S` and stops it after
   {timeout} s. The check stops itself after {wall:g} s of wall clock at worst (the student's code may
   spend {budget:g} s of CPU and waiting in all, plus the interpreters' start-ups), so this only catches
   a checker that hangs;
4. writes results.json after the check has ended, so nothing the student's code wrote there is kept.

The results name the seed: `micrograph exercise check {exercise}.py --seed S` re-runs a student's check.
The root directory {root} can be moved with the environment variable {variable}.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

EXERCISE = {exercise_q}
FIXED_SEED = {seed}  # the seed of the cases when the platform gives no student identity
FORMAT = {platform_q}
ROOT = Path(os.environ.get({variable_q}, {root_q}))
SUBMISSION = ROOT / {submission_q}
RESULTS = ROOT / "results" / "results.json"
SECRET = {secret_path}  # the teacher's secret: root's, mode 0600
SECRET_COPIES = {secret_copies}  # {secret_copies_why}
TIMEOUT = {timeout}  # seconds for the whole check: above its own wall-clock limit ({wall:g} s), with a margin


def unchecked(seed, headline, details=()):
    """A results.json with score 0 for a submission that could not be checked, and why."""
    from lessons.exercises.platforms import to_platform, unchecked_result

    return to_platform(FORMAT, unchecked_result(EXERCISE, headline, seed=seed, details=list(details)))


def check(path, seed):
    """The platform's results.json for the student's file, from `micrograph exercise check`."""
    command = [sys.executable, "-m", "micrograph", "exercise", "check",
               os.path.abspath(path), "--exercise", EXERCISE, "--format", FORMAT,
               "--seed", str(seed), "--no-progress"]
    # run in an empty directory: `python -m` imports from the working directory
    # first, so a submission's folder could put a package in micrograph's place
    with tempfile.TemporaryDirectory() as empty:
        process = subprocess.Popen(command, cwd=empty, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        try:
            stdout, stderr = process.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            stop(process)
            why = (f"the check of {{path.name}} did not finish within {{TIMEOUT}} s "
                   "and was stopped")
            return unchecked(seed, why)
        except BaseException:  # this script stopped (SIGTERM, Ctrl-C): the check too
            stop(process)
            raise
    sys.stderr.write(stderr)
    try:
        results = json.loads(stdout)
    except ValueError:
        results = None
    if process.returncode not in (0, 1) or not isinstance(results, dict):
        why = (stderr.strip().splitlines() or [f"exit status {{process.returncode}}"])[-1]
        return unchecked(seed, f"micrograph could not check {{path.name}}: {{why}}")
    return results


def stop(process):
    """Stop the check as a signal would (it ends the student's code and removes
    its files), then kill it if it has not ended within 10 s."""
    process.terminate()
    try:
        process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()


def stopped(signum, frame):
    """SIGTERM (the platform's stop): end as Ctrl-C would, so the check is stopped too."""
    raise SystemExit(128 + signum)


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


def write(results):
    """results.json, replaced in one step after the check: nothing the student's code wrote there stays."""
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    temporary = RESULTS.with_name(".results.json.tmp")
    text = json.dumps(results, indent=2, ensure_ascii=False)
    temporary.write_bytes(text.encode("utf-8", "backslashreplace"))  # a lone surrogate as its escape
    os.replace(temporary, RESULTS)


def main():
    from lessons.exercises import grading

    signal.signal(signal.SIGTERM, stopped)

    try:
        secret = grading.read_secret(SECRET)
    except OSError as e:
        why = (f"the autograder's secret {{SECRET}} cannot be read ({{e.strerror or e}}): upload all the "
               "files `micrograph exercise autograder` wrote")
    except ValueError as e:
        why = f"{{e}}: write the autograder again (micrograph exercise autograder)"
    else:
        why = grading.unprotected(SECRET_COPIES)
    if why:
        results, status = grading.refused_result(FORMAT, EXERCISE, why, FIXED_SEED)
        print(f"not graded: {{why}}")
        write(results)
        return status
    seed, student, whence = grading.choose_seed(FORMAT, ROOT, secret, FIXED_SEED)
    path, why = find_submission()
    print(f"checking {{path}} for exercise {{EXERCISE}} ({{whence}})" if path is not None else why)
    results = check(path, seed) if path is not None else unchecked(seed, why)
    if student is None:
        results = grading.add_note(FORMAT, results, f"The cases use {{whence}}.")
    write(results)
    print(results.get("message") or results.get("output") or "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder's image (Ubuntu 22.04 by default).
# Written by `micrograph exercise autograder {exercise} --platform gradescope --seed {seed}`.
set -euo pipefail

# Python, pip and Graphviz (micrograph draws the failures with it).
apt-get update
apt-get install -y python3 python3-pip graphviz
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
    echo "micrograph needs Python 3.10 or later: choose the Ubuntu 22.04 base image (or later)" >&2
    exit 1
fi

# micrograph's wheel. Ubuntu 24.04's Python refuses system-wide installs unless told that this image is
# micrograph's alone. No pip cache: no copy of the wheel is left behind.
python3 -m pip install --no-cache-dir /autograder/source/{wheel} \\
    || python3 -m pip install --no-cache-dir --break-system-packages /autograder/source/{wheel}

# The student's code runs as a user of its own, which must not read micrograph's installed packages (the
# engine is the answer key): remove read and search for others from them. run_autograder refuses to grade
# while they are readable by others.
for package in {packages}; do
    directory="$(python3 -c "import os, $package; print(os.path.dirname($package.__file__))")"
    chmod -R o-rwx "$directory"
done

# The teacher's secret (each student's cases come from it) and the wheel: root's alone.
chown root:root /autograder/source/{secret_file}
chmod 600 /autograder/source/{secret_file}
chmod -R o-rwx /autograder/source
"""

DOCKERFILE = """# The image PrairieLearn's external grader runs for micrograph's exercises. Written by
# `micrograph exercise autograder {exercise} --platform prairielearn --seed {seed}`.
# It holds no secret: the secret travels in the course's serverFilesCourse, not in this image (which
# Docker Hub may show to anyone).
FROM python:3.12-slim

# Graphviz: micrograph draws the failures with it.
RUN apt-get update && apt-get install -y --no-install-recommends graphviz && rm -rf /var/lib/apt/lists/*

# micrograph's wheel, installed without a cache so no copy of it stays in the image.
COPY {wheel} /tmp/{wheel}
RUN python -m pip install --no-cache-dir /tmp/{wheel} && rm /tmp/{wheel}

# The grader runs as root and the student's code as a user of its own, which must not read micrograph's
# installed packages (the engine is the answer key): remove read and search for others from them. The
# grading script refuses to grade while they are readable by others.
RUN for package in {packages}; do \\
        directory="$(python -c "import os, $package; print(os.path.dirname($package.__file__))")" \\
        && chmod -R o-rwx "$directory" || exit 1; \\
    done
"""

README = """# micrograph's `{exercise}` exercise on PrairieLearn

Written by `micrograph exercise autograder {exercise} --platform prairielearn --seed {seed}`. PrairieLearn's
external grading is described at {spec}.

1. Build the grading image and push it where PrairieLearn can pull it. Run these in this directory, the
   one that holds this README, the `Dockerfile` and micrograph's wheel (the `.` is it):

       docker build -t YOUR_DOCKERHUB_NAME/micrograph-grader .
       docker push YOUR_DOCKERHUB_NAME/micrograph-grader

   The image installs micrograph and makes its files unreadable to the student's code (which runs as a
   user of its own while the grader is root). It holds no secret.

2. Copy `{script}` and `{secret_file}` into your course's `serverFilesCourse/micrograph/`.
   `{secret_file}` is the secret each student's cases are derived from: PrairieLearn sends
   `serverFilesCourse` to the grader only, never to students' browsers; keep the course repository private.
   The script makes the secret root's with mode 0600 before the student's code runs.

3. In the question's `info.json`:

       "gradingMethod": "External",
       "externalGradingOptions": {{
           "enabled": true,
           "image": "YOUR_DOCKERHUB_NAME/micrograph-grader",
           "serverFilesCourse": ["micrograph/"],
           "entrypoint": "/grade/serverFilesCourse/micrograph/{script}",
           "timeout": {pl_timeout}
       }}

   Why {pl_timeout} seconds: PrairieLearn's default is 30 s (and at most 600 s). micrograph's check stops
   itself after {wall:g} s of wall clock at worst (the student's code may spend {budget:g} s of CPU and
   waiting in all, plus the interpreters' start-ups, on a busy machine), the grading script stops a check
   that hangs after {timeout} s, and {pl_timeout} s leaves room for the container's start and the script's
   own work, so a slow solution gets its score rather than PrairieLearn's timeout.

4. In the question's `question.html`, let the student submit `{exercise}.py` (`<pl-file-editor
   file-name="{exercise}.py">` with the template from `micrograph exercise start {exercise}`, or
   `<pl-file-upload file-names="{exercise}.py">`), and show the results with `<pl-external-grader-results>`.

The script checks `/grade/student/{exercise}.py` with `micrograph exercise check --format prairielearn` and
writes `/grade/results/results.json`: the score in [0, 1], one test per case with its points, the first
failure diagnosed in full and its drawing as an image. A missing `{exercise}.py` scores 0 with a message
naming the files that were submitted.

Each student gets cases of their own. PrairieLearn tells an external grader nothing about the student, but
each student works on a variant of their own, so the seed of the cases is HMAC-SHA256(secret,
`variant_seed` of `/grade/data/data.json`) reduced to 0..2**31-1; a new variant brings new cases. The
results name the seed: `micrograph exercise check {exercise}.py --seed N` re-runs a student's check. Where
`data.json` has no `variant_seed`, the fixed seed {seed} is used and the message says so.

If the grading image leaves micrograph's files or the secret readable by the student's code, the script
does not grade: the submission is marked not gradable (no points, no attempt used) with one line saying
what to fix, and the script exits with 0, because PrairieLearn reads results.json only from a grader that
exits with 0.
"""
