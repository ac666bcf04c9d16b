# micrograph: `make demo` runs the lesson tour (writes out/), `make test` runs the tests.
# Both create a virtual environment in .venv and install what is missing first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
OUT    ?= out

.PHONY: demo test lint bench site serve-site graphviz testtools clean

# The main job installs micrograph and what it needs, nothing more; the tests add the dev extra.
$(VENV)/.installed-main: setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -e .
	touch $@

$(VENV)/.installed: $(VENV)/.installed-main
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

# Graphviz's `dot` program is a system package: installed with apt-get where we can, explained where not.
graphviz:
	@command -v dot >/dev/null 2>&1 || { \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    (apt-get install -y -qq graphviz || (apt-get update -qq && apt-get install -y -qq graphviz)) >/dev/null; \
	  elif command -v apt-get >/dev/null 2>&1 && command -v sudo >/dev/null 2>&1; then \
	    sudo apt-get install -y -qq graphviz >/dev/null; \
	  else \
	    echo "micrograph: Graphviz's 'dot' is not installed; diagrams will be written as .dot source."; \
	    echo "  install it with: apt-get install graphviz | brew install graphviz | conda install graphviz"; \
	  fi; }

demo: $(VENV)/.installed-main graphviz
	$(VENV)/bin/micrograph tour --out $(OUT) --force

# The browser and terminal tests need Debian's chromium and tmux: installed with apt-get where we can; the
# tests say which command to run where not (they never pass silently without them).
testtools:
	@missing=""; for p in chromium tmux; do command -v $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    (apt-get install -y -qq $$missing || (apt-get update -qq && apt-get install -y -qq $$missing)) >/dev/null; \
	  else \
	    echo "micrograph: the browser and terminal tests need:$$missing"; \
	    echo "  install with: sudo apt-get install$$missing"; \
	  fi; \
	fi

test: $(VENV)/.installed graphviz testtools
	$(PY) -m pytest -q

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check micrograph viz lessons tests benchmarks
	$(VENV)/bin/mypy

bench: $(VENV)/.installed
	$(PY) benchmarks/run.py

# The static site (lessons, exercises, explorer in the browser): needs npm; `make serve-site` serves it.
SITE ?= site-out
site: $(VENV)/.installed
	$(VENV)/bin/micrograph site --out $(SITE) --force

serve-site: site
	$(VENV)/bin/micrograph site --out $(SITE) --serve

clean:
	rm -rf $(VENV) $(OUT) .pytest_cache .mypy_cache .ruff_cache .hypothesis
