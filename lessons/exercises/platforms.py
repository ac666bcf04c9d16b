"""A check's result as a course platform reads it: Gradescope's and PrairieLearn's ``results.json``.

The input is the dict a check gives (``micrograph exercise check FILE --format json``, or
``Report.as_dict()``): the exercise, the seed of its random cases, the score case by case, the first
failure diagnosed in full, the student's printed output (capped). The functions here only reshape it; they
never run the student's code and never change a score, so what a platform records is what the judge decided.

- :func:`to_gradescope` follows Gradescope's autograder specification, "Output format"
  (https://gradescope-autograders.readthedocs.io/en/latest/specs/): top-level ``score`` (which overrides
  the tests' total), ``execution_time``, ``output`` with ``output_format`` ``"text"``, ``extra_data``, and
  ``tests`` with ``name``, ``score``, ``max_score``, ``status``, ``output``, ``visibility``.
- :func:`to_prairielearn` follows PrairieLearn's "External Grading", "Grading results"
  (https://prairielearn.readthedocs.io/en/latest/externalGrading/): ``gradable``, ``score`` in [0, 1],
  ``message``, ``output``, ``images`` (``label``, ``url`` as a ``data:`` URI) and ``tests`` with ``name``,
  ``points``, ``max_points``, ``message``, ``output``. The file must stay under 1 MB: a drawing larger
  than :data:`MAX_IMAGE_BYTES` is left out and the message says so.

Both carry ``extra_data`` (Gradescope's field; PrairieLearn keeps any further key of results.json), which
:mod:`lessons.exercises.classreport` reads to summarise a class: the exercise, the seed, the points, the
recognised mistakes and the hint.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import base64
import math
from typing import Any

from lessons.exercises.report import printed, visible

__all__ = ["PLATFORMS", "GRADESCOPE_SPEC", "PRAIRIELEARN_SPEC", "MAX_IMAGE_BYTES", "to_gradescope",
           "to_prairielearn", "to_platform", "diagnosis_text", "unchecked_result"]  # fmt: skip

PLATFORMS = ("gradescope", "prairielearn")
"""The course platforms a result can be written for (``--format``, ``--platform``)."""

GRADESCOPE_SPEC = "https://gradescope-autograders.readthedocs.io/en/latest/specs/"
PRAIRIELEARN_SPEC = "https://prairielearn.readthedocs.io/en/latest/externalGrading/"

MAX_IMAGE_BYTES = 512 * 1024
"""The largest failure drawing (SVG bytes) put into PrairieLearn's results.json, whose limit is 1 MB
(base64 makes the drawing a third larger)."""

_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "exercise": str,
    "passed": bool,
    "score": (int, float),
    "max_score": (int, float),
    "cases": list,
}


def _checked(result: Any) -> dict[str, Any]:
    """The result itself, after checking the fields every platform needs.

    Raises:
        TypeError: ``result`` is not a dict.
        ValueError: a required field is missing, has the wrong type, or a score is not a finite number
            between 0 and ``max_score``.
    """
    if not isinstance(result, dict):
        raise TypeError(f"result must be the dict of a check (Report.as_dict()), got {type(result).__name__}")
    for key, kind in _REQUIRED.items():
        if key not in result:
            raise ValueError(f"result has no {key!r}: it is not the result of a micrograph exercise check")
        value = result[key]
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise ValueError(f"result[{key!r}] must be {_kind(kind)}, got {value!r}")
    score, top = float(result["score"]), float(result["max_score"])
    if not (math.isfinite(score) and math.isfinite(top) and 0 <= score <= top):
        raise ValueError(f"result's score {score!r} must be a finite number from 0 to max_score {top!r}")
    for k, case in enumerate(result["cases"]):
        if not isinstance(case, dict) or not isinstance(case.get("name"), str):
            raise ValueError(f"result['cases'][{k}] must be a dict with a 'name', got {case!r}")
    failure = result.get("first_failure")
    if failure is not None and not isinstance(failure, dict):
        raise ValueError(f"result['first_failure'] must be a dict or None, got {failure!r}")
    return result


def _kind(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def diagnosis_text(failure: dict[str, Any]) -> str:
    """The first failure's full diagnosis as plain text: headline, details, traceback, hint, the book.

    Args:
        failure: the ``first_failure`` dict of a check's result.

    Returns:
        Lines joined by newlines (Unix line endings, as Gradescope asks), no trailing newline.
    """
    lines = [f"FAILED on: {_text(failure.get('case'))}", _text(failure.get("headline"))]
    lines += ["  " + _text(d) for d in failure.get("details") or []]
    traceback = _text(failure.get("traceback")).rstrip()
    if traceback:
        lines.append("Your code raised (your lines only):")
        lines += ["  " + t for t in traceback.splitlines()]
    if failure.get("hint"):
        lines.append(f"Hint: {_text(failure['hint'])}")
    if failure.get("book"):
        lines.append(_text(failure["book"]))
    if failure.get("drawing_note"):
        lines.append(f"(Drawing: {_text(failure['drawing_note'])})")
    return "\n".join(line for line in lines if line)


def _points(x: Any) -> float:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else 0.0


def _summary_line(result: dict[str, Any]) -> str:
    cases = result["cases"]
    passed = sum(bool(c.get("passed")) for c in cases)
    verdict = "PASSED" if result["passed"] else "FAILED"
    return (
        f"exercise {result['exercise']}: {verdict}, {_number(result['score'])} of "
        f"{_number(result['max_score'])} points ({passed} of {len(cases)} cases passed; "
        f"random cases from seed {result.get('seed', 0)})."
    )


def _number(x: Any) -> str:
    return f"{float(x):g}"


def _message(result: dict[str, Any]) -> str:
    """The words for the whole submission: the score, then the first failure's headline and hint."""
    failure: dict[str, Any] = result.get("first_failure") or {}
    if not result["cases"]:
        headline = _text(failure.get("headline"))
        lines = [f"exercise {result['exercise']}: score 0, no case could run.", headline]
    else:
        lines = [_summary_line(result)]
        if failure:
            lines.append(f"First failure, on {_text(failure.get('case'))}: {_text(failure.get('headline'))}")
    if failure.get("hint"):
        lines.append(f"Hint: {_text(failure['hint'])}")
    return "\n".join(line for line in lines if line)


def _printed(result: dict[str, Any]) -> str:
    """What the student's code printed (already capped by the check), with how much was cut, as the text
    report has it (:func:`~lessons.exercises.report.printed`): each line behind ``| ``, its control
    characters escaped, so that nothing printed reads as the checker's own line (a verdict, an escape
    sequence that rewrites the page)."""
    out = result.get("output") or {}
    text = _text(out.get("text")) if isinstance(out, dict) else ""
    if not text:
        return ""
    lines, cut = out.get("lines"), out.get("cut")
    count = lines if isinstance(lines, int) else len(text.splitlines())
    return visible("\n".join(printed(text.rstrip(), count, cut if isinstance(cut, int) else 0)))


def _rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per case (name, points, max_points, passed, headline, output); the first failure's row
    carries the full diagnosis. A failure outside every case (the file could not be loaded) is a row of
    its own worth no points, so the diagnosis is always shown."""
    failure = result.get("first_failure") or None
    diagnosed = False
    rows = []
    for case in result["cases"]:
        row = {
            "name": case["name"],
            "points": _points(case.get("points")),
            "max_points": _points(case.get("max_points")),
            "passed": bool(case.get("passed")),
            "headline": _text(case.get("headline")),
            "output": _text(case.get("headline")),
        }
        if failure and not diagnosed and case["name"] == failure.get("case"):
            row["output"], diagnosed = diagnosis_text(failure), True
        rows.append(row)
    if failure and not diagnosed:
        rows.insert(
            0,
            {
                "name": _text(failure.get("case")) or "the submission",
                "points": 0.0,
                "max_points": 0.0,
                "passed": False,
                "headline": _text(failure.get("headline")),
                "output": diagnosis_text(failure),
            },
        )
    return rows


def _mistakes(result: dict[str, Any]) -> list[str]:
    """The recognised mistakes (codes) of the result, the first failure's first, each once."""
    failure = result.get("first_failure") or {}
    codes = [_text(failure.get("mistake"))] + [_text(c.get("mistake")) for c in result["cases"]]
    return list(dict.fromkeys(c for c in codes if c))


def _extra_data(result: dict[str, Any]) -> dict[str, Any]:
    failure = result.get("first_failure") or {}
    return {
        "exercise": result["exercise"],
        "title": _text(result.get("title")),
        "seed": result.get("seed", 0),
        "passed": result["passed"],
        "score": float(result["score"]),
        "max_score": float(result["max_score"]),
        "checks_run": result.get("checks_run", len(result["cases"])),
        "checks_passed": result.get("checks_passed", sum(bool(c.get("passed")) for c in result["cases"])),
        "mistake": _text(failure.get("mistake")),
        "hint": _text(failure.get("hint")),
        "mistakes": _mistakes(result),
        "solution_sha256": _text(result.get("solution_sha256")),
    }


def to_gradescope(result: dict[str, Any], svg: str | None = None) -> dict[str, Any]:
    """A check's result as Gradescope's ``results.json``.

    Fields, as Gradescope's specification names them (https://gradescope-autograders.readthedocs.io/en/
    latest/specs/, "Output format"): ``score`` (the check's points; it overrides the tests' total),
    ``execution_time`` (seconds), ``output`` (the score, the first failure's headline and hint, and what the
    student's code printed) with ``output_format`` ``"text"`` (so nothing the student printed is read as
    HTML), ``tests`` (one per case: ``name``, ``score``, ``max_score``, ``status`` ``"passed"`` or
    ``"failed"``, ``output`` (the case's headline; for the first failure its full diagnosis),
    ``visibility`` ``"visible"``), and ``extra_data`` (the exercise, seed, points, recognised mistakes,
    hint, the solution's hash). A solution that could not be loaded (or checked: :func:`unchecked_result`)
    gets score 0 of the exercise's maximum: every case, failed, and first a test worth no points holding
    the diagnosis.

    Args:
        result: the dict of a check (``Report.as_dict()``, ``--format json``).
        svg: the failure drawing; Gradescope shows text only, so it is not included (the argument is
            accepted so that both platforms are called alike).

    Returns:
        A JSON-ready dict.

    Raises:
        TypeError: ``result`` is not a dict. ValueError: it lacks a field of the check's result, or its
        score is not between 0 and max_score.
    """
    _checked(result)
    output = _message(result)
    printed = _printed(result)
    tests = [
        {
            "name": row["name"],
            "score": row["points"],
            "max_score": row["max_points"],
            "status": "passed" if row["passed"] else "failed",
            "output": row["output"],
            "visibility": "visible",
        }
        for row in _rows(result)
    ]
    return {
        "score": float(result["score"]),
        "execution_time": round(_points(result.get("seconds")), 3),
        "output": output + ("\n\n" + printed if printed else ""),
        "output_format": "text",
        "tests": tests,
        "extra_data": _extra_data(result),
    }


def _image(svg: str) -> tuple[list[dict[str, str]], str]:
    """PrairieLearn's ``images`` for the drawing, or none and why."""
    if not isinstance(svg, str) or "<svg" not in svg:
        raise ValueError(f"svg must be the text of an SVG drawing, got {svg!r:.60}")
    data = svg.encode("utf-8")
    if len(data) > MAX_IMAGE_BYTES:
        why = (
            f"The drawing of the failure ({len(data) // 1024} KB) is too large for PrairieLearn's "
            f"1 MB results and is left out."
        )
        return [], why
    url = "data:image/svg+xml;base64," + base64.b64encode(data).decode("ascii")
    return [{"label": "The failure: G with the first wrong node and its edges in red", "url": url}], ""


def to_prairielearn(result: dict[str, Any], svg: str | None = None) -> dict[str, Any]:
    """A check's result as PrairieLearn's external grader ``results.json``.

    Fields, as PrairieLearn's documentation names them (https://prairielearn.readthedocs.io/en/latest/
    externalGrading/, "Grading results"): ``gradable`` (true: a file that does not load is the student's
    to fix and scores 0, as on Gradescope), ``score`` (points / max points, in [0, 1]), ``message`` (the
    score, the first failure's headline and hint), ``output`` (what the student's code printed), ``tests``
    (one per case: ``name``, ``points``, ``max_points``, ``message`` (the case's headline), ``output``
    (for the first failure its full diagnosis)), ``images`` (the failure drawing as
    ``{"label", "url": "data:image/svg+xml;base64,..."}``, when there is one and it fits the 1 MB limit),
    and ``extra_data`` as in :func:`to_gradescope`.

    Args:
        result: the dict of a check (``Report.as_dict()``, ``--format json``).
        svg: the failure drawing (``Report.failure.svg``), or None.

    Returns:
        A JSON-ready dict.

    Raises:
        TypeError: ``result`` is not a dict. ValueError: it lacks a field of the check's result, its
        score is not between 0 and max_score, or ``svg`` is not SVG text.
    """
    _checked(result)
    images, why = _image(svg) if svg is not None else ([], "")
    top = float(result["max_score"])
    score = float(result["score"]) / top if top > 0 else 0.0
    message = _message(result) + (f"\n{why}" if why else "")
    tests = [
        {
            "name": row["name"],
            "points": row["points"],
            "max_points": row["max_points"],
            "message": row["headline"] or ("passed" if row["passed"] else "failed"),
            "output": row["output"],
        }
        for row in _rows(result)
    ]
    return {
        "gradable": True,
        "score": min(1.0, max(0.0, score)),
        "message": message,
        "output": _printed(result),
        "tests": tests,
        "images": images,
        "extra_data": _extra_data(result),
    }


def to_platform(platform: str, result: dict[str, Any], svg: str | None = None) -> dict[str, Any]:
    """:func:`to_gradescope` or :func:`to_prairielearn` by name (one of :data:`PLATFORMS`).

    Raises:
        ValueError: an unknown platform, or as the function named.
    """
    if platform == "gradescope":
        return to_gradescope(result, svg)
    if platform == "prairielearn":
        return to_prairielearn(result, svg)
    raise ValueError(f"there is no platform {platform!r}; the platforms are {', '.join(PLATFORMS)}")


def unchecked_result(
    exercise: str, headline: str, *, seed: int = 0, details: list[str] | None = None
) -> dict[str, Any]:
    """The result of a submission that could not be checked at all (no file, the checker did not answer).

    It has the check's fields and every case of the exercise for ``seed`` (from
    :func:`lessons.exercises.judges.outline`), each failed, not run, worth its points, so the score is 0 of
    the exercise's maximum, as for a solution that does not load; its first failure, outside every case,
    says why. :func:`to_gradescope` and :func:`to_prairielearn` give a valid results.json with score 0.

    Args:
        exercise: the exercise's name. headline: what went wrong, one sentence for the student.
        seed: the seed the check would have used. details: further lines, or None.

    Raises:
        ValueError: an unknown exercise.
    """
    from lessons.exercises.judges import outline

    cases: list[dict[str, Any]] = [
        {
            "name": name,
            "passed": False,
            "points": 0.0,
            "max_points": float(points),
            "headline": f"not run: {headline}",
            "mistake": "",
        }
        for name, points in outline(exercise, seed)
    ]
    return {
        "exercise": exercise,
        "title": "",
        "seed": seed,
        "passed": False,
        "score": 0.0,
        "max_score": float(sum(c["max_points"] for c in cases)),
        "checks_run": len(cases),
        "checks_passed": 0,
        "cases": cases,
        "first_failure": {
            "case": "the submission",
            "headline": headline,
            "details": list(details or []),
            "mistake": "",
            "hint": "",
            "book": "",
            "traceback": "",
            "node": "",
            "expected": None,
            "actual": None,
            "drawing_note": "",
        },
        "output": {"text": "", "lines": 0, "cut": 0},
        "drawing": None,
        "seconds": 0.0,
        "solution_sha256": "",
    }
