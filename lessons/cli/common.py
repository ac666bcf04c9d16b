"""What every subcommand of ``micrograph`` shares: the parser, the argument types, the output checks, the
writing of output files, and the one line that reports a user's mistake.

Every mistake a user can make (a bad expression, a value outside an operation's domain, a number out of
range, an output file that exists, a missing directory that cannot be created, a closed standard output)
exits with status 2 and one line on stderr that says what is wrong, never a traceback: a subcommand raises
:class:`UserError` (or an error of the engine's or the drawing's), and :func:`user_message` words it.

Output files are never checked and then written: they are created exclusively (a temporary file linked into
place, :func:`viz.files.write_atomic` with ``overwrite=False``), so a file that appears while a command runs
is not replaced; ``--force`` replaces, keeping the replaced file's permissions, and a symbolic link is
replaced by the file, never written through. The early checks (:func:`output_file`, :func:`output_dir`)
only save the work of a command whose output would be refused at the end.

This module imports nothing heavy: the parser is built from it on every ``--help``.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple, NoReturn, overload

__all__ = [
    "PROG", "MAX_NODES", "UserError", "Parser", "Version", "integer", "real", "path", "output_file",
    "output_dir", "new_files", "Command", "add_command", "expression_argument", "at_option", "wrt_option",
    "max_nodes_option", "out_option", "force_option", "quiet_option", "seed_option", "seconds_option",
    "hidden_option", "bindings", "leaves", "expressions_as_positionals", "user_message", "fail",
]  # fmt: skip

PROG = "micrograph"

MAX_NODES = 100_000
"""The most nodes a drawing or a page may be asked to hold (--max-nodes)."""


class UserError(Exception):
    """A mistake in the command line: reported as one line on stderr, exit status 2.

    Attributes:
        detail: extra lines printed after the message (e.g. an expression with a caret), or "".
    """

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (with a pointer to --help) and exit status 2.

    It also keeps, as public attributes, what the command line's preprocessing needs to know:
    ``options`` (each option string: True if it takes a value), ``commands`` (the subcommands' parsers)
    and ``takes_expression`` (its positional argument is an expression, which may start with a minus).
    """

    def __init__(self, *args: Any, **kw: Any) -> None:
        self.options: dict[str, bool] = {}  # before argparse adds -h
        self.commands: dict[str, Parser] = {}
        self.takes_expression = False
        super().__init__(*args, **kw)

    def add_argument(self, *args: Any, **kw: Any) -> argparse.Action:
        action = super().add_argument(*args, **kw)
        for option in action.option_strings:
            self.options[option] = action.nargs != 0
        return action

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{PROG}: error: {message} (see {self.prog} --help)\n")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:  # written, not swallowed: a closed stream must reach lessons.cli.main
            sys.stderr.write(message)
        raise SystemExit(status)

    def print_help(self, file: Any = None) -> None:
        (file or sys.stdout).write(self.format_help())

    def print_usage(self, file: Any = None) -> None:
        (file or sys.stdout).write(self.format_usage())


class Version(argparse.Action):
    """``--version``: print ``micrograph VERSION`` on stdout and exit 0."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kw: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> NoReturn:
        from micrograph import __version__

        sys.stdout.write(f"{PROG} {__version__}\n")
        parser.exit()


# --- argument types: read and range-checked by argparse -------------------------------------------------


def integer(low: int, high: int) -> Callable[[str], int]:
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


def real(low: float, *, above: bool, high: float = math.inf) -> Callable[[str], float]:
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


def path(text: str) -> str:
    """An argparse type: a file or directory name, not empty."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a file name, got an empty one")
    return text


# --- a subcommand's parser, and the options several subcommands take, each declared once -------------------


class Command(NamedTuple):
    """A subcommand (or an action of one): ``add(parser)`` declares its arguments, ``run(args)`` runs it and
    returns the exit status, and the texts are what ``--help`` says of it (its line in the list of
    commands, its description, its epilog)."""

    add: Callable[[Parser], None]
    run: Callable[[argparse.Namespace], int]
    help: str
    description: str
    epilog: str | None = None
    formatter_class: type[argparse.HelpFormatter] = argparse.HelpFormatter


def add_command(sub: Any, name: str, command: Command) -> Parser:
    """The parser of the subcommand ``name`` (or an action of one), added to ``sub`` (argparse's
    subparsers) with the texts of ``command`` and the arguments its ``add`` declares."""
    parser: Parser = sub.add_parser(
        name,
        help=command.help,
        description=command.description,
        epilog=command.epilog,
        formatter_class=command.formatter_class,
    )
    command.add(parser)
    return parser


def out_option(
    p: argparse.ArgumentParser, help: str, *, required: bool = False, default: str | None = None,
    metavar: str | None = None,
) -> None:  # fmt: skip
    """``--out``: the file or directory the command writes (a name, not empty)."""
    p.add_argument("--out", required=required, default=default, type=path, metavar=metavar, help=help)


def force_option(p: argparse.ArgumentParser, help: str = "overwrite an existing file") -> None:
    """``--force``: replace what the command's output would otherwise refuse to overwrite."""
    p.add_argument("--force", action="store_true", help=help)


def quiet_option(p: argparse.ArgumentParser) -> None:
    """``--quiet``: no progress bar."""
    p.add_argument("--quiet", action="store_true", help="no progress bar (shown on a terminal only)")


def seed_option(p: Any, high: int, help: str) -> None:
    """``--seed N``, 0 to ``high`` (default 0): the seed of what the command draws at random."""
    p.add_argument("--seed", type=integer(0, high), default=0, help=help)


def seconds_option(p: argparse.ArgumentParser, name: str, high: float, help: str) -> None:
    """A limit in seconds (``--time-limit S`` ...): a number greater than 0 and at most ``high``."""
    p.add_argument(name, type=real(0, above=True, high=high), metavar="S", help=help)


def hidden_option(p: Any, high: int, when: str = "") -> None:
    """``--hidden N``, 1 to ``high`` (default 8): the hidden units of the MLP; ``when`` says when it applies
    (``"with --mlp: "``)."""
    p.add_argument(
        "--hidden", type=integer(1, high), default=8, help=f"{when}hidden units, 1 to {high} (default 8)"
    )


def expression_argument(
    p: Parser, help: str = 'e.g. "tanh(tanh(tanh(w)))" or "x*y + exp(x)"', *, optional: bool = False
) -> None:
    """The positional EXPRESSION, which may start with a minus (``takes_expression``, read by
    :func:`expressions_as_positionals`), and ``--at`` for its variables' values."""
    p.takes_expression = True
    p.add_argument("expression", nargs="?" if optional else None, help=help)


def at_option(p: argparse.ArgumentParser, what: str = "the value of a variable") -> None:
    """``--at NAME=NUMBER``, repeatable: the values of an expression's variables."""
    p.add_argument(
        "--at",
        action="append",
        default=[],
        metavar="NAME=NUMBER",
        help=f"{what}; repeat for each (e.g. --at w=0.5)",
    )


def wrt_option(p: argparse.ArgumentParser, help: str) -> None:
    """``--wrt NAME``, repeatable: the variables to differentiate by (the targets T of Algorithm 6.5)."""
    p.add_argument("--wrt", action="append", default=[], metavar="NAME", help=help)


def max_nodes_option(p: argparse.ArgumentParser, default: int, help: str) -> None:
    """``--max-nodes N``, 1 to :data:`MAX_NODES`: the largest drawing or page the command makes."""
    p.add_argument("--max-nodes", type=integer(1, MAX_NODES), default=default, help=help)


def bindings(expression: str, at: list[str], wrt: list[str]) -> tuple[dict[str, float], list[str]]:
    """The --at values of the expression's variables, checked by :func:`micrograph.expr.bind`, and the
    --wrt names once each (``--wrt w --wrt w`` is w once).

    Raises:
        micrograph.expr.ExprError: a refused expression (said first), a bad or missing value, a --wrt name
            that is not a variable of the expression.
    """
    from micrograph.expr import bind, parse_bindings, variables

    variables(expression)  # the whitelist first: a refused expression is the first thing said
    wrt = list(dict.fromkeys(wrt))
    return bind(expression, parse_bindings(at), wrt=wrt), wrt


def leaves(z: Any) -> dict[str | None, Any]:
    """The variables of z's graph by label."""
    from micrograph import Graph

    return {v.label: v for v in Graph(z).variables}


@overload
def expression_and_output(
    expression: str, at: list[str], wrt: list[str], out: str, force: bool, suffixes: Sequence[str]
) -> tuple[Any, list[Any], Path]: ...
@overload
def expression_and_output(
    expression: str, at: list[str], wrt: list[str], out: str | None, force: bool, suffixes: Sequence[str]
) -> tuple[Any, list[Any], Path | None]: ...
def expression_and_output(
    expression: str, at: list[str], wrt: list[str], out: str | None, force: bool, suffixes: Sequence[str]
) -> tuple[Any, list[Any], Path | None]:
    """The expression built at its --at values, its --wrt variables (in the order given, each once) and the
    output file checked (None without --out), each mistake said in the order a user meets them: the
    expression, a value or a --wrt name, the output file, a value outside an operation's domain; all before
    anything is written.

    Raises:
        micrograph.expr.ExprError: as :func:`bindings` says.
        UserError: as :func:`output_file` says.
        micrograph.DomainError: the expression has no value at these values (log(0), 1/0 ...).
    """
    from micrograph.expr import build

    env, names = bindings(expression, at, wrt)
    checked = output_file(out, force, suffixes) if out is not None else None
    z = build(expression, env)
    by_name = leaves(z)
    return z, [by_name[n] for n in names], checked


# --- output files ---------------------------------------------------------------------------------------


def output_file(name: str, force: bool, suffixes: Sequence[str]) -> Path:
    """Check an output file before the work: a known suffix, an existing directory, not an existing file
    unless --force. The file is still created exclusively when it is written.

    Raises:
        UserError: any of these, in one line naming the file.
    """
    p = Path(name)
    if p.suffix.lower() not in suffixes:
        raise UserError(f"cannot write {name!r}: the file name must end in {', '.join(suffixes)}")
    if p.is_dir():
        raise UserError(f"{name!r} is a directory; give a file name ending in {', '.join(suffixes)}")
    parent = p.parent
    if not parent.is_dir():
        what = "is not a directory" if parent.exists() else "does not exist; create it first"
        raise UserError(f"cannot write {name!r}: {str(parent)!r} {what}")
    if (p.exists() or p.is_symlink()) and not force:
        raise UserError(f"{name} exists; not overwriting it without --force")
    if not os.access(parent, os.W_OK):
        raise UserError(f"cannot write {name!r}: the directory {str(parent)!r} is not writable")
    return p


def output_dir(name: str, force: bool, files: Sequence[str]) -> Path:
    """Check an output directory before the work: refuse to replace ``files`` without --force; create it
    (not its parents). Another command creating it at the same moment is no error. A symbolic link is
    refused: nothing is written through one.

    Raises:
        UserError: any of these, in one line naming the directory or the first file.
    """
    d = Path(name)
    if d.is_symlink():
        raise UserError(f"{name} is a symlink; not writing through it")
    if d.exists() and not d.is_dir():
        raise UserError(f"{name!r} exists and is not a directory")
    if d.is_dir() and not force:
        clash = [f for f in files if (d / f).exists() or (d / f).is_symlink()]
        if clash:
            more = f" and {len(clash) - 1} more" if len(clash) > 1 else ""
            exist = "exist" if len(clash) > 1 else "exists"
            raise UserError(f"{d / clash[0]}{more} {exist}; not overwriting without --force")
    if not d.is_dir():
        if not d.parent.is_dir():
            raise UserError(f"cannot create {name!r}: the directory {str(d.parent)!r} does not exist")
        try:
            d.mkdir()
            print(f"{PROG}: created directory {d}", file=sys.stderr)
        except FileExistsError:  # made meanwhile: its files are still created exclusively
            if not d.is_dir():
                raise UserError(f"{name!r} exists and is not a directory") from None
        except OSError as e:
            raise UserError(f"cannot create the directory {name!r}: {e.strerror or e}") from None
    if not os.access(d, os.W_OK):
        raise UserError(f"cannot write into {name!r}: the directory is not writable")
    return d


@contextmanager
def new_files(force: bool) -> Iterator[Callable[[Path], Path]]:
    """Files written together: without ``force``, if one of them cannot be written, those already written
    are removed again, so a refused command leaves the directory as it found it.

    Inside the block, ``keep(path)`` records each file just written (each created exclusively by its
    writer). A recorded file is removed only if it is still the file this command wrote (same device and
    inode), never one that replaced it. With ``force`` nothing is removed: the files replaced are gone.

    Yields:
        ``keep(path) -> path``.
    """
    written: list[tuple[Path, tuple[int, int]]] = []

    def keep(p: Path) -> Path:
        st = os.lstat(p)
        written.append((Path(p), (st.st_dev, st.st_ino)))
        return Path(p)

    try:
        yield keep
    except BaseException:
        if not force:
            for p, identity in written:
                try:
                    st = os.lstat(p)
                    if (st.st_dev, st.st_ino) == identity:
                        os.unlink(p)
                except OSError:
                    pass
        raise


# --- the command line before argparse reads it ----------------------------------------------------------


def expressions_as_positionals(parser: Parser, argv: list[str]) -> list[str]:
    """Let an expression, and an option's value, start with a minus.

    argparse reads any word starting with ``-`` as an option. After an option that takes a value, a word
    that is not one of the subcommand's options is joined to it (``--out -o.svg`` is ``--out=-o.svg``).
    For a subcommand whose positional is an expression (``render``, ``steps``, ``explore``: its parser's
    ``takes_expression``), any other such word that is not a negative number is the expression
    (``micrograph render "-x" --at x=1``): it is given a leading space, which argparse reads as a
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
        if command.takes_expression and dash and name not in options and not _is_number(word):
            word = " " + word
        out.append(word)
    return out


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


# --- a mistake, in one line -----------------------------------------------------------------------------


def fail(message: str, detail: str = "") -> int:
    """Print ``micrograph: error: MESSAGE`` (and the detail lines) on stderr; the exit status 2."""
    print(f"{PROG}: error: {message}", file=sys.stderr)
    if detail:
        print(detail, file=sys.stderr)
    return 2


def _exists(e: FileExistsError) -> str:
    """What exists, from the writer's message (``X exists; ...``) or the system's (its file name)."""
    if e.errno is not None and e.filename:
        return f"{e.filename} exists"
    return str(e).split(";", 1)[0]


def user_message(e: Exception, out: str | None) -> tuple[str, str] | None:
    """The line (and the detail lines) that report ``e`` to the user, or None for a bug in micrograph.

    ``out`` is the command's --out, named when a system error names no file.
    """
    from micrograph.errors import DomainError
    from micrograph.expr import ExprError
    from micrograph.train import TrainingError
    from viz.dot import GraphTooLarge
    from viz.render import GraphvizFailed, GraphvizMissing

    if isinstance(e, ExprError):  # one line: the expression quoted, then what is wrong where
        return (f"in {e.excerpt()!r}: {e}" if e.excerpt() else str(e)), ""
    if isinstance(e, UserError):
        return str(e), e.detail
    if isinstance(e, DomainError):
        return f"value outside the domain: {e}", ""
    if isinstance(e, FileExistsError):  # created meanwhile, or refused by a library's own check
        return f"{_exists(e)}; use --force to overwrite", ""
    if isinstance(e, GraphTooLarge):  # in the command line's words: --max-nodes
        return e.text("command", most=MAX_NODES), ""
    if isinstance(e, (GraphvizMissing, GraphvizFailed, TrainingError, ModuleNotFoundError)):
        return str(e), ""  # ModuleNotFoundError: an optional extra not installed (the message names it)
    if isinstance(e, subprocess.TimeoutExpired):
        program = e.cmd[0] if isinstance(e.cmd, list) else e.cmd
        return f"{program} took longer than {e.timeout:g} s and was stopped", ""
    if isinstance(e, BrokenPipeError):  # stdout's reader went away: lessons.cli.main stops quietly
        return None
    # The exercises' mistakes catalogue that a teacher edited, refused as the exercises load: its class is
    # looked up among the loaded modules, since importing it would import the exercises again and fail again.
    catalogue = sys.modules.get("lessons.exercises.judges.mistakes")
    if catalogue is not None and isinstance(e, catalogue.CatalogueError):
        return str(e), ""
    if isinstance(e, OSError):  # a file that cannot be written: read-only, a name too long, no space ...
        where = e.filename or out or "standard output"  # a command without --out writes only there
        return f"cannot write {where}: {e.strerror or e}", ""
    return None
