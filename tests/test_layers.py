"""The engine's layers: imports point one way (that each algorithm is written once: test_algorithms_once).

errors <- ops <- templates <- compile_push <- push <- engine <- {forward, backprop} <- graph <- symbolic <-
{store <- {naive, checkpoint}, compile, mlp <- mlp_forward <- mlp_backward} <- train <- nn; beside push,
below the node too: order, pickling, lecture, meta, compile_nodes. The one import against the layers is
``Value.backward``'s, in push.py (micrograd puts back-propagation on the node; Algorithm 6.2, which locates a
failure, lives with the graph). The engine package holds the engine and nothing else: no module of
``micrograph/`` imports viz or lessons, except ``micrograph/__main__.py``, which imports the command line
(``lessons.cli``) and nothing else of them, so that ``python -m micrograph`` runs the application.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parent.parent / "micrograph"
ALLOWED_LATE = {("push", "graph")}  # Value.backward, on a failed push, locates it with Graph


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
    late = {(m, t) for m, (_, lates) in _graph().items() for t in lates}
    assert late == ALLOWED_LATE


def test_the_import_against_the_layers_serves_value_backward_alone() -> None:
    """push.py imports graph in one function, and only backward calls it (to locate a failed push with
    Algorithm 6.2): no other part of the engine reaches up to the graph."""
    tree = ast.parse((ENGINE / "push.py").read_text(encoding="utf-8"))
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]

    def imports_graph(f: ast.AST) -> bool:
        return any(isinstance(n, ast.ImportFrom) and n.module == "micrograph.graph" for n in ast.walk(f))

    importing = [f.name for f in functions if imports_graph(f)]
    assert len(importing) == 1, importing
    callers = {
        f.name
        for f in functions
        for n in ast.walk(f)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == importing[0]
    }
    assert callers == {"backward"}


@pytest.mark.parametrize(
    "lower, higher",
    [
        ("errors", "ops"),
        ("ops", "engine"),
        ("ops", "templates"),
        ("templates", "compile_push"),
        ("compile_push", "push"),
        ("order", "push"),
        ("order", "pickling"),
        ("meta", "pickling"),
        ("push", "engine"),
        ("pickling", "engine"),
        ("lecture", "engine"),
        ("meta", "engine"),
        ("ops", "compile_nodes"),
        ("compile_nodes", "engine"),
        ("compile_nodes", "mlp"),
        ("templates", "compile_emitter"),
        ("compile_emitter", "compile_python"),
        ("compile_python", "compile"),
        ("compile_emitter", "compile_javascript"),
        ("engine", "forward"),
        ("engine", "backprop"),
        ("forward", "graph"),
        ("backprop", "graph"),
        ("graph", "symbolic"),
        ("symbolic", "naive"),
        ("symbolic", "compile"),
        ("graph", "store"),
        ("store", "naive"),
        ("store", "checkpoint"),
        ("mlp", "mlp_forward"),
        ("mlp_forward", "mlp_backward"),
        ("mlp", "train"),
        ("mlp_forward", "train"),
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


def _application_imports(path: Path) -> set[str]:
    """The modules of viz and lessons a file imports, anywhere in it (functions included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] if node.level == 0 else []
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found |= {n for n in names if n.split(".")[0] in ("viz", "lessons")}
    return found


def test_the_engine_imports_neither_viz_nor_lessons() -> None:
    """Nothing in micrograph/ imports viz or lessons but __main__.py, which imports the command line only."""
    files = sorted(ENGINE.rglob("*.py"))
    assert ENGINE / "engine.py" in files and not (ENGINE / "cli.py").exists()  # no command in the engine
    found = {p.relative_to(ENGINE).as_posix(): _application_imports(p) for p in files}
    assert {name: mods for name, mods in found.items() if mods} == {"__main__.py": {"lessons.cli"}}
    main = (ENGINE / "__main__.py").read_text(encoding="utf-8")
    assert "the one place in ``micrograph/`` that names the application" in main


def test_the_application_search_sees_an_import_of_viz_or_lessons(tmp_path: Path) -> None:
    """The search finds each spelling of an import of the layers above, at module level or in a function."""
    for line in (
        "import viz",
        "from lessons.publish import tour",
        "import lessons.cli as c",
        "from viz.render import x",
    ):
        planted = tmp_path / "planted.py"
        planted.write_text(f"def f():\n    {line}\n", encoding="utf-8")
        assert _application_imports(planted), line


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


def test_import_micrograph_loads_the_engine_only_and_the_rest_on_first_use() -> None:
    """`import micrograph` does not import nn, datasets, compile, naive or forward_mode (PEP 562): they load
    when first named."""
    import subprocess
    import sys

    code = (
        "import sys, micrograph\n"
        "late = ['micrograph.nn', 'micrograph.datasets', 'micrograph.compile', 'micrograph.mlp',\n"
        "        'micrograph.mlp_forward', 'micrograph.mlp_backward', 'micrograph.naive',\n"
        "        'micrograph.store', 'micrograph.checkpoint', 'micrograph.forward_mode',\n"
        "        'micrograph.compile_python', 'micrograph.compile_emitter',\n"
        "        'micrograph.compile_javascript']\n"
        "print(sorted(m for m in late if m in sys.modules))\n"
        "from micrograph import compile_graph, nn, store_grad\n"
        "print(micrograph.datasets.__name__, nn.MLP.__name__, compile_graph.__name__,\n"
        "      micrograph.jvp.__name__,\n"
        "      'CompiledGraph' in dir(micrograph), sorted(m for m in late if m in sys.modules))\n"
        "try:\n"
        "    micrograph.no_such_name\n"
        "except AttributeError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == [
        "[]",
        "micrograph.datasets MLP compile_graph jvp True ['micrograph.compile', 'micrograph.compile_emitter', "
        "'micrograph.compile_python', 'micrograph.datasets', 'micrograph.forward_mode', 'micrograph.mlp', "
        "'micrograph.mlp_backward', 'micrograph.mlp_forward', 'micrograph.nn', 'micrograph.store']",
        "module 'micrograph' has no attribute 'no_such_name'",
    ]
