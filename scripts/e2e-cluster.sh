#!/usr/bin/env bash
# The README's Kubernetes quickstart, run for real from start to end on this machine:
#
#   scripts/e2e-cluster.sh            # about half an hour the first time (image and Kubernetes builds)
#
#  1. build the image (scripts/build-image.sh)             6. the dashboard Service serves the rows
#  2. a one-node cluster (scripts/local-cluster.sh up)    7. helm upgrade to two workers
#  3. helm install the chart (static mode), wait ready     8. more seeds; one worker pod killed
#  4. port-forward 8265; a job without the token is            mid-sweep; it finishes, nothing lost
#     refused, one with the token runs                        or duplicated
#  5. ray job submit --working-dir . -- python              9. KubeRay mode: the CRD, helm install,
#     sweeps/exp4c.py --quick; rows land in the results         the RayCluster and its Services
#     volume                                              10. helm uninstall leaves only the claim
#                                                         11. the cluster torn down (local-cluster.sh down)
#
# Exits 0 only when every step passed; the last line is
#   e2e-cluster: ok rows=N install_ready_s=S sweep_s=S
# Needs root, podman, Debian's etcd-server/containerd/runc/CNI packages and Go (see
# scripts/local-cluster.sh), and the project's .venv (its `ray` submits the jobs).
# E2E_KEEP_CLUSTER=1 leaves the cluster up afterwards; E2E_SKIP_IMAGE=1 uses the image podman has.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
export PATH="$repo/.venv/bin:$PATH"
command -v ray >/dev/null || { echo "e2e-cluster: no 'ray' (create .venv: pip install -e '.[test]')" >&2; exit 1; }
HELM=${HELM:-$(scripts/install-helm.sh)}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml | head -1)
NS=sweeps
RELEASE=sweeps
VALUES=charts/sweep-cluster/ci/local-cluster-values.yaml
work=$(mktemp -d /tmp/e2e-cluster-XXXXXX)
forwards=()
step=setup
t_start=$SECONDS

say() { echo "e2e-cluster: $*"; }
now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }
fail() { say "FAILED at step '$step': $*"; exit 1; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

diagnose() {
    [ -n "${KUBECONFIG:-}" ] || return 0
    echo "---- pods ----"; kubectl get pods -A -o wide 2>&1 | tail -30 || true
    echo "---- events ----"; kubectl get events -A --sort-by=.lastTimestamp 2>&1 | tail -30 || true
    local pod
    for pod in $(kubectl -n "$NS" get pods -o name 2>/dev/null); do
        echo "---- logs $pod ----"; kubectl -n "$NS" logs "$pod" --all-containers --tail=30 2>&1 || true
    done
}

cleanup() {
    local rc=$?
    local pid
    for pid in "${forwards[@]}"; do kill "$pid" 2>/dev/null || true; done
    [ "$rc" -ne 0 ] && diagnose
    if [ "${E2E_KEEP_CLUSTER:-0}" != 1 ]; then
        scripts/local-cluster.sh down || rc=1
    fi
    rm -rf "$work"
    exit "$rc"
}
trap cleanup EXIT

port_forward() {  # port_forward TARGET LOCAL_PORT REMOTE_PORT; waits until the local port answers
    kubectl -n "$NS" port-forward "$1" "$2:$3" >"$work/forward-$2.log" 2>&1 &
    forwards+=($!)
    local i
    for i in $(seq 1 30); do
        python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 2)" "$2" 2>/dev/null && return 0
        sleep 1
    done
    cat "$work/forward-$2.log" >&2
    return 1
}

# Rows, distinct (config, seed) keys and planned-vs-done configs, read inside the head pod from
# the results volume the chart mounts (SWEEPS_STORE), with the project's own store reader.
store_report() {
    kubectl -n "$NS" exec deploy/$RELEASE-head -c ray-head -- python -c '
import os
from ray_jobs.store import ResultsStore
from ray_jobs.status import store_status
store = ResultsStore(os.environ["SWEEPS_STORE"])
table = store.scan(["exp4c"]).table
keys = set(zip(table.column("config_hash").to_pylist(), table.column("seed").to_pylist()))
status = {e.experiment: e for e in store_status(store).experiments}["exp4c"]
print(table.num_rows, len(keys), status.planned_configs, status.planned_done, store_status(store).duplicates_dropped)
'
}

# ---------------------------------------------------------------------------------------------
step=image
t=$(now)
if [ "${E2E_SKIP_IMAGE:-0}" = 1 ]; then
    say "image: using localhost/sweeps:$version as podman has it"
else
    scripts/build-image.sh
fi
image_s=$(since "$t")
say "image ok (${image_s}s)"

step=cluster-up
t=$(now)
scripts/local-cluster.sh up
eval "$(scripts/local-cluster.sh env)"
up_s=$(since "$t")
say "cluster up ok (${up_s}s): $(kubectl get nodes --no-headers)"

# ---------------------------------------------------------------------------------------------
step=install
t=$(now)
"$HELM" install "$RELEASE" charts/sweep-cluster --namespace "$NS" --create-namespace -f "$VALUES"
for component in head worker dashboard; do
    kubectl -n "$NS" rollout status "deployment/$RELEASE-$component" --timeout=10m
done
install_ready_s=$(since "$t")
say "install to ready ok (${install_ready_s}s): $(kubectl -n "$NS" get pods --no-headers | awk '{print $1" "$2" "$3}' | tr '\n' ';')"

step=token
job_port=$(free_port)
port_forward "svc/$RELEASE-head" "$job_port" 8265
address="http://127.0.0.1:$job_port"
if RAY_AUTH_MODE=disabled ray job submit --address "$address" -- echo no-token >"$work/refused.log" 2>&1; then
    cat "$work/refused.log"; fail "the job API ran a job submitted without the token"
fi
grep -qiE "401|unauthori|authenticat" "$work/refused.log" || { cat "$work/refused.log"; fail "refusal was not an authentication error"; }
say "a submission without the token is refused: $(grep -E -m1 "Authentication required|Unauthorized|401" "$work/refused.log" | cut -c1-160)"
# As NOTES.txt says.
export RAY_AUTH_MODE=token
RAY_AUTH_TOKEN=$(kubectl -n "$NS" get secret "$RELEASE-ray-token" -o jsonpath='{.data.token}' | base64 -d)
export RAY_AUTH_TOKEN

step=sweep
t=$(now)
ray job submit --address "$address" --working-dir . -- python sweeps/exp4c.py --quick 2>&1 | tee "$work/sweep.log" | tail -5
grep -q "succeeded" "$work/sweep.log" || fail "the sweep job did not succeed"
sweep_s=$(since "$t")
read -r rows keys planned done dropped < <(store_report)
[ "$rows" -gt 0 ] && [ "$rows" = "$keys" ] && [ "$planned" = "$done" ] || fail "store after the sweep: rows=$rows keys=$keys planned=$planned done=$done"
say "sweep ok (${sweep_s}s): rows=$rows, configs done $done of $planned, in the results volume"

step=dashboard
dash_port=$(free_port)
port_forward "svc/$RELEASE-dashboard" "$dash_port" 8080
t=$(now)
curl -fsS "http://127.0.0.1:$dash_port/" -o "$work/index.html"
curl -fsS "http://127.0.0.1:$dash_port/data.js" -o "$work/data.js"
dashboard_s=$(since "$t")
served=$(python3 -c '
import json, sys
text = open(sys.argv[1]).read()
print(json.loads(text[text.index("=") + 1:].strip().rstrip(";"))["store"]["rows"])' "$work/data.js")
[ "$served" = "$rows" ] || fail "the dashboard serves $served rows, the store has $rows"
say "dashboard ok (${dashboard_s}s for / and /data.js): serves rows=$served"

# ---------------------------------------------------------------------------------------------
step=upgrade
t=$(now)
"$HELM" upgrade "$RELEASE" charts/sweep-cluster --namespace "$NS" --reuse-values --set worker.replicas=2
kubectl -n "$NS" rollout status "deployment/$RELEASE-worker" --timeout=10m
ready=$(kubectl -n "$NS" get deployment "$RELEASE-worker" -o jsonpath='{.status.readyReplicas}')
[ "$ready" = 2 ] || fail "after helm upgrade: $ready ready workers, expected 2"
token_after=$(kubectl -n "$NS" get secret "$RELEASE-ray-token" -o jsonpath='{.data.token}' | base64 -d)
[ "$token_after" = "$RAY_AUTH_TOKEN" ] || fail "helm upgrade changed the Ray token"
upgrade_s=$(since "$t")
say "helm upgrade ok (${upgrade_s}s): 2 workers ready, the token unchanged"

step=kill-worker
t=$(now)
# Seeds 4..9 of every quick config (the first sweep ran the default 1..3): new work, three times
# the first sweep's rows, while those rows stay as they are.
job_id=$(ray job submit --address "$address" --no-wait --working-dir . -- python sweeps/exp4c.py --quick --seeds 9 \
    | sed -n "s/.*Job '\([^']*\)' submitted successfully.*/\1/p")
[ -n "$job_id" ] || fail "no job id from ray job submit --no-wait"
# Kill a worker once the sweep's tasks are out: a few seconds after its first progress line.
for i in $(seq 1 300); do
    ray job logs --address "$address" "$job_id" 2>/dev/null | grep -q "progress: " && break
    sleep 1
done
sleep 4
victim=$(kubectl -n "$NS" get pods -l app.kubernetes.io/component=worker -o jsonpath='{.items[0].metadata.name}')
kubectl -n "$NS" delete pod "$victim" --grace-period=0 --force --wait=false
say "killed worker pod $victim mid-sweep"
for i in $(seq 1 900); do
    # `ray job status` ends with "Job '<id>' succeeded" (or failed, stopped) once the job is over.
    state=$(ray job status --address "$address" "$job_id" 2>/dev/null | grep -oiE "'$job_id' (succeeded|failed|stopped)" \
        | awk '{print toupper($2)}' | tail -1 || true)
    [ -n "$state" ] && break
    sleep 2
done
ray job logs --address "$address" "$job_id" > "$work/kill.log" 2>&1 || true
tail -3 "$work/kill.log"
[ "${state:-}" = SUCCEEDED ] || fail "the sweep with a killed worker ended ${state:-unfinished}"
read -r rows2 keys2 planned2 done2 dropped2 < <(store_report)
[ "$rows2" = "$keys2" ] || fail "duplicates: $rows2 rows for $keys2 (config, seed) keys"
[ "$planned2" = "$done2" ] || fail "lost runs: $done2 of $planned2 configs have every seed"
[ "$rows2" = $((3 * rows)) ] || fail "expected $((3 * rows)) rows after seeds 4..9, found $rows2"
grep -E "progress: .*100.0%" "$work/kill.log" | tail -1
kill_sweep_s=$(since "$t")
kubectl -n "$NS" rollout status "deployment/$RELEASE-worker" --timeout=10m
say "worker killed mid-sweep ok (${kill_sweep_s}s): rows=$rows2 = 3 x $rows, no duplicates, configs done $done2 of $planned2"

# ---------------------------------------------------------------------------------------------
step=kuberay
t=$(now)
# Server-side: the CRD is larger than the last-applied annotation a client-side apply writes.
kubectl apply --server-side -f tests/data/crds/ >/dev/null
# (kubectl wait fails at once while the CRD has no conditions yet, so poll.)
for i in $(seq 1 60); do
    [ "$(kubectl get crd rayclusters.ray.io -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' 2>/dev/null)" = True ] && break
    sleep 1
done
"$HELM" install sweeps-kuberay charts/sweep-cluster --namespace kuberay --create-namespace \
    -f charts/sweep-cluster/ci/kuberay-values.yaml -f "$VALUES" --set worker.replicas=1
kubectl -n kuberay get raycluster sweeps-kuberay -o jsonpath='{.spec.rayVersion}' | grep -qx "$(sed -n 's/^rayVersion: "\(.*\)"/\1/p' charts/sweep-cluster/values.yaml)" \
    || fail "the RayCluster was not created with the chart's rayVersion"
kubectl -n kuberay get networkpolicy,secret,svc,pvc --no-headers | awk '{print $1}' | tr '\n' ' '; echo
"$HELM" uninstall sweeps-kuberay --namespace kuberay --wait
kuberay_s=$(since "$t")
say "kuberay mode ok (${kuberay_s}s): the RayCluster and its objects were accepted (no operator runs here, so no pods)"

step=uninstall
for pid in "${forwards[@]}"; do kill "$pid" 2>/dev/null || true; done
forwards=()
"$HELM" uninstall "$RELEASE" --namespace "$NS" --wait
kubectl -n "$NS" wait pod --all --for=delete --timeout=5m >/dev/null 2>&1 || true
left=$(kubectl -n "$NS" get all,secret,configmap,pvc,networkpolicy,serviceaccount -o name \
    | grep -v -e '^configmap/kube-root-ca.crt$' -e '^serviceaccount/default$' | tr '\n' ' ')
[ "$left" = "persistentvolumeclaim/$RELEASE-results " ] || fail "after helm uninstall: $left"
say "helm uninstall ok: left behind only $left(store.pvc.keepOnUninstall)"

step=teardown
if [ "${E2E_KEEP_CLUSTER:-0}" != 1 ]; then
    trap - EXIT
    for pid in "${forwards[@]}"; do kill "$pid" 2>/dev/null || true; done
    scripts/local-cluster.sh down
    rm -rf "$work"
fi
say "total $((SECONDS - t_start))s; image_s=$image_s up_s=$up_s upgrade_s=$upgrade_s kill_sweep_s=$kill_sweep_s dashboard_s=$dashboard_s"
say "ok rows=$rows2 install_ready_s=$install_ready_s sweep_s=$sweep_s"
