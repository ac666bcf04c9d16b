"""``micrograph site``: a static site of the lessons and exercises that runs entirely in the browser.

The site is a directory of files that any static host (or ``micrograph site --serve``) can serve; once loaded
it needs no network. It holds:

* Pyodide (CPython compiled to WebAssembly), from the npm package ``pyodide``;
* micrograph's own wheel, built from this checkout, and the pure-Python wheels it imports in the page
  (``graphviz`` for the DOT text, ``tqdm``), downloaded from PyPI pinned and hash-checked
  (``site/requirements.txt``);
* two JavaScript bundles (esbuild): ``vendor.js``, CodeMirror 6 (the exercise editor) and Observable Plot
  (the lessons' plots, from :mod:`viz.charts` data), for the page; ``graphviz.js``, ``@viz-js/viz``
  (Graphviz compiled to WebAssembly, which lays the drawings out), for the worker that runs the page's Python;
* ``licenses/``: the license of each npm package shipped (Pyodide, and each package esbuild bundled),
  with an index the page links to;
* ``pictures.js``, made by :func:`viz.pictures.pictures_script`: d3-zoom (vendored from npm in
  ``viz/static/vendor``, its licenses added to ``licenses/``) and the explorer's own pane code, which keep
  each drawing legible and let it pan and zoom;
* ``style.css``, made by :func:`viz.style.stylesheet`: the page's rules from the pages' one stylesheet
  (``viz/static/micrograph.css``) and their colours from :mod:`viz.style`;
* the page (``site/src``): ``index.html`` (its Content-Security-Policy, :func:`viz.page.site_policy`, put in
  by the build: the site's own scripts, workers, fetches and frames only), ``explorer.html`` (the explorer's
  frame, which writes the explorer's page, with that page's own policy, into itself), ``app.js`` (the page's
  controls; it asks the page's Python for every step, explorer and verdict, and relays an exercise check's
  questions), ``workers.js`` (the two kinds of Web Worker as the page talks to them), ``drawings.js`` (the
  drawings laid out by ``pictures.js``; the explorer's page sent to its frame, made as tall as that page),
  ``python.js`` (the Web Worker that runs the page's Python, :mod:`lessons.publish.web`, and Graphviz, off
  the page's thread, so that the page never freezes and its Stop button can end the work), ``charts.js`` (a
  Chart drawn with Observable Plot), ``worker.js`` (the student's code in a Web Worker of its own),
  ``loading.js`` (a plain script that says on the page when the module scripts cannot load),
  ``python_setup.js`` (micrograph made ready in Pyodide, shared by ``python.js`` and the build's
  ``snapshot.mjs``);
* ``pyodide/snapshot.gz``: Pyodide's memory with micrograph imported and what every start of the page computes
  first computed (:func:`lessons.publish.web.prepare`), saved by ``site/src/snapshot.mjs`` in Node once the
  rest is staged; the page's Python starts from it, skipping the interpreter's start, micrograph's imports
  and that work (it starts the plain way if the image is missing or refused).

The JavaScript packages are pinned by ``site/package.json`` and ``site/package-lock.json``; the build runs
``npm ci`` in a cache directory (``~/.cache/micrograph/site``, or ``$MICROGRAPH_CACHE``), which installs
exactly the locked versions and checks each file against the lockfile's integrity hash. Nothing downloaded
is kept in the repository. The site is built in a new directory beside ``--out`` and moved into place as
the tour is (:mod:`lessons.publish.swap`, :data:`~lessons.publish.swap.SITE`), so an interrupted build
leaves the old site or the new one, and files added by hand to a site are never deleted. Before it is
moved, every file its page loads is looked for in it (:func:`lessons.publish.site_files.missing_files`): a
site that lacks one is not written, and the build fails naming the file. Paths are made absolute before a
build tool gets them, as each tool runs in a directory of its own (esbuild in the npm cache, pip in the
checkout).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lessons.publish.site_files import missing_files
from lessons.publish.swap import SITE, built_beside, mark

__all__ = ["SiteError", "build_site", "serve", "server", "site_size", "BUDGET"]

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "site"
BUDGET = 40 << 20
"""Bytes the built site may take (40 MiB)."""

PYODIDE_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
PAGE_FILES = ("loading.js", "app.js", "workers.js", "drawings.js", "charts.js", "python.js",
              "python_setup.js", "worker.js")  # fmt: skip
PAGES = ("index.html", "explorer.html")
"""The site's HTML pages (``site/src``), each written with its policy (:func:`page_policy`)."""
SNAPSHOT = "pyodide/snapshot.gz"
"""The image of Pyodide's memory with micrograph imported, gzip-compressed, which the page's Python starts
from (``site/src/snapshot.mjs`` saves it when the site is built, in Node; ``python.js`` loads it)."""
SNAPSHOT_TIMEOUT = 300
STYLESHEET = "style.css"
"""The page's stylesheet (:func:`viz.style.stylesheet`: the pages' colours and the site's section of their one
stylesheet, ``viz/static/micrograph.css``), written when the site is built."""
PICTURES = "pictures.js"
"""The drawings' script (:func:`viz.pictures.pictures_script`: d3-zoom and the explorer's pane code), made
when the site is built."""
BUNDLES = ("vendor.js", "graphviz.js")
"""The esbuild bundles of npm packages: the page's (CodeMirror, Observable Plot), and Graphviz for the
Web Worker that runs the page's Python (it lays the drawings out there, off the page's thread)."""
NPM_TIMEOUT = 600
PIP_TIMEOUT = 600


class SiteError(Exception):
    """The site cannot be built or served: no checkout, npm or pip failing, an output that is not ours."""


def _cache() -> Path:
    """The build's cache directory, absolute: npm and esbuild run in it, pip elsewhere."""
    base = os.environ.get("MICROGRAPH_CACHE") or os.path.join(Path.home(), ".cache", "micrograph")
    return Path(base).absolute() / "site"


def _run(command: list[str], cwd: Path, what: str, timeout: int, env: dict[str, str] | None = None) -> None:
    """Run a build tool (in ``env``, else this process's environment); a SiteError with its last line of
    error output if it fails."""
    try:
        done = subprocess.run(
            command, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False, env=env
        )
    except FileNotFoundError:
        raise SiteError(f"{what} needs {command[0]!r}, which is not installed") from None
    except subprocess.TimeoutExpired:
        raise SiteError(f"{what} took longer than {timeout} s and was stopped") from None
    if done.returncode != 0:
        lines = [ln.strip() for ln in (done.stderr or done.stdout).strip().splitlines() if ln.strip()]
        errors = [ln for ln in lines if "ERR" in ln] or lines[-1:]  # npm's and esbuild's first error line
        raise SiteError(f"{what} failed: {errors[0] if errors else f'exit status {done.returncode}'}")


def npm_packages(log: Callable[[str], None]) -> Path:
    """``node_modules`` of the locked JavaScript packages, installed by ``npm ci`` (integrity checked).

    Raises:
        SiteError: no checkout (``site/package-lock.json``), no npm, or npm failing (the registry
            unreachable, a file whose hash differs from the lockfile's).
    """
    lock = SOURCE / "package-lock.json"
    if not lock.is_file():
        raise SiteError(f"micrograph site builds from a checkout of micrograph: {lock} is missing")
    if shutil.which("npm") is None:
        raise SiteError(
            "micrograph site needs npm (Node.js) to fetch the page's JavaScript: install nodejs/npm"
        )
    key = hashlib.sha256(lock.read_bytes() + (SOURCE / "package.json").read_bytes()).hexdigest()[:16]
    where = _cache() / f"npm-{key}"
    done = Path("node_modules", ".micrograph-installed")
    if (where / done).is_file():
        return where / "node_modules"
    # Installed in a directory of its own, then renamed into place: a build that runs at the same time
    # (or was interrupted) never sees a half-installed cache; where two install at once, the first rename
    # wins and the other's copy is removed.
    _cache().mkdir(parents=True, exist_ok=True)
    own = Path(tempfile.mkdtemp(prefix=f"npm-{key}.", dir=_cache()))
    try:
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(SOURCE / name, own / name)
        log("npm ci: the page's JavaScript, as locked by site/package-lock.json ...")
        _run(["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"], own, "npm ci", NPM_TIMEOUT)
        (own / done).write_text("installed by npm ci from the lockfile\n")
        try:
            own.rename(where)
        except OSError:  # installed meanwhile by another build, or an install left half done
            if not (where / done).is_file():
                shutil.rmtree(where)
                own.rename(where)
    finally:
        shutil.rmtree(own, ignore_errors=True)
    return where / "node_modules"


def wheels(stage: Path, log: Callable[[str], None]) -> tuple[str, list[str]]:
    """micrograph's wheel built from the checkout, and the pinned pure-Python wheels, into ``stage``.

    Returns:
        (micrograph's wheel file name, the other wheels' file names).

    Raises:
        SiteError: pip failing (PyPI unreachable, a hash that differs from ``site/requirements.txt``);
            micrograph's wheel holding a file that is not in the checkout (:func:`only_the_checkout`).
    """
    stage.mkdir()
    log("pip: micrograph's wheel from the checkout, graphviz and tqdm pinned by hash ...")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    with tempfile.TemporaryDirectory() as tmp:
        # setuptools builds in the checkout's build/ and keeps there what earlier builds left (a module since
        # removed), which would go into the wheel: this build's build/ and egg-info are directories of its
        # own, so it writes nothing into the checkout (and two builds at once do not share one)
        config = Path(tmp) / "build.cfg"
        config.write_text(f"[build]\nbuild_base = {Path(tmp) / 'build'}\n[egg_info]\negg_base = {tmp}\n")
        env = {**os.environ, "DIST_EXTRA_CONFIG": str(config)}  # read by setuptools after setup.cfg
        _run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", tmp, str(ROOT)], ROOT,
             "building micrograph's wheel", PIP_TIMEOUT, env)  # fmt: skip
        (ours,) = Path(tmp).glob("micrograph-*.whl")
        only_the_checkout(ours)
        shutil.copyfile(ours, stage / ours.name)
    downloads = _cache() / "wheels"
    _run([*pip, "download", "--no-deps", "--only-binary=:all:", "--require-hashes",
          "-r", str(SOURCE / "requirements.txt"), "-d", str(downloads)], ROOT,
         "downloading the pinned wheels", PIP_TIMEOUT)  # fmt: skip
    others = []
    for line in (SOURCE / "requirements.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split()[0].split("==")
            (found,) = downloads.glob(f"{name}-{version}-*.whl")
            shutil.copyfile(found, stage / found.name)
            others.append(found.name)
    return ours.name, others


def only_the_checkout(wheel: Path) -> None:
    """Check that micrograph's ``wheel`` holds the checkout's files only (besides its metadata).

    Raises:
        SiteError: a file that is not in the checkout, named (a setuptools too old to build elsewhere than
            the checkout's build/ packs what an earlier build left there).
    """
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if not n.split("/")[0].endswith(".dist-info")]
    stale = [n for n in names if not (ROOT / n).is_file()]
    if stale:
        raise SiteError(
            f"micrograph's wheel holds {stale[0]}, which is not in the checkout: remove {ROOT / 'build'}"
        )


def _bundle(modules: Path, out: Path) -> list[str]:
    """esbuild bundles each of :data:`BUNDLES` (site/src), copied beside node_modules so that its imports
    resolve there, into the directory ``out`` under the same name.

    esbuild runs in the npm cache directory, so each path it is given is absolute (a relative ``out``
    would put the bundles in the cache, not in the site).

    Returns:
        The npm packages whose files went into a bundle (from esbuild's metafile), sorted.
    """
    modules, out = modules.absolute(), out.absolute()
    # the entries in a directory of this build's own below the cache, whose node_modules they import
    with tempfile.TemporaryDirectory(dir=modules.parent) as tmp:
        entries = []
        for name in BUNDLES:
            entry = Path(tmp) / name
            shutil.copyfile(SOURCE / "src" / name, entry)
            entries.append(str(entry))
        esbuild = modules / ".bin" / "esbuild"
        meta = Path(tmp) / "vendor.meta.json"
        _run([str(esbuild), *entries, "--bundle", "--format=esm", "--minify", "--log-level=error",
              f"--metafile={meta}", f"--outdir={out}"], modules.parent, "esbuild", 120)  # fmt: skip
        inputs = json.loads(meta.read_text())["inputs"]
    packages = set()
    for path in inputs:
        parts = path.split("/")
        if "node_modules" in parts:
            at = len(parts) - 1 - parts[::-1].index("node_modules")  # the innermost node_modules
            name = parts[at + 1 : at + 3] if parts[at + 1].startswith("@") else parts[at + 1 : at + 2]
            packages.add("/".join(name))
    return sorted(packages)


LICENSE_FILES = ("LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "LICENCE.md", "COPYING")


def _licenses(modules: Path, packages: list[str], out: Path) -> None:
    """Each shipped npm package's license text into ``out``/NAME.txt, and an index (name, version, license).

    A package that ships no license file (``pyodide``, ``@viz-js/viz``) is listed with its ``package.json``
    license and where its source is (a bundled package's copyright notice is also a legal comment that
    esbuild keeps in its bundle).

    Raises:
        SiteError: a shipped package with neither a license file nor a license in its package.json.
    """
    out.mkdir()
    index = ["The JavaScript and WebAssembly this site ships, from npm: package, version, license.", ""]
    for name in packages:
        folder = modules / name
        about = json.loads((folder / "package.json").read_text(encoding="utf-8"))
        found = [folder / f for f in LICENSE_FILES if (folder / f).is_file()]
        terms = about.get("license")
        line = f"{name} {about.get('version', '?')} {terms or '(no license named)'}"
        if found:
            target = name.replace("/", "__") + ".txt"
            shutil.copyfile(found[0], out / target)
            index.append(f"{line}: {target}")
        elif terms:
            repository = about.get("repository")
            source = about.get("homepage") or (
                repository.get("url") if isinstance(repository, dict) else repository
            )
            index.append(f"{line}: the package has no license file; its source and terms: {source or '?'}")
        else:
            raise SiteError(f"the npm package {name} names no license; the site cannot ship it")
    (out / "index.txt").write_text("\n".join(index) + "\n", encoding="utf-8")


def _vendored_licenses(out: Path) -> None:
    """The licenses of the npm packages in :data:`PICTURES` (vendored in viz/static/vendor, pinned by its
    package-lock.json) into ``out``, with a line each in its index."""
    vendor = ROOT / "viz" / "static" / "vendor"
    lock = json.loads((vendor / "package-lock.json").read_text(encoding="utf-8"))
    shutil.copyfile(vendor / "LICENSES.txt", out / "d3-zoom-bundle.txt")
    lines = [f"{path.removeprefix('node_modules/')} {about['version']} {about.get('license', '?')} "
             f"(in {PICTURES}): d3-zoom-bundle.txt"
             for path, about in sorted(lock["packages"].items()) if path]  # fmt: skip
    with (out / "index.txt").open("a", encoding="utf-8") as index:
        index.write("\n".join(lines) + "\n")


def _stage(stage: Path, log: Callable[[str], None]) -> None:
    """Every file of the site into ``stage`` (a new directory, which may hold the build's claim)."""
    import micrograph
    from viz.pictures import pictures_script
    from viz.style import stylesheet

    modules = npm_packages(log)
    (stage / "pyodide").mkdir(parents=True)
    for name in PYODIDE_FILES:
        shutil.copyfile(modules / "pyodide" / name, stage / "pyodide" / name)
    bundled = _bundle(modules, stage)
    _licenses(modules, sorted({"pyodide", *bundled}), stage / "licenses")
    for name in PAGE_FILES:
        shutil.copyfile(SOURCE / "src" / name, stage / name)
    for name in PAGES:
        page = (SOURCE / "src" / name).read_text(encoding="utf-8")
        (stage / name).write_text(with_policy(page, page_policy(name), name), encoding="utf-8")
    (stage / PICTURES).write_text(pictures_script(), encoding="utf-8")
    (stage / STYLESHEET).write_text(stylesheet("site"), encoding="utf-8")
    _vendored_licenses(stage / "licenses")
    ours, others = wheels(stage / "wheels", log)
    pyodide = json.loads((modules / "pyodide" / "package.json").read_text())["version"]
    lock = json.loads((modules / "pyodide" / "pyodide-lock.json").read_text())
    manifest = {
        "version": micrograph.__version__,
        "pyodide": pyodide,
        "python": lock.get("info", {}).get("python", "?"),
        "micrograph": ours,
        "wheels": others,
    }
    (stage / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    log("node: Pyodide's memory saved with micrograph imported (the page starts from it) ...")
    _run(["node", str(SOURCE / "src" / "snapshot.mjs"), str(stage), str(stage / SNAPSHOT)], SOURCE / "src",
         "the snapshot of Pyodide's memory", SNAPSHOT_TIMEOUT)  # fmt: skip


def page_policy(page: str) -> str:
    """The Content-Security-Policy of the site's page ``page`` (one of :data:`PAGES`), from :mod:`viz.page`:
    the page's (:func:`viz.page.site_policy`), or the explorer's frame's (:func:`viz.page.frame_policy`)."""
    from viz.page import frame_policy, site_policy

    return site_policy() if page == "index.html" else frame_policy()


def with_policy(page: str, policy: str, name: str) -> str:
    """The HTML ``page`` with ``policy`` in force: its ``<meta>`` the first element of the page's ``<head>``.

    Raises:
        SiteError: the page (``name``) has no ``<head>`` alone on its line, or has a policy already.
    """
    from viz.page import policy_element

    if page.count("<head>\n") != 1 or 'http-equiv="Content-Security-Policy"' in page:
        raise SiteError(
            f"site/src/{name} needs one '<head>' line and no policy of its own: the build adds it"
        )
    return page.replace("<head>\n", f"<head>\n{policy_element(policy)}\n", 1)


def build_site(
    out: str | os.PathLike[str], *, force: bool = False, log: Callable[[str], None] = print
) -> int:
    """Build the static site into ``out``; returns its size in bytes.

    Args:
        out: the site's directory (created, not its parents; an earlier site there is replaced only with
            ``force``).
        force: replace a site built earlier in ``out``.
        log: where progress lines go.

    Raises:
        FileExistsError: ``out`` holds an earlier site and ``force`` is False, or files the site build did
            not write, or it appeared while the site was built (as :func:`lessons.publish.swap.built_beside`
            says; then nothing is written to ``out``).
        FileNotFoundError: the directory ``out`` would be made in does not exist.
        NotADirectoryError: ``out`` is a symbolic link or a file.
        SiteError: a build tool failed; the site built lacks a file its page loads (then nothing is written
            to ``out``).
        OSError: a file cannot be written (its ``filename`` names it).
    """
    target = Path(out).absolute()  # the build tools run in other directories
    with built_beside(target, replace=force, kind=SITE) as building:
        _stage(building, log)
        missing = missing_files(building)
        if missing:
            raise SiteError(f"the site built for {out} lacks {missing[0]}; {out} was not written")
        mark(building, sorted(p for p in building.rglob("*") if p.is_file() and p.name != SITE.claim), SITE)
    return site_size(target)


def site_size(directory: str | os.PathLike[str]) -> int:
    """Bytes of every file under ``directory``."""
    return sum(p.stat().st_size for p in Path(directory).rglob("*") if p.is_file())


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the site's files with the types browsers insist on (module scripts, WebAssembly)."""

    extensions_map = {  # noqa: RUF012 -- the base class declares it as an instance variable
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".wasm": "application/wasm",
        ".json": "application/json",
        ".whl": "application/zip",
    }

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the page asks for ~20 files
        pass


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a page closed while loading: not an error
            super().handle_error(request, client_address)


def server(directory: str | os.PathLike[str], port: int = 0) -> http.server.ThreadingHTTPServer:
    """An HTTP server of ``directory`` on localhost (``port`` 0: any free port); call ``serve_forever``."""
    handler = functools.partial(_Handler, directory=str(directory))
    return _Server(("127.0.0.1", port), handler)


def serve(directory: str | os.PathLike[str], port: int = 8000) -> None:
    """Serve the built site on http://127.0.0.1:PORT/ until interrupted.

    Raises:
        SiteError: ``directory`` holds no built site, or one that lacks a file its page loads.
    """
    if not (Path(directory) / SITE.marker).is_file():
        raise SiteError(f"{directory} holds no site: build it with  micrograph site --out {directory}")
    missing = missing_files(directory)
    if missing:
        raise SiteError(
            f"{directory} lacks {missing[0]}: build it again with  micrograph site --out {directory} --force"
        )
    with server(directory, port) as httpd:
        print(f"serving {directory} at http://127.0.0.1:{httpd.server_address[1]}/ (Ctrl-C stops)")
        httpd.serve_forever()
