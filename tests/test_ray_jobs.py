"""The fan-out on a real two-node Ray cluster: worker and driver deaths, failures, job submission.

The cluster is made of real processes, as a deployment would run them: a
head (``ray start --head``) and a worker node (``ray start --address``),
one CPU each, every port chosen free, a private ``--temp-dir`` (Ray's
default /tmp/ray is shared by every Ray on the machine). Their environment
carries a marker, so the tests find (and clean up) exactly their own
processes and never touch another Ray on this machine.
"""

from __future__ import annotations

import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest
import ray
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore import SimConfig

from ray_jobs import Grid
from ray_jobs.batching import WorkUnit, estimated_cost_s, make_batches
from ray_jobs.fanout import DEFAULT_FLUSH_INTERVAL_S, SweepPlan, find_work, run_sweep
from ray_jobs.progress import Progress, ProgressPrinter, format_line
from ray_jobs.store import ResultsStore

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
START_TIMEOUT_S = 120

# Each run takes about a second here: long enough to kill a worker in the middle of one.
FAST_FIXED = {"provider": "s3x", "catalog": "storage", "runtime_median_ms": 20_000, "duration_s": 1200}
GRID = Grid("ray_test", fixed=FAST_FIXED, swept={"num_tables": [1, 2, 3, 5], "inter_arrival_scale_ms": [10, 20]})
SEEDS = (1, 2)
ALL_KEYS = {("ray_test", c.config_hash, s) for c in GRID.configs() for s in SEEDS}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def processes_with(marker: str) -> list[tuple[int, str]]:
    """(pid, title) of live processes whose environment holds ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if marker.encode() not in Path(f"/proc/{entry}/environ").read_bytes():
                continue
            title = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone, or not ours to read
            continue
        found.append((int(entry), title.strip()))
    return found


class LocalCluster:
    """A Ray head and one worker node as local processes; stops exactly those."""

    def __init__(self):
        self.temp_dir = tempfile.mkdtemp(prefix="rjt", dir="/tmp")  # short: Ray's socket paths have a limit
        self.marker = f"RAY_JOBS_TEST_CLUSTER={uuid.uuid4().hex}"
        self.gcs_port = free_port()
        self.dashboard_port = free_port()
        self.address = f"127.0.0.1:{self.gcs_port}"
        self.dashboard_url = f"http://127.0.0.1:{self.dashboard_port}"
        self.nodes: dict[str, subprocess.Popen] = {}
        name, value = self.marker.split("=")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_", "SWEEPS_"))}
        # The image has the package installed; here the checkout plays that part. Token
        # authentication is off, as the chart sets it: left unset, a node that finds a token
        # file turns it on, and nodes that disagree cannot join.
        self.env.update({name: value, "PYTHONPATH": str(REPO_ROOT), "RAY_USAGE_STATS_ENABLED": "0",
                         "RAY_AUTH_MODE": "disabled",
                         "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"})

    def _node_ports(self) -> list[str]:
        return [f"--node-manager-port={free_port()}", f"--object-manager-port={free_port()}",
                f"--dashboard-agent-listen-port={free_port()}", f"--dashboard-agent-grpc-port={free_port()}",
                f"--metrics-export-port={free_port()}", f"--runtime-env-agent-port={free_port()}",
                "--object-store-memory=100000000", "--num-cpus=1", "--block"]

    def _start(self, name: str, args: list[str]) -> None:
        log = open(Path(self.temp_dir) / f"{name}.log", "w")
        self.nodes[name] = subprocess.Popen([str(VENV_BIN / "ray"), "start", *args, *self._node_ports()],
                                            env={**self.env, "RAY_JOBS_TEST_NODE": name}, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)

    def start(self) -> None:
        self._start("head", ["--head", f"--port={self.gcs_port}", f"--temp-dir={self.temp_dir}",
                             "--include-dashboard=true", "--dashboard-host=127.0.0.1",
                             f"--dashboard-port={self.dashboard_port}", f"--ray-client-server-port={free_port()}"])
        self._wait(lambda: self._http_ok(f"{self.dashboard_url}/api/version"), "the head's dashboard")
        self._start("worker", [f"--address={self.address}", f"--temp-dir={self.temp_dir}"])
        self._wait(lambda: self.alive_nodes() == 2, "two alive nodes")

    def alive_nodes(self) -> int:
        probe = subprocess.run(
            [sys.executable, "-c", "import ray; ray.init(address=%r, logging_level='ERROR');"
                                   "print(sum(n['Alive'] for n in ray.nodes()))" % self.address],
            env=self.env, capture_output=True, text=True, timeout=60)
        return int(probe.stdout.strip().splitlines()[-1]) if probe.returncode == 0 else 0

    def _http_ok(self, url: str) -> bool:
        try:
            urllib.request.urlopen(url, timeout=2)
            return True
        except urllib.error.HTTPError:  # an answer (401 without Ray's auth token) means it is up
            return True
        except OSError:
            return False

    def _wait(self, ready, what: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not ready():
            for name, process in self.nodes.items():
                if process.poll() is not None:
                    log = (Path(self.temp_dir) / f"{name}.log").read_text()
                    raise RuntimeError(f"ray start ({name}) exited with {process.returncode}:\n{log[-3000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out waiting for {what}")
            time.sleep(0.5)

    def stop(self) -> None:
        # The worker node first: without a head it would keep trying to reconnect.
        for name in sorted(self.nodes, key=lambda n: n == "head"):
            process = self.nodes[name]
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)  # the group this test started
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:  # the head can take half a minute to wind down
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        # Ray daemons and workers that left the process group still carry the marker.
        for _ in range(20):
            left = processes_with(self.marker)
            if not left:
                break
            for pid, _title in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.25)
        shutil.rmtree(self.temp_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster():
    local = LocalCluster()
    try:
        local.start()
        yield local
    finally:
        local.stop()


@pytest.fixture
def driver(cluster, monkeypatch):
    """This test process as a Ray driver on the cluster."""
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    ray.init(address=cluster.address, logging_level="ERROR")
    try:
        yield
    finally:
        ray.shutdown()


def quiet_progress() -> ProgressPrinter:
    return ProgressPrinter(stream=io.StringIO(), live=False)


def run_driver(cluster, store: Path, grid_code: str, extra_args=(), flush_interval_s=0.5, **popen):
    """A sweep driver as its own process (``sweep_main``), connected through RAY_ADDRESS."""
    script = textwrap.dedent(f"""
        import sys
        from commit_sweeps.sweep_command import sweep_main
        from ray_jobs import Grid
        {grid_code}
        sys.exit(sweep_main([grid], ["--store", {str(store)!r}, "--seeds", "2", "--duration-s", "1200",
                                     *{list(extra_args)!r}], flush_interval_s={flush_interval_s!r}))
    """)
    env = {**cluster.env, "RAY_ADDRESS": cluster.address}
    return subprocess.Popen([sys.executable, "-c", script], cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True, **popen)


GRID_CODE = (f"grid = Grid('ray_test', fixed={FAST_FIXED!r}, "
             f"swept={{'num_tables': [1, 2, 3, 5], 'inter_arrival_scale_ms': [10, 20]}})")


# -- tests ------------------------------------------------------------------

def test_a_worker_killed_mid_task_loses_and_duplicates_nothing(cluster, driver, tmp_path):
    store = ResultsStore(str(tmp_path / "store"))
    work = find_work([SweepPlan("ray_test", GRID.configs(), SEEDS)], store)
    killed = []

    def kill_a_busy_worker_on_the_worker_node():
        deadline = time.monotonic() + 120
        while not killed and time.monotonic() < deadline:
            for pid, title in processes_with(cluster.marker):
                if title.startswith("ray::run_units") or title.startswith("ray::run_batch"):
                    environ = Path(f"/proc/{pid}/environ").read_bytes()
                    if b"RAY_JOBS_TEST_NODE=worker" in environ:
                        os.kill(pid, signal.SIGKILL)
                        killed.append((pid, title))
                        return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_a_busy_worker_on_the_worker_node)
    killer.start()
    # One unit per task, so the kill hits a task that is running a simulation.
    summary = run_sweep(work, store, batch_target_s=1e-9, max_batch_units=1, flush_interval_s=1.0,
                        progress=quiet_progress())
    killer.join()
    assert killed, "no busy worker process was found on the worker node to kill"
    assert (summary.run, summary.failed, summary.skipped) == (len(ALL_KEYS), 0, 0), summary.failures
    scan = store.scan()
    assert scan.keys() == ALL_KEYS
    assert scan.rows_read == len(ALL_KEYS) and scan.duplicates_dropped == 0  # each run stored exactly once
    assert scan.unreadable == ()
    # Ray's record of the tasks: the killed one ran again (a system failure is retried).
    attempts = retried_attempts(cluster)
    assert attempts and max(attempts) >= 1, attempts


def retried_attempts(cluster) -> list[int]:
    from ray.util.state import list_tasks

    deadline = time.monotonic() + 30
    while True:  # task events reach the dashboard a little after the tasks end
        tasks = list_tasks(address=cluster.dashboard_url, filters=[("name", "=", "run_units")], limit=10_000,
                           raise_on_missing_output=False)
        attempts = [task.attempt_number for task in tasks]
        if (attempts and max(attempts) >= 1) or time.monotonic() > deadline:
            return attempts
        time.sleep(1)


def test_a_config_that_raises_is_reported_with_its_config_and_the_rest_is_stored(cluster, driver, tmp_path):
    store = ResultsStore(str(tmp_path / "store"))
    good = Grid("ray_test", fixed=FAST_FIXED, swept={"num_tables": [1, 2], "inter_arrival_scale_ms": [500]})
    # Valid, but beyond the workers' memory bound (300 MiB here): simcore raises WorkBoundError there.
    bad = Grid("ray_test", fixed=FAST_FIXED, swept={"num_tables": [10 ** 6], "inter_arrival_scale_ms": [500]})
    plans = [SweepPlan("ray_test", good.configs() + bad.configs(), SEEDS)]
    bound = 300 * 2 ** 20
    summary = run_sweep(find_work(plans, store), store, progress=quiet_progress(), max_memory_bytes=bound)
    assert (summary.run, summary.failed) == (4, 2) and not summary.ok
    assert {(f.config["num_tables"], f.seed) for f in summary.failures} == {(10 ** 6, 1), (10 ** 6, 2)}
    assert all(f.error.startswith("WorkBoundError: num_tables: 1000000 needs about") for f in summary.failures)
    assert {c.config_hash for c in good.configs()} == {k[1] for k in store.scan().keys()}
    # A rerun skips the stored runs and reports the failing ones again.
    again = run_sweep(find_work(plans, store), store, progress=quiet_progress(), max_memory_bytes=bound)
    assert (again.run, again.skipped, again.failed) == (0, 4, 2)


def test_the_sweep_command_exits_nonzero_and_names_the_failed_config(cluster, tmp_path):
    # Within the driver's raised limit, but more memory (about 256 GB) than any node of the cluster offers:
    # its runs fail by name, the others are stored.
    grid_code = (f"grid = Grid('ray_test', fixed={FAST_FIXED!r}, "
                 "swept={'num_tables': [1, 2 * 10 ** 9], 'inter_arrival_scale_ms': [500]})")
    process = run_driver(cluster, tmp_path / "store", grid_code, extra_args=["--max-memory", "1T"])
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 1, output
    assert "ray_test: 4 runs: 2 run, 0 skipped (already stored), 2 failed" in output
    assert "FAILED (2):" in output and "'num_tables': 2000000000" in output
    assert "more than any Ray node offers" in output


def test_a_killed_driver_resumes_without_recomputing_or_duplicating(cluster, tmp_path):
    store_dir = tmp_path / "store"
    first = run_driver(cluster, store_dir, GRID_CODE)
    try:
        deadline = time.monotonic() + 300
        while not list((store_dir / "ray_test").glob("part-*.parquet")):
            assert first.poll() is None, first.stdout.read()
            assert time.monotonic() < deadline, "the first driver stored nothing"
            time.sleep(0.05)
    finally:
        os.kill(first.pid, signal.SIGKILL)  # the driver, mid-sweep, with no chance to clean up
        first.wait()
    before = ResultsStore(str(store_dir)).scan()
    assert 0 < len(before.keys()) < len(ALL_KEYS), "kill the driver midway, not before or after its work"
    finished_before = {tuple(r[k] for k in ("experiment", "config_hash", "seed")): r["finished_at"]
                       for r in before.table.to_pylist()}

    second = run_driver(cluster, store_dir, GRID_CODE)
    output, _ = second.communicate(timeout=300)
    assert second.returncode == 0, output
    left = len(ALL_KEYS) - len(finished_before)
    assert f"ray_test: {len(ALL_KEYS)} runs: {left} run, {len(finished_before)} skipped (already stored), 0 failed" \
        in output
    after = ResultsStore(str(store_dir)).scan()
    assert after.keys() == ALL_KEYS and after.rows_read == len(ALL_KEYS) and after.duplicates_dropped == 0
    for row in after.table.to_pylist():  # rows stored before the kill were not computed again
        key = (row["experiment"], row["config_hash"], row["seed"])
        if key in finished_before:
            assert row["finished_at"] == finished_before[key]

    third = run_driver(cluster, store_dir, GRID_CODE)
    output, _ = third.communicate(timeout=300)
    assert third.returncode == 0 and f"0 run, {len(ALL_KEYS)} skipped" in output
    assert "running on" not in output  # a finished sweep does not even connect to Ray


def finished_tasks(cluster) -> int:
    from ray.util.state import list_tasks

    return len(list_tasks(address=cluster.dashboard_url, filters=[("name", "=", "run_units"), ("state", "=", "FINISHED")],
                          limit=10_000, raise_on_missing_output=False))


def test_a_driver_killed_seconds_after_its_first_run_keeps_the_finished_runs(cluster, tmp_path):
    # With the default flush interval, a SIGKILL a few seconds after the first run finished must still
    # leave the finished runs in the store.
    store_dir = tmp_path / "store"
    before = finished_tasks(cluster)
    driver_process = run_driver(cluster, store_dir, GRID_CODE, flush_interval_s=None)  # the command's default
    try:
        deadline = time.monotonic() + 120
        while finished_tasks(cluster) < before + 1:
            assert driver_process.poll() is None, driver_process.stdout.read()
            assert time.monotonic() < deadline, "no run finished"
            time.sleep(0.2)
        first_finished = time.monotonic()
        time.sleep(DEFAULT_FLUSH_INTERVAL_S + 3)
    finally:
        os.kill(driver_process.pid, signal.SIGKILL)  # no chance to write anything on the way out
        driver_process.wait()
    assert time.monotonic() - first_finished < 30  # killed before the old first flush
    scan = ResultsStore(str(store_dir)).scan()
    assert scan.keys() and scan.keys() <= ALL_KEYS
    assert scan.rows_read == len(scan.keys()) and scan.duplicates_dropped == 0 and scan.unreadable == ()


def test_a_stopped_driver_writes_what_it_finished_before_exiting(cluster, tmp_path):
    # `ray job stop` sends SIGTERM: rows finished so far are written, the rest is left for a rerun.
    store_dir = tmp_path / "store"
    grid_code = (f"grid = Grid('ray_test', fixed={FAST_FIXED!r}, "
                 "swept={'num_tables': list(range(1, 11)), 'inter_arrival_scale_ms': [10, 20]})")
    before = finished_tasks(cluster)
    driver_process = run_driver(cluster, store_dir, grid_code, flush_interval_s=3600.0)
    try:
        deadline = time.monotonic() + 120
        while finished_tasks(cluster) < before + 2:  # some runs done, none written yet
            assert driver_process.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        assert not list((store_dir / "ray_test").glob("part-*.parquet"))
    finally:
        driver_process.send_signal(signal.SIGTERM)
    output = driver_process.communicate(timeout=120)[0]
    assert driver_process.returncode == 130, output
    stored = ResultsStore(str(store_dir)).scan().keys()
    assert 2 <= len(stored) < 40, output
    assert f"ray_test: 40 runs: {len(stored)} run, 0 skipped (already stored), 0 failed" in output
    assert "not run (interrupted)" in output


def test_ray_job_submit_runs_the_quick_sweep_from_a_small_upload(cluster, tmp_path):
    store = tmp_path / "store"
    env = {k: v for k, v in cluster.env.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [str(VENV_BIN / "ray"), "job", "submit", "--address", cluster.dashboard_url, "--working-dir", ".", "--",
         "python", "sweeps/exp4c.py", "--quick", "--seeds", "1", "--duration-s", "1810", "--store", str(store)],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "exp4c: 90 runs: 90 run, 0 skipped (already stored), 0 failed" in output
    assert f"commit-sweeps status --store {store}" in output
    scan = ResultsStore(str(store)).scan()
    assert scan.table.num_rows == 90 and set(scan.table.column("provider").to_pylist()) == {
        "s3x", "s3", "azurex", "azure", "gcp"}
    packages = [p for p in Path(cluster.temp_dir).glob("session_latest/runtime_resources/working_dir_files/_ray_pkg_*")
                if p.is_dir()]
    assert packages, "the uploaded working directory was not found on the head"
    for package in packages:
        assert (package / "sweeps" / "exp4c.py").exists()
        uploaded = {p.name for p in package.iterdir()}
        assert ".venv" not in uploaded and "results" not in uploaded, uploaded
        assert ".git" not in uploaded, uploaded  # Ray's default excludes (RAY_RUNTIME_ENV_DEFAULT_EXCLUDES)


# -- pure parts of the fan-out ------------------------------------------------

def test_batches_put_expensive_runs_first_and_alone_and_pack_cheap_ones():
    configs = Grid("b", fixed={"provider": "s3x"},
                   swept={"fast_append_ratio": [1.0, 0.5], "inter_arrival_scale_ms": [20, 100, 1000, 5000]}).configs()
    units = [WorkUnit("b", c, seed) for c in configs for seed in (1, 2, 3)]
    batches = make_batches(units, target_s=0.5, max_units=64)
    assert sorted(u.key for b in batches for u in b) == sorted(u.key for u in units)
    costs = [sum(estimated_cost_s(u.config) for u in b) / len(b) for b in batches]
    assert costs == sorted(costs, reverse=True)
    assert all(len(b) == 1 for b in batches if estimated_cost_s(b[0].config) >= 0.5)
    assert len(batches[-1]) > 1 and len(batches) < len(units)
    assert max(len(b) for b in make_batches(units, target_s=1e9, max_units=5)) == 5
    assert len(make_batches(units, target_s=1e9, max_units=64, min_batches=8)) >= 8


@settings(max_examples=60, deadline=None)
@given(points=st.lists(st.tuples(st.sampled_from([20, 50, 100, 500, 5000]), st.sampled_from([1.0, 0.9, 0.5]),
                                 st.integers(1, 3)), min_size=1, max_size=40),
       target_s=st.floats(0.01, 5.0), max_units=st.integers(1, 20), min_batches=st.integers(1, 30))
def test_batches_partition_the_units_within_their_limits(points, target_s, max_units, min_batches):
    units = [WorkUnit("p", SimConfig(provider="s3", inter_arrival_scale_ms=ias, fast_append_ratio=fa), seed)
             for ias, fa, seed in points]
    batches = make_batches(units, target_s=target_s, max_units=max_units, min_batches=min_batches)
    assert sorted(u.key for b in batches for u in b) == sorted(u.key for u in units)  # each unit exactly once
    assert all(1 <= len(b) <= max_units for b in batches)
    assert all(sum(estimated_cost_s(u.config) for u in b) <= target_s + 1e-12 for b in batches if len(b) > 1)
    assert len(batches) >= min(min_batches, len(units))


def test_progress_lines_show_done_failed_rate_and_eta():
    progress = Progress(done=50, failed=2, total=200, elapsed_s=10.0, done_cost=30.0, total_cost=60.0)
    assert format_line(progress) == "progress: 50/200 done (25.0%), 2 failed, 5.0 runs/s, elapsed 10s, ETA 10s"
    stream = io.StringIO()
    printer = ProgressPrinter(stream=stream, live=False, interval_s=3600)
    printer.update(progress)
    printer.update(progress)  # within the interval: no second line
    printer.update(progress, force=True)
    assert stream.getvalue().count("progress:") == 2
