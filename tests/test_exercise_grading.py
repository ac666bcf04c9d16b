"""What the grading scripts decide in a platform's container: each student's seed, the secret, refusals.

The identities are those of Gradescope's ``submission_metadata.json`` ("users", each with "id", "email",
"name": https://gradescope-autograders.readthedocs.io/en/latest/submission_metadata/) and PrairieLearn's
``/grade/data/data.json`` (``variant_seed``; PrairieLearn passes no student identity to a grader). The
scripts are run end to end in a temporary root, as root where the tests run as root (as in a container).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_exercise_course import (
    CORRECT_BACKPROP,
    FAKE_WHEEL,
    copy_packages,
    exercise,
    gradescope_layout,
    one_line_error,
    private_packages,
    run_script,
)

from lessons.exercises import autograder
from lessons.exercises.autograder import (
    CHECK_TIMEOUT,
    PRAIRIELEARN_TIMEOUT,
    autograder_secret,
    write_autograder,
)
from lessons.exercises.grading import (
    MIN_SECRET,
    SECRET_FILE,
    SEEDS,
    add_note,
    choose_seed,
    gradescope_student,
    prairielearn_student,
    read_secret,
    refused_result,
    student_seed,
    unprotected,
)
from lessons.exercises.limits import BUDGET, WALL_LIMIT
from lessons.exercises.sandbox import PACKAGES, readable_by_others

SECRET = b"a teacher's secret of some length"
ROOT_ONLY = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="the solution runs as a user of its own, and files are kept from it, only under a root judge",
)


@pytest.fixture
def fake_wheel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Skip the 4-second wheel build where a test is about the other files."""
    monkeypatch.setattr(autograder, "build_wheel", lambda root=None: FAKE_WHEEL)


@pytest.fixture(scope="module")
def private_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """micrograph's packages where no other user can read them, once for this file."""
    return private_packages(tmp_path_factory.mktemp("site"))


# --- each student's seed ----------------------------------------------------------------------------------


def test_the_same_student_gets_the_same_seed_and_others_other_seeds() -> None:
    ids = [str(1000 + k) for k in range(500)] + ["student@example.com", "variant 3", "1,2"]
    seeds = [student_seed(SECRET, i) for i in ids]
    assert seeds == [student_seed(SECRET, i) for i in ids]  # the same on every run
    assert len(set(seeds)) == len(ids)  # no two of these students share their cases
    assert all(0 <= s < SEEDS == 2**31 for s in seeds)  # what `exercise check --seed` takes
    assert min(seeds) < SEEDS // 8 and max(seeds) > SEEDS - SEEDS // 8  # spread over the whole range
    other = [student_seed(b"another teacher's secret", i) for i in ids]
    assert sum(a == b for a, b in zip(seeds, other)) == 0  # the secret matters: a new one, new cases
    expected = int.from_bytes(hmac.new(SECRET, b"1234", hashlib.sha256).digest(), "big") % 2**31
    assert student_seed(SECRET, "1234") == expected  # HMAC-SHA256(secret, id), as the docs say


def test_a_seed_needs_a_real_secret_and_a_student() -> None:
    with pytest.raises(ValueError, match=f"the secret has 5 bytes; it needs at least {MIN_SECRET}"):
        student_seed(b"short", "1234")
    with pytest.raises(ValueError, match="student must not be empty"):
        student_seed(SECRET, "")
    with pytest.raises(TypeError, match="secret must be bytes, got str"):
        student_seed("text", "1234")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="student must be a string, got int"):
        student_seed(SECRET, 1234)  # type: ignore[arg-type]


def metadata(root: Path, users: object) -> None:
    """Gradescope's submission_metadata.json, as its documentation shows it, with ``users``."""
    data = {
        "id": 123456,
        "created_at": "2018-07-01T14:22:32.365935-07:00",
        "assignment": {"id": 25828, "title": "Programming Assignment 1", "group_submission": True},
        "submission_method": "upload",
        "users": users,
        "previous_submissions": [],
    }
    (root / "submission_metadata.json").write_text(json.dumps(data))


def test_the_gradescope_student_is_the_users_id(tmp_path: Path) -> None:
    metadata(tmp_path, [{"email": "student@example.com", "id": 1234, "name": "Student User"}])
    assert gradescope_student(tmp_path) == ("1234", "")
    group = [
        {"email": "b@example.com", "id": 77, "name": "B"},
        {"email": "a@example.com", "id": 5, "name": "A"},
    ]
    metadata(tmp_path, group)
    assert gradescope_student(tmp_path) == ("5,77", "")  # a group: its ids, in one order whoever uploads
    metadata(tmp_path, group[::-1])
    assert gradescope_student(tmp_path) == ("5,77", "")
    path = tmp_path / "submission_metadata.json"
    for users, why in [
        ([], f'{path} lists no "users"'),
        ("1234", f'{path} lists no "users"'),
        ([{"email": "a@example.com"}], f'a user in {path} has no "id"'),
        ([{"id": True}], f'a user in {path} has no "id"'),
        ([{"id": "  "}], f'a user in {path} has no "id"'),
    ]:
        metadata(tmp_path, users)
        assert gradescope_student(tmp_path) == (None, why)
    path.write_text("{not json")
    assert gradescope_student(tmp_path) == (None, f"{path} is not JSON")
    path.unlink()
    assert gradescope_student(tmp_path) == (None, f"there is no {path}")


def test_the_prairielearn_student_is_the_variant(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    path = tmp_path / "data" / "data.json"
    # the fields PrairieLearn writes (buildDirectory in externalGraderCommon.ts); no user among them
    data = {"params": {}, "correct_answers": {}, "submitted_answers": {"_files": []}, "format_errors": {}}
    path.write_text(json.dumps(dict(data, variant_seed=982734, options={}, gradable=True)))
    assert prairielearn_student(tmp_path) == ("variant 982734", "")
    path.write_text(json.dumps(data))
    assert prairielearn_student(tmp_path) == (None, f'{path} has no "variant_seed"')


def test_choose_seed_falls_back_to_the_fixed_seed_and_says_why(tmp_path: Path) -> None:
    metadata(tmp_path, [{"email": "s@example.com", "id": 1234, "name": "S"}])
    own = student_seed(SECRET, "1234")
    assert choose_seed("gradescope", tmp_path, SECRET, 7) == (
        own,
        "1234",
        f"seed {own}, this student's own (1234)",
    )
    seed, student, why = choose_seed("prairielearn", tmp_path, SECRET, 7)
    assert (seed, student) == (7, None)
    assert (
        why
        == f"the fixed seed 7: no student identity was found (there is no {tmp_path / 'data' / 'data.json'})"
    )
    with pytest.raises(ValueError, match="there is no platform 'moodle'"):
        choose_seed("moodle", tmp_path, SECRET, 7)
    assert add_note("gradescope", {"output": "score"}, "note")["output"] == "score\nnote"
    assert add_note("prairielearn", {"message": ""}, "note")["message"] == "note"


def test_read_secret(tmp_path: Path) -> None:
    (tmp_path / "s").write_bytes(b"  " + SECRET + b"\n")
    assert read_secret(tmp_path / "s") == SECRET  # the newline an editor adds does not change the seeds
    (tmp_path / "s").write_bytes(b"0123456789\n")
    with pytest.raises(ValueError, match=r"has 10 bytes; it needs at least 16 \(make one with: python -c"):
        read_secret(tmp_path / "s")
    with pytest.raises(FileNotFoundError):
        read_secret(tmp_path / "missing")


# --- refusing to grade ------------------------------------------------------------------------------------


def test_a_refusal_is_a_zero_with_one_line_in_each_platforms_convention() -> None:
    why = "micrograph's installed files are readable by the student's code (/x): run chmod -R o-rwx on them"
    results, status = refused_result("gradescope", "backprop", why, 4)
    assert status == 1 and results["score"] == 0.0 and results["extra_data"]["seed"] == 4
    assert f"micrograph refuses to grade this submission: {why}" in results["output"]
    results, status = refused_result("prairielearn", "backprop", why, 4)
    # PrairieLearn reads results.json only after exit status 0; "gradable": false costs no attempt
    assert status == 0 and results["gradable"] is False and results["score"] == 0.0
    assert results["format_errors"] == [f"micrograph refuses to grade this submission: {why}"]


@pytest.fixture
def readable_site() -> Iterator[Path]:
    """micrograph's packages copied where every user can read them (as pip leaves them)."""
    top = Path(tempfile.mkdtemp(prefix="micrograph-site-"))
    top.chmod(0o755)
    try:
        yield copy_packages(top)
    finally:
        shutil.rmtree(top)


@pytest.fixture
def grade_dir() -> Iterator[Path]:
    """A directory every user may search, like a container's /grade."""
    top = Path(tempfile.mkdtemp(prefix="micrograph-grade-"))
    top.chmod(0o755)
    try:
        yield top
    finally:
        shutil.rmtree(top)


@ROOT_ONLY
def test_unprotected_names_what_the_solution_could_read(readable_site: Path) -> None:
    dirs = [readable_site / p for p in PACKAGES]
    secret = readable_site / SECRET_FILE
    secret.write_bytes(SECRET)
    secret.chmod(0o644)
    why = unprotected([secret], dirs)
    assert why == (
        f"micrograph's installed files are readable by the student's code ({', '.join(map(str, dirs))}): run "
        "chmod -R o-rwx on them in the image's setup (see the autograder's setup.sh or Dockerfile)"
    )
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600  # the secret was made root's alone first
    (readable_site / "viz").chmod(0o751)  # listed by nobody, but its files can be opened by name
    for d in ("micrograph", "lessons"):
        subprocess.run(["chmod", "-R", "o-rwx", str(readable_site / d)], check=True)
    assert f"({readable_site / 'viz'})" in unprotected([secret], dirs)
    subprocess.run(["chmod", "-R", "o-rwx", str(readable_site / "viz")], check=True)
    assert unprotected([secret], dirs) == ""


def private_lines(text: str, start: str) -> str:
    """The commands of a generated file that make the packages private: from ``start`` to ``done``."""
    lines = text.splitlines()
    first = next(k for k, line in enumerate(lines) if line.startswith(start))
    last = next(k for k in range(first, len(lines)) if lines[k].strip().startswith("done"))
    return "\n".join(lines[first : last + 1])


@ROOT_ONLY
@pytest.mark.parametrize("platform", ["gradescope", "prairielearn"])
def test_the_setup_makes_the_packages_private(
    platform: str, readable_site: Path, tmp_path: Path, fake_wheel: None
) -> None:
    """setup.sh's and the Dockerfile's own commands, run on a readable copy of the packages."""
    write_autograder("backprop", platform, tmp_path)
    if platform == "gradescope":
        command = [
            "bash",
            "-c",
            "set -euo pipefail\n" + private_lines((tmp_path / "setup.sh").read_text(), "for "),
        ]
    else:
        run = private_lines((tmp_path / "Dockerfile").read_text(), "RUN for ")
        command = ["sh", "-c", run.removeprefix("RUN ").replace("\\\n", "")]  # Docker joins the lines
    dirs = [readable_site / p for p in PACKAGES]
    assert all(readable_by_others(d) for d in dirs)
    bin_dir = str(Path(sys.executable).parent)  # its python3 and python import the copy
    env = dict(os.environ, PYTHONPATH=str(readable_site), PATH=bin_dir + os.pathsep + os.environ["PATH"])
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not any(readable_by_others(d) or readable_by_others(d / "__init__.py") for d in dirs)
    assert unprotected([], dirs) == ""


# --- the scripts, run --------------------------------------------------------------------------------------


def results_of(root: Path) -> dict:
    return json.loads((root / "results" / "results.json").read_text())


@pytest.mark.slow  # seconds: run by make test-slow (and CI), keeping make test within minutes
def test_run_autograder_gives_each_student_their_own_cases(tmp_path: Path, private_site: Path) -> None:
    """Gradescope's layout, a fake submission_metadata.json per student, the correct solution."""
    root = gradescope_layout(tmp_path, secret=SECRET)
    (root / "submission" / "backprop.py").write_text(CORRECT_BACKPROP)
    script = root / "source" / "run_autograder"
    seeds = {}
    for student in (1234, 5678):
        metadata(root, [{"email": f"{student}@example.com", "id": student, "name": "S"}])
        done = run_script(script, root, private_site)
        assert done.returncode == 0, done.stderr
        out = results_of(root)
        seed = student_seed(SECRET, str(student))
        assert out["extra_data"]["seed"] == seed and out["score"] == sum(t["max_score"] for t in out["tests"])
        assert f"random cases from seed {seed})" in out["output"]  # what the teacher re-runs with --seed
        assert "fixed seed" not in out["output"]
        assert f"(seed {seed}, this student's own ({student}))" in done.stdout
        assert SECRET.decode() not in done.stdout + done.stderr + json.dumps(out)
        seeds[student] = seed
    assert seeds[1234] != seeds[5678]
    (root / "submission_metadata.json").unlink()
    done = run_script(script, root, private_site)
    out = results_of(root)
    assert done.returncode == 0 and out["extra_data"]["seed"] == 3
    why = f"the fixed seed 3: no student identity was found (there is no {root / 'submission_metadata.json'})"
    assert out["output"].endswith(f"The cases use {why}.") and why in done.stdout


def test_prairielearn_grader_seeds_from_the_variant(
    tmp_path: Path, private_site: Path, fake_wheel: None
) -> None:
    write_autograder("backprop", "prairielearn", tmp_path / "serverFilesCourse" / "micrograph", secret=SECRET)
    for d in ("student", "data"):
        (tmp_path / d).mkdir()
    (tmp_path / "student" / "backprop.py").write_text("def backprop(G):\n    return {}\n")
    (tmp_path / "data" / "data.json").write_text(json.dumps({"params": {}, "variant_seed": 4242}))
    done = run_script(
        tmp_path / "serverFilesCourse" / "micrograph" / "grade_backprop.py", tmp_path, private_site
    )
    assert done.returncode == 0, done.stderr
    out = results_of(tmp_path)
    seed = student_seed(SECRET, "variant 4242")
    assert out["gradable"] is True and out["score"] < 1 and out["extra_data"]["seed"] == seed
    assert f"random cases from seed {seed})" in out["message"]


@ROOT_ONLY
def test_run_autograder_refuses_to_grade_while_micrograph_is_readable(
    tmp_path: Path, readable_site: Path, fake_wheel: None
) -> None:
    root = gradescope_layout(tmp_path, secret=SECRET)
    (root / "submission" / "backprop.py").write_text(CORRECT_BACKPROP)
    metadata(root, [{"email": "s@example.com", "id": 1234, "name": "S"}])
    done = run_script(root / "source" / "run_autograder", root, readable_site)
    assert done.returncode == 1  # Gradescope keeps the results.json; the status marks the run in the log
    out = results_of(root)
    assert out["score"] == 0.0 and out["extra_data"]["seed"] == 3 and not out["tests"][0]["score"]
    line = (
        "micrograph refuses to grade this submission: micrograph's installed files are readable by the "
        f"student's code ({readable_site / 'micrograph'}, {readable_site / 'viz'}, "
        f"{readable_site / 'lessons'}): run chmod -R o-rwx on them in the image's setup (see the "
        "autograder's setup.sh or Dockerfile)"
    )
    assert any(said.endswith(line) for said in out["output"].splitlines()), out["output"]
    assert "checking" not in done.stdout  # the solution never ran


@ROOT_ONLY
def test_the_grader_makes_the_secret_private_before_grading(
    grade_dir: Path, private_site: Path, fake_wheel: None
) -> None:
    """PrairieLearn copies serverFilesCourse twice, with whatever modes the course's files had."""
    tmp_path = grade_dir
    course = tmp_path / "serverFilesCourse" / "micrograph"
    write_autograder("backprop", "prairielearn", course, secret=SECRET)
    shutil.copytree(tmp_path / "serverFilesCourse", tmp_path / "shared")
    copies = [course / SECRET_FILE, tmp_path / "shared" / "micrograph" / SECRET_FILE]
    for copy in copies:
        copy.chmod(0o644)
        assert readable_by_others(copy)
    (tmp_path / "student").mkdir()
    done = run_script(course / "grade_backprop.py", tmp_path, private_site)
    assert done.returncode == 0, done.stderr
    assert results_of(tmp_path)["gradable"] is True  # graded (a missing file: score 0)
    assert all(stat.S_IMODE(c.stat().st_mode) == 0o600 and not readable_by_others(c) for c in copies)


def test_a_missing_secret_is_refused(tmp_path: Path, private_site: Path, fake_wheel: None) -> None:
    root = gradescope_layout(tmp_path)
    (root / "source" / SECRET_FILE).unlink()
    done = run_script(root / "source" / "run_autograder", root, private_site)
    assert done.returncode == 1
    out = results_of(root)
    assert out["score"] == 0.0
    assert (
        f"the autograder's secret {root / 'source' / SECRET_FILE} cannot be read "
        "(No such file or directory): upload all the files `micrograph exercise autograder` wrote"
    ) in out["output"]


# --- the timeouts, the secret's options ------------------------------------------------------------------


def test_the_timeouts_are_above_the_checks_worst_case_and_said(tmp_path: Path, fake_wheel: None) -> None:
    assert CHECK_TIMEOUT == int(WALL_LIMIT) + 30 > WALL_LIMIT > BUDGET
    assert (
        30 < PRAIRIELEARN_TIMEOUT == CHECK_TIMEOUT + 30 <= 600
    )  # above PrairieLearn's default, within its cap
    write_autograder("backprop", "prairielearn", tmp_path)
    assert f"TIMEOUT = {CHECK_TIMEOUT}  #" in (tmp_path / "grade_backprop.py").read_text()
    readme = " ".join((tmp_path / "README.md").read_text().split())
    assert f'"timeout": {PRAIRIELEARN_TIMEOUT}' in readme
    assert (
        f"Why {PRAIRIELEARN_TIMEOUT} seconds: PrairieLearn's default is 30 s (and at most 600 s). "
        f"micrograph's check stops itself after {WALL_LIMIT:g} s of wall clock at worst (the student's "
        f"code may spend {BUDGET:g} s of CPU and waiting in all" in readme
    )
    assert f"stops a check that hangs after {CHECK_TIMEOUT} s" in readme
    ours = " ".join((Path(__file__).resolve().parent.parent / "README.md").read_text().split())
    assert (  # the project's README says the same numbers
        f"the check stops itself within {WALL_LIMIT:g} s of wall clock (the student's code gets {BUDGET:g} s "
        f"of CPU and waiting in all); the grading script stops a check that hangs after {CHECK_TIMEOUT} s, "
        f"and PrairieLearn's job timeout is set to {PRAIRIELEARN_TIMEOUT} s"
    ) in ours


def test_the_secret_is_given_kept_or_made(
    tmp_path: Path, fake_wheel: None, capsys: pytest.CaptureFixture[str]
) -> None:
    given = tmp_path / "course-secret"
    given.write_bytes(SECRET + b"\n")
    out = tmp_path / "ag"
    argv = ["autograder", "backprop", "--platform", "gradescope", "--out", str(out)]
    assert exercise(*argv, "--secret-file", str(given)) == 0
    assert (out / SECRET_FILE).read_bytes() == SECRET + b"\n"
    printed = " ".join(capsys.readouterr().out.split())  # the closing words are wrapped to 80 columns
    assert (
        f"The secret each student's cases come from is in {out / SECRET_FILE} (the secret of {given})"
        in printed
    )
    assert SECRET.decode() not in printed
    assert exercise(*argv, "--force") == 0  # written again: the same cases
    assert (out / SECRET_FILE).read_bytes() == SECRET + b"\n"
    assert "kept: the students' cases stay the same" in " ".join(capsys.readouterr().out.split())
    fresh = tmp_path / "fresh"
    assert exercise("autograder", "topo", "--platform", "prairielearn", "--out", str(fresh)) == 0
    assert "(a new random secret); keep it private" in " ".join(capsys.readouterr().out.split())
    assert re.fullmatch(rb"[0-9a-f]{64}\n", (fresh / SECRET_FILE).read_bytes())
    assert (fresh / SECRET_FILE).read_bytes() != (out / SECRET_FILE).read_bytes()
    assert autograder_secret(tmp_path / "none", None, True) == (None, "a new random secret")


def test_a_bad_secret_file_is_one_line(
    tmp_path: Path, fake_wheel: None, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["autograder", "backprop", "--platform", "gradescope", "--out", str(tmp_path / "ag")]
    missing = tmp_path / "missing"
    assert exercise(*argv, "--secret-file", str(missing)) == 2
    assert f"--secret-file {missing}: No such file or directory" in one_line_error(capsys)
    (tmp_path / "short").write_text("abc\n")
    assert exercise(*argv, "--secret-file", str(tmp_path / "short")) == 2
    assert "has 3 bytes; it needs at least 16" in one_line_error(capsys)
    assert not (tmp_path / "ag").exists()
    with pytest.raises(ValueError, match="secret must be at least 16 bytes"):
        write_autograder("backprop", "gradescope", tmp_path / "ag", secret=b"short")


def test_a_checkout_others_may_only_search_is_still_exposed() -> None:
    """A directory others may search but not list still lets them open a package's files by name."""
    import shutil
    import tempfile

    from lessons.exercises.sandbox import exposed

    top = Path(tempfile.mkdtemp(dir="/tmp"))  # pytest's own directories are not searchable by others
    try:
        (top / "micrograph").mkdir()
        init = top / "micrograph" / "__init__.py"
        init.write_text("")
        init.chmod(0o644)
        (top / "micrograph").chmod(0o711)
        top.chmod(0o711)
        assert not readable_by_others(top) and exposed(top)
        init.chmod(0o600)
        assert not exposed(top)
    finally:
        shutil.rmtree(top)
