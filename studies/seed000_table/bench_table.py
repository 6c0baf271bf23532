"""Seed 000 beside ``python -m simcore bench`` under the reference and the measured latency model.

    python -m studies.seed000_table [--data simcore/measured/seed000_conditional_writes.csv]
                                    [--seeds 1,2,3] [--duration-s 300] [--out FILE] [--markdown FILE]

For every (store, operation) seed 000 measured and every client count 1-16:
goodput, failure rate and successful-op latency (p50, mean) as seed 000 gives
them, then as the reference model and the measured model simulate them, with
each model's deviation (goodput in %, failure rate in points). A deviation
outside the tolerance (goodput 10%, failure rate 5 points) is marked ``!``.
Seed 000's goodput is recovered from its counts (simcore/fit/samples.py): its
printed Azure column is broken. Prints markdown (``--markdown`` also writes
it to a file) and, on stderr, how long each bench run of 16 client counts x
seeds x duration took. Every cell goes to ``--out`` (default
``studies/seed000_table/results/cells-<date>.csv``), one row per store,
operation, client count and model.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from simcore.bench import bench  # noqa: E402
from simcore.fit import read_table  # noqa: E402
from commit_sweeps.flags import add_seeds_flag  # noqa: E402
from simcore.profiles import measured_profile  # noqa: E402
from simcore.providers import PROVIDERS  # noqa: E402
from studies.results import add_out_flags, command_line, out_path, write_csv  # noqa: E402

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
    prog = "python -m studies.seed000_table"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    add_seeds_flag(parser)
    parser.add_argument("--duration-s", type=float, default=300.0)
    parser.add_argument("--markdown", default=None, metavar="FILE", help="also write the markdown here")
    add_out_flags(parser, "every cell, as CSV")
    args = parser.parse_args()
    out = out_path(args, "seed000_table", "cells", "csv")
    seeds = list(args.seeds)
    lines, summary, cells = [], [], []
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
                cells += [_cell_row(store, operation, model, sim, seed)
                          for model, sim in (("seed000", seed), ("reference", r), ("measured", m)) if sim is not None]
            summary.append(f"| {store} {operation} | {within} of {len(measured)} |")
    text = "\n".join(["| store, operation | client counts within tolerance (measured model) |", "|---|---:|",
                      *summary, *lines]) + "\n"
    print(text)
    if args.markdown:
        pathlib.Path(args.markdown).write_text(text)
    settings = {"seeds": ",".join(map(str, seeds)), "duration_s": args.duration_s}
    write_csv(out, [{**cell, **settings} for cell in cells], command_line(prog))
    print(f"wrote {out}", file=sys.stderr)
    return 0


def _cell_row(store: str, operation: str, model: str, figures, seed) -> dict:
    """One model's figures at one client count (seed 000's own when ``model`` is seed000), with their deviation
    from seed 000's."""
    if model == "seed000":
        p50_ms, mean_ms = seed.p50_ms, seed.mean_ms
    else:
        p50_ms, mean_ms = figures.latency_p50_ms, figures.latency_mean_ms
    return {"store": store, "operation": operation, "clients": seed.clients, "model": model,
            "goodput_ops": figures.goodput_ops, "failure_rate": figures.failure_rate, "latency_p50_ms": p50_ms,
            "latency_mean_ms": mean_ms, "goodput_error": figures.goodput_ops / seed.goodput_ops - 1,
            "failure_points": 100 * (figures.failure_rate - seed.failure_rate)}


if __name__ == "__main__":
    sys.exit(main())
