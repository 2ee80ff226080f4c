#!/usr/bin/env bash
# Apply ruff's safe auto-fixes (import sorting, unused imports, pyupgrade rewrites) to the given
# paths, or to the whole tree when none are given, then show what is left for a person to fix.
# Only fixes ruff marks safe are applied (no --unsafe-fixes) and nothing is reformatted
# (the project does not use `ruff format`). Run from anywhere: paths are relative to the root.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
ruff="${RUFF:-.venv/bin/ruff}"
if [ "$#" -eq 0 ]; then set -- .; fi
"$ruff" check --fix --quiet "$@" || true
# what remains needs a person: print it, and fail when anything is left
"$ruff" check "$@"
