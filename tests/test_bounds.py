"""Work bounds: every run too big for the machine, or meaningless, is refused before any work."""

import resource
import subprocess
import sys

import pytest

from simcore import ConfigError, SimConfig, simulate
from simcore import bounds
from commit_sweeps.simcore_command import main

RUN = ["run", "--provider", "s3", "--catalog", "storage", "--num-tables", "1", "--fast-append-ratio", "1",
       "--inter-arrival-scale-ms", "100", "--seeds", "1"]


def _run(capsys, *extra, env_limit=None, monkeypatch=None):
    status = main(RUN + list(extra))
    captured = capsys.readouterr()
    return status, captured.out, captured.err.strip().splitlines()


@pytest.mark.parametrize("extra, field, words", [
    (["--duration-s", "1e8"], "duration_s", ["needs about", "above the limit", "--max-memory"]),
    (["--num-tables", "1000000000000"], "num_tables", ["at most 2147483647"]),
    (["--num-tables", str(2**70)], "num_tables", ["at most 2147483647"]),
    (["--inter-arrival-scale-ms", "0.01", "--arrivals", "exponential"], "inter_arrival_scale_ms",
     ["needs about", "SIMCORE_MAX_MEMORY"]),
    (["--inter-arrival-scale-ms", "1e308"], "inter_arrival_scale_ms", ["steady-state window"]),
    (["--seeds", str(2**64)], "seeds", ["<= 18446744073709551615"]),
    (["--max-memory", "lots"], "max_memory", ["512M"]),
])
def test_runs_too_big_or_meaningless_exit_2_with_one_line(capsys, extra, field, words):
    # Refused before any work: these would take gigabytes or hours if they ran.
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    status, out, err = _run(capsys, *extra)
    assert status == 2 and out == ""
    assert len(err) == 1 and err[0].startswith(f"error: {field}: ")
    for word in words:
        assert word in err[0]
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # kB: nothing was allocated


def test_a_small_limit_refuses_an_ordinary_run_and_names_where_the_limit_came_from(capsys, monkeypatch):
    status, _, err = _run(capsys, "--inter-arrival-scale-ms", "10", "--max-memory", "300M")
    assert status == 2 and "(--max-memory)" in err[0] and err[0].startswith("error: inter_arrival_scale_ms: 10.0")
    monkeypatch.setenv(bounds.MEMORY_LIMIT_ENV, "300M")
    status, _, err = _run(capsys, "--inter-arrival-scale-ms", "10")
    assert status == 2 and "($SIMCORE_MAX_MEMORY)" in err[0]
    # Raising the limit lets the same run through.
    status, out, _ = _run(capsys, "--inter-arrival-scale-ms", "500", "--duration-s", "1900", "--max-memory", "4G")
    assert status == 0 and "config" in out


def test_simulate_checks_the_bounds_itself():
    with pytest.raises(bounds.WorkBoundError) as error:
        simulate(SimConfig(duration_s=1e8))
    assert error.value.field == "duration_s"
    assert isinstance(error.value, ConfigError)
    with pytest.raises(bounds.WorkBoundError):
        simulate(SimConfig(inter_arrival_scale_ms=100, duration_s=1900), [1], max_memory_bytes=2**20)
    with pytest.raises(ConfigError, match="seed"):
        simulate(SimConfig(duration_s=1900), [2**64])


def test_estimate_is_close_above_what_the_workload_draws():
    from simcore.simulate import run_seed

    config = SimConfig(provider="instant", inter_arrival_scale_ms=50, duration_s=1900)
    work = bounds.estimate(config)
    workload, _ = run_seed(config, 3)
    assert len(workload) <= work.transactions <= 1.2 * len(workload)
    assert work.max_events >= len(workload) * 2
    assert bounds.PROCESS_BYTES < work.peak_bytes


def test_memory_estimate_is_an_upper_bound_of_a_measured_run(tmp_path):
    # A fresh process: peak resident size while running 200k transactions, minus before.
    script = (
        "import resource\n"
        "from simcore import SimConfig, simulate, bounds\n"
        "simulate(SimConfig(provider='instant', duration_s=1900, inter_arrival_scale_ms=1000), [1])\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024\n"
        "c = SimConfig(provider='instant', num_tables=100000, duration_s=3600, inter_arrival_scale_ms=18,\n"
        "              arrivals='exponential')\n"
        "simulate(c, [1])\n"
        "used = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before\n"
        "print(used, bounds.estimate(c).peak_bytes - bounds.PROCESS_BYTES)\n")
    used, estimated = map(float, subprocess.run([sys.executable, "-c", script], check=True, capture_output=True,
                                                text=True).stdout.split())
    assert used < estimated


@pytest.mark.parametrize("text, size", [("512M", 512 * 2**20), ("4G", 4 * 2**30), ("1.5GiB", int(1.5 * 2**30)),
                                        ("1e9", 10**9), ("262144k", 256 * 2**20)])
def test_sizes_parse(text, size):
    assert bounds.parse_size(text) == size


@pytest.mark.parametrize("text", ["", "lots", "-1G", "1k", "100M", "inf", "nanG"])
def test_bad_sizes_are_refused(text):
    with pytest.raises(ConfigError):
        bounds.parse_size(text)


def test_transactions_dir_naming_a_file_fails_before_simulating(capsys, tmp_path):
    existing = tmp_path / "a-file"
    existing.write_text("x")
    status, out, err = _run(capsys, "--duration-s", "1900", "--transactions-dir", str(existing))
    assert status == 2 and out == ""
    assert len(err) == 1 and "transactions_dir" in err[0] and "is a file" in err[0]


WRITERS = ["run", "--provider", "s3", "--catalog", "storage", "--num-tables", "10", "--fast-append-ratio", "0.9",
           "--seeds", "1"]


@pytest.mark.parametrize("extra, field", [
    # Unbounded, each would draw gigabytes (a billion writers: terabytes) before the first event.
    (["--writers", "1000000000", "--commit-interval-s", "60"], "writers"),
    (["--writers", "10", "--commit-interval-s", "1e-9"], "commit_interval_s"),
    (["--writers", "10", "--commit-interval-s", "60", "--maintenance-jobs", "2",
      "--maintenance-interval-s", "1e-9"], "maintenance_interval_s"),
    (["--writers", "1000000000", "--commit-interval-s", "1e12"], "writers"),
])
def test_writer_workloads_are_bounded_before_any_work(capsys, extra, field):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    status = main(WRITERS + extra)
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and err[0].startswith(f"error: {field}: ") and "needs about" in err[0]
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KB: nothing was drawn


def test_the_writer_estimate_is_an_upper_bound_of_what_the_workload_draws():
    import numpy as np
    from simcore.workload import draw_workload

    for writers, interval_s, jobs in ((50, 7.0, None), (2000, 1e5, None), (20, 60.0, 4)):
        extra = dict(maintenance_jobs=jobs, maintenance_interval_s=300.0) if jobs else {}
        config = SimConfig(writers=writers, commit_interval_s=interval_s, num_tables=3, **extra)
        drawn = len(draw_workload(config, np.random.default_rng(1)))
        assert drawn <= bounds.estimate(config).transactions <= drawn + writers + (jobs or 0)


def test_bench_is_bounded_by_duration_and_clients(capsys):
    # Unbounded, --duration-s 1e12 would grow by gigabytes a minute before answering.
    status = main(["bench", "--provider", "s3", "--operation", "cas", "--clients", "1-16", "--seeds", "1",
                   "--duration-s", "1e12"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and err[0].startswith("error: duration_s: ") and "needs about" in err[0]


def test_the_bench_estimate_is_above_what_a_run_records():
    from simcore.bench import _kernel_inputs, check_bench, run_clients
    from simcore.providers import PROVIDERS

    for name, operation in (("s3", "cas"), ("s3x", "append"), ("azure", "cas")):
        profile = PROVIDERS[name]
        latencies, _ = run_clients(profile, operation, 8, 60.0, 1)
        assert len(latencies) <= check_bench(_kernel_inputs(profile, operation), 8, 60.0) <= 10 * len(latencies)
