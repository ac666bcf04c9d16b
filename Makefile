# micrograph: `make demo` runs the lesson tour (writes out/), `make test` builds the docs and runs the tests
# not marked slow (`make test-slow` the others),
# `make docs` builds the documentation site (docs/_build/html), `make bench` measures.
# Each creates a virtual environment in .venv and installs what is missing first. Other Pythons (3.10 to
# 3.13, where installed) get their own environments from nox: `make pythons`, `make wheel`, `make citation`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
OUT    ?= out

.DELETE_ON_ERROR:
.PHONY: demo test test-slow docs lint bench site serve-site graphviz testtools pythons wheel citation clean

# The main job installs micrograph and what it needs, nothing more; the tests add the dev extra.
$(VENV)/.installed-main: setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -e .
	touch $@

$(VENV)/.installed: $(VENV)/.installed-main
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev,docs]'
	touch $@

$(VENV)/.installed-bench: $(VENV)/.installed
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[bench]'
	touch $@

# Graphviz's `dot` program is a system package: installed with apt-get where we can, explained where not.
graphviz:
	@command -v dot >/dev/null 2>&1 || { \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    (apt-get install -y -qq graphviz || (apt-get update -qq && apt-get install -y -qq graphviz)) >/dev/null; \
	  elif command -v apt-get >/dev/null 2>&1 && command -v sudo >/dev/null 2>&1; then \
	    sudo apt-get install -y -qq graphviz >/dev/null; \
	  else \
	    echo "micrograph: Graphviz's 'dot' is not installed; make demo, make docs and the tests draw with it."; \
	    echo "  install it with: apt-get install graphviz | brew install graphviz | conda install graphviz"; \
	  fi; }

demo: $(VENV)/.installed-main graphviz
	$(VENV)/bin/micrograph tour --out $(OUT) --force

# The browser and terminal tests need Debian's chromium and tmux, and npm for the site's test: installed with
# apt-get where we can; the tests say which command to run where not (they never pass silently without them).
testtools:
	@missing=""; for p in chromium tmux npm; do command -v $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    (apt-get install -y -qq $$missing || (apt-get update -qq && apt-get install -y -qq $$missing)) >/dev/null; \
	  else \
	    echo "micrograph: the browser and terminal tests need:$$missing"; \
	    echo "  install with: sudo apt-get install$$missing"; \
	  fi; \
	fi

# The site: Sphinx with warnings as errors; the lesson notebooks are executed during the build. The tests
# open its pages in a browser (tests/test_docs.py), so `make test` and `make test-slow` build it first: once,
# and again only when one of its inputs changed (every file under docs/ and the packages autodoc and the
# lesson notebooks read), so CI's two test runs do not build it twice. A failed build leaves no index.html.
# A file deleted but not yet committed is left out of the inputs (make would otherwise stop: no rule to make
# it); deleting a file alone does not rebuild the site (remove docs/_build/html/index.html to rebuild it).
DOCS_INDEX := docs/_build/html/index.html
DOCS_INPUTS := $(shell (git ls-files --cached --others --exclude-standard -- docs micrograph viz lessons \
  README.md CHANGELOG.md 2>/dev/null || find docs micrograph viz lessons README.md CHANGELOG.md -type f \
  -not -path 'docs/_build/*' -not -path 'docs/_generated/*' -not -path '*/__pycache__/*') \
  | while IFS= read -r f; do [ -e "$$f" ] && printf '%s\n' "$$f"; done | sed 's/ /\\ /g')

docs: $(DOCS_INDEX)
	@echo "micrograph: the site is in $(DOCS_INDEX)"

$(DOCS_INDEX): $(VENV)/.installed $(DOCS_INPUTS) | graphviz
	$(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html
	@touch $@

# `make test` runs every test not marked slow (minutes); `make test-slow` the slow ones (chromium and the
# site, the tour, the checker's limits); CI runs both. PYTEST_WORKERS: pytest-xdist's workers, one per CPU;
# each test module runs whole in one worker (--dist loadscope), so a module's booted page is shared.
PYTEST_WORKERS ?= auto
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist loadscope

test: $(VENV)/.installed graphviz testtools $(DOCS_INDEX)
	$(PY) -m pytest -q -m "not slow" $(PYTEST_PARALLEL)

test-slow: $(VENV)/.installed graphviz testtools $(DOCS_INDEX)
	$(PY) -m pytest -q -m slow $(PYTEST_PARALLEL)

# The style gates: ruff's rules (complexity at most 15 included), ruff's format, mypy.
lint: $(VENV)/.installed
	$(VENV)/bin/ruff check micrograph viz lessons tests benchmarks noxfile.py docs/conf.py
	$(VENV)/bin/ruff format --check micrograph viz lessons tests benchmarks noxfile.py docs/conf.py
	$(VENV)/bin/mypy

# The full benchmark with this Python, then micrograd's demo step with every other Python whose test
# environment nox has made (`make pythons` makes them; --install-only here creates any that are missing).
bench: $(VENV)/.installed-bench
	$(VENV)/bin/nox -s tests --install-only
	$(PY) benchmarks/run.py --write docs/performance.md

# The test suite on every supported Python installed here (nox: one session per version).
pythons: $(VENV)/.installed graphviz testtools $(DOCS_INDEX)
	$(VENV)/bin/nox -s tests

# The wheel path: build, twine check, install the wheel alone in a new environment and run the tour there.
wheel: $(VENV)/.installed graphviz
	$(VENV)/bin/nox -s build wheel

citation: $(VENV)/.installed
	$(VENV)/bin/nox -s citation

# micrograph in the browser (lessons, exercises, explorer; no install): needs npm; `make serve-site` serves it.
SITE ?= site-out
site: $(VENV)/.installed
	$(VENV)/bin/micrograph site --out $(SITE) --force

serve-site: site
	$(VENV)/bin/micrograph site --out $(SITE) --serve

clean:
	rm -rf $(VENV) $(OUT) .pytest_cache .mypy_cache .ruff_cache .hypothesis .nox dist docs/_build docs/_generated
