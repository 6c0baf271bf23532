"""Run the reference simulator and simcore side by side and compare.

Given a local checkout of cdouglas/endive and a Python that can import its
dependencies (simpy, numpy, pandas, pyarrow), this runs both simulators on
the same configs and seeds, computes every metric with simcore's own metric
code over the same steady-state window, and prints them side by side with a
verdict per target (see simcore/reference.py). Curves (all ten inter-arrival
points of one provider/tables/mix) also get their usable-throughput knee
compared at grid resolution.

    python -m studies.fidelity --endive ../endive --endive-python ../endive-venv/bin/python \
        --set standard --jobs 2 [--out FILE]

Every compared metric (and each curve's knee) goes to ``--out``, by default
``studies/fidelity/results/<set>-<date>.csv``.

Reference runs of heavily loaded configs take minutes to an hour each;
``--set quick`` runs a handful of cheap ones. Finished reference runs are
cached (``--cache-dir``), so an interrupted comparison resumes where it was.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow.parquet as pq


from simcore import SimConfig, simulate, usable_throughput
from simcore.usable import success_metric
from simcore.engine import ABORTED_MAX_RETRIES, ABORTED_VALIDATION, COMMITTED, Outcome
from commit_sweeps.flags import add_seeds_flag
from simcore.metrics import summarize
from simcore.reference import TARGETS, agrees
from simcore.workload import FAST_APPEND, MERGE_APPEND, VALIDATED_OVERWRITE, Workload
from studies.results import add_out_flags, command_line, out_path, write_csv

SCALES = (20, 50, 100, 200, 300, 400, 500, 1000, 2000, 5000)
DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference_driver.py")


def _c(**kw) -> SimConfig:
    # The reference at revision 3bded463 runs the published protocol; the held-out set pins it.
    return SimConfig(protocol="published", **kw)


# Configs not in the dev set, across backends, providers, tables, mixes and loads.
SINGLE = {
    "quick": [
        _c(provider="s3", catalog="service", catalog_latency_ms=50, num_tables=2, inter_arrival_scale_ms=500),
        _c(provider="azure", num_tables=5, fast_append_ratio=0.5, inter_arrival_scale_ms=1000),
        _c(provider="gcp", num_tables=2, inter_arrival_scale_ms=2000),
    ],
    "standard": [
        _c(provider="s3", catalog="service", catalog_latency_ms=1, num_tables=1, inter_arrival_scale_ms=200),
        _c(provider="s3", catalog="service", catalog_latency_ms=120, num_tables=10, inter_arrival_scale_ms=100),
        _c(provider="s3", catalog="service", catalog_latency_ms=50, num_tables=2, fast_append_ratio=0.9,
           inter_arrival_scale_ms=500),
        _c(provider="s3", catalog="service", catalog_latency_ms=10, num_tables=50, fast_append_ratio=0.9,
           inter_arrival_scale_ms=100),
        _c(provider="s3x", num_tables=1, fast_append_ratio=0.5, inter_arrival_scale_ms=300),
        _c(provider="s3x", num_tables=20, inter_arrival_scale_ms=50),
        _c(provider="azurex", num_tables=10, fast_append_ratio=0.9, inter_arrival_scale_ms=200),
        _c(provider="azure", num_tables=5, fast_append_ratio=0.5, inter_arrival_scale_ms=1000),
        _c(provider="azure", num_tables=1, inter_arrival_scale_ms=400),
        _c(provider="gcp", num_tables=2, inter_arrival_scale_ms=2000),
        _c(provider="gcp", num_tables=50, fast_append_ratio=0.9, inter_arrival_scale_ms=500),
        _c(provider="s3", num_tables=5, fast_append_ratio=0.5, inter_arrival_scale_ms=300),
    ],
}
CURVES = {
    "quick": [],
    "standard": [
        _c(provider="gcp", num_tables=10, fast_append_ratio=1.0),
        _c(provider="s3", catalog="service", catalog_latency_ms=10, num_tables=5, fast_append_ratio=1.0),
    ],
}
# A VO-mix curve: its 20 and 50 ms points take the reference over an hour each.
SINGLE["vo-curve"] = []
CURVES["vo-curve"] = [_c(provider="s3", catalog="service", catalog_latency_ms=50, num_tables=5,
                         fast_append_ratio=0.9)]


def run_reference(config: SimConfig, seed: int, endive: str, python: str, cache_dir: str) -> dict:
    """The reference's summary of one (config, seed); its per-transaction output is kept in
    ``cache_dir`` so an interrupted or repeated comparison never reruns a finished reference run."""
    out = os.path.join(cache_dir, f"{config.config_hash}-{seed}.parquet")
    if not os.path.exists(out):
        partial = out + ".partial"
        env = {**os.environ, "PYTHONPATH": endive}
        done = subprocess.run([python, DRIVER, json.dumps(config.to_dict()), str(seed), partial], env=env,
                              capture_output=True, text=True, cwd=cache_dir)
        if done.returncode != 0:
            raise RuntimeError(f"reference failed on {config.to_dict()} seed {seed}:\n{done.stderr[-2000:]}")
        os.replace(partial, out)
        wall_s = json.loads(done.stdout.strip().splitlines()[-1])["wall_s"]
        print(f"  reference {describe(config)} seed {seed}: {wall_s:.0f} s", flush=True)
    return summarize_reference(config, pq.read_table(out))


def summarize_reference(config: SimConfig, table) -> dict:
    """The reference's per-transaction rows (an Arrow table) through simcore's metric code."""
    def col(name, dtype=float):
        return table.column(name).to_numpy(zero_copy_only=False).astype(dtype)

    op_codes = {"fast_append": FAST_APPEND, "validated_overwrite": VALIDATED_OVERWRITE,
                "merge_append": MERGE_APPEND}
    committed = col("status", object) == "committed"
    validation = col("abort_reason", object) == "validation_exception"
    status = np.where(committed, COMMITTED, np.where(validation, ABORTED_VALIDATION, ABORTED_MAX_RETRIES))
    submit = col("t_submit")
    end = submit + col("total_latency")
    commit_start = np.where(committed, end - col("commit_latency"), np.nan)
    n = table.num_rows
    workload = Workload(submit_ms=submit, runtime_ms=col("t_runtime"),
                        op=np.array([op_codes[o] for o in col("operation_type", object)], np.int8),
                        table=np.zeros(n, np.int32))
    outcome = Outcome.from_records(status=status, end_ms=end, commit_start_ms=commit_start,
                                   retries=col("n_retries", np.int32))
    return summarize(config, workload, outcome)


def describe(c: SimConfig) -> str:
    backend = f"service {c.catalog_latency_ms:g}ms" if c.catalog == "service" else "storage"
    return f"{c.provider:6s} {backend:15s} {c.num_tables:2d}t FA{c.fast_append_ratio:.1f} {c.inter_arrival_scale_ms:5.0f}ms"


def knee(success_key: str, rows_by_scale: dict) -> tuple:
    """(usable throughput, its scale) of one curve from per-scale seed-mean rows."""
    points = [(np.mean([r[success_key] for r in rows]), np.mean([r["throughput_cps"] for r in rows]))
              for rows in rows_by_scale.values()]
    best = usable_throughput(points)
    scale = next((s for s, p in zip(rows_by_scale, points) if best is not None and p[1] == best), None)
    return best, scale


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m studies.fidelity", description=__doc__.splitlines()[0])
    parser.add_argument("--endive", required=True, help="path of a cdouglas/endive checkout")
    parser.add_argument("--endive-python", default=sys.executable, help="a Python with simpy, numpy, pandas, pyarrow")
    parser.add_argument("--set", choices=sorted(SINGLE), default="quick")
    add_seeds_flag(parser, default=2)  # the reference's seeds of each config
    parser.add_argument("--simcore-seeds", type=int, default=6, help="simcore seeds per config (default 6)")
    parser.add_argument("--jobs", type=int, default=2, help="reference processes at once")
    add_out_flags(parser, "every compared metric, as CSV", aliases=("--csv",))
    parser.add_argument("--cache-dir", default=os.path.expanduser("~/.cache/commit-sweeps/fidelity"),
                        help="where finished reference runs are kept (default ~/.cache/commit-sweeps/fidelity)")
    args = parser.parse_args()
    out = out_path(args, "fidelity", args.set, "csv")

    singles = list(SINGLE[args.set])
    curves = [base.replace(inter_arrival_scale_ms=float(s)) for base in CURVES[args.set] for s in SCALES]
    configs = list(dict.fromkeys(singles + curves))
    ref_seeds = list(args.seeds)
    our_seeds = list(range(101, 101 + args.simcore_seeds))

    print(f"running the reference on {len(configs)} configs x {len(ref_seeds)} seeds with {args.jobs} jobs ...",
          flush=True)
    started = time.time()
    os.makedirs(args.cache_dir, exist_ok=True)
    with ThreadPoolExecutor(args.jobs) as pool:
        futures = {(c, s): pool.submit(run_reference, c, s, args.endive, args.endive_python, args.cache_dir)
                   for c in configs for s in ref_seeds}
        reference = {}
        for (c, s), future in futures.items():
            reference.setdefault(c, []).append(future.result())
    print(f"reference done in {time.time() - started:.0f} s", flush=True)
    ours = {c: simulate(c, our_seeds) for c in configs}

    records, failures = [], 0
    print(f"\n{'config':45s} {'metric':27s} {'simcore':>11s} {'reference':>11s}  verdict")
    for c in configs:
        for target in TARGETS:
            mine = np.array([r[target.metric] for r in ours[c]], float)
            ref = np.array([r[target.metric] for r in reference[c]], float)
            if np.isnan(ref).all():
                continue
            ok, why = agrees(target, mine.mean(), mine.std(ddof=1), len(mine), ref.mean(), len(ref))
            failures += not ok
            print(f"{describe(c):45s} {target.metric:27s} {mine.mean():11.5g} {ref.mean():11.5g}  "
                  f"{'ok' if ok else 'FAIL'} ({why})")
            records.append(dict(config=describe(c), config_hash=c.config_hash, metric=target.metric,
                                simcore=mine.mean(), simcore_std=mine.std(ddof=1), reference=ref.mean(),
                                reference_std=ref.std(ddof=1) if len(ref) > 1 else float("nan"),
                                ok=ok, why=why))
    for base in CURVES[args.set]:
        key = success_metric(base)
        mine = knee(key, {s: ours[base.replace(inter_arrival_scale_ms=float(s))] for s in SCALES})
        theirs = knee(key, {s: reference[base.replace(inter_arrival_scale_ms=float(s))] for s in SCALES})
        same = mine[1] == theirs[1]
        failures += not same
        print(f"\nknee of {describe(base)[:-7]}: simcore {mine[0]} c/s at {mine[1]} ms, "
              f"reference {theirs[0]} c/s at {theirs[1]} ms: {'same grid point' if same else 'DIFFERENT'}")
        records.append(dict(config=describe(base)[:-7], config_hash=base.config_hash, metric="usable_throughput_knee",
                            simcore=mine[0], simcore_std=float("nan"), reference=theirs[0],
                            reference_std=float("nan"), ok=same,
                            why=f"simcore at {mine[1]} ms, reference at {theirs[1]} ms"))
    write_csv(out, records, command_line("python -m studies.fidelity"))
    print(f"wrote {out}")
    print(f"\n{failures} disagreement(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
