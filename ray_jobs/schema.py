"""The Arrow schema of a results row, and the one function that builds rows.

A row is one (experiment, config_hash, seed): the keys, every ``SimConfig``
field by its name, every metric of ``simcore.simulate`` by its name, and
provenance. The schema is fixed (not inferred from the first rows) so that
every Parquet file of the store has the same column types: a NaN-only batch
must not turn a float column into a null column, and an integer metric must
never become a float in one file and an integer in another.

Config columns are derived from the ``SimConfig`` dataclass, so a new config
field gets its column without an edit here. Metric columns are listed
explicitly, because their types are part of the store contract; a metric
that simcore adds without a column here is refused loudly (see
``rows_to_table``) rather than dropped.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Iterable, Mapping, Optional

import pyarrow as pa

from simcore import SimConfig
from simcore.metrics import REQUEST_KINDS
from simcore.workload import JOB_CLASS_PREFIXES

KEY_COLUMNS = ("experiment", "config_hash", "seed")

_KEY_FIELDS = [
    pa.field("experiment", pa.string(), nullable=False),
    pa.field("config_hash", pa.string(), nullable=False),
    pa.field("seed", pa.int64(), nullable=False),
]

_PYTHON_TO_ARROW = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}


def _config_fields() -> list[pa.Field]:
    hints = typing.get_type_hints(SimConfig)
    fields = []
    for field in dataclasses.fields(SimConfig):
        hint = hints[field.name]
        nullable = False
        args = typing.get_args(hint)
        if typing.get_origin(hint) is typing.Union and type(None) in args:
            # Optional[X]: null where the field does not apply (zipf_alpha
            # with a uniform table choice, catalog_latency_ms with storage).
            (hint,) = [a for a in args if a is not type(None)]
            nullable = True
        if hint not in _PYTHON_TO_ARROW:
            raise TypeError(f"SimConfig.{field.name} has type {hint!r}, which has no results-store column type")
        fields.append(pa.field(field.name, _PYTHON_TO_ARROW[hint], nullable=nullable))
    return fields


_COUNT = pa.int64()
_REAL = pa.float64()


def _metric_fields() -> list[pa.Field]:
    fields = [
        ("n_arrivals", _COUNT), ("n_unfinished", _COUNT), ("n_txns", _COUNT), ("n_committed", _COUNT),
        ("n_aborted", _COUNT), ("aborted_max_retries", _COUNT), ("aborted_validation", _COUNT),
        ("success_rate", _REAL), ("throughput_cps", _REAL), ("commit_latency_mean_ms", _REAL),
        ("commit_latency_p50_ms", _REAL), ("commit_latency_p95_ms", _REAL),
        ("commit_latency_p99_ms", _REAL), ("retries_mean", _REAL),
        ("conflicts_same_table", _COUNT), ("conflicts_catalog_only", _COUNT), ("cas_throttled", _COUNT),
        ("aborted_retry_budget", _COUNT),
    ]
    # Requests per committed transaction by kind, and bytes written by attempts that lost.
    fields += [(f"requests_{kind}_per_commit", _REAL) for kind in REQUEST_KINDS]
    fields += [("wasted_write_bytes_per_commit", _REAL)]
    for prefix, _ in JOB_CLASS_PREFIXES:  # writer workloads: writers, maintenance jobs
        fields += [
            (f"{prefix}_n_txns", _COUNT), (f"{prefix}_success_rate", _REAL), (f"{prefix}_aborted", _COUNT),
            (f"{prefix}_commit_latency_p50_ms", _REAL), (f"{prefix}_commit_latency_p99_ms", _REAL),
            (f"{prefix}_lag_p50_s", _REAL), (f"{prefix}_lag_p99_s", _REAL), (f"{prefix}_lag_max_s", _REAL),
        ]
    for prefix in ("fa", "vo", "ma"):  # FastAppend, ValidatedOverwrite, MergeAppend
        fields += [
            (f"{prefix}_n_txns", _COUNT), (f"{prefix}_success_rate", _REAL),
            (f"{prefix}_throughput_cps", _REAL), (f"{prefix}_commit_latency_mean_ms", _REAL),
            (f"{prefix}_commit_latency_p99_ms", _REAL),
        ]
    # One entry per table; table 0 is Zipf rank 1.
    fields += [
        ("table_n_txns", pa.list_(_COUNT)), ("table_n_committed", pa.list_(_COUNT)),
        ("table_success_rate", pa.list_(_REAL)), ("table_conflicts_same_table", pa.list_(_COUNT)),
        ("table_conflicts_catalog_only", pa.list_(_COUNT)),
    ]
    return [pa.field(name, kind) for name, kind in fields]


_PROVENANCE_FIELDS = [
    pa.field("package_version", pa.string(), nullable=False),
    pa.field("git_revision", pa.string()),  # null when unknown
    pa.field("wall_s", pa.float64(), nullable=False),
    pa.field("finished_at", pa.timestamp("us", tz="UTC"), nullable=False),
]

CONFIG_COLUMNS = tuple(f.name for f in _config_fields())
METRIC_COLUMNS = tuple(f.name for f in _metric_fields())
PROVENANCE_COLUMNS = tuple(f.name for f in _PROVENANCE_FIELDS)

RESULTS_SCHEMA = pa.schema(_KEY_FIELDS + _config_fields() + _metric_fields() + _PROVENANCE_FIELDS)

_clash = set(CONFIG_COLUMNS) & (set(METRIC_COLUMNS) | set(KEY_COLUMNS) | set(PROVENANCE_COLUMNS))
if _clash:  # a config field named like a metric would silently overwrite it in a row
    raise TypeError(f"SimConfig fields clash with results-store columns: {sorted(_clash)}")


class SchemaError(ValueError):
    """Rows do not match the results-store schema."""


def make_row(experiment: str, config: SimConfig, metrics: Mapping[str, Any], *,
             package_version: str, git_revision: Optional[str], wall_s: float, finished_at) -> dict:
    """One results row: keys, config fields, metrics (one ``simulate`` row) and provenance."""
    row = {"experiment": experiment, "config_hash": config.config_hash}
    row.update(config.to_dict())
    row.update(metrics)  # carries "seed"
    row.update(package_version=package_version, git_revision=git_revision, wall_s=float(wall_s),
               finished_at=finished_at)
    return row


def rows_to_table(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Arrow table of rows in ``RESULTS_SCHEMA``.

    Raises:
        SchemaError: a row lacks a column, or has one the schema does not know
            (typically a metric added to simcore without a column here).
    """
    rows = list(rows)
    expected = set(RESULTS_SCHEMA.names)
    for row in rows:
        if set(row) != expected:
            missing = sorted(expected - set(row))
            unknown = sorted(set(row) - expected)
            raise SchemaError(f"row for {row.get('experiment')}/{row.get('config_hash')}/seed {row.get('seed')} "
                              f"does not match the results schema: missing columns {missing}, "
                              f"unknown columns {unknown}; expected exactly ray_jobs.schema.RESULTS_SCHEMA")
    return pa.Table.from_pylist(rows, schema=RESULTS_SCHEMA)
