"""One writer per experiment: the lease refuses a second live sweep, lapses when its holder stops, and is
changed only by compare-and-swap (flock on local disks, conditional PUT/DELETE on S3)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import ray

from commit_sweeps.sweep_command import sweep_main
from ray_jobs import Grid
from ray_jobs.lease import LEASE_FOLDER, Lease, LeaseHeld, LeaseLost
from test_store import s3_endpoint, s3_env  # noqa: F401 (fixtures)

REPO_ROOT = Path(__file__).resolve().parents[1]


class Clock:
    def __init__(self, now=1_000_000.0):
        self.now = now

    def __call__(self):
        return self.now


def test_a_second_lease_on_the_same_experiment_is_refused_naming_the_holder(tmp_path):
    first = Lease(str(tmp_path), ["exp4c", "exp4a"])
    first.acquire()
    try:
        with pytest.raises(LeaseHeld) as refused:
            Lease(str(tmp_path), ["exp4b", "exp4c"]).acquire()
        message = str(refused.value)
        assert "'exp4c' is being swept by another driver" in message and f"pid {__import__('os').getpid()}" in message
        assert not (tmp_path / LEASE_FOLDER / "exp4b.json").exists()  # all or nothing
        with Lease(str(tmp_path), ["exp4b"]):  # disjoint experiments: fine
            pass
    finally:
        first.release()
    assert not (tmp_path / LEASE_FOLDER / "exp4c.json").exists()
    with Lease(str(tmp_path), ["exp4c"]):  # released: free again
        pass


def _foreign_lease(tmp_path, experiment, heartbeat_at, ttl_s=60.0):
    (tmp_path / LEASE_FOLDER).mkdir(exist_ok=True)
    (tmp_path / LEASE_FOLDER / f"{experiment}.json").write_text(json.dumps(
        {"owner": "x", "host": "another-host", "pid": 1, "pid_started": 0.0, "acquired_at": heartbeat_at - 10,
         "heartbeat_at": heartbeat_at, "ttl_s": ttl_s}))


def test_a_lease_whose_heartbeat_stopped_lapses_after_its_ttl(tmp_path):
    clock = Clock()
    _foreign_lease(tmp_path, "exp", heartbeat_at=clock.now - 30)
    with pytest.raises(LeaseHeld, match="last heartbeat 30 s ago"):
        Lease(str(tmp_path), ["exp"], clock=clock).acquire()
    clock.now += 31  # 61 s without a heartbeat: lapsed
    lease = Lease(str(tmp_path), ["exp"], clock=clock)
    lease.acquire()
    assert json.loads((tmp_path / LEASE_FOLDER / "exp.json").read_text())["owner"] != "x"
    lease.release()


def test_a_sigkilled_holder_on_this_host_lapses_at_once(tmp_path):
    script = (f"from ray_jobs.lease import Lease; Lease({str(tmp_path)!r}, ['exp']).acquire(); "
              f"print('held', flush=True); import time; time.sleep(600)")
    holder = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LeaseHeld):
            Lease(str(tmp_path), ["exp"]).acquire()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with Lease(str(tmp_path), ["exp"]):
        pass


def test_a_stalled_holder_that_was_taken_over_stops_writing(tmp_path):
    clock = Clock()
    stalled = Lease(str(tmp_path), ["exp"], ttl_s=10, clock=clock)
    stalled.acquire()
    stalled._stop.set()  # its heartbeat thread stalls
    clock.now += 11
    _foreign_lease(tmp_path, "exp", heartbeat_at=clock.now)  # someone took it over meanwhile
    with pytest.raises(LeaseLost, match="taken over"):
        stalled.renew()
    with pytest.raises(LeaseLost):
        stalled.check()
    stalled.release()  # leaves the new holder's lease alone
    assert json.loads((tmp_path / LEASE_FOLDER / "exp.json").read_text())["owner"] == "x"


def test_racing_takers_get_one_lease(tmp_path):
    _foreign_lease(tmp_path, "exp", heartbeat_at=0.0)  # lapsed long ago: everyone tries to take it over
    winners, barrier = [], threading.Barrier(8)

    def take():
        lease = Lease(str(tmp_path), ["exp"])
        barrier.wait()
        try:
            lease.acquire()
            winners.append(lease)
        except LeaseHeld:
            pass

    threads = [threading.Thread(target=take) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(winners) == 1
    winners[0].release()


def test_a_second_sweep_on_the_same_experiments_exits_2_before_ray_starts(tmp_path, capsys):
    grid = Grid("tiny", fixed={"provider": "s3x", "runtime_median_ms": 20_000, "duration_s": 1200},
                swept={"num_tables": [1]})
    with Lease(str(tmp_path / "store"), ["tiny"]):
        assert sweep_main([grid], ["--store", str(tmp_path / "store"), "--seeds", "1"]) == 2
    error = capsys.readouterr().err
    assert "'tiny' is being swept by another driver" in error and "Nothing was run." in error
    assert not ray.is_initialized()


def test_s3_leases_use_conditional_puts(s3_env, s3_endpoint, request):  # noqa: F811
    uri = f"s3://results-bucket/{request.node.name}"
    clock = Clock()
    first = Lease(uri, ["exp"], ttl_s=10, clock=clock)
    first.acquire()
    first._stop.set()
    with pytest.raises(LeaseHeld, match="pid"):
        Lease(uri, ["exp"], clock=clock).acquire()
    first.renew()  # its own version: accepted
    clock.now += 11
    taker = Lease(uri, ["exp"], clock=clock)
    taker.acquire()  # lapsed: taken over with If-Match on the lapsed version
    with pytest.raises(LeaseLost):
        first.renew()  # If-Match on its old version fails
    first.release()  # If-Match delete fails: the taker's lease stays
    with pytest.raises(LeaseHeld):
        Lease(uri, ["exp"], clock=clock).acquire()
    taker.release()
    with Lease(uri, ["exp"], clock=clock):
        pass


def test_a_second_knee_search_of_the_same_experiment_exits_2(tmp_path, capsys):
    from commit_sweeps.knee_command import knee_main

    grid = Grid("knee_lease", fixed={"provider": "s3x", "runtime_median_ms": 20_000, "duration_s": 1200},
                swept={"num_tables": [1], "inter_arrival_scale_ms": [100]})
    args = ["--experiment", "knee_lease", "--seeds", "1", "--duration-s", "1200", "--min-scale-ms", "30",
            "--max-scale-ms", "300", "--store", str(tmp_path / "store")]
    with Lease(str(tmp_path / "store"), ["knee_lease_knee"]):
        assert knee_main({"knee_lease": grid}, args) == 2
    error = capsys.readouterr().err
    assert "'knee_lease_knee' is being swept by another driver" in error and not ray.is_initialized()
