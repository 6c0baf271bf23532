"""Seed 000 beside ``python -m simcore bench`` under the reference and the measured latency model.

    python benchmarks/bench_table.py [--data simcore/measured/seed000_conditional_writes.csv]
                                     [--seeds 1,2,3] [--duration-s 300] [--out FILE]

For every (store, operation) seed 000 measured and every client count 1-16:
goodput, failure rate and successful-op latency (p50, mean) as seed 000 gives
them, then as the reference model and the measured model simulate them, with
each model's deviation (goodput in %, failure rate in points). A deviation
outside the issue's tolerance (goodput 10%, failure rate 5 points) is marked
``!``. Seed 000's goodput is recovered from its counts (simcore/fit.py): its
printed Azure column is broken. Prints markdown (docs/measured.md holds a copy)
and, on stderr, how long each bench run of 16 client counts x seeds x duration took.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simcore.bench import bench  # noqa: E402
from simcore.fit import read_table  # noqa: E402
from commit_sweeps.flags import add_seeds_flag  # noqa: E402
from simcore.profiles import measured_profile  # noqa: E402
from simcore.providers import PROVIDERS  # noqa: E402

DEFAULT_DATA = ROOT / "simcore" / "measured" / "seed000_conditional_writes.csv"  # seed 000's tables, as shipped
GOODPUT_TOLERANCE, FAILURE_TOLERANCE = 0.10, 0.05


def _cells(sim, seed) -> list[str]:
    if sim is None:
        return ["n/a"] * 3
    ratio = sim.goodput_ops / seed.goodput_ops - 1
    points = sim.failure_rate - seed.failure_rate
    flag_g = "!" if abs(ratio) > GOODPUT_TOLERANCE else ""
    flag_f = "!" if abs(points) > FAILURE_TOLERANCE else ""
    return [f"{sim.goodput_ops:.1f} ({ratio:+.0%}){flag_g}", f"{sim.failure_rate:.1%} ({100 * points:+.1f}){flag_f}",
            f"{sim.latency_p50_ms:.0f} / {sim.latency_mean_ms:.0f}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    add_seeds_flag(parser)
    parser.add_argument("--duration-s", type=float, default=300.0)
    parser.add_argument("--out", default=None, help="also write the markdown here")
    args = parser.parse_args()
    seeds = list(args.seeds)
    lines, summary = [], []
    for store in ("s3", "s3x", "azure", "azurex", "gcp"):
        for operation, measured in read_table(args.data, store).items():
            clients = [s.clients for s in measured]
            reference = PROVIDERS[store]
            ref = None
            if operation == "cas" or reference.supports_append:
                started = time.perf_counter()
                ref = bench(reference, operation, clients, seeds, args.duration_s)
                print(f"{store} {operation} reference: {len(clients)} client counts x {len(seeds)} seeds x "
                      f"{args.duration_s:g} s in {time.perf_counter() - started:.2f} s", file=sys.stderr)
            started = time.perf_counter()
            meas = bench(measured_profile(store), operation, clients, seeds, args.duration_s)
            print(f"{store} {operation} measured: {len(clients)} client counts x {len(seeds)} seeds x "
                  f"{args.duration_s:g} s in {time.perf_counter() - started:.2f} s", file=sys.stderr)
            lines += ["", f"### {store} {operation}", "",
                      "| clients | seed 000 goodput | seed 000 failed | seed 000 p50 / mean ms "
                      "| reference goodput | reference failed | reference p50 / mean ms "
                      "| measured goodput | measured failed | measured p50 / mean ms |",
                      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
            within = 0
            for i, seed in enumerate(measured):
                r = ref[i] if ref else None
                m = meas[i]
                lines.append("| " + " | ".join([str(seed.clients), f"{seed.goodput_ops:.1f}", f"{seed.failure_rate:.1%}",
                                                f"{seed.p50_ms:.0f} / {seed.mean_ms:.0f}", *_cells(r, seed),
                                                *_cells(m, seed)]) + " |")
                within += (abs(m.goodput_ops / seed.goodput_ops - 1) <= GOODPUT_TOLERANCE
                           and abs(m.failure_rate - seed.failure_rate) <= FAILURE_TOLERANCE)
            summary.append(f"| {store} {operation} | {within} of {len(measured)} |")
    text = "\n".join(["| store, operation | client counts within tolerance (measured model) |", "|---|---:|",
                      *summary, *lines]) + "\n"
    print(text)
    if args.out:
        pathlib.Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
