"""``commit-sweeps simulate`` (also ``python -m simcore run``): simulate one config over seeds, print the summaries.

``configure`` adds the flags of one simulation, ``config_of`` turns them into
the config (``simcore.builder.config_from_flags``, with the checks only flags
need), ``run`` simulates it and prints a table or one JSON line per seed.
Bad input exits with status 2 and one line naming the field, the value and
what is allowed, so scripts can tell a usage error from a crash.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from simcore import bounds, metric_sets, metrics
from simcore.builder import config_from_flags
from simcore.config import ARRIVAL_DISTRIBUTIONS, SimConfig
from simcore.errors import ConfigError
from simcore.simulate import check_window, simulate
from commit_sweeps.flags import (EXIT_OK, add_catalog_flags, add_client_flag, add_duration_flag, add_latency_flags,
                                 add_group_commit_flag, add_maintenance_flags, add_max_memory_flag,
                                 add_object_write_throttle_flag,
                                 add_protocol_flag, add_provider_flag, add_retry_flags, add_seeds_flag, bad_input,
                                 integer, memory_limit, number, output_path)

# The columns of the readable table, with their headings and formats.
TABLE_COLUMNS = (
    ("seed", "seed", "{:d}"),
    ("n_txns", "txns", "{:d}"),
    ("success_rate", "success", "{:.2%}"),
    ("throughput_cps", "c/s", "{:.3f}"),
    ("commit_latency_mean_ms", "mean ms", "{:.0f}"),
    ("commit_latency_p50_ms", "p50 ms", "{:.0f}"),
    ("commit_latency_p99_ms", "p99 ms", "{:.0f}"),
    ("retries_mean", "retries", "{:.2f}"),
    ("fa_success_rate", "FA ok", "{:.2%}"),
    ("vo_success_rate", "VO ok", "{:.2%}"),
    ("vo_commit_latency_mean_ms", "VO mean ms", "{:.0f}"),
    ("conflicts_same_table", "same-tbl", "{:d}"),
    ("conflicts_catalog_only", "cat-only", "{:d}"),
)


SIMULATE_HELP = "simulate one config for each seed and print the summaries"


def configure(run: argparse.ArgumentParser) -> None:
    """The flags of one simulation: ``python -m simcore run`` and ``commit-sweeps simulate``."""
    add_provider_flag(run)
    add_catalog_flags(run)
    run.add_argument("--zipf-alpha", type=number, default=None, help="Zipf exponent (default 1.5)")
    run.add_argument("--inter-arrival-scale-ms", type=number, default=None,
                     help="median (lognormal) or mean (exponential) gap between arrivals (required unless --writers)")
    run.add_argument("--arrivals", default="lognormal", help="gap distribution: " + " or ".join(ARRIVAL_DISTRIBUTIONS))
    add_duration_flag(run)
    add_client_flag(run)
    add_retry_flags(run)
    run.add_argument("--writers", type=integer, default=None,
                     help="writer workload: this many writers instead of open-loop arrivals")
    run.add_argument("--commit-interval-s", type=number, default=None, help="each writer commits every S seconds")
    run.add_argument("--writer-phase-seed", type=integer, default=None,
                     help="the writers' phases drawn from this seed, the same in every run seed (as "
                          "studies.real_clients draws its real writers'); default: each run seed draws its own")
    add_maintenance_flags(run)
    add_group_commit_flag(run)
    run.add_argument("--retry-policy", default=None,
                     help="immediate (as the reference), backoff, or split (catalog-only conflicts at once, "
                          "same-table conflicts back off); default: the client's")
    run.add_argument("--backoff-base-ms", type=number, default=None, help="first backoff wait (default 10)")
    run.add_argument("--backoff-multiplier", type=number, default=None, help="growth per retry (default 2)")
    run.add_argument("--backoff-cap-ms", type=number, default=None, help="longest wait (default 5000)")
    run.add_argument("--backoff-jitter", type=number, default=None, help="+/- fraction of each wait (default 0.1)")
    run.add_argument("--cas-throttle-per-s", type=number, default=None,
                     help="per-object write limit on the catalog object (token bucket; default: none)")
    add_object_write_throttle_flag(run)
    run.add_argument("--vo-convoy", default="catalog",
                     help="historical manifest lists a VO reads after a same-table conflict: catalog (default, "
                          "one per commit to any table, as the reference) or table (one per commit to its table, "
                          "as seed 001's multi-table figures need)")
    run.add_argument("--metric-set", default=metric_sets.DEFAULT_METRIC_SET,
                     help="how the summary is computed: " + ", ".join(metric_sets.METRIC_SETS)
                          + " (default steady-state; seed001 reproduces seed 001's tables, studies/published_repro/README.md)")
    run.add_argument("--window-s", default=None, metavar="START,END",
                     help="summarise the transactions submitted in [START, END) s instead of the steady-state "
                          "window, e.g. 0,60 to hold the model against a real run's first minute from a cold start")
    add_latency_flags(run)
    add_protocol_flag(run, default=None)
    add_seeds_flag(run, required=True)
    run.add_argument("--json", action="store_true", help="one JSON object per seed per line")
    run.add_argument("--transactions-dir", default=None, type=output_path,
                     help="also write every transaction of each seed to DIR/<config_hash>-seed<seed>.parquet")
    add_max_memory_flag(run)


def config_of(args: argparse.Namespace) -> SimConfig:
    """The config ``run``'s flags describe (``simcore.builder.config_from_flags``), with the checks only flags need."""
    if args.zipf_alpha is not None and args.table_dist != "zipf":
        raise ConfigError("zipf_alpha", args.zipf_alpha, "no value unless --table-dist zipf")
    if args.inter_arrival_scale_ms is None and args.writers is None:
        raise ConfigError("inter_arrival_scale_ms", None, "a number > 0 (ms) unless --writers is given")
    if args.protocol is None:  # seed 001's tables were made with the published protocol
        return config_from_flags(args, protocol=metric_sets.protocol_of(args.metric_set))
    return config_from_flags(args)


def json_value(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [json_value(v) for v in value]
    return value


def format_cell(value, fmt: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return fmt.format(value)


def _load_text(config: SimConfig) -> str:
    """The offered load as the config states it: writers at an interval, or open-loop arrivals."""
    if config.writers:
        text = f"{config.writers} writer(s) every {config.commit_interval_s:g} s"
        if config.maintenance_jobs:
            text += f" + {config.maintenance_jobs} maintenance job(s) every {config.maintenance_interval_s:g} s"
        return text
    return f"inter-arrival {config.inter_arrival_scale_ms:g} ms {config.arrivals}"


def render_table(config: SimConfig, rows: list[dict]) -> str:
    model = ("" if config.provider_profile is None
             else " (measured latency model)" if config.latency_model == "measured" else " (provider file)")
    start, end = ((rows[0]["window_start_s"], rows[0]["window_end_s"]) if rows and "window_start_s" in rows[0]
                  else (config.warmup_s, config.duration_s - config.warmup_s))
    heading = (f"{config.provider}{model} / {config.catalog} catalog"
               + (f" ({config.catalog_latency_ms:g} ms)" if config.catalog == "service" else "")
               + f", {config.num_tables} table(s) {config.table_distribution}"
               + f", FA {config.fast_append_ratio:g}, " + _load_text(config)
               + f", {config.protocol} protocol, {config.duration_s:g} s, window [{start:g}, {end:g}) s, "
               + f"config {config.config_hash}")
    columns = [column for column in TABLE_COLUMNS if any(column[0] in row for row in rows)]
    if rows and "metric_set" in rows[0]:
        heading += f", metric set {rows[0]['metric_set']}"
    cells = [[title for _, title, _ in columns]]
    cells += [[format_cell(row.get(key), fmt) for key, _, fmt in columns] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    lines = ["  ".join(cell.rjust(w) for cell, w in zip(line, widths)) for line in cells]
    return "\n".join([heading, *lines])


def _check_transactions_dir(directory: str) -> None:
    """The directory exists or can be made, and is writable; else a ConfigError."""
    import os

    if os.path.exists(directory) and not os.path.isdir(directory):
        raise ConfigError("transactions_dir", directory, "a directory (this path is a file)")
    parent = directory
    while parent and not os.path.exists(parent):  # the nearest existing ancestor must be writable
        parent = os.path.dirname(parent.rstrip(os.sep))
    parent = parent or "."
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError("transactions_dir", directory, f"a writable directory ({parent} is not writable)")


def _transactions_writer(config: SimConfig, directory: str):
    """A ``SeedHook`` that writes each seed's per-transaction table to ``directory`` as the seed's run ends,
    from the run its summary comes from."""
    import os

    import pyarrow.parquet as pq

    os.makedirs(directory, exist_ok=True)

    def write(seed: int, workload, outcome) -> None:
        path = os.path.join(directory, f"{config.config_hash}-seed{seed}.parquet")
        partial = path + ".partial"
        pq.write_table(metrics.transactions_table(config, workload, outcome), partial)
        os.replace(partial, path)  # never leave a torn file under the final name
        print(f"wrote {path}", file=sys.stderr)

    return write


def run(args: argparse.Namespace) -> int:
    """Simulate the config the flags describe; bad values exit 2 with one line."""
    try:
        seeds = list(args.seeds)
        config = config_of(args)
        if args.metric_set not in metric_sets.METRIC_SETS:
            raise ConfigError("metric_set", args.metric_set, "one of " + ", ".join(metric_sets.METRIC_SETS))
        window_s = None
        if args.window_s is not None:
            window_s = check_window(config, args.window_s)
            if args.metric_set != metric_sets.DEFAULT_METRIC_SET:
                raise ConfigError("window_s", args.window_s, f"no --window-s with --metric-set {args.metric_set} "
                                  "(a window replaces the steady-state set's)")
        # Everything that could fail is checked before the first simulated second.
        limit_bytes, limit_source = memory_limit(args.max_memory)
        bounds.check(config, limit_bytes, limit_source)
        if args.transactions_dir:
            _check_transactions_dir(args.transactions_dir)
    except ConfigError as error:
        return bad_input(error)
    each_seed = _transactions_writer(config, args.transactions_dir) if args.transactions_dir else None
    if args.metric_set == metric_sets.DEFAULT_METRIC_SET:
        rows = simulate(config, seeds, max_memory_bytes=limit_bytes, window_s=window_s, each_seed=each_seed)
    else:
        rows = metric_sets.simulate(args.metric_set, config, seeds, max_memory_bytes=limit_bytes, each_seed=each_seed)
    if args.json:
        fields = config.to_dict()
        for row in rows:
            record = {"config_hash": config.config_hash, **fields, **row}
            print(json.dumps({k: json_value(v) for k, v in record.items()}, allow_nan=False))
    else:
        print(render_table(config, rows))
    return EXIT_OK
