#!/usr/bin/env bash
# A store lab on loopback: MinIO (S3), Azurite (Azure Blob) and fake-gcs-server (GCS), each behind a
# toxiproxy latency proxy, for `commit-sweeps probe` and `python -m studies.real_stores`; with --postgres also
# a PostgreSQL server (Debian's `postgresql` package) behind the same delay, a catalog database for
# `python -m studies.real_clients` (DuckLake, Iceberg's JdbcCatalog).
#
#   scripts/store-lab.sh up [--delay-ms 16] [--jitter-ms 0] [--postgres]
#                                                             build what is missing, start, create bucket "lab"
#   eval "$(scripts/store-lab.sh env)"                        export the endpoints and the credentials the SDKs read
#   commit-sweeps probe --store-uri "$STORE_LAB_S3_URI" --endpoint-url "$STORE_LAB_S3_ENDPOINT" --clients 1-4
#   scripts/store-lab.sh down                                 stop everything, remove the lab's data
#
# --delay-ms D delays every byte D ms in each direction (a request/answer round trip gains 2 x D), with
# +- --jitter-ms J of uniform jitter; `up` on a running lab only changes the delay. This kernel has no netem,
# so the delay is added in user space by toxiproxy's latency toxic. The default, 16 ms each way, puts one
# client's CAS near seed 000's S3 (about 68 ms), where a fit from 1-4 probed clients predicted 8-16 within
# 2% (docs/accuracy.md#your-probed-store). With no delay a loopback op takes a few milliseconds or less, a
# client's own wait for the CPU is then a large share of it, and `probe` refuses even one client.
#
# Binaries are built from pinned modules with `go install` (the Go module proxy is what the project's
# machines reach) and Azurite is installed with npm, all cached per version, like scripts/install-helm.sh:
#   ${SWEEPS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/commit-sweeps/tools}/<tool>-<version>/
# MinIO's first build takes about 5 minutes of CPU. Every server and proxy listens on 127.0.0.1 only.
# The lab's state (ports, pids, logs, data) is in ${STORE_LAB_DIR:-${TMPDIR:-/tmp}/commit-sweeps-store-lab}.
set -euo pipefail

MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c  # MinIO publishes no semver tags: a pinned pseudo-version
FAKE_GCS_VERSION=v1.56.1  # not the PyPI wrapper: it bundles v1.54, which ignores ifGenerationMatch on simple uploads
TOXIPROXY_VERSION=v2.5.0
AZURITE_VERSION=3.37.0
BUCKET=lab
DEFAULT_DELAY_MS=16  # each way; see the header
S3_USER=labadmin
S3_PASSWORD=labadmin-secret
# Azurite's documented development account and key (public; it accepts no other).
AZ_ACCOUNT=devstoreaccount1
AZ_KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='

tools_dir=${SWEEPS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/commit-sweeps/tools}
lab_dir=${STORE_LAB_DIR:-${TMPDIR:-/tmp}/commit-sweeps-store-lab}
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${PYTHON:-}" ]; then python=$PYTHON
elif [ -x "$root/.venv/bin/python" ]; then python=$root/.venv/bin/python
else python=python3; fi

say() { echo "store-lab: $*" >&2; }
die() { echo "store-lab: error: $*" >&2; exit 2; }

usage() {
    echo "usage: scripts/store-lab.sh up [--delay-ms MS (default $DEFAULT_DELAY_MS, each way)] [--jitter-ms MS (default 0)] [--postgres] | down | env" >&2
    exit 2
}

go_tool() {  # go_tool NAME MODULE VERSION -> path of the cached binary, built if missing
    local name=$1 module=$2 version=$3 bin_dir="$tools_dir/$1-$3/bin"
    local binary="$bin_dir/$(basename "${module%%@*}")"
    [ "$name" = toxiproxy ] && binary="$bin_dir/server"
    if [ ! -x "$binary" ]; then
        command -v go >/dev/null 2>&1 || die "'go' is not on PATH; install Go 1.26 or newer (fake-gcs-server $FAKE_GCS_VERSION's go.mod asks for 1.26; Debian's golang-go may be older)"
        say "building $name $version with 'go install' into $bin_dir (minutes the first time)"
        mkdir -p "$bin_dir"
        GOBIN="$bin_dir" nice go install "$module@$version" >&2
    fi
    echo "$binary"
}

azurite_tool() {
    local dir="$tools_dir/azurite-$AZURITE_VERSION"
    if [ ! -x "$dir/node_modules/.bin/azurite-blob" ]; then
        command -v npm >/dev/null 2>&1 || die "'npm' is not on PATH; install Node.js 20 or newer (apt-get install nodejs npm)"
        say "installing azurite $AZURITE_VERSION with npm into $dir"
        mkdir -p "$dir"
        npm install --silent --no-audit --no-fund --prefix "$dir" "azurite@$AZURITE_VERSION" >&2
    fi
    echo "$dir/node_modules/.bin/azurite-blob"
}

free_port() {
    "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_port() {  # wait_port PORT WHAT PID
    for _ in $(seq 1 300); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        kill -0 "$3" 2>/dev/null || die "$2 exited at start; see $lab_dir/$2.log"
        sleep 0.2
    done
    die "$2 did not listen on 127.0.0.1:$1 within 60 s; see $lab_dir/$2.log"
}

start() {  # start NAME COMMAND...: in the background, its pid recorded, its output logged
    local name=$1; shift
    "$@" >"$lab_dir/$name.log" 2>&1 &
    echo "$!" >"$lab_dir/$name.pid"
}

toxiproxy_api() {  # toxiproxy_api METHOD PATH [JSON]
    curl -sS --fail-with-body -X "$1" "http://127.0.0.1:$(cat "$lab_dir/toxiproxy.port")$2" \
        ${3:+-H 'Content-Type: application/json' -d "$3"} >/dev/null
}

proxied() {  # the lab's proxied servers
    echo s3 az gs
    [ -f "$lab_dir/pg.port" ] && echo pg
    return 0
}

set_delay() {  # the latency toxic, both directions, on every proxy
    local delay=$1 jitter=$2
    for name in $(proxied); do
        for stream in upstream downstream; do
            toxiproxy_api DELETE "/proxies/$name/toxics/delay_$stream" 2>/dev/null || true
            if [ "$delay" != 0 ] || [ "$jitter" != 0 ]; then
                toxiproxy_api POST "/proxies/$name/toxics" "{\"name\":\"delay_$stream\",\"type\":\"latency\",\"stream\":\"$stream\",\"attributes\":{\"latency\":$delay,\"jitter\":$jitter}}"
            fi
        done
    done
    echo "$delay $jitter" >"$lab_dir/delay"
}

running() { [ -f "$lab_dir/toxiproxy.pid" ] && kill -0 "$(cat "$lab_dir/toxiproxy.pid")" 2>/dev/null; }

up() {
    local delay=$DEFAULT_DELAY_MS jitter=0 postgres=0
    while [ $# -gt 0 ]; do
        case $1 in
            --delay-ms) delay=${2:-}; shift 2 || usage ;;
            --jitter-ms) jitter=${2:-}; shift 2 || usage ;;
            --postgres) postgres=1; shift ;;
            *) usage ;;
        esac
    done
    [[ $delay =~ ^[0-9]+$ ]] && [ "$delay" -le 10000 ] || die "delay_ms: '$delay' is not allowed; expected whole milliseconds in [0, 10000]"
    [[ $jitter =~ ^[0-9]+$ ]] && [ "$jitter" -le "$delay" ] || die "jitter_ms: '$jitter' is not allowed; expected whole milliseconds in [0, delay_ms]"
    command -v curl >/dev/null 2>&1 || die "'curl' is not on PATH (apt-get install curl)"
    # The bucket and container are made through the SDKs the probe uses (the package's own dependencies).
    "$python" -c 'import boto3, azure.storage.blob' 2>/dev/null \
        || die "python: '$python' cannot import boto3 and azure.storage.blob; expected the package's Python (pip install -e . in $root, or set PYTHON)"
    if running; then
        if [ "$postgres" = 1 ] && [ ! -f "$lab_dir/pg.port" ]; then
            die "postgres: the lab is up without PostgreSQL; 'scripts/store-lab.sh down', then up with --postgres"
        fi
        set_delay "$delay" "$jitter"
        say "already up; delay now ${delay} ms +- ${jitter} ms each way"
        return
    fi
    local minio fake_gcs toxiproxy azurite
    minio=$(go_tool minio github.com/minio/minio "$MINIO_VERSION")
    fake_gcs=$(go_tool fake-gcs-server github.com/fsouza/fake-gcs-server "$FAKE_GCS_VERSION")
    toxiproxy=$(go_tool toxiproxy github.com/Shopify/toxiproxy/v2/cmd/server "$TOXIPROXY_VERSION")
    azurite=$(azurite_tool)
    rm -rf "$lab_dir" && mkdir -p "$lab_dir/minio" "$lab_dir/azurite"
    local p
    for p in s3 az gs s3_proxy az_proxy gs_proxy toxiproxy minio_console; do free_port >"$lab_dir/$p.port"; done
    port() { cat "$lab_dir/$1.port"; }

    MINIO_ROOT_USER=$S3_USER MINIO_ROOT_PASSWORD=$S3_PASSWORD MINIO_BROWSER=off \
        start minio "$minio" server "$lab_dir/minio" --quiet --address "127.0.0.1:$(port s3)" \
        --console-address "127.0.0.1:$(port minio_console)"
    start azurite "$azurite" --blobHost 127.0.0.1 --blobPort "$(port az)" --location "$lab_dir/azurite" \
        --skipApiVersionCheck --silent
    start fake-gcs-server "$fake_gcs" -backend memory -scheme http -host 127.0.0.1 -port "$(port gs)" \
        -public-host "127.0.0.1:$(port gs_proxy)" -external-url "http://127.0.0.1:$(port gs_proxy)" -log-level warn
    start toxiproxy "$toxiproxy" -host 127.0.0.1 -port "$(port toxiproxy)"
    wait_port "$(port s3)" minio "$(cat "$lab_dir/minio.pid")"
    wait_port "$(port az)" azurite "$(cat "$lab_dir/azurite.pid")"
    wait_port "$(port gs)" fake-gcs-server "$(cat "$lab_dir/fake-gcs-server.pid")"
    wait_port "$(port toxiproxy)" toxiproxy "$(cat "$lab_dir/toxiproxy.pid")"
    if [ "$postgres" = 1 ]; then
        free_port >"$lab_dir/pg.port"; free_port >"$lab_dir/pg_proxy.port"
        # initdb and pg_ctl as studies/real_clients/postgres.py runs them (as the postgres user when root).
        (cd "$root" && "$python" -m studies.real_clients.postgres start "$lab_dir/pg" "$(port pg)") \
            || die "postgres: could not start PostgreSQL (apt-get install postgresql; see $lab_dir/pg/log.txt)"
    fi
    for name in $(proxied); do
        toxiproxy_api POST /proxies "{\"name\":\"$name\",\"listen\":\"127.0.0.1:$(port ${name}_proxy)\",\"upstream\":\"127.0.0.1:$(port $name)\"}"
    done
    set_delay "$delay" "$jitter"
    write_env
    # The bucket and container, made once through each store's own API.
    curl -sS --fail-with-body -X POST -H 'Content-Type: application/json' -d "{\"name\":\"$BUCKET\"}" \
        "http://127.0.0.1:$(port gs)/storage/v1/b?project=lab" >/dev/null
    # shellcheck disable=SC1091
    (. "$lab_dir/env" && "$python" - "$BUCKET" <<'EOF'
import os, sys, time
import boto3
from azure.storage.blob import BlobServiceClient

bucket = sys.argv[1]
s3 = boto3.client("s3", endpoint_url=os.environ["STORE_LAB_S3_DIRECT_ENDPOINT"])
for attempt in range(50):  # MinIO answers 503 for a moment after it starts listening
    try:
        s3.create_bucket(Bucket=bucket)
        break
    except Exception:
        if attempt == 49:
            raise
        time.sleep(0.2)
BlobServiceClient.from_connection_string(os.environ["AZURE_STORAGE_CONNECTION_STRING"]).create_container(bucket)
EOF
    ) || die "could not create the bucket '$BUCKET' (see $lab_dir/*.log)"
    local servers="MinIO, Azurite, fake-gcs-server"
    if [ "$postgres" = 1 ]; then servers="$servers and PostgreSQL"; else servers="MinIO, Azurite and fake-gcs-server"; fi
    say "up: $servers on 127.0.0.1 behind toxiproxy, ${delay} ms +- ${jitter} ms each way; eval \"\$(scripts/store-lab.sh env)\""
}

write_env() {
    port() { cat "$lab_dir/$1.port"; }
    local s3="http://127.0.0.1:$(port s3_proxy)" az="http://127.0.0.1:$(port az_proxy)/$AZ_ACCOUNT" gs="http://127.0.0.1:$(port gs_proxy)"
    cat >"$lab_dir/env" <<EOF
export AWS_ACCESS_KEY_ID=$S3_USER AWS_SECRET_ACCESS_KEY=$S3_PASSWORD AWS_DEFAULT_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
export STORE_LAB_S3_URI=s3://$BUCKET/probes STORE_LAB_S3_ENDPOINT=$s3 STORE_LAB_S3_DIRECT_ENDPOINT=http://127.0.0.1:$(port s3)
export AZURE_STORAGE_CONNECTION_STRING='DefaultEndpointsProtocol=http;AccountName=$AZ_ACCOUNT;AccountKey=$AZ_KEY;BlobEndpoint=$az;'
export STORE_LAB_AZ_URI=az://$BUCKET/probes STORE_LAB_AZ_ENDPOINT=$az STORE_LAB_AZ_DIRECT_ENDPOINT=http://127.0.0.1:$(port az)/$AZ_ACCOUNT
export STORAGE_EMULATOR_HOST=$gs
export STORE_LAB_GS_URI=gs://$BUCKET/probes STORE_LAB_GS_ENDPOINT=$gs STORE_LAB_GS_DIRECT_ENDPOINT=http://127.0.0.1:$(port gs)
export STORE_LAB_TOXIPROXY=http://127.0.0.1:$(port toxiproxy)
EOF
    if [ -f "$lab_dir/pg.port" ]; then
        echo "export STORE_LAB_PG_PORT=$(port pg_proxy) STORE_LAB_PG_DIRECT_PORT=$(port pg)" >>"$lab_dir/env"
    fi
}

down() {
    local pid_file pid
    if [ -d "$lab_dir/pg/data" ]; then
        (cd "$root" && "$python" -m studies.real_clients.postgres stop "$lab_dir/pg") || true
    fi
    for pid_file in "$lab_dir"/*.pid; do
        [ -e "$pid_file" ] || continue
        pid=$(cat "$pid_file")
        if kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null || true
            for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -9 "$pid" 2>/dev/null || true
        fi
    done
    rm -rf "$lab_dir"
    say "down"
}

case ${1:-} in
    up) shift; up "$@" ;;
    down) [ $# -eq 1 ] || usage; down ;;
    env)
        [ $# -eq 1 ] || usage
        running && [ -f "$lab_dir/env" ] || die "the lab is not up (scripts/store-lab.sh up)"
        cat "$lab_dir/env"
        read -r delay jitter <"$lab_dir/delay"
        echo "export STORE_LAB_DELAY_MS=$delay STORE_LAB_JITTER_MS=$jitter"
        ;;
    *) usage ;;
esac
