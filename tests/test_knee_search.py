"""The knee search: the executor's protocol on synthetic curves, a real run on Ray, the stored rows and the summary.

The protocol tests drive ``ray_jobs.search`` (the one executor, which the knee
search and ``commit-sweeps capacity`` share) with synthetic futures: no Ray.
The end-to-end test runs ``sweeps/knee.py``'s entry point on a local Ray with
a tiny experiment (short runs: runtime median 20 s, 1200 simulated s) whose
curves end in each of the three statuses, then checks the store against the
contract the dashboard reads.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
import ray

from simcore import SimConfig
from ray_jobs import Grid, ResultsStore
from simcore.bisection import SearchRange, search_sequentially
from simcore.usable import ABOVE_SEARCH_RANGE, BELOW_SEARCH_RANGE, ERROR, FOUND, SEARCHING
from commit_sweeps.knee_command import knee_main
from ray_jobs.knee_curves import curves_from_grid, full_seed_points, measured_point
from ray_jobs.knee_search import curves_done, default_probes_per_curve, outcome_of, run_knee_search
from ray_jobs.knee_summary import read_summary, run_summary, summary_curves
from ray_jobs.schema import CONFIG_COLUMNS, RESULTS_SCHEMA, unmeasured_metrics
from ray_jobs.search import (SCREENING_TOLERANCE, CurveSpec, Events, Executor, SeedRun, run_seed, screens,
                              search_curves)

REPO_ROOT = Path(__file__).resolve().parents[1]
FAST = {"catalog": "storage", "runtime_median_ms": 20_000.0, "duration_s": 1200.0}
RANGE = SearchRange(20.0, 5000.0, 0.02)

# -- the executor's protocol, without Ray -------------------------------------

KNEES_MS = {1: 100.0, 5: 1000.0}  # synthetic: the curve with n tables fails at scales <= KNEES_MS[n]


def synthetic_row(config: SimConfig, seed: int) -> dict:
    """A step curve: passes above the knee; seed 1 is 3% optimistic about where, so screening has noise to face."""
    knee_ms = KNEES_MS[config.num_tables] * (0.97 if seed == 1 else 1.0)
    success = 1.0 if config.inter_arrival_scale_ms > knee_ms else 0.5
    return {**unmeasured_metrics(), "seed": seed, "success_rate": success, "vo_success_rate": math.nan,
            "throughput_cps": 1000.0 / config.inter_arrival_scale_ms * success + seed / 1e6}


class Synthetic:
    """A submit function over ``synthetic_row``: futures already done, or done by threads in a shuffled order."""

    def __init__(self, threads: int = 0, seed: int = 0, fail=lambda config, seed: None):
        self.calls: list = []
        self.in_flight = self.most_in_flight = 0
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(threads) if threads else None
        self._random = random.Random(seed)
        self._fail = fail

    def _run(self, config: SimConfig, seed: int, delay: float) -> SeedRun:
        time.sleep(delay)
        with self._lock:
            self.in_flight -= 1
        error = self._fail(config, seed)
        return SeedRun(None, error=error) if error else SeedRun(synthetic_row(config, seed), 0.01, time.time())

    def __call__(self, config: SimConfig, seed: int) -> Future:
        with self._lock:
            self.calls.append((config.num_tables, config.inter_arrival_scale_ms, seed))
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        if self._pool is None:
            future = Future()
            future.set_result(self._run(config, seed, 0.0))
            return future
        return self._pool.submit(self._run, config, seed, self._random.random() / 200)


def two_curves():
    grid = Grid("synthetic", swept={"num_tables": (1, 5), "inter_arrival_scale_ms": (100,)},
                fixed={"provider": "s3x", **FAST})
    return curves_from_grid(grid)


def specs(curves, known=None):
    return [CurveSpec(c.curve_id, c.config_at, (known or {}).get(c.curve_id, {})) for c in curves]


def search(curves, seeds=(1, 2), submit=None, slots=2, known=None, probes=1, events=Events()):
    return search_curves(specs(curves, known), seeds, RANGE, submit or Synthetic(), slots, lambda n: probes, events)


def test_many_curves_at_once_end_as_each_would_alone_whatever_the_completion_order():
    one, five = two_curves()
    together = search([one, five])
    alone = [search([one])[0], search([five])[0]]
    shuffled = search([one, five], submit=Synthetic(threads=4, seed=7), slots=4)
    for results in (alone, shuffled):
        for a, b in zip(together, results):
            assert (a.status, a.step, sorted(a.rows)) == (b.status, b.step, sorted(b.rows))
    for result, knee_ms in zip(together, KNEES_MS.values()):
        assert result.status == FOUND and result.step.within_tolerance
        assert result.step.failing.scale_ms <= knee_ms < result.step.knee.scale_ms


def test_with_one_seed_there_is_no_screening_and_the_probes_are_the_sequential_searchs():
    one, five = two_curves()
    submit = Synthetic()
    results = search([one, five], seeds=(1,), submit=submit)
    for curve, result in zip((one, five), results):
        def measure(scale_ms):
            config = curve.config_at(scale_ms)
            return measured_point(scale_ms, config, [synthetic_row(config, 1)])
        step, points = search_sequentially(measure, RANGE)
        assert result.step == step
        assert [scale for tables, scale, _ in submit.calls if tables == curve.template.num_tables] == \
            [p.scale_ms for p in points]


def test_screening_runs_one_seed_far_from_the_knee_and_every_seed_near_it():
    (one, _) = two_curves()
    submit = Synthetic()
    (result,) = search([one], seeds=(1, 2, 3), submit=submit)
    assert result.status == FOUND and result.step.within_tolerance
    far = {scale for _, scale, _ in submit.calls if abs(math.log(scale / KNEES_MS[1])) > math.log(1.25)}
    assert far and all(seed == 1 for _, scale, seed in submit.calls if scale in far)
    # Seed 1 alone puts the knee 3% low; the seed mean's knee is found all the same.
    assert result.step.failing.scale_ms <= KNEES_MS[1] < result.step.knee.scale_ms
    # Each (scale, seed) ran once; the screening's one-seed points are not points of the curve.
    assert len(set(submit.calls)) == len(submit.calls) == sum(len(by_seed) for by_seed in result.rows.values())
    full = full_seed_points(result.rows.items(), lambda item: item[1], (1, 2, 3))
    assert sorted(result.probes) == sorted(scale for scale, _ in full) and len(full) < len(result.rows)
    again = search([one], seeds=(1, 2, 3), submit=Synthetic(), probes=1)  # the same, again: deterministic
    assert again[0].step == result.step
    # No screening with one seed, a tolerance of 10% or more, or a range no wider than one screened bracket.
    assert SCREENING_TOLERANCE == 0.10 and screens((1, 2), RANGE)
    assert not screens((1,), RANGE) and not screens((1, 2), SearchRange(20.0, 5000.0, 0.1))
    assert not screens((1, 2), SearchRange(100.0, 109.0, 0.02))


def test_at_most_slots_simulations_run_at_once():
    submit = Synthetic(threads=8, seed=3)
    search(two_curves(), seeds=(1, 2, 3), submit=submit, slots=3, probes=3)
    assert submit.most_in_flight <= 3 and len(submit.calls) > 20


def test_stored_rows_resume_the_search_and_a_finished_curve_costs_nothing():
    one, five = two_curves()
    rows: list = []
    events = Events(on_seed=lambda key, config, run: rows.append((key, config.inter_arrival_scale_ms, run.row)))
    first = search([one, five], events=events)
    # The store holds the first half of what was run: a rerun runs only the rest, and ends where the first did.
    known: dict = {}
    for key, scale, row in rows[:len(rows) // 2]:
        known.setdefault(key, {}).setdefault(scale, {})[row["seed"]] = row
    submit = Synthetic()
    resumed = search([one, five], submit=submit, known=known)
    assert [r.step for r in resumed] == [r.step for r in first]
    assert len(submit.calls) == len(rows) - len(rows) // 2
    assert sum(r.simulations_run for r in resumed) == len(submit.calls)
    # Everything stored: nothing runs, and the knee search says so before it starts anything.
    done: dict = {}
    for key, scale, row in rows:
        done.setdefault(key, {}).setdefault(scale, {})[row["seed"]] = row
    submit = Synthetic()
    assert [r.step for r in search([one, five], submit=submit, known=done)] == [r.step for r in first]
    assert submit.calls == [] and curves_done([one, five], (1, 2), RANGE, done) == [True, True]
    assert curves_done([one, five], (1, 2), RANGE, known).count(False) >= 1


def test_a_simulation_that_raises_stops_its_curve_and_the_others_go_on():
    one, five = two_curves()
    fail = lambda config, seed: "seed 2: MemoryError: too many tables" if config.num_tables == 5 and seed == 2 else None
    finished = []
    results = search([one, five], submit=Synthetic(fail=fail), events=Events(on_curve=finished.append))
    assert results[0].status == FOUND
    assert results[1].status == ERROR and results[1].error.endswith("ms: seed 2: MemoryError: too many tables")
    assert {r.key for r in finished} == {one.curve_id, five.curve_id}

    def broken(config, seed):  # a future that raises: the worker died beyond its retries
        future = Future()
        future.set_exception(RuntimeError("worker lost\nmore lines"))
        return future
    (result,) = search([one], submit=broken)
    assert result.status == ERROR and "failed beyond retries: RuntimeError: worker lost" in result.error


def test_an_interrupted_search_says_where_each_curve_stands():
    one, five = two_curves()
    inner = Synthetic()

    def submit(config, seed):
        if len(inner.calls) == 6:
            raise KeyboardInterrupt
        return inner(config, seed)
    executor = Executor(specs([one, five]), (1, 2), RANGE, submit, 2)
    with pytest.raises(KeyboardInterrupt):
        executor.run()
    assert [r.status for r in executor.results()] == [SEARCHING, SEARCHING]


def test_several_probes_of_one_curve_split_its_bracket_in_one_round():
    (one, _) = two_curves()
    submit = Synthetic()
    search([one], seeds=(1,), submit=submit, slots=3, probes=3)
    scales = sorted(scale for _, scale, _ in submit.calls[:3])
    assert scales[1] == 316.228 and scales[0] == pytest.approx(math.sqrt(20 * 316.228), rel=1e-5)
    assert default_probes_per_curve(parallelism=2, curves=4) == 1
    assert default_probes_per_curve(parallelism=16, curves=4) == 3
    assert default_probes_per_curve(parallelism=1000, curves=1) == 7


def test_the_summary_merges_runs_curve_by_curve_and_reads_back_by_its_own_keys(tmp_path):
    one, five = two_curves()
    store = ResultsStore(str(tmp_path))
    run = run_knee_search([one, five], (1, 2), RANGE, store, submit=(Synthetic(), 2), log=lambda line: None)
    both = run_summary("synthetic", run.outcomes, RANGE)
    pending = outcome_of(one, Executor(specs([one]), (1, 2, 3), RANGE, None, 1).results()[0], (1, 2, 3))
    merged = run_summary("synthetic", [pending], RANGE, previous=both)
    by_id = {c["curve_id"]: c for c in merged["curves"]}
    assert by_id[one.curve_id]["status"] == "searching" and by_id[one.curve_id]["seeds"] == [1, 2, 3]
    assert by_id[five.curve_id] == {c["curve_id"]: c for c in both["curves"]}[five.curve_id]
    assert merged["totals"]["curves"] == 2 and merged["knee_experiment"] == "synthetic_knee"
    entry = {c["curve_id"]: c for c in both["curves"]}[five.curve_id]
    assert entry["grid_points_same_resolution"] == 280 and entry["grid_simulations_same_resolution"] == 560
    assert entry["simulations"] > 2 * entry["points"]  # the screening's one-seed points are counted too
    assert entry["bracket"]["rate_width"] <= 0.02
    json.dumps(merged, allow_nan=False)
    # The one reader reads what the one writer wrote.
    curves, problems = summary_curves(json.loads(json.dumps(both)))
    assert problems == [] and [(c.fixed, c.status, c.simulations, c.knee_rate_cps) for c in curves] == \
        [(e["fixed"], e["status"], e["simulations"], e["knee_rate_cps"]) for e in both["curves"]]
    assert curves[0].search_range == (20.0, 5000.0, 0.02)
    # The rows went to the store under <experiment>_knee, one per simulation.
    assert store.experiments() == ["synthetic_knee"]
    table = store.scan(["synthetic_knee"]).table
    assert table.num_rows == run.simulations_run == entry["simulations"] + \
        {c["curve_id"]: c for c in both["curves"]}[one.curve_id]["simulations"]
    assert run.trials == len(set(table.column("config_hash").to_pylist()))  # points measured, screening's too


# -- a real run on Ray ---------------------------------------------------

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


def test_knee_main_searches_on_ray_and_stores_what_the_dashboard_reads(tmp_path, capsys):
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
        (every_scale,) = [v for k, v in means.items() if dict(k)["provider"] == entry["fixed"]["provider"]
                          and dict(k)["num_tables"] == entry["fixed"]["num_tables"]]
        assert entry["simulations"] == sum(len(v[2]) for v in every_scale.values())
        # The screening's one-seed points are stored but are not points of the curve.
        assert all(seeds in ([1], [1, 2]) for _, _, seeds in every_scale.values())
        by_scale = {scale: v for scale, v in every_scale.items() if v[2] == [1, 2]}
        assert entry["points"] == len(by_scale)
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

    # The run on Ray made the same decisions as the same search run here, one simulation at a time.
    def inline(config, seed):
        future = Future()
        future.set_result(run_seed(config, seed))
        return future
    curves = curves_from_grid(TINY, duration_s=1200.0)
    here = search_curves([CurveSpec(c.curve_id, c.config_at) for c in curves], (1, 2), TINY_RANGE, inline, 1)
    by_id = {c["curve_id"]: c for c in summary["curves"]}
    for curve, result in zip(curves, here):
        entry = by_id[curve.curve_id]
        assert (entry["status"], entry["knee_scale_ms"], entry["points"], entry["simulations"]) == (
            result.status, result.step.knee.scale_ms if result.step.knee else None, len(result.probes),
            sum(len(by_seed) for by_seed in result.rows.values()))

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
