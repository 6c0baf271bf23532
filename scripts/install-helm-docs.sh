#!/usr/bin/env bash
# Install helm-docs, which writes charts/sweep-cluster/README.md's values table from values.yaml's
# `# --` comments, from its Go module, and print the binary's path.
#
#   HELM_DOCS=$(scripts/install-helm-docs.sh)
#   $HELM_DOCS --chart-search-root charts      # regenerate after changing values.yaml
#
# Built and cached like scripts/install-helm.sh: once per version under
#   ${SWEEPS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/commit-sweeps/tools}/helm-docs-<version>/bin/helm-docs
# tests/test_chart_docs.py looks there too, and checks that the committed table is what this
# version generates (another version may format the table differently).
set -euo pipefail

HELM_DOCS_VERSION=v1.14.2
tools_dir=${SWEEPS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/commit-sweeps/tools}
bin_dir="$tools_dir/helm-docs-$HELM_DOCS_VERSION/bin"
helm_docs="$bin_dir/helm-docs"

if [ -x "$helm_docs" ] && "$helm_docs" --version 2>/dev/null | grep -q "${HELM_DOCS_VERSION#v}"; then
    echo "install-helm-docs: reusing $helm_docs" >&2
else
    if ! command -v go >/dev/null 2>&1; then
        echo "install-helm-docs: 'go' is not on PATH; install Go 1.22 or newer" >&2
        exit 1
    fi
    echo "install-helm-docs: building helm-docs $HELM_DOCS_VERSION with 'go install' into $bin_dir" >&2
    mkdir -p "$bin_dir"
    # helm-docs prints the version its release build stamps into main.version.
    GOBIN="$bin_dir" go install -ldflags "-X main.version=${HELM_DOCS_VERSION#v}" \
        "github.com/norwoodj/helm-docs/cmd/helm-docs@$HELM_DOCS_VERSION"
    "$helm_docs" --version | grep -q "${HELM_DOCS_VERSION#v}"
fi
echo "$helm_docs"
