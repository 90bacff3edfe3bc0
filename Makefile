# Two commands a user needs: `make demo` and `make test`. Both bootstrap .venv from python3.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# One stamp per install: `make demo` installs only what it runs (the `all` extra); `make test`
# adds the dev tools (pytest, playwright, ruff, mypy) on top.
STAMP_ALL := $(VENV)/.installed-all
STAMP_DEV := $(VENV)/.installed-dev

.PHONY: demo test lint typecheck pytest bench browser js screenshots clean venv serve

venv: $(STAMP_DEV)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP_ALL): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[all]'
	touch $(STAMP_ALL)

$(STAMP_DEV): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP_DEV) $(STAMP_ALL)

# Headless Chromium for the dashboard's browser tests, from Debian's packages (never a browser
# download). Any failure (not root, no sudo, apt busy or offline) only skips those tests: this
# step always succeeds and says why.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; \
	  else echo "make browser: not root and no passwordless sudo; the browser tests will skip"; exit 0; fi; \
	  ( $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	    chromium chromium-driver >/dev/null ) 2>&1 | tail -n 3 | sed 's/^/make browser: /'; \
	  command -v chromium >/dev/null 2>&1 \
	    || echo "make browser: could not install Debian's chromium (see above); the browser tests will skip"; }

# Node.js and the conformance suite's JavaScript packages (the `vercel_ai` source), from Debian's
# nodejs/npm when node is missing (as `browser`), then `npm ci` from the committed lockfile (the
# npm registry only) when node_modules is missing or older than it. Any failure only skips that
# source's tests: this step always succeeds and says why.
JS := tests/conformance/js
js:
	@command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; \
	  else echo "make js: not root and no passwordless sudo; the vercel_ai tests will skip"; exit 0; fi; \
	  ( $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	    nodejs npm >/dev/null ) 2>&1 | tail -n 3 | sed 's/^/make js: /'; }
	@if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then \
	  echo "make js: could not install Debian's nodejs npm (see above); the vercel_ai tests will skip"; \
	elif [ ! -f $(JS)/node_modules/.package-lock.json ] \
	    || [ $(JS)/package-lock.json -nt $(JS)/node_modules/.package-lock.json ]; then \
	  out=$$(npm ci --prefix $(JS) --no-audit --no-fund --loglevel=error 2>&1) || { \
	    echo "$$out" | tail -n 5 | sed 's/^/make js: /'; \
	    echo "make js: npm ci failed (see above); the vercel_ai tests will skip"; }; \
	fi

demo: $(STAMP_ALL)
	$(BIN)/planscope demo

test: $(STAMP_DEV) browser js lint typecheck pytest

lint: $(STAMP_DEV)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP_DEV)
	$(BIN)/mypy

# Two workers (pytest-xdist), each running whole test files: module-scoped collectors and
# conformance's session of agents stay in one process, as in a serial run. PYTEST_WORKERS=0 runs
# the suite in this process alone.
PYTEST_WORKERS ?= 2
pytest: $(STAMP_DEV)
	$(BIN)/python -m pytest -q --durations=15 -n $(PYTEST_WORKERS) --dist loadfile

# The browser test writes its screenshots to a temporary folder; this refreshes docs/screenshots/.
screenshots: $(STAMP_DEV) browser
	PLANSCOPE_UPDATE_SCREENSHOTS=1 $(BIN)/python -m pytest -q tests/dashboard/test_browser.py

serve: $(STAMP_ALL)
	$(BIN)/planscope serve

# Every benchmark in benchmarks/ at full size (tens of minutes on 2 cores); `BENCH_ARGS=--quick`
# for a smoke run of all of them.
bench: $(STAMP_DEV)
	$(BIN)/python benchmarks/run_all.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info
