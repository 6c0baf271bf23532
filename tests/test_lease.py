"""One writer per experiment: the lease refuses a second live sweep, lapses when its holder stops, and is
changed only by compare-and-swap (flock on local disks, conditional PUT/DELETE on S3)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import boto3
import pytest
import ray

from commit_sweeps.sweep_command import sweep_main
from ray_jobs import Grid
from ray_jobs.lease import LEASE_FOLDER, Lease, LeaseHeld, LeaseLost
from ray_jobs.s3_location import s3_location
from ray_jobs.store import ResultsStore, StoreError
from probe_servers import free_port
from test_store import bare_aws_env, credentialed_uri, s3_endpoint, s3_env  # noqa: F401 (fixtures)

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


# -- an s3:// store that names its own endpoint and keys --------------------------------------------------

@pytest.mark.parametrize("keys", ["in the URI", "in the environment"])
def test_s3_leases_go_to_the_endpoint_and_keys_the_store_uri_names(s3_endpoint, bare_aws_env, monkeypatch,
                                                                   keys):  # noqa: F811
    # No AWS_ENDPOINT_URL: a lease that did not read the URI would go to AWS itself, with the user's keys.
    prefix = f"lease-keys-{keys.split()[-1].lower()}"
    uri = credentialed_uri(s3_endpoint, f"{prefix}/results")
    if keys == "in the environment":
        uri = uri.replace(uri[len("s3://"):uri.index("@") + 1], "")
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with Lease(uri, ["exp"]):
        s3 = boto3.client("s3", endpoint_url=s3_endpoint, aws_access_key_id="testing", aws_secret_access_key="testing",
                          region_name="us-east-1")
        held = s3.get_object(Bucket="results-bucket", Key=f"{prefix}/results/{LEASE_FOLDER}/exp.json")
        assert json.loads(held["Body"].read())["pid"] == os.getpid()
        with pytest.raises(LeaseHeld):
            Lease(uri, ["exp"]).acquire()
    assert "Contents" not in s3.list_objects_v2(Bucket="results-bucket", Prefix=f"{prefix}/")
    assert ResultsStore(uri).location().startswith("s3://results-bucket/" if keys != "in the URI" else "s3://***@")


def test_a_lease_that_cannot_reach_its_store_is_one_line_without_its_keys(bare_aws_env):  # noqa: F811
    uri = credentialed_uri(f"http://127.0.0.1:{free_port()}", "p")
    with pytest.raises(StoreError) as failed:
        Lease(uri, ["exp"]).acquire()
    message = str(failed.value)
    assert "\n" not in message and "s3://***@results-bucket/p?" in message and "p/_lease/exp.json" in message
    assert "wJal" not in message and "testing" not in message and "Traceback" not in message


def test_a_sweep_whose_store_fails_exits_2_in_one_line_without_its_keys(capsys):
    grid = Grid("tiny", fixed={"provider": "s3x", "runtime_median_ms": 20_000, "duration_s": 1200},
                swept={"num_tables": [1]})
    uri = credentialed_uri(f"http://127.0.0.1:{free_port()}", "p")
    assert sweep_main([grid], ["--store", uri, "--seeds", "1"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: store: 's3://***@results-bucket/p?") and error.endswith("\nNothing was run.\n")
    assert error.count("\n") == 2 and "wJal" not in error and "testing" not in error
    assert not ray.is_initialized()


@pytest.mark.parametrize("uri", [
    "s3://lab", "s3://lab/results", "s3://lab/results/", "s3://lab//deep/er/", "s3://lab/a%20b/c",
    "s3://AK:S%2FE%2BC@lab/p?endpoint_override=127.0.0.1:9000&scheme=http&region=eu-west-1",
    "s3://lab/p?endpoint_override=http://127.0.0.1:9000&region=us-east-1",
    "s3://lab/p?scheme=http&region=us-east-1&tls_verify_certificates=false",
])
def test_the_lease_reads_a_store_uri_as_pyarrow_does(uri):
    import pyarrow.fs as pafs

    filesystem, root = pafs.FileSystem.from_uri(uri if "region=" in uri else uri + "?region=us-east-1")
    options = filesystem.__reduce__()[1][0]  # the options pyarrow parsed (its pickled form)
    where = s3_location(uri)
    assert f"{where.bucket}/{where.prefix}".rstrip("/") == root.rstrip("/")
    assert where.key("_lease/x.json") == f"{root.rstrip('/')}/_lease/x.json".split("/", 1)[1]
    keys = (options["access_key"] or "", options["secret_key"] or "")
    assert (where.access_key or "", where.secret_key or "") == keys
    assert where.use_ssl == (options["scheme"] == "https")
    if options["endpoint_override"]:
        expected = options["endpoint_override"]
        assert where.endpoint_url == (expected if "://" in expected else f"{options['scheme']}://{expected}")
    else:
        assert where.endpoint_url is None
    assert "S%2FE" not in repr(where) and "S/E+C" not in repr(where)  # a repr in a traceback shows no key
