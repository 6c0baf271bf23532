"""``python -m simcore run`` and SimConfig: bad input refused in one line, the outputs, the config hash."""

import json
import subprocess
import sys

import pytest

from simcore import ConfigError, SimConfig
from commit_sweeps.simcore_command import main

BASE = ["run", "--provider", "s3", "--catalog", "storage", "--num-tables", "2", "--fast-append-ratio", "0.9",
        "--inter-arrival-scale-ms", "500", "--duration-s", "1900", "--seeds", "1"]


def _with(flag, value):
    args = list(BASE)
    if flag in args:
        args[args.index(flag) + 1] = value
    else:
        args += [flag, value]
    return args


@pytest.mark.parametrize("flag, value, field, allowed", [
    ("--provider", "s4", "provider", "one of s3x, s3, azurex, azure, gcp, r2, instant"),
    ("--catalog", "lakehouse", "catalog", "one of storage, service, append, rest, ducklake, unity"),
    ("--retry-policy", "sometimes", "retry_policy", "one of immediate, backoff, split"),
    ("--cas-throttle-per-s", "-1", "cas_throttle_per_s", "a rate > 0"),
    ("--num-tables", "0", "num_tables", "an integer >= 1"),
    ("--num-tables", "x", "--num-tables", "an integer"),
    ("--inter-arrival-scale-ms", "0", "inter_arrival_scale_ms", "a number > 0"),
    ("--inter-arrival-scale-ms", "-5", "inter_arrival_scale_ms", "a number > 0"),
    ("--inter-arrival-scale-ms", "nan", "inter_arrival_scale_ms", "a number > 0"),
    ("--fast-append-ratio", "1.5", "fast_append_ratio", "a fraction in [0, 1]"),
    ("--fast-append-ratio", "-0.1", "fast_append_ratio", "a fraction in [0, 1]"),
    ("--table-dist", "pareto", "table_distribution", "one of uniform, zipf"),
    ("--arrivals", "poisson", "arrivals", "one of lognormal, exponential"),
    ("--duration-s", "600", "duration_s", "> 2 x the warm-up"),
    ("--retry", "-1", "retry", "an integer in [0, 1000]"),
    ("--real-conflict-probability", "2", "real_conflict_probability", "a probability in [0, 1]"),
    ("--seeds", "1,a", "seeds", "a count N (seeds 1..N), or a list of seeds and ranges"),
    ("--seeds", "-3", "seeds", "a count N (seeds 1..N), or a list of seeds and ranges"),
    ("--seeds", "0", "seeds", "a count N (seeds 1..N)"),
    ("--seeds", "1,1", "seeds", "distinct seeds"),
    ("--seeds", "1-200000", "seeds", "at most 100,000 seeds"),
    ("--catalog-latency-ms", "5", "catalog_latency_ms", "no value with catalog=storage"),
    ("--zipf-alpha", "2", "zipf_alpha", "no value unless --table-dist zipf"),
    ("--window-s", "0,2000", "window_s", "0 <= START < END <= the duration (1900 s)"),
    ("--window-s", "60", "window_s", "START,END seconds"),
    ("--window-s", "60,0", "window_s", "START,END seconds"),
    ("--writer-phase-seed", "3", "writer_phase_seed", "no value unless writers is set"),
])
def test_bad_input_exits_2_with_one_line_naming_field_value_and_allowed(capsys, flag, value, field, allowed):
    assert main(_with(flag, value)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert field in lines[0] and allowed in lines[0]
    assert value.lstrip("-") in lines[0]


def test_service_catalog_needs_positive_latency(capsys):
    args = _with("--catalog", "service") + ["--catalog-latency-ms", "0"]
    assert main(args) == 2
    assert "catalog_latency_ms" in capsys.readouterr().err


def test_missing_required_flag_exits_2(capsys):
    assert main(["run", "--provider", "s3"]) == 2
    assert "--num-tables" in capsys.readouterr().err


def test_json_output_one_object_per_seed_with_config_and_metrics(capsys):
    assert main(_with("--seeds", "3,4") + ["--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["seed"] for r in rows] == [3, 4]
    for row in rows:
        assert row["provider"] == "s3" and row["num_tables"] == 2 and row["fast_append_ratio"] == 0.9
        assert 0 <= row["success_rate"] <= 1
        for key in ("n_txns", "n_committed", "n_aborted", "aborted_max_retries", "aborted_validation",
                    "throughput_cps", "commit_latency_mean_ms", "commit_latency_p50_ms", "commit_latency_p95_ms",
                    "commit_latency_p99_ms", "retries_mean", "fa_success_rate", "fa_throughput_cps",
                    "fa_commit_latency_mean_ms", "fa_commit_latency_p99_ms", "vo_success_rate",
                    "vo_throughput_cps", "vo_commit_latency_mean_ms", "vo_commit_latency_p99_ms",
                    "conflicts_same_table", "conflicts_catalog_only", "config_hash"):
            assert key in row
        assert row["ma_success_rate"] is None  # absent type: null, not NaN (valid JSON)


def test_readable_table_has_a_row_per_seed(capsys):
    assert main(_with("--seeds", "1,2")) == 0
    out = capsys.readouterr().out.splitlines()
    assert "window [900, 1000) s" in out[0]
    assert len(out) == 4 and out[2].split()[0] == "1" and out[3].split()[0] == "2"



def test_a_window_summarises_a_real_runs_first_minute_from_a_cold_start(capsys):
    # 14 writers every 4 s from phases in [0, 4): each has 15 commits due in [0, 60) s, all finished long
    # before the simulated hour ends.
    writers = ["run", "--provider", "s3", "--catalog", "storage", "--num-tables", "1", "--fast-append-ratio", "1",
               "--writers", "14", "--commit-interval-s", "4", "--duration-s", "3600", "--seeds", "1,2"]
    assert main([*writers, "--window-s", "0,60", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["window_start_s"], r["window_end_s"], r["n_txns"], r["writer_n_txns"]) for r in rows] == [
        (0.0, 60.0, 210, 210)] * 2
    assert main([*writers, "--json"]) == 0  # the steady-state window: [900, 2700) s, 14 x 450 calls
    steady = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["n_txns"] for r in steady] == [6300, 6300] and "window_start_s" not in steady[0]
    assert main([*writers, "--window-s", "0,60"]) == 0
    assert "window [0, 60) s" in capsys.readouterr().out.splitlines()[0]


def test_a_phase_seed_runs_every_seed_at_one_pattern_of_phases(capsys):
    # 12 writers every 8 s: the pattern of phases, not the store, decides how often two writers' calls meet
    # near the onset; with a phase seed each run seed differs only in its latencies.
    writers = ["run", "--provider", "s3", "--catalog", "storage", "--num-tables", "1", "--fast-append-ratio", "1",
               "--writers", "12", "--commit-interval-s", "8", "--duration-s", "3600", "--seeds", "1,2",
               "--window-s", "0,120", "--json"]
    assert main([*writers, "--writer-phase-seed", "0"]) == 0
    fixed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert main(writers) == 0
    drawn = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["writer_phase_seed"] for r in fixed] == [0, 0] and drawn[0]["writer_phase_seed"] is None
    assert fixed[0]["config_hash"] == fixed[1]["config_hash"] != drawn[0]["config_hash"]
    assert [r["n_txns"] for r in fixed] == [180, 180]  # 12 writers x 15 calls due in [0, 120) s
    assert main([*writers, "--writer-phase-seed", "-1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "writer_phase_seed" in err[0] and "from 0 to 2^63 - 1" in err[0]


def test_a_window_replaces_only_the_steady_state_set(capsys):
    assert main(_with("--window-s", "0,60") + ["--metric-set", "heatmap"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "window_s" in err[0] and "--metric-set heatmap" in err[0]


def test_module_entry_point_runs():
    result = subprocess.run([sys.executable, "-m", "simcore", "run", *BASE[1:], "--json"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["seed"] == 1


def test_config_hash_depends_on_content_only():
    a = SimConfig(provider="gcp", num_tables=5, inter_arrival_scale_ms=100)
    b = SimConfig(inter_arrival_scale_ms=100.0, num_tables=5, provider="gcp")
    assert a == b and a.config_hash == b.config_hash
    assert a.config_hash != a.replace(num_tables=6).config_hash
    assert SimConfig.from_dict(a.to_dict()) == a


def test_mode_specific_fields_are_normalised():
    assert SimConfig(catalog="service").catalog_latency_ms == 10.0
    assert SimConfig(table_distribution="zipf").zipf_alpha == 1.5
    assert SimConfig(num_tables=2).zipf_alpha is None


@pytest.mark.parametrize("changes, field", [
    (dict(num_tables=2.5), "num_tables"),
    (dict(num_tables=True), "num_tables"),
    (dict(inter_arrival_scale_ms="100"), "inter_arrival_scale_ms"),
    (dict(fast_append_ratio=0.8, merge_append_ratio=0.3), "merge_append_ratio"),
    (dict(table_distribution="zipf", zipf_alpha=0), "zipf_alpha"),
    (dict(runtime_median_ms=0), "runtime_median_ms"),
])
def test_config_rejects_bad_values(changes, field):
    with pytest.raises(ConfigError) as error:
        SimConfig(**changes)
    assert error.value.field == field


def test_unknown_field_is_rejected():
    with pytest.raises(ConfigError) as error:
        SimConfig.from_dict({"provider": "s3", "tables": 3})
    assert error.value.field == "tables"


def test_transactions_dir_writes_one_parquet_per_seed(tmp_path, capsys):
    import pyarrow.parquet as pq

    assert main(_with("--seeds", "1,2") + ["--transactions-dir", str(tmp_path)]) == 0
    files = sorted(p.name for p in tmp_path.iterdir())
    assert len(files) == 2 and files[0].endswith("-seed1.parquet")
    table = pq.read_table(tmp_path / files[0])
    summary = capsys.readouterr().out.splitlines()[2].split()
    in_window = table.filter(table.column("in_window"))
    assert str(in_window.num_rows) == summary[1]  # the txns column of seed 1


def test_throttle_flag_applies_the_documented_limit_to_gcs_only(capsys):
    gcs = ["run", "--provider", "gcp", "--catalog", "storage", "--num-tables", "2", "--fast-append-ratio", "1",
           "--inter-arrival-scale-ms", "2000", "--duration-s", "1900", "--seeds", "1", "--json"]
    assert main(gcs + ["--throttle-object-writes"]) == 0
    assert json.loads(capsys.readouterr().out)["cas_throttle_per_s"] == 1.0
    s3 = [("s3" if a == "gcp" else a) for a in gcs]
    assert main(s3 + ["--throttle-object-writes"]) == 0
    assert json.loads(capsys.readouterr().out)["cas_throttle_per_s"] is None


def test_transactions_dir_runs_each_seed_once(tmp_path, capsys, monkeypatch):
    """The files and the summary come from one run per seed, not one run for each (the run's cost twice)."""
    import pyarrow.parquet as pq

    from simcore import engine

    runs = []
    real_run = engine.run

    def counting_run(*args, **kwargs):
        runs.append(1)
        return real_run(*args, **kwargs)

    monkeypatch.setattr(engine, "run", counting_run)
    assert main(_with("--seeds", "1,2,3") + ["--json", "--transactions-dir", str(tmp_path)]) == 0
    assert len(runs) == 3
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    for row in rows:  # each file is the run its row summarises
        path, = tmp_path.glob(f"*-seed{row['seed']}.parquet")
        table = pq.read_table(path)
        assert table.filter(table.column("in_window")).num_rows == row["n_txns"]
