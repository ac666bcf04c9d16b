"""The checker's verdict can be trusted: each finding that once passed now fails, with its own diagnosis.

Every test writes a student's file and checks it as ``micrograph exercise check`` does. Honest mistakes that
used to pass (build_grad without its memo, biases regularized, the first consumer only), delegations to
micrograph's own algorithms, and attacks on the judge (a forged answer on the pipe, the judge's frames, a
float that lies, a patched ``math.isclose``, a thread flooding the pipe, ``os._exit``) must all end as a
FAIL, within the time limit; correct solutions, numpy ones included, pass, eight at a time on two cores.
"""

from __future__ import annotations

import concurrent.futures
import json
import re
import tempfile
import textwrap
from pathlib import Path

import pytest
from conftest import run_micrograph
from exercise_solutions import CORRECT, NUMPY
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons import exercises
from lessons.exercises.progress import PROGRESS_FILE

ROOT = Path(__file__).resolve().parent.parent


def check(tmp_path: Path, name: str, source: str, **kw: object) -> exercises.Report:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return exercises.check(name, path, record=False, drawing=None, **kw)  # type: ignore[arg-type]


# --- honest mistakes that passed ------------------------------------------------------------------------

NO_MEMO = CORRECT["build_grad"].replace("    if V in grad_table:", "    if V is G.output:")


def test_build_grad_without_its_memo_fails_on_the_ladder(tmp_path: Path) -> None:
    assert "if V in grad_table" not in NO_MEMO
    report = check(tmp_path, "build_grad", NO_MEMO)
    assert not report.passed
    ladder = next(c for c in report.cases if c.name.startswith("the ladder"))
    assert not ladder.passed and ladder.mistake == "no-memo", report.text()
    assert report.failure is not None and report.failure.mistake == "no-memo"
    assert "if V in grad_table: return grad_table[V]" in report.text()


def test_mlp_backward_that_regularizes_the_biases_fails(tmp_path: Path) -> None:
    source = CORRECT["mlp_backward"].replace(
        "grad_b[k] = list(g)", "grad_b[k] = [g[m] + 2 * net.lam * net.b[k][m] for m in range(len(g))]"
    )
    report = check(tmp_path, "mlp_backward", source)
    assert report.failure is not None and report.failure.mistake == "bias-decay", report.text()
    assert any(c.passed for c in report.cases)  # λ = 0: the penalty on the biases is zero there


def named(tmp_path: Path, name: str, source: str, mistake: str) -> str:
    """Check ``source``, whose first failure must be ``mistake``: the report's text, its lines joined."""
    report = check(tmp_path, name, source)
    assert report.failure is not None and report.failure.mistake == mistake, report.text()
    return " ".join(report.text().split())


def test_only_the_first_consumer_is_named(tmp_path: Path) -> None:
    source = CORRECT["backprop"].replace("for C in G.get_consumers(v)", "for C in G.get_consumers(v)[:1]")
    assert "only the term(s) of its first consumer" in named(tmp_path, "backprop", source, "first-consumer")


def test_a_local_derivative_evaluated_twice_per_edge_is_named(tmp_path: Path) -> None:
    twice = "grad_table[C] * (tools.local_derivative(C, k) + tools.local_derivative(C, k)) / 2"
    source = CORRECT["backprop"].replace("grad_table[C] * tools.local_derivative(C, k)", twice)
    assert "evaluated twice per edge" in named(tmp_path, "backprop", source, "twice-per-edge")
    failed = [c for c in check(tmp_path, "backprop", source).cases if not c.passed]
    assert {c.mistake for c in failed} == {"twice-per-edge"}  # the large graphs too, whose calls are sampled


def test_forward_that_skips_u1_is_named(tmp_path: Path) -> None:
    skips = CORRECT["forward"].replace("range(G.n_inputs):", "range(1, G.n_inputs):")
    text = named(tmp_path, "forward", skips, "none-read")
    assert "u(1), the first input, is position 0: a loop from 1 skips it" in text
    guarded = skips.replace(
        "u[i] = G.nodes[i].op.f(*[u[j] for j in G.parents[i]])",
        "u[i] = G.nodes[i].op.f(*[u[j] if u[j] is not None else 1.0 for j in G.parents[i]])",
    )
    assert "u(1), the first input, was never set" in named(tmp_path, "forward", guarded, "skip-u1")


def test_the_output_is_named_and_the_tolerance_stated(tmp_path: Path) -> None:
    source = CORRECT["backprop"].replace(
        "grad_table = {nodes[n - 1]: 1.0}", "grad_table = {nodes[n - 1]: 2.0}"
    )
    report = check(tmp_path, "backprop", source)
    assert report.failure is not None and report.failure.mistake == "seed"
    assert report.failure.node == "u2 (the output z)", report.failure.node
    nearly = CORRECT["forward"].replace("return u", "return [v * (1 + 1e-8) for v in u]")
    report = check(tmp_path, "forward", nearly)
    assert report.failure is not None
    text = " ".join(report.text().split())
    assert "agree to 6 significant digits but differ by" in text and "relative 1e-09" in text


# --- delegation -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source, says",
    [
        ("def backprop(G):\n    return G.backprop()\n", "G.backprop is micrograph's own algorithm"),
        ("from micrograph import backprop\n", "asks you to write Algorithm 6.2"),
        ("from micrograph.backprop import backprop\n", "asks you to write Algorithm 6.2"),
        (
            "def backprop(G):\n    G.output.backward()\n    return {v: v.grad for v in G.nodes}\n",
            "asks you to write Algorithm 6.2",
        ),
        (
            "from lessons import exercises\nbackprop = exercises.reference('backprop').backprop\n",
            "is not available while your code is checked",
        ),
    ],
)
def test_micrograph_s_own_algorithm_is_out_of_reach(tmp_path: Path, source: str, says: str) -> None:
    report = check(tmp_path, "backprop", source)
    assert not report.passed and report.score == 0, report.text()
    assert says in " ".join(report.text().split())
    assert report.failure is not None and report.failure.mistake in ("delegation", "load")


@pytest.mark.parametrize("name", list(exercises.EXERCISES))
def test_the_reference_is_refused_for_every_exercise(tmp_path: Path, name: str) -> None:
    functions = exercises.EXERCISES[name].functions
    source = f"from lessons import exercises\n_ns = exercises.reference({name!r})\n" + "".join(
        f"{f} = getattr(_ns, {f!r})\n" for f in functions
    )
    report = check(tmp_path, name, source)
    assert not report.passed and report.score == 0, report.text()
    with pytest.raises(TypeError, match="micrograph's own"):
        exercises.check(name, exercises.reference(name), record=False)


# --- attacks on the judge -------------------------------------------------------------------------------

REACH = 'from collections import _sys\n_import = _sys.modules["builtins"].__import__\n'
"""How a solution reaches modules its exercise does not allow (os, sys, time ...): through a module it may
import. The allow-list says what an exercise asks for; it is no wall, so the attacks below get os and sys
this way and the runner's limits, not the allow-list, must hold them."""

ATTACKS = {
    "a forged answer on every pipe, then os._exit(0)": """
        gc, json, os = map(_import, ("gc", "json", "os"))
        def backprop(G):
            for fd in range(0, 64):
                for message in ({"op": "done", "passed": True}, {"id": 2, "ok": True, "result": {}}):
                    try:
                        os.write(fd, (json.dumps(message) + "\\n").encode())
                    except OSError:
                        pass
            for o in gc.get_objects():
                if hasattr(o, "write") and hasattr(o, "flush"):
                    try:
                        o.write('{"passed": true}\\n'); o.flush()
                    except Exception:
                        pass
            os._exit(0)
    """,
    "the judge's expected values from the frames": """
        sys = _import("sys")
        def backprop(G):
            found = None
            f = sys._getframe()
            while f is not None:
                for name in ("expected", "key", "want", "table"):
                    if isinstance(f.f_locals.get(name), (dict, list)):
                        found = f.f_locals[name]
                f = f.f_back
            return found if isinstance(found, dict) else {v: 0.0 for v in G.nodes}
    """,
    "a float whose __float__ returns the caller's value": """
        sys = _import("sys")
        class Liar(float):
            def __float__(self):
                f = sys._getframe(1)
                return float(f.f_locals.get("b", f.f_locals.get("expected", 0.0)))
            def __eq__(self, other):
                return True
            __hash__ = float.__hash__
        def backprop(G):
            return {v: Liar(0.0) for v in G.nodes}
    """,
    "math.isclose patched": """
        import math
        math.isclose = lambda *a, **k: True
        def backprop(G):
            return {v: 0.0 for v in G.nodes}
    """,
    "the checker's classes patched": """
        import lessons.exercises.report as report
        report.Report.passed = property(lambda self: True)
        def backprop(G):
            return {}
    """,
    "a thread flooding every descriptor while the case loops": """
        os, threading = map(_import, ("os", "threading"))
        def flood():
            while True:
                for fd in range(0, 32):
                    try:
                        os.write(fd, b'{"id": 1, "ok": true, "result": {"dict": []}}\\n')
                    except OSError:
                        pass
        threading.Thread(target=flood, daemon=True).start()
        def backprop(G):
            while True:
                pass
    """,
}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_an_attack_on_the_judge_ends_as_a_fail(tmp_path: Path, name: str) -> None:
    path = tmp_path / "backprop.py"
    path.write_text(REACH + textwrap.dedent(ATTACKS[name]), encoding="utf-8")
    done = run_micrograph(
        "exercise",
        "check",
        "backprop.py",
        "--json",
        "--time-limit",
        "0.5",
        "--wall-limit",
        "60",
        "--no-progress",
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert data["passed"] is False and data["score"] == 0, data
    assert data["checks_run"] == 14  # every case ran, and each failed


QUADRATIC_TOPO = (
    CORRECT["topo"]
    .replace("seen, stack = [], set(),", "seen, stack = [], [],")
    .replace("seen.add(", "seen.append(")
)

FORGED_TIMES = {
    "its work done in a process whose first thread has ended (the kernel shows it as a zombie)": """
        os, threading, ctypes = (_import(m) for m in ("os", "threading", "ctypes"))
        EXIT = {"x86_64": 60, "aarch64": 93}[os.uname().machine]  # SYS_exit: this thread alone
        _quadratic = topological_order
        def topological_order(z):
            r, w = os.pipe()
            if os.fork() == 0:
                def work():
                    os.write(w, b",".join(b"%d" % id(v) for v in _quadratic(z)))
                    os._exit(0)
                threading.Thread(target=work).start()
                ctypes.CDLL(None).syscall(EXIT, 0)
            os.close(w)
            data = b""
            while chunk := os.read(r, 1 << 20):
                data += chunk
            os.close(r)
            return [ctypes.cast(int(x), ctypes.py_object).value for x in data.split(b",")]
    """,
    "every clock of its process stopped": """
        time = _import("time")
        for clock in ("thread_time", "process_time", "perf_counter", "monotonic", "time"):
            setattr(time, clock, lambda: 0.0)
    """,
    "its work done in a thread that has ended when it answers": """
        threading = _import("threading")
        _topological_order = topological_order
        def topological_order(z):
            out = []
            worker = threading.Thread(target=lambda: out.append(_topological_order(z)))
            worker.start()
            worker.join()
            return out[0]
    """,
}


@pytest.mark.parametrize("how", list(FORGED_TIMES))
def test_a_time_that_grows_as_n_squared_is_named_however_the_solution_hides_it(
    tmp_path: Path, how: str
) -> None:
    assert QUADRATIC_TOPO != CORRECT["topo"]
    source = REACH + textwrap.dedent(QUADRATIC_TOPO) + textwrap.dedent(FORGED_TIMES[how])
    report = check(tmp_path, "topo", source)
    growth = "time against size: long graphs of 400 to 3,200 nodes"
    assert [c.name for c in report.cases if not c.passed] == [growth]
    assert report.failure is not None and report.failure.mistake == "growth", report.text()


@pytest.mark.slow  # seconds: run by make test-slow (and CI), keeping make test within minutes
def test_the_wall_clock_limit_cannot_be_reset(tmp_path: Path) -> None:
    source = """
        time = _import("time")
        def backprop(G):
            time.sleep(1000)
    """
    report = check(tmp_path, "backprop", REACH + textwrap.dedent(source), time_limit=0.2, wall_limit=3.0)
    assert not report.passed and report.failure is not None and report.failure.mistake == "timeout"
    assert report.seconds < 60


@pytest.mark.slow
def test_memory_is_limited(tmp_path: Path) -> None:
    report = check(
        tmp_path,
        "backprop",
        "def backprop(G):\n    x = bytearray(10 ** 9)\n    return x\n",
        memory_limit=256 << 20,
    )
    assert not report.passed and report.failure is not None
    assert report.failure.mistake in ("memory", "exception", "crash"), report.text()


# --- every case scored ----------------------------------------------------------------------------------


def test_a_timeout_on_the_last_case_hides_none_of_the_others(tmp_path: Path) -> None:
    source = CORRECT["backprop"].replace(
        "    nodes = G.nodes\n", "    nodes = G.nodes\n    while len(nodes) > 3000:\n        pass\n"
    )
    report = check(tmp_path, "backprop", source, time_limit=0.5)
    assert [c.passed for c in report.cases] == [True] * 13 + [False], report.text()
    assert report.score == 13 and report.max_score == 14
    assert "13 of 14 checks passed: 13 of 14 points" in report.text()
    assert report.failure is not None and report.failure.mistake == "timeout"


def test_a_crash_in_one_case_restarts_the_runner_for_the_next(tmp_path: Path) -> None:
    source = REACH + CORRECT["backprop"].replace(
        "    nodes = G.nodes\n",
        "    nodes = G.nodes\n    if len(nodes) == 2:\n        _import('os')._exit(7)\n",
    )
    report = check(tmp_path, "backprop", source)
    assert not report.cases[0].passed and all(c.passed for c in report.cases[1:]), report.text()
    assert report.failure is not None and report.failure.mistake == "crash" and "exit code 7" in report.text()


def test_a_keyboard_interrupt_the_solution_raises_is_its_exception_not_a_crash(tmp_path: Path) -> None:
    """Ctrl-C at a terminal reaches the judge, never the solution's side: a KeyboardInterrupt there is the
    solution's own, reported with its line, and the next case runs in the same interpreter."""
    source = CORRECT["backprop"].replace(
        "    nodes = G.nodes\n",
        "    nodes = G.nodes\n    if len(nodes) == 2:\n        raise KeyboardInterrupt\n",
    )
    report = check(tmp_path, "backprop", source)
    assert not report.cases[0].passed and all(c.passed for c in report.cases[1:]), report.text()
    text = report.text()
    assert "raised KeyboardInterrupt" in text and "crash" not in text and "exit code" not in text, text
    assert "child.py" not in text and 'backprop.py", line 8, in backprop' in text, text
    loaded = check(tmp_path, "backprop", "raise KeyboardInterrupt\n" + CORRECT["backprop"]).text()
    assert "KeyboardInterrupt" in loaded and "crash" not in loaded and "exit code" not in loaded, loaded


def test_a_long_print_is_capped_and_fd_1_does_not_break_json(tmp_path: Path) -> None:
    source = REACH + CORRECT["backprop"].replace(
        "    return grad_table",
        "    for i in range(10_000):\n        print(i)\n"
        "    _import('os').write(1, b'raw\\n')\n    return grad_table",
    )
    (tmp_path / "backprop.py").write_text(source, encoding="utf-8")
    done = run_micrograph("exercise", "check", "backprop.py", "--json", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    data = json.loads(done.stdout)
    out = data["output"]
    calls, rest = divmod(out["lines"], 10_001)  # 13 cases, and the growth case's 4 chains, each asked again
    assert rest == 0 and 17 <= calls <= 21  # when it took under judge.AGAIN seconds
    assert out["cut"] == out["lines"] - 40
    assert out["text"].splitlines()[0] == "0" and "more line(s) not shown" in out["text"]
    text = run_micrograph("exercise", "check", "backprop.py", "--no-progress", cwd=tmp_path).stdout
    said = re.search(r"([\d,]+) line\(s\), ([\d,]+) of them not shown", text)
    assert len(text.splitlines()) < 80 and said is not None, text
    lines, cut = (int(n.replace(",", "")) for n in said.groups())
    assert lines % 10_001 == 0 and cut == lines - 40


# --- correct solutions ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(NUMPY))
def test_correct_numpy_solutions_pass(tmp_path: Path, name: str) -> None:
    report = check(tmp_path, name, NUMPY[name])
    assert report.passed, report.text()


@pytest.mark.slow
def test_eight_concurrent_checks_of_a_correct_solution_all_pass(tmp_path: Path) -> None:
    for k in range(8):
        (tmp_path / f"s{k}").mkdir()
        (tmp_path / f"s{k}" / "backprop.py").write_text(CORRECT["backprop"], encoding="utf-8")
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        runs = list(
            pool.map(
                lambda k: run_micrograph(
                    "exercise", "check", "backprop.py", "--json", cwd=tmp_path / f"s{k}"
                ),
                range(8),
            )
        )
    for done in runs:
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr
        assert json.loads(done.stdout)["passed"] is True


@pytest.mark.slow
def test_concurrent_checks_in_one_directory_lose_no_progress(tmp_path: Path) -> None:
    for name in exercises.EXERCISES:
        (tmp_path / f"{name}.py").write_text(CORRECT[name], encoding="utf-8")
    with concurrent.futures.ThreadPoolExecutor(7) as pool:
        runs = list(
            pool.map(
                lambda n: run_micrograph("exercise", "check", f"{n}.py", cwd=tmp_path), exercises.EXERCISES
            )
        )
    assert all(r.returncode == 0 for r in runs), [r.stdout[-500:] for r in runs]
    recorded = json.loads((tmp_path / PROGRESS_FILE).read_text(encoding="utf-8"))["exercises"]
    assert set(recorded) == set(exercises.EXERCISES)
    assert all(e["passed"] and e["last"] == "passed" and len(e["sha256"]) == 64 for e in recorded.values())


def test_the_seed_varies_the_random_cases_and_is_printed(tmp_path: Path) -> None:
    report = check(tmp_path, "backprop", CORRECT["backprop"], seed=7)
    assert report.passed and report.seed == 7 and "seed 7" in report.text()
    names = [c.name for c in report.cases if c.name.startswith("random DAG")]
    assert names == [f"random DAG (seed {7000 + s}): shared and repeated parents" for s in range(1, 5)]


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(min_value=1, max_value=2**31 - 1))
@pytest.mark.slow
def test_correct_solutions_pass_and_a_no_memo_build_grad_fails_under_any_seed(seed: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for name, source in CORRECT.items():
            report = check(Path(tmp), name, source, seed=seed)
            assert report.passed, report.text()
        report = check(Path(tmp), "build_grad", NO_MEMO, seed=seed)
        assert not report.passed and "no-memo" in {c.mistake for c in report.cases}, report.text()


def test_an_answer_larger_than_the_judge_reads_is_refused_unread(tmp_path: Path) -> None:
    source = REACH + textwrap.dedent("""
        os = _import("os")
        def topological_order(z):
            line = b'{"id": 0, "x": "' + b"a" * (5 << 20) + b'"}\\n'  # more than MAX_ANSWER, 4 MiB
            for fd in range(3, 256):
                try:
                    os.write(fd, line)
                except OSError:
                    pass
            return []
    """)
    report = check(tmp_path, "topo", source)
    assert report.score == 0 and report.failure is not None
    assert "answer is larger than 4 MiB" in " ".join(report.text().split()), report.text()
