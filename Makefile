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

# Debian packages the tests use (4ti2 for Markov bases). Installed when running as root;
# otherwise a clear message says what to install (the tests that need them skip).
system-packages:
	@if command -v 4ti2-markov >/dev/null 2>&1 || command -v markov >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian package 4ti2"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq 4ti2 >/dev/null) \
		|| echo "note: could not install 4ti2; the Markov-basis tests will skip"; \
	else echo "note: 4ti2 is not installed and this is not root: run 'sudo apt-get install 4ti2' (Markov-basis tests skip)"; fi

demo: $(STAMP)
	$(BIN)/sdckit demo

test: $(STAMP) system-packages
	$(BIN)/python -m pytest -q -n 2 -p no:cacheprovider; rc=$$?; [ $$rc -eq 5 ] && exit 0 || exit $$rc

bench: $(STAMP)
	@for b in benchmarks/bench_*.py; do echo "# $$b"; $(BIN)/python $$b --quick || exit 1; done

clean:
	rm -rf $(VENV) sdckit-demo .pytest_cache
