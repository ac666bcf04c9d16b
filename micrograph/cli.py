"""The ``micrograph`` command: ``tour``, ``lesson``, ``render``, ``blowup``, ``train``, ``exercise``.

::

    micrograph tour --out out/                                   # every lesson, every picture, an index.html
    micrograph lesson 2                                          # step through lesson 2 (Enter, b, q)
    micrograph render "tanh(tanh(tanh(w)))" --at w=0.5 --wrt w --out fig_6_10.svg     # figure 6.10
    micrograph blowup --family ladder --max-depth 24 --out blowup.png                  # figure 6.9's argument
    micrograph train iris --hidden 8 --epochs 100 --out iris/                          # Algorithms 6.3/6.4
    micrograph exercise check backprop.py                                              # your Algorithm 6.2

Expressions are parsed by :mod:`micrograph.expr` (Python's ``ast`` and a whitelist; never ``eval``). Every
mistake a user can make (a bad expression, a value outside an operation's domain, an output file that
exists, a missing directory that cannot be created) exits with status 2 and one line on stderr that says
what is wrong, never a traceback.

This module sits above everything else: it is the only part of the ``micrograph`` package that imports
``viz`` and ``lessons``, lazily, inside the commands, and nothing imports it but ``__main__.py``.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from micrograph import pseudocode

__all__ = ["main", "build_parser", "UserError"]

PROG = "micrograph"


class UserError(Exception):
    """A mistake in the command line: reported as one line on stderr, exit status 2.

    Attributes:
        detail: extra lines printed after the message (e.g. an expression with a caret), or "".
    """

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (with a pointer to --help) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def _print_message(self, message: str, file: Any = None) -> None:
        # argparse ignores a failed write; a closed stdout (--help | head) must reach micrograph.__main__
        if message:
            (file or sys.stderr).write(message)


# --- output files ---------------------------------------------------------------------------------------


def _output_file(path: str, force: bool, suffixes: Sequence[str]) -> Path:
    """Check an output file: known suffix, an existing directory, not an existing file unless --force."""
    p = Path(path)
    if p.suffix.lower() not in suffixes:
        raise UserError(f"cannot write {path!r}: the file name must end in {', '.join(suffixes)}")
    if p.is_dir():
        raise UserError(f"{path!r} is a directory; give a file name ending in {', '.join(suffixes)}")
    parent = p.parent
    if not parent.is_dir():
        what = "is not a directory" if parent.exists() else "does not exist; create it first"
        raise UserError(f"cannot write {path!r}: {str(parent)!r} {what}")
    if (p.exists() or p.is_symlink()) and not force:
        raise UserError(f"{path} exists; not overwriting it without --force")
    if not os.access(parent, os.W_OK):
        raise UserError(f"cannot write {path!r}: the directory {str(parent)!r} is not writable")
    return p


def _output_dir(path: str, force: bool, files: Sequence[str]) -> Path:
    """Check an output directory: refuse to replace ``files`` without --force; create it (not its parents)."""
    d = Path(path)
    if d.exists() and not d.is_dir():
        raise UserError(f"{path!r} exists and is not a directory")
    if d.is_dir() and not force:
        clash = [f for f in files if (d / f).exists() or (d / f).is_symlink()]
        if clash:
            more = f" and {len(clash) - 1} more" if len(clash) > 1 else ""
            raise UserError(f"{d / clash[0]}{more} exist(s); not overwriting without --force")
    if not d.is_dir():
        if not d.parent.is_dir():
            raise UserError(f"cannot create {path!r}: the directory {str(d.parent)!r} does not exist")
        try:
            d.mkdir()
        except OSError as e:
            raise UserError(f"cannot create the directory {path!r}: {e.strerror or e}") from None
        print(f"{PROG}: created directory {d}", file=sys.stderr)
    if not os.access(d, os.W_OK):
        raise UserError(f"cannot write into {path!r}: the directory is not writable")
    return d


# --- render ---------------------------------------------------------------------------------------------


def _bindings(args: argparse.Namespace) -> dict[str, float]:
    """The --at values of the expression's variables, checked against the expression (and --wrt)."""
    from micrograph.expr import parse_binding, variables

    names = variables(args.expression)  # checks the whitelist before anything else
    env: dict[str, float] = {}
    for binding in args.at:
        name, value = parse_binding(binding)
        if name in env:
            raise UserError(f"--at {name}=... is given twice ({env[name]:g} and {value:g}); give it once")
        env[name] = value
    missing = [n for n in names if n not in env]
    if missing:
        raise UserError(
            f"no value for {', '.join(missing)}: give one with "
            + " ".join(f"--at {n}=NUMBER" for n in missing)
        )
    unused = [n for n in env if n not in names]
    if unused:
        raise UserError(
            f"--at {unused[0]}=...: the expression has no variable {unused[0]!r} (it uses "
            f"{', '.join(names) or 'none'})"
        )
    for name in args.wrt:
        if name not in names:
            raise UserError(
                f"--wrt {name}: the expression has no variable {name!r} (it uses "
                f"{', '.join(names) or 'none'})"
            )
    if args.max_nodes < 1:
        raise UserError(f"--max-nodes must be at least 1, got {args.max_nodes}")
    return env


def _cmd_render(args: argparse.Namespace) -> int:
    from micrograph.expr import build

    env = _bindings(args)
    suffixes = (".svg", ".png", ".pdf", ".dot", ".tex", ".gif", ".mp4")
    out = _output_file(args.out, args.force, suffixes) if args.out else None
    z = build(args.expression, env)  # a DomainError (log(0), 1/0 ...) stops here, before anything is written
    leaves = {v.label: v for v in _leaves(z)}

    import viz

    if args.wrt:
        wrt = [leaves[n] for n in args.wrt]
        dot = viz.draw_side_by_side(z, wrt, max_nodes=args.max_nodes)
    else:
        dot = viz.draw(z, max_nodes=args.max_nodes, title=args.expression)
    z.backward()  # Algorithm 6.2: the table below shows each node's gradient dz/du
    print(viz.text(z))
    for n in args.wrt:
        print(
            f"dz/d{n} = {leaves[n].grad:.6g}   (Algorithm 6.2; the node of B that grad() built "
            "holds the same)"
        )
    if out is None:
        print(f"{PROG}: nothing written (give --out FILE.svg to draw it)", file=sys.stderr)
        return 0
    if out.suffix.lower() == ".tex":  # TikZ from Graphviz's layout: a LaTeX document for pdflatex
        written = viz.write_atomic(out, viz.to_tikz(dot).encode("utf-8"), overwrite=args.force)
    elif out.suffix.lower() in (".gif", ".mp4"):  # Algorithms 6.1 and 6.2 on G, one frame per step
        written = viz.animate(z, out, overwrite=args.force, max_nodes=args.max_nodes)
    else:
        written = viz.render(dot, out, overwrite=args.force)  # nothing replaced without --force (nor g.dot)
    print(f"wrote {written}")
    return 0


def _cmd_explore(args: argparse.Namespace) -> int:
    from micrograph.expr import build

    env = _bindings(args)
    out = _output_file(args.out, args.force, (".html",))
    z = build(args.expression, env)  # a DomainError stops here, before anything is written
    leaves = {v.label: v for v in _leaves(z)}
    import viz

    explorer = viz.explore(z, [leaves[n] for n in args.wrt] or None, max_nodes=args.max_nodes)
    written = explorer.save(out, overwrite=args.force)
    print(
        f"wrote {written} ({explorer.spec['n']} nodes, {len(explorer.spec['frames'])} frames); "
        "open it in a browser"
    )
    return 0


def _cmd_notebooks(args: argparse.Namespace) -> int:
    import lessons
    from lessons.notebooks import write_notebooks

    try:
        import nbformat  # noqa: F401
    except ImportError:
        raise UserError("micrograph notebooks needs nbformat: pip install 'micrograph[notebook]'") from None
    files = [f"lesson{n}.ipynb" for n in lessons.LESSONS]
    out = _output_dir(args.out, args.force, files)
    for path in write_notebooks(out, overwrite=args.force):
        print(f"wrote {path}")
    return 0


def _leaves(z: Any) -> list[Any]:
    from micrograph import Graph

    return Graph(z).variables


# --- blowup ---------------------------------------------------------------------------------------------


def _cmd_blowup(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from micrograph import families

    if args.max_depth < 1 or args.max_depth > 60:
        raise UserError(f"--max-depth must be between 1 and 60, got {args.max_depth}")
    if args.budget < 1:
        raise UserError(f"--budget must be a positive number of operations, got {args.budget}")
    fams = list(families.FAMILIES) if args.family == "both" else [args.family]
    out = _output_file(args.out, args.force, (".png", ".svg", ".pdf")) if args.out else None
    rows: dict[str, list[dict[str, Any]]] = {}
    with tqdm(
        total=len(fams) + (out is not None),
        desc="blowup",
        unit="stage",
        file=sys.stderr,
        disable=args.quiet or not sys.stderr.isatty(),
    ) as bar:
        for fam in fams:
            bar.set_postfix_str(f"counting {fam} (naive chain rule vs back-propagation)")
            rows[fam] = families.blowup_rows(fam, args.max_depth, max_operations=args.budget)
            bar.update()
        if out is not None:
            bar.set_postfix_str("plotting")
            import viz

            fig = viz.plot_blowup(
                args.max_depth, None, families=tuple(fams), max_operations=args.budget, rows=rows
            )
            _save_plot(fig, out)
            bar.update()
    for fam in fams:
        print(
            f"{fam}: depth, paths w->z, naive chain rule operations (eq. 6.53), back-propagation (eq. 6.52)"
        )
        for r in rows[fam]:
            mark = "" if r["naive_complete"] else "  (closed form: the naive run was stopped by the budget)"
            print(f"  {r['depth']:>3}  {r['paths']:>12}  {r['naive_ops']:>16}  {r['backprop_ops']:>6}{mark}")
    if out is not None:
        print(f"wrote {out}")
    return 0


def _save_plot(fig: Any, out: Path) -> None:
    import viz

    viz.save(fig, out, overwrite=True)  # checked before anything was computed (--force)


# --- train ----------------------------------------------------------------------------------------------

DATASETS = ("iris", "wine", "moons", "circles")


def _cmd_train(args: argparse.Namespace) -> int:
    from micrograph import datasets, nn

    if args.hidden < 1 or args.epochs < 1:
        raise UserError("--hidden and --epochs must be positive integers")
    if args.batch_size < 1:
        raise UserError(f"--batch-size must be a positive integer, got {args.batch_size}")
    if not (args.lr > 0 and math.isfinite(args.lr)):
        raise UserError(f"--lr must be a positive finite number, got {args.lr}")
    if not (args.l2 >= 0 and math.isfinite(args.l2)):
        raise UserError(f"--l2 must be a finite number >= 0, got {args.l2}")
    files = ["loss.png", "summary.json"] + (["boundary.png"] if args.data in ("moons", "circles") else [])
    out = _output_dir(args.out, args.force, files) if args.out else None
    X, y = getattr(datasets, args.data)()
    train, test = datasets.split(X, y, test_fraction=0.3, seed=args.seed)
    train, test = datasets.standardize(train, test)
    classes = len(set(y))
    model = nn.MLP(len(X[0]), [args.hidden, classes], activation="tanh", seed=args.seed)
    t0 = time.perf_counter()
    history = nn.train(
        model,
        train,
        loss="cross_entropy",
        lr=args.lr,
        epochs=args.epochs,
        batch_size=args.batch_size,
        l2=args.l2,
        seed=args.seed,
        test=test,
        progress=not args.quiet and sys.stderr.isatty(),
        compile=not args.no_compile,
    )
    seconds = time.perf_counter() - t0
    summary = {
        "data": args.data,
        "examples": {"train": len(train[0]), "test": len(test[0])},
        "model": f"MLP({len(X[0])}, [{args.hidden}, {classes}]), tanh hidden layer, softmax cross-entropy",
        "epochs": history.epochs,
        "train_loss": history.loss[-1],
        "train_accuracy": nn.accuracy(model, train),
        "test_accuracy": nn.accuracy(model, test),
        "seconds": round(seconds, 2),
    }
    print(f"{args.data}: {summary['model']}, {history.epochs} epochs in {seconds:.1f} s")
    print(
        f"  final training loss {summary['train_loss']:.4f}, training accuracy "
        f"{summary['train_accuracy']:.3f}, held-out accuracy {summary['test_accuracy']:.3f} "
        f"({len(test[0])} examples never trained on)"
    )
    if out is None:
        return 0
    import viz

    _save_plot(viz.plot_training(history, None, title=f"{args.data}: training"), out / "loss.png")
    written = [out / "loss.png"]
    if len(X[0]) == 2:
        Xt, yt = test
        _save_plot(
            viz.plot_decision_boundary(model, Xt, yt, None, title=f"{args.data}: decision boundary"),
            out / "boundary.png",
        )
        written.append(out / "boundary.png")
    viz.write_atomic(out / "summary.json", (json.dumps(summary, indent=2) + "\n").encode("utf-8"))
    written.append(out / "summary.json")
    for p in written:
        print(f"wrote {p}")
    return 0


# --- lessons and the tour -------------------------------------------------------------------------------


def _cmd_lesson(args: argparse.Namespace) -> int:
    import lessons
    from lessons.__main__ import main as lessons_main

    if args.number is None:
        print(lessons.list())
        return 0
    if args.number not in lessons.LESSONS:
        raise UserError(
            f"there is no lesson {args.number}; the lessons are {', '.join(map(str, lessons.LESSONS))}"
        )
    if args.expr is None:
        if args.at:
            raise UserError("--at needs --expr: the values are for the variables of your expression")
        return lessons_main([str(args.number)])
    from lessons.__main__ import interact, print_all
    from micrograph.errors import DomainError

    env = _bindings(argparse.Namespace(expression=args.expr, at=args.at, wrt=[], max_nodes=1))
    try:
        stepper = lessons.start(args.number, expr=args.expr, at=env)
    except DomainError:
        raise
    except ValueError as e:  # a lesson that takes no expression says so
        raise UserError(str(e)) from None
    if sys.stdin.isatty() and sys.stdout.isatty():
        return interact(stepper)
    print_all(stepper)
    return 0


def _cmd_steps(args: argparse.Namespace) -> int:
    from micrograph.expr import build

    env = _bindings(args)  # an unknown --wrt name is an error here, as for render
    if args.wrt and args.algorithm == "6.2":
        raise UserError("--wrt chooses T for Algorithm 6.5: give it with --algorithm 6.6 or --algorithm all")
    out = _output_file(args.out, args.force, (".html",))
    z = build(args.expression, env)  # a DomainError stops here, before anything is written
    leaves = {v.label: v for v in _leaves(z)}
    wrt = [leaves[n] for n in dict.fromkeys(args.wrt)] or None
    if args.algorithm != "6.2" and wrt is None and not leaves:
        raise UserError(f"{args.expression!r} has no variables: Algorithm 6.5 needs one to differentiate by")
    import viz

    written = viz.steps(
        z, out, algorithm=args.algorithm, wrt=wrt, overwrite=args.force, max_nodes=args.max_nodes
    )
    shown = pseudocode.named(pseudocode.STEP_PAGES[args.algorithm])
    print(f"wrote {written}: {shown} step by step on z = {args.expression}")
    return 0


def _cmd_tour(args: argparse.Namespace) -> int:
    import lessons
    from lessons import tour

    if args.lessons == []:
        raise UserError(
            f"--lessons: no lesson given; give numbers such as 1,2,6 (the lessons are "
            f"{', '.join(map(str, lessons.LESSONS))})"
        )
    bad = [n for n in (args.lessons or []) if n not in lessons.LESSONS]
    if bad:
        raise UserError(
            f"--lessons: there is no lesson {bad[0]}; the lessons are {', '.join(map(str, lessons.LESSONS))}"
        )
    out = Path(args.out)
    t0 = time.perf_counter()
    try:
        result = tour.run(
            out, progress=not args.quiet and sys.stderr.isatty(), only=args.lessons, replace=args.force
        )
    except (FileExistsError, FileNotFoundError, NotADirectoryError) as e:
        raise UserError(str(e)) from None
    seconds = time.perf_counter() - t0
    print(
        f"The tour ran {result.lessons} lessons, {result.steps} steps, in {seconds:.1f} s and wrote "
        f"{len(result.files)} files to {out}/."
    )
    print(f"Start here: {out / tour.INDEX}   (open it in a browser; every picture is linked from it)")
    return 0


# --- exercise -------------------------------------------------------------------------------------------

_EXERCISE_FLOW = """\
The flow: list the exercises, start one (a template NAME.py with the book's pseudo-code and TODOs is
written into the current directory, never over an existing file), fill in the TODOs, check it. The check
runs your code on graphs chosen to catch the real mistakes and compares it with micrograph's own
algorithms; at the first failure it names the wrong node, the expected and actual values, the term of the
sum that differs, a hint with the book's sentence, and writes a drawing of the failure next to your file
(NAME.failure.svg). Passes are kept in .micrograph-progress.json in the current directory.

  micrograph exercise list
  micrograph exercise start backprop
  micrograph exercise check backprop.py          # exit 0: all checks pass, 1: a check failed
  micrograph exercise check backprop.py --json   # for a course's autograder
"""


def _exercise_of(path: Path, given: str | None) -> str:
    """The exercise a file is: --exercise, else its marker line, else its name (backprop.py)."""
    from lessons import exercises

    if given is not None:
        if given not in exercises.EXERCISES:
            raise UserError(
                f"there is no exercise {given!r}; the exercises are {', '.join(exercises.EXERCISES)}"
            )
        return given
    try:
        head = path.read_text(encoding="utf-8", errors="replace").splitlines()[:5]
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror or e}") from None
    for line in head:
        if line.startswith("# micrograph exercise:"):
            name = line.split(":", 1)[1].strip()
            if name in exercises.EXERCISES:
                return name
    if path.stem in exercises.EXERCISES:
        return path.stem
    raise UserError(
        f"cannot tell which exercise {path} is: name it after one ({', '.join(exercises.EXERCISES)}), "
        "keep the template's first line, or pass --exercise NAME"
    )


def _cmd_exercise(args: argparse.Namespace) -> int:
    from lessons import exercises

    if args.action == "list":
        print(exercises.list())
        return 0
    if args.action == "start":
        if args.name not in exercises.EXERCISES:
            raise UserError(
                f"there is no exercise {args.name!r}; the exercises are {', '.join(exercises.EXERCISES)}"
            )
        target = Path(args.dir)
        if not target.is_dir():
            raise UserError(f"{args.dir!r} is not a directory")
        try:
            path = exercises.start(args.name, target)
        except FileExistsError:
            raise UserError(
                f"{target / (args.name + '.py')} exists; not overwriting it (move it away to start again)"
            ) from None
        except OSError as e:
            raise UserError(f"cannot write into {args.dir!r}: {e.strerror or e}") from None
        print(f"wrote {path}: fill in the TODOs, then run  micrograph exercise check {path}")
        return 0
    path = Path(args.file)
    if not path.is_file():
        raise UserError(f"no file {args.file!r} to check")
    if args.time_limit is not None and not args.time_limit > 0:
        raise UserError(f"--time-limit must be a positive number of seconds, got {args.time_limit}")
    name = _exercise_of(path, args.exercise)
    kw = {} if args.time_limit is None else {"time_limit": args.time_limit}
    report = exercises.check(
        name, path, record=not args.no_progress, **kw
    )  # a failure's drawing: next to FILE
    print(report.to_json() if args.json else report.text())
    return 0 if report.passed else 1


# --- the parser -----------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``micrograph`` command (every subcommand has ``--help``)."""
    p = _Parser(
        prog=PROG,
        description="micrograph: back-propagation as section 6.5 of Deep Learning "
        "(Goodfellow, Bengio & Courville, 2016) writes it, on scalars, made visible.",
        epilog="Start with: micrograph tour --out out/",
    )
    p.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    t = sub.add_parser(
        "tour",
        help="run every lesson and write all diagrams, plots and an index.html",
        description="Run every lesson's steps and write each diagram (SVG), the plots (PNG), "
        "the step-through HTML pages and an index.html that links them all.",
    )
    t.add_argument(
        "--out", default="out", help="output directory (created if missing, in an existing one; default: out)"
    )
    t.add_argument(
        "--force",
        action="store_true",
        help="replace an earlier tour in --out (never a directory of other files)",
    )
    t.add_argument(
        "--lessons",
        type=_lesson_list,
        default=None,
        metavar="N,N,...",
        help="only these lessons (default: all)",
    )
    t.add_argument("--quiet", action="store_true", help="no progress bar (shown on a terminal only)")
    t.set_defaults(func=_cmd_tour)

    le = sub.add_parser(
        "lesson",
        help="list the lessons, or step through one",
        description="Without N, list the lessons. With N, step through lesson N: Enter for the "
        "next step, b back, q quit; with stdin not a terminal, print every "
        "step.",
    )
    le.add_argument("number", type=int, nargs="?", metavar="N", help="the lesson number")
    le.add_argument(
        "--expr",
        metavar="EXPRESSION",
        help='run lesson 1, 2, 6 or 7 on your own expression, e.g. "x*y + exp(x)" (--at for each variable)',
    )
    le.add_argument(
        "--at",
        action="append",
        default=[],
        metavar="NAME=NUMBER",
        help="the value of a variable of --expr; repeat for each (e.g. --at x=1 --at y=2)",
    )
    le.set_defaults(func=_cmd_lesson)

    st = sub.add_parser(
        "steps",
        help="write the step-through page of Algorithms 6.1 and 6.2 (or 6.5 and 6.6) for an expression",
        description="Write one self-contained HTML page that steps through Algorithm 6.1 (forward) and "
        "Algorithm 6.2 (back-propagation) on the graph of EXPRESSION, frame by frame; with --algorithm 6.6, "
        "through Algorithm 6.5 and each call of build_grad (Algorithm 6.6) instead.",
        epilog='examples: micrograph steps "x*y + exp(x)" --at x=1 --at y=2 --out page.html; '
        'micrograph steps "tanh(tanh(tanh(w)))" --at w=0.5 --algorithm 6.6 --out alg66.html',
    )
    st.add_argument("expression", help='e.g. "tanh(tanh(tanh(w)))" or "x*y + exp(x)"')
    st.add_argument(
        "--at",
        action="append",
        default=[],
        metavar="NAME=NUMBER",
        help="the value of a variable; repeat for each (e.g. --at w=0.5)",
    )
    st.add_argument(
        "--algorithm",
        choices=list(pseudocode.STEP_PAGES),
        default="6.2",
        help="6.2 (default): Algorithm 6.1 (forward) then 6.2 (symbol-to-number back-propagation), node by "
        "node; 6.6: Algorithm 6.5 (G pruned to G', grad_table[z] = 1) then one frame per call of "
        "build_grad (Algorithm 6.6, symbol-to-symbol), G and B side by side with the nodes each call adds "
        "to B highlighted; all: both, one page",
    )
    st.add_argument(
        "--wrt",
        action="append",
        default=[],
        metavar="NAME",
        help="with --algorithm 6.6 or all: a variable of T, the targets of Algorithm 6.5 (repeatable; "
        "default: every variable)",
    )
    st.add_argument("--out", required=True, help="the page to write (.html)")
    st.add_argument("--force", action="store_true", help="overwrite an existing file")
    st.add_argument("--max-nodes", type=int, default=80,
                    help="refuse bigger graphs: G, or G and B together for 6.6 (default 80)")  # fmt: skip
    st.set_defaults(func=_cmd_steps)

    r = sub.add_parser(
        "render",
        help="draw an expression's graph G, or G and B side by side (figure 6.10)",
        description="Parse an expression over named variables (numbers, names, + - * / ** and "
        "unary -, exp log tanh sigmoid relu sin cos sqrt; nothing else, never "
        "eval), print its "
        "node table, and draw it. With --wrt, draw G and the backward subgraph B side by side "
        "(figure 6.10).",
        epilog='example: micrograph render "tanh(tanh(tanh(w)))" --at w=0.5 --wrt w --out fig_6_10.svg',
    )
    r.add_argument("expression", help='e.g. "tanh(tanh(tanh(w)))" or "x*y + exp(x)"')
    r.add_argument(
        "--at",
        action="append",
        default=[],
        metavar="NAME=NUMBER",
        help="the value of a variable; repeat for each (e.g. --at w=0.5)",
    )
    r.add_argument(
        "--wrt",
        action="append",
        default=[],
        metavar="NAME",
        help="differentiate with respect to this variable (repeatable): draws B beside G",
    )
    r.add_argument(
        "--out",
        help="the file to write: .svg, .png, .pdf, .dot, .tex (TikZ, for LaTeX), "
        ".gif or .mp4 (Algorithms 6.1 and 6.2 animated, for slides)",
    )
    r.add_argument("--force", action="store_true", help="overwrite an existing file")
    r.add_argument("--max-nodes", type=int, default=300, help="refuse to draw bigger graphs (default 300)")
    r.set_defaults(func=_cmd_render)

    xp = sub.add_parser(
        "explore",
        help="one HTML page: drag each variable, watch G and B change, step through Algorithms 6.1/6.2",
        description="Parse an expression (as render does, never eval) and write the explorer as one "
        "self-contained HTML page: a slider per variable, G and B recomputed in the browser by JavaScript "
        "generated from the operation table, the frames of Algorithms 6.1 and 6.2, and a node's "
        "grad_table entry as the book's sum when clicked.",
        epilog='example: micrograph explore "tanh(x*y + exp(x))" --at x=1 --at y=2 --out z.html',
    )
    xp.add_argument("expression", help='e.g. "tanh(x*y + exp(x))"')
    xp.add_argument("--at", action="append", default=[], metavar="NAME=NUMBER",
                    help="the starting value of a variable; repeat for each (e.g. --at x=1)")  # fmt: skip
    xp.add_argument("--wrt", action="append", default=[], metavar="NAME",
                    help="draw B for these variables (repeatable; default: every variable)")  # fmt: skip
    xp.add_argument("--out", required=True, help="the page to write (.html)")
    xp.add_argument("--force", action="store_true", help="overwrite an existing file")
    xp.add_argument("--max-nodes", type=int, default=300, help="refuse to draw bigger graphs (default 300)")
    xp.set_defaults(func=_cmd_explore)

    nbp = sub.add_parser(
        "notebooks",
        help="every lesson as a Jupyter notebook (lesson1.ipynb ...), generated from the lessons themselves",
        description="Run each lesson once and write it as a notebook: its text as Markdown cells, the code "
        "of each step as a code cell, its pictures as the cells' outputs.",
        epilog="example: micrograph notebooks --out notebooks/",
    )
    nbp.add_argument("--out", required=True, help="the directory to write into (created if missing)")
    nbp.add_argument("--force", action="store_true", help="overwrite existing notebooks")
    nbp.set_defaults(func=_cmd_notebooks)

    b = sub.add_parser(
        "blowup",
        help="count the naive chain rule against back-propagation, and plot it",
        description="Figure 6.9 and equations 6.50-6.53: the operations the naive chain rule "
        "needs against back-propagation, for the chain z = f(f(...f(w))) and the ladder where "
        "each level uses the previous one twice (2^depth paths).",
    )
    b.add_argument(
        "--family",
        choices=["chain", "ladder", "both"],
        default="both",
        help="which family of graphs (default: both)",
    )
    b.add_argument("--max-depth", type=int, default=20, help="the deepest graph (default 20)")
    b.add_argument(
        "--budget",
        type=int,
        default=2_000_000,
        help="stop the naive rule after this many operations per depth; deeper points use the "
        "closed form (default 2000000)",
    )
    b.add_argument("--out", help="the plot to write: .png, .svg or .pdf")
    b.add_argument("--force", action="store_true", help="overwrite an existing file")
    b.add_argument("--quiet", action="store_true", help="no progress bar (shown on a terminal only)")
    b.set_defaults(func=_cmd_blowup)

    tr = sub.add_parser(
        "train",
        help="train an MLP on a data set (Algorithms 6.3, 6.4) and plot the loss",
        description="Train a one-hidden-layer MLP with softmax cross-entropy by minibatch SGD on "
        "a shipped data set (70% train, 30% held out, standardized on the training part). "
        "Writes loss.png, summary.json and, for 2-D data, boundary.png.",
    )
    tr.add_argument("data", choices=DATASETS, help="the data set")
    tr.add_argument("--hidden", type=int, default=8, help="hidden units (default 8)")
    tr.add_argument("--epochs", type=int, default=100, help="epochs (default 100)")
    tr.add_argument("--lr", type=float, default=0.1, help="learning rate (default 0.1)")
    tr.add_argument("--batch-size", type=int, default=16, help="minibatch size (default 16)")
    tr.add_argument("--l2", type=float, default=1e-4, help="weight decay lambda (default 1e-4)")
    tr.add_argument("--seed", type=int, default=0, help="seed for the split, the weights and the shuffling")
    tr.add_argument("--out", help="output directory (created if missing)")
    tr.add_argument("--force", action="store_true", help="overwrite earlier results in --out")
    tr.add_argument(
        "--no-compile",
        action="store_true",
        help="back-propagate through the Value graph each step instead of the compiled replay "
        "(same numbers, slower)",
    )
    tr.add_argument("--quiet", action="store_true", help="no progress bar (shown on a terminal only)")
    tr.set_defaults(func=_cmd_train)

    ex = sub.add_parser(
        "exercise",
        help="exercises: write the book's algorithms yourself and have them checked",
        description="Exercises for section 6.5: you write the book's algorithms (local derivatives, the "
        "topological order, Algorithms 6.1, 6.2, 6.4 and 6.6, the naive chain rule), micrograph checks them.",
        epilog=_EXERCISE_FLOW,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ex_sub = ex.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser)
    ex_sub.add_parser("list", help="the exercises, the book's algorithm each covers, which passed")
    ex_start = ex_sub.add_parser("start", help="write the template NAME.py (never overwrites)")
    ex_start.add_argument("name", metavar="NAME", help="the exercise (see: micrograph exercise list)")
    ex_start.add_argument("--dir", default=".", help="the directory to write it into (default: here)")
    ex_check = ex_sub.add_parser(
        "check",
        help="check FILE; exit 0 when every check passes, 1 otherwise",
        description="Check your solution against micrograph's engine. Exit status: 0 every check passed, 1 a "
        "check failed (the report says where and why), 2 a usage error. A drawing of the failure is written "
        "next to FILE as FILE's name with .failure.svg.",
    )
    ex_check.add_argument("file", metavar="FILE", help="your solution, e.g. backprop.py")
    ex_check.add_argument("--json", action="store_true", help="print the report as JSON (for autograders)")
    ex_check.add_argument(
        "--no-progress", action="store_true", help="do not record the result in .micrograph-progress.json"
    )
    ex_check.add_argument("--exercise", metavar="NAME", help="which exercise FILE is (default: from FILE)")
    ex_check.add_argument(
        "--time-limit", type=float, metavar="S", help="seconds one case may run (default: 3)"
    )
    ex.set_defaults(func=_cmd_exercise, exercise_parser=ex)
    return p


def _version() -> str:
    from micrograph import __version__

    return __version__


def _lesson_list(text: str) -> list[int]:
    try:
        return [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected lesson numbers such as 1,2,6, got {text!r}") from None


def _expressions_as_positionals(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """Let an expression start with a minus (``micrograph render "-x" --at x=1``).

    argparse reads any word starting with ``-`` as an option. A word that is not one of the subcommand's
    options, nor a negative number, is given a leading space, which argparse reads as a positional and the
    expression parser ignores.
    """
    if not argv or argv[0] not in _EXPRESSION_COMMANDS:
        return argv
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    command = sub.choices.get(argv[0])
    if command is None:
        return argv
    options = set(command._option_string_actions)
    out = argv[:1]
    for word in argv[1:]:
        name = word.split("=", 1)[0]
        dash = word.startswith("-") and not word.startswith("--")
        if dash and name not in options and not _is_number(word):
            word = " " + word
        out.append(word)
    return out


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


_EXPRESSION_COMMANDS = ("render", "steps", "explore")
"""The subcommands whose positional argument is an expression."""


def _fail(message: str, detail: str = "") -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    if detail:
        print(detail, file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    """Run the ``micrograph`` command with ``argv`` (``sys.argv[1:]`` by default); return the exit status.

    User errors exit 2 with one line on stderr (``micrograph: error: ...``); a syntax error in an
    expression adds the expression and a caret under the column.
    """
    parser = build_parser()
    args = parser.parse_args(_expressions_as_positionals(parser, sys.argv[1:] if argv is None else argv))
    if args.command is None:
        parser.print_help()
        return 0
    from micrograph.errors import DomainError
    from micrograph.expr import ExprError
    from micrograph.train import TrainingError
    from viz.dot import GraphTooLarge
    from viz.render import GraphvizFailed, GraphvizMissing

    if args.command == "exercise" and args.action is None:
        args.exercise_parser.print_help()
        return 0
    try:
        return int(args.func(args))
    except ExprError as e:
        return _fail(str(e), e.caret())
    except UserError as e:
        return _fail(str(e), e.detail)
    except DomainError as e:
        return _fail(f"value outside the domain: {e}")
    except FileExistsError as e:
        return _fail(f"{e}; use --force to overwrite")
    except (GraphTooLarge, GraphvizMissing, GraphvizFailed, TrainingError) as e:
        return _fail(str(e))
    except ModuleNotFoundError as e:  # an optional extra not installed (the message names it)
        return _fail(str(e))
    except subprocess.TimeoutExpired as e:
        program = e.cmd[0] if isinstance(e.cmd, list) else e.cmd
        return _fail(f"{program} took longer than {e.timeout:g} s and was stopped")
    except BrokenPipeError:  # stdout's reader went away: micrograph.__main__ stops quietly
        raise
    except OSError as e:  # a file that cannot be written: read-only, a name too long, no space ...
        where = f" {e.filename}" if e.filename else ""
        return _fail(f"cannot write{where}: {e.strerror or e}")
    except KeyboardInterrupt:
        return _fail("interrupted")
    # anything else is a bug in micrograph and keeps its traceback
