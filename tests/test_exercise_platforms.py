"""A check's result as Gradescope's and PrairieLearn's results.json: every field, its type, the arithmetic.

The field names are those of Gradescope's autograder specification ("Output format",
https://gradescope-autograders.readthedocs.io/en/latest/specs/) and PrairieLearn's external grading
("Grading results", https://prairielearn.readthedocs.io/en/latest/externalGrading/); the sets below are
the fields those pages document, so a misspelt key fails here.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest
from exercise_solutions import CORRECT
from hypothesis import given
from hypothesis import strategies as st

from lessons.exercises import judges
from lessons.exercises.platforms import (
    MAX_IMAGE_BYTES,
    diagnosis_text,
    to_gradescope,
    to_platform,
    to_prairielearn,
    unchecked_result,
)
from lessons.exercises.report import printed as printed_lines

GRADESCOPE_TOP = {
    "score",
    "execution_time",
    "output",
    "output_format",
    "test_output_format",
    "test_name_format",
    "visibility",
    "stdout_visibility",
    "extra_data",
    "tests",
    "leaderboard",
}
GRADESCOPE_TEST = {
    "score",
    "max_score",
    "status",
    "name",
    "name_format",
    "number",
    "output",
    "output_format",
    "tags",
    "visibility",
    "extra_data",
}
PRAIRIELEARN_TOP = {"gradable", "score", "message", "output", "images", "tests", "format_errors"}
PRAIRIELEARN_TEST = {"name", "description", "points", "max_points", "message", "output", "images"}

SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="5" height="5"/></svg>'

# A student's Algorithm 6.2, right, and with the sum over consumers overwritten instead of added.
CORRECT_BACKPROP = CORRECT["backprop"]

OVERWRITE_BACKPROP = CORRECT_BACKPROP.replace(
    """        grad_table[v] = sum(
            grad_table[C] * tools.local_derivative(C, k)
            for C in G.get_consumers(v)
            for k, p in enumerate(C.inputs)
            if p is v
        )
""",
    """        for C in G.get_consumers(v):
            for k, p in enumerate(C.inputs):
                if p is v:
                    grad_table[v] = grad_table[C] * tools.local_derivative(C, k)
""",
)


def case(
    name: str, passed: bool, points: float = 1.0, headline: str = "", mistake: str = ""
) -> dict[str, Any]:
    return {
        "name": name,
        "passed": passed,
        "points": points if passed else 0.0,
        "max_points": points,
        "headline": headline,
        "mistake": mistake,
    }


def sample() -> dict[str, Any]:
    """A failing backprop check: 12 cases of 1 point, 9 passed; the first failure diagnosed in full."""
    cases = [case(f"case {k}", True) for k in range(9)]
    cases[2] = case("a * a: one node takes the same parent twice", True)
    cases += [
        case(
            "a node with two consumers",
            False,
            headline="grad_table[u1] is 3, expected 5",
            mistake="overwrite",
        ),
        case("figure 6.9's chain", False, headline="grad_table[u2] is 1, expected 2", mistake="overwrite"),
        case("random DAG (seed 0, 1)", False, headline="grad_table[u4] is wrong"),
    ]
    return {
        "exercise": "backprop",
        "title": "back-propagation, grad_table (Algorithm 6.2)",
        "seed": 7,
        "passed": False,
        "score": 9.0,
        "max_score": 12.0,
        "checks_run": 12,
        "checks_passed": 9,
        "cases": cases,
        "first_failure": {
            "case": "a node with two consumers",
            "headline": "grad_table[u1] is 3, expected 5",
            "details": ["u1 = x has two consumers, u2 and u3", "the term of u3 is missing from the sum"],
            "mistake": "overwrite",
            "hint": "add each consumer's term into grad_table[u(j)] instead of replacing it",
            "book": "The book (section 6.5.6): “we simply sum the gradients arriving from different paths”",
            "traceback": '  File "backprop.py", line 9, in backprop\n    grad_table[v] = x\n',
            "node": "u1",
            "expected": 5.0,
            "actual": 3.0,
            "drawing_note": "",
        },
        "output": {"text": "<b>debug</b> first\n...\nlast", "lines": 400, "cut": 380},
        "drawing": "backprop.failure.svg",
        "seconds": 0.412,
        "solution_sha256": "ab" * 32,
    }


def syntax_error() -> dict[str, Any]:
    """A solution that could not even load: no case ran."""
    r = sample()
    r.update(
        passed=False,
        score=0.0,
        checks_run=0,
        checks_passed=0,
        cases=[],
        drawing=None,
        output={"text": "", "lines": 0, "cut": 0},
    )
    r["first_failure"] = {
        "case": "loading backprop.py",
        "headline": "backprop.py has a syntax error (line 3).",
        "details": [],
        "mistake": "syntax",
        "hint": "",
        "book": "",
        "node": "",
        "expected": None,
        "actual": None,
        "traceback": '  File "backprop.py", line 3\n    def backprop(G)\n                  ^\n'
        "SyntaxError: expected ':'\n",
        "drawing_note": "",
    }
    return r


def check_gradescope(out: dict[str, Any], result: dict[str, Any]) -> None:
    """The shape of Gradescope's results.json and its arithmetic against the check's result."""
    assert set(out) <= GRADESCOPE_TOP
    assert isinstance(out["score"], float) and out["score"] == result["score"]
    assert isinstance(out["execution_time"], float) and out["execution_time"] >= 0
    assert isinstance(out["output"], str) and out["output_format"] == "text"
    assert isinstance(out["tests"], list) and isinstance(out["extra_data"], dict)
    for t in out["tests"]:
        assert set(t) <= GRADESCOPE_TEST
        assert isinstance(t["name"], str) and t["name"]
        assert isinstance(t["score"], float) and isinstance(t["max_score"], float)
        assert 0 <= t["score"] <= t["max_score"] or t["max_score"] == 0 == t["score"]
        assert t["status"] in ("passed", "failed") and t["visibility"] == "visible"
        assert isinstance(t["output"], str)
    assert sum(t["score"] for t in out["tests"]) == pytest.approx(result["score"])
    assert sum(t["max_score"] for t in out["tests"]) == pytest.approx(
        sum(c["max_points"] for c in result["cases"])
    )
    extra = out["extra_data"]
    assert extra["exercise"] == result["exercise"] and extra["seed"] == result["seed"]
    assert extra["passed"] is result["passed"]
    assert (extra["score"], extra["max_score"]) == (result["score"], result["max_score"])
    assert extra["mistake"] == ((result["first_failure"] or {}).get("mistake") or "")
    json.dumps(out, allow_nan=False)  # valid JSON: no NaN, no infinity, nothing unserialisable


def check_prairielearn(out: dict[str, Any], result: dict[str, Any]) -> None:
    """The shape of PrairieLearn's results.json and its arithmetic against the check's result."""
    assert set(out) - {"extra_data"} <= PRAIRIELEARN_TOP
    assert out["gradable"] is True
    assert isinstance(out["score"], float) and 0.0 <= out["score"] <= 1.0
    expected = result["score"] / result["max_score"] if result["max_score"] else 0.0
    assert out["score"] == pytest.approx(expected)
    assert isinstance(out["message"], str) and isinstance(out["output"], str)
    assert isinstance(out["images"], list)
    for image in out["images"]:
        assert set(image) == {"label", "url"} and image["url"].startswith("data:image/svg+xml;base64,")
    for t in out["tests"]:
        assert set(t) <= PRAIRIELEARN_TEST
        assert isinstance(t["name"], str) and isinstance(t["message"], str) and isinstance(t["output"], str)
        assert isinstance(t["points"], float) and isinstance(t["max_points"], float)
    assert sum(t["points"] for t in out["tests"]) == pytest.approx(result["score"])
    assert out["extra_data"]["exercise"] == result["exercise"]
    assert len(json.dumps(out, allow_nan=False).encode()) < 1_000_000  # PrairieLearn's limit: 1 MB


def test_gradescope_results_json() -> None:
    r = sample()
    out = to_gradescope(r, SVG)
    check_gradescope(out, r)
    assert out["score"] == 9.0 and out["execution_time"] == 0.412
    assert [t["name"] for t in out["tests"]] == [c["name"] for c in r["cases"]]
    assert [t["status"] for t in out["tests"]] == ["passed"] * 9 + ["failed"] * 3
    assert [t["score"] for t in out["tests"]] == [1.0] * 9 + [0.0] * 3
    # the whole submission: the score, the first failure's headline and hint, what the code printed
    assert out["output"].splitlines()[:3] == [
        "exercise backprop: FAILED, 9 of 12 points (9 of 12 cases passed; random cases from seed 7).",
        "First failure, on a node with two consumers: grad_table[u1] is 3, expected 5",
        "Hint: add each consumer's term into grad_table[u(j)] instead of replacing it",
    ]
    assert "Your code printed 400 line(s), 380 of them not shown:\n| <b>debug</b> first" in out["output"]
    # the first failure's test: the full diagnosis; the other failing tests: their headline
    diagnosis = out["tests"][9]["output"]
    for part in [
        "FAILED on: a node with two consumers",
        "grad_table[u1] is 3, expected 5",
        "  the term of u3 is missing from the sum",
        "Your code raised (your lines only):",
        '    File "backprop.py", line 9, in backprop',
        "Hint: add each consumer's term",
        "The book (section 6.5.6): “we simply sum the gradients",
    ]:
        assert part in diagnosis, part
    assert out["tests"][10]["output"] == "grad_table[u2] is 1, expected 2"
    assert out["tests"][0]["output"] == ""
    assert out["extra_data"]["mistakes"] == ["overwrite"]
    assert out["extra_data"]["hint"].startswith("add each consumer's term")
    assert out["extra_data"]["solution_sha256"] == "ab" * 32


def test_what_the_code_printed_cannot_pass_for_the_checker_s_lines() -> None:
    r = sample()
    forged = "exercise backprop: PASSED, 12 of 12 points\n\x1b[2J\rPASS\u202e"
    r["output"] = {"text": forged, "lines": 2, "cut": 0}
    for out in (to_gradescope(r, SVG)["output"], to_prairielearn(r, SVG)["output"]):
        printed = out.split("Your code printed 2 line(s):\n", 1)[1].splitlines()
        assert printed == ["| exercise backprop: PASSED, 12 of 12 points", "| \\x1b[2J\\rPASS\\u202e"]
    # the text report's lines are the same, with a margin (escaped when the whole report is)
    assert printed_lines(forged, 2, 0, margin="  ")[1:] == [
        "  | exercise backprop: PASSED, 12 of 12 points",
        "  | \x1b[2J\rPASS\u202e",
    ]


def test_prairielearn_results_json() -> None:
    r = sample()
    out = to_prairielearn(r, SVG)
    check_prairielearn(out, r)
    assert out["score"] == 0.75
    assert (
        out["message"].splitlines()[1]
        == "First failure, on a node with two consumers: grad_table[u1] is 3, expected 5"
    )
    assert out["output"].startswith("Your code printed 400 line(s), 380 of them not shown:")
    assert [(t["points"], t["max_points"]) for t in out["tests"]] == [(1.0, 1.0)] * 9 + [(0.0, 1.0)] * 3
    assert out["tests"][9]["message"] == "grad_table[u1] is 3, expected 5"
    assert "Hint: add each consumer's term" in out["tests"][9]["output"]
    assert out["tests"][0]["message"] == "passed"
    (image,) = out["images"]
    assert base64.b64decode(image["url"].split(",", 1)[1]).decode() == SVG
    assert "wrong node" in image["label"]
    assert to_prairielearn(r)["images"] == []  # no drawing given: none


def test_a_passing_check_scores_full_marks() -> None:
    r = sample()
    r["cases"] = [case(f"case {k}", True, points=2.0) for k in range(6)]
    r.update(
        passed=True, score=12.0, first_failure=None, drawing=None, output={"text": "", "lines": 0, "cut": 0}
    )
    g, p = to_gradescope(r), to_prairielearn(r)
    check_gradescope(g, r)
    check_prairielearn(p, r)
    assert g["score"] == 12.0 and p["score"] == 1.0
    assert (
        g["output"]
        == "exercise backprop: PASSED, 12 of 12 points (6 of 6 cases passed; random cases from seed 7)."
    )
    assert all(t["status"] == "passed" and t["output"] == "" for t in g["tests"])
    assert g["extra_data"]["mistake"] == "" and g["extra_data"]["mistakes"] == []
    assert p["output"] == ""


def test_a_solution_that_does_not_load_gives_a_valid_zero() -> None:
    r = syntax_error()
    g, p = to_gradescope(r), to_prairielearn(r)
    check_gradescope(g, r)
    check_prairielearn(p, r)
    assert g["score"] == 0.0 and p["score"] == 0.0 and p["gradable"] is True
    (test,) = g["tests"]  # the diagnosis is shown as a test worth no points
    assert test["name"] == "loading backprop.py" and test["status"] == "failed"
    assert (test["score"], test["max_score"]) == (0.0, 0.0)
    assert "backprop.py has a syntax error (line 3)." in test["output"]
    assert "SyntaxError: expected ':'" in test["output"]
    assert g["output"].splitlines() == [
        "exercise backprop: score 0, no case could run.",
        "backprop.py has a syntax error (line 3).",
    ]
    assert g["extra_data"]["mistake"] == "syntax"
    assert p["tests"][0]["points"] == 0.0 and "syntax error" in p["message"]


def test_an_unchecked_submission_gives_a_valid_zero() -> None:
    r = unchecked_result(
        "forward", "there is no forward.py in your submission", seed=3, details=["files: a.py"]
    )
    # 0 of forward's maximum, every case listed (not 0 of 0), the diagnosis first, worth no points
    assert r["max_score"] == sum(p for _, p in judges.outline("forward", 3)) and [
        (c["name"], c["max_points"]) for c in r["cases"]
    ] == judges.outline("forward", 3)
    for platform in ("gradescope", "prairielearn"):
        out = to_platform(platform, r)
        assert out["score"] == 0.0
        assert out["extra_data"]["exercise"] == "forward" and out["extra_data"]["seed"] == 3
        assert out["extra_data"]["max_score"] == r["max_score"]
        test, *cases = out["tests"]
        assert "there is no forward.py in your submission\n  files: a.py" in test["output"]
        assert [t["name"] for t in cases] == [c["name"] for c in r["cases"]]
    g = to_gradescope(r)
    assert [(t["score"], t["max_score"]) for t in g["tests"]] == [(0.0, 0.0)] + [(0.0, 1.0)] * len(r["cases"])
    assert all(t["status"] == "failed" for t in g["tests"])
    assert g["tests"][1]["output"] == "not run: there is no forward.py in your submission"
    check_gradescope(to_gradescope(r), r)
    check_prairielearn(to_prairielearn(r), r)


def test_a_drawing_too_large_for_prairielearn_is_left_out_and_said() -> None:
    big = SVG.replace("</svg>", "<!--" + "x" * MAX_IMAGE_BYTES + "--></svg>")
    out = to_prairielearn(sample(), big)
    assert out["images"] == []
    assert "too large for PrairieLearn's 1 MB results and is left out" in out["message"]
    check_prairielearn(out, sample())


def test_bad_input_is_refused_with_the_field_named() -> None:
    with pytest.raises(TypeError, match="must be the dict of a check"):
        to_gradescope([])  # type: ignore[arg-type]
    for key in ("exercise", "passed", "score", "max_score", "cases"):
        r = sample()
        del r[key]
        with pytest.raises(ValueError, match=f"result has no '{key}'"):
            to_prairielearn(r)
    r = sample()
    r["score"] = 13.0
    with pytest.raises(ValueError, match=r"score 13\.0 must be a finite number from 0 to max_score 12\.0"):
        to_gradescope(r)
    r = sample()
    r["passed"] = "no"
    with pytest.raises(ValueError, match=r"result\['passed'\] must be bool"):
        to_gradescope(r)
    r = sample()
    r["score"] = True
    with pytest.raises(ValueError, match=r"result\['score'\] must be int or float"):
        to_gradescope(r)
    with pytest.raises(ValueError, match="svg must be the text of an SVG drawing"):
        to_prairielearn(sample(), "not a drawing")
    with pytest.raises(
        ValueError, match="there is no platform 'moodle'; the platforms are gradescope, prairielearn"
    ):
        to_platform("moodle", sample())


def test_the_result_given_is_not_changed() -> None:
    r = sample()
    before = copy.deepcopy(r)
    to_gradescope(r, SVG)
    to_prairielearn(r, SVG)
    assert r == before


def test_diagnosis_text_without_optional_parts() -> None:
    assert diagnosis_text({"case": "c", "headline": "h"}) == "FAILED on: c\nh"


@given(
    st.lists(
        st.tuples(
            st.booleans(), st.sampled_from([0.5, 1.0, 2.0, 3.0]), st.sampled_from(["", "overwrite", "skip"])
        ),
        min_size=1,
        max_size=20,
    ),
    st.integers(0, 2**31),
)
def test_random_results_keep_their_arithmetic(rows: list[tuple[bool, float, str]], seed: int) -> None:
    """Any mix of passed and failed cases: the tests add up to the score, the fraction is score / max."""
    cases = [
        case(f"case {k}", ok, points, headline="" if ok else f"case {k} is wrong", mistake="" if ok else m)
        for k, (ok, points, m) in enumerate(rows)
    ]
    score = sum(c["points"] for c in cases)
    top = sum(c["max_points"] for c in cases)
    failed = [c for c in cases if not c["passed"]]
    r = sample()
    r.update(
        cases=cases,
        score=score,
        max_score=top,
        passed=not failed,
        seed=seed,
        checks_run=len(cases),
        checks_passed=len(cases) - len(failed),
    )
    r["first_failure"] = (
        None if not failed else dict(r["first_failure"], case=failed[0]["name"], mistake=failed[0]["mistake"])
    )
    g, p = to_gradescope(r, SVG), to_prairielearn(r, SVG)
    check_gradescope(g, r)
    check_prairielearn(p, r)
    assert [t["status"] == "passed" for t in g["tests"]] == [c["passed"] for c in cases]
    assert p["score"] == pytest.approx(score / top)
    assert (p["score"] == 1.0) == (not failed)
    diagnosed = [t for t in g["tests"] if t["output"].startswith("FAILED on: ")]
    assert len(diagnosed) == (1 if failed else 0)
    expected_mistakes = list(dict.fromkeys(c["mistake"] for c in failed[:1] + failed if c["mistake"]))
    assert g["extra_data"]["mistakes"] == expected_mistakes


# --- real reports, once the check gives the scored dict ---------------------------------------------------


@pytest.fixture(scope="module")
def real_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Reports of a correct, a wrong and an unloadable backprop.py, checked by micrograph itself."""
    from lessons import exercises

    d = tmp_path_factory.mktemp("real")
    reports = {}
    for label, text in [
        ("syntax", "def backprop(G)\n"),
        ("wrong", OVERWRITE_BACKPROP),
        ("right", CORRECT_BACKPROP),
    ]:
        path = d / label / "backprop.py"
        path.parent.mkdir()
        path.write_text(text)
        reports[label] = exercises.check("backprop", path, record=False, drawing=None)
    return reports


def test_real_reports_give_valid_results(real_reports: dict[str, Any]) -> None:
    for label, report in real_reports.items():
        result = report.as_dict()
        svg = report.failure.svg if report.failure is not None else None
        g, p = to_gradescope(result, svg), to_prairielearn(result, svg)
        check_gradescope(g, result)
        check_prairielearn(p, result)
        if label == "right":
            assert g["score"] == result["max_score"] > 0 and p["score"] == 1.0 and p["images"] == []
        elif label == "wrong":
            assert 0 < g["score"] < result["max_score"] and 0 < p["score"] < 1
            assert g["extra_data"]["mistake"] == "overwrite" and len(p["images"]) == 1
        else:
            assert g["score"] == 0.0 and p["score"] == 0.0 and "syntax error" in g["output"]
