"""The ``micrograph`` command: ``tour``, ``lesson``, ``render``, ``blowup``, ``train``, ``exercise``.

::

    micrograph tour --out out/                                   # every lesson, every picture, an index.html
    micrograph lesson 2                                          # step through lesson 2 (Enter, b, q)
    micrograph render "tanh(tanh(tanh(w)))" --at w=0.5 --wrt w --out fig_6_10.svg     # figure 6.10
    micrograph blowup --family ladder --max-depth 24 --out blowup.png                  # figure 6.9's argument
    micrograph train iris --hidden 8 --epochs 100 --out iris/                          # Algorithms 6.3/6.4
    micrograph exercise check backprop.py                                              # your Algorithm 6.2

Expressions are parsed by :mod:`micrograph.expr` (Python's ``ast`` and a whitelist; never ``eval``), and their
values checked by :func:`micrograph.expr.bind`. Every mistake a user can make (a bad expression, a value
outside an operation's domain, a number out of range, an output file that exists, a missing directory that
cannot be created, a closed standard output) exits with status 2 and one line on stderr that says what is
wrong, never a traceback.

Each subcommand is two functions side by side: ``_add_NAME`` declares its arguments, ``_cmd_NAME`` runs
it. The parser imports nothing heavy; each command imports what it needs when it runs, so ``--help`` is
cheap. This module sits above everything else: it is the only part of the ``micrograph`` package that
imports ``viz`` and ``lessons``, and nothing imports it but ``__main__.py``.

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
from collections.abc import Callable, Sequence
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
    """argparse, but a usage error is one line on stderr (with a pointer to --help) and exit status 2.

    It also keeps, as public attributes, what the command line's preprocessing needs to know:
    ``options`` (each option string: True if it takes a value) and ``commands`` (the subcommands' parsers).
    """

    def __init__(self, *args: Any, **kw: Any) -> None:
        self.options: dict[str, bool] = {}  # before argparse adds -h
        self.commands: dict[str, _Parser] = {}
        super().__init__(*args, **kw)

    def add_argument(self, *args: Any, **kw: Any) -> argparse.Action:
        action = super().add_argument(*args, **kw)
        for option in action.option_strings:
            self.options[option] = action.nargs != 0
        return action

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{PROG}: error: {message} (see {self.prog} --help)\n")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:  # written, not swallowed: a closed stream must reach micrograph.__main__
            sys.stderr.write(message)
        raise SystemExit(status)

    def print_help(self, file: Any = None) -> None:
        (file or sys.stdout).write(self.format_help())

    def print_usage(self, file: Any = None) -> None:
        (file or sys.stdout).write(self.format_usage())


class _Version(argparse.Action):
    """``--version``: print ``micrograph VERSION`` on stdout and exit 0."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kw: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> NoReturn:
        from micrograph import __version__

        sys.stdout.write(f"{PROG} {__version__}\n")
        parser.exit()


# --- numbers on the command line: read and range-checked by argparse -----------------------------------


def _integer(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high`` (digits 0-9), else a one-line error."""

    def read(text: str) -> int:
        try:
            if not text.strip().lstrip("+-").isdigit() or not text.isascii():
                raise ValueError(text)
            n = int(text)
        except ValueError:  # also Python's limit on the digits of an int
            raise argparse.ArgumentTypeError(
                f"expected a whole number from {low} to {high}, got {text[:40]!r}"
            ) from None
        if not low <= n <= high:
            raise argparse.ArgumentTypeError(f"must be a whole number from {low} to {high}, got {text[:40]}")
        return n

    return read


def _real(low: float, *, above: bool, high: float = math.inf) -> Callable[[str], float]:
    """An argparse type: a finite number, greater than ``low`` (``above``) or at least ``low``."""

    def read(text: str) -> float:
        try:
            if not text.isascii():  # float() reads other scripts' digits
                raise ValueError(text)
            x = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text[:40]!r}") from None
        bound = f"greater than {low:g}" if above else f"at least {low:g}"
        if not math.isfinite(x) or x < low or (above and x == low) or x > high:
            top = f" and at most {high:g}" if math.isfinite(high) else ""
            raise argparse.ArgumentTypeError(f"must be a finite number {bound}{top}, got {text[:40]}")
        return x

    return read


MAX_NODES = 100_000
"""The most nodes a drawing or a page may be asked to hold (--max-nodes)."""


def _path(text: str) -> str:
    """An argparse type: a file or directory name, not empty."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a file name, got an empty one")
    return text


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


def _at(p: argparse.ArgumentParser, what: str = "the value of a variable") -> None:
    p.add_argument(
        "--at",
        action="append",
        default=[],
        metavar="NAME=NUMBER",
        help=f"{what}; repeat for each (e.g. --at w=0.5)",
    )


def _bindings(args: argparse.Namespace) -> dict[str, float]:
    """The --at values of the expression's variables, checked by :func:`micrograph.expr.bind`."""
    from micrograph.expr import bind, parse_bindings, variables

    variables(args.expression)  # the whitelist first: a refused expression is the first thing said
    args.wrt = list(dict.fromkeys(args.wrt))  # --wrt w --wrt w is w once
    return bind(args.expression, parse_bindings(args.at), wrt=args.wrt)


def _leaves(z: Any) -> dict[str | None, Any]:
    from micrograph import Graph

    return {v.label: v for v in Graph(z).variables}


# --- tour -----------------------------------------------------------------------------------------------


def _lesson_list(text: str) -> list[int]:
    try:
        return [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected lesson numbers such as 1,2,6, got {text!r}") from None


def _add_tour(sub: Any) -> None:
    t = sub.add_parser(
        "tour",
        help="run every lesson and write all diagrams, plots and an index.html",
        description="Run every lesson's steps and write each diagram (SVG), the plots (PNG), "
        "the step-through HTML pages and an index.html that links them all.",
    )
    t.add_argument(
        "--out",
        default="out",
        type=_path,
        help="output directory (created if missing, in an existing one; default: out)",
    )
    t.add_argument(
        "--force",
        action="store_true",
        help="replace an earlier tour in --out (never files the tour did not write)",
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


# --- lesson ---------------------------------------------------------------------------------------------


def _add_lesson(sub: Any) -> None:
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
    _at(le, "the value of a variable of --expr")
    le.set_defaults(func=_cmd_lesson)


def _cmd_lesson(args: argparse.Namespace) -> int:
    import lessons
    from lessons.__main__ import interact, print_all
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
    from micrograph.errors import DomainError
    from micrograph.expr import ExprError, bind, parse_bindings

    env = bind(args.expr, parse_bindings(args.at))
    try:
        stepper = lessons.start(args.number, expr=args.expr, at=env)
    except (DomainError, ExprError):
        raise
    except ValueError as e:  # a lesson that takes no expression, or none like this one, says so
        raise UserError(str(e)) from None
    if sys.stdin.isatty() and sys.stdout.isatty():
        return interact(stepper)
    print_all(stepper)
    return 0


# --- steps ----------------------------------------------------------------------------------------------


def _add_steps(sub: Any) -> None:
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
    _at(st)
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
    st.add_argument("--out", required=True, type=_path, help="the page to write (.html)")
    st.add_argument("--force", action="store_true", help="overwrite an existing file")
    st.add_argument(
        "--max-nodes",
        type=_integer(1, MAX_NODES),
        default=80,
        help="refuse bigger graphs: G, or G and B together for 6.6 (default 80)",
    )
    st.set_defaults(func=_cmd_steps)


def _cmd_steps(args: argparse.Namespace) -> int:
    from micrograph.expr import build

    env = _bindings(args)  # an unknown --wrt name is an error here, as for render
    if args.wrt and args.algorithm == "6.2":
        raise UserError("--wrt chooses T for Algorithm 6.5: give it with --algorithm 6.6 or --algorithm all")
    out = _output_file(args.out, args.force, (".html",))
    z = build(args.expression, env)  # a DomainError stops here, before anything is written
    leaves = _leaves(z)
    wrt = [leaves[n] for n in args.wrt] or None
    if args.algorithm != "6.2" and wrt is None and not leaves:
        raise UserError(f"{args.expression!r} has no variables: Algorithm 6.5 needs one to differentiate by")
    import viz

    written = viz.steps(
        z, out, algorithm=args.algorithm, wrt=wrt, overwrite=args.force, max_nodes=args.max_nodes
    )
    shown = pseudocode.named(pseudocode.STEP_PAGES[args.algorithm])
    print(f"wrote {written}: {shown} step by step on z = {args.expression}")
    return 0


# --- render ---------------------------------------------------------------------------------------------

_RENDER_SUFFIXES = (".svg", ".png", ".pdf", ".dot", ".tex", ".gif", ".mp4")


def _add_render(sub: Any) -> None:
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
    _at(r)
    r.add_argument(
        "--wrt",
        action="append",
        default=[],
        metavar="NAME",
        help="differentiate with respect to this variable (repeatable): draws B beside G",
    )
    r.add_argument(
        "--out",
        type=_path,
        help="the file to write: .svg, .png, .pdf, .dot, .tex (TikZ, for LaTeX), "
        ".gif or .mp4 (Algorithms 6.1 and 6.2 animated, for slides)",
    )
    r.add_argument("--force", action="store_true", help="overwrite an existing file")
    r.add_argument(
        "--max-nodes",
        type=_integer(1, MAX_NODES),
        default=300,
        help="refuse to draw bigger graphs (default 300)",
    )
    r.set_defaults(func=_cmd_render)


def _cmd_render(args: argparse.Namespace) -> int:
    from micrograph.expr import build

    env = _bindings(args)
    out = _output_file(args.out, args.force, _RENDER_SUFFIXES) if args.out is not None else None
    z = build(args.expression, env)  # a DomainError (log(0), 1/0 ...) stops here, before anything is written
    leaves = _leaves(z)

    import viz

    if args.wrt:
        dot = viz.draw_side_by_side(z, [leaves[n] for n in args.wrt], max_nodes=args.max_nodes)
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


# --- explore --------------------------------------------------------------------------------------------


def _add_explore(sub: Any) -> None:
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
    _at(xp, "the starting value of a variable")
    xp.add_argument(
        "--wrt",
        action="append",
        default=[],
        metavar="NAME",
        help="draw B for these variables (repeatable; default: every variable)",
    )
    xp.add_argument("--out", required=True, type=_path, help="the page to write (.html)")
    xp.add_argument("--force", action="store_true", help="overwrite an existing file")
    xp.add_argument(
        "--max-nodes",
        type=_integer(1, MAX_NODES),
        default=300,
        help="refuse to draw bigger graphs (default 300); raising it costs layout time: G and B of about 400 "
        "nodes each take a few seconds of Graphviz",
    )
    xp.add_argument(
        "--predict", action="store_true", help="hide the grad_table: type each entry from u(n) down"
    )
    xp.set_defaults(func=_cmd_explore)


def _cmd_explore(args: argparse.Namespace) -> int:
    from micrograph.expr import build

    env = _bindings(args)
    out = _output_file(args.out, args.force, (".html",))
    z = build(args.expression, env)  # a DomainError stops here, before anything is written
    leaves = _leaves(z)
    import viz

    wrt = [leaves[n] for n in args.wrt] or None
    explorer = viz.explore(z, wrt, max_nodes=args.max_nodes, predict=args.predict)
    written = explorer.save(out, overwrite=args.force)
    print(
        f"wrote {written} ({explorer.spec['n']} nodes, {len(explorer.spec['frames'])} frames); "
        "open it in a browser"
    )
    return 0


# --- notebooks ------------------------------------------------------------------------------------------


def _add_notebooks(sub: Any) -> None:
    nbp = sub.add_parser(
        "notebooks",
        help="every lesson as a Jupyter notebook (lesson1.ipynb ...), generated from the lessons themselves",
        description="Run each lesson once and write it as a notebook: its text as Markdown cells, the code "
        "of each step as a code cell, its pictures as the cells' outputs.",
        epilog="example: micrograph notebooks --out notebooks/",
    )
    nbp.add_argument(
        "--out", required=True, type=_path, help="the directory to write into (created if missing)"
    )
    nbp.add_argument("--force", action="store_true", help="overwrite existing notebooks")
    nbp.set_defaults(func=_cmd_notebooks)


def _cmd_notebooks(args: argparse.Namespace) -> int:
    try:  # checked before anything is created
        import nbformat  # noqa: F401 - the notebook extra
    except ImportError:
        raise UserError("micrograph notebooks needs nbformat: pip install 'micrograph[notebook]'") from None
    import lessons
    from lessons.notebooks import write_notebooks

    files = [f"lesson{n}.ipynb" for n in lessons.LESSONS]
    out = _output_dir(args.out, args.force, files)
    for path in write_notebooks(out, overwrite=args.force):
        print(f"wrote {path}")
    return 0


# --- blowup ---------------------------------------------------------------------------------------------


def _add_blowup(sub: Any) -> None:
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
    b.add_argument("--max-depth", type=_integer(1, 60), default=20, help="the deepest graph (default 20)")
    b.add_argument(
        "--budget",
        type=_integer(1, 10**12),
        default=2_000_000,
        help="stop the naive rule after this many operations per depth; deeper points use the "
        "closed form (default 2000000)",
    )
    b.add_argument("--out", type=_path, help="the plot to write: .png, .svg or .pdf")
    b.add_argument("--force", action="store_true", help="overwrite an existing file")
    b.add_argument("--quiet", action="store_true", help="no progress bar (shown on a terminal only)")
    b.set_defaults(func=_cmd_blowup)


def _cmd_blowup(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from micrograph import families

    fams = list(families.FAMILIES) if args.family == "both" else [args.family]
    out = _output_file(args.out, args.force, (".png", ".svg", ".pdf")) if args.out is not None else None
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

MAX_HIDDEN = 2048
"""The widest hidden layer ``train`` builds: each unit is a Python object per weight, and each example's
forward pass adds a node per weight, so wider layers take minutes per epoch and gigabytes."""


def _add_train(sub: Any) -> None:
    tr = sub.add_parser(
        "train",
        help="train an MLP on a data set (Algorithms 6.3, 6.4) and plot the loss",
        description="Train a one-hidden-layer MLP with softmax cross-entropy by minibatch SGD on "
        "a shipped data set (70% train, 30% held out, standardized on the training part). "
        "Writes loss.png, summary.json and, for 2-D data, boundary.png.",
    )
    tr.add_argument("data", choices=DATASETS, help="the data set")
    tr.add_argument(
        "--hidden",
        type=_integer(1, MAX_HIDDEN),
        default=8,
        help=f"hidden units, 1 to {MAX_HIDDEN} (default 8)",
    )
    tr.add_argument("--epochs", type=_integer(1, 1_000_000), default=100, help="epochs (default 100)")
    tr.add_argument("--lr", type=_real(0.0, above=True), default=0.1, help="learning rate (default 0.1)")
    tr.add_argument(
        "--batch-size", type=_integer(1, 1_000_000), default=16, help="minibatch size (default 16)"
    )
    tr.add_argument(
        "--l2", type=_real(0.0, above=False), default=1e-4, help="weight decay lambda (default 1e-4)"
    )
    tr.add_argument(
        "--seed",
        type=_integer(0, 2**63 - 1),
        default=0,
        help="seed for the split, the weights and the shuffling",
    )
    tr.add_argument("--out", type=_path, help="output directory (created if missing)")
    tr.add_argument("--force", action="store_true", help="overwrite earlier results in --out")
    tr.add_argument(
        "--no-compile",
        action="store_true",
        help="back-propagate through the Value graph each step instead of the compiled replay "
        "(same numbers, slower)",
    )
    tr.add_argument("--quiet", action="store_true", help="no progress bar (shown on a terminal only)")
    tr.set_defaults(func=_cmd_train)


def _cmd_train(args: argparse.Namespace) -> int:
    from micrograph import datasets, nn

    files = ["loss.png", "summary.json"] + (["boundary.png"] if args.data in ("moons", "circles") else [])
    out = _output_dir(args.out, args.force, files) if args.out is not None else None
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
    if out is not None:
        _write_training(args, out, model, history, test, summary)
    return 0


def _write_training(
    args: argparse.Namespace, out: Path, model: Any, history: Any, test: Any, summary: dict[str, Any]
) -> None:
    """loss.png, for 2-D data boundary.png, and summary.json into ``out``; one line per file written."""
    import viz

    _save_plot(viz.plot_training(history, None, title=f"{args.data}: training"), out / "loss.png")
    written = [out / "loss.png"]
    Xt, yt = test
    if len(Xt[0]) == 2:
        _save_plot(
            viz.plot_decision_boundary(model, Xt, yt, None, title=f"{args.data}: decision boundary"),
            out / "boundary.png",
        )
        written.append(out / "boundary.png")
    viz.write_atomic(out / "summary.json", (json.dumps(summary, indent=2) + "\n").encode("utf-8"))
    written.append(out / "summary.json")
    for p in written:
        print(f"wrote {p}")


# --- exercise -------------------------------------------------------------------------------------------

_EXERCISE_FLOW = """\
The flow: list the exercises, start one (a template NAME.py with the book's pseudo-code and TODOs is
written into the current directory, never over an existing file), fill in the TODOs, check it. The check
runs your code, in a separate process that cannot reach micrograph's own algorithms, on graphs chosen to
catch the real mistakes and on random ones from a seed; every case is scored. At the first failure it names
the wrong node, the expected and actual values, the term of the sum that differs, a hint with the book's
sentence, and writes a drawing of the failure next to your file (NAME.failure.svg). Your latest verdicts
are kept in .micrograph-progress.json in the current directory (a record for you, not a grade).

  micrograph exercise list
  micrograph exercise start backprop
  micrograph exercise check backprop.py                        # exit 0: every case passed, 1: one failed
  micrograph exercise check backprop.py --seed 7               # other random cases
  micrograph exercise check backprop.py --format gradescope    # Gradescope's results.json (also json,
                                                               # prairielearn)
  micrograph exercise autograder backprop --platform gradescope --out autograder/
  micrograph exercise report results/ --chart class.png        # a class's pass rates and mistakes
"""

_AUTOGRADER_EPILOG = """\
Gradescope: upload DIR/autograder.zip on the assignment's "Configure Autograder" page (base image
Ubuntu 22.04 or later). Students submit NAME.py; each submission is scored case by case, its random cases
drawn from a seed of the student's own: HMAC-SHA256 of a secret (DIR/micrograph_secret, keep it private)
and the student's Gradescope id. The results name the seed; micrograph exercise check NAME.py --seed N
re-runs a student's check. --seed is used where no student identity is found.
PrairieLearn: DIR/README.md says where the grading script, the secret, the Dockerfile and the info.json
options go (PrairieLearn gives no identity: the student's variant of the question stands for it).

  micrograph exercise autograder backprop --platform gradescope --out autograder/
  micrograph exercise autograder backprop --platform prairielearn --out pl/ --seed 7
"""

_REPORT_EPILOG = """\
RESULTS are the files a check writes (micrograph exercise check FILE --format json > alice.json) or the
results.json files of Gradescope or PrairieLearn written by micrograph's autograder, or directories
holding them (every *.json inside is read). Files that are not micrograph results are skipped, each with
a note.

  micrograph exercise report results/ --chart class.png
"""


def _cmd_exercise(args: argparse.Namespace) -> int:
    from lessons.exercises import command

    try:
        return command.run(args)
    except command.UsageError as e:
        raise UserError(str(e)) from None


def _add_exercise_check(actions: Any) -> None:
    check = actions.add_parser(
        "check",
        help="check FILE; exit 0 when every case passes, 1 otherwise",
        description="Check your solution against micrograph's engine, case by case. Exit status: 0 every "
        "case passed, 1 a case failed (the report says where and why), 2 a usage error. A drawing of the "
        "first failure is written next to FILE as FILE's name with .failure.svg.",
    )
    check.add_argument("file", metavar="FILE", help="your solution, e.g. backprop.py")
    how = check.add_mutually_exclusive_group()
    how.add_argument(
        "--format",
        choices=("text", "json", "gradescope", "prairielearn"),
        default="text",
        help="what to print (default: text)",
    )
    how.add_argument("--json", action="store_true", help="the same as --format json")
    check.add_argument(
        "--seed",
        type=_integer(0, 2**31 - 1),
        default=0,
        help="the seed of the random cases (default 0; the report prints it)",
    )
    check.add_argument(
        "--no-progress", action="store_true", help="do not record the verdict in .micrograph-progress.json"
    )
    check.add_argument("--exercise", metavar="NAME", help="which exercise FILE is (default: from FILE)")
    check.add_argument(
        "--time-limit",
        type=_real(0, above=True, high=3600),
        metavar="S",
        help="CPU seconds a case may use when it sets none of its own (default: 2)",
    )
    check.add_argument(
        "--budget",
        type=_real(0, above=True, high=86400),
        metavar="S",
        help="seconds of CPU time and waiting for the whole check; the cases left when it is spent are not "
        "run (default: 15)",
    )
    check.add_argument(
        "--wall-limit",
        type=_real(0, above=True, high=86400),
        metavar="S",
        help="wall-clock seconds for the whole check (default: 90)",
    )
    check.add_argument(
        "--memory-limit",
        type=_integer(64, 1 << 20),
        metavar="MIB",
        help="MiB of memory the solution may use (default: 1024)",
    )


def _add_exercise_course(actions: Any) -> None:
    grader = actions.add_parser(
        "autograder",
        help="write what a course uploads to Gradescope or PrairieLearn for exercise NAME",
        description="Write the autograder of one exercise for a course platform: the grading scripts and "
        "micrograph's wheel (built from this checkout).",
        epilog=_AUTOGRADER_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    grader.add_argument("name", metavar="NAME", help="the exercise (see: micrograph exercise list)")
    grader.add_argument(
        "--platform", required=True, choices=("gradescope", "prairielearn"), help="the course platform"
    )
    grader.add_argument("--out", required=True, type=_path, metavar="DIR", help="the directory to write")
    grader.add_argument(
        "--seed",
        type=_integer(0, 2**31 - 1),
        default=0,
        help="the fixed seed of the random cases, used where the platform gives no student identity "
        "(default 0)",
    )
    grader.add_argument(
        "--secret-file",
        type=_path,
        metavar="PATH",
        help="the secret each student's cases are derived from (at least 16 characters); default: the one "
        "already in DIR with --force, else a new random one written to DIR/micrograph_secret",
    )
    grader.add_argument("--force", action="store_true", help="replace files that exist in DIR")
    report = actions.add_parser(
        "report",
        help="a class's results: pass rates per exercise and the most common mistakes",
        description="Summarise the results of a class: per exercise the students, the pass rate and the mean "
        "score, and the recognised mistakes most often made, with their hints.",
        epilog=_REPORT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    report.add_argument("results", nargs="+", metavar="RESULTS", help="result files or directories of them")
    report.add_argument(
        "--chart", type=_path, metavar="FILE.png", help="also draw the pass rates and mistakes as bars"
    )
    report.add_argument("--force", action="store_true", help="replace the chart's file if it exists")


def _add_exercise(sub: Any) -> None:
    ex = sub.add_parser(
        "exercise",
        help="exercises: write the book's algorithms yourself and have them checked",
        description="Exercises for section 6.5: you write the book's algorithms (local derivatives, the "
        "topological order, Algorithms 6.1, 6.2, 6.4 and 6.6, the naive chain rule), micrograph checks them.",
        epilog=_EXERCISE_FLOW,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = ex.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser)
    actions.add_parser("list", help="the exercises, the book's algorithm each covers, your latest verdicts")
    start = actions.add_parser("start", help="write the template NAME.py (never overwrites)")
    start.add_argument("name", metavar="NAME", help="the exercise (see: micrograph exercise list)")
    start.add_argument("--dir", default=".", help="the directory to write it into (default: here)")
    _add_exercise_check(actions)
    _add_exercise_course(actions)
    ex.set_defaults(func=_cmd_exercise, exercise_parser=ex)


def _cmd_site(args: argparse.Namespace) -> int:
    from lessons import site

    try:
        return site.run(args)
    except site.SiteError as e:
        raise UserError(str(e)) from None


def _add_site(sub: Any) -> None:
    si = sub.add_parser(
        "site",
        help="build a static site of the lessons and exercises that runs in the browser (needs npm)",
        description="Build a static site of the lessons and exercises that runs entirely in the browser "
        "(Pyodide, micrograph's wheel, Graphviz in WebAssembly, CodeMirror): every file in --out, no network "
        "when it runs. Building needs a checkout of micrograph, npm and PyPI.",
        epilog="example: micrograph site --out site-out && micrograph site --out site-out --serve",
    )
    si.add_argument("--out", default="site-out", type=_path, help="the site's directory (default: site-out)")
    si.add_argument("--force", action="store_true", help="replace a site built earlier in --out")
    si.add_argument("--serve", action="store_true", help="serve --out on localhost (built first if missing)")
    si.add_argument("--port", type=_integer(0, 65535), default=8000, help="--serve's port (default 8000)")
    si.set_defaults(func=_cmd_site)


# --- the parser -----------------------------------------------------------------------------------------

_COMMANDS = (
    _add_tour,
    _add_lesson,
    _add_steps,
    _add_render,
    _add_explore,
    _add_notebooks,
    _add_blowup,
    _add_train,
    _add_exercise,
    _add_site,
)
"""Each subcommand's parser, in the order ``--help`` lists them."""


def build_parser() -> _Parser:
    """The argparse parser of the ``micrograph`` command (every subcommand has ``--help``).

    Its ``commands`` attribute maps each subcommand's name to its parser.
    """
    p = _Parser(
        prog=PROG,
        description="micrograph: back-propagation as section 6.5 of Deep Learning "
        "(Goodfellow, Bengio & Courville, 2016) writes it, on scalars, made visible.",
        epilog="Start with: micrograph tour --out out/",
    )
    p.add_argument("--version", action=_Version, help="show the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for add in _COMMANDS:
        add(sub)
    p.commands = dict(sub.choices)
    return p


def _expressions_as_positionals(parser: _Parser, argv: list[str]) -> list[str]:
    """Let an expression, and an option's value, start with a minus.

    argparse reads any word starting with ``-`` as an option. After an option that takes a value, a word
    that is not one of the subcommand's options is joined to it (``--out -o.svg`` is ``--out=-o.svg``).
    For ``render``, ``steps`` and ``explore``, any other such word that is not a negative number is the
    expression (``micrograph render "-x" --at x=1``): it is given a leading space, which argparse reads as a
    positional and the expression parser ignores.
    """
    command = parser.commands.get(argv[0]) if argv else None
    if command is None:
        return argv
    options = command.options
    out = argv[:1]
    words = iter(argv[1:])
    for word in words:
        if word == "--":
            out += [word, *words]
            break
        if options.get(word):  # an option that takes a value: the next word is that value
            value = next(words, None)
            if value is None:
                out.append(word)
            elif value.startswith("-") and value.split("=", 1)[0] not in options:
                out.append(f"{word}={value}")
            else:
                out += [word, value]
            continue
        name = word.split("=", 1)[0]
        dash = word.startswith("-") and not word.startswith("--")
        if argv[0] in _EXPRESSION_COMMANDS and dash and name not in options and not _is_number(word):
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
    try:
        args = parser.parse_args(_expressions_as_positionals(parser, sys.argv[1:] if argv is None else argv))
    except SystemExit as e:  # a usage error (2, its line written), --help or --version (0)
        return e.code if isinstance(e.code, int) else 2
    if args.command is None:
        parser.print_help()
        return 0
    if args.command == "exercise" and args.action is None:
        args.exercise_parser.print_help()
        return 0
    try:
        return int(args.func(args))
    except Exception as e:  # a user's mistake is one line; anything else is a bug and keeps its traceback
        message = _user_message(e, getattr(args, "out", None))
        if message is None:
            raise
        return _fail(*message)
    except KeyboardInterrupt:
        return _fail("interrupted")


def _user_message(e: Exception, out: str | None) -> tuple[str, str] | None:
    """The line (and the detail lines) that report ``e`` to the user, or None for a bug in micrograph."""
    from micrograph.errors import DomainError
    from micrograph.expr import ExprError
    from micrograph.train import TrainingError
    from viz.dot import GraphTooLarge
    from viz.render import GraphvizFailed, GraphvizMissing

    if isinstance(e, ExprError):
        return str(e), e.caret()
    if isinstance(e, UserError):
        return str(e), e.detail
    if isinstance(e, DomainError):
        return f"value outside the domain: {e}", ""
    if isinstance(e, FileExistsError):
        return f"{e}; use --force to overwrite", ""
    if isinstance(e, (GraphTooLarge, GraphvizMissing, GraphvizFailed, TrainingError, ModuleNotFoundError)):
        return str(e), ""  # ModuleNotFoundError: an optional extra not installed (the message names it)
    if isinstance(e, subprocess.TimeoutExpired):
        program = e.cmd[0] if isinstance(e.cmd, list) else e.cmd
        return f"{program} took longer than {e.timeout:g} s and was stopped", ""
    if isinstance(e, BrokenPipeError):  # stdout's reader went away: micrograph.__main__ stops quietly
        return None
    if isinstance(e, OSError):  # a file that cannot be written: read-only, a name too long, no space ...
        where = e.filename or out
        return f"cannot write{f' {where}' if where else ''}: {e.strerror or e}", ""
    return None
