"""micrograph's benchmark: deep chains, bytes per node, and micrograd's demo training step, as ratios.

Run from the repository root::

    python benchmarks/run.py            # the full run (minutes: the 1e6 chain is the longest part)
    python benchmarks/run.py --quick    # a smoke run: small sizes, one step
    make bench                          # the full run in the project's virtual environment

Every measurement runs in a fresh subprocess (``--worker ...``), so no run inherits another's heap or
garbage-collector state, and every ratio compares figures measured in the same run of this script:

1. **Chain**: ``u = relu(u * 0.999 + 0.1)`` with N operations (N / 3 steps), N = 1e3 ... 1e6. Building
   the nodes, ``z.backward()`` (Algorithm 6.2 from the node), then the replay of the built graph:
   ``Graph(z)``, ``Graph.forward`` (Algorithm 6.1), ``Graph.backprop`` (Algorithm 6.2), and (N <= 1e5)
   ``compile_graph`` and one compiled call. Nanoseconds per operation, and the growth against N = 1e3.
2. **Memory**: bytes per node of a live chain of 1e5 operations (tracemalloc: every Python allocation),
   micrograph against micrograd.
3. **micrograd's demo step**: ``MLP(2, [16, 16, 1])`` on 100 two-moons points, hinge loss + 1e-4 L2 over
   every parameter, SGD with micrograd's schedule, the same initial weights everywhere. Variants:
   micrograd 0.1.0 (PyPI), micrograph eager (micrograd's code with micrograph's imports), micrograph
   replay (one graph of the whole batch, ``Graph.forward`` + ``Graph.backprop`` per step), micrograph
   compiled (one per-example loss graph compiled once, replayed per example), and plain floats
   (forward and backward derived by hand, ``benchmarks/plain_mlp.py``). Three protocols: *gc auto*, the
   mean step time with the garbage collector left on as a user has it (micrograd's graphs, which sit in
   reference cycles, are freed whenever the collector runs; the cost is spread over steps),
   *+ collect*, each step followed by ``gc.collect()``, timed until the graph is gone (after
   ``gc.freeze()`` of what existed before the timed steps, so a collection walks only the step's objects),
   and *gc disabled* for both libraries, the engines' own cost (micrograd's graphs are then never freed).
   Every variant runs in each of ``--rounds`` interleaved rounds (3 by default); the best round counts.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
for _p in (str(ROOT), str(HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import exercises  # noqa: E402  (benchmarks/exercises.py, found through HERE)
from chain import (  # noqa: E402  (benchmarks/chain.py)
    ENGINES,
    chain_section,
    chain_worker,
    engine_chain_worker,
    engines_section,
    gc_section,
    gc_worker,
    memory_section,
    memory_worker,
    peak_worker,
)
from demo import demo_section, demo_worker, discover_pythons, versions_section  # noqa: E402
from measure import run_worker, table  # noqa: E402

PARTS = ["chain", "memory", "demo", "engines", "gc", "versions", "exercises", "explorer", "site"]
"""The benchmark's parts, in the order they run (``--only``)."""


PEAK_BEFORE_MB = 890.0
"""The peak memory of the 1e6-operation chain through backward before the push form (tuple inputs, the
pull form with consumer lists behind Value.backward): the figure the memory target halves."""


COMPILE_BEFORE_US = 73.0
"""compile_graph's cost per operation on the chain before (7 s for a 1e5 chain), which the target divides:
one statement per node of G and of B (built by Algorithm 6.6); docs/performance.md gives it measured
again beside the fused generator."""


def targets(f: dict[str, Any]) -> str:
    """The performance targets against this run's figures (rows whose part did not run are left out)."""
    rows = []
    if "eager_speedup_auto" in f:
        rows += [
            ["eager step vs micrograd, collector in its default state", ">= 8x",
             f"{f['eager_speedup_auto']:.1f}x", f["eager_speedup_auto"] >= 8],
            ["eager step vs micrograd, gc.collect() after each step", ">= 8x",
             f"{f['eager_speedup_collect']:.1f}x", f["eager_speedup_collect"] >= 8],
            ["eager step vs micrograd, collector disabled for both", ">= 3x",
             f"{f['eager_speedup_off']:.1f}x", f["eager_speedup_off"] >= 3],
            ["nn.train(compile=True)'s step vs plain floats by hand (worst protocol)", "<= 1.2x",
             f"{f['compiled_vs_plain']:.2f}x", f["compiled_vs_plain"] <= 1.2],
            ["losses of every variant vs micrograd's (max rel. diff)", "<= 1e-9", f"{f['losses_agree']:.0e}",
             f["losses_agree"] <= 1e-9],
        ]  # fmt: skip
    if "engines_n" in f:
        n = f["engines_n"]
        for e in ("micrograd", "torch"):
            if f"per_op_vs_{e}" in f:
                ratio = f[f"per_op_vs_{e}"]
                rows.append([f"chain build + backward per operation at {n:.0e}, {ENGINES[e]}'s / ours",
                             ">= 1x", f"{ratio:.1f}x", ratio >= 1])  # fmt: skip
        if f.get("torch_missing"):
            missing = f"... PyTorch at {n:.0e}: not installed (pip install 'micrograph[bench]')"
            rows.append([missing, "-", "-", None])
    for version, ratio in f.get("versions", {}).items():
        rows += [
            [f"Python {version}: eager step vs micrograd, collector in its default state", ">= 8x",
             f"{ratio['auto']:.1f}x", ratio["auto"] >= 8],
            [f"Python {version}: eager step vs micrograd, collector disabled for both", ">= 3x",
             f"{ratio['off']:.1f}x", ratio["off"] >= 3],
        ]  # fmt: skip
    if "compile_us" in f:
        goal = COMPILE_BEFORE_US / 5
        rows.append([f"compile_graph per operation (chain of {f['compile_n']:.0e})", f"<= {goal:.1f} us",
                     f"{f['compile_us']:.1f} us", f["compile_us"] <= goal])  # fmt: skip
        rows.append(["... the same with random activations (no two generated parts alike)", "(for reference)",
                     f"{f['compile_mixed_us']:.1f} us", f["compile_mixed_us"] <= goal])  # fmt: skip
    if "peak_mb" in f:
        goal = PEAK_BEFORE_MB / 2
        rows.append([f"peak memory, chain of {f['peak_ops']:.0e} ops through backward", f"<= {goal:.0f} MB",
                     f"{f['peak_mb']:.0f} MB", f["peak_mb"] <= goal])  # fmt: skip
    if "bytes_per_node" in f:
        rows.append(
            ["bytes per live node", "<= 100", f"{f['bytes_per_node']:.1f}", f["bytes_per_node"] <= 100]
        )
    rows += exercises.target_rows(f)
    marked = [[a, b, c, "-" if d is None else "met" if d else "NOT met"] for a, b, c, d in rows]
    return table(marked, ["target", "goal", "measured", ""])


def page_sections(parts: set[str], quick: bool) -> None:
    """Print parts 8 and 9, which open pages in chromium: the explorer's costs, the site's budgets."""
    if "explorer" in parts:
        from explorer import section as explorer_section  # benchmarks/explorer.py: the explorer's costs

        print("8. The explorer (benchmarks/explorer.py)\n\n" + explorer_section(quick=quick) + "\n")
    if "site" in parts:
        print("9. The browser site's budgets (benchmarks/site.py)\n\n" + site_section(quick) + "\n")


def site_section(quick: bool) -> str:
    """benchmarks/site.py's section, the module loaded by its path: ``site`` names the standard library's."""
    spec = importlib.util.spec_from_file_location("micrograph_site_benchmark", HERE / "site.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {HERE / 'site.py'}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.section(quick=quick))


BEGIN = "<!-- the last run of make bench: begin -->"
END = "<!-- the last run of make bench: end -->"


class Tee(io.StringIO):
    """Standard output copied into this buffer during the block, as it is printed."""

    def __enter__(self) -> Tee:
        self._out = sys.stdout
        sys.stdout = self
        return self

    def __exit__(self, *exc: object) -> None:
        sys.stdout = self._out

    def write(self, text: str) -> int:
        self._out.write(text)
        return super().write(text)


def write_report(path: Path, report: str) -> None:
    """Replace what stands between :data:`BEGIN` and :data:`END` in ``path`` with ``report`` (as a code
    block), keeping the rest of the file; written atomically, keeping the file's mode."""
    from viz.files import write_atomic

    text = path.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1] if END in rest else "\n"
    block = f"{BEGIN}\n\n```text\n{report.rstrip()}\n```\n\n{END}"
    write_atomic(path, (head + block + tail).encode("utf-8"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small sizes and one step: a smoke run")
    parser.add_argument("--steps", type=int, default=None, help="timed demo steps per variant (default 10)")
    parser.add_argument(
        "--rounds", type=int, default=3, help="interleaved rounds of the demo step (default 3)"
    )
    parser.add_argument("--only", choices=PARTS, action="append", help="run only this part (repeatable)")
    parser.add_argument(
        "--python", action="append", metavar="EXE",
        help="also time the eager demo step with this interpreter (repeatable; default: nox's test "
        "environments .nox/tests-3-1X, made by `nox -s tests`, each with micrograph and micrograd installed)",
    )  # fmt: skip
    parser.add_argument(
        "--write", metavar="MD", type=Path,
        help="also write the report into MD, between its lines " + BEGIN + " and " + END + " (make bench: "
        "docs/performance.md), so the measured numbers live there and not in the code",
    )  # fmt: skip
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(_worker(*args.worker)))
        return 0
    if args.write is None:
        return run(args)
    if not args.write.is_file() or BEGIN not in args.write.read_text(encoding="utf-8"):
        parser.error(f"--write {args.write}: not a file holding the line {BEGIN}")
    with Tee() as report:
        status = run(args)
    write_report(args.write, report.getvalue())
    return status


def _worker(kind: str, *rest: str) -> Any:
    """One measurement in this fresh process (``--worker KIND ARGS``): its result, as JSON data."""
    if kind == "chain":
        return chain_worker(int(rest[0]), int(rest[1]), int(rest[2]))
    if kind == "memory":
        return memory_worker(rest[0], int(rest[1]))
    if kind == "peak":
        return peak_worker(int(rest[0]))
    if kind == "engine_chain":
        return engine_chain_worker(rest[0], int(rest[1]))
    if kind == "gc":
        return gc_worker(rest[0], int(rest[1]))
    return demo_worker(rest[0], int(rest[1]), rest[2], int(rest[3]))


def run(args: argparse.Namespace) -> int:
    """The benchmark's parts that ``args`` asks for, printed as they are measured, then the targets."""
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000, 1_000_000]
    steps = args.steps or (1 if args.quick else 10)
    n_mem = 10_000 if args.quick else 100_000
    import micrograd

    print(f"micrograph benchmark{' (quick)' if args.quick else ''}: Python {sys.version.split()[0]}, "
          f"micrograd {getattr(micrograd, '__version__', '0.1.0')}, {os.cpu_count()} CPUs, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")  # fmt: skip
    parts = set(args.only or PARTS)
    facts: dict[str, Any] = {}
    if "chain" in parts:
        text, more = chain_section(sizes, compile_max=100_000, repeats=1 if args.quick else 5)
        facts.update(more)
        print("1. Chain u = relu(u * 0.999 + 0.1): ns per operation (build = making the nodes, backward =")
        print("   z.backward(); replay: Graph(z), Graph.forward, Graph.backprop; compile: compile_graph)\n")
        print(text + "\n")
    if "memory" in parts:
        text, more = memory_section(n_mem)
        facts.update(more)
        peak_ops = 10_000 if args.quick else 1_000_000
        print(f"  peak memory, chain of {peak_ops:.0e} ops ...", file=sys.stderr, flush=True)
        peak = run_worker(["peak", str(peak_ops)])
        facts.update(peak_mb=peak["peak_mb"], peak_ops=peak_ops)
        print(f"2. Memory of a live chain of {n_mem:.0e} operations (tracemalloc)\n")
        print(text + "\n")
    if "demo" in parts:
        n_points = 30 if args.quick else 100
        text, more = demo_section(steps, n_points, rounds=1 if args.quick else args.rounds)
        facts.update(more)
        rounds = 1 if args.quick else args.rounds
        print(f"3. micrograd's demo step: MLP(2, [16, 16, 1]), {n_points} two-moons points, hinge + 1e-4 L2,")
        print(f"   SGD; mean of {steps} step(s) after one warm-up, best of {rounds} interleaved round(s)\n")
        print(text + "\n")
    if "engines" in parts:
        text, more = engines_section(sizes)
        facts.update(more)
        print("4. The same chain in micrograph, micrograd and PyTorch: build + backward, ns per operation\n")
        print(text + "\n")
    if "gc" in parts:
        n_gc = sizes[-1]
        text, more = gc_section(n_gc, 1 if args.quick else args.rounds)
        facts.update(more)
        print(f"5. A chain of {n_gc:.0e} operations built in the user's own loop: the collector's knobs")
        print(f"   (best of {1 if args.quick else args.rounds} interleaved round(s))\n")
        print(text + "\n")
    if "versions" in parts:
        found = [] if args.quick else discover_pythons()  # a smoke run times this interpreter only
        pythons = args.python if args.python is not None else found
        here = Path(sys.executable).resolve()
        pythons = [sys.executable] + [p for p in pythons if Path(p).resolve() != here]
        rounds = 1 if args.quick else args.rounds
        n_points = 30 if args.quick else 100
        text, more = versions_section(pythons, steps, n_points, rounds)
        facts.update(more)
        print(f"6. micrograd's demo step per Python: mean of {steps} step(s), best of {rounds} round(s)\n")
        print(text + "\n")
    if "exercises" in parts:
        text, more = exercises.section(runs=1 if args.quick else 3, worst=not args.quick)
        facts.update(more)
        print("7. The exercise checker: a correct solution's whole check (judge, runner, every case)\n")
        print(text + "\n")
    page_sections(parts, args.quick)
    print("Targets\n")
    print(targets(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
