# sdckit — set up a fresh machine and run the main job or the tests.
#   make demo     creates .venv from uv.lock if needed, runs `sdckit demo` (writes sdckit-demo/)
#   make test     the same environment with the test tools (and Debian's 4ti2 and chromium when
#                 root), runs `make lint`, then the test suite
#   make lint     ruff (pyflakes, isort, bugbear, pyupgrade, numpy rules, pycodestyle), mypy on the
#                 core modules listed in pyproject.toml, numpydoc checks of the public API's docstrings
#                 (tools/check_docstrings.py); tools/lint_fix.sh applies ruff's safe fixes
#   make bench    runs every benchmark in quick mode
#   make upgrade  re-resolves every dependency to its newest version, runs the suite on it, and
#                 rewrites uv.lock only when the suite passes
#   make lock     re-locks after an edit of pyproject.toml (keeps locked versions where allowed)
#
# The environment is installed from uv.lock exactly (`uv sync --frozen`). uv itself is a pinned
# PyPI package installed into .uv/ with the machine's python3 (3.11 to 3.13).

PYTHON     ?= python3
UV_VERSION := 0.13.9
UV_DIR     := .uv
UV         := $(UV_DIR)/bin/uv
VENV       := .venv
BIN        := $(VENV)/bin
# the stamp names the lock, pyproject and the extras: a changed lock re-syncs, never reused silently
LOCKSUM     = $(shell cat uv.lock pyproject.toml | cksum | cut -d' ' -f1)
export UV_PROJECT_ENVIRONMENT := $(abspath $(VENV))
export UV_PYTHON_DOWNLOADS := never
export UV_NO_PROGRESS := 1

.PHONY: demo test lint lint-fix bench upgrade lock system-packages clean env-main env-test

$(UV):
	$(PYTHON) -m venv $(UV_DIR)
	$(UV_DIR)/bin/python -m pip install --quiet --disable-pip-version-check "uv==$(UV_VERSION)"

# Warm-up after each sync (the same stamp guards it), so that a user's first command is fast:
# compile the bytecode of the environment and of sdckit (Python writes none where
# PYTHONDONTWRITEBYTECODE is set, and every command would compile pandas, numba... again), and
# the numba kernels of risk, anonymise and table count into numba's cache (`sdckit warm`).
WARM_UP = { $(BIN)/python -m compileall -q -j 0 $(VENV)/lib src/sdckit >/dev/null 2>&1 || true; } && \
	{ $(BIN)/sdckit warm >/dev/null || echo "note: sdckit warm failed: the first commands compile their kernels"; }

# install exactly the locked versions (main dependencies, or with the test extra)
env-main: $(UV)
	@if [ ! -f $(VENV)/.synced-main-$(LOCKSUM) ] && [ ! -f $(VENV)/.synced-test-$(LOCKSUM) ]; then \
		$(UV) sync --frozen --quiet --python "$$($(PYTHON) -c 'import sys; print(sys.executable)')" && \
		$(WARM_UP) && rm -f $(VENV)/.synced-* && touch $(VENV)/.synced-main-$(LOCKSUM); fi

env-test: $(UV)
	@if [ ! -f $(VENV)/.synced-test-$(LOCKSUM) ]; then \
		$(UV) sync --frozen --quiet --extra test --python "$$($(PYTHON) -c 'import sys; print(sys.executable)')" && \
		$(WARM_UP) && rm -f $(VENV)/.synced-* && touch $(VENV)/.synced-test-$(LOCKSUM); fi

# Debian packages the tests use: 4ti2 (Markov bases) and chromium (reports and the workbench are
# loaded in a headless browser). Installed when running as root; otherwise a clear message says
# what to install (the tests that need them skip).
system-packages:
	@missing=""; \
	command -v 4ti2-markov >/dev/null 2>&1 || missing="$$missing 4ti2"; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian packages:$$missing"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null) \
		|| echo "note: could not install$$missing; the tests that need them will skip"; \
	else echo "note: not root, so$$missing not installed: run 'sudo apt-get install$$missing' (the tests that need them skip)"; fi

demo: env-main
	$(BIN)/sdckit demo

lint: env-test
	$(BIN)/ruff check --quiet .
	$(BIN)/mypy
	$(BIN)/python tools/check_docstrings.py

# ruff's safe fixes on the whole tree (or PATHS="..."), then what is left for a person
lint-fix: env-test
	RUFF=$(BIN)/ruff bash tools/lint_fix.sh $(PATHS)

test: lint system-packages
	$(BIN)/python -m pytest -q -n 2 -p no:cacheprovider; rc=$$?; [ $$rc -eq 5 ] && exit 0 || exit $$rc

bench: env-test
	@for b in benchmarks/bench_*.py; do echo "# $$b"; $(BIN)/python $$b --quick || exit 1; done

lock: $(UV)
	$(UV) lock

# Re-resolve to the newest versions, run the suite on them twice in two random orders, and
# rewrite uv.lock only when both pass (scripts/upgrade.sh).
upgrade: $(UV) system-packages
	UV=$(UV) PYTHON=$(PYTHON) bash scripts/upgrade.sh

clean:
	rm -rf $(VENV) $(UV_DIR) sdckit-demo .pytest_cache
