"""The knee search: every curve of an experiment at once, rows to the store, one line per finished curve.

A front end of the one search executor (``ray_jobs.search``, which
``commit-sweeps capacity`` uses too): one search per curve, all driven
together, in rounds decided by results only, after the same one-seed
screening pass. How the parts fit:

- Each simulation is one Ray task (``ray_jobs.search.ray_tasks``, one CPU;
  a worker that dies is retried, a simulation that raises is reported
  against its curve, whose search stops). At most ``--max-parallel`` (else
  the cluster's CPUs) run at once.
- ``StoreRecorder`` turns each finished simulation into a result row and
  writes the rows to the store from the driver, at least every 30 s, so the
  store keeps a single writer, as in ``ray_jobs.fanout``; it also prints a
  line per finished curve and a progress line every 15 s. Rows go under
  ``<experiment>_knee`` (``ray_jobs.knee_curves``) in the ordinary schema,
  so a dashboard reads the searched points like any other.
- Resuming comes from the results store, which holds every finished
  simulation: a rerun reads it, gives the rows to the executor, and runs
  only what is missing: a finished curve costs nothing, an interrupted one
  continues its search.

``run_knee_search`` needs Ray initialised (``ray_jobs.connect``) unless it is
given a ``submit``.
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Optional, Sequence

from simcore import SimConfig
from simcore.bisection import SearchRange
from simcore.usable import ABOVE_SEARCH_RANGE, ERROR, FOUND, SEARCHING
from ray_jobs.fanout import DEFAULT_FLUSH_INTERVAL_S, RowCollector  # the sweeps' interval: rows land within seconds
from ray_jobs.knee_curves import Curve, CurveOutcome, Evidence, complete_points, knee_experiment_name
from ray_jobs.progress import format_duration
from ray_jobs.provenance import Provenance, current_provenance
from ray_jobs.schema import make_row, rows_to_table
from ray_jobs.search import CurveResult, CurveSpec, Events, Executor, SeedRun, Submit, known_step, ray_tasks
from ray_jobs.store import ResultsStore

PROGRESS_INTERVAL_S = 15.0  # as ray_jobs.progress writes lines into job logs
MAX_PROBES_PER_CURVE = 7  # three levels of the bisection tree per round


def curve_specs(curves: Sequence[Curve], evidence: Optional[Evidence] = None) -> list[CurveSpec]:
    """The executor's view of the curves, with what the store holds of each."""
    evidence = evidence or {}
    return [CurveSpec(curve.curve_id, curve.config_at, evidence.get(curve.curve_id, {})) for curve in curves]


def curves_done(curves: Sequence[Curve], seeds: Sequence[int], search_range: SearchRange,
                evidence: Optional[Evidence] = None) -> list[bool]:
    """Per curve, whether the stored points (with every seed) already end its search: then it costs nothing."""
    return [known_step(spec, seeds, search_range).done for spec in curve_specs(curves, evidence)]


def outcome_of(curve: Curve, result: CurveResult, seeds: Sequence[int]) -> CurveOutcome:
    """Where a curve's search stands, as the summary and the command line report it."""
    step = result.step
    knee_seeds: tuple[float, ...] = ()
    if step.knee is not None:
        by_seed = result.rows[step.knee.scale_ms]
        knee_seeds = tuple(float(by_seed[seed]["throughput_cps"]) for seed in sorted(by_seed))
    return CurveOutcome(
        curve=curve, status=result.status, step=step, points=tuple(complete_points(curve, result.rows, seeds)),
        seeds=tuple(seeds), simulations_stored=sum(len(by_seed) for by_seed in result.rows.values()),
        simulations_run=result.simulations_run, knee_seed_throughputs_cps=knee_seeds, error=result.error)


class StoreRecorder:
    """Driver side: each finished simulation's row into the store, and progress lines.

    Args:
        store: the results store.
        provenance: recorded in every row.
        curves: the run's curves (rows go to their experiment's ``<name>_knee``).
        seeds: the seeds every point needs.
        done: the curves already finished before this run (not announced again).
        log: where progress lines go.
        flush_interval_s: write buffered rows at least this often.
        progress_interval_s: at most one progress line this often (besides
            one line per finished curve).
    """

    def __init__(self, store: ResultsStore, provenance: Provenance, curves: Sequence[Curve], seeds: Sequence[int],
                 done: Sequence[bool], log: Callable[[str], None], flush_interval_s: float = DEFAULT_FLUSH_INTERVAL_S,
                 progress_interval_s: float = PROGRESS_INTERVAL_S):
        self._collector = RowCollector(store, flush_interval_s, flush_rows=5000)
        self._provenance = provenance
        self._curves = {curve.curve_id: curve for curve in curves}
        self._seeds = tuple(seeds)
        self._done_before = {curve.curve_id for curve, done_now in zip(curves, done) if done_now}
        self._log = log
        self.curves_total = len(curves)
        self.curves_finished = len(self._done_before)
        self.simulate_s = 0.0
        self.simulations = 0
        self._points: set = set()  # (curve, config) of every point simulated now
        self._progress_interval_s = progress_interval_s
        self._started = self._last_progress = time.monotonic()

    @property
    def trials(self) -> int:
        """Points measured now: those with at least one seed simulated by this run."""
        return len(self._points)

    def events(self) -> Events:
        return Events(on_seed=self.on_seed, on_curve=self.on_curve)

    def on_seed(self, key: str, config: SimConfig, run: SeedRun) -> None:
        experiment = knee_experiment_name(self._curves[key].experiment)
        row = make_row(experiment, config, run.row, package_version=self._provenance.package_version,
                       git_revision=self._provenance.git_revision, wall_s=run.wall_s,
                       finished_at=datetime.fromtimestamp(run.finished_at_s, timezone.utc))
        self.simulate_s += run.wall_s
        self.simulations += 1
        self._points.add((key, config.config_hash))
        self._collector.add(rows_to_table([row]))
        self._collector.flush_if_due()
        if time.monotonic() - self._last_progress >= self._progress_interval_s:
            self._last_progress = time.monotonic()
            self._log(f"progress: {self.curves_finished}/{self.curves_total} curves done, {self.trials} points "
                      f"measured ({self.simulations} simulations, {self.simulate_s:.0f} s of simulation), "
                      f"elapsed {format_duration(time.monotonic() - self._started)}")

    def on_curve(self, result: CurveResult) -> None:
        if result.key in self._done_before:
            return
        self.curves_finished += 1
        outcome = outcome_of(self._curves[result.key], result, self._seeds)
        self._log(f"[{self.curves_finished}/{self.curves_total}] {describe_outcome(outcome)}")

    def flush(self) -> None:
        self._collector.flush()

    @property
    def files_written(self) -> int:
        return self._collector.files_written


def describe_outcome(outcome: CurveOutcome) -> str:
    """One line for people: the curve, its knee and bracket, and what it cost."""
    step = outcome.step
    cost = f"({len(outcome.points)} points, {outcome.simulations_stored} simulations)"
    head = f"{outcome.curve.label}: {outcome.status}"
    if outcome.status == ERROR:
        return f"{head}: {outcome.error} {cost}"
    if outcome.status == ABOVE_SEARCH_RANGE:
        return f"{head}: {step.note}, so the knee is above {step.knee.throughput_cps:.4g} c/s {cost}"
    if outcome.status != FOUND:
        return f"{head}: {step.note} {cost}"
    line = (f"{head}: knee {step.knee.throughput_cps:.4g} c/s at {step.knee.scale_ms:g} ms, fails at "
            f"{step.failing.scale_ms:g} ms ({step.failing.throughput_cps:.4g} c/s), bracket "
            f"{100 * (step.rate_ratio - 1):.2f}% in rate")
    return f"{line} {cost}" if step.within_tolerance else f"{line}; {step.note} {cost}"


@dataclass(frozen=True)
class KneeRun:
    """What ``run_knee_search`` did.

    Attributes:
        outcomes: every curve's outcome, in the order given.
        trials: points measured now (at least one of their seeds simulated by this run), all curves.
        simulations_run: simulations run now, all curves.
        simulate_s: simulation time summed over workers.
        files_written: data files written to the store.
        wall_s: from the search's start to the last row stored.
        interrupted: stopped early (Ctrl-C or SIGTERM); rerunning resumes.
    """

    outcomes: tuple[CurveOutcome, ...]
    trials: int
    simulations_run: int
    simulate_s: float
    files_written: int
    wall_s: float
    interrupted: bool = False


def default_probes_per_curve(parallelism: int, curves: int) -> int:
    """Probes per curve and round that keep ``parallelism`` workers busy: 1, 3 or 7 (1, 2 or 3 bisection levels)."""
    if curves <= 0:
        return 1
    levels = int(math.floor(math.log2(parallelism / curves + 1)))
    return max(1, min(MAX_PROBES_PER_CURVE, 2 ** levels - 1))


def run_knee_search(curves: Sequence[Curve], seeds: Sequence[int], search_range: SearchRange,
                    store: ResultsStore, evidence: Optional[Evidence] = None, *,
                    max_parallel: Optional[int] = None, probes_per_curve: Optional[int] = None,
                    flush_interval_s: float = DEFAULT_FLUSH_INTERVAL_S,
                    provenance: Optional[Provenance] = None,
                    log: Callable[[str], None] = print,
                    submit: Optional[tuple[Submit, int]] = None,
                    max_memory_bytes: Optional[int] = None) -> KneeRun:
    """Search the knee of every curve; rows go to ``<experiment>_knee`` in ``store``.

    Args:
        curves: the curves (of one or more experiments).
        seeds: seeds run at every point.
        search_range: scales and tolerance.
        store: where rows go.
        evidence: what the store already holds for these curves (resume).
        max_parallel: most simulations at once (default: the cluster's CPUs).
        probes_per_curve: most probes of one curve per round (default: enough
            to fill the cluster when it has more CPUs than curves, else 1).
        flush_interval_s: write rows at least this often.
        provenance: recorded in every row (default: looked up here).
        log: where progress lines go.
        submit: (submit, slots) to simulate with instead of Ray tasks (tests).
        max_memory_bytes: the work bound's limit in each simulation (default: simcore's, from the worker's
            machine).
    """
    started = time.perf_counter()
    done = curves_done(curves, seeds, search_range, evidence)
    recorder = StoreRecorder(store, provenance or current_provenance(), curves, seeds, done, log, flush_interval_s)
    executor = Executor(curve_specs(curves, evidence), seeds, search_range, None, 1)
    left = done.count(False)
    interrupted = False
    if left:  # else nothing to run, and Ray need not even be up
        try:
            with (contextlib.nullcontext(submit) if submit is not None else ray_tasks(max_parallel, max_memory_bytes)) \
                    as (submit_one, slots):
                slots = min(slots, max_parallel or slots)
                probes = probes_per_curve or default_probes_per_curve(slots, left)
                log(f"searching {left} curves ({len(curves) - left} already done) with up to {slots} simulations "
                    f"at once, {probes} per curve")
                executor = Executor(curve_specs(curves, evidence), seeds, search_range, submit_one, slots,
                                    lambda seeds_per_probe: probes, recorder.events())
                executor.run()
        except KeyboardInterrupt:
            interrupted = True
        finally:
            recorder.flush()
    outcomes = tuple(outcome_of(curve, result, seeds) for curve, result in zip(curves, executor.results()))
    interrupted = interrupted or any(o.status == SEARCHING for o in outcomes)
    return KneeRun(outcomes=outcomes, trials=recorder.trials,
                   simulations_run=sum(o.simulations_run for o in outcomes), simulate_s=recorder.simulate_s,
                   files_written=recorder.files_written, wall_s=time.perf_counter() - started,
                   interrupted=interrupted)


