"""Exercise ``build_grad``: Algorithm 6.6, symbol-to-symbol back-propagation; the answer is nodes of B.

The judge drives the solution as Algorithm 6.5 does (``grad_table[z] ← 1``, then ``build_grad(V, G, G',
grad_table)`` for each V in T) through the runner, which sends back B as records: every node the solution
built, its operation and its parents (G's nodes by position). The judge rebuilds B on its own copy of G and
evaluates it itself, so the numbers it compares are computed here, from the structure the solution built: B's
values against Algorithm 6.2's grad_table, B evaluated again at moved inputs (Algorithm 6.1), B differentiated
again (section 6.5.10), and B's size against the B that :func:`micrograph.grad` builds. A build_grad without
its memo builds the same gradient again and again, once per path: the runner counts the calls of ``op.bprop``
(Algorithm 6.6 makes one per node and consumer) and the calls each function of the solution's file makes to
itself, through any helper, and B holds repeated nodes unless the solution merges them. How the exercise is
judged, template and all, is :data:`JUDGING`; its name and place are a row of
:data:`lessons.exercises.judges.TABLE`.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.5-6.5.6, Algorithms 6.5, 6.6.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any

from lessons.exercises import answers, verdict
from lessons.exercises.cases import Case as GraphCase
from lessons.exercises.cases import graph_cases
from lessons.exercises.exercise import Judging
from lessons.exercises.imports import Imports
from lessons.exercises.judges import mistakes
from lessons.exercises.judges.entry import algorithm_6_2, diagnose_entry
from lessons.exercises.judges.mistakes import Mistake, failure
from lessons.exercises.judges.scaling import measured_cases
from lessons.exercises.schema import boolean, count, list_of, position, record, text
from lessons.exercises.verdict import Case, Fail, close, draw, graph_request, mutation_text, shown
from micrograph import build_grad, grad
from micrograph.engine import Value, as_value
from micrograph.errors import DomainError
from micrograph.graph import Graph
from micrograph.ops import op_by_name, pow_const
from micrograph.order import topological_order

__all__ = ["JUDGING", "CODES", "MISTAKES", "cases"]

CODES: tuple[str, ...] = (
    "mutation", "no-memo", "number", "not-stored", "B-domain", "unknown-op", "numbers-in-B",
    "not-differentiable", "paths",
)  # fmt: skip
"""The codes of the mistakes this judge gives, each a row of ``mistakes.toml``'s [build_grad] table."""

MISTAKES: dict[str, Mistake] = mistakes.of("build_grad", CODES)
"""The mistakes this exercise recognises (and those of Algorithm 6.2's sums, :mod:`.backprop`)."""


_MEMO_DETAIL = (
    "Algorithm 6.6 first returns grad_table[V] when V is already in it (section 6.5.6); without that, "
    "every path from z is walked again (figure 6.9's blowup) and the same gradient is built again."
)


def _fail(code: str, headline: str, **kw: Any) -> Fail:
    return Fail(failure(MISTAKES[code], headline, **kw))


def _rebuild(G: Graph, records: list[list[Any]]) -> list[Value]:
    """B's nodes rebuilt on the judge's G from the solution's records, their values computed here."""
    built: list[Value] = []

    def resolve(ref: Any) -> Value:
        where, k = ref
        return G.nodes[k] if where == "g" else built[k]

    for opname, param, refs, data, label, constant in records:
        if opname is None:
            v = as_value(float(data)) if constant else Value(float(data), label=str(label or ""))
        else:
            try:
                op = pow_const(float(param)) if param is not None else op_by_name(str(opname))
            except (KeyError, ValueError):
                raise _fail(
                    "unknown-op", f"B has a node of an operation micrograph does not have ({opname!r})."
                ) from None
            try:
                v = op(*(resolve(r) for r in refs))
            except DomainError as e:
                raise _fail("B-domain", f"your B cannot be evaluated at G's values: {e}") from None
        built.append(v)
    return built


def _signature_count(nodes: list[Value]) -> int:
    """How many of ``nodes`` repeat another: the same operation on the same parents (built twice)."""
    seen: dict[tuple[Any, ...], Value] = {}
    canon: dict[Value, Value] = {}
    repeats = 0
    for v in nodes:
        if v.op is None:
            canon[v] = v
            continue
        key = (v.op.name, v.op.param, *(id(canon.get(p, p)) for p in v.inputs))
        if key in seen:
            repeats += 1
            canon[v] = seen[key]
        else:
            seen[key] = canon[v] = v
    return repeats


def _reference_B(spec: GraphCase) -> tuple[list[Value], list[Value], Graph, list[Value]]:
    """The engine's B for a fresh copy of the case: (its nodes beyond G, dz/dV per V, G, T)."""
    z, T = spec.build()
    G = Graph(z)
    results = grad(z, T)
    nodes = [v for v in topological_order(results) if v not in G.index]
    return nodes, results, G, T


def _check_results(
    G: Graph, T: list[Value], results: list[Any], entries: dict[int, Any], resolve: Any
) -> None:
    for V, ref in zip(T, results):
        name = verdict.reported_name(G, G.index[V])
        if not (isinstance(ref, list) and len(ref) == 2):
            shown_value = shown(ref.get("plain")) if isinstance(ref, dict) else shown(ref)
            raise _fail(
                "number",
                f"build_grad returned {shown_value} for {name}: a number, where symbol-to-symbol "
                "back-propagation returns a node of B.",
                node=name,
                details=[
                    "B must be a graph that can be evaluated again for new inputs and differentiated again; "
                    "a number can be neither."
                ],
            )
        if entries.get(G.index[V]) != ref:
            raise _fail(
                "not-stored", f"grad_table[{name}] is not the node build_grad returned for it.", node=name
            )


def _check_memo(
    answer: dict[str, Any],
    G: Graph,
    members: list[int],
    T: list[Value],
    built: list[Value],
    reference: list[Value],
) -> None:
    """build_grad's memo, judged from the calls the runner counted and from B's repeated nodes."""
    inside = set(members)
    pairs = sum(len({p for p in G.parents[i] if p in inside}) for i in members)  # (node, consumer) in G'
    n_prime = len(members)
    calls, bprops = int(answer.get("calls") or 0), int(answer.get("bprop") or 0)
    function = str(answer.get("recursive") or "build_grad")[:60]
    repeats, ref_repeats = _signature_count(built), _signature_count(reference)
    seen = []
    if bprops > pairs:
        seen.append(
            f"op.bprop was called {bprops:,} times for the {pairs:,} pairs of a node and its consumer in G', "
            "where Algorithm 6.6 calls it once per pair"
        )
    if calls > n_prime + pairs + len(T):
        seen.append(
            f"{function}() was called {calls:,} times while it was already running (a recursion), for "
            f"{pairs:,} pairs of a node and its consumer in G'"
        )
    if repeats > ref_repeats:
        seen.append(
            f"B has {len(built):,} nodes, {repeats:,} of them the same operation on the same nodes as "
            f"another, where Algorithm 6.6 builds {len(reference):,}"
        )
    if seen:
        raise _fail(
            "no-memo",
            f"build_grad built gradients already in grad_table again, on this G' of {n_prime} nodes: "
            + "; ".join(seen)
            + ".",
            details=[_MEMO_DETAIL],
        )


def _again(spec: GraphCase, G: Graph, T: list[Value], mine: list[Value]) -> None:
    """B evaluated again at moved inputs (Algorithm 6.1) and differentiated again, against the engine's."""
    _, key_results, key_G, key_T = _reference_B(spec)
    variables = [i for i in range(G.n_inputs) if not G.nodes[i].is_constant]
    start = {i: G.nodes[i].data for i in variables}
    wants: list[float] = []
    factor = 1.0
    for factor in (1.1, 0.9, 1.05, 0.95):  # new inputs where the engine's B is defined
        try:
            wants = [
                KB.forward(
                    {key_G.nodes[i]: start[i] * factor for i in variables if key_G.nodes[i] in KB.index}
                )
                for KB in map(Graph, key_results)
            ]
            break
        except DomainError:
            continue
    if not wants:
        return  # no nearby inputs keep this graph in every domain: checked by value above only
    for V, r, kV, kr, want in zip(T, mine, key_T, key_results, wants):
        name = verdict.reported_name(G, G.index[V])
        B = Graph(r)
        try:
            value = B.forward({G.nodes[i]: start[i] * factor for i in variables if G.nodes[i] in B.index})
        except DomainError as e:
            raise _fail(
                "B-domain",
                f"your B for dz/d{V.label or name} cannot be evaluated at inputs moved by "
                f"{abs(factor - 1):.0%}, where the derivative is {shown(want)}: {e}",
                node=name,
            ) from None
        if not close(value, want):
            numbers = [
                i for i, u in enumerate(B.nodes) if u.op is None and u not in G.index and not u.is_constant
            ]
            picture: dict[str, Any] = {"drawing_note": "no number of G was found as a leaf of your B"}
            if numbers:
                picture = draw(
                    B,
                    wrong=numbers[0],
                    grads=[None] * len(B.nodes),
                    title=f"your B for "
                    f"dz/d{V.label or name} with G's nodes: {len(numbers)} leaf number(s) where nodes of G "
                    "belong",
                )
            raise _fail(
                "numbers-in-B",
                f"B does not follow G's inputs: at inputs moved by {abs(factor - 1):.0%}, "
                f"your dz/d{V.label or name} evaluates to {shown(value)}, the derivative there is "
                f"{shown(want)}.",
                details=[
                    "Some node of B holds a number read from G (.data) where it "
                    "should consume G's node, so evaluating B again for new inputs keeps the old number."
                ],
                node=name,
                expected=want,
                actual=value,
                **picture,
            )
        want2 = grad(kr, kV)
        try:
            second = grad(r, V)
        except DomainError as e:  # a node of B whose derivative does not exist at G's values (sqrt at 0)
            raise _fail(
                "not-differentiable",
                f"your B for dz/d{V.label or name} cannot be differentiated again at G's values, where the "
                f"second derivative is {shown(want2.data)}: {e}",
                node=name,
                expected=want2.data,
            ) from None
        if not close(second.data, want2.data):
            raise _fail(
                "not-differentiable",
                f"differentiating your B again gives d²z/d{V.label or name}² = "
                f"{shown(second.data)}; the second derivative is {shown(want2.data)}.",
                node=name,
                expected=want2.data,
                actual=second.data,
            )


def _judge(spec: GraphCase, G: Graph, T: list[Value], members: list[int]) -> Any:
    expected, steps = algorithm_6_2(Graph(spec.build()[0]))
    reference = _reference_B(spec)[0]

    def judge(answer: dict[str, Any]) -> None:
        changed = mutation_text(G, answer.get("mutation") or [])
        if changed:
            raise _fail("mutation", f"build_grad changed G: {changed}.")
        if not answer.get("seed_kept"):
            raise _fail(
                "no-memo",
                "grad_table[z], set to 1 before build_grad was called, was replaced: build_grad "
                "built the gradient of a node that was already in grad_table.",
                details=[_MEMO_DETAIL],
            )
        built = _rebuild(G, answer.get("B") or [])

        def resolve(ref: list[Any]) -> Value:
            return G.nodes[ref[1]] if ref[0] == "g" else built[ref[1]]

        results = answer.get("result") or []
        entries = {int(j): ref for j, ref in answer.get("entries") or []}
        _check_results(G, T, results, entries, resolve)
        for j in range(len(G.nodes) - 1, -1, -1):
            ref = entries.get(j)
            if isinstance(ref, list) and not close(resolve(ref).data, expected[j]):
                raise diagnose_entry(
                    G, j, resolve(ref).data, expected, steps, what="build_grad", calls=None, bprop=True
                )
        _check_memo(answer, G, members, T, built, reference)
        _again(spec, G, T, [resolve(r) for r in results])

    return judge


def _part(spec: GraphCase, number: int) -> tuple[Graph, dict[str, Any], Any, dict[str, Any]]:
    """A case's G, its request (G, the members of G' and the targets T) and the judge of what the solution
    built."""
    z, T = spec.build()
    G = Graph(z)
    members = [G.index[v] for v in G.prune(T).nodes]
    request = {**graph_request(G), "members": members, "targets": [G.index[V] for V in T]}
    return G, request, _judge(spec, G, T, members), {}


def cases(seed: int) -> Iterator[Case]:
    """The graph cases but the deep chain, driven as Algorithm 6.5 drives build_grad."""
    what = "build_grad(V, G, G', grad_table)"
    specs = graph_cases(deep=False, seed=seed)
    return measured_cases(specs, _part, MISTAKES, what=what, book="symbolic")


TEMPLATE = '''\
"""Algorithm 6.6, build_grad: symbol-to-symbol back-propagation. The result is
a node of B, not a number.

Algorithm 6.6 (section 6.5.6), in words: to build the gradient of z with
respect to V,
  - if V is already in grad_table, return grad_table[V];
  - for each consumer C of V in G' (get_consumers(V, G')):
        op = get_operation(C);  D = build_grad(C, G, G', grad_table)
        G(i) = op.bprop(get_inputs(C, G'), V, D)
  - G = the sum of the G(i); grad_table[V] = G; return G.
The checker calls it as Algorithm 6.5 does: grad_table[z] <- 1, then
build_grad(V, G, G', grad_table) for each V in the target set T.

In micrograph: G_prime.get_consumers(V); C.op; C.inputs; and
op.bprop(C.inputs, V, D, C), whose last argument is C itself (tanh's rule
reuses the node's output). op.bprop returns a node (or None when every local
derivative is exactly 0). Everything here is a Value node: add the terms
with +, never read .data, so that B can be evaluated again for new inputs
and differentiated again. Leave G's nodes as they are.

@SEE@
@CHECK@
"""


def build_grad(V, G, G_prime, grad_table):
    """Return the node dz/dV of B, and store it in grad_table[V]."""
    # TODO
    raise NotImplementedError
'''

JUDGING = Judging(
    template=TEMPLATE,
    cases=cases,
    answer=answers.Schema(
        {
            "result": list_of(answers.node_of_B, lambda ctx: ctx.targets),
            "entries": list_of(
                record(("position", position), ("node", answers.node_of_B)), lambda ctx: ctx.n
            ),
            "B": answers.b_records,
            "seed_kept": boolean,
            "calls": count,
            "mutation": answers.GRAPH_MUTATION,
        },
        {"recursive": text, "bprop": count},
    ),
    imports=Imports.python("Algorithm 6.6 in Python, with micrograph's nodes and operations"),
    reference=lambda: types.SimpleNamespace(build_grad=build_grad),  # Algorithm 6.6
    shares=("backprop",),
)
"""How the exercise is judged: the template, the judge (:func:`cases`, :data:`MISTAKES`, and backprop's rows
for a wrong sum), what a solution may import (and micrograph's nodes, which the import guard allows),
micrograph's own build_grad as the reference."""
