#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine, then run it.
# This is the README's test command; .ci/run runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'

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

# helm for the chart tests, built from its Go module and cached between runs.
HELM=$(scripts/install-helm.sh)
export HELM
# helm-docs for the check that the chart's values table is up to date, built and cached the same way.
HELM_DOCS=$(scripts/install-helm-docs.sh)
export HELM_DOCS

# One pytest worker per core, each taking whole files (module fixtures run once; a file's tests stay in order):
# on two cores the suite takes about half as long. Flags given after these override them (-n 0: one process).
exec .venv/bin/python -m pytest -n auto --dist loadfile "$@"
