"""Where a student's solution runs: a private directory holding only what it may import, and its own user.

The child interpreter (:mod:`lessons.exercises.child`) does not import micrograph from where it is installed.
The judge writes, into a private directory made for the check, the few modules a solution may use: the
nodes and the operation table (``micrograph/engine.py``, ``ops.py``, ``compile_nodes.py``, ``meta.py``,
``lecture.py``, ``errors.py``, ``memory.py``), the counting tools (``lessons/exercises/tools.py``) and the
child itself; for an exercise without nodes (the local derivatives, whose answer key is the operation
table), the child and what it gives every solution only (:data:`CHILD`).
The engine's algorithms over a graph live in modules of their own (``push.py``: ``Value.backward`` and its
compiled loop; ``order.py``: the topological order; ``pickling.py``: the graph walk of pickling), which are
not copied; the copy of ``engine.py`` has the node's references to them taken out of its text. The
child runs with ``python -I -S`` and this directory alone before the standard library on ``sys.path``:
micrograph's own files are not on its path, and there is no site-packages (no import hook of an editable
install), so removing the import guard from ``sys.meta_path`` finds nothing more.

Where the judge is root (a grading container), the solution runs as a user id of its own that no account
has (:func:`fresh_uid`): it cannot signal the judge, open its descriptors, write the grader's files or raise
its limits, its processes and files are told apart from every other's by that id. As root as for an
ordinary user, the child encloses itself in a mount namespace of its own (:mod:`lessons.exercises.enclosure`)
with the view :func:`view` describes: every top-level directory but the system's (:data:`VISIBLE`) and
every site-packages empty, with the check's modules, the interpreter and, where the exercise allows it,
numpy put back; micrograph's installed files (:func:`installed_dirs`) covered. Where it cannot, as root,
those files must not be readable by others (:func:`readable_by_others` says; a platform's setup script
removes those bits). The child's only writable directory is a tmpfs of its own, gone with it; what it
leaves in the machine's shared temporary directories is removed with the check (:meth:`Sandbox.close`).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5 (the exercises' checker).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import os
import secrets
import shutil
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = [
    "PACKAGES", "STRIPPED", "COPIED", "stripped_source", "Sandbox", "fresh_uid", "installed_dirs", "exposed",
    "readable_by_others", "view", "numpy_path", "VISIBLE",
]  # fmt: skip

_ROOT = Path(__file__).resolve().parent.parent.parent

PACKAGES = ("micrograph", "viz", "lessons")
"""micrograph's packages: the engine, the drawings, the lessons with the exercises' judges."""

STRIPPED: dict[str, tuple[str, ...]] = {
    "micrograph/engine.py": (
        "push",
        "pickling",
        "Value.backward",
        "Value._backward",
        "Value.__reduce__",
        "Value.__deepcopy__",
    ),
}
"""The engine's files a solution may import, and the names taken out of each: the imports of the modules
that hold the algorithms over a graph (the push form of Algorithm 6.2 with its topological order,
pickling's walk) and the methods the node takes from them, so that only the node and its operators remain."""

COPIED = (
    "micrograph/ops.py",
    "micrograph/compile_nodes.py",
    "micrograph/meta.py",
    "micrograph/lecture.py",
    "micrograph/errors.py",
    "micrograph/memory.py",
    "lessons/exercises/tools.py",
    "lessons/exercises/child.py",
    "lessons/exercises/given.py",
    "lessons/exercises/calls.py",
    "lessons/exercises/enclosure.py",
)
"""Files copied as they are (the child itself, what it gives the solution and its calls, and modules without
any algorithm: the operation table, the node's compiled operators, what a node is besides its operation,
micrograd's names for a node's fields, the errors)."""

CHILD = (
    "lessons/exercises/child.py",
    "lessons/exercises/given.py",
    "lessons/exercises/calls.py",
    "lessons/exercises/enclosure.py",
)
"""What an exercise without nodes gets of :data:`COPIED`: the child, what it gives every solution, the
calls."""

SHARED_TMP = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
"""The machine's shared temporary directories, swept of the solution's files when it ran as its own user."""


def _drop(body: list[ast.stmt], names: set[str], prefix: str = "") -> list[ast.stmt]:
    kept: list[ast.stmt] = []
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and prefix + node.name in names:
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):  # a module imported under a listed name
            node.names = [a for a in node.names if prefix + _bound(a) not in names]
            if not node.names:
                continue
        if isinstance(node, ast.ClassDef):
            node.body = _drop(node.body, names, f"{prefix}{node.name}.") or [ast.Pass()]
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and prefix + t.id in names for t in targets):
            continue
        value = getattr(node, "value", None)
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and isinstance(
            value, (ast.List, ast.Tuple)
        ):
            value.elts = [e for e in value.elts if not (isinstance(e, ast.Constant) and e.value in names)]
        kept.append(node)
    return kept


@functools.cache
def stripped_source(relative: str) -> str:
    """The text of one of micrograph's files with the names of :data:`STRIPPED` taken out.

    Args:
        relative: the file's path below the checkout's root, a key of :data:`STRIPPED`.

    Raises:
        KeyError: a file not in :data:`STRIPPED`. ValueError: a name listed there is not in the file (the
        list and the engine disagree, so the copy would keep an algorithm it should not).
    """
    names = set(STRIPPED[relative])
    tree = ast.parse((_ROOT / relative).read_text(encoding="utf-8"))
    before = {n for n in _defined(tree.body)}
    tree.body = _drop(tree.body, names)
    missing = names - before
    if missing:
        raise ValueError(f"{relative} defines no {', '.join(sorted(missing))}: update sandbox.STRIPPED")
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _bound(alias: ast.alias) -> str:
    """The name an import binds: ``from micrograph import push`` binds ``push``; ``import a.b``, ``a``."""
    return alias.asname or alias.name.split(".")[0]


def _defined(body: list[ast.stmt], prefix: str = "") -> set[str]:
    found: set[str] = set()
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found |= {prefix + _bound(a) for a in node.names}
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(prefix + node.name)
            if isinstance(node, ast.ClassDef):
                found |= _defined(node.body, f"{prefix}{node.name}.")
        elif isinstance(node, ast.Assign):
            found |= {prefix + t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found.add(prefix + node.target.id)
    return found


def fresh_uid() -> int:
    """A user id that no account and no running process has, for one check's solution (the judge is root).

    Drawn at random from 2^30..2^31 - 2, far above the ids that systems hand out to accounts."""
    while True:
        uid = (1 << 30) + secrets.randbelow((1 << 30) - 2)
        try:
            import pwd

            pwd.getpwuid(uid)
        except (KeyError, ImportError):
            return uid


def installed_dirs(keep: Path) -> list[Path]:
    """The directories that hold micrograph's own files, for the child to cover (see
    :mod:`lessons.exercises.enclosure`): in a checkout (a ``setup.cfg`` beside the packages) the whole
    checkout, its tests and its git history included; else the directories of the :data:`PACKAGES`. A
    directory that holds ``keep`` (the check's own) is replaced by its packages'.
    """
    packages = [(_ROOT / name).resolve() for name in PACKAGES]
    root = _ROOT.resolve()
    keep = keep.resolve()
    if (root / "setup.cfg").is_file() and keep != root and root not in keep.parents:
        return [root]
    return [p for p in packages if p.is_dir() and p != keep and p not in keep.parents]


def exposed(directory: Path) -> bool:
    """True if a user with no group of the files could read a file of micrograph's in ``directory`` (a
    package's, or a checkout holding them): the directory is readable by others, or it only lets them search
    it and a package's ``__init__.py`` in it (or the directory's own) can be opened by name."""
    named = [directory / "__init__.py", *(directory / name / "__init__.py" for name in PACKAGES)]
    return readable_by_others(directory) or any(readable_by_others(p) for p in named if p.exists())


def readable_by_others(path: str | os.PathLike[str]) -> bool:
    """True if a user with no group of the file's could read the file or directory ``path``.

    Every directory above it must let others search it (``o+x``) and ``path`` itself must let them read it.
    """
    p = Path(path).resolve()
    for parent in reversed(p.parents):
        try:
            if not os.stat(parent).st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
    try:
        return bool(os.stat(p).st_mode & stat.S_IROTH)
    except OSError:
        return False


class Sandbox:
    """The private directory of one check: ``lib`` (what the solution may import) and ``tmp`` (its own).

    Args:
        uid: the user id the solution runs as, or None for the judge's own user.
        nodes: whether the exercise gives the solution micrograph's nodes: without them (the local
            derivatives, whose answer key is the operation table) nothing of micrograph is copied, only the
            child and what it gives every solution.
        numpy: whether the exercise allows numpy: without it, numpy is neither loaded nor in sight (a
            solution that reached it past the import allow-list could vectorise what the exercise asks to
            be written as a loop).

    Attributes:
        path: the directory. lib: the modules, on the child's ``sys.path``. tmp: the child's ``TMPDIR`` and
        ``HOME``. child: the child's script in ``lib``.

    Raises:
        OSError: the directory cannot be made.
    """

    def __init__(self, uid: int | None, nodes: bool = True, numpy: bool = False) -> None:
        self.uid = uid
        self.nodes = nodes
        self.numpy = numpy
        self.path = Path(tempfile.mkdtemp(prefix="micrograph-check-"))
        self.lib = self.path / "lib"
        self.tmp = self.path / "tmp"
        self.child = self.lib / "lessons" / "exercises" / "child.py"
        try:
            self._fill()
        except BaseException:
            shutil.rmtree(self.path, ignore_errors=True)
            raise

    def _fill(self) -> None:
        for relative in (*STRIPPED, *COPIED) if self.nodes else CHILD:
            target = self.lib / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            text = (
                stripped_source(relative)
                if relative in STRIPPED
                else (_ROOT / relative).read_text(encoding="utf-8")
            )
            target.write_text(text, encoding="utf-8")
            target.chmod(0o644)
        for d in (self.lib, *self.lib.rglob("*")):
            if d.is_dir():
                d.chmod(0o755)
        self.tmp.mkdir(mode=0o700)
        if self.uid is not None:
            self.path.chmod(0o711)
            os.chown(self.tmp, self.uid, self.uid)

    def close(self) -> None:
        """Remove the directory, and the solution's files in the shared temporary directories (when it ran
        as a user of its own: its files are exactly those that user owns)."""
        shutil.rmtree(self.path, ignore_errors=True)
        if self.uid is None:
            return
        for top in SHARED_TMP:
            _sweep(Path(top), self.uid)


def _sweep(top: Path, uid: int, budget: int = 20_000) -> None:
    """Remove what ``uid`` owns below ``top`` (a file, a link, a whole directory), looking at most at
    ``budget`` entries and never following a link."""
    stack = [top]
    while stack and budget > 0:
        d = stack.pop()
        try:
            entries = list(os.scandir(d))
        except OSError:
            continue
        for e in entries:
            budget -= 1
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if st.st_uid == uid:
                if stat.S_ISDIR(st.st_mode):
                    shutil.rmtree(e.path, ignore_errors=True)
                else:
                    try:
                        os.unlink(e.path)
                    except OSError:
                        pass
            elif stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_IWOTH:
                stack.append(Path(e.path))  # a directory others may write in (/tmp/.X11-unix ...)


def numpy_path() -> str | None:
    """The directory that holds numpy (site-packages), for a solution that uses it; None without numpy."""
    try:
        spec = importlib.util.find_spec("numpy")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return str(Path(next(iter(spec.submodule_search_locations))).parent)


def view(sandbox: Sandbox, isolated: bool, numpy: str | None) -> dict[str, Any]:
    """How the child encloses itself before running the solution (:mod:`lessons.exercises.enclosure`):
    ``dirs``, micrograph's directories to cover; ``writable`` (the check's directory), ``covered`` (every
    top-level directory but :data:`VISIBLE`) and ``kept`` (the check's modules, the interpreter's
    directories and numpy's, visible inside a covered one); ``required``, whether a child that cannot
    enclose itself refuses to run the solution: as root, when every user may read one of micrograph's
    directories (the solution's own user could); as an ordinary user, when the limits ask for it (a result
    for grading)."""
    found = installed_dirs(sandbox.path)
    python = {sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix}
    numpy_dirs = (
        []
        if numpy is None
        else [f"{numpy}/{n}" for n in ("numpy", "numpy.libs") if os.path.isdir(f"{numpy}/{n}")]
    )
    return {
        "dirs": [str(d) for d in found],
        "writable": [str(sandbox.tmp)],
        "covered": sorted(f"/{name}" for name in _top_level() if name not in VISIBLE) + _site_packages(),
        "kept": sorted({str(sandbox.lib), *python, *numpy_dirs}),
        "required": any(map(exposed, found)) if sandbox.uid is not None else isolated,
    }


def _site_packages() -> list[str]:
    """Every site-packages (and Debian's dist-packages) of this interpreter, of its base, and of the
    system's Pythons under ``/usr``: the solution needs none of them (its interpreter runs with ``-I -S``),
    and they hold other copies of micrograph, another derivative engine (sympy, micrograd) or an array
    library (torch) that would do the exercise's work; numpy, where the exercise allows it, is kept."""
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, "/usr", "/usr/local"}
    sites = {
        p.resolve()
        for prefix in prefixes
        for pattern in ("lib/python3*/site-packages", "lib/python3*/dist-packages")
        for p in Path(prefix).glob(pattern)
    }
    numpy = numpy_path()
    if numpy is not None:
        sites.add(Path(numpy).resolve())
    return sorted(str(p) for p in sites if p.is_dir())


VISIBLE = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "dev", "proc", "sys")
"""The top-level directories the solution sees (read-only; ``/proc`` and ``/dev/pts`` covered): the
system's programs and libraries. Every other one (``/home``, ``/tmp``, ``/root``, ``/run``,
``/var``, ``/opt``, ``/srv``, a checkout's ``/work`` ...) is empty but for the check's and the
interpreter's directories (:mod:`lessons.exercises.enclosure`): the user's files, other copies of
micrograph, and sockets by which code could act outside (tmux, D-Bus, an X server, a container engine)."""


def _top_level() -> list[str]:
    try:
        return os.listdir("/")
    except OSError:
        return []
