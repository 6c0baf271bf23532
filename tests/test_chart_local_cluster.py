"""Run the chart for real, without Kubernetes: its rendered containers become local processes.

The chart is rendered with `helm template`; the head's, a worker's and the dashboard's container
command, arguments and environment are taken from the rendered Deployments and started as
processes on this machine. What a pod would get from Kubernetes is supplied the nearest local way,
and only that:

- the head Service's name resolves to 127.0.0.1;
- the results volume mounted at store.pvc.mountPath is a temporary directory;
- the /tmp/ray emptyDir is a per-process `--temp-dir` (Ray's default /tmp/ray would be shared
  with every other Ray on this machine);
- ports come from the chart's port values set to free ports, and the worker's dashboard-agent
  port differs from the head's (two pods have two network namespaces; two processes share one);
- an env entry taken from a Secret (the Ray token) gets the value of the rendered Secret.

Then the worker's wait-for-head init command must block until the head is up, the readiness probe
commands must pass, a submission without the Ray token must be refused, `ray job submit ... python
sweeps/exp4c.py` with the token (as NOTES.txt says; the quick grid, one seed, a short simulated run)
must land rows in the store through SWEEPS_STORE as the chart sets it, and the dashboard's command must
serve them.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from test_chart_support import CI_VALUES_DIR, REPO_ROOT, by_kind, missing_tool, named, render

pytestmark = pytest.mark.slow

HEAD_SERVICE = "sweeps-head"
JOB_TIMEOUT_S = 900
START_TIMEOUT_S = 120


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def command_of(container: dict) -> list:
    return list(container.get("command", [])) + list(container.get("args", []))


class LocalPods:
    """Starts rendered containers as local processes and stops exactly those processes."""

    def __init__(self, work_dir: Path, store_dir: Path, mount_path: str, secrets: list):
        self.work_dir = work_dir
        self.secrets = {secret["metadata"]["name"]: secret.get("data", {}) for secret in secrets}
        self.store_dir = store_dir
        self.mount_path = mount_path
        self.processes = {}
        venv_bin = str(Path(sys.executable).parent)
        # The image has the project installed and runs from its source tree (/app); here the
        # repository root plays /app.
        self.base_env = {key: value for key, value in os.environ.items()
                         if not key.startswith(("RAY_", "SWEEPS_"))}
        self.base_env.update(PATH=venv_bin + os.pathsep + os.environ.get("PATH", ""),
                             PYTHONPATH=str(REPO_ROOT), RAY_USAGE_STATS_ENABLED="0")

    def localize(self, text: str) -> str:
        """A rendered string as seen from this machine (service name and volume path mapped)."""
        text = re.sub(rf"\b{re.escape(HEAD_SERVICE)}\b(?!-)", "127.0.0.1", text)
        return re.sub(rf"(?<![\w/]){re.escape(self.mount_path)}(?=/|\b|$)", str(self.store_dir), text)

    def environment(self, container: dict) -> dict:
        env = dict(self.base_env)
        for item in container.get("env", []):
            if "value" in item:
                env[item["name"]] = self.localize(item["value"])
                continue
            reference = item["valueFrom"]["secretKeyRef"]
            data = self.secrets[reference["name"]]
            env[item["name"]] = base64.b64decode(data[reference["key"]]).decode()
        return env

    def start(self, name: str, command: list, env: dict) -> subprocess.Popen:
        log = open(self.work_dir / f"{name}.log", "wb")
        # A new session per process, so stopping it reaches the processes it started and no others.
        process = subprocess.Popen(command, env=env, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        self.processes[name] = process
        return process

    def log_tail(self, name: str, lines: int = 40) -> str:
        path = self.work_dir / f"{name}.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return f"--- {name}.log (last {lines} lines) ---\n" + "\n".join(text.splitlines()[-lines:])

    def all_logs(self) -> str:
        return "\n".join(self.log_tail(name) for name in self.processes)

    def stop_all(self) -> None:
        # Workers first, then the head: a graceful `ray start --block` stops its own children.
        for name in reversed(list(self.processes)):
            process = self.processes[name]
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    pass
            try:
                os.killpg(process.pid, signal.SIGKILL)  # leftovers of this process's own session
            except ProcessLookupError:
                pass
            process.wait(timeout=30)


def run_probe(command: list, env: dict, timeout_s: float = 10) -> bool:
    try:
        return subprocess.run(command, env=env, capture_output=True, timeout=timeout_s).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def wait_until(check, timeout_s: float, what: str, pods: LocalPods) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        for name, process in pods.processes.items():
            if process.poll() not in (None, 0) or (process.poll() == 0 and name in ("head", "worker")):
                raise AssertionError(f"{name} exited with {process.returncode} while waiting for {what}\n"
                                     + pods.all_logs())
        time.sleep(1)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}\n" + pods.all_logs())


def read_store_rows(store_dir: Path) -> list:
    """Rows of every data file of the store, by the results-store contract's file layout."""
    rows = []
    for experiment_dir in sorted(path for path in store_dir.iterdir() if path.is_dir()):
        for data_file in sorted(experiment_dir.glob("*.parquet")):
            if data_file.name.startswith((".", "_")):
                continue
            rows += pq.read_table(data_file).to_pylist()
    return rows


def test_rendered_cluster_runs_a_quick_sweep_and_the_dashboard_serves_it():
    sweep_script = REPO_ROOT / "sweeps" / "exp4c.py"
    assert sweep_script.exists(), f"{sweep_script} is missing: the chart's job has nothing to run"
    assert (REPO_ROOT / "dashboards" / "__main__.py").exists(), "the dashboards package is missing"
    if shutil.which("wget") is None:
        missing_tool("wget is not installed; the chart's probes and wait command use it")

    ports = {"gcs": free_port(), "dashboard": free_port(), "client": free_port(), "dashboardAgent": free_port()}
    dashboard_port = free_port()
    worker_agent_port = free_port()
    objects = render([CI_VALUES_DIR / "local-process-values.yaml"],
                     set_values=[f"ports.{name}={port}" for name, port in ports.items()]
                     + [f"dashboard.port={dashboard_port}"])
    head = named(objects, "Deployment", "sweeps-head")["spec"]["template"]["spec"]
    worker = named(objects, "Deployment", "sweeps-worker")["spec"]["template"]["spec"]
    dashboard = named(objects, "Deployment", "sweeps-dashboard")["spec"]["template"]["spec"]
    mount_path = next(mount["mountPath"] for mount in head["containers"][0]["volumeMounts"]
                      if mount["name"] == "results")

    work_dir = Path(tempfile.mkdtemp(prefix="chart-local-"))
    # Short paths: Ray's socket paths under --temp-dir must stay below the 107-byte Unix limit.
    head_tmp = Path(tempfile.mkdtemp(prefix="rh-", dir="/tmp"))
    worker_tmp = Path(tempfile.mkdtemp(prefix="rw-", dir="/tmp"))
    store_dir = work_dir / "results"
    store_dir.mkdir()
    pods = LocalPods(work_dir, store_dir, mount_path, by_kind(objects, "Secret"))
    try:
        # 1. The worker's init container waits while no head answers.
        (wait_container,) = worker["initContainers"]
        wait_command = [pods.localize(part) for part in command_of(wait_container)]
        waiter = pods.start("wait-for-head", wait_command, pods.environment(wait_container))
        time.sleep(4)
        assert waiter.poll() is None, "wait-for-head returned before any head existed\n" + pods.all_logs()

        # 2. The head, exactly as rendered, with its /tmp/ray emptyDir made explicit.
        head_container = head["containers"][0]
        head_env = pods.environment(head_container)
        head_command = [pods.localize(part) for part in command_of(head_container)]
        assert head_command[-1] == "--block"
        pods.start("head", head_command[:-1] + [f"--temp-dir={head_tmp}", head_command[-1]], head_env)
        wait_until(lambda: waiter.poll() == 0, START_TIMEOUT_S, "wait-for-head to see the head", pods)
        head_probe = [pods.localize(part) for part in head_container["readinessProbe"]["exec"]["command"]]
        wait_until(lambda: run_probe(head_probe, head_env), START_TIMEOUT_S, "the head's readiness probe", pods)

        # 3. A worker, joining through the head Service's (mapped) name.
        worker_container = worker["containers"][0]
        worker_env = pods.environment(worker_container)
        agent_flag = f"--dashboard-agent-listen-port={ports['dashboardAgent']}"

        def worker_local(part: str) -> str:
            # Only where the agent port is a port: after "=" in the flag, after ":" in the probe URL.
            return re.sub(rf"(?<=[=:]){ports['dashboardAgent']}\b", str(worker_agent_port), pods.localize(part))

        worker_command = [worker_local(part) for part in command_of(worker_container)]
        assert f"--address=127.0.0.1:{ports['gcs']}" in worker_command
        assert agent_flag not in worker_command
        pods.start("worker", worker_command[:-1] + [f"--temp-dir={worker_tmp}", worker_command[-1]], worker_env)
        worker_probe = [worker_local(part) for part in worker_container["readinessProbe"]["exec"]["command"]]
        assert str(worker_agent_port) in " ".join(worker_probe)
        wait_until(lambda: run_probe(worker_probe, worker_env), START_TIMEOUT_S, "the worker's readiness probe",
                   pods)

        # 4. The documented submit command. The submitting shell has no SWEEPS_STORE: the job must
        # find the store through the head's environment, as the chart sets it. Without the token
        # the job API refuses; with it (exported as NOTES.txt says) the job runs.
        submit_command = ["ray", "job", "submit", "--address", f"http://127.0.0.1:{ports['dashboard']}",
                          "--working-dir", ".", "--", "python", "sweeps/exp4c.py", "--quick", "--seeds", "1",
                          "--duration-s", "1810"]
        refused = subprocess.run(submit_command, env=dict(pods.base_env, RAY_AUTH_MODE="disabled"), cwd=REPO_ROOT,
                                 capture_output=True, text=True, timeout=START_TIMEOUT_S)
        assert refused.returncode != 0, "the job API accepted a submission without the token"
        assert "401" in refused.stdout + refused.stderr or "uthenticat" in refused.stdout + refused.stderr, \
            refused.stdout[-2000:] + refused.stderr[-2000:]
        submit_env = dict(pods.base_env, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=head_env["RAY_AUTH_TOKEN"])
        submit = subprocess.run(submit_command, env=submit_env, cwd=REPO_ROOT, capture_output=True, text=True,
                                timeout=JOB_TIMEOUT_S)
        job_output = submit.stdout[-4000:] + submit.stderr[-4000:]
        assert submit.returncode == 0, f"ray job submit failed:\n{job_output}\n" + pods.all_logs()
        assert "succeeded" in job_output

        rows = read_store_rows(store_dir)
        assert rows, f"no rows in {store_dir}:\n{job_output}"
        assert {row["experiment"] for row in rows} == {"exp4c"}
        assert all(row["config_hash"] and row["seed"] is not None for row in rows)
        assert len({(row["config_hash"], row["seed"]) for row in rows}) == len(rows), "duplicate rows"
        assert {row["provider"] for row in rows} <= {"s3x", "s3", "azurex", "azure", "gcp"}
        assert all(0.0 <= row["success_rate"] <= 1.0 for row in rows)

        # 5. The dashboard's container command serves the rows from the same store.
        dashboard_container = dashboard["containers"][0]
        dashboard_command = [pods.localize(part) for part in command_of(dashboard_container)]
        assert dashboard_command[dashboard_command.index("--store") + 1] == str(store_dir)
        pods.start("dashboard", dashboard_command, pods.environment(dashboard_container))
        probe = dashboard_container["readinessProbe"]["httpGet"]
        assert probe["port"] == "http"
        base_url = f"http://127.0.0.1:{dashboard_port}"

        def dashboard_ready() -> bool:
            try:
                with urllib.request.urlopen(base_url + probe["path"], timeout=5) as response:
                    return response.status == 200
            except OSError:
                return False

        wait_until(dashboard_ready, START_TIMEOUT_S, "the dashboard's readiness probe", pods)
        with urllib.request.urlopen(base_url + "/", timeout=30) as response:
            assert response.status == 200
            page = response.read().decode("utf-8", "replace")
        assert "data.js" in page
        # The page draws from data.js: `window.DASHBOARD_DATA = {...};` (dashboards/site.py).
        with urllib.request.urlopen(base_url + "/data.js", timeout=30) as response:
            script = response.read().decode("utf-8")
        payload = json.loads(script[script.index("=") + 1:].strip().rstrip(";"))
        assert payload["store"]["uri"] == str(store_dir)
        assert payload["store"]["rows"] == len(rows), "the dashboard does not serve the rows the job stored"
        assert "exp4c" in [study["id"] for study in payload["studies"]]
    finally:
        pods.stop_all()
        for path in (head_tmp, worker_tmp, work_dir):
            shutil.rmtree(path, ignore_errors=True)
