# sdckit — set up a fresh machine and run the main job or the tests.
#   make demo   creates .venv if needed, installs sdckit, runs `sdckit demo` (writes sdckit-demo/)
#   make test   creates .venv if needed, installs sdckit with test tools (and Debian's 4ti2 when
#               root), runs the test suite
#   make bench  runs every benchmark in quick mode

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo test bench system-packages clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

# Debian packages the tests use: 4ti2 (Markov bases) and chromium (the report is loaded in a
# headless browser). Installed when running as root; otherwise a clear message says what to
# install (the tests that need them skip).
DEBIAN_PACKAGES := 4ti2 chromium
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

demo: $(STAMP)
	$(BIN)/sdckit demo

test: $(STAMP) system-packages
	$(BIN)/python -m pytest -q -n 2 -p no:cacheprovider; rc=$$?; [ $$rc -eq 5 ] && exit 0 || exit $$rc

bench: $(STAMP)
	@for b in benchmarks/bench_*.py; do echo "# $$b"; $(BIN)/python $$b --quick || exit 1; done

clean:
	rm -rf $(VENV) sdckit-demo .pytest_cache
