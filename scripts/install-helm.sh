#!/usr/bin/env bash
# Install the helm CLI the chart tests use, from its Go module, and print the binary's path.
#
#   HELM=$(scripts/install-helm.sh)      # then: HELM=$HELM pytest tests/test_chart*.py
#
# Why Go: the machines this project builds on reach the Go module proxy, not GitHub release
# downloads. Building takes a few minutes the first time, so the binary is cached per version under
#   ${SWEEPS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/commit-sweeps/tools}/helm-<version>/bin/helm
# and reused while it reports that version. Cache that directory (and Go's module cache) between CI runs.
# The tests look in the same place, so after one install they find helm without $HELM.
set -euo pipefail

HELM_VERSION=v3.22.0
# The Kubernetes minor version of helm v3.22.0's client-go (k8s.io/client-go v0.37). helm's own
# release build stamps it, with the version, through -ldflags; a plain `go install` leaves
# Kubernetes 1.20 as what `helm template` and `helm lint` assume, which the chart
# (kubeVersion >=1.25) refuses.
KUBE_MINOR=37
tools_dir=${SWEEPS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/commit-sweeps/tools}
bin_dir="$tools_dir/helm-$HELM_VERSION/bin"
helm="$bin_dir/helm"

if [ -x "$helm" ] && [ "$("$helm" version --template '{{.Version}}' 2>/dev/null)" = "$HELM_VERSION" ]; then
    echo "install-helm: reusing $helm" >&2
else
    if ! command -v go >/dev/null 2>&1; then
        echo "install-helm: 'go' is not on PATH; install Go 1.26 or newer (helm $HELM_VERSION's go.mod asks for 1.26)" >&2
        exit 1
    fi
    echo "install-helm: building helm $HELM_VERSION with 'go install' into $bin_dir (a few minutes the first time)" >&2
    mkdir -p "$bin_dir"
    ldflags="-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
    for package in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
        ldflags="$ldflags -X $package.k8sVersionMajor=1 -X $package.k8sVersionMinor=$KUBE_MINOR"
    done
    GOBIN="$bin_dir" go install -ldflags "$ldflags" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
    "$helm" version --template '{{.Version}}' | grep -qx "$HELM_VERSION"
fi
echo "$helm"
