"""Fault injection against a quick sweep: kills, damage and a concurrent sweep, then what the store holds.

    python -m studies.faults                 # every case, a few minutes on 2 cores
    python -m studies.faults --case corrupt  # one case (repeatable)

Each case runs the real sweep command (``sweep_main``, a local Ray per
driver) on a tiny grid in a fresh store, injects its fault, resumes where
the case calls for it, and then counts:

- rows expected: the grid's (config, seed) keys;
- rows stored: distinct keys the store's reader returns;
- duplicates: rows an outside reader that does not deduplicate
  (DuckDB ``read_parquet('<store>/**/*.parquet')``) sees beyond one per key;
- quarantined: files in ``_quarantine``.

Verdict PASS when every key is stored once, nothing is duplicated, and the
quarantine holds exactly the files the case damaged (and, where a case
says so, its own check holds: rows stored before the resume, good values
kept).

The cases: a clean sweep; SIGKILL and SIGTERM of the driver after its first
file, then resume; truncated, bit-flipped and foreign files, then resume;
two sweeps at once; SIGKILL a few seconds after the first run finished with
the command's own flush interval (the finished runs must be stored by then);
a damaged copy and a zero-byte file under a good file's name stem, and a
foreign file with the good file's keys, other values and a later
``finished_at`` (``part-mine-<valid content digest>.parquet``), each read by
``commit-sweeps status`` (read-only: the good file must stay) and then
resumed. One row per case goes to ``--out`` (default
``studies/faults/results/cases-<date>.csv``).
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
from datetime import datetime, timedelta, timezone
from pathlib import Path

from studies.results import add_out_flags, command_line, out_path, write_csv

ROOT = Path(__file__).resolve().parents[2]
PROG = "python -m studies.faults"
SEEDS = 3
FLUSH_S = 0.5


def grid():
    from ray_jobs import Grid

    # About 10 s of simulation on 2 cores: long enough to kill a driver mid-sweep.
    return Grid("faults", fixed={"provider": "s3x", "catalog": "storage", "runtime_median_ms": 20_000},
                swept={"num_tables": [1, 2, 5, 10], "inter_arrival_scale_ms": [20, 50, 100, 200, 500]})


def run_driver(store: str, default_flush: bool = False, seeds: int = SEEDS) -> int:
    """The sweep command itself (this study re-invoked with --driver)."""
    from commit_sweeps.sweep_command import sweep_main

    return sweep_main([grid()], ["--store", store, "--seeds", str(seeds), "--duration-s", "1200"],
                      flush_interval_s=None if default_flush else FLUSH_S)


def start(store: Path, default_flush: bool = False, seeds: int = SEEDS) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "SWEEPS_STORE")}
    return subprocess.Popen([sys.executable, "-m", "studies.faults", "--driver", str(store),
                             "--driver-seeds", str(seeds), *(["--default-flush"] if default_flush else [])],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def sweep(store: Path, seeds: int = SEEDS) -> tuple[int, str]:
    process = start(store, seeds=seeds)
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
    case_check: bool = True  # the case's own condition, said in its note

    @property
    def verdict(self) -> str:
        ok = (self.stored == self.expected and self.duplicates == 0
              and self.quarantined == self.expected_quarantined and self.case_check)
        return "PASS" if ok else "FAIL"


def measure(case: str, store: Path, expected_quarantined: int, note: str, case_check: bool = True,
            seeds: int = SEEDS) -> Outcome:
    import duckdb

    from ray_jobs.store import ResultsStore

    reader = ResultsStore(str(store))
    expected = len(grid().configs(duration_s=1200)) * seeds
    raw = duckdb.sql(f"SELECT count(*) FROM read_parquet('{store}/**/*.parquet', union_by_name = true)").fetchone()[0]
    stored = len(reader.scan(heal=False).keys())
    return Outcome(case, expected, stored, raw - stored, len(reader.quarantined()), expected_quarantined, note,
                   case_check)


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


def in_three_files(store: Path) -> list[Path]:
    """The store's data files, rewritten as three by the store's writer if it has fewer (a finished
    sweep merges its files into one)."""
    from ray_jobs.store import ResultsStore

    files = data_files(store)
    if len(files) >= 3:
        return files
    writer = ResultsStore(str(store))
    table = writer.scan().table
    for path in files:
        path.unlink()
    third = -(-table.num_rows // 3)
    for start in range(0, table.num_rows, third):
        writer.write_rows(table.slice(start, third))
    return data_files(store)


def case_corrupt(store: Path, baseline: Path) -> Outcome:
    shutil.copytree(baseline, store)
    files = in_three_files(store)
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


KILL_AFTER_FIRST_FILE_S = 3.0  # "a few seconds after the first run finished"
KILL_CASE_SEEDS = 30  # 600 runs, a minute or more on 2 cores: the kill lands mid-sweep
LONG_FLUSH_S = 30.0  # a flush interval that a kill a few seconds after the first run would beat: nothing stored


def case_kill_before_first_flush(store: Path) -> Outcome:
    import threading

    from ray_jobs.store import ResultsStore

    process = start(store, default_flush=True, seeds=KILL_CASE_SEEDS)
    fanning_out = threading.Event()

    def watch() -> None:
        for line in process.stdout:
            if line.startswith("running on"):
                fanning_out.set()

    threading.Thread(target=watch, daemon=True).start()
    deadline = time.monotonic() + 300
    while not fanning_out.is_set() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    # Wait for the first file, but never up to a long first flush: the kill must land before one.
    give_up = time.monotonic() + LONG_FLUSH_S - KILL_AFTER_FIRST_FILE_S - 5
    while not data_files(store) and process.poll() is None and time.monotonic() < give_up:
        time.sleep(0.05)
    time.sleep(KILL_AFTER_FIRST_FILE_S)
    mid_sweep = process.poll() is None
    process.send_signal(signal.SIGKILL)
    killed_at = datetime.now(timezone.utc)
    process.wait(timeout=120)
    at_kill = ResultsStore(str(store)).scan(heal=False)
    files_at_kill = len(data_files(store))
    first = min(at_kill.table.column("finished_at").to_pylist(), default=None)
    after_first = (killed_at - first).total_seconds() if first else None
    status, out = sweep(store, seeds=KILL_CASE_SEEDS)
    if not mid_sweep:
        said, check = "the sweep ended before the kill: nothing measured", False
    elif first is None:
        said, check = "no row stored at the kill", False
    else:
        said = (f"killed {after_first:.0f} s after the first run finished, {at_kill.table.num_rows} rows stored "
                f"in {files_at_kill} file(s)")
        check = after_first < LONG_FLUSH_S
    return measure("SIGKILL before a 30 s flush would run, resume", store, 0,
                   f"{said}; resume exit {status}: {_summary_line(out)}", check, seeds=KILL_CASE_SEEDS)


def _status(store: Path) -> str:
    """``commit-sweeps status`` on the store: a read-only command, which must leave every good file."""
    done = subprocess.run([sys.executable, "-m", "commit_sweeps", "status", "--store", str(store)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    return f"status exit {done.returncode}"


def _same_stem(store: Path, baseline: Path, content: bytes, case: str) -> Outcome:
    shutil.copytree(baseline, store)
    good = data_files(store)[0]
    shadow = good.with_name(f"{good.name.rsplit('-', 1)[0]}-{'0' * 32}.parquet")
    shadow.write_bytes(content)
    later = time.time() + 60
    os.utime(shadow, (later, later))  # newer than the good file, as a rewrite would be
    status = _status(store)
    kept = good.exists()
    code, out = sweep(store)
    return measure(case, store, 1, f"{status}, good file {'kept' if kept else 'DELETED'}; resume exit {code}: "
                                   f"{_summary_line(out)}", kept)


def case_same_stem_damaged(store: Path, baseline: Path) -> Outcome:
    first = data_files(baseline)[0]
    return _same_stem(store, baseline, first.read_bytes(), "same-stem damaged file (wrong digest)")


def case_same_stem_empty(store: Path, baseline: Path) -> Outcome:
    return _same_stem(store, baseline, b"", "zero-byte same-stem file")


def case_shadowing_foreign(store: Path, baseline: Path) -> Outcome:
    import hashlib

    import pyarrow as pa
    import pyarrow.parquet as pq

    shutil.copytree(baseline, store)
    good = data_files(store)[0]
    table = pq.read_table(good)
    forged = table.set_column(table.schema.get_field_index("throughput_cps"), "throughput_cps",
                              pa.array([999999.0] * table.num_rows, pa.float64()))
    later = pa.array([datetime.now(timezone.utc) + timedelta(hours=1)] * table.num_rows,
                     table.schema.field("finished_at").type)
    forged = forged.set_column(forged.schema.get_field_index("finished_at"), "finished_at", later)
    sink = pa.BufferOutputStream()
    pq.write_table(forged, sink)
    data = sink.getvalue().to_pybytes()
    (store / "faults" / f"part-mine-{hashlib.sha256(data).hexdigest()[:32]}.parquet").write_bytes(data)
    status = _status(store)
    code, out = sweep(store)
    from ray_jobs.store import ResultsStore

    values = ResultsStore(str(store)).scan().table.column("throughput_cps").to_pylist()
    shadowed = values.count(999999.0)
    return measure("shadowing foreign file (same keys, later finish)", store, 1,
                   f"{status}; resume exit {code}: {_summary_line(out)}; {shadowed} forged values read", shadowed == 0)


CASES = ("baseline", "sigkill", "sigterm", "corrupt", "concurrent", "kill-before-flush", "same-stem-damaged",
         "same-stem-empty", "shadowing-foreign")
NEED_BASELINE = ("baseline", "corrupt", "same-stem-damaged", "same-stem-empty", "shadowing-foreign")


def main() -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=CASES, action="append", help="run only this case (repeatable)")
    add_out_flags(parser, "one row per case, as CSV")
    parser.add_argument("--driver", metavar="STORE", help=argparse.SUPPRESS)
    parser.add_argument("--default-flush", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--driver-seeds", type=int, default=SEEDS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.driver:
        return run_driver(args.driver, args.default_flush, args.driver_seeds)
    chosen = args.case or list(CASES)
    out = out_path(args, "faults", "-".join(["cases", *dict.fromkeys(args.case or ())]), "csv")
    work = Path(tempfile.mkdtemp(prefix="faults-"))
    outcomes = []
    started = time.perf_counter()
    try:
        baseline = work / "baseline"
        if any(case in chosen for case in NEED_BASELINE):
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
        if "kill-before-flush" in chosen:
            outcomes.append(case_kill_before_first_flush(work / "kill-before-flush"))
        if "same-stem-damaged" in chosen:
            outcomes.append(case_same_stem_damaged(work / "same-stem-damaged", baseline))
        if "same-stem-empty" in chosen:
            outcomes.append(case_same_stem_empty(work / "same-stem-empty", baseline))
        if "shadowing-foreign" in chosen:
            outcomes.append(case_shadowing_foreign(work / "shadowing-foreign", baseline))
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
    write_csv(out, [{"case": o.case, "rows_expected": o.expected, "rows_stored": o.stored,
                     "duplicates": o.duplicates, "quarantined_files": o.quarantined,
                     "quarantined_expected": o.expected_quarantined, "verdict": o.verdict, "note": o.note}
                    for o in outcomes], command_line(PROG))
    print(f"wrote {out}")
    return 0 if all(o.verdict == "PASS" for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
