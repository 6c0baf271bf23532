#!/usr/bin/env bash
# Build the chart's image (the repository's Dockerfile) with podman, on a base made from Debian's
# own packages, for machines that reach a Debian mirror and PyPI but no container registry.
#
#   scripts/build-image.sh                  # -> localhost/sweeps:<project version>
#   IMAGE=sweeps:dev scripts/build-image.sh
#   scripts/build-image.sh --save out.tar   # also write an OCI archive (what local-cluster.sh loads)
#
# The Dockerfile is used unchanged; only its PYTHON_IMAGE build argument changes, from
# python:3.11.x-slim-bookworm to a base debootstrap makes from Debian bookworm (whose python3 is
# 3.11, the version the Dockerfile's pins are tested with). On a machine with Docker, plain
# `docker build -t sweeps:0.1.0 .` does the same.
#
# Needs root, and: apt-get install podman runc debootstrap. podman runs with --runtime runc
# because crun refuses kernels with hybrid cgroups; explicit ulimits, because podman's defaults
# (nofile 1048576) are refused where the hard limit is lower.
set -euo pipefail

cd "$(dirname "$0")/.."
version=$(sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml | head -1)
IMAGE=${IMAGE:-sweeps:$version}
SUITE=${DEBIAN_SUITE:-bookworm}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
BASE_IMAGE=${BASE_IMAGE:-localhost/sweeps-base:$SUITE}
save=""
if [ "${1:-}" = "--save" ]; then
    save=${2:?"--save needs a path"}
fi

for tool in podman runc debootstrap; do
    command -v "$tool" >/dev/null || { echo "build-image: '$tool' is missing; apt-get install podman runc debootstrap" >&2; exit 1; }
done
# podman's own defaults (nofile 1048576, nproc 4194304) make runc fail with "error setting rlimit
# type 7: operation not permitted" where this shell's hard limits are lower. On the machine this
# was built on even nproc values above 32768, below the shell's hard limit, were refused (type 6),
# so both are capped there.
nofile=$(ulimit -Hn)
nproc_limit=$(ulimit -Hu)
[ "$nofile" = unlimited ] || [ "$nofile" -gt 32768 ] && nofile=32768
[ "$nproc_limit" = unlimited ] || [ "$nproc_limit" -gt 32768 ] && nproc_limit=32768
PODMAN=(podman --runtime runc)
LIMITS=(--ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc_limit:$nproc_limit")

start=$(date +%s)
if "${PODMAN[@]}" image exists "$BASE_IMAGE"; then
    echo "build-image: reusing base $BASE_IMAGE" >&2
else
    echo "build-image: making base $BASE_IMAGE with debootstrap ($SUITE from $MIRROR)" >&2
    root=$(mktemp -d)
    trap 'rm -rf "$root"' EXIT
    # minbase: apt and dpkg only; python3-venv for the Dockerfile's `python -m venv`,
    # python-is-python3 for its `python`, ca-certificates for pip.
    debootstrap --variant=minbase --include=python3,python3-venv,python-is-python3,ca-certificates \
        "$SUITE" "$root" "$MIRROR" >&2
    # Certificate authorities this machine trusts beyond Debian's (a TLS-inspecting proxy between
    # it and PyPI, for one) go into the base too, or the Dockerfile's pip cannot verify PyPI.
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
        cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
        chroot "$root" update-ca-certificates >&2
    fi
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb
    tar -C "$root" -c . | "${PODMAN[@]}" import \
        --change 'CMD ["bash"]' --change 'ENV LANG=C.UTF-8' - "$BASE_IMAGE" >&2
    rm -rf "$root"
    trap - EXIT
fi
base_s=$(( $(date +%s) - start ))

# --network host: the build's apt-get and pip reach the mirror and PyPI as this machine does.
"${PODMAN[@]}" build "${LIMITS[@]}" --network host --build-arg "PYTHON_IMAGE=$BASE_IMAGE" \
    -t "$IMAGE" -f Dockerfile . >&2
build_s=$(( $(date +%s) - start - base_s ))

if [ -n "$save" ]; then
    rm -f "$save"
    "${PODMAN[@]}" save --format oci-archive -o "$save" "$IMAGE" >&2
fi
echo "build-image: ok image=$IMAGE base_s=$base_s build_s=$build_s"
