"""Named ways of turning one run's transactions into summary metrics.

simcore's own metrics (``metrics.summarize``) use the steady-state window of
docs/reference/model.md: transactions submitted in [W, D - W), throughput over the span of
their submit times. That is the ``steady-state`` set and the default
everywhere; every stored result uses it.

The reference simulator (cdouglas/endive) computes metrics in two more ways,
and seed 001's published tables were read off those, not off the
steady-state window (studies/published_repro/README.md has the numbers):

- ``heatmap``: the reference's heatmap path (``_compute_seed_metrics`` in
  ``endive/saturation_analysis.py``). Success rate over *every* recorded
  transaction, no window. Throughput and latency over a "middle 80%" window:
  transactions submitted at least 10% of the run after the first submit and
  (when committed) committed at least 10% before the last commit, where
  the run's length is last commit - first submit; throughput divides the
  window's commits by the whole run's length (the reference prints commits
  per hour; here commits per second). Per op type, the rows are filtered to
  that type first and the same computed on them.
- ``per-type``: the reference's operation-type path
  (``_analyze_op_type_experiments``): per op type, success rate and mean
  commit latency over every recorded transaction, no window. It computes no
  throughput; this set reports committed / run length so a curve still has
  an x axis.
- ``seed001``: the definition that reproduces seed 001's tables: the
  ``heatmap`` path (success over every recorded transaction, latency over
  the middle-80% window), with throughput as that window's commits divided
  by the window's own length (0.8 x the run) rather than the whole run's,
  i.e. the commit rate inside the middle 80%; and usability (the 95% rule)
  judged on the steady-state window's success, as the reference's
  latency-vs-throughput tables print it. (Its multi-table VO figures also
  need the model option ``SimConfig.vo_convoy = "table"``: that is the
  simulation, not the metrics.)

Every set returns the same keys, fractions for success rates (0..1) and
ms for latencies, so a caller can swap one for another. ``knee_success_rate``
and ``knee_vo_success_rate`` are the success rates the 95% usability rule
reads under the set (overall and VO; ``"knee_" + simcore.usable.success_metric(config)``
names the one that counts); only ``seed001`` takes them from another window
than its printed success rates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

import numpy as np

from simcore import metrics
from simcore.config import DEFAULT_PROTOCOL, SimConfig
from simcore.engine import COMMITTED, UNFINISHED, Outcome
from simcore.simulate import SeedHook, seed_runs
from simcore.workload import FAST_APPEND, VALIDATED_OVERWRITE, Workload

STEADY_STATE = "steady-state"
HEATMAP = "heatmap"
PER_TYPE = "per-type"
SEED001 = "seed001"
METRIC_SETS = (STEADY_STATE, HEATMAP, PER_TYPE, SEED001)


def protocol_of(metric_set: str) -> str:
    """The commit protocol a metric set's figures assume: seed 001's tables came from the published one."""
    return "published" if metric_set == SEED001 else DEFAULT_PROTOCOL
DEFAULT_METRIC_SET = STEADY_STATE

# The keys every set returns: a subset of ``metrics.summarize``'s row, and the two knee_ rates.
KEYS = ("success_rate", "throughput_cps", "commit_latency_mean_ms",
        "fa_success_rate", "fa_commit_latency_mean_ms", "vo_success_rate", "vo_commit_latency_mean_ms",
        "knee_success_rate", "knee_vo_success_rate")

# The heatmap path trims this share of the run at each end ("middle 80%").
HEATMAP_TRIM = 0.1

NAN = float("nan")
_TYPES = (("fa", FAST_APPEND), ("vo", VALIDATED_OVERWRITE))


@dataclass(frozen=True)
class Recorded:
    """The recorded (finished) transactions of one run, as the reference writes them.

    ``commit_ms`` is the commit time of committed transactions and -1 for
    aborted ones, as the reference's ``t_commit`` column (its window test
    ``t_commit <= t_max`` therefore keeps every aborted row).
    """

    submit_ms: np.ndarray
    commit_ms: np.ndarray
    committed: np.ndarray
    op: np.ndarray
    commit_latency_ms: np.ndarray

    @staticmethod
    def of_run(workload: Workload, outcome: Outcome) -> "Recorded":
        recorded = outcome.status != UNFINISHED
        committed = outcome.status[recorded] == COMMITTED
        end = outcome.end_ms[recorded]
        return Recorded(
            submit_ms=workload.submit_ms[recorded],
            commit_ms=np.where(committed, end, -1.0),
            committed=committed,
            op=workload.op[recorded],
            commit_latency_ms=np.where(committed, end - outcome.commit_start_ms[recorded], NAN))

    def only(self, op_code: int) -> "Recorded":
        keep = self.op == op_code
        return Recorded(self.submit_ms[keep], self.commit_ms[keep], self.committed[keep], self.op[keep],
                        self.commit_latency_ms[keep])

    def __len__(self) -> int:
        return len(self.submit_ms)


@dataclass(frozen=True)
class HeatmapWindow:
    """One (seed, op type) of the reference's heatmap path."""

    success_rate: float       # over every recorded transaction
    run_s: float              # last commit - first submit
    window_commits: int       # committed inside the middle-80% window
    commit_latency_mean_ms: float  # of those commits

    @property
    def throughput_cps(self) -> float:
        """As the reference: window commits over the whole run's length."""
        return self.window_commits / self.run_s if self.run_s > 0 else NAN

    @property
    def window_rate_cps(self) -> float:
        """Window commits over the window's own length (0.8 x the run)."""
        span = self.run_s * (1.0 - 2 * HEATMAP_TRIM)
        return self.window_commits / span if span > 0 else NAN


def heatmap_window(recorded: Recorded) -> HeatmapWindow:
    """The heatmap path's numbers for ``recorded`` (filter by op type first for per-type)."""
    if len(recorded) == 0 or not recorded.committed.any():
        return HeatmapWindow(NAN, NAN, 0, NAN)
    first_submit = float(recorded.submit_ms.min())
    last_commit = float(recorded.commit_ms.max())
    run_ms = last_commit - first_submit
    in_window = ((recorded.submit_ms >= first_submit + HEATMAP_TRIM * run_ms)
                 & (recorded.commit_ms <= last_commit - HEATMAP_TRIM * run_ms))
    window_commits = in_window & recorded.committed
    latency = recorded.commit_latency_ms[window_commits]
    return HeatmapWindow(success_rate=float(recorded.committed.mean()), run_s=run_ms / 1000.0,
                         window_commits=int(window_commits.sum()),
                         commit_latency_mean_ms=float(latency.mean()) if len(latency) else NAN)


def _all_recorded(recorded: Recorded) -> tuple[float, float]:
    """Success rate and mean commit latency over every recorded transaction."""
    if len(recorded) == 0:
        return NAN, NAN
    latency = recorded.commit_latency_ms[recorded.committed]
    return float(recorded.committed.mean()), float(latency.mean()) if len(latency) else NAN


def _run_length_s(recorded: Recorded) -> float:
    if not recorded.committed.any():
        return NAN
    return (float(recorded.commit_ms.max()) - float(recorded.submit_ms.min())) / 1000.0


def _heatmap(recorded: Recorded) -> dict:
    whole = heatmap_window(recorded)
    row = {"success_rate": whole.success_rate, "throughput_cps": whole.throughput_cps,
           "commit_latency_mean_ms": whole.commit_latency_mean_ms}
    for prefix, code in _TYPES:
        of_type = heatmap_window(recorded.only(code))
        row[f"{prefix}_success_rate"] = of_type.success_rate
        row[f"{prefix}_commit_latency_mean_ms"] = of_type.commit_latency_mean_ms
    return row


def _per_type(recorded: Recorded, throughput_cps: float) -> dict:
    success, latency = _all_recorded(recorded)
    row = {"success_rate": success, "throughput_cps": throughput_cps, "commit_latency_mean_ms": latency}
    for prefix, code in _TYPES:
        success, latency = _all_recorded(recorded.only(code))
        row[f"{prefix}_success_rate"] = success
        row[f"{prefix}_commit_latency_mean_ms"] = latency
    return row


def _with_knee(row: dict, knee: Optional[tuple[float, float]] = None) -> dict:
    overall, vo = knee if knee is not None else (row["success_rate"], row["vo_success_rate"])
    return {**row, "knee_success_rate": overall, "knee_vo_success_rate": vo}


def summarize_recorded(metric_set: str, recorded: Recorded,
                       window_success: Optional[tuple[float, float]] = None) -> dict:
    """The metrics of ``metric_set`` (any but ``steady-state``) over recorded transactions.

    ``window_success``: (overall, VO) success over the steady-state window, which ``seed001``
    judges usability on; without it (no config to place the window) its own success rates stand in.
    """
    if metric_set == HEATMAP:
        return _with_knee(_heatmap(recorded))
    if metric_set == PER_TYPE:
        run_s = _run_length_s(recorded)
        committed = int(recorded.committed.sum())
        return _with_knee(_per_type(recorded, committed / run_s if run_s and run_s > 0 else NAN))
    if metric_set == SEED001:
        row = {**_heatmap(recorded), "throughput_cps": heatmap_window(recorded).window_rate_cps}
        return _with_knee(row, window_success)
    raise ValueError(f"metric_set: {metric_set!r} is not allowed; expected one of "
                     + ", ".join(s for s in METRIC_SETS if s != STEADY_STATE) + " here")


def summarize(metric_set: str, config: SimConfig, workload: Workload, outcome: Outcome) -> dict:
    """The metrics of one run under ``metric_set`` (one of ``METRIC_SETS``), keys ``KEYS``."""
    if metric_set not in METRIC_SETS:
        raise ValueError(f"metric_set: {metric_set!r} is not allowed; expected one of {', '.join(METRIC_SETS)}")
    if metric_set in (STEADY_STATE, SEED001):
        steady = metrics.summarize(config, workload, outcome)
        if metric_set == STEADY_STATE:
            return _with_knee({key: steady[key] for key in KEYS if not key.startswith("knee_")})
        return summarize_recorded(SEED001, Recorded.of_run(workload, outcome),
                                  (steady["success_rate"], steady["vo_success_rate"]))
    return summarize_recorded(metric_set, Recorded.of_run(workload, outcome))


def simulate(metric_set: str, config: SimConfig, seeds: Iterable[int], *, max_memory_bytes: Optional[int] = None,
             each_seed: Optional[SeedHook] = None) -> list[dict]:
    """``simcore.simulate`` under another metric set: one row per seed, ``seed``,
    ``metric_set`` and the set's ``KEYS``; ``max_memory_bytes`` and ``each_seed`` as ``simcore.simulate``'s.

    Example:
        >>> from simcore import SimConfig, metric_sets
        >>> config = SimConfig(provider="s3x", num_tables=10, inter_arrival_scale_ms=500, duration_s=1900)
        >>> row, = metric_sets.simulate("seed001", config, seeds=[7])
        >>> row["metric_set"], row["success_rate"] > 0.99, sorted(row) == sorted(("seed", "metric_set") + KEYS)
        ('seed001', True, True)
    """
    if metric_set not in METRIC_SETS:
        raise ValueError(f"metric_set: {metric_set!r} is not allowed; expected one of {', '.join(METRIC_SETS)}")
    return [{"seed": seed, "metric_set": metric_set, **summarize(metric_set, config, workload, outcome)}
            for seed, workload, outcome in seed_runs(config, seeds, max_memory_bytes, each_seed=each_seed)]
