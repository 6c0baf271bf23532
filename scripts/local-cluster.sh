#!/usr/bin/env bash
# A real one-node Kubernetes cluster on this machine, for machines without Docker (so without kind)
# and for scripts/e2e-cluster.sh. A user on a laptop uses kind instead (docs/guide/kubernetes.md).
#
#   scripts/local-cluster.sh up          # build or reuse the binaries, start everything, load the image
#   eval "$(scripts/local-cluster.sh env)"   # KUBECONFIG and PATH (kubectl) for this shell
#   scripts/local-cluster.sh load IMAGE  # copy another podman image into the cluster
#   scripts/local-cluster.sh status
#   scripts/local-cluster.sh down        # stop everything this script started and remove its state
#
# What runs, all as root, all from binaries this machine builds or Debian packages:
#   etcd (Debian etcd-server), kube-apiserver, kube-controller-manager, kube-scheduler, kubelet,
#   kube-proxy (scripts/install-kube.sh, pinned Kubernetes version, cached like helm), containerd
#   with runc (Debian), the CNI bridge and host-local plugins (Debian containernetworking-plugins),
#   and CoreDNS (built by install-kube.sh) as the cluster DNS.
# Every server listens on 127.0.0.1, except the two that pods must reach or that must sit on the
# node's address: the kubelet (10250) and CoreDNS (53) listen on the pod bridge's gateway address
# ($NODE_IP), which exists only on this machine.
# The pause image and the project image are loaded from podman (no registry is reachable); the
# results PersistentVolume is a hostPath folder under the state directory.
#
# Needs root and: apt-get install etcd-server containerd runc containernetworking-plugins podman
# iptables conntrack; Go for the first build. State: $SWEEPS_CLUSTER_DIR (default
# /var/tmp/commit-sweeps-cluster); logs in its logs/ folder.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
STATE=${SWEEPS_CLUSTER_DIR:-/var/tmp/commit-sweeps-cluster}
NODE_NAME=sweeps-node
BRIDGE=sweeps0
POD_CIDR=10.244.0.0/24
NODE_IP=10.244.0.1            # the bridge's gateway: the node address, the kubelet and the DNS
SERVICE_CIDR=10.96.0.0/16
API_SERVICE_IP=10.96.0.1
CNI_BIN=${CNI_BIN:-/usr/lib/cni}
RUNC=${RUNC:-$(command -v runc || echo /usr/sbin/runc)}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/pyproject.toml" | head -1)
IMAGE=${IMAGE:-sweeps:$version}
PAUSE_IMAGE=localhost/sweeps-pause:1
SOCK="$STATE/containerd/containerd.sock"

log() { echo "local-cluster: $*" >&2; }
die() { log "$*"; exit 1; }

# Builds the binaries on first use (up); down, status and env read the folder up recorded.
kube_bin() { "$here/install-kube.sh"; }
recorded_kube_bin() { cat "$STATE/kube-bin" 2>/dev/null || true; }
kubectl_() { "$KUBE_BIN/kubectl" --kubeconfig "$STATE/admin.kubeconfig" "$@"; }
ctr_() { ctr --address "$SOCK" --namespace k8s.io "$@"; }

pid_alive() { [ -f "$STATE/pids/$1.pid" ] && kill -0 "$(cat "$STATE/pids/$1.pid")" 2>/dev/null; }

# Start one daemon in its own session, its output in logs/NAME.log, its pid in pids/NAME.pid.
start_daemon() {
    local name=$1; shift
    if pid_alive "$name"; then log "$name already running"; return; fi
    setsid "$@" >"$STATE/logs/$name.log" 2>&1 < /dev/null &
    echo $! > "$STATE/pids/$name.pid"
}

stop_daemon() {
    local name=$1 pid i
    [ -f "$STATE/pids/$name.pid" ] || return 0
    pid=$(cat "$STATE/pids/$name.pid")
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        for i in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
        kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$STATE/pids/$name.pid"
}

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
    local limit=$1 what=$2; shift 2
    local start=$SECONDS
    until "$@" >/dev/null 2>&1; do
        if [ $((SECONDS - start)) -ge "$limit" ]; then
            die "$what did not come up within ${limit}s; see $STATE/logs/"
        fi
        sleep 1
    done
}

# ---------------------------------------------------------------------------------------------
# Certificates: one CA; a serving certificate for the API server; client certificates per component.

cert() {  # cert NAME SUBJECT [subjectAltName] [extendedKeyUsage]
    local name=$1 subject=$2 san=${3:-} usage=${4:-clientAuth}
    local dir="$STATE/pki"
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "$subject" \
        -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>/dev/null
    {
        echo "basicConstraints=CA:FALSE"
        echo "keyUsage=critical,digitalSignature,keyEncipherment"
        echo "extendedKeyUsage=$usage"
        [ -n "$san" ] && echo "subjectAltName=$san"
    } > "$dir/$name.ext"
    openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
        -days 30 -extfile "$dir/$name.ext" -out "$dir/$name.crt" 2>/dev/null
}

kubeconfig() {  # kubeconfig NAME CERT_NAME
    cat > "$STATE/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: local
    cluster:
      server: https://127.0.0.1:6443
      certificate-authority: $STATE/pki/ca.crt
users:
  - name: $2
    user:
      client-certificate: $STATE/pki/$2.crt
      client-key: $STATE/pki/$2.key
contexts:
  - name: local
    context: {cluster: local, user: $2}
current-context: local
EOF
}

make_pki() {
    local dir="$STATE/pki"
    [ -f "$dir/ca.crt" ] && return
    mkdir -p "$dir"
    openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
        -subj "/CN=commit-sweeps-local-ca" -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
    cert apiserver "/CN=kube-apiserver" \
        "IP:127.0.0.1,IP:$NODE_IP,IP:$API_SERVICE_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" \
        serverAuth
    cert admin "/O=system:masters/CN=local-admin"
    cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
    cert controller-manager "/CN=system:kube-controller-manager"
    cert scheduler "/CN=system:kube-scheduler"
    cert kubelet "/O=system:nodes/CN=system:node:$NODE_NAME"
    cert kube-proxy "/CN=system:kube-proxy"
    # CoreDNS reads Services and EndpointSlices cluster-wide; admin keeps the local setup short.
    openssl genrsa -out "$dir/service-account.key" 2048 2>/dev/null
    openssl rsa -in "$dir/service-account.key" -pubout -out "$dir/service-account.pub" 2>/dev/null
    kubeconfig admin admin
    kubeconfig controller-manager controller-manager
    kubeconfig scheduler scheduler
    kubeconfig kubelet kubelet
    kubeconfig kube-proxy kube-proxy
}

# ---------------------------------------------------------------------------------------------
# Configuration files.

write_configs() {
    mkdir -p "$STATE/cni/net.d" "$STATE/cni/ipam" "$STATE/containerd" "$STATE/kubelet" "$STATE/pod-logs"
    # containerd: its own root, state and socket under $STATE, so it never meets a system containerd.
    cat > "$STATE/containerd/config.toml" <<EOF
version = 2
root = "$STATE/containerd/root"
state = "$STATE/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
                    "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  disable_apparmor = true
  # Root on some VMs lacks CAP_SYS_RESOURCE, so no process may lower its oom_score_adj below 0.
  # The kubelet asks -998 for sandboxes and -997 for Guaranteed pods; runc's setup process then
  # dies writing /proc/self/oom_score_adj, and runc reports only "can't get final child's PID
  # from pipe: EOF". This clamps every request to containerd's own score (0).
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$RUNC"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN"
    conf_dir = "$STATE/cni/net.d"
EOF
    cat > "$STATE/cni/net.d/10-sweeps.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "sweeps",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$NODE_IP"}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": "$STATE/cni/ipam"
      }
    }
  ]
}
EOF
    cat > "$STATE/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $STATE/pki/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$SOCK
cgroupDriver: cgroupfs
# This machine's kernel mounts cgroup v1 hierarchies (with an empty v2 beside them).
failCgroupV1: false
clusterDomain: cluster.local
clusterDNS: [$NODE_IP]
resolvConf: /etc/resolv.conf
podLogsDir: $STATE/pod-logs
failSwapOn: false
serializeImagePulls: false
# A shared build machine: evict only when really short, never because another job fills the disk.
evictionHard: {memory.available: "200Mi", nodefs.available: "2%", imagefs.available: "2%", nodefs.inodesFree: "2%"}
imageGCHighThresholdPercent: 100
EOF
    cat > "$STATE/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $STATE/kube-proxy.kubeconfig}
hostnameOverride: $NODE_NAME
mode: iptables
clusterCIDR: $POD_CIDR
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: ["$NODE_IP/32"]
# Pods reach Services on the same bridge; masquerading makes replies come back through the host
# whether or not bridged traffic passes iptables.
iptables: {masqueradeAll: true}
# Leave the host's conntrack table size alone.
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
# Not -999: see restrict_oom_score_adj in the containerd configuration.
oomScoreAdj: 0
EOF
    cat > "$STATE/Corefile" <<EOF
.:53 {
    bind $NODE_IP
    errors
    health 127.0.0.1:8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $STATE/admin.kubeconfig local
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    forward . /etc/resolv.conf
    cache 30
}
EOF
}

# ---------------------------------------------------------------------------------------------
# Images: podman -> containerd's k8s.io namespace.

make_pause_image() {
    podman --runtime runc image exists "$PAUSE_IMAGE" && return
    local root
    root=$(mktemp -d)
    cp "$KUBE_BIN/pause" "$root/pause"
    tar -C "$root" -c pause | podman --runtime runc import --change 'ENTRYPOINT ["/pause"]' - "$PAUSE_IMAGE" >/dev/null
    rm -rf "$root"
}

load_image() {  # load_image PODMAN_IMAGE [NAME_IN_CLUSTER]
    local source=$1 target=${2:-} archive
    podman --runtime runc image exists "$source" || die "podman has no image $source (build it: scripts/build-image.sh)"
    archive=$(mktemp -p /var/tmp image-XXXXXX.tar)
    rm -f "$archive"
    podman --runtime runc save --format docker-archive -o "$archive" "$source" >/dev/null
    ctr_ images import "$archive" >/dev/null
    rm -f "$archive"
    local imported
    imported=$(podman --runtime runc image inspect --format '{{index .RepoTags 0}}' "$source")
    if [ -n "$target" ] && [ "$target" != "$imported" ]; then
        ctr_ images rm "$target" >/dev/null 2>&1 || true
        ctr_ images tag "$imported" "$target" >/dev/null
    fi
    log "loaded $source into the cluster${target:+ as $target}"
}

# A short name like sweeps:0.1.0 is what the chart asks for; containerd reads it as docker.io/library/....
cluster_name_of() {
    case "$1" in
        */*/*|localhost/*) echo "$1" ;;
        */*) echo "docker.io/$1" ;;
        *) echo "docker.io/library/$1" ;;
    esac
}

# ---------------------------------------------------------------------------------------------

up() {
    [ "$(id -u)" = 0 ] || die "needs root (containerd, the kubelet and kube-proxy manage namespaces, cgroups and iptables)"
    local tool
    for tool in etcd containerd ctr "$RUNC" podman openssl iptables; do
        command -v "$tool" >/dev/null || die "'$tool' is missing; apt-get install etcd-server containerd runc containernetworking-plugins podman iptables conntrack"
    done
    [ -x "$CNI_BIN/bridge" ] && [ -x "$CNI_BIN/host-local" ] || die "CNI plugins missing in $CNI_BIN; apt-get install containernetworking-plugins"
    local started=$SECONDS
    KUBE_BIN=$(kube_bin)
    mkdir -p "$STATE/logs" "$STATE/pids" "$STATE/volumes/results"
    echo "$KUBE_BIN" > "$STATE/kube-bin"
    make_pki
    write_configs

    # The bridge exists before the first pod so that its gateway address can be the node address.
    if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
        ip link add "$BRIDGE" type bridge
        ip addr add "$NODE_IP/24" dev "$BRIDGE"
        ip link set "$BRIDGE" up
    fi
    sysctl -qw net.ipv4.ip_forward=1
    [ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] && sysctl -qw net.bridge.bridge-nf-call-iptables=1

    start_daemon etcd etcd --name local --data-dir "$STATE/etcd" \
        --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
        --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
        --initial-cluster local=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381
    wait_for 60 etcd curl -fsS http://127.0.0.1:2379/health

    local pki="$STATE/pki"
    start_daemon kube-apiserver "$KUBE_BIN/kube-apiserver" \
        --bind-address=127.0.0.1 --secure-port=6443 --advertise-address="$NODE_IP" \
        --etcd-servers=http://127.0.0.1:2379 \
        --service-cluster-ip-range="$SERVICE_CIDR" \
        --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
        --client-ca-file="$pki/ca.crt" \
        --kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" \
        --kubelet-client-key="$pki/apiserver-kubelet-client.key" \
        --kubelet-preferred-address-types=InternalIP \
        --service-account-key-file="$pki/service-account.pub" \
        --service-account-signing-key-file="$pki/service-account.key" \
        --service-account-issuer=https://kubernetes.default.svc.cluster.local \
        --authorization-mode=Node,RBAC --allow-privileged=false \
        --enable-admission-plugins=NodeRestriction
    wait_for 120 kube-apiserver kubectl_ get --raw /readyz

    start_daemon kube-controller-manager "$KUBE_BIN/kube-controller-manager" \
        --kubeconfig="$STATE/controller-manager.kubeconfig" \
        --authentication-kubeconfig="$STATE/controller-manager.kubeconfig" \
        --authorization-kubeconfig="$STATE/controller-manager.kubeconfig" \
        --bind-address=127.0.0.1 --leader-elect=false \
        --service-account-private-key-file="$pki/service-account.key" --root-ca-file="$pki/ca.crt" \
        --cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key" \
        --use-service-account-credentials=true --service-cluster-ip-range="$SERVICE_CIDR"
    start_daemon kube-scheduler "$KUBE_BIN/kube-scheduler" \
        --kubeconfig="$STATE/scheduler.kubeconfig" \
        --authentication-kubeconfig="$STATE/scheduler.kubeconfig" \
        --authorization-kubeconfig="$STATE/scheduler.kubeconfig" \
        --bind-address=127.0.0.1 --leader-elect=false

    start_daemon containerd containerd --config "$STATE/containerd/config.toml"
    wait_for 60 containerd ctr_ version
    make_pause_image
    load_image "$PAUSE_IMAGE"
    if podman --runtime runc image exists "localhost/$IMAGE"; then
        load_image "localhost/$IMAGE" "$(cluster_name_of "$IMAGE")"
    else
        log "podman has no image localhost/$IMAGE yet; build it (scripts/build-image.sh), then: $0 load localhost/$IMAGE"
    fi

    start_daemon kubelet "$KUBE_BIN/kubelet" --config="$STATE/kubelet.yaml" \
        --kubeconfig="$STATE/kubelet.kubeconfig" --hostname-override="$NODE_NAME" \
        --node-ip="$NODE_IP" --root-dir="$STATE/kubelet" --cert-dir="$STATE/kubelet/pki" \
        --oom-score-adj=0   # not -999: see restrict_oom_score_adj
    start_daemon kube-proxy "$KUBE_BIN/kube-proxy" --config="$STATE/kube-proxy.yaml"
    start_daemon coredns "$KUBE_BIN/coredns" -conf "$STATE/Corefile"

    wait_for 120 "the node" kubectl_ wait node "$NODE_NAME" --for=condition=Ready --timeout=5s
    # The DNS Service pods look for (kubelet's clusterDNS points at CoreDNS on $NODE_IP directly).
    # The results volume: a hostPath PersistentVolume with no storage class, which the chart's
    # claim (no class, and the cluster has no default class) binds to. hostPath ignores fsGroup,
    # so the folder belongs to the image's user.
    chown 1000:1000 "$STATE/volumes/results"
    kubectl_ apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata:
  name: sweeps-local-results
  labels: {app.kubernetes.io/part-of: local-cluster}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  hostPath: {path: $STATE/volumes/results, type: Directory}
EOF
    # The default ServiceAccount must exist before pods can be admitted.
    wait_for 60 "the default ServiceAccount" kubectl_ -n default get serviceaccount default
    log "up in $((SECONDS - started))s: node $NODE_NAME Ready, Kubernetes $("$KUBE_BIN/kubectl" version --client -o json | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p' | head -1)"
    env_lines >&2
    echo "local-cluster: ok up_s=$((SECONDS - started))"
}

env_lines() {
    echo "export KUBECONFIG=$STATE/admin.kubeconfig"
    echo "export PATH=$(recorded_kube_bin):\$PATH"
}

status() {
    local name
    for name in etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy coredns; do
        if pid_alive "$name"; then echo "$name running (pid $(cat "$STATE/pids/$name.pid"))"; else echo "$name stopped"; fi
    done
}

down() {
    [ -d "$STATE" ] || { log "nothing to tear down ($STATE does not exist)"; return; }
    KUBE_BIN=$(recorded_kube_bin)
    # No controller may replace the pods removed below.
    stop_daemon kube-controller-manager
    stop_daemon kube-scheduler
    # The kubelet stops every pod (and the CNI plugin releases its address and rules) while it can.
    if pid_alive kube-apiserver && pid_alive kubelet; then
        kubectl_ delete pods --all --all-namespaces --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
        local i
        for i in $(seq 1 60); do
            [ -z "$(ctr_ tasks ls -q 2>/dev/null)" ] && break
            sleep 1
        done
    fi
    stop_daemon coredns
    stop_daemon kubelet
    stop_daemon kube-proxy
    [ -n "$KUBE_BIN" ] && "$KUBE_BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
    # Whatever the kubelet left: kill and delete its tasks and containers, then stop containerd.
    if pid_alive containerd; then
        local id
        for id in $(ctr_ tasks ls -q 2>/dev/null); do
            ctr_ tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
            sleep 0.2
            ctr_ tasks delete -f "$id" >/dev/null 2>&1 || true
        done
        for id in $(ctr_ containers ls -q 2>/dev/null); do ctr_ containers delete "$id" >/dev/null 2>&1 || true; done
    fi
    stop_daemon containerd
    # containerd's shims for this state directory only (they name its socket), by pid.
    local pid
    for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $SOCK" || true); do kill -9 "$pid" 2>/dev/null || true; done
    stop_daemon kube-apiserver
    stop_daemon etcd
    # Mounts under the state directory (pod volumes, container root filesystems, sandbox shm).
    local mount
    for mount in $(awk -v s="$STATE" '$2 ~ "^"s {print $2}' /proc/self/mounts | sort -r); do
        umount -l "$mount" 2>/dev/null || true
    done
    ip link show "$BRIDGE" >/dev/null 2>&1 && ip link del "$BRIDGE"
    # The bridge plugin's masquerade rules for pod addresses it did not get to release, and the
    # CNI-* chains those rules (and no others) jump to.
    local rules chains
    rules=$(iptables-save -t nat 2>/dev/null | grep -- "^-A POSTROUTING -s ${POD_CIDR%.*}\." || true)
    chains=$(echo "$rules" | grep -o -- '-j CNI-[^ ]*' | cut -d' ' -f2 | sort -u || true)
    echo "$rules" | sed -n 's/^-A/-D/p' | while read -r rule; do eval "iptables -t nat $rule" 2>/dev/null || true; done || true
    for chain in $chains; do
        iptables -t nat -F "$chain" 2>/dev/null || true
        iptables -t nat -X "$chain" 2>/dev/null || true
    done
    # The kubelet's own chains (kube-proxy --cleanup removed kube-proxy's): its localhost firewall
    # and the canaries and hint it leaves to detect iptables flushes.
    local cmd table
    for cmd in iptables ip6tables; do
        command -v "$cmd" >/dev/null || continue
        for table in filter nat mangle; do
            "$cmd-save" -t "$table" 2>/dev/null | grep -E -- "^-A (INPUT|OUTPUT) .*-j KUBE-FIREWALL" | sed 's/^-A/-D/' \
                | while read -r rule; do eval "$cmd -t $table $rule" 2>/dev/null || true; done || true
            for chain in KUBE-FIREWALL KUBE-KUBELET-CANARY KUBE-IPTABLES-HINT; do
                "$cmd" -t "$table" -F "$chain" 2>/dev/null || true
                "$cmd" -t "$table" -X "$chain" 2>/dev/null || true
            done
        done
    done
    rm -rf "$STATE"
    log "down: every process this script started is stopped and $STATE is removed"
}

case "${1:-}" in
    up) up ;;
    down) down ;;
    status) status ;;
    env) env_lines ;;
    load)
        KUBE_BIN=$(kube_bin)
        [ -n "${2:-}" ] || die "usage: $0 load PODMAN_IMAGE (e.g. localhost/$IMAGE)"
        short=${2#localhost/}
        load_image "$2" "$(cluster_name_of "$short")"
        ;;
    *) echo "usage: $0 up|down|status|env|load IMAGE" >&2; exit 2 ;;
esac
