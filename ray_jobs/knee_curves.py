"""Curves: what a curve is, what one of its points measures, and where a knee search keeps them.

The one home of three things every part of the product reads the same way:

- **A measured point** (``measured_point``): the success rate that counts
  (``simcore.usable``) and the throughput at one scale, each the mean over
  the point's seeds. The rule for a missing value: a seed whose value is
  missing (None) or NaN is left out of that metric's mean, and the mean is
  NaN only when no seed has a value (``seed_mean``). A NaN here is what
  ``simcore.metrics`` writes when a run had nothing to measure (no
  ValidatedOverwrite transaction at all for the VO success rate, fewer than
  two commits for a throughput): that seed says nothing about the rate, so
  it is not counted as a failure, which would make a lightly loaded point
  fail for lack of data and hide the knee. So seeds [0.99, NaN, 0.98] mean
  0.985 and pass; [NaN, NaN] is NaN and fails (``simcore.usable.passes``).
  The knee search, ``commit-sweeps capacity`` and the dashboard (its seed
  spreads, ``dashboards.points.Spread``, its frontier and its writers view)
  all take their means here. The sum is Python's, left to right, then
  divided: the dashboard's numbers stay what they were, and for fewer than
  8 seeds it is exactly ``numpy.mean``, which capacity used.
- **The seed statistic** of a curve's usable throughput (``USABLE_STATISTIC``):
  the knee of the seed-mean curve. Each point's success and throughput are
  seed means (above); the knee is the passing point of highest mean
  throughput (``simcore.usable``), and the value is the mean throughput
  there. Its spread is the throughput of each seed at that same point. It
  is not the mean of each seed's own knee: a search decides pass or fail on
  seed means, one search per curve, so this is the statistic a search gives
  (``ray_jobs.search``: the knee search and ``commit-sweeps capacity``), and
  a grid read the same way gives the same statistic at the grid's resolution.
- **Which points count** on a searched curve (``full_seed_points``): those
  measured with every seed of the search. A knee search first screens with
  one seed (``ray_jobs.search``); those one-seed points are stored too (the
  record of every simulation, and what a rerun resumes from) but are not
  read as points of the curve, by the search or by the dashboard.
- **The knee search's names**: its rows go to ``<experiment>_knee``
  (``knee_experiment_name``, ``source_experiment``, ``is_knee_experiment``)
  and its summary to ``<store>/_knee/<experiment>.json``
  (``KNEE_SUMMARY_FOLDER``; the summary's keys are ``ray_jobs.knee_summary``'s).

And the knee search's side of curves: a grid folded into its curves
(``curves_from_grid``), stored rows folded back into per-curve, per-scale,
per-seed evidence (``evidence_from_rows``: what lets a rerun resume without
repeating a point) and where a curve's search stands (``CurveOutcome``).
A curve is every config of a grid that differs only in
``inter_arrival_scale_ms`` (provider or catalog latency, tables, mix, ...).

Imports without Ray (the dashboard reads it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Mapping, Optional, Sequence, TypeVar

from simcore import ConfigError, SimConfig
from simcore.bisection import SearchStep
from simcore.usable import MeasuredPoint, success_metric
from ray_jobs.schema import CONFIG_COLUMNS

if TYPE_CHECKING:  # annotations only: the dashboard imports this module, and needs neither
    import pyarrow as pa

    from ray_jobs.grid import Grid

SCALE_FIELD = "inter_arrival_scale_ms"
KNEE_SUFFIX = "_knee"
KNEE_SUMMARY_FOLDER = "_knee"  # <store>/_knee/<experiment>.json; a leading _ keeps store readers out
# A curve is named by the hash of its config at this scale: any fixed scale
# would do; this one is a valid value of every grid.
CURVE_KEY_SCALE_MS = 1000.0
NAN = float("nan")

T = TypeVar("T")


# -- names ------------------------------------------------------------------------------------------

def knee_experiment_name(experiment: str) -> str:
    """Where a search over ``experiment``'s curves stores its rows: ``exp4c`` -> ``exp4c_knee``."""
    return experiment + KNEE_SUFFIX


def is_knee_experiment(experiment: str) -> bool:
    """Whether ``experiment`` holds a knee search's rows (``exp4c_knee``): its scales are searched, not a grid."""
    return experiment.endswith(KNEE_SUFFIX) and len(experiment) > len(KNEE_SUFFIX)


def source_experiment(knee_experiment: str) -> str:
    """``exp4c`` for ``exp4c_knee``: the experiment whose curves were searched."""
    if not is_knee_experiment(knee_experiment):
        raise ValueError(f"knee_experiment: {knee_experiment!r} is not allowed; expected a name ending in "
                         f"{KNEE_SUFFIX!r}")
    return knee_experiment[:-len(KNEE_SUFFIX)]


# -- the seed statistic -----------------------------------------------------------------------------

@dataclass(frozen=True)
class SeedStatistic:
    """How a curve's usable throughput is taken over seeds: named here once, shown by every view.

    Attributes:
        id: a stable name for the payload and tests.
        label: the name people read next to the value.
        description: what the value is, in one sentence.
        spread: what its seed spread is.
    """

    id: str
    label: str
    description: str
    spread: str


USABLE_STATISTIC = SeedStatistic(
    id="knee_of_seed_mean_curve",
    label="knee of the seed-mean curve",
    description=("each point's success and throughput are averaged over its seeds; the usable throughput is the mean "
                 "throughput at the passing point of highest mean throughput (not the mean of each seed's own knee, "
                 "which can lie on either side of it)"),
    spread="the throughput of each seed at that same point",
)


# -- a measured point -------------------------------------------------------------------------------

def seed_values(values: Iterable[Any]) -> list[float]:
    """The seeds' values of one metric that count: missing (None) and NaN left out (see the module)."""
    # ``v == v`` is False only for NaN; the dashboard runs this ~40,000 times per full build.
    return [float(value) for value in values if value is not None and value == value]


def seed_mean(values: Iterable[Any]) -> float:
    """Mean of one metric over the seeds that have a value; NaN when none has.

    >>> seed_mean([0.99, float("nan"), 0.98]), seed_mean([None, float("nan")])
    (0.985, nan)
    """
    numbers = seed_values(values)
    return sum(numbers) / len(numbers) if numbers else NAN


def measured_point(scale_ms: float, config: Any, rows: Iterable[Mapping[str, Any]]) -> MeasuredPoint:
    """One point as the usable rule reads it: seed means of the success that counts and of the throughput.

    Args:
        scale_ms: where the point lies on its curve (an inter-arrival scale,
            or a writers setup's mean gap between commits).
        config: the point's config (a ``SimConfig`` or a row's fields): says
            which success rate counts.
        rows: one summary row per seed (``simulate`` rows, store rows).

    >>> rows = [{"success_rate": 0.99, "throughput_cps": 2.0}, {"success_rate": float("nan"), "throughput_cps": 2.2},
    ...         {"success_rate": 0.98, "throughput_cps": 2.4}]
    >>> point = measured_point(100.0, {"fast_append_ratio": 1.0}, rows)
    >>> point.passes, round(point.success, 3), round(point.throughput_cps, 3)
    (True, 0.985, 2.2)
    """
    metric = success_metric(config)
    rows = list(rows)
    return MeasuredPoint(scale_ms, seed_mean(counted_success(row, metric) for row in rows),
                         seed_mean(row.get("throughput_cps") for row in rows))


def counted_success(row: Mapping[str, Any], metric: str) -> Optional[float]:
    """The success rate the usable rule reads from one row: ``metric`` over the recorded transactions, with the
    stuck ones (``simcore.metrics.STUCK_AFTER_S``) counted as failed; a row without them (none stuck, or stored
    before they were counted) reads as its rate."""
    rate, stuck, recorded = row.get(metric), row.get("n_stuck"), row.get("n_txns")
    if rate is None or not stuck or not recorded:
        return rate
    return rate * recorded / (recorded + stuck)


def full_seed_points(points: Iterable[T], seeds_of: Callable[[T], Collection[int]],
                     seeds: Optional[Collection[int]] = None) -> list[T]:
    """The points of one curve that count: those measured with every seed of the search.

    Args:
        points: the curve's points, any type.
        seeds_of: a point's seeds.
        seeds: the search's seeds. None (the dashboard, which has only the
            rows): the seeds of the curve's best-measured point, that is the
            points with fewer seeds than the most any point has are left out
            (a knee search's one-seed screening points).

    A point with more seeds than asked counts, with all of them (as the
    dashboard, which reads every stored row, takes it).
    """
    points = list(points)
    if seeds is None:
        most = max((len(set(seeds_of(point))) for point in points), default=0)
        return [point for point in points if len(set(seeds_of(point))) == most]
    wanted = set(seeds)
    return [point for point in points if wanted <= set(seeds_of(point))]


# -- curves -----------------------------------------------------------------------------------------

def curve_id_of(config: SimConfig) -> str:
    """The id of the curve a config lies on: the config hash at the key scale."""
    return config.replace(**{SCALE_FIELD: CURVE_KEY_SCALE_MS}).config_hash


@dataclass(frozen=True)
class Curve:
    """One curve of a source experiment.

    Attributes:
        experiment: the source experiment (``exp4c``); rows go to its
            ``knee_experiment_name``.
        template: the curve's config at ``CURVE_KEY_SCALE_MS``.
        label: the grid's swept values that pick this curve, for people
            (``provider=s3x num_tables=1 fast_append_ratio=1.0``).
    """

    experiment: str
    template: SimConfig
    label: str

    @property
    def curve_id(self) -> str:
        return self.template.config_hash

    @property
    def success_metric(self) -> str:
        return success_metric(self.template)

    def config_at(self, scale_ms: float) -> SimConfig:
        return self.template.replace(**{SCALE_FIELD: scale_ms})

    def fixed_fields(self) -> dict:
        """Every config field of the curve except the inter-arrival scale."""
        fields = self.template.to_dict()
        del fields[SCALE_FIELD]
        return fields


def curves_from_grid(grid: Grid, quick: bool = False, **overrides: Any) -> tuple[Curve, ...]:
    """The curves of a grid (or of its quick subset), in grid order.

    Args:
        grid: the experiment's grid; it must sweep ``inter_arrival_scale_ms``
            or fix it (the search replaces it either way).
        quick: only the grid's quick subset.
        **overrides: config fields set on every curve (e.g. ``duration_s``).

    Raises:
        GridError: a curve is not a valid config.
    """
    swept = [name for name in grid.swept if name != SCALE_FIELD]
    configs = grid.configs(quick=quick, **overrides, **{SCALE_FIELD: CURVE_KEY_SCALE_MS})
    return tuple(Curve(experiment=grid.experiment, template=config,
                       label=" ".join(f"{name}={getattr(config, name)}" for name in swept) or "all")
                 for config in configs)


# Per curve id: scale (ms) -> seed -> that seed's row (at least the success rates and the throughput).
Evidence = dict[str, dict[float, dict[int, Mapping[str, Any]]]]


def complete_points(curve: Curve, by_scale: Mapping[float, Mapping[int, Mapping[str, Any]]],
                    seeds: Sequence[int]) -> list[MeasuredPoint]:
    """The curve's points that have every requested seed (``full_seed_points``), ascending in scale.

    A point stored with fewer seeds than requested (a screening point, or
    one whose missing seeds a rerun is about to run) is not one of them.
    """
    return [measured_point(scale, curve.config_at(scale), [by_seed[seed] for seed in sorted(by_seed)])
            for scale, by_seed in full_seed_points(sorted(by_scale.items()), lambda item: item[1], seeds)]


_EVIDENCE_COLUMNS = ("config_hash", "seed", "success_rate", "vo_success_rate", "throughput_cps")


def evidence_from_rows(rows: pa.Table, curves: Sequence[Curve]) -> Evidence:
    """Fold stored rows (one experiment's, ``RESULTS_SCHEMA``) into evidence for ``curves``.

    Rows of other curves (another duration, a grid that changed) are ignored,
    as are rows whose config no longer validates. Each seed's entry keeps
    the columns the search reads (``seed``, both success rates,
    ``throughput_cps``).
    """
    by_id = {curve.curve_id: curve for curve in curves}
    evidence: Evidence = {curve_id: {} for curve_id in by_id}
    if rows.num_rows == 0:
        return evidence
    config_names = [name for name in CONFIG_COLUMNS if name in rows.column_names]
    columns = {name: rows.column(name).to_pylist() for name in _EVIDENCE_COLUMNS}
    curve_of: dict[str, Any] = {}  # config hash -> (config, curve), or None when not one of these curves
    for index, config_hash in enumerate(columns["config_hash"]):
        if config_hash not in curve_of:
            curve_of[config_hash] = _config_and_curve(rows, index, config_names, by_id)
        if curve_of[config_hash] is None:
            continue
        config, curve = curve_of[config_hash]
        row = {name: columns[name][index] for name in _EVIDENCE_COLUMNS if name != "config_hash"}
        evidence[curve.curve_id].setdefault(config.inter_arrival_scale_ms, {})[row["seed"]] = row
    return evidence


def _config_and_curve(rows: pa.Table, index: int, config_names: Sequence[str], by_id: Mapping[str, Curve]):
    values = {name: rows.column(name)[index].as_py() for name in config_names}
    try:
        config = SimConfig.from_dict(values)
    except (ConfigError, TypeError):  # written by another simcore: not one of these curves
        return None
    curve = by_id.get(curve_id_of(config))
    return None if curve is None else (config, curve)


@dataclass(frozen=True)
class CurveOutcome:
    """Where one curve's search stands.

    Attributes:
        curve: the curve.
        status: a final status of ``simcore.usable`` (``found``,
            ``above_search_range``, ``below_search_range``), ``searching``
            (interrupted: a rerun continues) or ``error``.
        step: the search's last step (knee, bracket, note).
        points: the points measured with every requested seed (seed means).
        seeds: the requested seeds.
        simulations_stored: (scale, seed) simulations the store holds for the
            curve, this run's and the screening's included.
        simulations_run: simulations run by this run.
        knee_seed_throughputs_cps: per-seed throughput at the knee point (its spread).
        error: what failed, for ``error``.
    """

    curve: Curve
    status: str
    step: SearchStep
    points: tuple[MeasuredPoint, ...]
    seeds: tuple[int, ...]
    simulations_stored: int
    simulations_run: int
    knee_seed_throughputs_cps: tuple[float, ...] = ()
    error: Optional[str] = None
