"""How much commit load one catalog takes: the search behind ``commit-sweeps capacity``.

Answers the storage engineer's question for one setup (store, catalog,
tables, mix, client): the usable throughput (the highest throughput whose
success rate, the one ``simcore.usable`` says counts, stays above 95%) or,
given an interval S, the largest number of writers committing every S
seconds that the catalog still serves usably. It is a front end of the one
search executor (``ray_jobs.search``, the knee search's too): the
bracket-and-bisect of ``simcore.bisection.next_step`` over the offered load,
in rounds of probes that fill the workers, each probe the seed mean over the
seeds, after a one-seed screening pass when there are several seeds:

- open-loop arrivals: the probe is the inter-arrival scale itself;
- writers: the probe scale is the interval divided by the number of writers
  (the mean gap between their commits), rounded to a whole number of
  writers; probes that round to a number already measured reuse it.

``find_capacity`` runs the simulations in local processes (one per core)
unless a Ray cluster is named. At the knee the answer (``answer``) holds the
seed range, p50/p99 commit latency, requests per committed transaction by
kind and the bytes written by attempts that lost; beside it, the load each
point offered and what got through (``offered_cps``, ``next_load``), so that
a heavier load that committed less is not read as a contradiction, and
whether the figure is only a lower bound (``lower_bound``: the search's range
ended before the load failed). The flags and the printed answer are
``commit_sweeps.capacity_command``'s.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional, Sequence

from simcore import SimConfig
from simcore.bisection import SearchRange, SearchStep
from simcore.config import SERVICE_CALL_CATALOGS
from simcore.bounds import mean_gap_ms
from simcore.metrics import REQUEST_KINDS
from simcore.usable import ABOVE_SEARCH_RANGE, BELOW_SEARCH_RANGE, ERROR, success_metric
from ray_jobs.search import CurveSpec, Events, Probe, fill_slots, process_pool, ray_tasks, search_curves


# -- the question as a search (the executor is ``ray_jobs.search``) ---------------------------------

@dataclass
class Search:
    """The load-to-config mapping of one capacity question, and the points of its final pass."""

    base: SimConfig
    interval_s: Optional[float]  # writers mode when set
    probes: dict = field(default_factory=dict)  # scale_ms -> ray_jobs.search.Probe

    def config_at(self, scale_ms: float) -> SimConfig:
        if self.interval_s is None:
            return self.base.replace(inter_arrival_scale_ms=scale_ms)
        return self.base.replace(writers=self.writers_at(scale_ms), commit_interval_s=self.interval_s)

    def writers_at(self, scale_ms: float) -> int:
        return max(1, round(self.interval_s * 1000.0 / scale_ms))

    def describe(self, probe: Probe) -> str:
        """A progress line for one measured probe."""
        point = probe.point()
        load = f"{self.writers_at(probe.scale_ms)} writers" if self.interval_s is not None else \
            f"scale {probe.scale_ms:g} ms"
        return (f"  {load}: success {point.success:.2%}, {point.throughput_cps:.3f} c/s"
                f" ({'passes' if point.passes else 'fails'})")


def capacity_search(base: SimConfig, interval_s: Optional[float], search_range: SearchRange,
                    submit: Callable[[SimConfig, int], Future], seeds: Sequence[int], slots: int,
                    progress: Callable[[str], None] = lambda line: None) -> tuple[Search, SearchStep]:
    """Search one setup's knee with ``ray_jobs.search``: one curve, rounds that fill ``slots``.

    With several seeds the search screens with one seed first (``ray_jobs.search``
    says why). ``submit(config, seed)`` starts one simulation and returns a
    future of its ``ray_jobs.search.SeedRun``; each (config, seed) is
    simulated once. Raises ``SearchFailed`` when a simulation failed.
    """
    search = Search(base, interval_s)
    events = Events(on_pass=lambda key, line: progress(line),
                    on_probe=lambda key, probe: progress(search.describe(probe)))
    (result,) = search_curves([CurveSpec("capacity", search.config_at)], seeds, search_range, submit, slots,
                              fill_slots(slots), events)
    if result.status == ERROR:
        raise SearchFailed(result.error)
    search.probes = result.probes
    return search, result.step


class SearchFailed(RuntimeError):
    """A simulation of the search raised (or its worker died beyond retries)."""


def offered_cps(config: SimConfig) -> float:
    """The commits/s ``config`` offers: its writers' (and maintenance jobs') schedule, or the mean rate of its
    open-loop arrivals (one over the mean gap, ``simcore.bounds.mean_gap_ms``)."""
    if config.writers is not None:
        rate = config.writers / config.commit_interval_s
        if config.maintenance_jobs:
            rate += config.maintenance_jobs / config.maintenance_interval_s
        return rate
    return 1000.0 / mean_gap_ms(config)


def load_point(probe: Probe) -> dict:
    """One measured load: what it offered, what got through, its success rate (the usable rule's metric)."""
    metric = success_metric(probe.config)
    out = {"offered_cps": _finite(offered_cps(probe.config)), "throughput_cps": _finite(probe.mean("throughput_cps")),
           "success_rate": _finite(probe.point().success), "success_metric": metric}
    if probe.config.writers is not None:
        out["writers"] = probe.config.writers
    else:
        out["inter_arrival_scale_ms"] = probe.scale_ms
    return out


def answer(search: Search, step: SearchStep, simulations: int, wall_s: float,
           search_range: Optional[SearchRange] = None) -> dict:
    """The --json answer: the figure, its bracket, and what the store serves at that point.

    ``offered_cps`` is the load offered at the answer (``throughput_cps`` what got through); ``next_load`` the
    heavier load the search found failing (None when none failed: then ``lower_bound`` is true, the figure is
    the heaviest load of the range and the store may take more); ``load`` says how the load arrives:
    ``open_loop`` transactions arrive at random whatever the catalog's state, ``writers`` each wait for their
    commit before the next, so the two answers are different questions.
    """
    writers_mode = search.interval_s is not None
    knee = search.probes[step.knee.scale_ms] if step.knee is not None else None
    failing = search.probes[step.failing.scale_ms] if step.failing is not None else None

    def value(probe: Optional[Probe]):
        if probe is None:
            return None
        return probe.config.writers if writers_mode else _finite(probe.mean("throughput_cps"))

    out = {"max_writers" if writers_mode else "usable_throughput_cps": value(knee),
           "protocol": search.base.protocol,
           "bracket": [value(knee), value(failing)],
           "status": step.status, "within_tolerance": step.within_tolerance, "note": step.note,
           "lower_bound": step.status == ABOVE_SEARCH_RANGE, "load": "writers" if writers_mode else "open_loop",
           "offered_cps": _finite(offered_cps(knee.config)) if knee else None,
           "next_load": load_point(failing) if failing else None}
    if search_range is not None:
        out["search_range"] = {"min_scale_ms": search_range.min_scale_ms, "max_scale_ms": search_range.max_scale_ms,
                               "tolerance": search_range.tolerance}
    if writers_mode:
        out["commit_interval_s"] = search.interval_s
        out["throughput_cps"] = _finite(knee.mean("throughput_cps")) if knee else None
    else:
        out["inter_arrival_scale_ms"] = knee.scale_ms if knee else None
    if knee is not None:
        metric = success_metric(knee.config)
        throughputs = [r["throughput_cps"] for r in knee.rows]
        successes = [r[metric] for r in knee.rows]
        out.update({
            "success_rate": _finite(knee.point().success),
            "success_metric": metric,
            "seed_range": {"throughput_cps": [_finite(min(throughputs)), _finite(max(throughputs))],
                           metric: [_finite(min(successes)), _finite(max(successes))]},
            "commit_latency_p50_ms": _finite(knee.mean("commit_latency_p50_ms")),
            "commit_latency_p99_ms": _finite(knee.mean("commit_latency_p99_ms")),
            "requests_per_commit": {kind: _finite(knee.mean(f"requests_{kind}_per_commit"))
                                    for kind in REQUEST_KINDS},
            "wasted_write_bytes_per_commit": _finite(knee.mean("wasted_write_bytes_per_commit")),
            "config_hash": knee.config.config_hash,
        })
    else:
        out.update({"success_rate": None, "commit_latency_p50_ms": None, "commit_latency_p99_ms": None,
                    "requests_per_commit": None})
    out.update({"seeds": [r["seed"] for r in (knee or next(iter(search.probes.values()))).rows]
                if search.probes else [],
                "simulations": simulations, "wall_s": round(wall_s, 3)})
    return out


def _finite(value):
    return None if value is None or (isinstance(value, float) and not math.isfinite(value)) else value


# -- executors ------------------------------------------------------------------------------------------

@contextlib.contextmanager
def _executor(address: Optional[str], workers: Optional[int], progress: Callable[[str], None],
              max_memory_bytes: Optional[int] = None):
    """(submit, slots) on the named Ray cluster, else on local processes; torn down on the way out."""
    if address:
        from ray_jobs.connect import ray_session

        previous = os.environ.get("RAY_ADDRESS")
        os.environ["RAY_ADDRESS"] = address  # ray_session connects to $RAY_ADDRESS
        try:
            with ray_session(log=progress), ray_tasks(max_memory_bytes=max_memory_bytes) as (submit, slots):
                progress(f"capacity search on Ray ({slots} CPUs)")
                yield submit, slots
        finally:
            if previous is None:
                os.environ.pop("RAY_ADDRESS", None)
            else:
                os.environ["RAY_ADDRESS"] = previous
        return
    with process_pool(workers, max_memory_bytes) as (submit, slots):
        progress(f"capacity search in {slots} local processes")
        yield submit, slots


def find_capacity(base: SimConfig, interval_s: Optional[float], search_range: SearchRange, seeds: Sequence[int], *,
                  ray_address: Optional[str] = None, workers: Optional[int] = None,
                  max_memory_bytes: Optional[int] = None, progress: Callable[[str], None] = lambda line: None
                  ) -> dict:
    """The answer (``answer``) to one capacity question: ``capacity_search`` on the Ray cluster at
    ``ray_address``, else on ``workers`` local processes (default: one per core).

    ``interval_s`` set: the most writers at that interval (``base`` has one writer), else the usable throughput
    of open-loop arrivals; ``max_memory_bytes``: the work bound's limit in each simulation (default: simcore's,
    from the worker's machine). Raises ``SearchFailed`` when a simulation failed.
    """
    started = time.perf_counter()
    simulations = 0
    with _executor(ray_address, workers, progress, max_memory_bytes) as (submit_one, slots):
        def submit(config, seed):
            nonlocal simulations
            simulations += 1
            return submit_one(config, seed)

        search, step = capacity_search(base, interval_s, search_range, submit, seeds, slots, progress)
    return answer(search, step, simulations, time.perf_counter() - started, search_range)


def find_capacities(bases: Mapping[str, SimConfig], interval_s: Optional[float], search_range: SearchRange,
                    seeds: Sequence[int], *, ray_address: Optional[str] = None, workers: Optional[int] = None,
                    max_memory_bytes: Optional[int] = None, progress: Callable[[str], None] = lambda line: None
                    ) -> dict[str, dict]:
    """``find_capacity``'s answer for each of several setups (``capacity --compare``'s designs), searched side by
    side in one executor, each curve's probes filling the slots the others leave; by the keys of ``bases``."""
    started = time.perf_counter()
    searches = {name: Search(base, interval_s) for name, base in bases.items()}
    with _executor(ray_address, workers, progress, max_memory_bytes) as (submit, slots):
        events = Events(on_pass=lambda key, line: progress(f"{key}: {line}"),
                        on_probe=lambda key, probe: progress(f"{key}:{searches[key].describe(probe)}"))
        results = search_curves([CurveSpec(name, search.config_at) for name, search in searches.items()], seeds,
                                search_range, submit, slots, fill_slots(max(1, slots // max(1, len(bases)))),
                                events)
    wall_s = time.perf_counter() - started
    answers = {}
    for result in results:
        if result.status == ERROR:
            raise SearchFailed(f"{result.key}: {result.error}")
        search = searches[result.key]
        search.probes = result.probes
        answers[result.key] = answer(search, result.step, result.simulations_run, wall_s, search_range)
    return answers


def group_commit_answer(base: SimConfig, interval_s: float, max_writers: int, seeds: Sequence[int],
                        max_memory_bytes: Optional[int] = None) -> dict:
    """``answer``'s form for writers whose files one committer per table commits (``group_commit_s``): the
    catalog sees the committers' commits whatever the writers' count, so there is nothing to search. One
    point, at ``max_writers``: if the committers' commits pass, the answer is that count, a lower bound (the
    committer, which the model does not bound, is what limits the writers); else none."""
    from simcore.simulate import simulate

    started = time.perf_counter()
    config = base.replace(writers=max_writers, commit_interval_s=interval_s)
    probe = Probe(float(interval_s * 1000.0 / max_writers), config,
                  tuple(simulate(config, seeds, max_memory_bytes=max_memory_bytes)))
    step = SearchStep(ABOVE_SEARCH_RANGE if probe.point().passes else BELOW_SEARCH_RANGE,
                      knee=probe.point() if probe.point().passes else None,
                      failing=None if probe.point().passes else probe.point(),
                      note="group commit: the committers' commits do not grow with the writers")
    search = Search(base, interval_s, {probe.scale_ms: probe})
    return answer(search, step, len(seeds), time.perf_counter() - started)


def extrapolation(base: SimConfig, result: dict):
    """A line saying the answer lies beyond the client counts the profile's terms were fitted on; None when it
    does not; False when the profile does not record them (the built-in and older profiles).

    The transactions committing at once at the usable point (Little's law: throughput x median commit
    latency) stand for the benchmark's clients, each always reading or writing the catalog object. Fewer
    than one at once is the one-client case, which a fit from one client covers.
    """
    if base.catalog in SERVICE_CALL_CATALOGS:  # no store object is raced
        return False
    operation = "append" if base.catalog == "append" else "cas"
    fitted = base.latency_profile.conditional(operation).fitted_clients
    if not fitted:
        return False
    rate = result.get("throughput_cps", result.get("usable_throughput_cps"))
    latency_ms = result.get("commit_latency_p50_ms")
    if rate is None or latency_ms is None:
        return None
    committing = round(rate * latency_ms / 1000.0, 1)
    if min(fitted) <= max(committing, 1.0) <= max(fitted):
        return None
    answer = (f"{result['max_writers']} writers" if result.get("max_writers") is not None else "this answer")
    return (f"this profile ({base.latency_profile.name} {operation}) was fitted on {min(fitted)}-{max(fitted)} "
            f"clients ({', '.join(map(str, fitted))}); at the usable point about {committing:.1f} transactions "
            f"commit at once (throughput x median commit latency), so {answer} is an extrapolation beyond the "
            f"fitted counts (docs/accuracy.md#your-probed-store)")


if __name__ == "__main__":  # python -m ray_jobs.capacity: an entry point, the command line's
    import sys

    from commit_sweeps.capacity_command import main

    sys.exit(main())
