"""Sweeps bounded and ended cleanly: oversized plans and unusable stores stop before Ray starts,
one huge point fails by name on Ray, and a killed driver's Ray processes are stopped later."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
import ray

from commit_sweeps.sweep_command import sweep_main
from ray_jobs import Grid
from ray_jobs.orphans import OWNER_FILE, cleanup_orphans, mark_session, stale_sessions

REPO_ROOT = Path(__file__).resolve().parents[1]
SMALL = {"provider": "s3x", "catalog": "storage", "runtime_median_ms": 20_000, "duration_s": 1200}


def _clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "SWEEPS_STORE")}
    return {**env, "PYTHONPATH": str(REPO_ROOT), **extra}


@pytest.mark.parametrize("flags, message", [
    (["--quick", "--seeds", "100000", "--max-memory", "8G"],
     "seeds: 100000 makes 9000000 runs, whose plan alone needs about 18.4 GB"),
    (["--quick", "--seeds", f"{2**63}-{2**63}"], "seeds: 9223372036854775808 is not allowed; expected seeds <="),
    (["--quick", "--seeds", "1", "--duration-s", "1e9"], "exp4c: duration_s: 1000000000.0 needs about"),
    (["--quick", "--seeds", "1", "--max-memory", "100M"], "max_memory: '100M' is not allowed; expected a size of at"),
    (["--quick", "--seeds", "1", "--max-memory", "260M"], "above the limit of 273 MB (--max-memory)"),
])
def test_oversized_sweeps_exit_2_before_ray_starts(tmp_path, flags, message):
    started = time.monotonic()
    result = subprocess.run([sys.executable, "sweeps/exp4c.py", "--store", str(tmp_path / "store"), *flags],
                            cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, env=_clean_env())
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Nothing was run." in result.stderr
    assert "Ray" not in result.stdout and not (tmp_path / "store").exists()
    assert time.monotonic() - started < 60


@pytest.mark.parametrize("make", ["file", "under_a_file"])
def test_an_unusable_store_exits_2_before_ray_starts(tmp_path, capsys, make):
    grid = Grid("tiny", fixed=SMALL, swept={"num_tables": [1]})
    (tmp_path / "a-file").write_text("not a store")
    store = tmp_path / "a-file" if make == "file" else tmp_path / "a-file" / "results"
    assert sweep_main([grid], ["--store", str(store), "--seeds", "1"]) == 2
    error = capsys.readouterr().err
    assert "this path is a file" in error or "is not writable" in error
    assert "Nothing was run." in error and not ray.is_initialized()


@pytest.mark.slow
def test_a_point_too_big_for_any_ray_node_fails_by_name_and_the_rest_is_stored(tmp_path, capsys, monkeypatch):
    # The driver's limit lets the point through; Ray's node offers less memory than its estimate.
    from simcore import SimConfig, bounds

    huge = SimConfig(**{**SMALL, "inter_arrival_scale_ms": 1.0, "arrivals": "exponential", "duration_s": 3600})
    need = bounds.estimate(huge).peak_bytes
    grid = Grid("bounded", fixed={**SMALL, "arrivals": "exponential"},
                swept={"inter_arrival_scale_ms": [1000.0], "num_tables": [1]})
    big = Grid("bounded_big", fixed={**SMALL, "arrivals": "exponential", "duration_s": 3600},
               swept={"inter_arrival_scale_ms": [1.0]})
    import ray_jobs.fanout as fanout
    monkeypatch.setattr(fanout, "_largest_node_memory", lambda: need - 1)
    status = sweep_main([grid, big], ["--store", str(tmp_path / "s"), "--seeds", "1", "--max-memory", "64G",
                                      "--max-parallel", "1"])
    out = capsys.readouterr()
    assert status == 1
    assert "more than any Ray node offers" in out.out + out.err
    assert "bounded: 1 runs: 1 run" in out.out and "bounded_big: 1 runs: 0 run, 0 skipped" in out.out


def _ray_processes_of(session: str) -> list[int]:
    found = []
    for process in psutil.process_iter(["pid"]):
        try:
            if any(f.path.startswith(session + "/") for f in process.open_files()):
                found.append(process.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


@pytest.mark.slow
def test_a_sigkilled_drivers_ray_processes_are_stopped_by_status_cleanup(tmp_path):
    # A private Ray temp dir (short: Ray's socket paths must fit in 107 bytes): only this
    # test's sessions are looked at.
    temp = Path(tempfile.mkdtemp(prefix="cs-", dir="/tmp"))
    env = _clean_env(RAY_TMPDIR=str(temp))
    driver = subprocess.Popen(
        [sys.executable, "-c", "import time; from ray_jobs.connect import connect_ray; connect_ray(1); "
                               "print('up', flush=True); time.sleep(600)"],
        cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert driver.stdout.readline().strip() == "up"
        (marker,) = [m for m in (temp / "ray").glob(f"session_*/{OWNER_FILE}") if not m.parent.is_symlink()]
        session = str(marker.parent)
        assert json.loads(marker.read_text())["pid"] == driver.pid
        assert stale_sessions(str(temp / "ray")) == []  # its driver is alive: not touched
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    time.sleep(2)
    left = _ray_processes_of(session)
    assert left, "the killed driver left no Ray process: the case this test covers did not occur"
    result = subprocess.run([sys.executable, "-m", "ray_jobs", "status", "--cleanup", "--store", str(tmp_path)],
                            cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert "stopped" in result.stdout and "left by killed sweep drivers" in result.stdout
    deadline = time.monotonic() + 10
    while _ray_processes_of(session) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _ray_processes_of(session) == []
    assert not marker.exists()
    shutil.rmtree(temp, ignore_errors=True)


def test_unmarked_and_live_sessions_are_never_touched(tmp_path):
    live = tmp_path / "ray" / "session_live"
    live.mkdir(parents=True)
    (tmp_path / "ray" / "session_foreign").mkdir()
    mark_session(str(live))  # owned by this (live) process
    dead = tmp_path / "ray" / "session_dead"
    dead.mkdir()
    (dead / OWNER_FILE).write_text(json.dumps({"pid": os.getpid(), "create_time": 1.0}))  # a recycled pid
    assert stale_sessions(str(tmp_path / "ray")) == [str(dead)]
    assert cleanup_orphans(str(tmp_path / "ray"), grace_s=0.1) == []  # nothing runs in it
    assert not (dead / OWNER_FILE).exists() and (live / OWNER_FILE).exists()
