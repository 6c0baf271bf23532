"""The knee search on Ray Tune: one Tune run searches every curve of an experiment.

How the parts fit:

- ``KneeSearcher`` is a ``ray.tune.search.Searcher``. Tune asks it for
  trials; it answers with the next probe of a curve that has none in
  flight (the curves furthest along first), chosen by
  ``simcore.bisection.next_step``. One searcher for all curves keeps the
  cluster busy: a single curve is a chain of dependent probes, but ninety
  curves give ninety probes to run at once. Where the cluster has more CPUs
  than curves, a curve may have several probes in flight, which split its
  bracket into more parts per round (``probes_per_curve``).
- A trial is ``evaluate_point``: simulate one curve at one scale for the
  seeds the store lacks, several seeds per point, on a Ray worker, and
  report the per-seed metrics.
- ``StoreRecorder``, a Tune callback, turns each reported trial into result
  rows and writes them to the store from the driver, so the store keeps a
  single writer, as in ``ray_jobs.fanout``; it also prints a line per
  finished curve and a progress line every 15 s. Rows go under
  ``<experiment>_knee`` in the ordinary schema, so a dashboard reads the
  searched points like any other.
- Tune's own state (experiment checkpoints, trial logs) goes to a temporary
  directory that is removed at the end: resuming comes from the results
  store, which already holds every finished point. A rerun reads it, gives
  the points to the searcher, and runs only what is missing: a finished
  curve costs nothing, an interrupted one continues its bisection.

Ray must already be initialised (``ray_jobs.connect.connect_ray``).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Iterator, Optional, Sequence

import ray
from ray import tune
from ray.tune.logger import JsonLoggerCallback
from ray.tune.search import Searcher

from simcore import SimConfig, simulate
from ray_jobs.fanout import RowCollector
from simcore.bisection import SearchRange, SearchStep, next_step
from simcore.usable import ABOVE_SEARCH_RANGE, ERROR, FOUND, SEARCHING
from ray_jobs.knee_curves import Curve, CurveOutcome, Evidence, complete_points, knee_experiment_name, seed_outcome
from ray_jobs.progress import format_duration
from ray_jobs.provenance import Provenance, current_provenance
from ray_jobs.schema import make_row, rows_to_table
from ray_jobs.store import ResultsStore

DEFAULT_FLUSH_INTERVAL_S = 30.0
PROGRESS_INTERVAL_S = 15.0  # as ray_jobs.progress writes lines into job logs
# Retries of a trial whose worker died (process killed, node lost). A
# simulation that raises is not retried: the trial reports the error instead.
SYSTEM_FAILURE_RETRIES = 3
MAX_PROBES_PER_CURVE = 7  # three levels of the bisection tree per round


def evaluate_point(trial_config: dict) -> None:
    """Tune trial: simulate one curve at one scale for each requested seed and report.

    ``trial_config`` is what ``KneeSearcher.suggest`` returned: ``config`` (a
    ``SimConfig`` as a dict) and ``seeds``. Reports ``per_seed`` (the
    ``simulate`` row, wall seconds and finish time of each seed) and, if a
    seed raised, ``error`` (the seeds before it are still reported).
    """
    config = SimConfig.from_dict(trial_config["config"])
    per_seed, error = [], None
    for seed in trial_config["seeds"]:
        started = time.perf_counter()
        try:
            (metrics,) = simulate(config, seeds=[seed])
        except Exception as failure:  # deterministic: reported, not retried
            error = f"seed {seed}: {type(failure).__name__}: {failure}"
            break
        per_seed.append({"metrics": metrics, "wall_s": time.perf_counter() - started, "finished_at_s": time.time()})
    tune.report({"per_seed": per_seed, "error": error, "simulations": len(per_seed)})


@dataclass
class _CurveState:
    """The searcher's book on one curve (mutable: it grows as trials return)."""

    curve: Curve
    evidence: dict  # scale_ms -> seed -> SeedOutcome
    in_flight: dict = field(default_factory=dict)  # trial id -> scale_ms
    simulations_run: int = 0
    error: Optional[str] = None
    announced: bool = False


class KneeSearcher(Searcher):
    """A Tune searcher that brackets and bisects the knee of many curves at once.

    Args:
        curves: the curves to search.
        seeds: seeds run at every point.
        search_range: scales and tolerance.
        evidence: outcomes already stored (see ``knee_curves.evidence_from_rows``).
        probes_per_curve: most trials of one curve in flight at once.

    Example (with Ray started; ``tests/test_knee_search.py`` runs it for real)::

        searcher = KneeSearcher(curves, seeds=(1, 2, 3), search_range=SearchRange())
        tune.Tuner(evaluate_point, tune_config=tune.TuneConfig(search_alg=searcher, num_samples=-1)).fit()
    """

    def __init__(self, curves: Sequence[Curve], seeds: Sequence[int], search_range: SearchRange,
                 evidence: Optional[Evidence] = None, probes_per_curve: int = 1):
        super().__init__()
        if probes_per_curve < 1:
            raise ValueError(f"probes_per_curve: {probes_per_curve!r} is not allowed; expected an integer >= 1")
        if not seeds:
            raise ValueError("seeds: () is not allowed; expected at least one seed")
        evidence = evidence or {}
        self.seeds = tuple(seeds)
        self.search_range = search_range
        self.probes_per_curve = probes_per_curve
        self._states = {c.curve_id: _CurveState(c, {scale: dict(by_seed) for scale, by_seed
                                                    in evidence.get(c.curve_id, {}).items()})
                        for c in curves}
        self._order = list(self._states)
        self._trial_curve: dict[str, str] = {}  # trial id -> curve id

    # -- Tune's side --------------------------------------------------------

    def suggest(self, trial_id: str):
        """The next probe of the most advanced curve that can take one; None to wait; FINISHED at the end.

        Curves already under way go first, so that as few curves as keep
        the workers busy are open at a time: they finish one after another
        (progress shows, and an interrupted run leaves finished curves
        rather than many half-searched ones), for the same total work.
        """
        by_progress = sorted(range(len(self._order)),
                             key=lambda index: (-len(self._states[self._order[index]].evidence), index))
        for index in by_progress:
            state = self._states[self._order[index]]
            if state.error is not None or len(state.in_flight) >= self.probes_per_curve:
                continue
            step = self.step(state.curve.curve_id)
            if step.done or step.next_scale_ms is None:
                continue
            scale_ms = step.next_scale_ms
            stored = state.evidence.get(scale_ms, {})
            state.in_flight[trial_id] = scale_ms
            self._trial_curve[trial_id] = state.curve.curve_id
            return {"experiment": state.curve.experiment, "curve_id": state.curve.curve_id,
                    "label": state.curve.label, "scale_ms": scale_ms,
                    "config": state.curve.config_at(scale_ms).to_dict(),
                    "seeds": [seed for seed in self.seeds if seed not in stored]}
        return None if self._trial_curve else Searcher.FINISHED

    def on_trial_complete(self, trial_id: str, result: Optional[dict] = None, error: bool = False) -> None:
        curve_id = self._trial_curve.pop(trial_id, None)
        if curve_id is None:
            return
        state = self._states[curve_id]
        scale_ms = state.in_flight.pop(trial_id)
        if error:
            state.error = "its trial failed beyond retries (see the log above)"
            return
        if not result or "per_seed" not in result:  # stopped before it reported (interrupted)
            return
        config = state.curve.config_at(scale_ms)
        for entry in result["per_seed"]:
            state.evidence.setdefault(scale_ms, {})[int(entry["metrics"]["seed"])] = \
                seed_outcome(config, entry["metrics"])
            state.simulations_run += 1
        if result.get("error"):
            state.error = f"at {scale_ms:g} ms: {result['error']}"

    def save_to_dir(self, checkpoint_dir: str, session_str: str = "default") -> None:
        """Nothing to save: a rerun resumes from the results store, not from Tune's directory."""

    # -- the driver's side --------------------------------------------------

    def step(self, curve_id: str) -> SearchStep:
        """The curve's search step from its complete points and the probes in flight."""
        state = self._states[curve_id]
        return next_step(complete_points(state.evidence, self.seeds), self.search_range,
                         pending_ms=state.in_flight.values())

    def take_newly_finished(self) -> list[CurveOutcome]:
        """Curves that reached a final status (or an error) since the last call."""
        finished = []
        for state in self._states.values():
            if not state.announced and not state.in_flight:
                outcome = self.outcome(state.curve.curve_id)
                if outcome.status != SEARCHING:
                    state.announced = True
                    finished.append(outcome)
        return finished

    def curves_left(self) -> int:
        return sum(1 for curve_id in self._order if self.outcome(curve_id).status == SEARCHING)

    def outcome(self, curve_id: str) -> CurveOutcome:
        state = self._states[curve_id]
        step = self.step(curve_id)
        knee_seeds: tuple[float, ...] = ()
        if step.knee is not None:
            by_seed = state.evidence[step.knee.scale_ms]
            knee_seeds = tuple(by_seed[seed].throughput_cps for seed in sorted(by_seed))
        return CurveOutcome(
            curve=state.curve, status=ERROR if state.error else step.status, step=step,
            points=tuple(complete_points(state.evidence, self.seeds)), seeds=self.seeds,
            simulations_stored=sum(len(by_seed) for by_seed in state.evidence.values()),
            simulations_run=state.simulations_run, knee_seed_throughputs_cps=knee_seeds, error=state.error)

    def outcomes(self) -> list[CurveOutcome]:
        return [self.outcome(curve_id) for curve_id in self._order]

    def evidence(self) -> Evidence:
        """Every outcome known now, per curve, scale and seed (a copy)."""
        return {curve_id: {scale: dict(by_seed) for scale, by_seed in state.evidence.items()}
                for curve_id, state in self._states.items()}


class StoreRecorder(tune.Callback):
    """Driver-side Tune callback: each reported trial's rows into the store, and progress lines.

    Args:
        store: the results store.
        provenance: recorded in every row.
        searcher: the run's searcher (asked which curves just finished).
        log: where progress lines go.
        flush_interval_s: write buffered rows at least this often.
        progress_interval_s: at most one progress line this often (besides
            one line per finished curve).
    """

    def __init__(self, store: ResultsStore, provenance: Provenance, searcher: KneeSearcher,
                 log: Callable[[str], None], flush_interval_s: float = DEFAULT_FLUSH_INTERVAL_S,
                 progress_interval_s: float = PROGRESS_INTERVAL_S):
        self._collector = RowCollector(store, flush_interval_s, flush_rows=5000)
        self._provenance = provenance
        self._searcher = searcher
        self._log = log
        self.curves_total = len(searcher.outcomes())
        self.curves_finished = self.curves_total - searcher.curves_left()
        self.simulate_s = 0.0
        self.simulations = 0
        self.trials = 0
        self._progress_interval_s = progress_interval_s
        self._started = self._last_progress = time.monotonic()

    def on_trial_result(self, iteration, trials, trial, result, **info) -> None:
        config = SimConfig.from_dict(trial.config["config"])
        experiment = knee_experiment_name(trial.config["experiment"])
        rows = []
        for entry in result.get("per_seed", []):
            rows.append(make_row(experiment, config, entry["metrics"],
                                 package_version=self._provenance.package_version,
                                 git_revision=self._provenance.git_revision, wall_s=entry["wall_s"],
                                 finished_at=datetime.fromtimestamp(entry["finished_at_s"], timezone.utc)))
            self.simulate_s += entry["wall_s"]
        self.trials += 1
        self.simulations += len(rows)
        self._collector.add(rows_to_table(rows))
        self._collector.flush_if_due()
        if time.monotonic() - self._last_progress >= self._progress_interval_s:
            self._last_progress = time.monotonic()
            self._log(f"progress: {self.curves_finished}/{self.curves_total} curves done, {self.trials} points "
                      f"measured ({self.simulations} simulations, {self.simulate_s:.0f} s of simulation), "
                      f"elapsed {format_duration(time.monotonic() - self._started)}")

    def on_trial_complete(self, iteration, trials, trial, **info) -> None:
        self._announce()

    def on_trial_error(self, iteration, trials, trial, **info) -> None:
        self._announce()

    def _announce(self) -> None:
        for outcome in self._searcher.take_newly_finished():
            self.curves_finished += 1
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
        trials: Tune trials run (one per probed point).
        simulations_run: simulations run now, all curves.
        simulate_s: simulation time summed over workers.
        files_written: data files written to the store.
        wall_s: from the searcher's start to the last row stored.
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
    """Probes per curve that keep ``parallelism`` workers busy: 1, 3 or 7 (1, 2 or 3 bisection levels a round)."""
    if curves <= 0:
        return 1
    levels = int(math.floor(math.log2(parallelism / curves + 1)))
    return max(1, min(MAX_PROBES_PER_CURVE, 2 ** levels - 1))


def run_knee_search(curves: Sequence[Curve], seeds: Sequence[int], search_range: SearchRange,
                    store: ResultsStore, evidence: Optional[Evidence] = None, *,
                    max_parallel: Optional[int] = None, probes_per_curve: Optional[int] = None,
                    flush_interval_s: float = DEFAULT_FLUSH_INTERVAL_S,
                    provenance: Optional[Provenance] = None,
                    log: Callable[[str], None] = print) -> KneeRun:
    """Search the knee of every curve on Ray Tune; rows go to ``<experiment>_knee`` in ``store``.

    Args:
        curves: the curves (of one or more experiments).
        seeds: seeds run at every point.
        search_range: scales and tolerance.
        store: where rows go.
        evidence: what the store already holds for these curves (resume).
        max_parallel: most trials at once (default: the cluster's CPUs).
        probes_per_curve: most trials of one curve at once (default: enough
            to fill the cluster when it has more CPUs than curves, else 1).
        flush_interval_s: write rows at least this often.
        provenance: recorded in every row (default: looked up here).
        log: where progress lines go.
    """
    started = time.perf_counter()
    searcher = KneeSearcher(curves, seeds, search_range, evidence, probes_per_curve=probes_per_curve or 1)
    recorder = StoreRecorder(store, provenance or current_provenance(), searcher, log, flush_interval_s)
    left = searcher.curves_left()
    interrupted = False
    if left:  # else nothing to run, and Ray need not even be up
        if not ray.is_initialized():
            raise RuntimeError("run_knee_search needs Ray: call ray_jobs.connect.connect_ray() or ray.init() first")
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        parallelism = max(1, min(cpus, max_parallel or cpus))
        searcher.probes_per_curve = probes_per_curve or default_probes_per_curve(parallelism, left)
        log(f"searching {left} curves ({len(curves) - left} already done) with up to {parallelism} trials "
            f"at once, {searcher.probes_per_curve} per curve")
        tune_dir = tempfile.mkdtemp(prefix="knee-tune-")
        try:
            with _quiet_tune():
                tuner = tune.Tuner(
                    tune.with_resources(evaluate_point, {"cpu": 1}),
                    tune_config=tune.TuneConfig(search_alg=searcher, num_samples=-1,
                                                max_concurrent_trials=parallelism, reuse_actors=True,
                                                trial_dirname_creator=_trial_dirname),
                    run_config=tune.RunConfig(name="knee", storage_path=tune_dir, verbose=0,
                                              callbacks=[recorder, JsonLoggerCallback()],
                                              failure_config=tune.FailureConfig(max_failures=SYSTEM_FAILURE_RETRIES)))
                tuner.fit()
        except KeyboardInterrupt:
            interrupted = True
        finally:
            recorder.flush()
            shutil.rmtree(tune_dir, ignore_errors=True)
    outcomes = tuple(searcher.outcomes())
    interrupted = interrupted or any(o.status == SEARCHING for o in outcomes)
    return KneeRun(outcomes=outcomes, trials=recorder.trials,
                   simulations_run=sum(o.simulations_run for o in outcomes), simulate_s=recorder.simulate_s,
                   files_written=recorder.files_written, wall_s=time.perf_counter() - started,
                   interrupted=interrupted)


def _trial_dirname(trial) -> str:
    # Tune's default names its folders after the whole config: far too long here.
    return f"point_{trial.trial_id}"


# Tune's settings for its own output, read when a run starts: only the JSON
# trial logger (which Tune's result grid reads back; no CSV or TensorBoard
# files), and the classic console output, which verbose=0 silences (the newer
# one prints its configuration table whatever the verbosity).
_QUIET_TUNE_ENV = {"TUNE_DISABLE_AUTO_CALLBACK_LOGGERS": "1", "RAY_AIR_NEW_OUTPUT": "0"}
# Tune's warnings on an interrupted run point at Tuner.restore and its
# temporary directory; here a rerun resumes from the store, as the driver says.
_QUIET_TUNE_LOGGERS = ("ray.tune.tune", "ray.tune.analysis.experiment_analysis")


@contextlib.contextmanager
def _quiet_tune() -> Iterator[None]:
    before = {name: os.environ.get(name) for name in _QUIET_TUNE_ENV}
    levels = {name: logging.getLogger(name).level for name in _QUIET_TUNE_LOGGERS}
    os.environ.update(_QUIET_TUNE_ENV)
    for name in _QUIET_TUNE_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
