"""Run sweeps on Ray: resume from the store, fan out batches, collect, store.

The driver (this module) is the only writer of the store. Workers return
rows; the driver buffers them and writes a Parquet file every
``flush_interval_s`` (2 s by default; and at the end, and when
interrupted), merging the small files as it goes (``RowCollector``). So a
worker that dies mid-task costs one rerun of its batch and nothing else,
and a driver that dies, even by SIGKILL, loses at most the rows of its last
few seconds, which the next run recomputes: nothing is stored twice and
nothing is lost.

Resume: before fanning out, the driver reads which (experiment, config_hash,
seed) keys the store holds and runs only the others. Rerunning a finished
sweep computes nothing.

Ray must already be initialised (see ``ray_jobs.connect``).
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Iterable, Optional, Sequence

import pyarrow as pa
import ray

from simcore import SimConfig, bounds
from ray_jobs.batching import (DEFAULT_BATCH_TARGET_S, DEFAULT_MAX_BATCH_UNITS, MIN_TASKS_PER_CPU, WorkUnit,
                               batch_cost_s, make_batches)
from ray_jobs.progress import Progress, ProgressPrinter
from ray_jobs.provenance import Provenance, current_provenance
from ray_jobs.schema import RESULTS_SCHEMA
from ray_jobs.store import ResultsStore, UnreadableFile
from ray_jobs.worker import BatchResult, UnitFailure, run_batch

# A driver killed without warning loses the runs of the last interval. At 30 s a sweep killed in its
# first half minute lost every finished run; a flush of a few rows takes milliseconds.
DEFAULT_FLUSH_INTERVAL_S = 2.0
DEFAULT_FLUSH_ROWS = 5000
MERGE_FILES = 8  # a collector merges this many files of one tier into one of the next
_WAIT_TICK_S = 1.0


@dataclass(frozen=True)
class SweepPlan:
    """One experiment's share of a sweep: its configs, each run once per seed."""

    experiment: str
    configs: tuple[SimConfig, ...]
    seeds: tuple[int, ...]
    quick: bool = False
    compares: Optional[dict] = None  # the grid's Treatment record, for the dashboard's comparisons

    def units(self) -> list[WorkUnit]:
        return [WorkUnit(self.experiment, config, seed) for config in self.configs for seed in self.seeds]

    def record(self) -> dict:
        """The plan as stored for ``status``: what "done" means for this experiment."""
        return {"experiment": self.experiment, "config_hashes": [c.config_hash for c in self.configs],
                "seeds": list(self.seeds), "quick": self.quick,
                "duration_s": sorted({c.duration_s for c in self.configs}),
                "compares": self.compares, "command": f"commit-sweeps sweep {self.experiment}",
                "planned_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}


@dataclass(frozen=True)
class ExperimentCounts:
    experiment: str
    total: int  # (config, seed) runs in the plan
    skipped: int  # already stored before this sweep
    run: int  # computed and stored now
    failed: int  # raised, or their batch was lost beyond retries
    not_run: int = 0  # left when the sweep was interrupted


@dataclass(frozen=True)
class SweepSummary:
    """The outcome of ``run_sweep``.

    Times: ``scan_s`` reading the store, ``fanout_s`` from the first
    submission to the last result, ``write_s`` spent writing files,
    ``simulate_s`` the simulation time summed over workers (busy CPU).
    """

    counts: tuple[ExperimentCounts, ...]
    failures: tuple[UnitFailure, ...]
    unreadable: tuple[UnreadableFile, ...]
    files_written: int
    batches: int
    scan_s: float
    fanout_s: float
    write_s: float
    simulate_s: float
    wall_s: float
    interrupted: bool = False

    @property
    def total(self) -> int:
        return sum(c.total for c in self.counts)

    @property
    def skipped(self) -> int:
        return sum(c.skipped for c in self.counts)

    @property
    def run(self) -> int:
        return sum(c.run for c in self.counts)

    @property
    def failed(self) -> int:
        return sum(c.failed for c in self.counts)

    @property
    def ok(self) -> bool:
        return self.failed == 0 and not self.interrupted


@dataclass
class RowCollector:
    """Driver-side buffer of finished rows, written to the store within seconds.

    Rows are written after at most ``flush_interval_s`` seconds or ``flush_rows`` rows, whichever
    comes first. Frequent flushes make small files, so the collector merges them as a counter
    carries: every ``MERGE_FILES`` files of one tier (a flush is tier 0) become one file of the
    next tier (``ResultsStore.merge_files``, safe to kill at any point). A collector thus leaves at
    most ``MERGE_FILES - 1`` files per tier and experiment, rewrites each row about once per tier,
    and ``flush(final=True)`` merges what is left into one file per experiment.
    """

    store: ResultsStore
    flush_interval_s: float = DEFAULT_FLUSH_INTERVAL_S
    flush_rows: int = DEFAULT_FLUSH_ROWS
    pending: list = field(default_factory=list)
    pending_rows: int = 0
    write_s: float = 0.0
    guard: Optional[Callable[[], None]] = None  # raises when this driver may no longer write (lease lost)
    last_flush: float = field(default_factory=time.monotonic)
    files: dict = field(default_factory=dict)  # experiment -> [(path, tier)]: this collector's files in the store

    @property
    def files_written(self) -> int:
        """Data files this collector has in the store now (written and not merged away)."""
        return sum(len(files) for files in self.files.values())

    def add(self, rows: pa.Table) -> None:
        if rows.num_rows:
            self.pending.append(rows)
            self.pending_rows += rows.num_rows

    def flush_if_due(self) -> None:
        due = time.monotonic() - self.last_flush >= self.flush_interval_s
        if self.pending_rows and (due or self.pending_rows >= self.flush_rows):
            self.flush()

    def flush(self, final: bool = False) -> None:
        """Write the buffered rows, then merge what is due (everything, when ``final``)."""
        self.last_flush = time.monotonic()
        if not self.pending_rows and not final:
            return
        if self.guard is not None:
            self.guard()
        started = time.perf_counter()
        if self.pending_rows:
            for path in self.store.write_rows(pa.concat_tables(self.pending)):
                self.files.setdefault(_folder_of(path), []).append((path, 0))
            self.pending, self.pending_rows = [], 0
        for files in self.files.values():
            self._merge(files, final)
        self.write_s += time.perf_counter() - started

    def _merge(self, files: list, final: bool) -> None:
        while True:
            if final and len(files) > 1:
                group = list(files)
            elif len(files) >= MERGE_FILES and len({tier for _, tier in files[-MERGE_FILES:]}) == 1:
                group = files[-MERGE_FILES:]
            else:
                return
            if self.guard is not None:
                self.guard()
            merged = self.store.merge_files([path for path, _ in group])
            tier = max(tier for _, tier in group) + 1
            files[len(files) - len(group):] = [(path, tier) for path in merged]


def _folder_of(path: str) -> str:
    """The experiment folder a store data file is in."""
    return path.rsplit("/", 2)[-2]


@dataclass(frozen=True)
class Work:
    """What a sweep has to do, found by comparing its plans with the store.

    Attributes:
        plans: the sweep's plans.
        todo: units not in the store, to run.
        totals, skipped: units per experiment, in the plans and already stored.
        unreadable: data files of these experiments that failed verification.
        scan_s: seconds spent reading the store.
    """

    plans: tuple[SweepPlan, ...]
    todo: tuple[WorkUnit, ...]
    totals: dict
    skipped: dict
    unreadable: tuple[UnreadableFile, ...]
    scan_s: float


def find_work(plans: Sequence[SweepPlan], store: ResultsStore) -> Work:
    """Read which keys ``store`` holds for the plans' experiments; the rest is to do.

    Needs no Ray, so a finished sweep is recognised without starting a cluster.
    """
    started = time.perf_counter()
    scan = store.scan(sorted({plan.experiment for plan in plans}))
    stored = scan.keys()
    units, seen = [], set()
    for plan in plans:
        for unit in plan.units():
            if unit.key not in seen:  # two plans naming the same run do it once
                seen.add(unit.key)
                units.append(unit)
    todo = tuple(unit for unit in units if unit.key not in stored)
    totals = _count_by_experiment(units)
    left = _count_by_experiment(todo)
    return Work(plans=tuple(plans), todo=todo, totals=totals,
                skipped={e: n - left.get(e, 0) for e, n in totals.items()},
                unreadable=scan.unreadable, scan_s=time.perf_counter() - started)


def run_sweep(work: Work, store: ResultsStore, *, max_parallel: Optional[int] = None,
              flush_interval_s: float = DEFAULT_FLUSH_INTERVAL_S, flush_rows: int = DEFAULT_FLUSH_ROWS,
              batch_target_s: float = DEFAULT_BATCH_TARGET_S,
              max_batch_units: int = DEFAULT_MAX_BATCH_UNITS,
              progress: Optional[ProgressPrinter] = None,
              provenance: Optional[Provenance] = None,
              log: Optional[Callable[[str], None]] = None,
              max_memory_bytes: Optional[int] = None,
              guard: Optional[Callable[[], None]] = None) -> SweepSummary:
    """Run the units of ``work`` (see ``find_work``) and store their rows.

    Args:
        work: what to run.
        store: where rows are written (and the plans recorded, for ``status``).
        max_parallel: most tasks in flight at once (default: as many as the
            cluster schedules).
        flush_interval_s: write buffered rows at least this often; a killed
            driver loses at most this much work (the small files are merged
            as the sweep goes, and into one per experiment at its end).
        flush_rows: also write once this many rows are buffered.
        batch_target_s, max_batch_units: batching (see ``ray_jobs.batching``).
        progress: where progress goes (default: a ``ProgressPrinter`` on stderr).
        provenance: recorded in every row (default: looked up here).
        log: where failures and warnings go (default: through ``progress``).
        max_memory_bytes: the work bound's memory limit on workers (default:
            ``simcore.bounds``' own, from their machine). Each task also asks
            Ray for the memory its largest run is estimated to need, so Ray
            places it where it fits, and a batch no node could hold fails by
            name instead of waiting forever.
        guard: called before every write; raises to stop writing (``Lease.check``:
            another sweep took this one's lease over).

    Returns:
        Counts per experiment, failures, and where the time went. On
        KeyboardInterrupt (or SIGTERM turned into one) the rows finished so
        far are written and the summary has ``interrupted=True``.

    Example (with Ray started; ``tests/test_ray_jobs.py`` runs it for real)::

        work = find_work([SweepPlan("demo", configs, seeds=(1, 2))], store)
        summary = run_sweep(work, store)
    """
    if work.todo and not ray.is_initialized():
        raise RuntimeError("run_sweep needs Ray: call ray_jobs.connect.connect_ray() or ray.init() first")
    if max_parallel is not None and max_parallel < 1:
        raise ValueError(f"max_parallel: {max_parallel!r} is not allowed; expected an integer >= 1 or None")
    progress = progress or ProgressPrinter()
    log = log or progress.message
    provenance = provenance or current_provenance()
    started = time.perf_counter()
    for bad in work.unreadable:
        log("warning: " + bad.describe())
    for plan in work.plans:
        store.write_plan(plan.experiment, plan.record())
    todo, totals, skipped = work.todo, work.totals, work.skipped

    cpus = int(ray.cluster_resources().get("CPU", 1)) if todo else 1
    parallelism = max(1, min(cpus, max_parallel or cpus))
    batches = deque(make_batches(todo, target_s=batch_target_s, max_units=max_batch_units,
                                 min_batches=MIN_TASKS_PER_CPU * parallelism))
    batch_count = len(batches)
    total_cost = sum(batch_cost_s(batch) for batch in batches)
    node_memory = _largest_node_memory() if todo else None
    collector = RowCollector(store, flush_interval_s, flush_rows, guard=guard)
    run_by_exp: dict[str, int] = {}
    failures: list[UnitFailure] = []
    in_flight: dict[ray.ObjectRef, tuple[WorkUnit, ...]] = {}
    done_cost = 0.0
    simulate_s = 0.0
    interrupted = False
    fanout_started = time.perf_counter()

    def snapshot() -> Progress:
        return Progress(done=sum(run_by_exp.values()) + len(failures), failed=len(failures), total=len(todo),
                        elapsed_s=time.perf_counter() - fanout_started, done_cost=done_cost,
                        total_cost=total_cost)

    try:
        while batches or in_flight:
            while batches and (max_parallel is None or len(in_flight) < max_parallel):
                batch = batches.popleft()
                need = batch_memory_bytes(batch)
                if node_memory is not None and need > node_memory:
                    for failure in _unplaceable(batch, need, node_memory):
                        failures.append(failure)
                        log("failed: " + failure.describe())
                    done_cost += batch_cost_s(batch)
                    continue
                task = run_batch.options(memory=need)
                in_flight[task.remote(batch, provenance, max_memory_bytes)] = batch
            ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=_WAIT_TICK_S)
            if ready:
                rest = [ref for ref in in_flight if ref not in ready]
                if rest:
                    more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
                    ready += more
            for ref in ready:
                batch = in_flight.pop(ref)
                done_cost += batch_cost_s(batch)
                result = _fetch(ref, batch)
                collector.add(result.rows)
                for experiment in result.rows.column("experiment").to_pylist():
                    run_by_exp[experiment] = run_by_exp.get(experiment, 0) + 1
                simulate_s += sum(result.rows.column("wall_s").to_pylist())
                for failure in result.failures:
                    failures.append(failure)
                    log("failed: " + failure.describe())
            collector.flush_if_due()
            progress.update(snapshot())
    except KeyboardInterrupt:
        # Tasks still in flight are not cancelled here: force-cancelling races with
        # replies already on the wire and can abort the driver inside Ray's core
        # worker before the rows below are written. They are owned by this driver,
        # so Ray stops them when it disconnects (ray.shutdown or process exit).
        interrupted = True
        log(f"interrupted: writing the {collector.pending_rows} rows finished so far")
    finally:
        collector.flush(final=not interrupted)  # stopped: write and go; the small files stay bounded
        if todo:
            progress.update(snapshot(), force=True)
            progress.close()
    fanout_s = time.perf_counter() - fanout_started

    failed_by_exp = _count_by_experiment(failures)
    counts = tuple(ExperimentCounts(
        experiment=e, total=totals[e], skipped=skipped[e], run=run_by_exp.get(e, 0),
        failed=failed_by_exp.get(e, 0),
        not_run=totals[e] - skipped[e] - run_by_exp.get(e, 0) - failed_by_exp.get(e, 0))
        for e in sorted(totals))
    return SweepSummary(counts=counts, failures=tuple(failures), unreadable=work.unreadable,
                        files_written=collector.files_written, batches=batch_count, scan_s=work.scan_s,
                        fanout_s=fanout_s, write_s=collector.write_s, simulate_s=simulate_s,
                        wall_s=work.scan_s + time.perf_counter() - started, interrupted=interrupted)


def _fetch(ref: ray.ObjectRef, batch: Sequence[WorkUnit]) -> BatchResult:
    """The batch's result; a batch lost beyond its retries counts as failed, unit by unit."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayError as error:
        reason = f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
        return BatchResult(rows=RESULTS_SCHEMA.empty_table(), failures=tuple(
            UnitFailure(u.experiment, u.config.config_hash, u.seed, u.config.to_dict(), reason) for u in batch))


def batch_memory_bytes(batch: Sequence[WorkUnit]) -> int:
    """Memory to ask Ray for: a batch runs its units one after another, so its largest one."""
    return int(max(bounds.estimate(unit.config).peak_bytes for unit in batch))


def _largest_node_memory() -> Optional[float]:
    """The most memory any live Ray node offers to tasks (None when Ray does not say)."""
    offers = [node["Resources"].get("memory", 0.0) for node in ray.nodes() if node.get("Alive")]
    return max(offers) if offers and max(offers) > 0 else None


def _unplaceable(batch: Sequence[WorkUnit], need: int, node_memory: float) -> list[UnitFailure]:
    reason = (f"WorkBoundError: needs about {bounds.format_bytes(need)} of memory, more than any Ray node "
              f"offers ({bounds.format_bytes(node_memory)}); make the run smaller or add a larger node")
    return [UnitFailure(u.experiment, u.config.config_hash, u.seed, u.config.to_dict(), reason) for u in batch]


def _count_by_experiment(items: Iterable) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item.experiment] = counts.get(item.experiment, 0) + 1
    return counts
