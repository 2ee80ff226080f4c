#!/usr/bin/env bash
# Re-resolve every dependency to its newest version, install it, run the suite twice in two
# random orders, and keep the new uv.lock only if both runs pass. Called by `make upgrade`.
set -uo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-.uv/bin/uv}
PY=$(${PYTHON:-python3} -c 'import sys; print(sys.executable)')
cp uv.lock .uv/uv.lock.before
restore() {
    echo "upgrade: $1; uv.lock kept as it was" >&2
    mv -f .uv/uv.lock.before uv.lock
    "$UV" sync --frozen --quiet --extra test --python "$PY"
    rm -f .venv/.synced-*
    exit 1
}
"$UV" lock --upgrade || restore "re-resolving failed"
"$UV" sync --frozen --quiet --extra test --python "$PY" || restore "installing the new versions failed"
rm -f .venv/.synced-*
for seed in 1 2; do
    echo "upgrade: test suite, random order $seed" >&2
    .venv/bin/python -m pytest -q -n 2 -p no:cacheprovider -p randomly --randomly-seed="$seed" \
        || restore "the suite failed in random order $seed"
done
rm -f .uv/uv.lock.before
git --no-pager diff --stat -- uv.lock || true
echo "upgrade: uv.lock rewritten with the newest versions; the suite passed twice" >&2
