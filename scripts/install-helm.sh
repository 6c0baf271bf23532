#!/usr/bin/env bash
# Install the helm CLI the chart tests use, from its Go module, and print the binary's path.
#
#   HELM=$(scripts/install-helm.sh)      # then: HELM=$HELM pytest tests/test_chart*.py
#
# Why Go: CI machines reach the Go module proxy but not GitHub releases. Building takes a few
# minutes the first time, so the binary is cached per version under
#   ${SWEEPS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/commit-sweeps/tools}/helm-<version>/bin/helm
# and reused while it runs. Cache that directory (and Go's module cache) between CI runs.
# The tests look in the same place, so after one install they find helm without $HELM.
set -euo pipefail

HELM_VERSION=v3.22.0
tools_dir=${SWEEPS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/commit-sweeps/tools}
bin_dir="$tools_dir/helm-$HELM_VERSION/bin"
helm="$bin_dir/helm"

if [ -x "$helm" ] && "$helm" version >/dev/null 2>&1; then
    echo "install-helm: reusing $helm" >&2
else
    if ! command -v go >/dev/null 2>&1; then
        echo "install-helm: 'go' is not on PATH; install Go 1.26 or newer (helm $HELM_VERSION's go.mod asks for 1.26)" >&2
        exit 1
    fi
    echo "install-helm: building helm $HELM_VERSION with 'go install' into $bin_dir (a few minutes the first time)" >&2
    mkdir -p "$bin_dir"
    GOBIN="$bin_dir" go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
    "$helm" version >/dev/null
fi
echo "$helm"
