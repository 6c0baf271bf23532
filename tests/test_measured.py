"""The measured latency model, provider profile files, ``bench`` and ``fit``."""

from __future__ import annotations

import json
import pathlib
import sys
from dataclasses import replace

import pytest

from simcore import SimConfig, simulate
from simcore.bench import bench, parse_clients
from commit_sweeps.simcore_command import main
from simcore.errors import ConfigError
from simcore.fit import read_table
from simcore.profiles import (canonical_json, dump_profile, load_profile, measured_profile, measured_profiles,
                              profile_from_json)
from simcore.providers import PROVIDERS

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
SEED000 = str(REPO_ROOT / "simcore" / "measured" / "seed000_conditional_writes.csv")  # a copy of ../shared/data's
BENCH_KEYS = {"provider", "operation", "clients", "goodput_ops", "failure_rate", "latency_mean_ms",
              "latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "seeds"}


# -- profiles ----------------------------------------------------------------

def test_a_builtin_profile_round_trips_through_toml(tmp_path):
    path = tmp_path / "s3.toml"
    path.write_text(dump_profile(PROVIDERS["s3"], "a comment"))
    assert load_profile(str(path)) == PROVIDERS["s3"]
    x = tmp_path / "s3x.toml"
    x.write_text(dump_profile(measured_profile("s3x")))
    assert load_profile(str(x)) == measured_profile("s3x")


@pytest.mark.parametrize("text, field", [
    ('name = "x"\nfloor_ms = 1\n[read]\nmedian_ms = 1\nsigma = 0.1\n[write]\nbase_ms = 1\nms_per_mib = 1\nsigma = 0.1\n'
     '[cas]\nmedian_ms = -3\nsigma = 0.1\n', "cas.median_ms"),
    ('name = "x"\nfloor_ms = 1\n[read]\nmedian_ms = 1\nsigma = 0.1\n[write]\nbase_ms = 1\nms_per_mib = 1\nsigma = 0.1\n',
     "cas"),
    ('name = "x"\nfloor_ms = 1\n[read]\nmedian_ms = 1\nsigma = 0.1\nobserved_at = 2\n[write]\nbase_ms = 1\n'
     'ms_per_mib = 1\nsigma = 0.1\n[cas]\nmedian_ms = 3\nsigma = 0.1\n', "read.observed_at"),
    ('name = "x"\nfloor_ms = 1\n[read]\nmedian_ms = 1\nsigma = 0.1\n[write]\nbase_ms = 1\nms_per_mib = 1\nsigma = 0.1\n'
     '[cas]\nmedian_ms = 3\nsigma = 0.1\nfailed_multiplier = 0.5\n', "cas.failed_multiplier"),
    ('name = "x"\nfloor_ms = 1\n[read]\nmedian_ms = 1\nsigma = 0.1\n[write]\nbase_ms = 1\nms_per_mib = 1\nsigma = 0.1\n'
     '[cas]\nmedian_ms = 3\nsigma = 0.1\nmystery = 1\n', "cas.mystery"),
    ('name = "a b"\n', "name"),
    ('name = "x"\nfloor_ms = "fast"\n', "floor_ms"),
])
def test_bad_profile_files_name_the_field(tmp_path, capsys, text, field):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as error:
        load_profile(str(path))
    assert error.value.field == f"{path}: {field}"
    status = main(["bench", "--provider-file", str(path), "--operation", "cas", "--clients", "1", "--seeds", "1"])
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1 and field in err


def test_unparseable_and_missing_files_are_one_line_errors(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n")
    for path in (bad, tmp_path / "missing.toml"):
        status = main(["run", "--provider-file", str(path), "--catalog", "storage", "--num-tables", "1",
                       "--fast-append-ratio", "1", "--inter-arrival-scale-ms", "100", "--seeds", "1"])
        err = capsys.readouterr().err.strip()
        assert status == 2 and len(err.splitlines()) == 1 and "provider_file" in err


# -- configs -----------------------------------------------------------------

def test_reference_configs_keep_their_hashes():
    plain = SimConfig(provider="s3", num_tables=10, fast_append_ratio=0.9, inter_arrival_scale_ms=100,
                      protocol="published")
    assert plain.config_hash == "f6741f1855404752"  # as tests/test_commit_options.py pins it
    assert SimConfig(provider="s3", num_tables=10, fast_append_ratio=0.9, inter_arrival_scale_ms=100,
                     latency_model="reference", protocol="published") == plain


def test_the_hash_follows_the_profile_content_not_its_name():
    measured = SimConfig(provider="s3", latency_model="measured")
    assert measured.provider_profile == canonical_json(measured_profile("s3"))
    assert measured.config_hash != SimConfig(provider="s3").config_hash
    assert SimConfig.from_dict(measured.to_dict()) == measured
    faster = replace(measured_profile("s3"), cas=replace(measured_profile("s3").cas, median_ms=10.0))
    custom = SimConfig(provider="s3", provider_profile=canonical_json(faster))
    assert custom.config_hash not in (measured.config_hash, SimConfig(provider="s3").config_hash)
    # The same figures written in another key order are the same config.
    reordered = json.dumps(json.loads(custom.provider_profile), sort_keys=False, indent=1)
    assert SimConfig(provider="s3", provider_profile=reordered).config_hash == custom.config_hash


@pytest.mark.parametrize("changes, field", [
    (dict(latency_model="guess"), "latency_model"),
    (dict(provider="instant", latency_model="measured"), "provider"),
    (dict(provider="other", provider_profile=canonical_json(PROVIDERS["s3"])), "provider"),
    (dict(provider="s3", provider_profile="{not json"), "provider_profile"),
    (dict(provider="s3", catalog="append", latency_model="measured"), "provider"),
])
def test_latency_fields_are_validated(changes, field):
    with pytest.raises(ConfigError) as error:
        SimConfig(**changes)
    assert error.value.field == field


def test_a_profile_equal_to_the_builtin_one_simulates_the_same():
    plain = SimConfig(provider="azure", num_tables=2, inter_arrival_scale_ms=200, duration_s=1900)
    same = plain.replace(provider_profile=canonical_json(PROVIDERS["azure"]))
    assert simulate(plain, [3]) == simulate(same, [3])


def test_the_measured_model_changes_the_catalog_simulation():
    plain = SimConfig(provider="s3", num_tables=1, inter_arrival_scale_ms=300, duration_s=1900)
    reference, = simulate(plain, [1])
    measured, = simulate(plain.replace(latency_model="measured"), [1])
    assert measured["commit_latency_p50_ms"] != reference["commit_latency_p50_ms"]
    assert measured["retries_mean"] != reference["retries_mean"]


def test_a_read_observed_when_sent_conflicts_more():
    # Only the read's observation point differs: an earlier snapshot can only lose more CAS races.
    base = replace(PROVIDERS["s3"], name="probe")
    late = SimConfig(provider="probe", provider_profile=canonical_json(base), num_tables=1,
                     inter_arrival_scale_ms=300, duration_s=1900)
    early = late.replace(provider_profile=canonical_json(replace(base, read_observed_at=0.0)))
    r_late, r_early = simulate(late, [1, 2]), simulate(early, [1, 2])
    assert sum(r["retries_mean"] for r in r_early) > sum(r["retries_mean"] for r in r_late)


# -- bench ---------------------------------------------------------------------

def test_parse_clients():
    assert parse_clients("1-16") == list(range(1, 17))
    assert parse_clients("1,2,4") == [1, 2, 4]
    for bad in ("0", "4-2", "x", "1,1", ""):
        with pytest.raises(ConfigError):
            parse_clients(bad)


def test_one_client_never_fails_and_its_rate_is_one_over_its_latency():
    result, = bench(PROVIDERS["s3"], "cas", [1], [1], duration_s=200)
    assert result.failure_rate == 0
    assert result.goodput_ops * result.latency_mean_ms / 1000 == pytest.approx(1.0, rel=0.02)


def test_more_clients_fail_more_but_one_success_at_a_time():
    results = bench(PROVIDERS["s3x"], "cas", [1, 2, 4, 8], [1], duration_s=60)
    rates = [r.failure_rate for r in results]
    assert rates == sorted(rates) and rates[-1] > 0.7
    ops = [r.successes + r.failures for r in results]
    assert ops == sorted(ops)


def test_slow_failures_keep_the_failure_rate_down():
    base = measured_profile("s3x")
    fast = bench(replace(base, cas=replace(base.cas, failed_multiplier=1.0)), "cas", [8], [1], duration_s=60)[0]
    slow = bench(replace(base, cas=replace(base.cas, failed_multiplier=20.0)), "cas", [8], [1], duration_s=60)[0]
    assert slow.failure_rate < fast.failure_rate - 0.2


def test_bench_json_has_one_line_per_client_count_with_every_key(capsys):
    status = main(["bench", "--provider", "s3x", "--operation", "append", "--clients", "1-3", "--duration-s", "30",
                   "--seeds", "1,2", "--json", "--latency-model", "measured"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert status == 0 and len(lines) == 3
    rows = [json.loads(line) for line in lines]
    assert all(BENCH_KEYS <= set(row) for row in rows)
    assert [row["clients"] for row in rows] == [1, 2, 3] and rows[0]["seeds"] == [1, 2]
    assert rows[0]["provider"] == "s3x" and rows[0]["operation"] == "append"


@pytest.mark.parametrize("argv, field", [
    (["--provider", "s3", "--operation", "append"], "operation"),
    (["--provider", "s3", "--operation", "swap"], "operation"),
    (["--provider", "s3", "--operation", "cas", "--latency-model", "psychic"], "latency_model"),
    (["--provider", "nope", "--operation", "cas"], "provider"),
])
def test_bench_rejects_bad_input_in_one_line(capsys, argv, field):
    status = main(["bench", *argv, "--clients", "1", "--seeds", "1"])
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1 and field in err


def test_the_measured_model_reproduces_seed_000_on_a_few_points():
    # The whole table (every store, operation and client count) is in studies/seed000_table/README.md
    # (studies/seed000_table/bench_table.py); here a few cells: failure rate within 5 points, goodput within 10%.
    table = {p: read_table(SEED000, p) for p in ("s3", "s3x", "gcp", "azurex")}
    for provider, operation, clients in (("s3", "cas", 8), ("s3x", "cas", 4), ("s3x", "append", 16), ("gcp", "cas", 4),
                                         ("gcp", "cas", 16), ("azurex", "cas", 16)):
        seed = next(s for s in table[provider][operation] if s.clients == clients)
        got, = bench(measured_profile(provider), operation, [clients], [1, 2], duration_s=120)
        assert abs(got.failure_rate - seed.failure_rate) < 0.05
        assert got.goodput_ops == pytest.approx(seed.goodput_ops, rel=0.10)


def test_every_store_seed_000_measured_has_a_measured_profile():
    assert set(measured_profiles()) == {"s3", "s3x", "azure", "azurex", "gcp"}
    for name in ("s3x", "azure", "azurex"):
        assert measured_profile(name).supports_append


# -- fit -------------------------------------------------------------------------

def test_fit_command_writes_a_loadable_profile(tmp_path, capsys):
    out = tmp_path / "s3.toml"
    status = main(["fit", "--table", SEED000, "--provider", "s3", "--max-evaluations", "9", "--out", str(out),
                   "--quiet"])
    assert status == 0
    profile = load_profile(str(out))
    assert profile.name == "s3" and profile.read_median_ms == PROVIDERS["s3"].read_median_ms
    text = out.read_text()
    assert "fitted by: python -m simcore fit" in text
    # The header says how well the rows determine the terms, and that the spread is not the model's own error.
    assert "the model's own error is not in these ranges" in text and "predict at 16 clients" in text
    assert profile_from_json(canonical_json(profile)) == profile


def test_fit_command_rejects_bad_input(tmp_path, capsys):
    bad = tmp_path / "samples.csv"
    bad.write_text("operation,latency_ms,succeeded,clients\ncas,-1,1,1\n")
    assert main(["fit", "--samples", str(bad), "--base", "s3"]) == 2
    assert "latency_ms" in capsys.readouterr().err
    assert main(["fit", "--table", SEED000, "--provider", "nope"]) == 2
    assert "provider" in capsys.readouterr().err


# -- sweeps and the knee search ---------------------------------------------------

def test_a_sweep_under_another_model_is_another_experiment(tmp_path):
    sys.path.insert(0, str(REPO_ROOT))  # the sweeps scripts, as a checkout runs them
    from ray_jobs.latency_variant import latency_variant
    from sweeps.exp4c import GRID

    assert latency_variant("exp4c", "reference", None).apply(GRID) is GRID
    measured = latency_variant("exp4c", "measured", None)
    assert measured.apply(GRID).experiment == "exp4c-measured"
    configs = GRID.configs(quick=True, **measured.overrides)
    assert len(configs) == len(GRID.configs(quick=True))
    assert all(c.latency_model == "measured" and c.provider_profile for c in configs)
    path = tmp_path / "mine.toml"
    path.write_text(dump_profile(replace(PROVIDERS["s3"], name="mine")))
    mine = latency_variant("exp4c", "reference", str(path))
    assert mine.apply(GRID).experiment == "exp4c-profile-mine"
    # The provider axis collapses to the file's store.
    assert {c.provider for c in GRID.configs(quick=True, **mine.overrides)} == {"mine"}


def test_a_bad_latency_flag_stops_the_sweep_before_anything_runs(tmp_path, capsys):
    import ray

    from commit_sweeps.sweep_command import sweep_main
    from ray_jobs import Grid

    grid = Grid("g", swept={"num_tables": [1]}, fixed={"provider": "s3"})
    store = tmp_path / "store"
    assert sweep_main([grid], ["--store", str(store), "--latency-model", "psychic"]) == 2
    assert "latency_model: 'psychic' is not allowed" in capsys.readouterr().err
    assert sweep_main([grid], ["--store", str(store), "--provider-file", str(tmp_path / "none.toml")]) == 2
    assert "provider_file" in capsys.readouterr().err
    assert not store.exists() and not ray.is_initialized()
