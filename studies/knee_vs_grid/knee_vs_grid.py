"""How many simulations the knee search needs, against a grid of the same resolution.

    python -m studies.knee_vs_grid [--experiment exp4c] [--curves quick|all] [--seeds N] [--duration-s S]
                                   [--grid-sample K] [--dense] [--coarse] [--parallel-probes] [--out FILE]

For each curve it runs the knee search one simulation at a time in this
process (the executor ``ray_jobs.search`` over ``simcore.simulate``: the same
decisions, hence the same points, as ``sweeps/knee.py`` makes on Ray with one
probe per curve, screening included) and prints the points and simulations it needed
and the simulation seconds they took, next to a geometric grid fine enough
to resolve every knee in the range as well (280 points at 2% over
20-5000 ms):

- ``--grid-sample K`` simulates every K-th point of that grid and scales its
  time by K: a measured estimate of the grid's cost in simulation seconds;
- ``--dense`` simulates the whole grid and reads its knee (the highest
  throughput whose success stays above 95%), to check the searched knee
  against it (slow: minutes per curve at 3600 simulated s);
- ``--coarse`` also reads the knee off seed 001's ten scales, as the grid
  sweeps do, to show what the search adds.

``--parallel-probes`` instead drives the executor itself on 200
synthetic step curves (knees spread over the range, no simulation) with 1,
3 and 7 probes per curve in flight, in lock-step rounds, and prints the
rounds and points each needs: what several probes per curve buy on a
cluster with more CPUs than curves.

Simulation seconds depend on what else the machine runs: the load average
is printed with them. One row per curve (or per probe count) goes to
``--out`` (default ``studies/knee_vs_grid/results/<experiment>-<curves>-<date>.csv``,
or ``parallel-probes-<date>.csv``).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time


from concurrent.futures import Future

from simcore import simulate, usable_throughput
from simcore.bisection import MeasuredPoint, SearchRange, same_resolution_grid_points
from ray_jobs.knee_curves import Curve, curves_from_grid, measured_point
from ray_jobs.search import CurveSpec, Events, SeedRun, run_seed, search_curves
from commit_sweeps.flags import add_search_range_flags, add_seeds_flag, search_range_of
from sweeps.catalog import KNEE_GRIDS
from sweeps.seed001 import INTER_ARRIVAL_SCALES_MS
from studies.results import add_out_flags, command_line, out_path, write_csv

PROG = "python -m studies.knee_vs_grid"


class Meter:
    """Simulates points of one curve, counting simulations and their seconds."""

    def __init__(self, curve: Curve, seeds: tuple[int, ...]):
        self.curve, self.seeds = curve, seeds
        self.simulations = 0
        self.simulate_s = 0.0

    def measure(self, scale_ms: float) -> MeasuredPoint:
        config = self.curve.config_at(scale_ms)
        started = time.perf_counter()
        rows = simulate(config, seeds=list(self.seeds))
        self.simulate_s += time.perf_counter() - started
        self.simulations += len(rows)
        return measured_point(scale_ms, config, rows)

    def submit(self, config, seed: int) -> Future:
        """The executor's submit function: one simulation, here and now."""
        run = run_seed(config, seed)
        self.simulate_s += run.wall_s
        self.simulations += 1
        future = Future()
        future.set_result(run)
        return future

    def search(self, search_range: SearchRange):
        """(final step, points with every seed) of the knee search of this curve."""
        (result,) = search_curves([CurveSpec(self.curve.curve_id, self.curve.config_at)], self.seeds, search_range,
                                  self.submit, 1)
        return result.step, [probe.point() for probe in result.probes.values()]


def geometric_grid(search_range: SearchRange) -> list[float]:
    count = same_resolution_grid_points(search_range)
    ratio = search_range.max_scale_ms / search_range.min_scale_ms
    return [search_range.min_scale_ms * ratio ** (i / (count - 1)) for i in range(count)]


def grid_knee(points: list[MeasuredPoint]):
    return usable_throughput([(p.success, p.throughput_cps) for p in points])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiment", default="exp4c", choices=list(KNEE_GRIDS))
    parser.add_argument("--curves", default="quick", choices=["quick", "all"])
    add_seeds_flag(parser, default=3)
    parser.add_argument("--duration-s", type=float, default=3600.0)
    add_search_range_flags(parser)
    parser.add_argument("--grid-sample", type=int, default=0, metavar="K",
                        help="simulate every K-th grid point to estimate the grid's cost (0: skip)")
    parser.add_argument("--dense", action="store_true", help="simulate the whole same-resolution grid")
    parser.add_argument("--coarse", action="store_true", help="also read the knee off seed 001's ten scales")
    parser.add_argument("--parallel-probes", action="store_true",
                        help="rounds and points with 1, 3 and 7 probes per curve, on synthetic curves")
    add_out_flags(parser, "one row per curve (or per probe count), as CSV")
    args = parser.parse_args(argv)
    command = command_line(PROG, argv)
    if args.parallel_probes:
        out = out_path(args, "knee_vs_grid", "parallel-probes", "csv")
        rows = parallel_probes(search_range_of(args))
        write_csv(out, rows, command)
        print(f"wrote {out}")
        return 0
    out = out_path(args, "knee_vs_grid", f"{args.experiment}-{args.curves}", "csv")

    search_range = search_range_of(args)
    seeds = args.seeds
    curves = curves_from_grid(KNEE_GRIDS[args.experiment], quick=args.curves == "quick", duration_s=args.duration_s)
    grid = geometric_grid(search_range)
    print(f"{args.experiment}: {len(curves)} curves, {len(seeds)} seeds, {args.duration_s:g} simulated s per run; "
          f"range {search_range.min_scale_ms:g}-{search_range.max_scale_ms:g} ms at {100 * search_range.tolerance:g}%: "
          f"a grid of the same resolution has {len(grid)} points; load average {load_average()}", flush=True)
    simulate(curves[0].config_at(1000.0), seeds=[1])  # load numba's cache before timing anything

    totals = {"points": 0, "simulations": 0, "search_s": 0.0, "grid_s": 0.0, "grid_simulations": 0}
    rows = []
    for curve in curves:
        search = Meter(curve, seeds)
        step, points = search.search(search_range)
        knee = step.knee.throughput_cps if step.knee else None
        line = (f"{curve.label}: {step.status}"
                + (f", knee {knee:.4g} c/s at {step.knee.scale_ms:g} ms" if knee else "")
                + (f" (bracket {100 * (step.rate_ratio - 1):.2f}% in rate, failing point "
                   f"{step.failing.throughput_cps:.4g} c/s)" if step.rate_ratio else "")
                + f": {len(points)} points, {search.simulations} simulations, {search.simulate_s:.1f} s")
        row = {"curve": curve.label, "status": step.status, "knee_cps": knee,
               "knee_scale_ms": step.knee.scale_ms if step.knee else None,
               "bracket_pct": 100 * (step.rate_ratio - 1) if step.rate_ratio else None, "points": len(points),
               "simulations": search.simulations, "search_simulate_s": search.simulate_s,
               "grid_points": len(grid), "seeds": len(seeds), "duration_s": args.duration_s}
        totals["points"] += len(points)
        totals["simulations"] += search.simulations
        totals["search_s"] += search.simulate_s
        totals["grid_simulations"] += len(grid) * len(seeds)
        if args.grid_sample:
            sample = Meter(curve, seeds)
            for scale in grid[::args.grid_sample]:
                sample.measure(scale)
            grid_s = sample.simulate_s * len(grid) / len(grid[::args.grid_sample])
            totals["grid_s"] += grid_s
            line += f"; grid about {grid_s:.0f} s (1 in {args.grid_sample} points measured)"
            row["grid_simulate_s_estimate"] = grid_s
        if args.dense:
            dense = Meter(curve, seeds)
            dense_knee = grid_knee([dense.measure(scale) for scale in grid])
            totals["grid_s"] += dense.simulate_s
            line += (f"; dense grid knee {_fmt(dense_knee)} c/s in {dense.simulate_s:.0f} s"
                     + (f" (search {100 * (knee / dense_knee - 1):+.2f}%)" if knee and dense_knee else ""))
            row.update(dense_grid_knee_cps=dense_knee, dense_grid_simulate_s=dense.simulate_s)
        if args.coarse:
            coarse = Meter(curve, seeds)
            coarse_knee = grid_knee([coarse.measure(float(scale)) for scale in INTER_ARRIVAL_SCALES_MS])
            line += (f"; seed 001 grid knee {_fmt(coarse_knee)} c/s"
                     + (f" (search {100 * (knee / coarse_knee - 1):+.1f}%)" if knee and coarse_knee else ""))
            row["seed001_grid_knee_cps"] = coarse_knee
        print(line, flush=True)
        rows.append(row)

    ratio = totals["grid_simulations"] / totals["simulations"] if totals["simulations"] else math.nan
    print(f"search: {totals['points']} points, {totals['simulations']} simulations "
          f"({totals['points'] / len(curves):.1f} points per curve), {totals['search_s']:.1f} s of simulation")
    print(f"same-resolution grid: {totals['grid_simulations']} simulations ({ratio:.0f}x the search)"
          + (f", about {totals['grid_s']:.0f} s of simulation ({totals['grid_s'] / totals['search_s']:.0f}x)"
             if totals["grid_s"] else ""))
    print(f"load average {load_average()}")
    write_csv(out, rows, command)
    print(f"wrote {out}")
    return 0


def parallel_probes(search_range: SearchRange, curves: int = 200) -> list[dict]:
    """Each curve alone, one seed, on step curves: rounds (every probe of a round runs before the next is chosen)."""
    from ray_jobs import Grid

    (curve,) = curves_from_grid(Grid("synthetic", swept={"inter_arrival_scale_ms": (100,)},
                                     fixed={"provider": "s3x"}))
    ratio = search_range.max_scale_ms / search_range.min_scale_ms
    knees_ms = [search_range.min_scale_ms * ratio ** ((i + 0.5) / curves) for i in range(curves)]
    rows = []
    for probes in (1, 3, 7):
        counts = {"rounds": 0, "points": 0, "last": "probe"}
        for knee_ms in knees_ms:
            def submit(config, seed, knee_ms=knee_ms):
                if counts["last"] == "probe":  # the first simulation of a new round
                    counts["rounds"] += 1
                counts["last"] = "submit"
                scale_ms = config.inter_arrival_scale_ms
                success = 1.0 if scale_ms > knee_ms else 0.5
                future = Future()
                future.set_result(SeedRun({"seed": seed, "success_rate": success,
                                           "throughput_cps": 1000.0 / scale_ms * success}))
                return future

            def on_probe(key, probe):
                counts["points"] += 1
                counts["last"] = "probe"
            search_curves([CurveSpec(curve.curve_id, curve.config_at)], (1,), search_range, submit, probes,
                          lambda seeds: probes, Events(on_probe=on_probe))
        print(f"{probes} probe(s) per curve: {counts['rounds'] / curves:.1f} rounds, "
              f"{counts['points'] / curves:.1f} points per curve "
              f"(mean over {curves} knees spread over {search_range.min_scale_ms:g}-{search_range.max_scale_ms:g} ms)")
        rows.append({"probes_per_curve": probes, "rounds_per_curve": counts["rounds"] / curves,
                     "points_per_curve": counts["points"] / curves, "curves": curves})
    return rows


def _fmt(value) -> str:
    return "none" if value is None else f"{value:.4g}"


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    sys.exit(main())
