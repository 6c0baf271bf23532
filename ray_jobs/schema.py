"""The Arrow schema of a results row, and the one function that builds rows.

A row is one (experiment, config_hash, seed): the keys, every ``SimConfig``
field by its name, every metric of ``simcore.simulate`` by its name, and
provenance. The schema is fixed (not inferred from the first rows) so that
every Parquet file of the store has the same column types: a NaN-only batch
must not turn a float column into a null column, and an integer metric must
never become a float in one file and an integer in another.

Config columns are derived from the ``SimConfig`` dataclass and metric
columns from ``simcore.metrics.SUMMARY_METRICS`` (each metric's name and
kind), so a new config field or metric gets its column without an edit
here. A row with a metric the schema does not know is refused loudly (see
``rows_to_table``) rather than dropped.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Iterable, Mapping, Optional

import pyarrow as pa

from simcore import SimConfig
from simcore.metrics import COUNT, COUNT_PER_TABLE, LATER_METRICS, REAL, REAL_PER_TABLE, SUMMARY_METRICS

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


# How each kind of summary metric is stored (``simcore.metrics.SUMMARY_METRICS`` names the kinds).
_METRIC_TYPES = {COUNT: pa.int64(), REAL: pa.float64(), COUNT_PER_TABLE: pa.list_(pa.int64()),
                 REAL_PER_TABLE: pa.list_(pa.float64())}


def _metric_fields() -> list[pa.Field]:
    return [pa.field(name, _METRIC_TYPES[kind]) for name, kind in SUMMARY_METRICS]


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

# Columns a file written before they existed may lack; they read as null.
# Optional config fields are null at their default (the hash leaves them
# out), so a missing one means the default.
LATER_COLUMNS = tuple(f.name for f in _config_fields() if f.nullable) + tuple(LATER_METRICS)
# Later config columns whose absence means a value other than null: every row written before
# ``SimConfig.protocol`` existed was made by the published protocol, whatever the default is now.
LEGACY_VALUES = {"protocol": "published"}

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


def unmeasured_metrics() -> dict:
    """Metrics of a run that measured nothing: zero counts, NaN rates, empty per-table lists.

    For hand-made rows (documentation, tests) that state only the numbers they care about.
    """
    blank = {COUNT: 0, REAL: float("nan"), COUNT_PER_TABLE: [], REAL_PER_TABLE: []}
    return {name: blank[kind] for name, kind in SUMMARY_METRICS}
