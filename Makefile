# Two commands a user needs: `make demo` and `make test`. Both bootstrap .venv from python3.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# One stamp per install: `make demo` installs only what it runs (the `all` extra); `make test`
# adds the dev tools (pytest, playwright, ruff, mypy) on top.
STAMP_ALL := $(VENV)/.installed-all
STAMP_DEV := $(VENV)/.installed-dev

.PHONY: demo test lint typecheck pytest bench browser screenshots clean venv serve

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

demo: $(STAMP_ALL)
	$(BIN)/planscope demo

test: $(STAMP_DEV) browser lint typecheck pytest

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
