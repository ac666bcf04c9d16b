"""The files the exercise commands read and write: results a class report reads, the progress file, its lock.

Each test is a finding that once failed: an empty submission scored 0 of 0 and the class report averaged
maxima of 12 and 0; mistakes were charted as codes; ``exercise list`` said "passed" forever after one pass;
a 100,000-deep JSON file, ``/dev/zero`` or a FIFO crashed or hung the report and the progress file; a
process holding the progress lock hung the judge; a 0600 progress file came back world-readable.
"""

from __future__ import annotations

import ast
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import run_micrograph
from exercise_solutions import CORRECT
from hypothesis import given
from hypothesis import strategies as st
from test_exercise_platforms import sample, syntax_error

from lessons import exercises
from lessons.cli import main
from lessons.exercises import classreport, judges, progress
from lessons.exercises.classreport import read_result, summarise
from lessons.exercises.jsonfile import JSONFileError, read_json
from lessons.exercises.judges.mistakes import GENERAL
from lessons.exercises.platforms import to_gradescope, to_prairielearn, unchecked_result
from lessons.exercises.progress import PROGRESS_FILE, ProgressError
from viz.files import write_atomic

ROOT = Path(__file__).resolve().parent.parent
DEEP = "[" * 100_000 + "]" * 100_000


def report(*argv: str) -> int:
    """``micrograph exercise report ARGV`` run in this process: its exit status."""
    return main(["exercise", "report", *argv])


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("micrograph: error: "), err
    return err


# --- 1. an empty submission scores 0 of the exercise's maximum; the report never mixes maxima ------------


def test_every_exercise_has_one_maximum_for_every_seed() -> None:
    for name in exercises.EXERCISES:
        tops = {sum(p for _, p in judges.outline(name, seed)) for seed in (0, 1, 7, 2**31 - 1)}
        assert len(tops) == 1 and tops.pop() == classreport.exercise_maximum(name) > 0, name


def test_an_empty_submission_scores_zero_of_the_exercise_maximum(tmp_path: Path) -> None:
    empty = unchecked_result("backprop", "there is no backprop.py in your submission: it is empty", seed=3)
    for out in (to_gradescope(empty), to_prairielearn(empty)):
        most = sum(points for _, points in judges.outline("backprop", 3))
        assert out["extra_data"]["max_score"] == most and out["extra_data"]["score"] == 0.0
    tests = to_gradescope(empty)["tests"]
    assert [t["name"] for t in tests] == ["the submission"] + [n for n, _ in judges.outline("backprop", 3)]
    assert sum(t["max_score"] for t in tests) == most and sum(t["score"] for t in tests) == 0.0
    # a real check of a file that does not load: 0 of 12 too, each case listed
    (tmp_path / "backprop.py").write_text("def backprop(G)\n", encoding="utf-8")
    report = exercises.check("backprop", tmp_path / "backprop.py", record=False, drawing=None)
    g = to_gradescope(report.as_dict())
    cases = judges.outline("backprop")
    assert (g["score"], sum(t["max_score"] for t in g["tests"]), len(g["tests"])) == (
        0.0,
        sum(points for _, points in cases),
        len(cases) + 1,
    )


def test_the_class_report_averages_each_exercise_against_its_own_maximum(tmp_path: Path) -> None:
    full = sample()
    full.update(passed=True, score=12.0, first_failure=None)
    full["cases"] = [dict(c, passed=True, points=1.0) for c in full["cases"]]
    empty = unchecked_result("backprop", "there is no backprop.py in your submission: it is empty")
    legacy = to_gradescope(syntax_error())  # an earlier micrograph's empty submission: 0 of 0
    legacy["extra_data"]["max_score"] = 0.0
    for name, data in [("full.json", full), ("empty.json", to_gradescope(empty)), ("legacy.json", legacy)]:
        (tmp_path / name).write_text(json.dumps(data), encoding="utf-8")
    s = summarise([tmp_path])
    (row,) = s.exercises
    most = sum(points for _, points in judges.outline("backprop"))
    assert (row.students, row.passed, row.max_score) == (3, 1, most)
    assert row.mean_score == pytest.approx(most / 3)  # (1 + 0 + 0) / 3 of the maximum; never "5.0 of 10.2857"
    most = sum(points for _, points in judges.outline("backprop"))
    assert (
        f"backprop             3       1        33%  {most / 3:.1f} of {most:g} (33%)"
        in s.text().splitlines()
    )
    # a result of another maximum counts as its share of it
    half = sample()
    half.update(score=3.0, max_score=6.0)
    (tmp_path / "half.json").write_text(json.dumps(half), encoding="utf-8")
    (row,) = summarise([tmp_path]).exercises
    assert row.mean_score == pytest.approx((1 + 0 + 0 + 0.5) / 4 * most) and row.max_score == most


def test_every_mistake_has_a_phrase_in_words() -> None:
    for name in judges.NAMES:
        rows = judges.module(name).MISTAKES
        phrases = [m.words for m in rows.values()]
        assert all(0 < len(p) <= 40 for p in phrases), name
        assert len(set(phrases)) == len(phrases), name  # each phrase names one mistake
        for code in rows:
            assert judges.words(name, code) == rows[code].words
    trees = [
        ast.parse((ROOT / "lessons/exercises" / f).read_text(encoding="utf-8"))
        for f in ("judge.py", "failures.py")
    ]
    given_codes = {
        kw.value.value
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for kw in node.keywords
        if kw.arg == "mistake" and isinstance(kw.value, ast.Constant)
    } | {"load"}
    assert len(given_codes) >= 10 and given_codes <= set(GENERAL)
    assert all(0 < len(p) <= 40 for p in GENERAL.values())
    assert judges.words("build_grad", "overwrite") == "terms overwritten, not added"  # backprop's row
    assert judges.words("backprop", "missing-entry") == "a node left without an entry"  # its own first
    assert judges.words("forward", "missing-entry") == GENERAL["missing-entry"]
    assert judges.words("topo", "no-such-code") == ""


def test_the_class_report_names_mistakes_in_words(tmp_path: Path) -> None:
    topo = sample()
    topo.update(
        exercise="topo", cases=[dict(c, mistake="no-visited" if c["mistake"] else "") for c in topo["cases"]]
    )
    topo["first_failure"] = dict(topo["first_failure"], mistake="no-visited", hint="keep a visited set")
    odd = sample()
    odd["first_failure"] = dict(odd["first_failure"], mistake="x\n" * 40)
    for name, data in [("a.json", sample()), ("b.json", topo), ("c.json", odd)]:
        (tmp_path / name).write_text(json.dumps(data), encoding="utf-8")
    s = summarise([tmp_path])
    words = {(m.exercise, m.mistake): m.words for m in s.mistakes}
    assert words[("backprop", "overwrite")] == "terms overwritten, not added"
    assert words[("topo", "no-visited")] == "a node listed twice (no visited set)"
    assert (
        words[("backprop", "x\n" * 40)] == "unknown code 'x\\nx\\nx\\nx\\nx\\nx\\nx\\nx\\nx\\nx\\nx\\nx\\n'"
    )
    text = s.text()
    assert "backprop      terms overwritten, not added                     2" in text
    assert "topo          a node listed twice (no visited set)             1" in text
    assert "overwrite " not in text and "no-visited" not in text
    chart = s.bar_chart(tmp_path / "class.svg")
    svg = chart.read_text(encoding="utf-8")
    assert "backprop: terms overwritten, not added" in svg and "topo: a node listed twice" in svg
    assert "backprop: overwrite" not in svg and "no-visited" not in svg


# --- 3. every read bounded, depth-limited, schema-checked ------------------------------------------------


def test_the_class_report_skips_deep_huge_and_special_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    d = tmp_path / "class"
    d.mkdir()
    (d / "deep.json").write_text("[" * 2000 + "]" * 2000, encoding="ascii")  # 4000 bytes
    (d / "big.json").write_text(json.dumps(sample()) + " " * 4096, encoding="utf-8")
    (tmp_path / "elsewhere.json").write_text(json.dumps(sample()), encoding="utf-8")
    (d / "link.json").symlink_to(tmp_path / "elsewhere.json")
    os.mkfifo(d / "fifo.json")
    (d / "ok.json").write_text(json.dumps(sample()), encoding="utf-8")
    monkeypatch.setattr(classreport, "MAX_BYTES", 4096)
    notes = {name: read_result(d / name) for name in ("deep.json", "big.json", "link.json", "fifo.json")}
    assert notes == {
        "deep.json": f"skipped {d / 'deep.json'}: nested deeper than 32 levels",
        "big.json": f"skipped {d / 'big.json'}: larger than 4 KB",
        "link.json": f"skipped {d / 'link.json'}: a symbolic link; not followed",
        "fifo.json": f"skipped {d / 'fifo.json'}: a FIFO (named pipe), not a regular file",
    }
    assert report(str(d)) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("Class report: 1 result read (3 files skipped).")  # a FIFO is no *.json file
    assert report(str(d / "deep.json")) == 2
    assert f"(skipped {d / 'deep.json'}: nested deeper than 32 levels)" in one_line_error(capsys)


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_the_report_command_refuses_a_device_or_a_fifo_at_once(tmp_path: Path, special: str) -> None:
    if special == "fifo":
        os.mkfifo(tmp_path / "results.json")  # nothing ever writes to it: a blocking open would hang
        special = str(tmp_path / "results.json")
    start = time.monotonic()
    done = run_micrograph("exercise", "report", special, cwd=tmp_path, timeout=60)
    assert time.monotonic() - start < 30
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    kind = "a device" if special == "/dev/zero" else "a FIFO (named pipe)"
    assert f"micrograph: error: no micrograph result among the files given (skipped {special}: {kind}" in (
        done.stderr
    )


BROKEN_PROGRESS = [
    (DEEP, "nested deeper than 8 levels"),
    ("{not json", "not JSON (Expecting property name enclosed in double quotes"),
    ("[1, 2]", "a JSON list, not an object"),
    ('{"version": 9, "exercises": {}}', "version '9', not 1 or 2"),
    ('{"version": true, "exercises": {}}', "version 'True', not 1 or 2"),
    ('{"version": 2, "exercises": []}', 'no "exercises" object'),
    ('{"version": 2, "exercises": {"topo": {"passed": "yes"}}}', "the entry of 'topo' has no passed: true"),
    ('{"version": 2, "exercises": {"topo": {"passed": true, "last": "maybe"}}}', "a bad 'last': 'maybe'"),
    ('{"version": 2, "exercises": {"topo": {"passed": true, "score": NaN}}}', "a bad 'score': 'nan'"),
]


@pytest.mark.parametrize(("text", "why"), BROKEN_PROGRESS, ids=[w[:24] for _, w in BROKEN_PROGRESS])
def test_a_broken_progress_file_is_named_in_one_line(tmp_path: Path, text: str, why: str) -> None:
    (tmp_path / PROGRESS_FILE).write_text(text, encoding="utf-8")
    with pytest.raises(ProgressError) as e:
        progress.read(tmp_path)
    message = str(e.value)
    assert message.startswith(f"{tmp_path / PROGRESS_FILE} is not a progress file (") and why in message
    assert "\n" not in message and message.endswith("move it away and the next check starts a new one")


def test_a_deep_progress_file_stops_list_but_never_a_check(tmp_path: Path) -> None:
    (tmp_path / PROGRESS_FILE).write_text(DEEP, encoding="ascii")
    (tmp_path / "topo.py").write_text(CORRECT["topo"], encoding="utf-8")
    listed = run_micrograph("exercise", "list", cwd=tmp_path)
    assert listed.returncode == 2 and listed.stdout == ""
    assert listed.stderr == (
        f"micrograph: error: {PROGRESS_FILE} is not a progress file (nested deeper than 8 levels); "
        "move it away and the next check starts a new one\n"
    )
    done = run_micrograph("exercise", "check", "topo.py", cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stdout + done.stderr, done.stderr
    lines = done.stdout.splitlines()
    n = len(judges.outline("topo"))
    assert lines[-3].startswith(f"All {n} checks passed: {n} of {n} points")
    assert lines[-1] == (
        f"Your verdict was not recorded: {PROGRESS_FILE} is not a progress file (nested deeper than 8 "
        "levels); move it away and the next check starts a new one"
    )
    assert (tmp_path / PROGRESS_FILE).read_text(encoding="ascii") == DEEP  # nothing it held is lost
    done = run_micrograph("exercise", "check", "topo.py", "--format", "gradescope", cwd=tmp_path)
    most = sum(points for _, points in judges.outline("topo"))
    assert done.returncode == 0 and json.loads(done.stdout)["score"] == most  # stdout stays JSON
    assert (
        done.stderr.startswith("micrograph: your verdict was not recorded: ") and done.stderr.count("\n") == 1
    )


def test_a_fifo_or_a_symlink_as_progress_file_stops_nothing(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / PROGRESS_FILE)
    (tmp_path / "topo.py").write_text(CORRECT["topo"], encoding="utf-8")
    start = time.monotonic()
    listed = run_micrograph("exercise", "list", cwd=tmp_path, timeout=60)
    assert listed.returncode == 2 and "a FIFO (named pipe), not a regular file" in listed.stderr
    done = run_micrograph("exercise", "check", "topo.py", "--json", cwd=tmp_path, timeout=120)
    assert done.returncode == 0 and json.loads(done.stdout)["passed"] is True
    assert "not a regular file" in done.stderr
    assert time.monotonic() - start < 60
    (tmp_path / PROGRESS_FILE).unlink()
    (tmp_path / PROGRESS_FILE).symlink_to("/dev/zero")
    report = exercises.check("topo", tmp_path / "topo.py", record=False, drawing=None)
    with pytest.raises(ProgressError, match="is a symbolic link; not writing through it"):
        progress.record("topo", report, tmp_path)
    with pytest.raises(ProgressError, match="a symbolic link; not followed"):
        progress.read(tmp_path)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab\n,:'),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet='[]{}"\\k'), inner, max_size=3)
        ),
        max_leaves=12,
    ),
    st.integers(1, 6),
)
def test_read_json_measures_depth_as_the_parser_nests(value: Any, limit: int) -> None:
    """Brackets inside strings (escaped quotes included) do not count; every array and object does."""
    import tempfile

    def depth(v: Any) -> int:
        children = list(v.values()) if isinstance(v, dict) else v if isinstance(v, list) else None
        return 0 if children is None else 1 + max(map(depth, children), default=0)

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "v.json"
        path.write_text(json.dumps(value), encoding="utf-8")
        if depth(value) <= limit:
            assert read_json(path, max_bytes=1 << 20, max_depth=limit) == value
        else:
            with pytest.raises(JSONFileError, match=f"nested deeper than {limit} levels"):
                read_json(path, max_bytes=1 << 20, max_depth=limit)


def test_read_json_names_what_it_refuses(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_json(tmp_path / "none.json", max_bytes=10, max_depth=2)
    for path, why in [
        (tmp_path, "a directory, not a regular file"),
        (Path("/dev/zero"), "a device, not a regular file"),
    ]:
        with pytest.raises(JSONFileError) as e:
            read_json(path, max_bytes=10, max_depth=2)
        assert e.value.why == why and str(e.value) == f"{path}: {why}"
    (tmp_path / "b.json").write_bytes(b'"\xff"')
    with pytest.raises(JSONFileError, match="not text"):
        read_json(tmp_path / "b.json", max_bytes=10, max_depth=2)
    (tmp_path / "c.json").write_bytes(b"1" * 11)
    with pytest.raises(JSONFileError, match="larger than 10 bytes"):
        read_json(tmp_path / "c.json", max_bytes=10, max_depth=2)
    (tmp_path / "c.json").write_bytes(b"1" * 10)
    assert read_json(tmp_path / "c.json", max_bytes=10, max_depth=0) == 1111111111


# --- 4. the lock: waited for a few seconds, private to the judge ------------------------------------------

HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)  # flock needs no more than a read-only open
fcntl.flock(fd, fcntl.LOCK_SH)
print("held", flush=True)
time.sleep(120)
"""


@pytest.fixture
def held_lock(tmp_path: Path) -> Any:
    lock = tmp_path / (PROGRESS_FILE + ".lock")
    lock.write_text("")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(lock)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    yield lock
    holder.kill()
    holder.wait()


@pytest.mark.slow
def test_a_held_lock_is_waited_for_a_few_seconds_then_said(
    tmp_path: Path, held_lock: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "topo.py").write_text(CORRECT["topo"], encoding="utf-8")
    report = exercises.check("topo", tmp_path / "topo.py", record=False, drawing=None)
    default = progress.LOCK_TIMEOUT
    monkeypatch.setattr(progress, "LOCK_TIMEOUT", 0.4)
    start = time.monotonic()
    with pytest.raises(ProgressError) as e:
        progress.record("topo", report, tmp_path)
    assert 0.4 <= time.monotonic() - start < 3
    assert str(e.value) == f"another process has held the lock {held_lock} for 0.4 s"
    # the command: the verdict printed and the exit status kept, the record said not kept
    start = time.monotonic()
    done = run_micrograph("exercise", "check", "topo.py", cwd=tmp_path, timeout=120)
    assert done.returncode == 0 and time.monotonic() - start < 60
    assert done.stdout.splitlines()[-1] == (
        f"Your verdict was not recorded: another process has held the lock {PROGRESS_FILE}.lock for "
        f"{default:g} s"
    )
    assert not (tmp_path / PROGRESS_FILE).exists()


def test_the_lock_file_is_private_to_the_judge(tmp_path: Path) -> None:
    (tmp_path / "topo.py").write_text(CORRECT["topo"], encoding="utf-8")
    lock = tmp_path / (PROGRESS_FILE + ".lock")
    lock.write_text("")
    lock.chmod(0o644)  # an earlier version's lock file: made private at the next check
    report = exercises.check("topo", tmp_path / "topo.py", record=False, drawing=None)
    progress.record("topo", report, tmp_path)
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600
    lock.unlink()
    progress.record("topo", report, tmp_path)
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to run as nobody")
def test_a_solution_run_as_nobody_cannot_open_the_lock() -> None:
    """The check runs as root and the solution as nobody: the lock file, 0600, is closed to it."""
    import shutil
    import tempfile

    d = Path(tempfile.mkdtemp(prefix="micrograph-lock-", dir="/tmp"))
    try:
        d.chmod(0o755)  # nobody may enter the directory, as the student's own directory
        (d / "topo.py").write_text(CORRECT["topo"], encoding="utf-8")
        (d / "topo.py").chmod(0o644)
        report = exercises.check("topo", d / "topo.py", record=False, drawing=None)
        progress.record("topo", report, d)

        def opens(path: Path) -> bool:
            done = subprocess.run(["/bin/sh", "-c", 'exec 3< "$1"', "sh", str(path)], user="nobody")
            return done.returncode == 0

        assert opens(d / "topo.py")  # the probe works: a 0644 file opens
        assert not opens(d / (PROGRESS_FILE + ".lock"))
    finally:
        shutil.rmtree(d)


# --- 5. a replaced file keeps its mode, a symlink is replaced, never followed ------------------------------


def test_a_private_progress_file_stays_private(tmp_path: Path) -> None:
    (tmp_path / "topo.py").write_text(CORRECT["topo"], encoding="utf-8")
    report = exercises.check("topo", tmp_path / "topo.py", record=False, drawing=None)
    path = progress.record("topo", report, tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # a new file
    path.chmod(0o600)
    progress.record("topo", report, tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert progress.read(tmp_path)["topo"]["last"] == "passed"


def test_write_atomic_keeps_the_mode_and_never_follows_a_symlink(tmp_path: Path) -> None:
    private = tmp_path / "private.txt"
    private.write_text("old")
    private.chmod(0o600)
    write_atomic(private, b"new")
    assert private.read_bytes() == b"new" and stat.S_IMODE(private.stat().st_mode) == 0o600
    script = tmp_path / "run.sh"
    script.write_text("old")
    script.chmod(0o4755)  # set-id bits are not carried over
    write_atomic(script, b"new")
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    target = tmp_path / "target.txt"
    target.write_text("keep")
    target.chmod(0o600)
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_atomic(link, b"new")
    assert target.read_text() == "keep" and not link.is_symlink()
    assert stat.S_IMODE(link.stat().st_mode) == 0o644  # a new file, not the target's mode


def test_the_listing_text_is_the_latest_verdict(tmp_path: Path) -> None:
    entries = {
        "topo": {"passed": True, "last": "passed"},
        "forward": {"passed": False, "last": "failed"},
        "backprop": {"passed": True, "last": "failed"},
        "naive": {"passed": True},  # version 1 wrote no "last" at first: a pass
    }
    (tmp_path / PROGRESS_FILE).write_text(json.dumps({"version": 1, "exercises": entries}), encoding="utf-8")
    (tmp_path / "build_grad.py").write_text("", encoding="utf-8")
    lines = str(exercises.list(tmp_path)).splitlines()
    status = {line.split()[0]: line[13:21].strip() for line in lines[1:] if line[:1].strip()}
    assert {k: status[k] for k in exercises.EXERCISES} == {
        "derivatives": "",
        "topo": "passed",
        "forward": "failed",
        "backprop": "failed",
        "build_grad": "started",
        "mlp_backward": "",
        "naive": "passed",
    }
    k = next(k for k, line in enumerate(lines) if line.startswith("backprop"))
    assert lines[k + 1] == " " * 13 + "passed earlier; the latest check failed"
    assert sum("passed earlier" in line for line in lines) == 1
