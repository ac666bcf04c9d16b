"""Each of the book's algorithms is written once: Algorithm 6.2's loop, found by its structure wherever it
is and however it is spelled, stands only where it is allowed; Algorithm 6.1's loop is in forward.py alone.

The search is itself tested: it finds planted copies of former loops, and passes forward loops and sums.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parent.parent


# --- Algorithm 6.2's loop, found by its structure -------------------------------------------------------
#
# A copy of Algorithm 6.2 is a loop that walks the nodes backwards and multiplies a gradient (an entry of a
# grad_table, or a node's .grad) by a local derivative (a call of a derivative rule). The search reads the
# syntax tree of every .py file of the repository outside tests/, whatever the names and the spelling:
#   - a reverse loop: ``for`` or a comprehension over range(..., ..., -k), reversed(...), sorted(...,
#     reverse=True), x[::-1], a name bound to one of these (or reversed in place) in the same function,
#     a call of a function of the same module that returns one, or of the engine's reverse order
#     (backprop.sweep);
#   - inside it, a product ``a * b`` (or ``a *= b``) of a gradient and a local derivative, either order;
#   - a gradient: a subscript (``grad_table[i]``, ``table[C]``), a ``.get(...)`` of one, a ``.grad``, or a
#     name bound to one of these or spelled like one (g, gi, grad..., ..._grad);
#   - a local derivative: a call whose callee names a rule (local_derivative, derivs[k], du_i_du_j, rule,
#     bprop, ...derivative...) or was unpacked from the consumer index (edges, consumers), or a name bound
#     to such a call or spelled du..., ...deriv....
# Value.backward's push form (push.backward, section 6.5.6) is the named exception, and no copy of the pull
# loop: its reverse loop over the topological order calls each node's _backward (push.push_to_parents,
# one node's pushes, no loop over the graph), and its compiled loop is generated as text from the table
# (compile_push.push_loop): neither multiplies a gradient by a local derivative inside a reverse loop.

ALLOWED = {
    ("micrograph/backprop.py", "run_algorithm_6_2"): "Algorithm 6.2 itself, the one pull loop",
    ("micrograph/mlp_backward.py", "backward_mlp"): "Algorithm 6.4, the book's back-propagation over layers",
}
"""(file, function) -> why a reverse gradient-times-derivative loop is allowed there."""

_CONSUMER_INDEX = re.compile(r"consumers|edges")
_REVERSE_ORDERS = {"sweep"}  # the engine's functions that give nodes from the last
_GRADIENT_NAME = re.compile(r"^(g|gi|g_\w+|\w*grad\w*)$", re.I)
_RULE_CALLEE = re.compile(r"local_derivative|derivs?\b|derivative|\bdu_|rule|bprop", re.I)
_DERIVATIVE_NAME = re.compile(r"^(du\w*|\w*deriv\w*)$", re.I)


class _Scope:
    """A function's (or module's) bindings: name -> the expressions bound to it, and names reversed."""

    def __init__(self, node: ast.AST, module: dict[str, ast.FunctionDef] | None = None) -> None:
        self.module = module or {}  # the functions the module defines, by name
        self.bound: dict[str, list[ast.expr]] = {}
        self.reversed_in_place: set[str] = set()
        for n in ast.walk(node):
            pairs: list[tuple[ast.expr, ast.expr]] = []
            if isinstance(n, ast.Assign):
                pairs = [(t, n.value) for t in n.targets]
            elif isinstance(n, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and n.value is not None:
                pairs = [(n.target, n.value)]
            elif isinstance(n, (ast.For, ast.comprehension)):
                pairs = [(n.target, n.iter)]
            elif (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr == "reverse"
                and isinstance(n.func.value, ast.Name)
            ):
                self.reversed_in_place.add(n.func.value.id)
            for target, value in pairs:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        self.bound.setdefault(name.id, []).append(value)

    def _via_names(self, e: ast.expr, test: str, depth: int) -> bool:
        return (
            isinstance(e, ast.Name)
            and depth < 6
            and any(getattr(self, test)(v, depth + 1) for v in self.bound.get(e.id, []))
        )

    def is_reverse(self, e: ast.expr, depth: int = 0) -> bool:
        if (
            isinstance(e, ast.Call)
            and isinstance(e.func, ast.Name)
            and e.func.id in self.module
            and depth < 6
        ):
            called = self.module[e.func.id]  # a function of the module: what it returns
            scope = _Scope(called, self.module)
            returned = [
                r.value for r in ast.walk(called) if isinstance(r, ast.Return) and r.value is not None
            ]
            return any(scope.is_reverse(r, depth + 1) for r in returned)
        if isinstance(e, ast.Call) and ast.unparse(e.func).split(".")[-1] in _REVERSE_ORDERS:
            return True
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name):
            if e.func.id == "reversed":
                return True
            if e.func.id == "range" and len(e.args) == 3:
                step = e.args[2]
                return isinstance(step, ast.UnaryOp) and isinstance(step.op, ast.USub)
            if e.func.id == "sorted":
                return any(k.arg == "reverse" and ast.unparse(k.value) == "True" for k in e.keywords)
        if isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Slice):  # x[::-1], or a slice of one
            step = e.slice.step
            return (step is not None and ast.unparse(step).startswith("-")) or self.is_reverse(e.value, depth)
        if isinstance(e, ast.Tuple):  # order, edges = ...: a name bound by unpacking
            return any(self.is_reverse(x, depth) for x in e.elts)
        if isinstance(e, ast.Name) and e.id in self.reversed_in_place:
            return True
        return self._via_names(e, "is_reverse", depth)

    def is_gradient(self, e: ast.expr, depth: int = 0) -> bool:
        if isinstance(e, ast.Subscript):
            return True
        if isinstance(e, ast.Attribute):
            return e.attr == "grad"
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "get":
            return True
        if isinstance(e, ast.Name) and _GRADIENT_NAME.match(e.id):
            return True
        if isinstance(e, ast.IfExp):
            return self.is_gradient(e.body, depth) or self.is_gradient(e.orelse, depth)
        return self._via_names(e, "is_gradient", depth)

    def is_derivative(self, e: ast.expr, depth: int = 0) -> bool:
        if isinstance(e, ast.Call):  # a rule called: by its name, or a name spelled like a derivative
            callee = e.func
            return bool(_RULE_CALLEE.search(ast.unparse(callee))) or self.is_derivative(callee, depth)
        if isinstance(e, ast.Name) and _DERIVATIVE_NAME.match(e.id):
            return True
        if isinstance(e, ast.Tuple):
            return any(self.is_derivative(x, depth) for x in e.elts)
        if isinstance(e, ast.IfExp):
            return self.is_derivative(e.body, depth) or self.is_derivative(e.orelse, depth)
        if isinstance(e, ast.Name) and any(  # a rule unpacked from the consumer index's edges
            _CONSUMER_INDEX.search(ast.unparse(v)) for v in self.bound.get(e.id, [])
        ):
            return True
        return self._via_names(e, "is_derivative", depth)


def algorithm_6_2_loops(source: str) -> list[tuple[str, int]]:
    """(function, line) of every reverse loop that multiplies a gradient by a local derivative."""
    tree = ast.parse(source)
    owner: dict[ast.AST, ast.AST] = {}  # each node -> its innermost enclosing function (or the module)
    stack: list[tuple[ast.AST, ast.AST]] = [(tree, tree)]
    while stack:
        node, scope = stack.pop()
        for child in ast.iter_child_nodes(node):
            inner = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else scope
            owner[child] = scope
            stack.append((child, inner))
    module = {f.name: f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)}
    scopes: dict[ast.AST, _Scope] = {}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.For):
            loops = [(node.iter, node.body)]
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            loops = [(gen.iter, [node]) for gen in node.generators]
        else:
            continue
        function = owner.get(node, tree)
        scope = scopes.setdefault(function, _Scope(function, module))
        for iterable, body in loops:
            if not scope.is_reverse(iterable):
                continue
            for part in body:
                for n in ast.walk(part):
                    if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):
                        a, b = n.left, n.right
                    elif isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Mult):
                        a, b = n.target, n.value
                    else:
                        continue
                    if (scope.is_gradient(a) and scope.is_derivative(b)) or (
                        scope.is_gradient(b) and scope.is_derivative(a)
                    ):
                        found.append((getattr(function, "name", "<module>"), node.lineno))
                        break
                else:
                    continue
                break
    return sorted(set(found), key=lambda x: x[1])


def _python_files() -> list[Path]:
    """The checkout's Python files outside the tests, the build outputs and hidden folders (.venv, .nox),
    which are never entered: other jobs may be writing there while this runs."""
    skip = {"tests", "build", "dist", "node_modules"}
    found = []
    for folder, subfolders, files in os.walk(_REPO):
        subfolders[:] = [d for d in subfolders if d not in skip and not d.startswith(".")]
        found += [Path(folder) / f for f in files if f.endswith(".py")]
    return sorted(found)


@pytest.mark.slow  # seconds: run by make test-slow (and CI), keeping make test within minutes
def test_algorithm_6_2_is_written_once_found_by_structure() -> None:
    """No file outside the allow-list has a reverse loop multiplying a gradient by a local derivative."""
    files = _python_files()
    folders = {p.relative_to(_REPO).parts[0] for p in files}
    assert {"micrograph", "viz", "lessons", "benchmarks"} <= folders
    assert any(p.relative_to(_REPO).parts[:2] == ("lessons", "exercises") for p in files)  # subfolders
    hits = {}
    for path in files:
        for function, line in algorithm_6_2_loops(path.read_text(encoding="utf-8")):
            hits[(path.relative_to(_REPO).as_posix(), function)] = line
    unexpected = [
        f"{path}:{line} in {fn}()" for (path, fn), line in hits.items() if (path, fn) not in ALLOWED
    ]
    assert unexpected == []
    # the search sees the real loops: each allowed one is found (backprop.py's Algorithm 6.2 among them)
    assert set(hits) == set(ALLOWED)


PLANTED = {
    "the former checkpoint_grad (a push loop per segment)": """
def checkpoint(nodes, parents, held, grad_table, in_G, lo, hi):
    for i in range(hi - 1, lo - 1, -1):
        g = grad_table.get(i, 0.0)
        args = [held[j] for j in parents[i]]
        for kk, j in enumerate(parents[i]):
            d = nodes[i].op.local_derivative(kk, tuple(args), held[i])
            grad_table[j] = grad_table.get(j, 0.0) + g * d
""",
    "the former lesson 2 push step": """
def push(l):
    for i in range(len(l.graph.nodes), 0, -1):
        u_i = l.graph.nodes[i - 1]
        args = tuple(a.data for a in u_i.inputs)
        for k, u_j in enumerate(u_i.inputs):
            du_i_du_j = u_i.op.local_derivative(k, args, u_i.data)
            l.pushed[u_j] += l.pushed[u_i] * du_i_du_j
""",
    "micrograd's backward, with the table's rules": """
def backward(z):
    topo = order(z)
    z.grad = 1.0
    for v in reversed(topo):
        for k, p in enumerate(v.inputs):
            p.grad += v.grad * v.op.derivs[k](*[x.data for x in v.inputs], v.data)
""",
    "the pull form over a reversed list, renamed": """
def pull(G, order):
    order.reverse()
    table = {order[0]: 1.0}
    for v in order[1:]:
        table[v] = sum(table[c] * rule(c, k) for c, k in G.edges_into(v))
""",
    "a loop over the order backprop.sweep gives": """
from micrograph.backprop import sweep


def again(graph, u):
    grad_table = [0.0] * len(u)
    grad_table[-1] = 1.0
    order, edges = sweep(graph)
    for j in order:
        for i, k, f, a, b in edges[j]:
            grad_table[j] += grad_table[i] * f(u[a], u[i])
""",
    "a comprehension over positions from the last": """
def entries(n, consumers, u, gt):
    return [sum(gt[i] * du(u[a], u[i]) for i, _, du, a, _b in consumers[j]) for j in range(n - 2, -1, -1)]
""",
}


@pytest.mark.parametrize("what", sorted(PLANTED))
def test_the_algorithm_6_2_search_finds_a_planted_copy(what: str, tmp_path: Path) -> None:
    """Each planted copy, written to a file of its own, is found; and so is one planted in the real
    lessons/l2_backprop.py, read as a file from a temporary tree."""
    planted = tmp_path / "lessons" / "planted.py"
    planted.parent.mkdir()
    planted.write_text(PLANTED[what], encoding="utf-8")
    assert algorithm_6_2_loops(planted.read_text(encoding="utf-8")) != [], what
    lesson = (_REPO / "lessons" / "l2_backprop.py").read_text(encoding="utf-8")
    assert algorithm_6_2_loops(lesson) == []
    assert algorithm_6_2_loops(lesson + "\n" + PLANTED[what]) != []


def test_the_algorithm_6_2_search_passes_forward_loops_and_plain_sums() -> None:
    """Algorithm 6.1's loop and a reverse loop without a gradient-times-derivative product are no copies."""
    forward = """
def evaluate(steps, u):
    for i, f, a, b in steps:
        u[i] = f(u[a]) if b < 0 else f(u[a], u[b])
"""
    reverse_sum = """
def drop(held, lo, hi):
    for p in range(hi - 1, lo - 1, -1):
        held[p] = held[p] * 2.0
"""
    assert algorithm_6_2_loops(forward) == [] and algorithm_6_2_loops(reverse_sum) == []


def test_algorithm_6_1_loop_is_written_once() -> None:
    """Algorithm 6.1's u(i) <- f(i)(A(i)) over the step list appears in forward.py alone."""
    sources = {p.relative_to(_REPO).as_posix(): p.read_text(encoding="utf-8") for p in _python_files()}
    forward = [n for n, s in sources.items() if "f(u[a]) if b < 0 else f(u[a], u[b])" in s]
    assert forward == ["micrograph/forward.py"]
