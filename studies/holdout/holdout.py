"""Predict what was not measured: fit seed 000 on a few client counts, score the rest.

    python -m studies.holdout --fit 1-4 [--only s3:cas,gcp:cas] [--seeds 1,2,3] [--duration-s 300]
                              [--max-evaluations N] [--data seed000_conditional_writes.csv]
                              [--known-store SEED [--known-store-time-x X]] [--out FILE] [--markdown FILE]

For every store of seed 000's per-thread table, ``fit`` (simcore.fit, as
``commit-sweeps fit --table`` does, with the throttle model for the CAS of
gcp, azure and azurex as scripts/fit_measured.py fits them) sees only the
rows of the client counts given to ``--fit`` (parsed as ``bench --clients``
parses them). ``bench`` of the fitted profile then runs at every client
count of the table, and each client count the fit did not see is scored
with the tolerance: failure rate within 5 points and goodput within 10%
(seed 000's goodput recovered from its counts, as ``read_table`` does).
Prints, per (store, operation), the held-out cells within tolerance and
what drifts, as markdown (``--markdown`` also writes it to a file), and
progress on stderr. Every held-out cell goes to ``--out`` (default
``studies/holdout/results/fit-<counts>-<date>.csv``).

``--known-store SEED`` asks the same of a store whose model is known: the
rows are not seed 000's but each store's shipped measured profile
(``simcore/measured/STORE.toml``, itself fitted on all of seed 000)
simulated at seed 000's client counts, each for seed 000's measuring time
of that operation (so with about seed 000's noise), with seed ``SEED`` (a
stream apart from the fit's and the scoring's seeds). The fit cannot be
wrong about the model there, only about which terms the rows determine, so
what it misses is what a few client counts do not say.
``--known-store-time-x X`` measures each of those rows X times as long.
"""

from __future__ import annotations

import argparse
import math
import pathlib
import sys
import time
from dataclasses import dataclass, replace
from typing import Callable, Optional, Sequence

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from simcore.bench import bench, parse_clients  # noqa: E402
from simcore.errors import ConfigError  # noqa: E402
from simcore.fit import (FAILURE_TOLERANCE, SEED000_THROTTLED, TREND_TOLERANCE, ClientStats, fit_profile,  # noqa: E402
                         measuring_time_s, read_table, simulated_stats, with_recovered_goodput)
from commit_sweeps.flags import add_seeds_flag, bad_input  # noqa: E402
from simcore.profiles import measured_profile  # noqa: E402
from simcore.providers import PROVIDERS, Provider  # noqa: E402
from studies.results import add_out_flags, command_line, out_path, write_csv  # noqa: E402

DEFAULT_DATA = ROOT / "simcore" / "measured" / "seed000_conditional_writes.csv"  # seed 000's tables, as shipped
STORES = ("s3", "s3x", "azure", "azurex", "gcp")
GOODPUT_TOLERANCE = TREND_TOLERANCE  # goodput within 10%; failure rate within 5 points (FAILURE_TOLERANCE)
KNOWN_STORE_STREAM = 1000  # --known-store SEED simulates its rows with seed KNOWN_STORE_STREAM + SEED: never a seed
# the fit (1-3) or the scoring (--seeds) simulates with, which would hand the fit the rows' own noise


@dataclass(frozen=True)
class Cell:
    """One held-out client count: seed 000 against the profile fitted without it."""

    clients: int
    measured_goodput: float
    simulated_goodput: float
    measured_failure: float
    simulated_failure: float

    @property
    def goodput_error(self) -> float:
        """Relative: +0.12 is 12% above seed 000."""
        return self.simulated_goodput / self.measured_goodput - 1.0

    @property
    def failure_points(self) -> float:
        return 100.0 * (self.simulated_failure - self.measured_failure)

    @property
    def within(self) -> bool:
        return (abs(self.goodput_error) <= GOODPUT_TOLERANCE
                and abs(self.failure_points) <= 100.0 * FAILURE_TOLERANCE)


def held_out_cells(profile: Provider, operation: str, measured: Sequence[ClientStats], fitted: Sequence[int],
                   seeds: Sequence[int], duration_s: float) -> list[Cell]:
    """``profile``'s benchmark at every client count of ``measured`` the fit did not see, beside seed 000's."""
    held = [s for s in measured if s.clients not in set(fitted)]
    if not held:
        return []
    results = bench(profile, operation, [s.clients for s in held], seeds, duration_s)
    return [Cell(m.clients, m.goodput_ops, r.goodput_ops, m.failure_rate, r.failure_rate)
            for m, r in zip(held, results)]


def _span(values: Sequence[float], unit: str) -> str:
    low, high = min(values), max(values)
    return f"{low:.0f}{unit}" if round(low) == round(high) else f"{low:.0f}-{high:.0f}{unit}"


def _where(counts: Sequence[int], cells: Sequence[Cell]) -> str:
    """'at 7', 'at 5-9', 'from 12' (every held-out count from there on) or 'at 5, 9, 16'."""
    counts = sorted(counts)
    later = [c.clients for c in cells if c.clients >= counts[0]]
    if len(counts) == 1:
        return f"at {counts[0]}"
    if counts == later and len(counts) > 1:
        return f"from {counts[0]}"
    if counts == list(range(counts[0], counts[-1] + 1)):
        return f"at {counts[0]}-{counts[-1]}"
    return "at " + ", ".join(map(str, counts))


def drift(cells: Sequence[Cell]) -> str:
    """What the cells outside tolerance get wrong, in words: 'goodput 11-12% low from 8 clients (...)'."""
    parts = []
    for name, error, limit, unit in (
            ("failure", lambda c: c.failure_points, 100.0 * FAILURE_TOLERANCE, " points"),
            ("goodput", lambda c: 100.0 * c.goodput_error, 100.0 * GOODPUT_TOLERANCE, "%")):
        for sign, word in ((1, "high"), (-1, "low")):
            bad = [c for c in cells if sign * error(c) > limit]
            if not bad:
                continue
            worst = max(bad, key=lambda c: abs(error(c)))
            example = (f"{100 * worst.simulated_failure:.1f}% vs {100 * worst.measured_failure:.1f}%"
                       if name == "failure" else f"{worst.simulated_goodput:.3g} vs {worst.measured_goodput:.3g} op/s")
            parts.append(f"{name} {_span([abs(error(c)) for c in bad], unit)} {word} "
                         f"{_where([c.clients for c in bad], cells)} clients ({example} at {worst.clients})")
    return "; ".join(parts) if parts else "-"


def fit_store(store: str, measured: dict[str, list[ClientStats]], fitted: Sequence[int],
              max_evaluations: Optional[int] = None, progress: Optional[Callable[[str], None]] = None
              ) -> Provider:
    """The profile ``fit --table --provider STORE`` writes from the rows of the ``fitted`` client counts only."""
    seen = {op: [s for s in stats if s.clients in set(fitted)] for op, stats in measured.items()}
    for op, rows in seen.items():
        if not any(s.clients == 1 for s in rows):
            raise ConfigError("fit", list(fitted), f"client counts that include 1 ({store} {op} has no such row)")
    profile, _ = fit_profile(PROVIDERS[store], seen, throttled=SEED000_THROTTLED.get(store, ()),
                             max_evaluations=max_evaluations, progress=progress)
    return profile


def known_store_table(store: str, measured: dict[str, list[ClientStats]], seed: int, time_x: float = 1.0
                      ) -> dict[str, list[ClientStats]]:
    """Rows like ``measured`` (its client counts, ``time_x`` x its measuring time), simulated from the store's
    shipped measured profile with seed ``KNOWN_STORE_STREAM + seed``, holding what a per-thread table holds: no
    failed op's latency, goodput recovered from the counts (``read_table``)."""
    profile = measured_profile(store)
    out = {}
    for op, stats in measured.items():
        rows = simulated_stats(profile, op, [s.clients for s in stats], time_x * measuring_time_s(stats),
                               seed=KNOWN_STORE_STREAM + seed)
        out[op] = with_recovered_goodput([replace(s, failed_mean_ms=None) for s in rows])
    return out


def table(rows: Sequence[tuple[str, Sequence[Cell]]]) -> str:
    """The summary table: held-out cells within tolerance and what drifts, per (store, operation), then all."""
    lines = ["| store, operation | held-out cells within tolerance | what drifts |", "|---|---|---|"]
    total = within = 0
    for name, cells in rows:
        ok = sum(c.within for c in cells)
        total += len(cells)
        within += ok
        lines.append(f"| {name} | {ok} / {len(cells)} | {drift(cells)} |")
    share = f" ({within / total:.0%})" if total else ""
    lines.append(f"| **all** | **{within} / {total}**{share} | |")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    prog = "python -m studies.holdout"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--fit", required=True, metavar="CLIENTS",
                        help="the client counts the fit sees: 1-4, or a list like 1,2,4,8 (must include 1)")
    parser.add_argument("--only", default=None, metavar="STORE:OP,...",
                        help="the (store, operation) pairs to fit and score, e.g. s3:cas,gcp:cas (default: all)")
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="seed 000's per-thread CSV")
    add_seeds_flag(parser)
    parser.add_argument("--duration-s", type=float, default=300.0, help="simulated seconds per bench run")
    parser.add_argument("--max-evaluations", type=int, default=None,
                        help="simulations per operation fitted (default: fit's)")
    parser.add_argument("--markdown", default=None, metavar="FILE", help="also write the markdown table here")
    add_out_flags(parser, "every held-out cell, as CSV")
    parser.add_argument("--known-store", type=int, default=None, metavar="SEED",
                        help="the rows from each store's shipped measured profile, simulated at seed 000's client "
                             "counts and measuring times with this seed, instead of seed 000's (a store whose "
                             "model is known)")
    parser.add_argument("--known-store-time-x", type=float, default=1.0, metavar="X",
                        help="with --known-store: each row measured X times as long as seed 000's (default 1: its "
                             "noise; 10: what a user who measures ten times as long would have)")
    args = parser.parse_args(argv)
    try:
        fitted = parse_clients(args.fit)
        if 1 not in fitted:
            raise ConfigError("fit", args.fit, "client counts that include 1 (the fit's measuring time and write)")
        wanted = None
        if args.only:
            wanted = {tuple(item.split(":", 1)) if ":" in item else (item, "cas") for item in args.only.split(",")}
            for store, op in wanted:
                if store not in STORES or op not in ("cas", "append"):
                    raise ConfigError("only", f"{store}:{op}", "STORE:OP with STORE one of " + ", ".join(STORES)
                                      + " and OP cas or append")
        if not (math.isfinite(args.duration_s) and args.duration_s >= 1):
            raise ConfigError("duration_s", args.duration_s, "a number of seconds >= 1")
        seeds = list(args.seeds)
        if args.known_store is not None and args.known_store < 0:
            raise ConfigError("known_store", args.known_store, "a seed >= 0")
        if not (math.isfinite(args.known_store_time_x) and 0.01 <= args.known_store_time_x <= 1000):
            raise ConfigError("known_store_time_x", args.known_store_time_x, "a number from 0.01 to 1000")
        if args.known_store_time_x != 1.0 and args.known_store is None:
            raise ConfigError("known_store_time_x", args.known_store_time_x, "no value other than 1 without "
                                                                             "--known-store")
        tables = {store: read_table(args.data, store) for store in STORES
                  if wanted is None or any(s == store for s, _ in wanted)}
    except ConfigError as error:
        return bad_input(error)
    out = out_path(args, "holdout", _stem(fitted, wanted, args.known_store, args.known_store_time_x), "csv")
    if args.known_store is not None:
        tables = {store: known_store_table(store, measured, args.known_store, args.known_store_time_x)
                  for store, measured in tables.items()}

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    rows = []
    for store, measured in tables.items():
        ops = {op: stats for op, stats in measured.items() if wanted is None or (store, op) in wanted}
        if not ops:
            continue
        # An append is fitted after the store's CAS, whose fit fixes when reads observe the object (fit_profile):
        # scoring the append alone still fits the CAS, so that it scores what the whole run would.
        fit_ops = {op: stats for op, stats in measured.items() if op in ops or (op == "cas" and "append" in ops)}
        started = time.perf_counter()
        profile = fit_store(store, fit_ops, fitted, args.max_evaluations, progress)
        progress(f"{store}: fitted {', '.join(fit_ops)} on clients {args.fit} in "
                 f"{time.perf_counter() - started:.0f} s")
        for op in sorted(ops, key=lambda o: o != "cas"):
            cells = held_out_cells(profile, op, ops[op], fitted, seeds, args.duration_s)
            rows.append((f"{store} {op}", cells))
            progress(f"{store} {op}: {sum(c.within for c in cells)} of {len(cells)} held-out cells within tolerance")
    command = f"{prog} --fit {args.fit}"
    source = ""
    if args.known_store is not None:
        command += f" --known-store {args.known_store}"
        longer = ""
        if args.known_store_time_x != 1.0:
            command += f" --known-store-time-x {args.known_store_time_x:g}"
            longer = f", {args.known_store_time_x:g} x its measuring time"
        source = (f" on the stores' measured profiles simulated at seed 000's counts (seed "
                  f"{KNOWN_STORE_STREAM + args.known_store}{longer})")
    text = (f"Fitted on clients {args.fit}{source}, scored at the others (seeds {','.join(map(str, seeds))} x "
            f"{args.duration_s:g} s): `{command}`\n\n" + table(rows))
    print(text)
    if args.markdown:
        pathlib.Path(args.markdown).write_text(text + "\n")
    settings = {"fit": ",".join(map(str, fitted)), "seeds": ",".join(map(str, seeds)), "duration_s": args.duration_s,
                "known_store_seed": args.known_store, "known_store_time_x": args.known_store_time_x}
    write_csv(out, cell_rows(rows, settings), command_line(prog, argv))
    print(f"wrote {out}", file=sys.stderr)
    return 0


def cell_rows(rows: Sequence[tuple[str, Sequence[Cell]]], settings: dict) -> list[dict]:
    """One row per held-out cell: seed 000's figures beside the prediction, and whether it is within tolerance."""
    return [{"store": name.split()[0], "operation": name.split()[1], "clients": c.clients,
             "measured_goodput_ops": c.measured_goodput, "predicted_goodput_ops": c.simulated_goodput,
             "goodput_error": c.goodput_error, "measured_failure_rate": c.measured_failure,
             "predicted_failure_rate": c.simulated_failure, "failure_points": c.failure_points,
             "within": c.within, **settings}
            for name, cells in rows for c in cells]


def _stem(fitted: Sequence[int], wanted, known_store: Optional[int], time_x: float) -> str:
    """The results file's name: the fitted counts, the pairs scored, the known store.

    >>> _stem([1, 2, 4], {("gcp", "cas"), ("s3", "cas")}, 1, 10.0)
    'fit-1-2-4-gcp_cas-s3_cas-known-1-x10'
    """
    parts = ["fit", *map(str, fitted)]
    parts += sorted(f"{store}_{op}" for store, op in wanted or ())
    if known_store is not None:
        parts += ["known", str(known_store)] + ([f"x{time_x:g}"] if time_x != 1.0 else [])
    return "-".join(parts)


if __name__ == "__main__":
    sys.exit(main())
