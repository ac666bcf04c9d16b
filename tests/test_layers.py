"""The engine's layers: imports point one way, and each book algorithm's loop is written once.

errors <- ops <- engine <- {forward, backprop} <- graph <- symbolic <- {naive, compile, mlp} <- train <- nn,
cli. The one import against the layers is ``Value.backward``'s (micrograd puts back-propagation on the
node; the algorithm lives with the graph). The engine imports neither viz nor lessons.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parent.parent / "micrograph"
ALLOWED_LATE = {("engine", "graph")}  # Value.backward -> Graph (commented in engine.py)


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """The micrograph modules a file imports at module level, and those it imports inside functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top: set[str] = set()
    late: set[str] = set()

    def names(node: ast.AST) -> list[str]:
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "micrograph":
                return [a.name for a in node.names]
            if node.module.startswith("micrograph."):
                return [node.module.split(".")[1]]
        if isinstance(node, ast.Import):
            return [a.name.split(".")[1] for a in node.names if a.name.startswith("micrograph.")]
        return []

    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue  # annotations only, never run
        for sub in ast.walk(node):
            found = names(sub)
            if not found:
                continue
            inside = isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
            (late if inside else top).update(found)
    return top, late


def _graph() -> dict[str, tuple[set[str], set[str]]]:
    modules = {p.stem: p for p in ENGINE.glob("*.py")}
    return {m: tuple(x & set(modules) - {m} for x in _imports(p)) for m, p in modules.items()}  # type: ignore[misc]


def test_no_import_circle_in_the_engine() -> None:
    graph = _graph()
    edges = {
        m: set(top) | {t for t in late if (m, t) not in ALLOWED_LATE} for m, (top, late) in graph.items()
    }
    # Kahn's algorithm: a circle leaves nodes that never reach in-degree zero
    remaining = {m: set(targets) for m, targets in edges.items()}
    while True:
        free = [m for m, targets in remaining.items() if not targets]
        if not free:
            break
        for m in free:
            del remaining[m]
        for targets in remaining.values():
            targets.difference_update(free)
    assert not remaining, f"import circle among {sorted(remaining)}"


def test_function_local_imports_of_the_engine_are_only_the_commented_one() -> None:
    late = {(m, t) for m, (_, lates) in _graph().items() for t in lates if m not in ("cli", "__main__")}
    assert late == ALLOWED_LATE
    assert "# The one import against the layers" in (ENGINE / "engine.py").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "lower, higher",
    [
        ("errors", "ops"),
        ("ops", "engine"),
        ("engine", "forward"),
        ("engine", "backprop"),
        ("forward", "graph"),
        ("backprop", "graph"),
        ("graph", "symbolic"),
        ("symbolic", "naive"),
        ("symbolic", "compile"),
        ("mlp", "train"),
        ("train", "nn"),
    ],
)
def test_layer_order(lower: str, higher: str) -> None:
    """``higher`` may import ``lower`` but never the reverse, even indirectly."""
    graph = _graph()
    reach = {lower}
    stack = [lower]
    while stack:
        for t in graph[stack.pop()][0]:
            if t not in reach:
                reach.add(t)
                stack.append(t)
    assert higher not in reach


def test_the_engine_imports_neither_viz_nor_lessons() -> None:
    for path in ENGINE.glob("*.py"):
        if path.stem in ("cli", "__main__"):
            continue  # the command is the top of the house and may draw and teach
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert node.module.split(".")[0] not in ("viz", "lessons"), path.name
            if isinstance(node, ast.Import):
                assert all(a.name.split(".")[0] not in ("viz", "lessons") for a in node.names), path.name


def test_each_algorithm_loop_is_written_once() -> None:
    """Algorithm 6.2's sum over consumers and Algorithm 6.1's u(i) <- f(i)(A(i)) appear in one file each."""
    sources = {p.name: p.read_text(encoding="utf-8") for d in ("micrograph", "viz", "lessons")
               for p in (ENGINE.parent / d).glob("*.py")}  # fmt: skip
    pull = [n for n, s in sources.items() if "grad_table[i] * d" in s or "for j in range(n - 2, -1, -1)" in s]
    assert pull == ["backprop.py"]
    forward = [n for n, s in sources.items() if "f(u[a]) if b < 0 else f(u[a], u[b])" in s]
    assert forward == ["forward.py"]
    calls = [
        n for n, s in sources.items() if "rule(u[a], u[i]) if b < 0" in s or "(u[a], u[i]) if b < 0" in s
    ]
    assert calls == ["backprop.py"]


def test_every_colour_and_stylesheet_is_in_viz_style() -> None:
    """viz/style.py is the one place for colours and the pages' CSS (the explorer's static assets aside)."""
    colour = re.compile(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b(?![0-9a-zA-Z])|\brgba?\(")
    css = re.compile(r"\{\s*[a-z-]+\s*:\s*[^}]*;")  # a CSS rule body: { property: value; ... }
    root = ENGINE.parent
    offenders = []
    for folder in ("viz", "lessons"):
        for path in sorted((root / folder).rglob("*.py")):
            if path == root / "viz" / "style.py":
                continue
            text = path.read_text(encoding="utf-8")
            for k, line in enumerate(text.splitlines(), 1):
                if colour.search(line) or css.search(line):
                    offenders.append(f"{path.relative_to(root)}:{k}: {line.strip()}")
    assert offenders == []
