"""The knee search on Ray Tune: the searcher's protocol, a real run, the stored rows and the summary.

The protocol tests drive ``KneeSearcher`` by hand, as Tune does (suggest,
then on_trial_complete with the trial's report), on synthetic curves: no
Ray. The end-to-end test runs ``sweeps/knee.py``'s entry point on a local
Ray with a tiny experiment (short runs: runtime median 20 s, 1200 simulated
s) whose curves end in each of the three statuses, then checks the store
against the contract the dashboard reads.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import ray

from simcore import SimConfig, simulate
from ray_jobs import Grid, ResultsStore
from simcore.bisection import SearchRange, search_sequentially
from simcore.usable import ABOVE_SEARCH_RANGE, BELOW_SEARCH_RANGE, FOUND
from ray_jobs.knee_cli import knee_main
from ray_jobs.knee_curves import curves_from_grid, measured_point, seed_outcome
from ray_jobs.knee_search import KneeSearcher, default_probes_per_curve
from ray_jobs.knee_summary import read_summary, run_summary
from ray_jobs.schema import CONFIG_COLUMNS, RESULTS_SCHEMA

REPO_ROOT = Path(__file__).resolve().parents[1]
FAST = {"catalog": "storage", "runtime_median_ms": 20_000.0, "duration_s": 1200.0}
RANGE = SearchRange(20.0, 5000.0, 0.02)

# -- the searcher's protocol, without Ray -------------------------------------

KNEES_MS = {1: 100.0, 5: 1000.0}  # synthetic: the curve with n tables fails at scales <= KNEES_MS[n]


def synthetic_report(trial_config: dict) -> dict:
    """What ``evaluate_point`` would report, for a step curve: passes above the knee."""
    config = SimConfig.from_dict(trial_config["config"])
    knee_ms = KNEES_MS[config.num_tables]
    success = 1.0 if config.inter_arrival_scale_ms > knee_ms else 0.5
    return {"per_seed": [{"metrics": {"seed": seed, "success_rate": success, "vo_success_rate": math.nan,
                                      "throughput_cps": 1000.0 / config.inter_arrival_scale_ms * success + seed / 1e6}}
                         for seed in trial_config["seeds"]], "error": None}


def two_curves():
    grid = Grid("synthetic", swept={"num_tables": (1, 5), "inter_arrival_scale_ms": (100,)},
                fixed={"provider": "s3x", **FAST})
    return curves_from_grid(grid)


def drive(searcher: KneeSearcher, report=synthetic_report, max_trials: int = 500) -> list[dict]:
    """Run the searcher to the end as Tune does with two trials at a time; returns the trial configs in order."""
    in_flight, issued = {}, []
    for number in range(max_trials):
        suggestion = searcher.suggest(f"t{number}")
        if suggestion == KneeSearcher.FINISHED:
            return issued
        if suggestion is not None:
            in_flight[f"t{number}"] = suggestion
            issued.append(suggestion)
        if suggestion is None or len(in_flight) == 2:
            trial_id, trial_config = next(iter(in_flight.items()))
            del in_flight[trial_id]
            searcher.on_trial_complete(trial_id, report(trial_config))
    raise AssertionError("the searcher did not finish")


def test_the_searcher_alternates_curves_waits_while_they_are_busy_and_finishes():
    one, five = two_curves()
    searcher = KneeSearcher([one, five], seeds=(1, 2), search_range=RANGE)
    first, second = searcher.suggest("a"), searcher.suggest("b")
    assert {first["curve_id"], second["curve_id"]} == {one.curve_id, five.curve_id}
    assert searcher.suggest("c") is None  # one probe per curve, both in flight
    assert first["seeds"] == [1, 2] and first["scale_ms"] == 316.228
    assert SimConfig.from_dict(first["config"]) == one.config_at(316.228)
    searcher.on_trial_complete("a", synthetic_report(first))
    third = searcher.suggest("c")
    assert third["curve_id"] == first["curve_id"] and third["scale_ms"] != first["scale_ms"]


def test_the_searcher_makes_the_same_decisions_as_the_sequential_search():
    one, five = two_curves()
    searcher = KneeSearcher([one, five], seeds=(1, 2), search_range=RANGE)
    issued = drive(searcher)
    outcomes = {o.curve.template.num_tables: o for o in searcher.outcomes()}
    for tables, knee_ms in KNEES_MS.items():
        outcome = outcomes[tables]
        assert outcome.status == FOUND and outcome.step.within_tolerance
        assert outcome.step.failing.scale_ms <= knee_ms < outcome.step.knee.scale_ms
        assert outcome.simulations_run == outcome.simulations_stored == 2 * len(outcome.points)
        curve = outcome.curve

        def measure(scale_ms):
            report = synthetic_report({"config": curve.config_at(scale_ms).to_dict(), "seeds": [1, 2]})
            return measured_point(scale_ms, [seed_outcome(curve.template, s["metrics"]) for s in report["per_seed"]])
        step, points = search_sequentially(measure, RANGE)
        assert [t["scale_ms"] for t in issued if t["curve_id"] == curve.curve_id] == [p.scale_ms for p in points]
        assert step == outcome.step
    assert [o.curve for o in searcher.take_newly_finished()] == [one, five]
    assert searcher.take_newly_finished() == []  # each finished curve is announced once


def test_stored_evidence_resumes_the_search_where_it_stopped():
    one, five = two_curves()
    full = KneeSearcher([one], seeds=(1, 2), search_range=RANGE)
    scales = [t["scale_ms"] for t in drive(full)]
    # The store holds the first three points, and one seed of the fourth.
    evidence = {one.curve_id: {}}
    for scale in scales[:4]:
        seeds = [1] if scale == scales[3] else [1, 2]
        report = synthetic_report({"config": one.config_at(scale).to_dict(), "seeds": seeds})
        evidence[one.curve_id][scale] = {s["metrics"]["seed"]: seed_outcome(one.template, s["metrics"])
                                         for s in report["per_seed"]}
    resumed = KneeSearcher([one], seeds=(1, 2), search_range=RANGE, evidence=evidence)
    issued = drive(resumed)
    assert issued[0]["scale_ms"] == scales[3] and issued[0]["seeds"] == [2]  # only the missing seed
    assert [t["scale_ms"] for t in issued] == scales[3:]
    (outcome,) = resumed.outcomes()
    assert outcome.step == full.outcome(one.curve_id).step
    assert outcome.simulations_run == 1 + 2 * len(scales[4:]) and outcome.simulations_stored == 2 * len(scales)
    # a finished curve costs nothing
    done = KneeSearcher([one], seeds=(1, 2), search_range=RANGE, evidence=resumed.evidence())
    assert done.curves_left() == 0 and done.suggest("x") == KneeSearcher.FINISHED


def test_a_trial_stopped_before_it_reported_is_proposed_again_and_a_failing_one_stops_its_curve():
    one, five = two_curves()
    searcher = KneeSearcher([one, five], seeds=(1,), search_range=RANGE)
    first, second = searcher.suggest("a"), searcher.suggest("b")
    searcher.on_trial_complete("a", None)  # interrupted: no report
    again = searcher.suggest("c")
    assert (again["curve_id"], again["scale_ms"]) == (first["curve_id"], first["scale_ms"])
    searcher.on_trial_complete("b", {"per_seed": [], "error": "seed 1: MemoryError: too many tables"})
    searcher.on_trial_complete("c", None, error=True)
    outcomes = {o.curve.curve_id: o for o in searcher.outcomes()}
    assert outcomes[second["curve_id"]].status == "error"
    assert "MemoryError" in outcomes[second["curve_id"]].error
    assert outcomes[first["curve_id"]].status == "error"  # failed beyond Tune's retries
    assert searcher.suggest("d") == KneeSearcher.FINISHED


def test_several_probes_of_one_curve_split_its_bracket():
    (one, _) = two_curves()
    searcher = KneeSearcher([one], seeds=(1,), search_range=RANGE, probes_per_curve=3)
    scales = sorted(searcher.suggest(t)["scale_ms"] for t in "abc")
    assert scales[1] == 316.228 and scales[0] == pytest.approx(math.sqrt(20 * 316.228), rel=1e-5)
    assert searcher.suggest("d") is None
    assert default_probes_per_curve(parallelism=2, curves=4) == 1
    assert default_probes_per_curve(parallelism=16, curves=4) == 3
    assert default_probes_per_curve(parallelism=1000, curves=1) == 7


def test_the_summary_merges_runs_curve_by_curve():
    one, five = two_curves()
    searcher = KneeSearcher([one, five], seeds=(1, 2), search_range=RANGE)
    drive(searcher)
    both = run_summary("synthetic", searcher.outcomes(), RANGE)
    only_one = KneeSearcher([one], seeds=(1, 2, 3), search_range=RANGE)
    merged = run_summary("synthetic", only_one.outcomes(), RANGE, previous=both)
    by_id = {c["curve_id"]: c for c in merged["curves"]}
    assert by_id[one.curve_id]["status"] == "searching" and by_id[one.curve_id]["seeds"] == [1, 2, 3]
    assert by_id[five.curve_id] == {c["curve_id"]: c for c in both["curves"]}[five.curve_id]
    assert merged["totals"]["curves"] == 2 and merged["knee_experiment"] == "synthetic_knee"
    entry = {c["curve_id"]: c for c in both["curves"]}[five.curve_id]
    assert entry["grid_points_same_resolution"] == 280 and entry["grid_simulations_same_resolution"] == 560
    assert entry["simulations"] == 2 * entry["points"] and entry["bracket"]["rate_width"] <= 0.02
    json.dumps(merged, allow_nan=False)


# -- a real run on Ray Tune ---------------------------------------------------

TINY = Grid("knee_test", swept={"provider": ("s3x", "gcp"), "num_tables": (1, 5), "inter_arrival_scale_ms": (100,)},
            fixed=FAST)
TINY_RANGE = SearchRange(30.0, 300.0, 0.05)
TINY_ARGS = ["--experiment", "knee_test", "--seeds", "2", "--duration-s", "1200", "--min-scale-ms", "30",
             "--max-scale-ms", "300", "--tolerance", "0.05", "--max-parallel", "2"]


def seed_means(rows: list[dict]) -> dict:
    """Per curve (config without the scale): scale -> (mean success that counts, mean throughput, seeds)."""
    groups: dict = {}
    for row in rows:
        curve = tuple((name, row[name]) for name in CONFIG_COLUMNS if name != "inter_arrival_scale_ms")
        success = row["vo_success_rate"] if row["fast_append_ratio"] < 1 else row["success_rate"]
        groups.setdefault(curve, {}).setdefault(row["inter_arrival_scale_ms"], []).append(
            (success, row["throughput_cps"], row["seed"]))
    return {curve: {scale: (sum(s for s, _, _ in v) / len(v), sum(t for _, t, _ in v) / len(v),
                            sorted(seed for _, _, seed in v)) for scale, v in by_scale.items()}
            for curve, by_scale in groups.items()}


def test_knee_main_searches_on_ray_tune_and_stores_what_the_dashboard_reads(tmp_path, capsys):
    store_uri = str(tmp_path / "store")
    assert knee_main({"knee_test": TINY}, TINY_ARGS + ["--store", store_uri]) == 0
    assert not ray.is_initialized()
    output = capsys.readouterr().out
    assert "4 curves to search, 0 already done" in output
    assert "curves: 4: 1 above_search_range, 2 below_search_range, 1 found" in output
    # one line per finished curve, saying what was found
    assert "provider=s3x num_tables=5: above_search_range: passes even at the fastest scale searched, 30 ms" in output
    assert "provider=gcp num_tables=1: below_search_range: fails even at the slowest scale searched, 300 ms" in output
    assert "provider=s3x num_tables=1: found: knee " in output

    store = ResultsStore(store_uri)
    assert store.experiments() == ["knee_test_knee"]
    scan = store.scan(["knee_test_knee"])
    assert scan.table.schema == RESULTS_SCHEMA and scan.duplicates_dropped == 0 and not scan.unreadable
    rows = scan.table.to_pylist()
    for row in rows:
        config = SimConfig.from_dict({name: row[name] for name in CONFIG_COLUMNS})
        assert row["config_hash"] == config.config_hash and row["experiment"] == "knee_test_knee"
        assert row["package_version"] and row["wall_s"] > 0 and row["finished_at"].tzinfo is not None
        assert TINY_RANGE.min_scale_ms <= row["inter_arrival_scale_ms"] <= TINY_RANGE.max_scale_ms

    summary = read_summary(store_uri, "knee_test")
    assert summary["knee_experiment"] == "knee_test_knee"
    statuses = {(c["fixed"]["provider"], c["fixed"]["num_tables"]): c["status"] for c in summary["curves"]}
    assert statuses == {("s3x", 1): FOUND, ("s3x", 5): ABOVE_SEARCH_RANGE, ("gcp", 1): BELOW_SEARCH_RANGE,
                        ("gcp", 5): BELOW_SEARCH_RANGE}

    # The dashboard's reading of the rows alone agrees with the summary, curve by curve.
    means = seed_means(rows)
    assert len(means) == 4
    for entry in summary["curves"]:
        (by_scale,) = [v for k, v in means.items() if dict(k)["provider"] == entry["fixed"]["provider"]
                       and dict(k)["num_tables"] == entry["fixed"]["num_tables"]]
        assert all(seeds == [1, 2] for _, _, seeds in by_scale.values())
        assert entry["simulations"] == 2 * len(by_scale) == sum(len(v[2]) for v in by_scale.values())
        passing = {scale: v for scale, v in by_scale.items() if v[0] > 0.95}
        if entry["status"] == BELOW_SEARCH_RANGE:
            assert not passing and max(by_scale) == TINY_RANGE.max_scale_ms
            continue
        knee_scale = max(passing, key=lambda scale: passing[scale][1])
        assert entry["knee_scale_ms"] == knee_scale and entry["knee_rate_cps"] == pytest.approx(passing[knee_scale][1])
        failing_below = [scale for scale in by_scale if scale < knee_scale and scale not in passing]
        if entry["status"] == ABOVE_SEARCH_RANGE:
            assert not failing_below and knee_scale == TINY_RANGE.min_scale_ms
            continue
        failing = max(failing_below)  # the nearest failing point below the knee: the bracket's other side
        assert entry["bracket"]["failing_scale_ms"] == failing and knee_scale / failing <= 1.05
        assert by_scale[failing][1] <= passing[knee_scale][1] * 1.05

    # Tune's run made the same decisions as the search run point by point in this process.
    (s3x_one,) = [c for c in curves_from_grid(TINY, duration_s=1200.0)
                  if (c.template.provider, c.template.num_tables) == ("s3x", 1)]

    def measure(scale_ms):
        config = s3x_one.config_at(scale_ms)
        return measured_point(scale_ms, [seed_outcome(config, r) for r in simulate(config, seeds=[1, 2])])
    step, points = search_sequentially(measure, TINY_RANGE)
    (entry,) = [c for c in summary["curves"] if c["curve_id"] == s3x_one.curve_id]
    assert entry["knee_scale_ms"] == step.knee.scale_ms and entry["points"] == len(points)

    # A rerun finds every curve done: no Ray, no new file.
    files = store.data_files("knee_test_knee")
    assert knee_main({"knee_test": TINY}, TINY_ARGS + ["--store", store_uri]) == 0
    assert "0 curves to search, 4 already done" in capsys.readouterr().out
    assert store.data_files("knee_test_knee") == files and not ray.is_initialized()


def test_bad_input_exits_2_before_anything_runs(tmp_path):
    result = subprocess.run([sys.executable, "sweeps/knee.py", "--experiment", "exp4c", "--quick", "--tolerance", "5",
                             "--store", str(tmp_path / "store")], cwd=REPO_ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 2
    assert "tolerance: 5.0 is not allowed; expected a relative width between 0.001 and 1" in result.stderr
    assert not (tmp_path / "store").exists()
    result = subprocess.run([sys.executable, "sweeps/knee.py", "--experiment", "exp9"], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "invalid choice: 'exp9'" in result.stderr


def test_help_names_every_experiment_and_flag():
    result = subprocess.run([sys.executable, "sweeps/knee.py", "--help"], cwd=REPO_ROOT, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0
    for word in ("--experiment", "--quick", "--store", "--seeds", "--duration-s", "--max-parallel", "--tolerance",
                 "exp4c (90 curves, quick 4)", "exp4a", "exp4b_zipf", "gcs_throttle", "retry_policies",
                 "append_catalog"):
        assert word in result.stdout
