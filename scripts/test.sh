#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine, then run it.
# This is the README's test command; .ci/run runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

# helm (for the chart tests) and helm-docs (for the check that the chart's values table is up to date) are
# built from their Go modules and cached between runs. The builds need nothing from Python, so they run in the
# background while the venv is set up; each prints its binary's path, read back once it has finished.
tool_paths=$(mktemp -d)
trap 'rm -rf "$tool_paths"' EXIT
scripts/install-helm.sh >"$tool_paths/helm" &
helm_build=$!
scripts/install-helm-docs.sh >"$tool_paths/helm-docs" &
helm_docs_build=$!

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'

# The simulator's kernel variants, compiled (or loaded from Numba's cache) side by side by the install's own
# step, while the Go builds may still run: otherwise every pytest worker would compile the variant it meets first.
.venv/bin/commit-sweeps prepare &
kernel_build=$!

# The dashboard's browser tests drive Debian's Chromium (they fail under CI=true without it).
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && apt-get install -y -qq chromium >/dev/null
    elif command -v sudo >/dev/null 2>&1; then
        sudo apt-get update -qq && sudo apt-get install -y -qq chromium >/dev/null
    else
        echo "warning: chromium is not installed and cannot be installed here; browser tests will not run" >&2
    fi
fi

wait "$kernel_build" || { echo "test.sh: compiling the simulator's kernel failed" >&2; exit 1; }
wait "$helm_build" || { echo "test.sh: scripts/install-helm.sh failed" >&2; exit 1; }
wait "$helm_docs_build" || { echo "test.sh: scripts/install-helm-docs.sh failed" >&2; exit 1; }
HELM=$(cat "$tool_paths/helm")
HELM_DOCS=$(cat "$tool_paths/helm-docs")
export HELM HELM_DOCS
rm -rf "$tool_paths"  # exec below replaces this shell: its EXIT trap would not run

# One pytest worker per core, each taking whole files (module fixtures run once; a file's tests stay in order),
# in the order tests/conftest.py collects them: the longest files first, so that none starts last. Flags given
# after these override them (-n 0: one process).
exec .venv/bin/python -m pytest -n auto --dist loadfile --no-loadscope-reorder "$@"
