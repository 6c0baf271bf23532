"""How long the dashboard takes to build for a full store, and to load in a browser, against a baseline.

Targets: building the site for the full exp4 store (~4,000 rows) plus the
comparison experiments (gcs_throttle 360 configs, retry_policies 900,
append_catalog 1,080, x 3 seeds, and a knee search over exp4c) in at most
10 s, and the page loading on loopback in at most 2 s. This script prints
the figures beside every baseline in ``benchmarks/dashboard_build_baseline.json``
taken with the same settings (``benchmarks/baseline.py``); it does not
assert them.

    python -m benchmarks.dashboard_build                    # synthetic full-size store in a temp dir
    python -m benchmarks.dashboard_build --store ./results  # an existing store (e.g. a real sweep)
    python -m benchmarks.dashboard_build --source simulate --store /tmp/exp4-store   # real rows (minutes)

A synthetic store has the exp4 grids of seed 001 (exp4a, exp4b, exp4c and the
Zipf variants of 4a/4b: 1,860 configs) times ``--seeds`` rows, with the full
column set and per-table lists, and metrics from a simple saturation curve:
the same shape and size as a sweep's output, so the build does the same work.
``--source simulate`` runs ``simcore.simulate`` at a short duration instead.
The comparison experiments (``--comparison-seeds``, default 3; 0 leaves them out) take
their grids from sweeps/gcs_throttle.py, retry_policies.py and
append_catalog.py, and ``exp4c_knee`` is a bisection of each exp4c curve's
synthetic success curve down to 2% (with its summary, ``_knee/exp4c.json``,
in the keys ``ray_jobs/knee_summary.py`` writes).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # run from a checkout, as a script too

from benchmarks.baseline import add_baseline_flags, compare_and_save  # noqa: E402
from dashboards.site import DATA_FILE, render_site, write_site  # noqa: E402
from dashboards.snapshot import read_store  # noqa: E402
from ray_jobs.knee_curves import knee_experiment_name  # noqa: E402
from ray_jobs.store import ResultsStore  # noqa: E402
from commit_sweeps.flags import add_seeds_flag, add_store_flag  # noqa: E402
from simcore.usable import ABOVE_SEARCH_RANGE, BELOW_SEARCH_RANGE, FOUND, passes, success_metric  # noqa: E402

BASELINE_PATH = os.path.join(ROOT, "benchmarks", "dashboard_build_baseline.json")
WHAT = ("benchmarks/dashboard_build.py figures: the store's rows, then median seconds of the in-process build "
        "(read + compute + write), of `python -m dashboards build`, and of the page's load in Chromium")

SCALES_MS = (20, 50, 100, 200, 300, 400, 500, 1000, 2000, 5000)
TABLES = (1, 2, 5, 10, 20, 50)
CAS_LATENCIES_MS = (1, 10, 50, 120)
PROVIDERS = ("s3x", "s3", "azurex", "azure", "gcp")
# Rough single-table capacities (c/s) for the synthetic saturation curves.
CAPACITY_CPS = {"s3x": 15.0, "s3": 2.4, "azurex": 2.5, "azure": 2.4, "gcp": 0.7}


def exp4_grid() -> dict:
    """experiment -> list of SimConfig field dicts, as seed 001 swept them (docs/reference/glossary.md)."""
    service = [{"provider": "s3", "catalog": "service", "catalog_latency_ms": float(latency), "num_tables": tables,
                "inter_arrival_scale_ms": float(scale)}
               for tables in TABLES for latency in CAS_LATENCIES_MS for scale in SCALES_MS]
    storage = [{"provider": provider, "catalog": "storage", "num_tables": tables, "fast_append_ratio": mix,
                "inter_arrival_scale_ms": float(scale)}
               for provider in PROVIDERS for tables in TABLES for mix in (1.0, 0.9, 0.5) for scale in SCALES_MS]
    zipf = {"table_distribution": "zipf", "zipf_alpha": 1.5}
    return {
        "exp4a": [dict(c, fast_append_ratio=1.0) for c in service],
        "exp4b": [dict(c, fast_append_ratio=0.9) for c in service],
        "exp4c": storage,
        "exp4a_zipf": [dict(c, fast_append_ratio=1.0, **zipf) for c in service],
        "exp4b_zipf": [dict(c, fast_append_ratio=0.9, **zipf) for c in service],
    }


def synthetic_metrics(config, seed: int) -> dict:
    """Plausible metrics for a config: a saturation curve with seed-to-seed noise."""
    import random

    rng = random.Random(f"{config.config_hash}-{seed}")
    if config.catalog == "service":
        capacity = 1000.0 / (4 * config.catalog_latency_ms + 150) * (1 + math.log(config.num_tables))
    else:
        capacity = CAPACITY_CPS[config.provider] * (1 + 0.6 * math.log(config.num_tables))
    capacity *= rng.uniform(0.97, 1.03)
    # The comparison experiments' settings, as rough factors: enough to give each view a visible difference.
    if config.catalog == "append":
        capacity *= 1.4
    if config.cas_throttle_per_s is not None:
        capacity = min(capacity, 0.9 * config.cas_throttle_per_s)
    policy_factor = {None: 1.0, "backoff": 1.05, "split": 1.12}[config.retry_policy]
    capacity *= policy_factor
    offered_cps = 1000.0 / config.inter_arrival_scale_ms
    load = offered_cps / capacity
    success = 1.0 / (1.0 + load ** 4)
    vo_share = 1.0 - config.fast_append_ratio
    n_txns = int(offered_cps * (config.duration_s - 2 * config.warmup_s))
    latency_ms = 150.0 * (1 + load)
    tables = config.num_tables
    weights = [1.0 / (rank ** (config.zipf_alpha or 0.0)) for rank in range(1, tables + 1)]
    per_table = [int(n_txns * w / sum(weights)) for w in weights]
    metrics = {
        "n_arrivals": n_txns, "n_txns": n_txns, "n_committed": int(n_txns * success),
        "n_aborted": n_txns - int(n_txns * success), "success_rate": success,
        "throughput_cps": offered_cps * success, "commit_latency_mean_ms": latency_ms,
        "commit_latency_p50_ms": latency_ms * 0.9, "commit_latency_p95_ms": latency_ms * 2,
        "commit_latency_p99_ms": latency_ms * 3, "retries_mean": load,
        "fa_n_txns": int(n_txns * config.fast_append_ratio), "fa_success_rate": success,
        "fa_throughput_cps": offered_cps * success * config.fast_append_ratio,
        "fa_commit_latency_mean_ms": latency_ms, "fa_commit_latency_p99_ms": latency_ms * 3,
        "table_n_txns": per_table, "table_n_committed": [int(n * success) for n in per_table],
        "table_success_rate": [success] * tables, "table_conflicts_same_table": [int(n * load) for n in per_table],
        "table_conflicts_catalog_only": [int(n * load / 2) for n in per_table],
    }
    if vo_share > 0:
        metrics.update({"vo_n_txns": int(n_txns * vo_share), "vo_success_rate": success ** 3,
                        "vo_throughput_cps": offered_cps * vo_share * success ** 3,
                        "vo_commit_latency_mean_ms": latency_ms * 10 * (1 + load),
                        "vo_commit_latency_p99_ms": latency_ms * 40 * (1 + load) / policy_factor ** 2})
    if config.cas_throttle_per_s is not None:
        metrics["cas_throttled"] = int(n_txns * load / 3)
    return metrics


def _passes(config, seeds: int) -> bool:
    metric = success_metric(config)
    return passes(statistics.mean(synthetic_metrics(config, seed)[metric] for seed in range(1, seeds + 1)))


def knee_search_rows(seeds: int) -> tuple:
    """(rows, summary) of a bisection over each exp4c curve's synthetic success, to 2%, as sweeps/knee.py would."""
    from simcore import SimConfig

    from tests.store_fixtures import contract_row

    curves = {}
    for fields in exp4_grid()["exp4c"]:
        curves.setdefault(tuple(sorted((k, v) for k, v in fields.items() if k != "inter_arrival_scale_ms")), fields)
    rows, summary = [], []
    for fields in curves.values():
        def config_at(scale_ms):
            return SimConfig.from_dict(dict(fields, inter_arrival_scale_ms=scale_ms))

        tried = []
        heavy, light = 20.0, 5000.0  # the exp4c grid's span
        status = FOUND
        if _passes(config_at(heavy), seeds):
            tried, status, light = [heavy], ABOVE_SEARCH_RANGE, heavy
        elif not _passes(config_at(light), seeds):
            tried, status = [heavy, light], BELOW_SEARCH_RANGE
        else:
            tried = [heavy, light]
            while light / heavy - 1 > 0.02:
                middle = math.sqrt(heavy * light)
                tried.append(middle)
                if _passes(config_at(middle), seeds):
                    light = middle
                else:
                    heavy = middle
        for scale in tried:
            config = config_at(scale)
            rows += [contract_row(knee_experiment_name("exp4c"), config, seed, synthetic_metrics(config, seed))
                     for seed in range(1, seeds + 1)]
        summary.append({"fixed": {k: v for k, v in fields.items() if k != "inter_arrival_scale_ms"},
                        "status": status, "simulations": len(tried) * seeds, "seeds": list(range(1, seeds + 1))})
    return rows, {"experiment": "exp4c", "knee_experiment": knee_experiment_name("exp4c"), "curves": summary}


def comparison_configs() -> dict:
    """experiment -> SimConfigs of the comparison sweeps, from the sweep scripts' own grids."""
    from sweeps.append_catalog import GRID as APPEND_GRID
    from sweeps.gcs_throttle import GRID as THROTTLE_GRID
    from sweeps.retry_policies import GRID as RETRY_GRID

    return {grid.experiment: list(grid.configs()) for grid in (THROTTLE_GRID, RETRY_GRID, APPEND_GRID)}


def make_store(path: str, source: str, seeds: int, rows_per_file: int, duration_s: float,
               comparison_seeds: int = 0) -> int:
    """Write a full-size store at ``path``; returns the number of rows."""
    from simcore import SimConfig

    from tests.store_fixtures import contract_row, simulated_rows, write_store_file

    short = {"duration_s": duration_s, "runtime_median_ms": 20_000.0} if source == "simulate" else {}
    total = 0
    experiments = [(experiment, [SimConfig.from_dict(dict(f, **short)) for f in fields], seeds)
                   for experiment, fields in exp4_grid().items()]
    if comparison_seeds:
        experiments += [(experiment, [config.replace(**short) for config in configs], comparison_seeds)
                        for experiment, configs in comparison_configs().items()]
    for experiment, configs, seeds in experiments:
        started = time.perf_counter()
        if source == "simulate":
            rows = simulated_rows(experiment, configs, seeds=range(1, seeds + 1))
        else:
            rows = [contract_row(experiment, config, seed, synthetic_metrics(config, seed))
                    for config in configs for seed in range(1, seeds + 1)]
        for start in range(0, len(rows), rows_per_file):
            write_store_file(path, experiment, rows[start:start + rows_per_file])
        total += len(rows)
        print(f"  wrote {experiment}: {len(rows)} rows ({source}, {time.perf_counter() - started:.1f} s)",
              flush=True)
    if comparison_seeds and source == "synthetic":
        rows, summary = knee_search_rows(comparison_seeds)
        for start in range(0, len(rows), rows_per_file * 3):
            write_store_file(path, knee_experiment_name("exp4c"), rows[start:start + rows_per_file * 3])
        ResultsStore(path).write_knee_summary("exp4c", summary)
        total += len(rows)
        print(f"  wrote {knee_experiment_name('exp4c')}: {len(rows)} rows (synthetic bisection to 2%)", flush=True)
    return total


def measure_build(store: str, out_dir: str, repeat: int) -> dict:
    read_s, render_s, write_s, total_s = [], [], [], []
    for _ in range(repeat):
        started = time.perf_counter()
        snapshot = read_store(store)
        read_done = time.perf_counter()
        site = render_site(snapshot)
        render_done = time.perf_counter()
        write_site(site, out_dir)
        finished = time.perf_counter()
        read_s.append(read_done - started)
        render_s.append(render_done - read_done)
        write_s.append(finished - render_done)
        total_s.append(finished - started)
    print(f"store: {len(snapshot.rows)} rows, {snapshot.files_read} files, "
          f"{len(site.payload['studies'])} studies; {DATA_FILE} {len(site.files[DATA_FILE]) / 1e6:.2f} MB")
    print(f"build in-process (median of {repeat}): total {statistics.median(total_s):.2f} s = "
          f"read {statistics.median(read_s):.2f} s + compute {statistics.median(render_s):.2f} s + "
          f"write {statistics.median(write_s):.3f} s (min total {min(total_s):.2f} s)")
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "dashboards", "build", "--store", store, "--out", out_dir],
                            cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ROOT})
    cli_s = time.perf_counter() - started
    status = "ok" if result.returncode == 0 else f"FAILED: {result.stderr.strip()}"
    print(f"build via `python -m dashboards build` (new process, imports included): {cli_s:.2f} s ({status})")
    return {"rows": len(snapshot.rows), "build_s": statistics.median(total_s), "read_s": statistics.median(read_s),
            "compute_s": statistics.median(render_s), "write_s": statistics.median(write_s),
            "build_command_s": cli_s if result.returncode == 0 else None}


def measure_page_load(store: str, repeat: int) -> dict:
    from tests.headless import Browser, find_chromium
    from dashboards.server import make_server

    if find_chromium() is None:
        print("page load: skipped (no Chromium; apt-get install -y chromium)")
        return {}
    server = make_server(store, port=0, refresh_s=-1, quiet=True, log=lambda message: None)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        with Browser() as browser:
            browser.send("Network.enable")
            browser.send("Network.setCacheDisabled", {"cacheDisabled": True})
            browser.navigate(url)  # warm the browser process itself
            loads, ready, renders = [], [], []
            for _ in range(repeat):
                browser.navigate("about:blank")
                loads.append(browser.navigate(url))
                browser.wait_for("document.body.dataset.ready === '1'")
                ready.append(browser.evaluate("window.DASHBOARD_READY_MS") / 1000)
                renders.append(browser.evaluate("window.DASHBOARD_RENDER_MS") / 1000)
            errors = browser.console_errors
    finally:
        server.shutdown()
        server.server_close()
    print(f"page load on loopback, cache disabled (median of {repeat}): navigate to load event "
          f"{statistics.median(loads):.2f} s (max {max(loads):.2f} s); navigation start to all views drawn "
          f"{statistics.median(ready):.2f} s (max {max(ready):.2f} s), of which drawing "
          f"{statistics.median(renders):.2f} s; console errors: {len(errors)}")
    return {"page_load_s": statistics.median(loads), "views_drawn_s": statistics.median(ready)}


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.dashboard_build", description=__doc__.split("\n\n")[0])
    add_store_flag(parser, when_unset="a scratch folder; a store that is absent or empty is made (full exp4 grid)")
    parser.add_argument("--source", choices=("synthetic", "simulate"), default="synthetic",
                        help="how to make a missing store (default synthetic; simulate takes minutes)")
    add_seeds_flag(parser, default=2)  # of each exp4 config, when making a store
    parser.add_argument("--comparison-seeds", "--issue6-seeds", dest="comparison_seeds", type=int, default=3,
                        help="seeds per config of gcs_throttle, retry_policies, append_catalog and the exp4c knee "
                             "search when making a store (default 3; 0 leaves them out)")
    parser.add_argument("--rows-per-file", type=int, default=10,
                        help="rows per Parquet file when making a store (default 10: many small files)")
    parser.add_argument("--duration-s", type=float, default=1200.0, help="simulated duration for --source simulate")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions (default 3)")
    parser.add_argument("--no-browser", action="store_true", help="skip the page-load measurement")
    add_baseline_flags(parser, BASELINE_PATH)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]

    with tempfile.TemporaryDirectory(prefix="dashboard-bench-") as scratch:
        store = args.store or os.path.join(scratch, "store")
        made = not os.path.isdir(store) or not os.listdir(store)
        if made:
            print(f"making a full-size exp4 store at {store} ...", flush=True)
            rows = make_store(store, args.source, len(args.seeds), args.rows_per_file, args.duration_s,
                              args.comparison_seeds)
            print(f"  {rows} rows")
        figures = measure_build(store, os.path.join(scratch, "site"), args.repeat)
        if not args.no_browser:
            figures.update(measure_page_load(store, args.repeat))
    # A store given is compared with baselines of that store only; a made one, with those made alike.
    if made:
        settings = {"source": args.source, "seeds": len(args.seeds), "comparison_seeds": args.comparison_seeds,
                    "rows_per_file": args.rows_per_file}
        if args.source == "simulate":
            settings["duration_s"] = args.duration_s
    else:
        settings = {"store": args.store}
    settings["repeat"] = args.repeat
    settings["browser"] = not args.no_browser
    command = " ".join(["python -m benchmarks.dashboard_build", *(a for a in sys.argv[1:] if a != "--save-baseline")])
    units = {"rows": "", "build_s": "s", "read_s": "s", "compute_s": "s", "write_s": "s", "build_command_s": "s",
             "page_load_s": "s", "views_drawn_s": "s"}
    print(f"(1-minute load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after; {os.cpu_count()} CPUs)")
    compare_and_save(args, ROOT, WHAT, settings, command,
                     f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after", figures, units)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
