#!/usr/bin/env bash
# Build the Kubernetes binaries scripts/local-cluster.sh runs, from Go modules, and print their folder.
#
#   KUBE_BIN=$(scripts/install-kube.sh)     # kube-apiserver kube-controller-manager kube-scheduler
#                                          # kubelet kube-proxy kubectl, all at $KUBE_VERSION
#
# Why Go: like scripts/install-helm.sh, the machines this project builds on reach the Go module
# proxy, not GitHub release downloads. k8s.io/kubernetes cannot be `go install`ed directly: its
# go.mod replaces every k8s.io/* library with a folder under ./staging, which a module download
# does not carry. So a throwaway wrapper module requires k8s.io/kubernetes at the release and
# replaces each staging module by the matching published k8s.io/* version (v1.X.Y -> v0.X.Y).
# The version is stamped with -ldflags, as the release build does; unstamped binaries report
# v0.0.0-master, which the chart's `kubeVersion: >=1.25.0-0` check refuses.
#
# Cached per version under ${SWEEPS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/commit-sweeps/tools}/
# kubernetes-<version>/bin and reused while kubectl reports that version. Two shared cores take
# about a quarter of an hour the first time (go's build cache makes a rebuild quick).
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-v1.37.2}
COMMANDS="kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl"
tools_dir=${SWEEPS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/commit-sweeps/tools}
bin_dir="$tools_dir/kubernetes-$KUBE_VERSION/bin"

have_all() {
    local c
    for c in $COMMANDS; do [ -x "$bin_dir/$c" ] || return 1; done
    [ "$("$bin_dir/kubectl" version --client -o json 2>/dev/null \
        | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p' | head -1)" = "$KUBE_VERSION" ]
}

if have_all; then
    echo "install-kube: reusing $bin_dir" >&2
    echo "$bin_dir"
    exit 0
fi
if ! command -v go >/dev/null 2>&1; then
    echo "install-kube: 'go' is not on PATH; install Go 1.26 or newer (Kubernetes $KUBE_VERSION's go.mod asks for it)" >&2
    exit 1
fi

echo "install-kube: building Kubernetes $KUBE_VERSION ($COMMANDS) into $bin_dir" >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
go mod init local/kube-build >/dev/null 2>&1
mod_file=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": *"\([^"]*\)".*/\1/p')
staging_version="v0.${KUBE_VERSION#v1.}"
# Every "k8s.io/x => ./staging/src/k8s.io/x" line becomes "k8s.io/x => k8s.io/x v0.X.Y".
replaces=()
while read -r module; do
    replaces+=("-replace=$module=$module@$staging_version")
done < <(sed -n 's#^[[:space:]]*\(k8s\.io/[^ ]*\) => \./staging/.*#\1#p' "$mod_file")
[ "${#replaces[@]}" -gt 0 ] || { echo "install-kube: no staging replaces found in $mod_file" >&2; exit 1; }
go mod edit "${replaces[@]}" -require="k8s.io/kubernetes@$KUBE_VERSION"
# Pull the module graph the commands need (go.sum entries included).
packages=()
for c in $COMMANDS; do packages+=("k8s.io/kubernetes/cmd/$c"); done
go get "${packages[@]/%/@$KUBE_VERSION}" >&2

commit=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"Hash": *"\([^"]*\)".*/\1/p' || true)
ldflags="-s -w"
for package in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags="$ldflags -X $package.gitVersion=$KUBE_VERSION -X $package.gitTreeState=clean"
    ldflags="$ldflags -X $package.gitMajor=1 -X $package.gitMinor=$(echo "$KUBE_VERSION" | cut -d. -f2)"
done
mkdir -p "$bin_dir"
# CGO off, as the release builds the control plane; the kubelet works without cgo too.
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin_dir/" "${packages[@]}"
have_all || { echo "install-kube: the built kubectl does not report $KUBE_VERSION" >&2; exit 1; }
echo "$bin_dir"
