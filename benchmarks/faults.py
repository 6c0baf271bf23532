"""Fault injection against a quick sweep: kills, damage and a concurrent sweep, then what the store holds.

    python benchmarks/faults.py                 # every case, a few minutes on 2 cores
    python benchmarks/faults.py --case corrupt  # one case

Each case runs the real sweep command (``sweep_main``, a local Ray per
driver) on a tiny grid in a fresh store, injects its fault, resumes where
the case calls for it, and then counts:

- rows expected: the grid's (config, seed) keys;
- rows stored: distinct keys the store's reader returns;
- duplicates: rows an outside reader that does not deduplicate
  (DuckDB ``read_parquet('<store>/**/*.parquet')``) sees beyond one per key;
- quarantined: files in ``_quarantine``.

Verdict PASS when every key is stored once, nothing is duplicated, and the
quarantine holds exactly the files the case damaged.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEEDS = 3
FLUSH_S = 0.5


def grid():
    from ray_jobs import Grid

    # About 10 s of simulation on 2 cores: long enough to kill a driver mid-sweep.
    return Grid("faults", fixed={"provider": "s3x", "catalog": "storage", "runtime_median_ms": 20_000},
                swept={"num_tables": [1, 2, 5, 10], "inter_arrival_scale_ms": [20, 50, 100, 200, 500]})


def run_driver(store: str) -> int:
    """The sweep command itself (this script re-invoked with --driver)."""
    from ray_jobs import sweep_main

    return sweep_main([grid()], ["--store", store, "--seeds", str(SEEDS), "--duration-s", "1200"],
                      flush_interval_s=FLUSH_S)


def start(store: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "SWEEPS_STORE")}
    return subprocess.Popen([sys.executable, __file__, "--driver", str(store)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def sweep(store: Path) -> tuple[int, str]:
    process = start(store)
    out, _ = process.communicate(timeout=600)
    return process.returncode, out


def data_files(store: Path) -> list[Path]:
    return sorted((store / "faults").glob("part-*.parquet"))


def kill_after_first_file(store: Path, sig: int) -> tuple[int, str]:
    process = start(store)
    deadline = time.monotonic() + 300
    while not data_files(store) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(sig)
    out, _ = process.communicate(timeout=120)
    return process.returncode, out


@dataclass(frozen=True)
class Outcome:
    case: str
    expected: int
    stored: int
    duplicates: int
    quarantined: int
    expected_quarantined: int
    note: str

    @property
    def verdict(self) -> str:
        ok = (self.stored == self.expected and self.duplicates == 0
              and self.quarantined == self.expected_quarantined)
        return "PASS" if ok else "FAIL"


def measure(case: str, store: Path, expected_quarantined: int, note: str) -> Outcome:
    import duckdb

    from ray_jobs.store import ResultsStore

    reader = ResultsStore(str(store))
    expected = len(grid().configs(duration_s=1200)) * SEEDS
    raw = duckdb.sql(f"SELECT count(*) FROM read_parquet('{store}/**/*.parquet', union_by_name = true)").fetchone()[0]
    stored = len(reader.scan(heal=False).keys())
    return Outcome(case, expected, stored, raw - stored, len(reader.quarantined()), expected_quarantined, note)


def _summary_line(out: str) -> str:
    for line in out.splitlines():
        if line.startswith("faults:"):
            return line.split(":", 1)[1].strip()
    return "no summary"


def case_baseline(store: Path) -> Outcome:
    status, out = sweep(store)
    return measure("baseline", store, 0, f"exit {status}; {_summary_line(out)}")


def case_sigkill(store: Path) -> Outcome:
    killed, _ = kill_after_first_file(store, signal.SIGKILL)
    before = len(data_files(store))
    status, out = sweep(store)
    cleaned = next((line for line in out.splitlines() if line.startswith("stopped ")), "no Ray process left over")
    return measure("SIGKILL driver, resume", store, 0,
                   f"killed (exit {killed}) with {before} file(s) written; resume exit {status}: "
                   f"{_summary_line(out)}; {cleaned.split(' left by')[0]}")


def case_sigterm(store: Path) -> Outcome:
    stopped, _ = kill_after_first_file(store, signal.SIGTERM)
    status, out = sweep(store)
    return measure("SIGTERM driver, resume", store, 0,
                   f"stopped (exit {stopped}); resume exit {status}: {_summary_line(out)}")


def case_corrupt(store: Path, baseline: Path) -> Outcome:
    shutil.copytree(baseline, store)
    files = data_files(store)
    truncated, flipped, renamed = files[0], files[1 % len(files)], files[2 % len(files)]
    truncated.write_bytes(truncated.read_bytes()[: truncated.stat().st_size // 2])
    data = bytearray(flipped.read_bytes())
    data[len(data) - 100] ^= 0x01
    flipped.write_bytes(bytes(data))
    import pyarrow.parquet as pq
    table = pq.read_table(renamed)
    pq.write_table(table.set_column(table.schema.get_field_index("seed"), "seed",
                                    table.column("seed").cast("string")), store / "faults" / "foreign.parquet")
    (store / "faults" / f".tmp-0-{renamed.name}.partial").write_bytes(b"torn")
    status, out = sweep(store)
    return measure("truncate + bit flip + foreign file, resume", store, 3,
                   f"resume exit {status}: {_summary_line(out)}")


def case_concurrent(store: Path) -> Outcome:
    first, second = start(store), start(store)
    out_first, _ = first.communicate(timeout=600)
    out_second, _ = second.communicate(timeout=600)
    codes = sorted([first.returncode, second.returncode])
    refused = "being swept by another driver" in out_first + out_second
    return measure("two sweeps at once", store, 0,
                   f"exits {codes}; {'second refused by the lease' if refused else 'no refusal'}")


CASES = ("baseline", "sigkill", "sigterm", "corrupt", "concurrent")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=CASES, action="append", help="run only this case (repeatable)")
    parser.add_argument("--driver", metavar="STORE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.driver:
        return run_driver(args.driver)
    chosen = args.case or list(CASES)
    work = Path(tempfile.mkdtemp(prefix="faults-"))
    outcomes = []
    started = time.perf_counter()
    try:
        baseline = work / "baseline"
        if "baseline" in chosen or "corrupt" in chosen:
            outcome = case_baseline(baseline)
            if "baseline" in chosen:
                outcomes.append(outcome)
        if "sigkill" in chosen:
            outcomes.append(case_sigkill(work / "sigkill"))
        if "sigterm" in chosen:
            outcomes.append(case_sigterm(work / "sigterm"))
        if "corrupt" in chosen:
            outcomes.append(case_corrupt(work / "corrupt", baseline))
        if "concurrent" in chosen:
            outcomes.append(case_concurrent(work / "concurrent"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    header = ("case", "rows expected", "rows stored", "duplicates", "quarantined files", "verdict")
    table = [header] + [(o.case, str(o.expected), str(o.stored), str(o.duplicates), str(o.quarantined), o.verdict)
                        for o in outcomes]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    print()
    for o in outcomes:
        print(f"{o.case}: {o.note}")
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0 if all(o.verdict == "PASS" for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
