#!/usr/bin/env bash
# Build the binaries scripts/local-cluster.sh runs, from Go modules, and print their folder.
#
#   KUBE_BIN=$(scripts/install-kube.sh)
#
# The folder holds kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy and
# kubectl at $KUBE_VERSION, plus two small programs a cluster without a registry needs:
# coredns (the cluster DNS, only the plugins it uses; scripts/local-cluster/coredns.go) and pause
# (the pod sandbox's program; scripts/local-cluster/pause.go).
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
# kubernetes-<version>/bin; each binary is built only if missing (kubectl must report the version).
# On two busy shared cores the first build took about 25 minutes; cache that folder (and Go's
# build and module caches) between CI runs.
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-v1.37.2}
COREDNS_VERSION=v1.14.7
KUBE_COMMANDS="kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl"
here=$(cd "$(dirname "$0")" && pwd)
tools_dir=${SWEEPS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/commit-sweeps/tools}
bin_dir="$tools_dir/kubernetes-$KUBE_VERSION/bin"

kube_ok() {
    local c
    for c in $KUBE_COMMANDS; do [ -x "$bin_dir/$c" ] || return 1; done
    "$bin_dir/kubectl" version --client -o json 2>/dev/null | grep -q "\"gitVersion\": *\"$KUBE_VERSION\""
}

if ! command -v go >/dev/null 2>&1 && ! { kube_ok && [ -x "$bin_dir/coredns" ] && [ -x "$bin_dir/pause" ]; }; then
    echo "install-kube: 'go' is not on PATH; install Go 1.26 or newer (Kubernetes $KUBE_VERSION's go.mod asks for it)" >&2
    exit 1
fi
mkdir -p "$bin_dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if kube_ok; then
    echo "install-kube: reusing Kubernetes $KUBE_VERSION in $bin_dir" >&2
else
    echo "install-kube: building Kubernetes $KUBE_VERSION ($KUBE_COMMANDS) into $bin_dir" >&2
    mkdir "$work/kube" && cd "$work/kube"
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
    packages=()
    for c in $KUBE_COMMANDS; do packages+=("k8s.io/kubernetes/cmd/$c"); done
    go get "${packages[@]/%/@$KUBE_VERSION}" >&2
    ldflags="-s -w"
    for package in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        ldflags="$ldflags -X $package.gitVersion=$KUBE_VERSION -X $package.gitTreeState=clean"
        ldflags="$ldflags -X $package.gitMajor=1 -X $package.gitMinor=$(echo "$KUBE_VERSION" | cut -d. -f2)"
    done
    # CGO off, as the release builds the control plane; the kubelet works without cgo too.
    CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin_dir/" "${packages[@]}"
    kube_ok || { echo "install-kube: the built kubectl does not report $KUBE_VERSION" >&2; exit 1; }
fi

if [ -x "$bin_dir/coredns" ] && "$bin_dir/coredns" -version 2>/dev/null | grep -q "${COREDNS_VERSION#v}"; then
    echo "install-kube: reusing CoreDNS $COREDNS_VERSION" >&2
else
    echo "install-kube: building CoreDNS $COREDNS_VERSION (kubernetes, forward, cache plugins)" >&2
    mkdir -p "$work/coredns" && cd "$work/coredns"
    cp "$here/local-cluster/coredns.go" main.go
    go mod init local/coredns-build >/dev/null 2>&1
    go get "github.com/coredns/coredns@$COREDNS_VERSION" >&2
    go mod tidy >&2
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin_dir/coredns" .
fi

if [ ! -x "$bin_dir/pause" ]; then
    mkdir -p "$work/pause" && cd "$work/pause"
    cp "$here/local-cluster/pause.go" main.go
    go mod init local/pause >/dev/null 2>&1
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin_dir/pause" .
fi
echo "$bin_dir"
