"""Fit the sweep's cost model (``ray_jobs.batching.estimated_cost_s``) to the wall times a store recorded.

The cost model orders and packs the sweep's work and weighs its progress
ETA. What matters for both is the *shape*: the share of the total work that
the most expensive runs hold. This script reads every row's ``wall_s``,
searches the model's shape parameters for the one whose cumulative cost
share (runs taken most expensive first, as the sweep runs them) stays
closest to the measured one, and replays the ETA a sweep would have printed
under the current and the fitted model.

    python scripts/fit_cost_model.py --store ./results
"""

from __future__ import annotations

import argparse
import itertools
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # run from a checkout

from commit_sweeps.flags import add_store_flag  # noqa: E402
from ray_jobs import batching  # noqa: E402
from ray_jobs.store import ResultsStore  # noqa: E402


def features(table) -> tuple:
    duration_s = np.asarray(table.column("duration_s").to_pylist(), float)
    scale_ms = np.asarray(table.column("inter_arrival_scale_ms").to_pylist(), float)
    fast = np.asarray(table.column("fast_append_ratio").to_pylist(), float)
    return duration_s * 1000.0 / scale_ms, batching.REFERENCE_INTER_ARRIVAL_MS / scale_ms, 1.0 - fast


def model(arrivals, load, non_fast, fixed_s, per_arrival_s, load_exponent, non_fast_weight):
    return fixed_s + per_arrival_s * arrivals * load ** load_exponent * (1.0 + non_fast_weight * non_fast)


def share_error(estimate, wall) -> float:
    order = np.argsort(-estimate, kind="stable")
    return float(np.abs(np.cumsum(estimate[order]) / estimate.sum() - np.cumsum(wall[order]) / wall.sum()).max())


def replay_eta(estimate, wall, shares=(0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9)) -> list:
    """(share of runs done, true seconds left, ETA printed) with runs taken most expensive first."""
    order = np.argsort(-estimate, kind="stable")
    spent, cost = np.cumsum(wall[order]), np.cumsum(estimate[order])
    rows = []
    for share in shares:
        i = int(share * len(order))
        rows.append((share, wall.sum() - spent[i], spent[i] * (estimate.sum() - cost[i]) / cost[i]))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(prog="python scripts/fit_cost_model.py", description=__doc__.splitlines()[0])
    add_store_flag(parser)  # a store with finished sweeps
    args = parser.parse_args()
    table = ResultsStore(args.store).scan(columns=["duration_s", "inter_arrival_scale_ms", "fast_append_ratio",
                                                   "wall_s"]).table
    wall = np.asarray(table.column("wall_s").to_pylist(), float)
    arrivals, load, non_fast = features(table)
    current = model(arrivals, load, non_fast, batching.FIXED_COST_S, batching.SECONDS_PER_ARRIVAL,
                    batching.LOAD_EXPONENT, batching.NON_FAST_APPEND_WEIGHT)
    best = None
    for exponent, weight, fixed_ratio in itertools.product(np.arange(-0.5, 1.01, 0.1), np.arange(0, 3.01, 0.25),
                                                           (100, 300, 700, 1000, 2000, 5000, 10000)):
        estimate = model(arrivals, load, non_fast, fixed_ratio * 1e-6, 1e-6, exponent, weight)
        error = share_error(estimate, wall)
        if best is None or error < best[0]:
            best = (error, round(float(exponent), 2), round(float(weight), 2), fixed_ratio)
    error, exponent, weight, fixed_ratio = best
    fitted = model(arrivals, load, non_fast, fixed_ratio * 1e-6, 1e-6, exponent, weight)
    print(f"{len(wall)} runs, {wall.sum():.0f} s of simulation recorded")
    print(f"current model: largest gap between estimated and measured cost share {share_error(current, wall):.3f}")
    print(f"fitted shape:  load exponent {exponent}, non-FastAppend weight {weight}, fixed cost "
          f"{fixed_ratio} x the per-arrival cost; largest gap {error:.3f}")
    print("replayed ETA (runs most expensive first):  done   true left   ETA current   ETA fitted")
    for (share, true_left, eta_now), (_, _, eta_fit) in zip(replay_eta(current, wall), replay_eta(fitted, wall)):
        print(f"{'':42s}{share:5.0%} {true_left:10.0f} s {eta_now:10.0f} s {eta_fit:10.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
