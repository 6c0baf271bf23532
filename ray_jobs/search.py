"""The one search executor: bracket and bisect the knee of one curve or of many at once, on any workers.

``simcore.bisection.next_step`` is the policy (pure: which scale to measure
next, or that the knee is known). This module runs it. It is pure but for
``submit(config, seed) -> Future``, which starts one simulation wherever the
caller likes: ``process_pool`` gives one over local processes, ``ray_tasks``
one over Ray tasks (``ObjectRef.future()``); tests pass futures they made.
The future's result is a ``SeedRun`` (``run_seed`` is what the workers run).
Two front ends use it: ``commit-sweeps capacity`` (``ray_jobs.capacity``:
one curve, local processes or Ray) and the knee search
(``ray_jobs.knee_search``: every curve of an experiment on Ray, rows to the
store).

**Rounds.** A curve's search goes in rounds: the round's probes are chosen
together (``next_step`` with the round's earlier probes pending), every seed
of each is simulated, and the next round is chosen only when all are back.
So a curve's answer depends only on the results, never on which simulation
finished first. Many curves are searched at once, each in its own rounds:
one curve is a chain of dependent rounds, ninety curves keep ninety workers
busy. At most ``slots`` simulations are in flight (queued beyond that); a
free slot goes to the curve furthest along (most scales measured), so
curves finish one after another and an interrupted run leaves finished
curves rather than many half-searched ones. The front end sets how many
probes a round holds (``probes_per_round``, given the seeds per probe).

**Screening.** With several seeds and a tolerance finer than
``SCREENING_TOLERANCE`` (10%), a curve is first bracketed with one seed to
10% over the whole range (the screening pass), then searched with every
seed inside that bracket widened by its own width on each side (the narrow
pass). Why: most probes of a search over the whole range are far from the
knee, where one seed decides pass or fail as surely as three; only the last
few, near the knee, need the seed mean. What it trades: fewer simulations
(about a third fewer for three seeds, see ``studies/knee_vs_grid/README.md``) against a
second decision on a noisier figure. Where the one-seed bracket misled (the
seed mean's knee is not found inside it), the search goes on over the whole
range with every seed, keeping every point: slower, never wrong. The
answer obeys the same stopping rule on seed means either way, but it need
not be the very same point a search without screening would stop at: the
probes differ, and near the knee seed noise decides which point of the
final bracket passes. Screening points keep their one seed (stored, and
reused when the narrow pass probes the same scale); they are not points of
the curve (``ray_jobs.knee_curves.full_seed_points``).

**Known rows.** Rows measured before (the store's, for the knee search)
answer a simulation without running it, and the points they complete are
points of the curve from the start; a curve whose known points already end
the search is done at once. A rerun thus measures only what is missing.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Callable, Generator, Iterator, Mapping, Optional, Sequence

from simcore import SimConfig, simulate
from simcore.bisection import SearchRange, SearchStep, next_step
from simcore.usable import ERROR, FOUND, SEARCHING, MeasuredPoint
from ray_jobs.knee_curves import full_seed_points, measured_point, seed_mean

# The screening pass brackets the knee to this width with one seed (see the module).
SCREENING_TOLERANCE = 0.10
MAX_ROUNDS = 200  # per pass: a guard, a search that has not ended by then never will
# Retries of a simulation whose worker died (process killed, node lost). A
# simulation that raises is not retried: it would raise again.
SYSTEM_FAILURE_RETRIES = 3


@dataclass(frozen=True)
class SeedRun:
    """One simulation: its ``simulate`` summary row, or the error it raised, and how long it took.

    Attributes:
        row: the summary row (None when the simulation raised).
        wall_s: seconds the worker spent on it.
        finished_at_s: when it finished (``time.time()``, on the worker).
        error: ``seed N: Type: message`` when the simulation raised.
    """

    row: Optional[Mapping[str, Any]]
    wall_s: float = 0.0
    finished_at_s: float = 0.0
    error: Optional[str] = None


def run_seed(config: SimConfig, seed: int, max_memory_bytes: Optional[int] = None) -> SeedRun:
    """Simulate ``config`` with one seed: what every worker runs (``max_memory_bytes``: the work bound's limit,
    default simcore's, from the worker's machine)."""
    started = time.perf_counter()
    try:
        (row,) = simulate(config, seeds=[seed], max_memory_bytes=max_memory_bytes)
    except Exception as failure:  # deterministic: reported, not retried
        return SeedRun(None, time.perf_counter() - started, time.time(),
                       f"seed {seed}: {type(failure).__name__}: {failure}")
    return SeedRun(row, time.perf_counter() - started, time.time())


Submit = Callable[[SimConfig, int], Future]


@contextlib.contextmanager
def process_pool(workers: Optional[int] = None, max_memory_bytes: Optional[int] = None
                 ) -> Iterator[tuple[Submit, int]]:
    """(submit, slots) over ``workers`` local processes (default: one per core), shut down on the way out;
    ``max_memory_bytes`` as ``run_seed``'s."""
    slots = workers or os.cpu_count() or 1
    # fork: workers inherit the imported simulator (and Numba's cache), so they start at once.
    with ProcessPoolExecutor(slots, mp_context=multiprocessing.get_context("fork")) as pool:
        yield (lambda config, seed: pool.submit(run_seed, config, seed, max_memory_bytes)), slots


@contextlib.contextmanager
def ray_tasks(max_parallel: Optional[int] = None, max_memory_bytes: Optional[int] = None
              ) -> Iterator[tuple[Submit, int]]:
    """(submit, slots) over Ray tasks of one CPU each; slots: the cluster's CPUs, at most ``max_parallel``;
    ``max_memory_bytes`` as ``run_seed``'s.

    Ray must be initialised (``ray_jobs.connect``); it is imported only here.
    """
    import ray

    if not ray.is_initialized():
        raise RuntimeError("ray_tasks needs Ray: call ray_jobs.connect.connect_ray() or ray.init() first")
    remote = ray.remote(num_cpus=1, max_retries=SYSTEM_FAILURE_RETRIES)(run_seed)
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    yield ((lambda config, seed: remote.remote(config, seed, max_memory_bytes).future()),
           max(1, min(cpus, max_parallel or cpus)))


@dataclass(frozen=True)
class Probe:
    """One measured point of a curve: its scale, the config simulated, one row per seed (ascending seed)."""

    scale_ms: float
    config: SimConfig
    rows: tuple

    def mean(self, metric: str) -> float:
        return seed_mean(row.get(metric) for row in self.rows)

    def point(self) -> MeasuredPoint:
        return measured_point(self.scale_ms, self.config, self.rows)


@dataclass(frozen=True)
class CurveSpec:
    """A curve to search.

    Attributes:
        key: names the curve to the caller (a curve id).
        config_at: the config simulated at a scale. Two scales may map to
            one config (capacity's writers: one whole number of writers);
            it is then simulated once.
        known: rows measured before, scale -> seed -> row (resume).
    """

    key: str
    config_at: Callable[[float], SimConfig]
    known: Mapping[float, Mapping[int, Mapping[str, Any]]] = field(default_factory=dict)


@dataclass(frozen=True)
class CurveResult:
    """Where one curve's search ended.

    Attributes:
        key: the curve's ``CurveSpec.key``.
        status: a final status, ``searching`` (not finished: interrupted) or ``error``.
        step: the last step of a search that ended; else (not run, interrupted,
            failed) the one its points with every seed give over the whole range.
        probes: the last pass's points, scale -> ``Probe``, in the order measured.
        rows: every row known for the curve, scale -> seed -> row (known ones included).
        simulations_run: simulations this search ran for the curve.
        error: what failed, for ``error``.
    """

    key: str
    status: str
    step: SearchStep
    probes: dict
    rows: dict
    simulations_run: int
    error: Optional[str] = None


def _nothing(*args) -> None:
    return None


@dataclass(frozen=True)
class Events:
    """What the executor tells its front end, as it happens (all optional).

    Attributes:
        on_pass: (curve key, a line for people) when a pass starts (screening,
            narrow, whole range after a misleading screen).
        on_probe: (curve key, probe) for each probe measured, after its round.
        on_seed: (curve key, config, ``SeedRun``) for each simulation run now that gave a row.
        on_curve: a ``CurveResult``, when a curve's search ends during the run.
    """

    on_pass: Callable[[str, str], None] = _nothing
    on_probe: Callable[[str, Probe], None] = _nothing
    on_seed: Callable[[str, SimConfig, SeedRun], None] = _nothing
    on_curve: Callable[[CurveResult], None] = _nothing


def screens(seeds: Sequence[int], search_range: SearchRange) -> bool:
    """Whether a search with these seeds and range starts with the one-seed screening pass.

    It does with several seeds, a tolerance finer than the screening's and a
    range wider than one screening bracket (else there is nothing to screen).
    """
    return (len(seeds) > 1 and search_range.tolerance < SCREENING_TOLERANCE
            and search_range.max_scale_ms > search_range.min_scale_ms * (1 + SCREENING_TOLERANCE))


def known_step(spec: CurveSpec, seeds: Sequence[int], search_range: SearchRange) -> SearchStep:
    """The step the curve's known points with every seed give: done means nothing is left to measure."""
    return next_step([p.point() for p in _full_probes(spec.config_at, spec.known, seeds).values()], search_range)


def _full_probes(config_at, rows: Mapping[float, Mapping[int, Mapping]], seeds: Sequence[int]) -> dict:
    """Scale -> ``Probe`` of every scale whose rows have every seed, ascending, with all its rows."""
    return {scale: Probe(scale, config_at(scale), tuple(by_seed[seed] for seed in sorted(by_seed)))
            for scale, by_seed in full_seed_points(sorted(rows.items()), lambda item: item[1], seeds)}


# -- one curve's search: a generator of rounds ------------------------------------------------------

Round = list  # of (scale_ms, config, seeds): every simulation of a round, requested at once


@dataclass
class _Book:
    """The executor's book on one curve (mutable: it grows as rounds return)."""

    spec: CurveSpec
    index: int
    rows: dict  # scale -> seed -> row
    program: Optional[Generator] = None
    waiting: list = field(default_factory=list)  # the round in flight: (scale, _Sim)
    result: Optional[tuple] = None  # (final step, probes) once the search ended
    error: Optional[str] = None
    simulations_run: int = 0

    @property
    def ended(self) -> bool:
        return self.result is not None or self.error is not None


def _curve_search(book: _Book, seeds: tuple, search_range: SearchRange, probes_per_round: Callable[[int], int],
                  events: Events) -> Generator[Round, None, tuple]:
    """The passes of one curve's search (see the module); returns (final step, last pass's probes)."""
    known = _full_probes(book.spec.config_at, book.rows, seeds)
    step = next_step([p.point() for p in known.values()], search_range)
    if step.done:
        return step, known
    key = book.spec.key
    if screens(seeds, search_range):
        events.on_pass(key, f"screening with seed {seeds[0]} to a {SCREENING_TOLERANCE:.0%} bracket")
        screen_range = SearchRange(search_range.min_scale_ms, search_range.max_scale_ms, SCREENING_TOLERANCE)
        first = yield from _pass(book, screen_range, seeds[:1], {}, probes_per_round(1), events)
        if first.status == FOUND:
            widen = 1.0 + SCREENING_TOLERANCE
            low = max(search_range.min_scale_ms, first.failing.scale_ms / widen)
            high = min(search_range.max_scale_ms, first.knee.scale_ms * widen)
            events.on_pass(key, f"searching {low:.4g}-{high:.4g} ms with seeds {','.join(map(str, seeds))}")
            narrow = dict(known)
            step = yield from _pass(book, SearchRange(low, high, search_range.tolerance), seeds, narrow,
                                    probes_per_round(len(seeds)), events)
            if step.status == FOUND:
                return step, narrow
            events.on_pass(key, "the knee left the screened bracket: searching the whole range")
            known = narrow
    probes = dict(known)
    step = yield from _pass(book, search_range, seeds, probes, probes_per_round(len(seeds)), events)
    return step, probes


def _pass(book: _Book, search_range: SearchRange, seeds: tuple, probes: dict, round_probes: int,
          events: Events) -> Generator[Round, None, SearchStep]:
    """Measure rounds of probes into ``probes`` until ``next_step`` says the knee is known.

    A round holds ``round_probes`` probes (at least one). A probe whose
    config this pass measured already (two scales, one whole number of
    writers) reuses those rows instead.
    """
    by_config = {probe.config.config_hash: probe.rows for probe in probes.values()}
    for _ in range(MAX_ROUNDS):
        chosen: dict[float, SimConfig] = {}
        while len(chosen) < round_probes or not chosen:
            step = next_step([p.point() for p in probes.values()], search_range, pending_ms=list(chosen))
            if step.done or step.next_scale_ms is None:
                break
            scale = step.next_scale_ms
            config = book.spec.config_at(scale)
            if config.config_hash in by_config:
                probes[scale] = Probe(scale, config, by_config[config.config_hash])
                continue
            if any(c.config_hash == config.config_hash for c in chosen.values()):
                break  # this config is in this round already
            chosen[scale] = config
        if not chosen:
            step = next_step([p.point() for p in probes.values()], search_range)
            if step.done:
                return step
            continue
        yield [(scale, config, seeds) for scale, config in chosen.items()]
        for scale in sorted(chosen):
            by_seed = book.rows[scale]
            # One seed (screening) reads that seed only; every seed reads every row the scale has.
            rows = (by_seed[seeds[0]],) if len(seeds) == 1 else tuple(by_seed[s] for s in sorted(by_seed))
            probes[scale] = probe = Probe(scale, chosen[scale], rows)
            by_config[probe.config.config_hash] = rows
            events.on_probe(book.spec.key, probe)
    raise RuntimeError(f"the search did not end within {MAX_ROUNDS} rounds")


# -- the executor -----------------------------------------------------------------------------------

@dataclass
class _Sim:
    """One (config, seed) simulation: known, queued, running or done."""

    config: SimConfig
    seed: int
    owner: Optional[_Book]  # the curve that asked first (None: known before)
    future: Optional[Future] = None
    run: Optional[SeedRun] = None
    failure: Optional[str] = None

    @property
    def resolved(self) -> bool:
        return self.run is not None or self.failure is not None


class Executor:
    """Searches the knees of ``specs`` with ``submit``: see the module for rounds, screening and known rows.

    Args:
        specs: the curves.
        seeds: seeds every point needs.
        search_range: scales and tolerance.
        submit: starts one simulation, returns a future of its ``SeedRun``.
        slots: most simulations in flight at once.
        probes_per_round: probes of one curve per round, given the seeds
            each needs (1 in the screening pass).
        events: what to tell the front end.

    ``run()`` drives every curve to its end; if it is interrupted
    (KeyboardInterrupt), ``results()`` still says where each curve stands.
    """

    def __init__(self, specs: Sequence[CurveSpec], seeds: Sequence[int], search_range: SearchRange,
                 submit: Optional[Submit], slots: int, probes_per_round: Callable[[int], int] = lambda seeds: 1,
                 events: Events = Events()):
        if not seeds:
            raise ValueError("seeds: () is not allowed; expected at least one seed")
        if slots < 1:
            raise ValueError(f"slots: {slots!r} is not allowed; expected an integer >= 1")
        self.seeds = tuple(seeds)
        self.search_range = search_range
        self._submit = submit
        self.slots = slots
        self._probes_per_round = lambda count: max(1, int(probes_per_round(count)))
        self._events = events
        self._books = [_Book(spec, index, {scale: dict(by_seed) for scale, by_seed in spec.known.items()})
                       for index, spec in enumerate(specs)]
        self._sims: dict[tuple[str, int], _Sim] = {}
        for book in self._books:
            for scale, by_seed in book.rows.items():
                config = book.spec.config_at(scale)
                for seed, row in by_seed.items():
                    self._sims[(config.config_hash, seed)] = _Sim(config, seed, None, run=SeedRun(row))
        self._queue: deque[_Sim] = deque()
        self._running: dict[Future, _Sim] = {}

    def run(self) -> None:
        """Search every curve to its end (or until interrupted)."""
        try:
            while True:
                for book in sorted(filter(self._ready, self._books), key=self._progress):
                    if len(self._queue) + len(self._running) >= self.slots:
                        break
                    self._advance(book)
                self._submit_queued()
                if not self._running:  # then nothing is queued either: every curve ended
                    return
                done, _ = wait(list(self._running), return_when=FIRST_COMPLETED)
                for future in done:
                    self._finish(self._running.pop(future), future)
        finally:
            for future in self._running:
                future.cancel()

    def results(self) -> list[CurveResult]:
        """Every curve's result, in the order given."""
        return [self._result(book) for book in self._books]

    # -- internals ----------------------------------------------------------------------------------

    @staticmethod
    def _ready(book: _Book) -> bool:
        """Not started yet, or its round is back: it can choose its next round."""
        if book.ended:
            return False
        return book.program is None or (bool(book.waiting) and all(sim.resolved for _, sim in book.waiting))

    @staticmethod
    def _progress(book: _Book) -> tuple:
        """Curves furthest along (most scales measured) first, then in the order given."""
        return -len(set(book.rows) | {scale for scale, _ in book.waiting}), book.index

    def _advance(self, book: _Book) -> None:
        """Feed the curve its round's results and ask for the next round, until it waits or ends."""
        while True:
            if book.waiting:
                failures = [f"at {scale:g} ms: {sim.failure}" for scale, sim in book.waiting if sim.failure]
                if failures:
                    book.error = failures[0]
                    book.waiting = []
                    book.program.close()
                    self._events.on_curve(self._result(book))
                    return
                for scale, sim in book.waiting:
                    book.rows.setdefault(scale, {})[sim.seed] = sim.run.row
                book.waiting = []
            try:
                if book.program is None:
                    book.program = _curve_search(book, self.seeds, self.search_range, self._probes_per_round,
                                                 self._events)
                    request = next(book.program)
                else:
                    request = book.program.send(None)
            except StopIteration as stop:
                book.result = stop.value
                self._events.on_curve(self._result(book))
                return
            book.waiting = [(scale, self._sim(config, seed, book)) for scale, config, seeds in request
                            for seed in seeds]
            if not all(sim.resolved for _, sim in book.waiting):
                return

    def _sim(self, config: SimConfig, seed: int, book: _Book) -> _Sim:
        key = (config.config_hash, seed)
        if key not in self._sims:
            if self._submit is None:
                raise RuntimeError("this executor has no submit function: it can only replay known rows")
            self._sims[key] = sim = _Sim(config, seed, book)
            self._queue.append(sim)
        return self._sims[key]

    def _submit_queued(self) -> None:
        while self._queue and len(self._running) < self.slots:
            sim = self._queue.popleft()
            sim.future = self._submit(sim.config, sim.seed)
            self._running[sim.future] = sim

    def _finish(self, sim: _Sim, future: Future) -> None:
        try:
            run = future.result()
        except Exception as failure:  # the worker died beyond its retries, or the pool broke
            reason = str(failure).strip().splitlines()[0] if str(failure).strip() else ""
            sim.failure = f"seed {sim.seed}: its simulation failed beyond retries: {type(failure).__name__}: {reason}"
            return
        sim.owner.simulations_run += 1
        if run.error is not None:
            sim.failure = run.error
            return
        sim.run = run
        self._events.on_seed(sim.owner.spec.key, sim.config, run)

    def _result(self, book: _Book) -> CurveResult:
        if book.result is not None and book.error is None:
            step, probes = book.result
            status = step.status
        else:  # not run, interrupted or failed: what its points with every seed say
            probes = _full_probes(book.spec.config_at, book.rows, self.seeds)
            step = next_step([p.point() for p in probes.values()], self.search_range)
            status = ERROR if book.error is not None else step.status if step.done else SEARCHING
        return CurveResult(key=book.spec.key, status=status, step=step, probes=probes,
                           rows={scale: dict(by_seed) for scale, by_seed in book.rows.items()},
                           simulations_run=book.simulations_run, error=book.error)


def search_curves(specs: Sequence[CurveSpec], seeds: Sequence[int], search_range: SearchRange, submit: Submit,
                  slots: int, probes_per_round: Callable[[int], int] = lambda seeds: 1,
                  events: Events = Events()) -> list[CurveResult]:
    """Search every curve to its end with ``submit``; returns their results in the order given."""
    executor = Executor(specs, seeds, search_range, submit, slots, probes_per_round, events)
    executor.run()
    return executor.results()


def fill_slots(slots: int) -> Callable[[int], int]:
    """Probes per round that fill ``slots`` with one curve: ceil(slots / seeds per probe)."""
    return lambda seeds: max(1, math.ceil(slots / seeds))
