"""A PASS means the book's algorithm was written: right numbers computed another way fail, and say why.

Each test writes a student's file and checks it as ``micrograph exercise check`` does. Every one of these
solutions gives the right numbers on the small graphs: the naive chain rule with its local derivatives
cached (it follows every path from z), a forward pass that recomputes each parent, build_grad without its
memo behind a helper, the naive rule reporting its own counts, local derivatives by complex step or sympy, a
topological order that tests membership in a list. The checks that catch them: the ladder with 2^40 paths,
the calls counted in the solution's process, the imports each exercise allows, and the time measured on
chains of growing size. Correct solutions written other ways still pass.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from lessons import exercises


def check(tmp_path: Path, name: str, source: str, **kw: object) -> exercises.Report:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return exercises.check(name, path, record=False, drawing=None, **kw)  # type: ignore[arg-type]


def failed(report: exercises.Report) -> list[str]:
    return [c.name for c in report.cases if not c.passed]


# --- counts come from the tools -------------------------------------------------------------------------


def test_the_naive_rule_s_own_counts_are_not_taken(tmp_path: Path) -> None:
    source = """
        class Result:
            def __init__(self, value, local_derivatives, recomputed):
                self.value, self.local_derivatives, self.recomputed = value, local_derivatives, recomputed

        def naive_grad(z, w):
            counts = {"local": 0, "recomputed": 0}
            def value(v):
                if v.op is None:
                    return v.data
                args = [value(p) for p in v.inputs]
                counts["recomputed"] += 1
                return v.op.f(*args)
            def depends(v):
                return v is w or any(depends(p) for p in v.inputs)
            def grad(u):
                if u is w:
                    return 1.0
                if u.op is None:
                    return 0.0
                total = 0.0
                for k, x in enumerate(u.inputs):
                    d = grad(x)
                    if d == 0.0 and not depends(x):
                        continue
                    args = [value(p) for p in u.inputs]
                    counts["recomputed"] += 1
                    out = u.op.f(*args)
                    counts["local"] += 1
                    total += u.op.local_derivative(k, tuple(args), out) * d
                return total
            return Result(grad(z), counts["local"], counts["recomputed"])
    """
    report = check(tmp_path, "naive", source)
    assert not any(c.passed for c in report.cases), report.text()
    assert report.failure is not None and report.failure.mistake == "uncounted", report.text()
    assert "nothing was counted" in report.text()
