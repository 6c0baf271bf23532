#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine, then run it.
# This is the README's test command; .ci/run runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

# helm (for the chart tests) and helm-docs (for the check that the chart's values table is up to date) are
# built from their Go modules and cached between runs. The builds need nothing from Python, so they run in the
# background while the venv is set up and the suite runs: a chart test that needs one waits for its build
# (tests/test_chart_support.py: built_tool), the rest go on. Each build leaves its binary's path in <tool>.out,
# its log in <tool>.log and its exit status in <tool>.rc, in $SWEEPS_TOOL_BUILDS.
SWEEPS_TOOL_BUILDS=$(mktemp -d -t commit-sweeps-tools.XXXXXX)
export SWEEPS_TOOL_BUILDS
for tool in helm helm-docs; do
    ( set +e; scripts/install-$tool.sh >"$SWEEPS_TOOL_BUILDS/$tool.out" 2>"$SWEEPS_TOOL_BUILDS/$tool.log"
      echo $? >"$SWEEPS_TOOL_BUILDS/$tool.rc.part"; mv "$SWEEPS_TOOL_BUILDS/$tool.rc.part" "$SWEEPS_TOOL_BUILDS/$tool.rc"
      cat "$SWEEPS_TOOL_BUILDS/$tool.log" >&2 ) &
done

PYTHON=${PYTHON:-python3}
UV_VERSION=0.13.8
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
# uv (from PyPI) installs the suite's dependencies, Ray, PyArrow and SciPy among them, downloading and unpacking
# them side by side: on a fresh machine most of the set-up time pip took. Compiled to bytecode at install, as pip
# does: where PYTHONDONTWRITEBYTECODE is set no process could cache it, and every one of the suite's hundreds of
# subprocesses would compile NumPy, Numba and PyArrow from source again (2.7 s to import simcore, against 0.8 s).
.venv/bin/python -m pip install --quiet "uv==$UV_VERSION"
.venv/bin/python -m uv pip install --quiet --compile-bytecode --python .venv/bin/python -e '.[test]'
# The checkout's own modules likewise (an editable install leaves them where they are; outside a git checkout,
# none): 0.2 s off each command.
{ git ls-files -z -- '*.py' 2>/dev/null || true; } | xargs -0 -r .venv/bin/python -m compileall -q -j 0 >/dev/null

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

# One pytest worker per core, each taking whole files (module fixtures run once; a file's tests stay in order),
# in the order tests/conftest.py collects them: the longest files first, so that none starts last. Flags given
# after these override them (-n 0: one process).
exec .venv/bin/python -m pytest -n auto --dist loadfile --no-loadscope-reorder "$@"
